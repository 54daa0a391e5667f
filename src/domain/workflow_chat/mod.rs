//! The workflow-editing chat, one action per request: the shapes of
//! `POST /api/workflows/{id}/chat/step` (OpenAI-style messages, so a
//! history goes to any chat-completions model as it is), the checks a
//! history must pass, and the rule that decides the one thing a step does
//! — call the model, run one tool call, or stop the turn.
//!
//! Pure: the server supplies the model's answer and the tool's result; the
//! decision, the completion rule and the step limit live here, where they
//! are unit-tested without a model.

mod check;
mod messages;
mod turn;

pub use check::*;
pub use messages::*;
pub use turn::*;

#[cfg(test)]
mod tests {
    use super::messages::function;
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
