//! The todo tools of the Todo Assistant vibe (issue #12), with the
//! contracts of the seed they come from (seed 003, issue #36): their
//! catalogue entries, their limits, and the pure half of running them —
//! parsing a call's arguments into a typed command, finding the todo a
//! text means, and wording the answers the model reads back.
//!
//! The seed's tools take words, not ids: `createTodo {todoText, tags?,
//! listName?}`, `toggleTodo {todoText}`, `updateTodo {oldText, newText}`,
//! `removeTodo {todoText}`, `filterTodos {tag}`, `createList {listName}`,
//! `switchList {listName}`. Every answer has the seed's shape: success is
//! `{"success": true, "message", "toolResultText", …}` (the todo or list it
//! acted on beside), failure `{"success": false, "error",
//! "toolResultText"}`; `toolResultText` is what a voice agent says.
//!
//! Switchboard runs these tools itself on per-session lists kept in SQLite
//! (`server::agent::execute::todos`). Everything that needs no database
//! lives here, so it is tested without one and the limits the model is
//! told (in the schemas) are the limits enforced.
//!
//! Read leaf first: `limits`, `tools` (the catalogue entries), `outcome`
//! (a todo, the answers' shapes), `text` (the words a call names things
//! with), `command` (a call parsed), `answer` (what the model reads back).

mod answer;
mod command;
mod limits;
mod outcome;
mod text;
mod tools;
pub use answer::*;
pub use command::*;
pub use limits::*;
pub use outcome::*;
pub use text::*;
pub use tools::*;

#[cfg(test)]
mod tests {
    use super::*;
    use crate::domain::limits::TOOL_RESULT_MAX_BYTES;
    use proptest::prelude::*;
    use serde_json::{json, Map, Value};

    fn todo(id: i64, text: &str, done: bool, list: &str) -> Todo {
        Todo {
            id,
            text: text.into(),
            done,
            tags: vec![],
            list: list.into(),
        }
    }

    fn find(text: &str) -> TodoMatch {
        TodoMatch::parse("todoText", text).unwrap()
    }

    #[test]
    fn the_catalogue_entries_are_the_seven_tools_with_the_seeds_parameters() {
        let tools = todo_tools();
        let ids: Vec<&str> = tools.iter().map(|t| t.id.as_str()).collect();
        assert_eq!(ids, TOOL_IDS);
        let parameters: Vec<Vec<&str>> = tools
            .iter()
            .map(|t| {
                t.parameters["properties"]
                    .as_object()
                    .unwrap()
                    .keys()
                    .map(String::as_str)
                    .collect()
            })
            .collect();
        // The seed's parameter names (serde_json sorts the keys).
        assert_eq!(
            parameters,
            [
                vec!["listName", "tags", "todoText"],
                vec!["todoText"],
                vec!["newText", "oldText"],
                vec!["todoText"],
                vec!["tag"],
                vec!["listName"],
                vec!["listName"],
            ]
        );
        for t in &tools {
            assert!(t.problems().is_empty(), "{}: {:?}", t.id, t.problems());
            assert_eq!(t.category, TODO_CATEGORY);
            assert_eq!(t.parameters["additionalProperties"], false, "{}", t.id);
            // Every property the schema declares is one the parser takes.
            let all: Map<String, Value> = t.parameters["properties"]
                .as_object()
                .unwrap()
                .keys()
                .map(|k| (k.clone(), Value::Null))
                .collect();
            let problem = TodoCommand::parse(t.id.as_str(), &Value::Object(all))
                .err()
                .unwrap_or_default();
            assert!(!problem.contains("unknown argument"), "{problem}");
        }
        assert_eq!(tools[0].parameters["required"], json!(["todoText"]));
        assert_eq!(
            tools[0].parameters["properties"]["todoText"]["maxLength"],
            TODO_TEXT_MAX_CHARS
        );
    }

