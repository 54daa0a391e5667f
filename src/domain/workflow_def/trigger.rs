//! What starts a workflow: the trigger types (each with the JSON Schema
//! its filter rules are checked against) and a workflow's start trigger.

use serde::{Deserialize, Serialize};
use serde_json::{json, Value};

/// Largest filter rules, serialised.
pub const MAX_FILTER_BYTES: usize = 16 * 1024;

/// A kind of start trigger, from the catalogue.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct TriggerType {
    /// Its id (`inbound_call`).
    pub id: String,
    /// Its name.
    pub name: String,
    /// What starts the workflow.
    pub description: String,
    /// The JSON Schema its filter rules must satisfy.
    pub filter_schema: Value,
}

/// The start trigger types.
pub fn trigger_types() -> Vec<TriggerType> {
    let t = |id: &str, name: &str, description: &str, filter_schema: Value| TriggerType {
        id: id.into(),
        name: name.into(),
        description: description.into(),
        filter_schema,
    };
    vec![
        t(
            "manual",
            "Manual",
            "Started by a person or an API call; no filter rules.",
            json!({"type": "object", "additionalProperties": false}),
        ),
        t(
            "inbound_call",
            "Inbound call",
            "Started when a phone call comes in; filter by the number called or the caller's.",
            json!({"type": "object", "additionalProperties": false, "properties": {
                "calledNumbers": {"type": "array", "maxItems": 50, "items": {"type": "string", "pattern": "^\\+[0-9]{6,15}$"}},
                "callerPrefixes": {"type": "array", "maxItems": 50, "items": {"type": "string", "pattern": "^\\+[0-9]{1,15}$"}}
            }}),
        ),
        t(
            "chat_message",
            "Chat message",
            "Started by a chat message; filter by channel and by keywords in the message.",
            json!({"type": "object", "additionalProperties": false, "properties": {
                "channels": {"type": "array", "maxItems": 20, "items": {"type": "string", "enum": ["web", "whatsapp", "sms", "slack"]}},
                "keywords": {"type": "array", "maxItems": 50, "items": {"type": "string", "minLength": 1, "maxLength": 60}}
            }}),
        ),
        t(
            "schedule",
            "Schedule",
            "Started on a schedule (five-field cron, in a time zone).",
            json!({"type": "object", "additionalProperties": false, "required": ["cron"], "properties": {
                "cron": {"type": "string", "pattern": "^(\\S+\\s+){4}\\S+$", "maxLength": 100},
                "timezone": {"type": "string", "maxLength": 64}
            }}),
        ),
        t(
            "webhook",
            "Webhook",
            "Started by an HTTP request to the workflow's webhook; filter by event type.",
            json!({"type": "object", "additionalProperties": false, "properties": {
                "eventTypes": {"type": "array", "maxItems": 50, "items": {"type": "string", "minLength": 1, "maxLength": 80}}
            }}),
        ),
    ]
}

/// A workflow's start trigger.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Trigger {
    /// Its id.
    pub uuid: String,
    /// Its type, from [`trigger_types`].
    pub trigger_type_id: String,
    /// What must match for it to fire (the type's schema).
    #[serde(default = "empty_rules")]
    pub filter_rules: Value,
}

pub(super) fn empty_rules() -> Value {
    json!({})
}
