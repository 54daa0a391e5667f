//! Live agent sessions: the record of a tool call and the events pushed to
//! whoever is watching (the state they carry is `workflow_state`'s).
//!
//! Shared by the server (which produces them) and the visualiser (which
//! renders them), so an event's JSON shape is defined exactly once.

use crate::domain::lesson::nudge::{Nudge, TurnLog};
use crate::domain::limits::SESSION_OWN_CHECKS_MAX;
use crate::domain::session_origin::StartedBy;
use crate::domain::vibe::AgentView;
use crate::domain::workflow_state::{AgentContext, WorkflowState};
use serde::{Deserialize, Serialize};
use serde_json::Value;
use std::collections::BTreeMap;

/// The `workflow_update` event for a state: kept here, beside the event,
/// so `workflow_state` stays a leaf.
impl WorkflowState {
    /// The `workflow_update` payload for this state.
    pub fn update(&self) -> WorkflowUpdate {
        WorkflowUpdate {
            workflow_id: self.current_workflow.clone(),
            active_step: self.current_step.clone(),
            checks: self.checks.clone(),
            agent: self.agent.clone(),
            workflow_step: self.workflow_step.clone(),
        }
    }
}

/// Whether a call ran.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum CallOutcome {
    /// Allowed and executed.
    Allowed,
    /// Refused; nothing executed.
    Refused,
}

/// Where an allowed call's result stands. Switchboard's own tools finish at
/// once; a tool the agent backend executes waits for the backend to report
/// its result (`POST …/tool-calls/{callId}/result`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum CallStatus {
    /// Finished (or refused): nothing more will come.
    #[default]
    Done,
    /// Allowed and handed to the backend; its result is not in yet.
    Awaiting,
    /// The tool failed: the backend reported so, or a built-in ran and
    /// answered that it failed (a todo tool's `{"success": false, …}`).
    Failed,
}

impl CallStatus {
    /// Whether this is [`CallStatus::Done`] (left out of JSON, the usual case).
    pub fn is_done(&self) -> bool {
        *self == CallStatus::Done
    }

    /// The stored name.
    pub fn as_str(self) -> &'static str {
        match self {
            CallStatus::Done => "done",
            CallStatus::Awaiting => "awaiting",
            CallStatus::Failed => "failed",
        }
    }

    /// The status stored as `raw` (`done` for anything unknown).
    pub fn parse(raw: &str) -> Self {
        match raw {
            "awaiting" => CallStatus::Awaiting,
            "failed" => CallStatus::Failed,
            _ => CallStatus::Done,
        }
    }
}

/// One tool call, allowed or refused, as recorded for the session.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ToolCallRecord {
    /// Increasing per database.
    pub id: i64,
    /// Unix milliseconds.
    pub at_ms: i64,
    /// Tool name as called.
    pub tool: String,
    /// Arguments as sent.
    pub arguments: Value,
    /// Allowed or refused.
    pub outcome: CallOutcome,
    /// The tool's result when allowed.
    pub result: Option<Value>,
    /// Why it was refused (or why the tool failed).
    pub reason: Option<String>,
    /// Time spent deciding and executing, microseconds.
    pub duration_us: i64,
    /// Workflow the call was made in.
    pub workflow: String,
    /// Whether an allowed call's result is in (absent = done).
    #[serde(default, skip_serializing_if = "CallStatus::is_done")]
    pub status: CallStatus,
    /// Set when `arguments` or `result` were cut to an excerpt to keep a
    /// snapshot small; the full call is in `GET /api/sessions/{id}/calls`.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub truncated: bool,
}

/// The data of a `workflow_update` event.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct WorkflowUpdate {
    /// Current workflow.
    pub workflow_id: String,
    /// Current step.
    pub active_step: String,
    /// Checks.
    pub checks: BTreeMap<String, bool>,
    /// A vibe session's vibe and current agent.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub agent: Option<AgentContext>,
    /// The workflow step (uuid) the session is in, if its workflow has steps.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub workflow_step: Option<String>,
}

/// Everything a watcher needs to draw a session from scratch.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct SessionSnapshot {
    /// Session id.
    pub session_id: String,
    /// Workflow state.
    pub state: WorkflowState,
    /// Tools available now.
    pub tools: Vec<String>,
    /// Recent calls, newest last.
    pub calls: Vec<ToolCallRecord>,
    /// Whether the session has ended.
    pub ended: bool,
    /// Opened, Unix seconds (the visualiser's elapsed time).
    #[serde(default)]
    pub started_at: i64,
    /// When it ended, if it has.
    #[serde(default)]
    pub ended_at: Option<i64>,
    /// A tutor session's planned length.
    #[serde(default)]
    pub planned_minutes: Option<u32>,
    /// The turns reported and the nudges given so far.
    #[serde(default)]
    pub turns: TurnLog,
    /// A vibe session's current agent.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub agent: Option<AgentView>,
    /// What the session's plugin registered (its tools with status and use
    /// counts), so a late listener learns them without the events.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub plugin: Option<crate::domain::plugin::PluginSet>,
    /// The start trigger that opened it, if one did (the page's "Started
    /// by" line).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub started_by: Option<StartedBy>,
}