    #[test]
    fn every_tool_parses_the_seeds_arguments() {
        let text = |s: &str| TodoText(s.into());
        let cases = [
            (
                "createTodo",
                json!({"todoText": "  Buy\n milk ", "tags": "work, urgent,,Work", "listName": "Groceries"}),
                TodoCommand::CreateTodo {
                    text: text("Buy milk"),
                    tags: Tags(vec!["work".into(), "urgent".into()]),
                    list: Some(ListName("Groceries".into())),
                },
            ),
            (
                "createTodo",
                json!({"todoText": "Call Sam", "listName": null}),
                TodoCommand::CreateTodo {
                    text: text("Call Sam"),
                    tags: Tags::default(),
                    list: None,
                },
            ),
            (
                "toggleTodo",
                json!({"todoText": "milk"}),
                TodoCommand::ToggleTodo { todo: find("milk") },
            ),
            (
                "updateTodo",
                json!({"oldText": "milk", "newText": "Buy oat milk"}),
                TodoCommand::UpdateTodo {
                    todo: find("milk"),
                    text: text("Buy oat milk"),
                },
            ),
            (
                "removeTodo",
                json!({"todoText": "rent"}),
                TodoCommand::RemoveTodo { todo: find("rent") },
            ),
            (
                "filterTodos",
                json!({"tag": "ALL"}),
                TodoCommand::FilterTodos(TagFilter::All),
            ),
            (
                "filterTodos",
                json!({"tag": " work "}),
                TodoCommand::FilterTodos(TagFilter::Tag("work".into())),
            ),
            (
                "createList",
                json!({"listName": "Work"}),
                TodoCommand::CreateList {
                    name: ListName("Work".into()),
                },
            ),
            (
                "switchList",
                json!({"listName": "work"}),
                TodoCommand::SwitchList {
                    name: ListName("work".into()),
                },
            ),
        ];
        for (tool, arguments, expected) in cases {
            assert_eq!(TodoCommand::parse(tool, &arguments), Ok(expected), "{tool}");
        }
    }

    #[test]
    fn bad_arguments_are_refused_naming_the_argument() {
        let long = "x".repeat(TODO_TEXT_MAX_CHARS + 1);
        let cases = [
            ("createTodo", json!({}), "`todoText` is required"),
            (
                "createTodo",
                json!({"todoText": "  \n "}),
                "`todoText` must not be empty",
            ),
            (
                "createTodo",
                json!({"todoText": 5}),
                "`todoText` must be a string",
            ),
            (
                "createTodo",
                json!({"todoText": "a\u{1b}b"}),
                "`todoText` must not contain control characters",
            ),
            (
                "createTodo",
                json!({"todoText": long}),
                "`todoText` is 201 characters long; at most 200 are allowed",
            ),
            (
                "createTodo",
                json!({"todoText": "a", "listName": "ü".repeat(41)}),
                "`listName` is 41 characters long; at most 40 are allowed",
            ),
            (
                "createTodo",
                json!({"todoText": "a", "tags": "a,b,c,d,e,f"}),
                "`tags` names 6 tags; at most 5 are allowed",
            ),
            (
                "createTodo",
                json!({"todoText": "a", "tags": "x".repeat(17)}),
                "each of `tags` must be one line of at most 16 characters",
            ),
            (
                "createTodo",
                json!({"todoText": "a", "tags": "x,".repeat(51)}),
                "`tags` is 102 characters long; at most 100 are allowed",
            ),
            (
                "createTodo",
                json!({"text": "a"}),
                "unknown argument `text`; it takes todoText, tags, listName",
            ),
            (
                "createTodo",
                json!(["a"]),
                "the arguments must be a JSON object",
            ),
            ("toggleTodo", json!({}), "`todoText` is required"),
            (
                "toggleTodo",
                json!({"todoId": 1}),
                "unknown argument `todoId`; it takes todoText",
            ),
            (
                "removeTodo",
                json!({"todoText": ""}),
                "`todoText` must not be empty",
            ),
            (
                "updateTodo",
                json!({"oldText": "a"}),
                "`newText` is required",
            ),
            (
                "updateTodo",
                json!({"newText": "a"}),
                "`oldText` is required",
            ),
            ("filterTodos", json!({}), "`tag` is required"),
            (
                "filterTodos",
                json!({"tag": "t".repeat(17)}),
                "`tag` is 17 characters long",
            ),
            (
                "createList",
                json!({"listName": ""}),
                "`listName` must not be empty",
            ),
            (
                "switchList",
                json!({"name": "Work"}),
                "unknown argument `name`; it takes listName",
            ),
        ];
        for (tool, arguments, expected) in cases {
            let reason = TodoCommand::parse(tool, &arguments).unwrap_err();
            let prefix = format!("invalid arguments for `{tool}`: ");
            assert!(reason.starts_with(&prefix), "{reason}");
            assert!(reason[prefix.len()..].starts_with(expected), "{reason}");
        }
        assert_eq!(
            TodoCommand::parse("check_balance", &json!({})).unwrap_err(),
            "`check_balance` is not a todo tool"
        );
        let failure =
            invalid_arguments("invalid arguments for `createTodo`: `todoText` is required");
        assert_eq!(
            failure.answer(),
            json!({
                "success": false,
                "error": "invalid arguments for `createTodo`: `todoText` is required",
                "toolResultText": "Sorry, I couldn't do that: todoText is required."
            })
        );
    }

