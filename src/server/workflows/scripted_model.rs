//! A scripted OpenAI-compatible chat-completions server, so the workflow
//! chat is tested — HTTP tests, Playwright, `make demo-chat` — without a
//! hosted model. It speaks the protocol the real ones do (`POST
//! /v1/chat/completions`, `tool_calls` with JSON-string arguments,
//! OpenAI-shaped errors) and refuses what they refuse (a tool call left
//! unanswered, a tool message answering nothing), so a bug in how
//! Switchboard talks to a model fails here too.
//!
//! Replies come from a [`Script`], keyed on the conversation: the turn's
//! user message picks the script entry (the first whose `when` it
//! contains), and the number of assistant messages since then picks the
//! reply. Placeholders fill in what only the conversation knows:
//! `{{workflow}}` (the workflow the system prompt names), `{{step:NAME}}`
//! (the uuid of the last step NAME in the newest tool result listing
//! steps) and
//! `{{trigger}}` (the newest trigger uuid). `GET /v1/requests` shows what
//! was asked, newest last, for tests to check.

use axum::extract::State;
use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post};
use axum::{Json, Router};
use serde::Deserialize;
use serde_json::{json, Value};
use std::sync::{Arc, Mutex};
use std::time::Duration;

/// The script `make demo-chat`, Playwright and the HTTP tests use unless
/// given another.
pub const DEFAULT_SCRIPT: &str = include_str!("../../../scripts/model-script.json");
/// Requests kept for `GET /v1/requests`.
const KEPT_REQUESTS: usize = 50;

/// What the scripted model answers.
#[derive(Debug, Clone, Deserialize)]
pub struct Script {
    /// The scripted turns, tried in order.
    pub conversations: Vec<Turn>,
    /// The answer for a turn no entry matches.
    pub fallback: String,
}

/// One scripted turn.
#[derive(Debug, Clone, Deserialize)]
pub struct Turn {
    /// Picked when the turn's user message contains this (any case).
    pub when: String,
    /// The replies, one per model call in the turn.
    pub replies: Vec<Reply>,
}

/// One scripted model answer.
#[derive(Debug, Clone, Default, Deserialize)]
pub struct Reply {
    /// The assistant's words.
    #[serde(default)]
    pub content: Option<String>,
    /// Tools to call: `{"name", "arguments"}` (arguments as an object, or
    /// as a raw string to script a malformed call).
    #[serde(default)]
    pub tool_calls: Vec<Value>,
    /// Answer with this HTTP status and `error` instead.
    #[serde(default)]
    pub status: Option<u16>,
    /// The error message sent with `status`.
    #[serde(default)]
    pub error: Option<String>,
    /// Wait this long first (to script a slow model).
    #[serde(default)]
    pub delay_ms: Option<u64>,
}

#[derive(Clone)]
struct Scripted {
    script: Arc<Script>,
    requests: Arc<Mutex<Vec<Value>>>,
}

/// The scripted server's routes.
pub fn router(script: Script) -> Router {
    let state = Scripted {
        script: Arc::new(script),
        requests: Arc::new(Mutex::new(Vec::new())),
    };
    Router::new()
        .route("/v1/chat/completions", post(complete))
        .route("/v1/requests", get(requests).delete(forget))
        .with_state(state)
}

/// Serves `script` on a free loopback port, in the background of the
/// calling runtime; its `/v1` root, for `SWITCHBOARD_LLM_BASE_URL` (the
/// HTTP tests and the chat bench).
pub async fn spawn(script: Script) -> std::io::Result<String> {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await?;
    let address = listener.local_addr()?;
    tokio::spawn(async move { axum::serve(listener, router(script)).await });
    Ok(format!("http://{address}/v1"))
}

/// Parses a script file's text.
pub fn parse(text: &str) -> Result<Script, String> {
    serde_json::from_str(text).map_err(|e| format!("the model script is not valid: {e}"))
}

fn openai_error(status: StatusCode, message: &str) -> Response {
    (
        status,
        Json(json!({"error": {"message": message, "type": "invalid_request_error"}})),
    )
        .into_response()
}

