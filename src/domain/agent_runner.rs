//! The agent runner, one action per request (`POST
//! /api/sessions/{id}/agent/step`): a configured model drives a session
//! with exactly the prompt and tools a backend gets, and every tool call
//! goes through the session's one call path.
//!
//! Pure: the shapes of the step, the system prompt of a workflow session
//! (the workflow, then the step it is in), and the words the model reads
//! for each call's answer — allowed, refused with Switchboard's reason,
//! failed, or still pending. Which action a step takes is
//! `workflow_chat::next_action`'s rule, shared with the workflow chat.

use crate::domain::agent_session::{CallResponse, CallStatus};
use crate::domain::lesson::nudge::Nudge;
use crate::domain::workflow_chat::{ChatMessage, ChatRole};
use crate::domain::workflow_def::Step;
use crate::domain::workflow_state::WorkflowState;
use serde::{Deserialize, Serialize};

/// Steps (model answers and tool results) one turn may take before the
/// runner stops it, unless `AGENT_STEP_LIMIT` says otherwise.
pub const DEFAULT_STEP_LIMIT: usize = 12;
/// How long a step waits for the result of a call the session's backend
/// executes before telling the model it is pending, unless
/// `AGENT_RESULT_WAIT_SECONDS` says otherwise.
pub const DEFAULT_RESULT_WAIT_SECONDS: usize = 5;
/// The longest result wait allowed: a step (wait included) answers
/// before the server's 30 s request timeout.
pub const MAX_RESULT_WAIT_SECONDS: usize = 20;
/// The built-in tool that moves a workflow session to another of its
/// steps; offered in every workflow with two steps or more.
pub const GO_TO_STEP_TOOL: &str = "go_to_step";

/// `POST /api/sessions/{id}/agent/step`'s body: the conversation so far,
/// oldest first, in chat-completions form.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct StepRequest {
    /// The whole history: the user's messages, the model's answers and
    /// the tools' results.
    pub messages: Vec<ChatMessage>,
}

/// Its answer: the history with the one new message appended, whether
/// the turn is over, and the session's state after the step.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct StepResponse {
    /// The history with the new message at the end.
    pub messages: Vec<ChatMessage>,
    /// The new message is the assistant's answer with no tool calls: the
    /// user may speak.
    pub is_complete: bool,
    /// The session's state now.
    pub state: WorkflowState,
}

/// The system prompt of a session in workflow `name` (its id `id`) with
/// `steps`, while in step `current`: what the workflow is, then the
/// step's own instructions and how to move on. A workflow without steps
/// gets the first paragraph only.
pub fn workflow_prompt(id: &str, name: &str, steps: &[Step], current: Option<&str>) -> String {
    let mut prompt = format!(
        "You are the agent of the “{name}” workflow (`{id}`). Use only the tools you are given; Switchboard refuses any other call and tells you why."
    );
    let Some((at, step)) =
        current.and_then(|c| steps.iter().enumerate().find(|(_, s)| s.uuid == c))
    else {
        return prompt;
    };
    prompt.push_str(&format!(
        "\n\n## Current step: {} (step {} of {})\n",
        step.name,
        at + 1,
        steps.len()
    ));
    if step.system_prompt.trim().is_empty() {
        prompt.push_str("This step has no instructions of its own.");
    } else {
        prompt.push_str(step.system_prompt.trim());
    }
    if steps.len() > 1 {
        let names: Vec<String> = steps.iter().map(|s| format!("“{}”", s.name)).collect();
        prompt.push_str(&format!(
            "\n\nThe steps, in order: {}. When this step's work is done, call `{GO_TO_STEP_TOOL}` with the next step's name.",
            names.join(", ")
        ));
    }
    prompt
}

/// What the model reads as the answer to its call of `tool`: the result
/// when Switchboard (or the plugin) ran it, Switchboard's reason when it
/// refused, the failure a backend reported or a built-in answered (a todo
/// tool's `{"success": false, …}`), or that the backend has not
/// answered yet; then, when the call changed the session's tools, the new
/// list (the next model call is declared them).
pub fn call_answer(tool: &str, response: &CallResponse) -> String {
    let mut answer = match (response.allowed, response.status, &response.result) {
        (false, _, _) | (_, CallStatus::Refused, _) => format!(
            "Refused by Switchboard: {}",
            response.reason.as_deref().unwrap_or("not allowed now")
        ),
        (true, CallStatus::Awaiting, _) => pending(tool, response.call_id),
        (true, CallStatus::Failed, result) => format!(
            "The tool `{tool}` failed: {}",
            result.as_ref().map(|r| r.to_string()).unwrap_or_default()
        ),
        (true, CallStatus::Done, Some(result)) => result.to_string(),
        (true, CallStatus::Done, None) => format!("`{tool}` was done."),
    };
    if let Some(tools) = response.tools.as_ref().filter(|_| response.tools_changed) {
        answer.push_str(&format!(
            "\n\nYour tools changed; you may now call: {}.",
            if tools.is_empty() {
                "none".to_owned()
            } else {
                tools.join(", ")
            }
        ));
    }
    answer
}

/// The answer to a call whose result the session's backend has not
/// reported within the runner's wait.
pub fn pending(tool: &str, call_id: i64) -> String {
    format!(
        "`{tool}` was allowed and handed to the session's backend, which has not reported its result yet (call {call_id}). Tell the user it is in progress; do not call it again for the same request."
    )
}