    #[test]
    fn a_text_means_one_todo_the_whole_text_first_then_the_active_list() {
        let todos = [
            todo(1, "Buy milk", false, "Inbox"),
            todo(2, "Buy milk and eggs", false, "Inbox"),
            todo(3, "Call Sam", false, "Inbox"),
            todo(4, "Call Sam", false, "Work"),
            todo(5, "Pay rent", false, "Work"),
        ];
        let id = |text: &str, active: &str| find(text).pick(&todos, active).map(|t| t.id);
        assert_eq!(id("RENT", "Inbox"), Ok(5), "any case, any list");
        assert_eq!(id("buy milk", "Inbox"), Ok(1), "the whole text wins");
        assert_eq!(id("eggs", "Inbox"), Ok(2));
        assert_eq!(id("call sam", "Work"), Ok(4), "the active list wins");
        let several = find("milk").pick(&todos, "Inbox").unwrap_err();
        assert_eq!(
            several.error,
            "\"milk\" matches 2 todos: \"Buy milk\" (Inbox), \"Buy milk and eggs\" (Inbox)"
        );
        assert!(several
            .spoken
            .contains("\"Buy milk\", \"Buy milk and eggs\""));
        let sam = find("Sam").pick(&todos, "Groceries").unwrap_err();
        assert!(
            sam.error.starts_with("\"Sam\" matches 2 todos"),
            "{}",
            sam.error
        );
        let none = find("bread").pick(&todos, "Inbox").unwrap_err();
        assert_eq!(none.error, "no todo matches \"bread\"");
        assert_eq!(
            find("x").pick(&[], "Inbox").unwrap_err().error,
            "no todo matches \"x\""
        );
    }

    #[test]
    fn tags_filter_in_any_case_and_all_shows_everything() {
        let mut work = todo(1, "Send report", false, "Inbox");
        work.tags = vec!["Work".into(), "urgent".into()];
        let home = todo(2, "Water plants", true, "Inbox");
        let todos = [work.clone(), home];
        let kept = |tag: &str| {
            let answer = listing("Inbox", &TagFilter::parse(tag).unwrap(), &todos);
            answer["todos"]
                .as_array()
                .unwrap()
                .iter()
                .map(|t| t["id"].as_i64().unwrap())
                .collect::<Vec<_>>()
        };
        assert_eq!(kept("work"), [1]);
        assert_eq!(kept("URGENT"), [1]);
        assert_eq!(kept("all"), [1, 2]);
        assert_eq!(kept("home"), Vec::<i64>::new());
        let answer = listing("Inbox", &TagFilter::parse("work").unwrap(), &todos);
        assert_eq!(
            answer,
            json!({
                "success": true,
                "message": "Filtered todos on Inbox by tag \"work\": 1 of 2.",
                "toolResultText": "I've filtered your Inbox list to the todos tagged \"work\": 1 todo.",
                "list": "Inbox",
                "tag": "work",
                "count": 1,
                "todos": [{"id": 1, "text": "Send report", "done": false, "tags": ["Work", "urgent"]}]
            })
        );
    }

