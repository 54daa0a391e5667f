//! A relayed call as the plugin is told of it (`tool-call-request`) and as
//! another instance's call is read from the database: kept apart from the
//! bookkeeping of waiting calls (`session_relay`) because the relay, the
//! cluster (`across`) and the tests all build and read these shapes.

use serde_json::{json, Value};

/// What a relayed call's waiter gets: the plugin's result or its error.
pub type Answer = Result<Value, String>;

/// The `tool-call-request` event's name.
pub const CALL_EVENT: &str = "tool-call-request";

/// A call whose agent waits on another instance, as read from the
/// database (`across`).
#[derive(Debug, Clone)]
pub struct Waiting {
    /// The recorded call's id.
    pub call_id: i64,
    /// The plugin tool called.
    pub tool: String,
    /// Its arguments.
    pub arguments: Value,
    /// When its agent stops waiting (Unix ms).
    pub deadline_ms: i64,
}

/// A relayed call as the plugin is told of it.
pub struct Offer<'a> {
    /// The recorded call's id.
    pub call_id: i64,
    /// The plugin tool called.
    pub tool: &'a str,
    /// Its arguments, as checked against the tool's schema.
    pub arguments: &'a Value,
    /// When the agent stops waiting (Unix ms on the injected clock).
    pub deadline_ms: i64,
}

impl Offer<'_> {
    /// `tool-call-request`'s data: `{"callId","name","arguments",
    /// "deadline" (RFC 3339, UTC),"timeoutMs" (left at `now_ms`)}`.
    pub(super) fn json(&self, now_ms: i64) -> String {
        let deadline = jiff::Timestamp::from_millisecond(self.deadline_ms)
            .map(|t| t.to_string())
            .unwrap_or_default();
        json!({
            "callId": self.call_id.to_string(),
            "name": self.tool,
            "arguments": self.arguments,
            "deadline": deadline,
            "timeoutMs": (self.deadline_ms - now_ms).max(0),
        })
        .to_string()
    }
}
