//! Live agent sessions: the record of a tool call and the events pushed to
//! whoever is watching (the state they carry is `workflow_state`'s).
//!
//! Shared by the server (which produces them) and the visualiser (which
//! renders them), so an event's JSON shape is defined exactly once.

mod calls;
mod events;
mod patch;

pub use calls::*;
pub use events::*;
pub use patch::*;

#[cfg(test)]
mod tests {
    use super::calls::stage_change_text;
    use crate::domain::limits::SESSION_OWN_CHECKS_MAX;
    use crate::domain::workflow_state::WorkflowState;
    use serde_json::Value;
    use std::collections::BTreeMap;

    #[test]
    fn a_refused_call_reads_as_refused_even_from_a_row_stored_done() {
        use super::{CallOutcome, CallStatus};
        let refused = CallOutcome::parse("refused");
        assert_eq!(CallStatus::parse("done", refused), CallStatus::Refused);
        assert_eq!(CallStatus::parse("refused", refused), CallStatus::Refused);
        let allowed = CallOutcome::parse("allowed");
        assert_eq!(CallStatus::parse("failed", allowed), CallStatus::Failed);
        assert_eq!(CallStatus::parse("?", allowed), CallStatus::Done);
        assert_eq!(
            CallOutcome::parse("?"),
            CallOutcome::Refused,
            "never ran unless said"
        );
    }

    #[test]
    fn a_stage_change_reads_as_what_the_agent_says() {
        let stage = serde_json::json!({"systemPrompt": "x", "voice": "Mark", "toolResultText": "Switching you to Oliver...", "selectedTools": [1, 2]});
        let result = serde_json::json!({"responseType": "new-stage", "result": stage.to_string()});
        assert_eq!(
            stage_change_text(&result).unwrap(),
            "new stage: \"Switching you to Oliver...\" (2 tools, voice Mark)"
        );
        let cut = Value::String(crate::domain::limits::excerpt(&result.to_string()));
        assert!(stage_change_text(&cut).unwrap().starts_with("new stage"));
        assert_eq!(stage_change_text(&serde_json::json!({"ok": true})), None);
    }

    use super::*;
    use crate::domain::workflow_state::{ACCOUNT_FOUND, IDENTITY_VERIFIED};
    use serde_json::json;

    fn with_checks(names: impl IntoIterator<Item = String>) -> WorkflowState {
        let mut ws = WorkflowState::start("idv");
        ws.checks.extend(names.into_iter().map(|n| (n, true)));
        ws
    }

    #[test]
    fn a_backend_may_hold_its_cap_of_undeclared_checks_but_not_one_more() {
        let own = |n: usize| (0..n).map(|i| format!("own_{i}"));
        let declared = |c: &str| c.starts_with("decl_");
        let empty = WorkflowState::start("idv");
        let full = with_checks(own(SESSION_OWN_CHECKS_MAX));
        assert_eq!(own_checks_problem(&empty, &full, declared), None);
        let over = with_checks(own(SESSION_OWN_CHECKS_MAX + 1));
        let problem = own_checks_problem(&full, &over, declared).expect("refused");
        assert_eq!(problem.field, "checks");
        assert!(problem.rule.contains("at most 64"), "{}", problem.rule);
    }

    #[test]
    fn declared_checks_never_count_against_the_cap() {
        let declared = |c: &str| c.starts_with("decl_");
        let many = with_checks((0..500).map(|i| format!("decl_{i}")));
        assert_eq!(
            own_checks_problem(&WorkflowState::start("idv"), &many, declared),
            None
        );
    }

    #[test]
    fn a_session_already_over_the_cap_may_still_change_its_values() {
        let declared = |_: &str| false;
        let over = with_checks((0..SESSION_OWN_CHECKS_MAX + 5).map(|i| format!("own_{i}")));
        let mut flipped = over.clone();
        flipped.checks.insert("own_0".into(), false);
        assert_eq!(own_checks_problem(&over, &flipped, declared), None);
    }

    #[test]
    fn a_workflow_update_has_the_specified_shape() {
        let mut state = WorkflowState::start("idv");
        state.checks.insert(IDENTITY_VERIFIED.into(), true);
        let event = SessionEvent::WorkflowUpdate(state.update());
        assert_eq!(
            serde_json::to_value(&event).unwrap(),
            json!({"type": "workflow_update", "data": {"workflowId": "idv", "activeStep": "started", "checks": {"identity_verified": true}}})
        );
        let back: SessionEvent =
            serde_json::from_value(serde_json::to_value(&event).unwrap()).unwrap();
        assert_eq!(back, event);
    }

