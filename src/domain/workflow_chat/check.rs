//! A chat request checked before anything runs: the first rule it breaks,
//! naming the field.

use super::messages::{
    ChatMessage, ChatRequest, ChatRole, MAX_CONTENT_CHARS, MAX_CONVERSATION_ID_CHARS, MAX_MESSAGES,
    MAX_NAME_CHARS, MAX_TOOL_CALLS,
};

/// A history refused: the field (`messages[3].tool_call_id`) and why.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ChatProblem {
    /// The field, as a JSON path.
    pub field: String,
    /// Why, in words.
    pub message: String,
}

pub(super) fn problem(field: impl Into<String>, message: impl Into<String>) -> ChatProblem {
    ChatProblem {
        field: field.into(),
        message: message.into(),
    }
}

/// Checks a request: its conversation id, its size, and that every `tool`
/// message answers a call of the assistant message before it, once.
pub fn check(request: &ChatRequest) -> Result<(), ChatProblem> {
    let id = &request.conversation_id;
    if id.is_empty()
        || id.chars().count() > MAX_CONVERSATION_ID_CHARS
        || !id
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '-' || c == '_')
    {
        return Err(problem(
            "conversation_id",
            format!("must be 1-{MAX_CONVERSATION_ID_CHARS} letters, digits, '-' or '_' (a UUID)"),
        ));
    }
    check_messages(&request.messages)
}

/// Checks a history on its own (the agent runner's requests have no
/// conversation id): its size, and that every `tool` message answers a call
/// of the assistant message before it, once.
pub fn check_messages(messages: &[ChatMessage]) -> Result<(), ChatProblem> {
    if messages.is_empty() {
        return Err(problem("messages", "must hold at least the user's message"));
    }
    if messages.len() > MAX_MESSAGES {
        return Err(problem(
            "messages",
            format!("at most {MAX_MESSAGES} messages; start a new conversation"),
        ));
    }
    let mut open: Vec<&str> = Vec::new();
    for (i, m) in messages.iter().enumerate() {
        let at = |field: &str| format!("messages[{i}].{field}");
        if m.content.chars().count() > MAX_CONTENT_CHARS {
            return Err(problem(
                at("content"),
                format!("at most {MAX_CONTENT_CHARS} characters"),
            ));
        }
        match m.role {
            ChatRole::User => {
                if m.tool_calls.is_some() || m.tool_call_id.is_some() {
                    return Err(problem(
                        at("role"),
                        "a user message has no tool_calls or tool_call_id",
                    ));
                }
                open.clear();
            }
            ChatRole::Assistant => {
                if m.tool_call_id.is_some() {
                    return Err(problem(
                        at("tool_call_id"),
                        "only a tool message answers a call",
                    ));
                }
                let calls = m.calls();
                if calls.len() > MAX_TOOL_CALLS {
                    return Err(problem(
                        at("tool_calls"),
                        format!("at most {MAX_TOOL_CALLS} calls in one message"),
                    ));
                }
                for (j, call) in calls.iter().enumerate() {
                    let field = |f: &str| format!("messages[{i}].tool_calls[{j}].{f}");
                    if call.id.is_empty() || call.id.chars().count() > MAX_NAME_CHARS {
                        return Err(problem(
                            field("id"),
                            format!("must be 1-{MAX_NAME_CHARS} characters"),
                        ));
                    }
                    if calls[..j].iter().any(|c| c.id == call.id) {
                        return Err(problem(field("id"), "is used twice in this message"));
                    }
                    if call.function.name.chars().count() > MAX_NAME_CHARS {
                        return Err(problem(
                            field("function.name"),
                            format!("at most {MAX_NAME_CHARS} characters"),
                        ));
                    }
                    if call.function.arguments.chars().count() > MAX_CONTENT_CHARS {
                        return Err(problem(
                            field("function.arguments"),
                            format!("at most {MAX_CONTENT_CHARS} characters"),
                        ));
                    }
                }
                open = calls.iter().map(|c| c.id.as_str()).collect();
            }
            ChatRole::Tool => {
                let Some(answers) = m.tool_call_id.as_deref() else {
                    return Err(problem(
                        at("tool_call_id"),
                        "a tool message names the call it answers",
                    ));
                };
                let Some(k) = open.iter().position(|id| *id == answers) else {
                    return Err(problem(
                        at("tool_call_id"),
                        "answers no open tool call of the assistant message before it",
                    ));
                };
                open.remove(k);
            }
        }
    }
    Ok(())
}