/// The answer to a call Switchboard could not take (arguments that are
/// not a JSON object, a name that is no tool, an ended session…), with
/// the reason it gave.
pub fn call_error(tool: &str, why: &str) -> String {
    format!("Error: `{tool}` was not called: {why}")
}

/// What a tutor session's model is told, after the history, when the
/// lesson's triggers fired on the student's turn: each nudge's words, as
/// a backend reporting turns would pass them on. `None` without nudges.
pub fn nudge_note(nudges: &[Nudge]) -> Option<String> {
    if nudges.is_empty() {
        return None;
    }
    let lines: Vec<String> = nudges
        .iter()
        .map(|n| format!("- {} (`{}`)", n.text, n.tool))
        .collect();
    Some(format!(
        "Switchboard's lesson triggers fired on the student's turn:\n{}",
        lines.join("\n")
    ))
}

/// The assistant message that ends a turn at its step limit.
pub fn stop_message(step_limit: usize) -> ChatMessage {
    ChatMessage::text(
        ChatRole::Assistant,
        format!(
            "I stopped after {step_limit} steps without finishing this turn (the step limit, AGENT_STEP_LIMIT). What was done so far stands; say \"continue\" to let me go on."
        ),
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::domain::workflow_def::StepType;
    use serde_json::json;

    fn step(uuid: &str, name: &str, prompt: &str) -> Step {
        Step {
            uuid: uuid.into(),
            step_type: StepType::CustomLlm,
            name: name.into(),
            system_prompt: prompt.into(),
            tools: vec![],
            bound_only: vec![],
        }
    }

    fn response(allowed: bool, status: CallStatus) -> CallResponse {
        CallResponse {
            allowed,
            status,
            result: None,
            reason: None,
            state: WorkflowState::start("idv"),
            call_id: 7,
            tools_changed: false,
            tools: None,
        }
    }

    #[test]
    fn a_workflow_prompt_holds_the_current_steps_instructions_and_the_way_on() {
        let steps = [
            step("a", "Greet", "Say hello and ask for the account number."),
            step("b", "Verify", "Check the caller's identity."),
        ];
        let p = workflow_prompt("idv", "ID&V", &steps, Some("b"));
        assert!(p.starts_with("You are the agent of the “ID&V” workflow (`idv`)."));
        assert!(p.contains("## Current step: Verify (step 2 of 2)\nCheck the caller's identity."));
        assert!(p.contains("call `go_to_step`"));
        assert!(!p.contains("Say hello"), "only the current step's prompt");
    }

    #[test]
    fn a_workflow_without_steps_or_outside_them_gets_the_first_paragraph() {
        let bare = workflow_prompt("idv", "ID&V", &[], None);
        assert!(!bare.contains("Current step"));
        let steps = [step("a", "Only", "")];
        assert_eq!(workflow_prompt("idv", "ID&V", &steps, Some("zz")), bare);
        let one = workflow_prompt("idv", "ID&V", &steps, Some("a"));
        assert!(one.contains("no instructions of its own"));
        assert!(!one.contains("go_to_step"), "one step: nowhere to go");
    }

    #[test]
    fn a_refusal_reaches_the_model_with_switchboards_reason() {
        let mut r = response(false, CallStatus::Refused);
        r.reason = Some("`check_balance` needs identity_verified".into());
        assert_eq!(
            call_answer("check_balance", &r),
            "Refused by Switchboard: `check_balance` needs identity_verified"
        );
    }

    #[test]
    fn results_failures_and_pending_calls_say_what_really_happened() {
        let mut done = response(true, CallStatus::Done);
        done.result = Some(json!({"balance": 12}));
        assert_eq!(call_answer("check_balance", &done), r#"{"balance":12}"#);
        let mut failed = response(true, CallStatus::Failed);
        failed.result = Some(json!({"error": "timeout"}));
        assert!(call_answer("x", &failed).starts_with("The tool `x` failed:"));
        let waiting = call_answer("lookup", &response(true, CallStatus::Awaiting));
        assert!(waiting.contains("has not reported its result yet (call 7)"));
    }

    #[test]
    fn a_change_of_tools_is_told_with_the_answer() {
        let mut r = response(true, CallStatus::Done);
        r.result = Some(json!({"ok": true}));
        r.tools_changed = true;
        r.tools = Some(vec!["a".into(), "b".into()]);
        assert!(call_answer("t", &r).ends_with("Your tools changed; you may now call: a, b."));
    }

    #[test]
    fn nudges_are_told_with_their_tools_and_none_is_nothing() {
        assert_eq!(nudge_note(&[]), None);
        let nudge = Nudge {
            tool: "mark_for_review".into(),
            trigger: crate::domain::lesson::trigger::TriggerKind::Keyword,
            text: "The student said \"ayer\": check the past tense.".into(),
            at: 0,
        };
        let note = nudge_note(&[nudge]).unwrap();
        assert!(note
            .ends_with("- The student said \"ayer\": check the past tense. (`mark_for_review`)"));
    }

    #[test]
    fn the_stop_message_names_the_limit() {
        let m = stop_message(3);
        assert_eq!(m.role, ChatRole::Assistant);
        assert!(m.content.contains("after 3 steps") && m.calls().is_empty());
    }
}