/// The data of a `turn` event: the backend reported a turn.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct TurnUpdate {
    /// Turns the student has taken.
    pub student: u32,
    /// Turns the tutor has taken.
    pub tutor: u32,
    /// Nudges this turn gave the model.
    pub nudges: Vec<Nudge>,
}

/// An event on a session's stream: `{"type": "...", "data": {...}}`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "type", content = "data", rename_all = "snake_case")]
pub enum SessionEvent {
    /// The full state (first event for a new subscriber, or after a gap).
    Snapshot(Box<SessionSnapshot>),
    /// Workflow, step or checks changed.
    WorkflowUpdate(WorkflowUpdate),
    /// A call was allowed or refused.
    ToolCall(ToolCallRecord),
    /// The agent backend reported the result of a call it executed.
    ToolResult(CallResult),
    /// The backend reported a turn (and the nudges it got).
    Turn(TurnUpdate),
    /// A vibe session moved to another agent (`switchAgent`).
    AgentChanged(AgentView),
    /// The available tools changed (workflow switch or new bindings).
    ToolsChanged {
        /// Tools available now.
        tools: Vec<String>,
    },
    /// The session ended.
    Ended {
        /// Why (`ended by agent`, `idle timeout`).
        reason: String,
    },
}

impl SessionEvent {
    /// Its SSE `event:` name, the same as its JSON `type`, so a browser's
    /// `EventSource.addEventListener(name, …)` gets it.
    pub fn name(&self) -> &'static str {
        match self {
            Self::Snapshot(_) => "snapshot",
            Self::WorkflowUpdate(_) => "workflow_update",
            Self::ToolCall(_) => "tool_call",
            Self::ToolResult(_) => "tool_result",
            Self::Turn(_) => "turn",
            Self::AgentChanged(_) => "agent_changed",
            Self::ToolsChanged { .. } => "tools_changed",
            Self::Ended { .. } => "ended",
        }
    }
}

/// Every `event:` name a session's stream carries: the [`SessionEvent`]s
/// and the plugin's `tool-availability-update`.
pub const SESSION_EVENT_NAMES: [&str; 9] = [
    "snapshot",
    "workflow_update",
    "tool_call",
    "tool_result",
    "turn",
    "agent_changed",
    "tools_changed",
    "ended",
    crate::domain::plugin::AVAILABILITY_EVENT,
];

/// Every `event:` name the session list's stream carries (its JSON `type`).
pub const LIST_EVENT_NAMES: [&str; 3] = ["opened", "updated", "ended"];

/// A session as listed for watchers.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct SessionSummary {
    /// Id.
    pub id: String,
    /// Workflow state.
    pub state: WorkflowState,
    /// Last activity, Unix seconds.
    pub last_activity: i64,
    /// Opened, Unix seconds.
    pub created_at: i64,
    /// Whether it has ended.
    pub ended: bool,
    /// Who a tutor session is for, if its backend named them.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub student: Option<String>,
    /// The start trigger that opened it, if one did.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub started_by: Option<StartedBy>,
    /// A signed-in user trying their configuration (listed as a trial).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub trial: bool,
}

/// The data of a `tool_result` event: a backend-executed call's outcome.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct CallResult {
    /// The call it completes.
    pub call_id: i64,
    /// `done`, or `failed` when the backend said the tool failed.
    pub status: CallStatus,
    /// What the backend reported.
    pub result: Value,
    /// Set when `result` was cut to an excerpt for the stream.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub truncated: bool,
    /// The call's whole duration, when completing it took time Switchboard
    /// measured (a call relayed to a plugin and its wait for the answer).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub duration_us: Option<i64>,
}

/// What a tool call answers.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct CallResponse {
    /// Whether the call was allowed.
    pub allowed: bool,
    /// `done` when Switchboard ran it (or refused it); `failed` when it ran
    /// and answered that it failed (its answer is `result`); `awaiting`
    /// when the backend executes it and reports the result under `call_id`.
    pub status: CallStatus,
    /// The tool's result when Switchboard ran it.
    pub result: Option<Value>,
    /// Why it was refused.
    pub reason: Option<String>,
    /// The session's state after the call.
    pub state: WorkflowState,
    /// The recorded call's id.
    pub call_id: i64,
    /// Whether the tools this session may call changed since its previous
    /// call (an admin's save, a workflow switch): re-declare them.
    pub tools_changed: bool,
    /// The tools available now, when they changed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tools: Option<Vec<String>>,
}

/// `PATCH /api/sessions/{id}/state`: a backend that tracks the
/// conversation itself sets the step and checks.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct StatePatch {
    /// The step the session is at now.
    #[serde(default)]
    pub active_step: Option<String>,
    /// The workflow step (uuid) the session moves to; its tools join the
    /// workflow's.
    #[serde(default)]
    pub workflow_step: Option<String>,
    /// Checks to set.
    #[serde(default)]
    pub checks: BTreeMap<String, bool>,
}

