//! Property tests for the request parsers: whatever bytes arrive as a
//! tool-call body, a bindings document or a lesson draft, parsing and the
//! checks after it return a value or an error — they never panic.
//!
//! Two generators: raw bytes (what an attacker sends) and JSON-shaped text
//! built from the documents' own keys (what reaches the deeper checks).

use crate::domain::bindings::ToolBindings;
use crate::domain::lesson::LessonDraft;
use crate::server::agent::sessions::check_call_size;
use crate::server::seed::catalogue::{demo_catalogue, demo_workflows};
use proptest::prelude::*;
use serde_json::Value;
use std::collections::HashSet;

/// JSON-ish text from the documents' vocabulary, nested and broken at random.
fn jsonish() -> impl Strategy<Value = String> {
    let token = prop_oneof![
        Just("{".to_owned()),
        Just("}".to_owned()),
        Just("[".to_owned()),
        Just("]".to_owned()),
        Just(",".to_owned()),
        Just(":".to_owned()),
        Just("null".to_owned()),
        Just("true".to_owned()),
        Just("-1e309".to_owned()),
        Just("\"\\ud800\"".to_owned()),
        prop::sample::select(vec![
            "\"name\"",
            "\"arguments\"",
            "\"global\"",
            "\"workflows\"",
            "\"idv\"",
            "\"title\"",
            "\"conversationPrompt\"",
            "\"tasks\"",
            "\"toolConfiguration\"",
            "\"tools\"",
            "\"toolId\"",
            "\"enabled\"",
            "\"trigger\"",
            "\"durationMinutes\"",
            "\"level\"",
            "\"A2\"",
            "\"start_workflow\"",
            "\"check_balance\"",
            "\"id\"",
            "\"text\"",
            "\"preset\"",
            "\"keywords\"",
        ])
        .prop_map(str::to_owned),
        "\"[a-zA-Z0-9_ ]{0,12}\"",
        "-?[0-9]{1,20}",
    ];
    prop::collection::vec(token, 0..64).prop_map(|t| t.join(""))
}

fn check_body(bytes: &[u8]) {
    #[derive(serde::Deserialize)]
    struct CallBody {
        name: String,
        #[serde(default)]
        arguments: Value,
    }
    if let Ok(body) = serde_json::from_slice::<CallBody>(bytes) {
        let _ = check_call_size(&body.name, &body.arguments);
    }
    if let Ok(doc) = serde_json::from_slice::<ToolBindings>(bytes) {
        let tools: HashSet<String> = demo_catalogue().iter().map(|t| t.id.to_string()).collect();
        let workflows: HashSet<String> =
            demo_workflows().iter().map(|w| w.id.to_string()).collect();
        let _ = doc.validate(&tools, &workflows);
    }
    if let Ok(draft) = serde_json::from_slice::<LessonDraft>(bytes) {
        if draft.problems().is_empty() {
            let _ = crate::domain::lesson::prompt::build(&draft.prompt_input(None));
        }
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(2_000))]

    #[test]
    fn arbitrary_bytes_never_panic_a_parser(bytes in prop::collection::vec(any::<u8>(), 0..512)) {
        check_body(&bytes);
    }

    #[test]
    fn json_shaped_text_never_panics_a_parser_or_its_checks(text in jsonish()) {
        check_body(text.as_bytes());
    }

    #[test]
    fn well_formed_documents_with_arbitrary_contents_never_panic(
        global in prop::collection::vec("[a-z_\\-]{0,12}|.{0,70}", 0..12),
        workflows in prop::collection::btree_map("[a-z\\-]{0,10}|.{0,8}", prop::collection::vec("[a-z_]{0,12}", 0..8), 0..6),
        name in ".{0,80}",
        arguments in prop::collection::btree_map(".{0,8}", ".{0,40}", 0..6),
    ) {
        let bindings = serde_json::json!({"global": global, "workflows": workflows});
        check_body(bindings.to_string().as_bytes());
        let call = serde_json::json!({"name": name, "arguments": arguments});
        check_body(call.to_string().as_bytes());
    }

    #[test]
    fn lesson_drafts_with_arbitrary_fields_never_panic_validation_or_the_builder(
        title in ".{0,200}",
        prompt in ".{0,400}",
        minutes in any::<i64>(),
        tasks in prop::collection::vec((".{0,20}", ".{0,60}"), 0..6),
    ) {
        let mut draft = serde_json::to_value(LessonDraft::new("base")).unwrap();
        draft["title"] = title.into();
        draft["conversationPrompt"] = prompt.into();
        draft["durationMinutes"] = minutes.into();
        draft["tasks"] = tasks
            .into_iter()
            .map(|(id, text)| serde_json::json!({"id": id, "text": text}))
            .collect();
        check_body(draft.to_string().as_bytes());
    }
}