    #[test]
    fn answers_have_the_seeds_shape() {
        let mut milk = todo(4, "Buy milk", false, "Inbox");
        milk.tags = vec!["shop".into()];
        assert_eq!(
            created(&milk),
            json!({
                "success": true,
                "message": "Created todo \"Buy milk\" on Inbox.",
                "toolResultText": "I've added \"Buy milk\" to your Inbox list with tags: shop.",
                "todo": {"id": 4, "text": "Buy milk", "done": false, "tags": ["shop"], "list": "Inbox"}
            })
        );
        let done = Todo {
            done: true,
            ..milk.clone()
        };
        assert_eq!(toggled(&done)["message"], "Marked \"Buy milk\" as done.");
        assert_eq!(
            toggled(&milk)["toolResultText"],
            "I've marked \"Buy milk\" as not done."
        );
        assert_eq!(
            updated("Buy mlk", &milk)["message"],
            "Updated todo \"Buy mlk\" to \"Buy milk\"."
        );
        assert_eq!(removed(&milk)["removed"]["id"], 4);
        assert_eq!(
            switched("Inbox", &[milk.clone(), done])["message"],
            "Switched to Inbox: 2 todos, 1 open."
        );
        assert_eq!(
            list_created("Work", &["Inbox".into(), "Work".into()]),
            json!({
                "success": true,
                "message": "Created the list Work and switched to it.",
                "toolResultText": "I've created a new todo list called \"Work\" and switched to it.",
                "list": "Work",
                "lists": ["Inbox", "Work"]
            })
        );
        for answer in [
            created(&milk),
            toggled(&milk),
            removed(&milk),
            switched("Work", &[]),
        ] {
            assert_eq!(answer["success"], true);
            assert!(answer["message"].is_string() && answer["toolResultText"].is_string());
        }
    }

    #[test]
    fn failures_name_what_exists() {
        let groceries = ListName::parse("listName", "Groceries").unwrap();
        let lists = ["Inbox".to_owned(), "Work".to_owned()];
        assert_eq!(
            no_such_list(&groceries, &lists).answer(),
            json!({
                "success": false,
                "error": "list \"Groceries\" does not exist; lists: Inbox, Work",
                "toolResultText": "I couldn't find a list called \"Groceries\". Your lists are: Inbox, Work."
            })
        );
        assert_eq!(
            list_exists(&groceries, &lists).error,
            "list \"Groceries\" already exists; lists: Inbox, Work"
        );
        assert!(room_for_todo(MAX_TODOS_PER_SESSION - 1).is_ok());
        assert_eq!(
            room_for_todo(MAX_TODOS_PER_SESSION).unwrap_err().error,
            "this session already has 50 todos, the most it may hold; remove one first"
        );
        let full: Vec<String> = (0..MAX_LISTS_PER_SESSION)
            .map(|i| format!("L{i}"))
            .collect();
        assert!(room_for_list(&full[1..]).is_ok());
        assert!(room_for_list(&full)
            .unwrap_err()
            .error
            .starts_with("this session already has 10 lists, the most it may have; lists: L0, L1"));
        let todos = [
            todo(1, "Buy milk", false, "Inbox"),
            todo(2, "Pay rent", false, "Work"),
        ];
        let milk = TodoText::parse("todoText", "BUY MILK").unwrap();
        assert_eq!(
            room_for_text(&milk, "Inbox", &todos, None)
                .unwrap_err()
                .error,
            "\"Buy milk\" is already on Inbox"
        );
        assert!(room_for_text(&milk, "Work", &todos, None).is_ok());
        assert!(
            room_for_text(&milk, "Inbox", &todos, Some(1)).is_ok(),
            "a todo may keep its text"
        );
    }