impl StatePatch {
    /// The same change as an effect branch, so it is validated and applied
    /// by the same code (field names as in this body).
    pub fn change(
        &self,
    ) -> Result<crate::domain::effect::StateChange, crate::domain::error::FieldError> {
        let change = crate::domain::effect::StateChange {
            checks: self.checks.clone(),
            step: self.active_step.clone(),
        };
        match change.problems("state").into_iter().next() {
            Some(mut p) => {
                p.field = p
                    .field
                    .replace("state.step", "activeStep")
                    .replace("state.checks", "checks");
                Err(p)
            }
            None => Ok(change),
        }
    }
}

/// Refuses a change from `before` to `after` that leaves the session with
/// more than [`SESSION_OWN_CHECKS_MAX`] checks nothing declares (`declared`
/// says which are), unless it had that many already and adds none: a
/// backend's own checks are bounded, the catalogue's are bounded by it.
pub fn own_checks_problem(
    before: &WorkflowState,
    after: &WorkflowState,
    declared: impl Fn(&str) -> bool,
) -> Option<crate::domain::error::FieldError> {
    let own = |ws: &WorkflowState| ws.checks.keys().filter(|c| !declared(c)).count();
    let (was, now) = (own(before), own(after));
    (now > SESSION_OWN_CHECKS_MAX && now > was).then(|| {
        crate::domain::error::FieldError::new(
            "checks",
            format!(
                "a session may hold at most {SESSION_OWN_CHECKS_MAX} checks that its workflow, lesson or vibe does not declare; this change would make {now}"
            ),
        )
    })
}

/// The checks whose value `checks` sets anew or differently from `old`: the
/// ones the visualiser makes pulse.
pub fn changed_checks(old: &WorkflowState, checks: &BTreeMap<String, bool>) -> Vec<String> {
    checks
        .iter()
        .filter(|(k, v)| old.checks.get(*k) != Some(v))
        .map(|(k, _)| k.clone())
        .collect()
}

impl ToolCallRecord {
    /// The call with `arguments` and `result` each at most `max_bytes` of
    /// JSON: a larger one becomes a string excerpt of its JSON (cut on a
    /// character boundary, `…` appended) and the call is flagged
    /// `truncated`.
    pub fn bounded(mut self, max_bytes: usize) -> Self {
        fn cut(value: &mut Value, max_bytes: usize) -> bool {
            let json = value.to_string();
            if json.len() <= max_bytes {
                return false;
            }
            let mut end = max_bytes;
            while !json.is_char_boundary(end) {
                end -= 1;
            }
            *value = Value::String(format!("{}…", &json[..end]));
            true
        }
        let args_cut = cut(&mut self.arguments, max_bytes);
        let result_cut = self.result.as_mut().is_some_and(|r| cut(r, max_bytes));
        self.truncated |= args_cut || result_cut;
        self
    }

    /// The line under a call in the timeline: the tool's result when it was
    /// allowed, the reason when it was refused (empty if there is none).
    pub fn detail(&self) -> String {
        let result = || {
            self.result
                .as_ref()
                .map(|r| r.to_string())
                .unwrap_or_default()
        };
        match (self.outcome, self.status) {
            (CallOutcome::Refused, _) => self.reason.clone().unwrap_or_default(),
            (CallOutcome::Allowed, CallStatus::Awaiting) => "awaiting the backend's result".into(),
            (CallOutcome::Allowed, CallStatus::Failed) => format!("failed: {}", result()),
            (CallOutcome::Allowed, CallStatus::Done) => self
                .result
                .as_ref()
                .and_then(stage_change_text)
                .unwrap_or_else(result),
        }
    }

    /// Takes in a reported result (a `tool_result` event) for this call.
    pub fn complete(&mut self, reported: &CallResult) {
        if reported.call_id == self.id {
            self.status = reported.status;
            self.result = Some(reported.result.clone());
            self.truncated |= reported.truncated;
            if let Some(us) = reported.duration_us {
                self.duration_us = us;
            }
        }
    }
}

/// A `switchAgent` answer (Ultravox's stage change, its stage a JSON
/// string) as a watcher reads it: what the agent says, not the escaped
/// stage. A stage change cut to an excerpt (a snapshot) says so.
fn stage_change_text(result: &Value) -> Option<String> {
    const PREFIX: &str = "{\"responseType\":\"new-stage\"";
    if let Value::String(excerpt) = result {
        return excerpt
            .starts_with(PREFIX)
            .then(|| "new stage (the full answer is in the call's record)".to_owned());
    }
    if result.get("responseType")?.as_str()? != "new-stage" {
        return None;
    }
    let stage: Value = serde_json::from_str(result.get("result")?.as_str()?).ok()?;
    let tools = stage
        .get("selectedTools")
        .and_then(Value::as_array)
        .map_or(0, Vec::len);
    Some(format!(
        "new stage: \"{}\" ({tools} tools, voice {})",
        stage.get("toolResultText")?.as_str()?,
        stage.get("voice").and_then(Value::as_str).unwrap_or("?")
    ))
}

#[cfg(test)]
mod tests {
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