async fn requests(State(s): State<Scripted>) -> Json<Value> {
    let kept = s.requests.lock().map(|r| r.clone()).unwrap_or_default();
    Json(Value::Array(kept))
}

async fn forget(State(s): State<Scripted>) -> StatusCode {
    if let Ok(mut r) = s.requests.lock() {
        r.clear();
    }
    StatusCode::NO_CONTENT
}

async fn complete(State(s): State<Scripted>, body: Option<Json<Value>>) -> Response {
    let Some(Json(body)) = body else {
        return openai_error(StatusCode::BAD_REQUEST, "the body must be JSON");
    };
    if let Ok(mut kept) = s.requests.lock() {
        if kept.len() == KEPT_REQUESTS {
            kept.remove(0);
        }
        kept.push(body.clone());
    }
    let messages = body
        .get("messages")
        .and_then(Value::as_array)
        .cloned()
        .unwrap_or_default();
    if let Err(why) = check_history(&messages) {
        return openai_error(StatusCode::BAD_REQUEST, &why);
    }
    let turn_at = messages
        .iter()
        .rposition(|m| m["role"] == "user")
        .unwrap_or(0);
    let said = messages
        .get(turn_at)
        .and_then(|m| m["content"].as_str())
        .unwrap_or_default()
        .to_lowercase();
    let index = messages[turn_at..]
        .iter()
        .filter(|m| m["role"] == "assistant")
        .count();
    let turn = s
        .script
        .conversations
        .iter()
        .find(|t| said.contains(&t.when.to_lowercase()));
    let reply = match turn {
        Some(turn) => turn.replies.get(index).cloned().unwrap_or(Reply {
            content: Some("(The scripted turn is over.)".into()),
            ..Reply::default()
        }),
        None => Reply {
            content: Some(s.script.fallback.clone()),
            ..Reply::default()
        },
    };
    if let Some(ms) = reply.delay_ms {
        tokio::time::sleep(Duration::from_millis(ms)).await;
    }
    if let Some(status) = reply.status {
        let status = StatusCode::from_u16(status).unwrap_or(StatusCode::INTERNAL_SERVER_ERROR);
        return openai_error(status, reply.error.as_deref().unwrap_or("scripted failure"));
    }
    let calls: Vec<Value> = reply
        .tool_calls
        .iter()
        .enumerate()
        .map(|(j, call)| {
            let args = fill(&call["arguments"], &messages);
            let arguments = match args {
                Value::String(raw) => raw,
                other => other.to_string(),
            };
            json!({"id": format!("call_{}_{}_{j}", turn_at, index), "type": "function",
                   "function": {"name": call["name"], "arguments": arguments}})
        })
        .collect();
    let finish = if calls.is_empty() {
        "stop"
    } else {
        "tool_calls"
    };
    let mut message = json!({"role": "assistant", "content": reply.content});
    if !calls.is_empty() {
        message["tool_calls"] = Value::Array(calls);
    }
    Json(json!({
        "id": format!("chatcmpl-scripted-{turn_at}-{index}"),
        "object": "chat.completion",
        "created": 0,
        "model": body.get("model").cloned().unwrap_or(Value::Null),
        "choices": [{"index": 0, "message": message, "finish_reason": finish}],
    }))
    .into_response()
}

/// What a real chat-completions API refuses: an assistant's tool call not
/// answered before the next message, or a tool message answering nothing.
fn check_history(messages: &[Value]) -> Result<(), String> {
    if messages.is_empty() {
        return Err("'messages' must be a non-empty array".into());
    }
    let mut open: Vec<String> = Vec::new();
    for (i, m) in messages.iter().enumerate() {
        let role = m["role"].as_str().unwrap_or_default();
        if role == "tool" {
            let id = m["tool_call_id"].as_str().unwrap_or_default();
            let Some(k) = open.iter().position(|o| o == id) else {
                return Err(format!(
                    "messages[{i}]: a 'tool' message must answer a preceding tool call"
                ));
            };
            open.remove(k);
            continue;
        }
        if !open.is_empty() {
            return Err(format!(
                "messages[{i}]: an assistant message with 'tool_calls' must be followed by tool messages answering each call (missing {})",
                open.join(", ")
            ));
        }
        if let Some(calls) = m["tool_calls"].as_array() {
            open = calls
                .iter()
                .filter_map(|c| c["id"].as_str().map(str::to_owned))
                .collect();
        }
    }
    Ok(())
}