    #[test]
    fn tools_changed_and_ended_serialise_with_data() {
        let e = SessionEvent::ToolsChanged {
            tools: vec!["a".into()],
        };
        assert_eq!(
            serde_json::to_value(&e).unwrap(),
            json!({"type": "tools_changed", "data": {"tools": ["a"]}})
        );
        let e = SessionEvent::Ended {
            reason: "idle timeout".into(),
        };
        assert_eq!(serde_json::to_value(&e).unwrap()["type"], "ended");
    }

    #[test]
    fn only_checks_set_anew_or_flipped_count_as_changed() {
        let mut old = WorkflowState::start("idv");
        old.checks.insert(IDENTITY_VERIFIED.into(), false);
        old.checks.insert(ACCOUNT_FOUND.into(), true);
        let now = BTreeMap::from([
            (IDENTITY_VERIFIED.to_owned(), true),
            (ACCOUNT_FOUND.to_owned(), true),
            ("fresh".to_owned(), false),
        ]);
        assert_eq!(changed_checks(&old, &now), ["fresh", IDENTITY_VERIFIED]);
        assert!(changed_checks(&old, &old.checks).is_empty());
    }

    #[test]
    fn a_call_detail_is_the_result_if_allowed_and_the_reason_if_refused() {
        let mut call = ToolCallRecord {
            truncated: false,
            id: 1,
            at_ms: 0,
            tool: "check_balance".into(),
            arguments: json!({}),
            outcome: CallOutcome::Allowed,
            result: Some(json!({"balance": 1})),
            reason: None,
            workflow: "idv".into(),
            duration_us: 3,
            status: CallStatus::Done,
        };
        assert_eq!(call.detail(), r#"{"balance":1}"#);
        call.outcome = CallOutcome::Refused;
        call.reason = Some("not available".into());
        assert_eq!(call.detail(), "not available");
        call.reason = None;
        assert_eq!(call.detail(), "");
        call.outcome = CallOutcome::Allowed;
        call.status = CallStatus::Awaiting;
        call.result = None;
        assert_eq!(call.detail(), "awaiting the backend's result");
        call.complete(&CallResult {
            call_id: 1,
            status: CallStatus::Failed,
            result: json!({"error": "timeout"}),
            truncated: false,
            duration_us: Some(10_000_000),
        });
        assert_eq!(call.detail(), r#"failed: {"error":"timeout"}"#);
        assert_eq!(call.duration_us, 10_000_000, "the wait counts");
        assert_eq!(
            serde_json::to_value(&call).unwrap()["status"],
            "failed",
            "a call not done says so"
        );
    }

    #[test]
    fn a_state_patch_is_checked_like_an_effect_naming_its_own_fields() {
        let patch: StatePatch =
            serde_json::from_value(json!({"activeStep": "Bad Step", "checks": {"ok": true}}))
                .unwrap();
        assert_eq!(patch.change().unwrap_err().field, "activeStep");
        let patch: StatePatch =
            serde_json::from_value(json!({"checks": {"no way": true}})).unwrap();
        assert_eq!(patch.change().unwrap_err().field, "checks");
        assert!(serde_json::from_value::<StatePatch>(json!({"step": "x"})).is_err());
    }

    #[test]
    fn a_large_call_is_cut_to_an_excerpt_and_flagged() {
        let call = ToolCallRecord {
            id: 1,
            at_ms: 0,
            tool: "t".into(),
            arguments: serde_json::json!({"text": "é".repeat(5_000)}),
            outcome: CallOutcome::Allowed,
            result: Some(serde_json::json!({"ok": true})),
            reason: None,
            duration_us: 1,
            workflow: "w".into(),
            truncated: false,
            status: CallStatus::Done,
        };
        let small = call.clone().bounded(100_000);
        assert_eq!(small, call);
        let cut = call.bounded(1_000);
        assert!(cut.truncated);
        let text = cut.arguments.as_str().unwrap();
        assert!(text.len() <= 1_000 + '…'.len_utf8() && text.ends_with('…'));
        assert_eq!(cut.result, Some(serde_json::json!({"ok": true})));
        assert_eq!(
            serde_json::to_value(&cut).unwrap()["truncated"],
            serde_json::json!(true)
        );
    }
}
