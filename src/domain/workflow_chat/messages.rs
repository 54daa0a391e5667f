//! The chat's messages in OpenAI's chat-completions shape (what the page
//! sends and the model answers), with the limits that bound them.

use serde::{Deserialize, Deserializer, Serialize};

/// Most messages one conversation may carry in a request.
pub const MAX_MESSAGES: usize = 200;

/// Longest message content, in characters (a tool result is cut to this).
pub const MAX_CONTENT_CHARS: usize = 64 * 1024;

/// Most tool calls one assistant message may ask for.
pub const MAX_TOOL_CALLS: usize = 16;

/// Longest conversation id, in characters.
pub const MAX_CONVERSATION_ID_CHARS: usize = 64;

/// Longest tool name or tool call id, in characters.
pub const MAX_NAME_CHARS: usize = 128;

/// Largest chat-step request body (a long conversation with tool results).
pub const CHAT_BODY_MAX_BYTES: usize = 4 * 1024 * 1024;

/// Who said a message.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum ChatRole {
    /// The admin.
    User,
    /// The model.
    Assistant,
    /// A tool's result, answering one of the assistant's tool calls.
    Tool,
}

/// The function a tool call names, with its arguments as a JSON string
/// (as chat-completions models send them).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct FunctionCall {
    /// The tool's name.
    pub name: String,
    /// Its arguments: a JSON object, serialised.
    #[serde(default, deserialize_with = "nullable")]
    pub arguments: String,
}

/// One tool call the assistant asked for.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ToolCall {
    /// Its id; the `tool` message answering it carries the same.
    pub id: String,
    /// Always `function`.
    #[serde(rename = "type", default = "function")]
    pub kind: String,
    /// What to call.
    pub function: FunctionCall,
}

pub(super) fn function() -> String {
    "function".into()
}

/// One message of the conversation.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ChatMessage {
    /// Who said it.
    pub role: ChatRole,
    /// What was said (empty for an assistant message that only calls
    /// tools; `null` is read as empty).
    #[serde(default, deserialize_with = "nullable")]
    pub content: String,
    /// The tools the assistant asks to call.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tool_calls: Option<Vec<ToolCall>>,
    /// The call a `tool` message answers.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tool_call_id: Option<String>,
}

fn nullable<'de, D: Deserializer<'de>>(d: D) -> Result<String, D::Error> {
    Ok(Option::<String>::deserialize(d)?.unwrap_or_default())
}

impl ChatMessage {
    /// A plain message from `role`.
    pub fn text(role: ChatRole, content: impl Into<String>) -> Self {
        Self {
            role,
            content: content.into(),
            tool_calls: None,
            tool_call_id: None,
        }
    }

    /// The tool's answer to call `id`.
    pub fn tool_result(id: &str, content: impl Into<String>) -> Self {
        Self {
            role: ChatRole::Tool,
            content: cut(content.into()),
            tool_calls: None,
            tool_call_id: Some(id.to_owned()),
        }
    }

    /// The calls this message asks for (none for most).
    pub fn calls(&self) -> &[ToolCall] {
        self.tool_calls.as_deref().unwrap_or_default()
    }
}

/// Cuts `text` to [`MAX_CONTENT_CHARS`], saying so at the end.
pub(super) fn cut(text: String) -> String {
    if text.chars().count() <= MAX_CONTENT_CHARS {
        return text;
    }
    let mut kept: String = text.chars().take(MAX_CONTENT_CHARS - 20).collect();
    kept.push_str(" … (cut: too long)");
    kept
}

/// `POST /api/workflows/{id}/chat/step`'s body.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ChatRequest {
    /// The conversation (a UUID the chat panel makes).
    pub conversation_id: String,
    /// The whole history so far, oldest first.
    pub messages: Vec<ChatMessage>,
}

/// Its answer: the history with the one new message appended.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ChatResponse {
    /// The conversation, as sent.
    pub conversation_id: String,
    /// The history with the new message at the end.
    pub messages: Vec<ChatMessage>,
    /// The new message is the assistant's answer with no tool calls: the
    /// turn is over and the user may speak.
    pub is_complete: bool,
    /// This step changed the workflow (the page refreshes its definition).
    pub workflow_updated: bool,
}