/// `value` with its placeholders filled from the conversation.
fn fill(value: &Value, messages: &[Value]) -> Value {
    match value {
        Value::String(s) => Value::String(fill_text(s, messages)),
        Value::Array(items) => Value::Array(items.iter().map(|v| fill(v, messages)).collect()),
        Value::Object(map) => Value::Object(
            map.iter()
                .map(|(k, v)| (k.clone(), fill(v, messages)))
                .collect(),
        ),
        other => other.clone(),
    }
}

fn fill_text(text: &str, messages: &[Value]) -> String {
    let mut out = String::new();
    let mut rest = text;
    while let Some(start) = rest.find("{{") {
        let Some(len) = rest[start..].find("}}") else {
            break;
        };
        out.push_str(&rest[..start]);
        let key = &rest[start + 2..start + len];
        out.push_str(&lookup(key, messages).unwrap_or_else(|| format!("<no {key}>")));
        rest = &rest[start + len + 2..];
    }
    out.push_str(rest);
    out
}

fn lookup(key: &str, messages: &[Value]) -> Option<String> {
    let results = || {
        messages
            .iter()
            .rev()
            .filter(|m| m["role"] == "tool")
            .filter_map(|m| serde_json::from_str::<Value>(m["content"].as_str()?).ok())
    };
    if key == "workflow" {
        let system = messages.first()?["content"].as_str()?;
        let after = system.split("workflow_uuid is `").nth(1)?;
        return after.split('`').next().map(str::to_owned);
    }
    if key == "trigger" {
        return results().find_map(|r| r.pointer("/trigger/uuid")?.as_str().map(str::to_owned));
    }
    let name = key.strip_prefix("step:")?;
    results().find_map(|r| {
        r["steps"].as_array()?.iter().find(|s| s["name"] == name)?["uuid"]
            .as_str()
            .map(str::to_owned)
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_default_script_parses() {
        let script = parse(DEFAULT_SCRIPT).unwrap();
        assert!(script
            .conversations
            .iter()
            .any(|t| t.when == "verify identity"));
    }

    #[test]
    fn placeholders_come_from_the_conversation() {
        let messages = vec![
            json!({"role": "system", "content": "… its workflow_uuid is `idv`."}),
            json!({"role": "user", "content": "x"}),
            json!({"role": "tool", "tool_call_id": "a", "content": "{\"steps\":[{\"name\":\"Verify identity\",\"uuid\":\"u-1\"}],\"trigger\":{\"uuid\":\"t-1\"}}"}),
        ];
        let filled = fill(
            &json!({"w": "{{workflow}}", "s": "{{step:Verify identity}}", "t": "{{trigger}}", "n": "{{step:Nope}}"}),
            &messages,
        );
        assert_eq!(
            filled,
            json!({"w": "idv", "s": "u-1", "t": "t-1", "n": "<no step:Nope>"})
        );
    }

    #[test]
    fn unanswered_tool_calls_are_refused_like_a_real_api() {
        let ok = [
            json!({"role": "user", "content": "x"}),
            json!({"role": "assistant", "tool_calls": [{"id": "a"}]}),
            json!({"role": "tool", "tool_call_id": "a", "content": "{}"}),
        ];
        assert!(check_history(&ok).is_ok());
        let open = [
            json!({"role": "user", "content": "x"}),
            json!({"role": "assistant", "tool_calls": [{"id": "a"}]}),
            json!({"role": "user", "content": "y"}),
        ];
        assert!(check_history(&open).unwrap_err().contains("missing a"));
        let stray = [
            json!({"role": "user", "content": "x"}),
            json!({"role": "tool", "tool_call_id": "a", "content": "{}"}),
        ];
        assert!(check_history(&stray).is_err());
    }
}
