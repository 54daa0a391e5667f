//! A tool call as recorded and shown: its outcome, its status while a
//! backend or plugin runs it, and the answers a caller gets.

use crate::domain::workflow_state::WorkflowState;
use serde::{Deserialize, Serialize};
use serde_json::Value;

/// Whether a call ran.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum CallOutcome {
    /// Allowed and executed.
    Allowed,
    /// Refused; nothing executed.
    Refused,
}

impl CallOutcome {
    /// The outcome stored as `raw`: anything but `allowed` is refused, so a
    /// row never reads as having run when it did not say so.
    pub fn parse(raw: &str) -> Self {
        if raw == "allowed" {
            CallOutcome::Allowed
        } else {
            CallOutcome::Refused
        }
    }
}

/// Where an allowed call's result stands. Switchboard's own tools finish at
/// once; a tool the agent backend executes waits for the backend to report
/// its result (`POST …/tool-calls/{callId}/result`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum CallStatus {
    /// Finished: nothing more will come.
    #[default]
    Done,
    /// Allowed and handed to the backend; its result is not in yet.
    Awaiting,
    /// The tool failed: the backend reported so, or a built-in ran and
    /// answered that it failed (a todo tool's `{"success": false, …}`).
    Failed,
    /// Refused: nothing ran (the call's `reason` says why).
    Refused,
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
            CallStatus::Refused => "refused",
        }
    }

    /// The status stored as `raw` for a call with `outcome` (`done` for
    /// anything unknown). A refused call is `refused` whatever was stored:
    /// rows written before refusals had a status of their own say `done`.
    pub fn parse(raw: &str, outcome: CallOutcome) -> Self {
        match (outcome, raw) {
            (CallOutcome::Refused, _) => CallStatus::Refused,
            (_, "awaiting") => CallStatus::Awaiting,
            (_, "failed") => CallStatus::Failed,
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
    /// `done` when Switchboard ran it; `refused` when nothing ran (the
    /// `reason` says why); `failed` when it ran
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
            (CallOutcome::Refused, _) | (_, CallStatus::Refused) => {
                self.reason.clone().unwrap_or_default()
            }
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
pub(super) fn stage_change_text(result: &Value) -> Option<String> {
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