    #[test]
    fn the_largest_listing_fits_in_a_tool_result() {
        // Four bytes per character is the most UTF-8 (and JSON, which
        // escapes a quote in two) takes.
        let wide = |n: usize| "𝄞".repeat(n);
        let list = wide(LIST_NAME_MAX_CHARS);
        let todos: Vec<Todo> = (1..=MAX_TODOS_PER_SESSION as i64)
            .map(|id| Todo {
                id: i64::MAX - id,
                text: wide(TODO_TEXT_MAX_CHARS),
                done: false,
                tags: vec![wide(TAG_MAX_CHARS); MAX_TAGS_PER_TODO],
                list: list.clone(),
            })
            .collect();
        let tag = TagFilter::Tag(wide(TAG_MAX_CHARS));
        for answer in [
            listing(&list, &TagFilter::All, &todos),
            listing(&list, &tag, &todos),
            switched(&list, &todos),
        ] {
            let size = answer.to_string().len();
            assert!(size < TOOL_RESULT_MAX_BYTES, "{size}");
        }
    }

    proptest! {
        #[test]
        fn parsed_text_is_one_trimmed_line_within_the_limit(raw in "\\PC{0,260}|[ \t\r\n]{0,5}[a-z\n ]{0,20}") {
            match TodoText::parse("todoText", &raw) {
                Ok(text) => {
                    let s = text.as_str();
                    prop_assert!(!s.is_empty() && s.chars().count() <= TODO_TEXT_MAX_CHARS);
                    prop_assert_eq!(s.trim(), s);
                    prop_assert!(!s.contains("  ") && !s.chars().any(char::is_control));
                    // Parsing is idempotent: a parsed text parses to itself.
                    prop_assert_eq!(TodoText::parse("todoText", s), Ok(text.clone()));
                }
                Err(reason) => prop_assert!(reason.starts_with("`todoText` "), "{}", reason),
            }
        }

        #[test]
        fn parsed_tags_are_few_short_and_distinct(raw in "[a-zA-Z ,]{0,120}") {
            match Tags::parse(&raw) {
                Ok(tags) => {
                    let tags = tags.as_slice();
                    prop_assert!(tags.len() <= MAX_TAGS_PER_TODO);
                    prop_assert!(tags.iter().all(|t| !t.is_empty() && t.chars().count() <= TAG_MAX_CHARS && !t.contains(',')));
                    let mut keys: Vec<String> = tags.iter().map(|t| t.to_lowercase()).collect();
                    keys.sort();
                    keys.dedup();
                    prop_assert_eq!(keys.len(), tags.len());
                }
                Err(reason) => prop_assert!(reason.contains("`tags`"), "{}", reason),
            }
        }

        #[test]
        fn a_todo_is_found_by_its_whole_text_in_any_case(texts in prop::collection::vec("[a-zA-Z ]{1,12}", 1..8), pick in any::<prop::sample::Index>()) {
            let todos: Vec<Todo> = texts
                .iter()
                .enumerate()
                .filter_map(|(i, t)| TodoText::parse("todoText", t).ok().map(|t| todo(i as i64 + 1, t.as_str(), false, "Inbox")))
                .collect();
            prop_assume!(!todos.is_empty());
            let wanted = pick.get(&todos);
            let same = todos.iter().filter(|t| t.text.to_lowercase() == wanted.text.to_lowercase()).count();
            let found = find(&wanted.text.to_uppercase()).pick(&todos, "Inbox");
            if same == 1 {
                prop_assert_eq!(found.map(|t| t.id), Ok(wanted.id));
            } else {
                prop_assert!(found.is_err());
            }
        }
    }
}
