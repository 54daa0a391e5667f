//! The workflow-editing chat, one action per request: the shapes of
//! `POST /api/workflows/{id}/chat/step` (OpenAI-style messages, so a
//! history goes to any chat-completions model as it is), the checks a
//! history must pass, and the rule that decides the one thing a step does
//! — call the model, run one tool call, or stop the turn.
//!
//! Pure: the server supplies the model's answer and the tool's result; the
//! decision, the completion rule and the step limit live here, where they
//! are unit-tested without a model.

use serde::{Deserialize, Deserializer, Serialize};
use serde_json::Value;

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
/// Steps (model answers and tool results) one turn may take before it is
/// stopped, unless configured otherwise.
pub const DEFAULT_STEP_LIMIT: usize = 12;

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

fn function() -> String {
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
fn cut(text: String) -> String {
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

/// A history refused: the field (`messages[3].tool_call_id`) and why.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ChatProblem {
    /// The field, as a JSON path.
    pub field: String,
    /// Why, in words.
    pub message: String,
}

fn problem(field: impl Into<String>, message: impl Into<String>) -> ChatProblem {
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

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;
    use serde_json::json;

    fn user(text: &str) -> ChatMessage {
        ChatMessage::text(ChatRole::User, text)
    }

    fn answer(text: &str) -> ChatMessage {
        ChatMessage::text(ChatRole::Assistant, text)
    }

    fn calling(ids: &[&str]) -> ChatMessage {
        ChatMessage {
            role: ChatRole::Assistant,
            content: String::new(),
            tool_calls: Some(
                ids.iter()
                    .map(|id| ToolCall {
                        id: (*id).into(),
                        kind: function(),
                        function: FunctionCall {
                            name: "add_step".into(),
                            arguments: "{}".into(),
                        },
                    })
                    .collect(),
            ),
            tool_call_id: None,
        }
    }

    fn result(id: &str) -> ChatMessage {
        ChatMessage::tool_result(id, "{}")
    }

    fn request(messages: Vec<ChatMessage>) -> ChatRequest {
        ChatRequest {
            conversation_id: "c0ffee00-0000-4000-8000-000000000000".into(),
            messages,
        }
    }

    #[test]
    fn the_user_speaking_calls_the_model() {
        let h = vec![user("add a step")];
        assert_eq!(next_action(&h, 12), Ok(Action::CallModel));
    }

    #[test]
    fn tool_calls_run_one_at_a_time_in_order_then_the_model_is_asked() {
        let mut h = vec![user("x"), calling(&["a", "b"])];
        assert!(matches!(next_action(&h, 12), Ok(Action::RunTool(c)) if c.id == "a"));
        h.push(result("a"));
        assert!(matches!(next_action(&h, 12), Ok(Action::RunTool(c)) if c.id == "b"));
        h.push(result("b"));
        assert_eq!(next_action(&h, 12), Ok(Action::CallModel));
    }

    #[test]
    fn an_answered_turn_waits_for_the_user() {
        let h = vec![user("x"), answer("done")];
        let err = next_action(&h, 12).unwrap_err();
        assert_eq!(err.field, "messages");
        assert!(err.message.contains("user's next message"));
    }

    #[test]
    fn the_step_limit_stops_a_turn_and_counts_only_this_turn() {
        let mut h = vec![user("x")];
        for i in 0..6 {
            h.push(calling(&[&format!("c{i}")]));
            h.push(result(&format!("c{i}")));
        }
        assert_eq!(steps_in_turn(&h), 12);
        assert_eq!(next_action(&h, 12), Ok(Action::StopTurn));
        assert_eq!(next_action(&h, 13), Ok(Action::CallModel));
        h.push(stop_message(12));
        h.push(user("continue"));
        assert_eq!(steps_in_turn(&h), 0);
        assert_eq!(next_action(&h, 12), Ok(Action::CallModel));
    }

    #[test]
    fn only_an_answer_without_calls_completes_a_turn() {
        assert!(is_complete(&answer("done")));
        assert!(is_complete(&stop_message(12)));
        assert!(!is_complete(&calling(&["a"])));
        assert!(!is_complete(&result("a")));
        assert!(!is_complete(&user("x")));
    }

    #[test]
    fn a_history_is_checked_naming_the_field() {
        let bad_id = ChatRequest {
            conversation_id: "has space".into(),
            messages: vec![user("x")],
        };
        assert_eq!(check(&bad_id).unwrap_err().field, "conversation_id");
        assert_eq!(check(&request(vec![])).unwrap_err().field, "messages");
        let stray = request(vec![user("x"), result("zzz")]);
        assert_eq!(check(&stray).unwrap_err().field, "messages[1].tool_call_id");
        let twice = request(vec![user("x"), calling(&["a"]), result("a"), result("a")]);
        assert_eq!(check(&twice).unwrap_err().field, "messages[3].tool_call_id");
        let dup = request(vec![user("x"), calling(&["a", "a"])]);
        assert_eq!(
            check(&dup).unwrap_err().field,
            "messages[1].tool_calls[1].id"
        );
        let long = request(vec![user(&"x".repeat(MAX_CONTENT_CHARS + 1))]);
        assert_eq!(check(&long).unwrap_err().field, "messages[0].content");
        let ok = request(vec![
            user("x"),
            calling(&["a", "b"]),
            result("b"),
            result("a"),
        ]);
        assert_eq!(check(&ok), Ok(()));
    }

    #[test]
    fn unanswered_calls_are_answered_for_the_model_but_pending_ones_are_not() {
        let h = vec![user("x"), calling(&["a", "b"]), result("a"), user("stop")];
        let seen = model_history(&h);
        assert_eq!(seen.len(), 5);
        assert_eq!(seen[3].tool_call_id.as_deref(), Some("b"));
        assert_eq!(seen[4].role, ChatRole::User);
        let pending = vec![user("x"), calling(&["a", "b"]), result("a")];
        assert_eq!(model_history(&pending), pending);
    }

    #[test]
    fn replies_are_read_and_bad_tool_calls_refused_in_words() {
        let ok = read_reply(&json!({"role": "assistant", "content": null, "tool_calls": [
            {"id": "call_1", "type": "function", "function": {"name": "add_step", "arguments": "{\"name\":\"x\"}"}}
        ]}))
        .unwrap();
        assert_eq!(ok.calls()[0].function.name, "add_step");
        assert_eq!(ok.content, "");
        let empty_args = read_reply(&json!({"tool_calls": [
            {"id": "c", "function": {"name": "list_available_triggers", "arguments": ""}}
        ]}))
        .unwrap();
        assert_eq!(empty_args.calls()[0].function.arguments, "{}");
        let text = read_reply(&json!({"content": "Done."})).unwrap();
        assert!(is_complete(&text));
        let broken = read_reply(&json!({"tool_calls": [
            {"id": "c", "function": {"name": "add_step", "arguments": "{not json"}}
        ]}))
        .unwrap_err();
        assert!(broken.contains("not a JSON object"), "{broken}");
        assert!(
            read_reply(&json!({"tool_calls": [{"id": "c", "function": {}}]}))
                .unwrap_err()
                .contains("names no tool")
        );
        assert!(read_reply(&json!({"tool_calls": "x"})).is_err());
    }

    #[test]
    fn long_tool_results_are_cut() {
        let m = ChatMessage::tool_result("a", "y".repeat(MAX_CONTENT_CHARS * 2));
        assert!(m.content.chars().count() <= MAX_CONTENT_CHARS);
        assert!(m.content.ends_with("(cut: too long)"));
    }

    #[test]
    fn messages_read_null_content_and_write_openai_shapes() {
        let m: ChatMessage =
            serde_json::from_value(json!({"role": "assistant", "content": null, "tool_calls": [
                {"id": "a", "type": "function", "function": {"name": "n", "arguments": "{}"}}
            ]}))
            .unwrap();
        assert_eq!(m.content, "");
        let back = serde_json::to_value(&m).unwrap();
        assert_eq!(back["tool_calls"][0]["type"], "function");
        assert!(back.get("tool_call_id").is_none());
    }

    fn any_message() -> impl Strategy<Value = ChatMessage> {
        prop_oneof![
            "[a-z]{0,5}".prop_map(|t| user(&t)),
            "[a-z]{0,5}".prop_map(|t| answer(&t)),
            proptest::collection::vec("[abc]", 1..3).prop_map(|ids| {
                let ids: Vec<&str> = ids.iter().map(String::as_str).collect();
                calling(&ids)
            }),
            "[abc]".prop_map(|id| result(&id)),
        ]
    }

    proptest! {
        /// Whatever history arrives, deciding never panics, a checked
        /// history that ends in a tool call gets that call run or the
        /// model asked, and the model's view answers every finished call.
        #[test]
        fn any_history_gets_a_decision_or_a_named_refusal(h in proptest::collection::vec(any_message(), 0..12), limit in 1usize..20) {
            let req = request(h.clone());
            let checked = check(&req);
            let action = next_action(&h, limit);
            if checked.is_ok() {
                if let Ok(Action::RunTool(call)) = &action {
                    prop_assert!(h.iter().rev().find(|m| m.role == ChatRole::Assistant).unwrap().calls().contains(call));
                }
                let seen = model_history(&h);
                prop_assert!(seen.len() >= h.len());
            }
            if let Err(p) = action {
                prop_assert!(!p.field.is_empty());
            }
        }
    }
}
