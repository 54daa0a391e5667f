//! One turn of the workflow agent: what to do next (ask the model, run a
//! tool call, stop at the step limit), the history the model is sent, and
//! its reply read.

use super::check::{problem, ChatProblem};
use super::messages::{
    cut, function, ChatMessage, ChatRole, FunctionCall, ToolCall, MAX_CONTENT_CHARS,
    MAX_NAME_CHARS, MAX_TOOL_CALLS,
};
use serde_json::Value;

/// Steps (model answers and tool results) one turn may take before it is
/// stopped, unless configured otherwise.
pub const DEFAULT_STEP_LIMIT: usize = 12;

/// The one thing a step does, decided by the end of the history.
#[derive(Debug, Clone, PartialEq)]
pub enum Action<'a> {
    /// Ask the model (the user spoke, or every tool call was answered).
    CallModel,
    /// Run this call: the first of the last assistant message's calls
    /// without an answer.
    RunTool(&'a ToolCall),
    /// The turn took its step limit: end it with a message saying so.
    StopTurn,
}

/// Messages since the user's last one: how far the turn has come.
pub fn steps_in_turn(messages: &[ChatMessage]) -> usize {
    messages
        .iter()
        .rev()
        .take_while(|m| m.role != ChatRole::User)
        .count()
}

/// The next action for a checked history, or why there is none (the
/// assistant has answered and the turn waits for the user).
pub fn next_action(messages: &[ChatMessage], step_limit: usize) -> Result<Action<'_>, ChatProblem> {
    let Some(last) = messages.last() else {
        return Err(problem("messages", "must hold at least the user's message"));
    };
    if last.role == ChatRole::Assistant && last.calls().is_empty() {
        return Err(problem(
            "messages",
            "the last message is the assistant's answer; add the user's next message",
        ));
    }
    if steps_in_turn(messages) >= step_limit {
        return Ok(Action::StopTurn);
    }
    if last.role == ChatRole::User {
        return Ok(Action::CallModel);
    }
    Ok(match first_unanswered(messages) {
        Some(call) => Action::RunTool(call),
        None => Action::CallModel,
    })
}

/// The first call of the last assistant message that no later `tool`
/// message answers.
fn first_unanswered(messages: &[ChatMessage]) -> Option<&ToolCall> {
    let at = messages
        .iter()
        .rposition(|m| m.role == ChatRole::Assistant)?;
    let answered = |id: &str| {
        messages[at + 1..]
            .iter()
            .any(|m| m.tool_call_id.as_deref() == Some(id))
    };
    messages[at].calls().iter().find(|c| !answered(&c.id))
}

/// Whether a step that added `added` completed the turn: only the
/// assistant's answer with no tool calls does.
pub fn is_complete(added: &ChatMessage) -> bool {
    added.role == ChatRole::Assistant && added.calls().is_empty()
}

/// The assistant message that ends a turn at its step limit.
pub fn stop_message(step_limit: usize) -> ChatMessage {
    ChatMessage::text(
        ChatRole::Assistant,
        format!(
            "I stopped after {step_limit} steps without finishing. The changes made so far are saved; say \"continue\" to let me go on, or tell me what to do instead."
        ),
    )
}

/// The history as a model must see it: every tool call answered. A call
/// left unanswered (the turn was stopped, or the user sent a new message
/// first) gets a `tool` message saying it was not run, right after the
/// answers it has, since chat-completions APIs refuse a history with
/// unanswered calls.
pub fn model_history(messages: &[ChatMessage]) -> Vec<ChatMessage> {
    let mut out = Vec::with_capacity(messages.len());
    let mut i = 0;
    while i < messages.len() {
        let m = &messages[i];
        out.push(m.clone());
        i += 1;
        if m.role != ChatRole::Assistant || m.calls().is_empty() {
            continue;
        }
        let mut answered = Vec::new();
        while i < messages.len() && messages[i].role == ChatRole::Tool {
            answered.extend(messages[i].tool_call_id.clone());
            out.push(messages[i].clone());
            i += 1;
        }
        let last = i == messages.len();
        for call in m.calls() {
            if !answered.contains(&call.id) && !last {
                out.push(ChatMessage::tool_result(
                    &call.id,
                    "Not run: the turn ended before this call.",
                ));
            }
        }
    }
    out
}

/// Reads a model's reply message (`choices[0].message` of a
/// chat-completions answer) as the assistant's next message; why not when
/// a tool call cannot be used (no id or name, arguments that are not a
/// JSON object).
pub fn read_reply(message: &Value) -> Result<ChatMessage, String> {
    let content = match message.get("content") {
        None | Some(Value::Null) => String::new(),
        Some(Value::String(s)) => s.clone(),
        Some(other) => other.to_string(),
    };
    let mut calls = Vec::new();
    if let Some(raw) = message.get("tool_calls").filter(|v| !v.is_null()) {
        let list = raw
            .as_array()
            .ok_or("`tool_calls` is not a list".to_owned())?;
        if list.len() > MAX_TOOL_CALLS {
            return Err(format!(
                "it asked for {} tool calls at once (at most {MAX_TOOL_CALLS})",
                list.len()
            ));
        }
        for (i, call) in list.iter().enumerate() {
            let id = call.get("id").and_then(Value::as_str).unwrap_or_default();
            let name = call
                .pointer("/function/name")
                .and_then(Value::as_str)
                .unwrap_or_default();
            if id.is_empty() || id.chars().count() > MAX_NAME_CHARS {
                return Err(format!("tool call {} has no usable id", i + 1));
            }
            if name.is_empty() || name.chars().count() > MAX_NAME_CHARS {
                return Err(format!("tool call {} names no tool", i + 1));
            }
            let arguments = match call.pointer("/function/arguments") {
                None | Some(Value::Null) => "{}".to_owned(),
                Some(Value::String(s)) if s.trim().is_empty() => "{}".to_owned(),
                Some(Value::String(s)) => s.clone(),
                Some(other) => other.to_string(),
            };
            if arguments.chars().count() > MAX_CONTENT_CHARS {
                return Err(format!("the arguments of `{name}` are too long"));
            }
            if !matches!(
                serde_json::from_str::<Value>(&arguments),
                Ok(Value::Object(_))
            ) {
                return Err(format!(
                    "the arguments of `{name}` are not a JSON object: {}",
                    crate::domain::limits::excerpt(&arguments)
                ));
            }
            calls.push(ToolCall {
                id: id.to_owned(),
                kind: function(),
                function: FunctionCall {
                    name: name.to_owned(),
                    arguments,
                },
            });
        }
    }
    Ok(ChatMessage {
        role: ChatRole::Assistant,
        content: cut(content),
        tool_calls: (!calls.is_empty()).then_some(calls),
        tool_call_id: None,
    })
}
