//! Unit tests of `rules`, kept beside it so the module itself stays short.

use super::*;
use crate::server::seed::catalogue::{demo_catalogue, demo_workflows};
use serde_json::json;

fn demo() -> Rules {
    Rules::new(ToolBindings::demo(), demo_catalogue(), demo_workflows())
}

#[test]
fn switching_workflow_changes_what_is_allowed() {
    let rules = demo();
    assert!(!rules.allows("idv", "check_balance"));
    assert!(rules.allows("banking-master", "check_balance"));
    assert!(rules.allows("idv", "start_workflow") && rules.allows("disputes", "start_workflow"));
    assert_eq!(
        rules.available("disputes")[3..],
        ["create_dispute_case", "lookup_transaction"]
    );
}

#[test]
fn every_start_trigger_schema_compiles_and_checks_its_rules() {
    use crate::domain::workflow_def::trigger_types;
    for kind in trigger_types() {
        let v = compile_schema(&kind.filter_schema).unwrap_or_else(|e| panic!("{}: {e}", kind.id));
        assert!(
            check_with(&v, &json!({})).is_ok() || kind.id == "schedule",
            "{}",
            kind.id
        );
    }
    let inbound = compile_schema(&trigger_types()[1].filter_schema).unwrap();
    assert!(check_with(&inbound, &json!({"calledNumbers": ["+441234567890"]})).is_ok());
    let err = check_with(&inbound, &json!({"calledNumbers": ["0800"]})).unwrap_err();
    assert!(err.starts_with("field `calledNumbers.0`"), "{err}");
    let schedule = compile_schema(&trigger_types()[3].filter_schema).unwrap();
    assert!(check_with(&schedule, &json!({"cron": "0 9 * * 1-5"})).is_ok());
    assert!(
        check_with(&schedule, &json!({})).is_err(),
        "cron is required"
    );
}

#[test]
fn arguments_are_checked_against_the_schema_naming_the_field() {
    let rules = demo();
    let ok =
        json!({"accountNumber": "12345678", "sortCode": "12-34-56", "dateOfBirth": "1985-04-12"});
    assert_eq!(rules.check_arguments("perform_idv_check", &ok), Ok(()));
    let bad = json!({"accountNumber": "1234", "sortCode": "12-34-56", "dateOfBirth": "1985-04-12"});
    let err = rules
        .check_arguments("perform_idv_check", &bad)
        .unwrap_err();
    assert!(err.starts_with("field `accountNumber`:"), "{err}");
    let missing = json!({"accountNumber": "12345678"});
    let err = rules
        .check_arguments("perform_idv_check", &missing)
        .unwrap_err();
    assert!(err.contains("sortCode"), "{err}");
    let extra = json!({"workflowId": "idv", "force": true});
    assert!(rules.check_arguments("start_workflow", &extra).is_err());
}

#[test]
fn withheld_tools_are_left_out_of_what_sessions_are_offered_but_stay_bound() {
    use crate::domain::vibe::demo;
    let tools = demo_catalogue()
        .into_iter()
        .chain(demo::core_tools())
        .chain(crate::domain::todos::todo_tools())
        .collect();
    let gone = |name: &str| Withheld::Unlisted {
        upstream_name: name.into(),
    };
    let withheld = HashMap::from([
        ("get_server_time".to_owned(), gone("time")),
        ("createTodo".to_owned(), Withheld::ServerRemoved),
    ]);
    let rules = Rules::new(ToolBindings::demo(), tools, demo_workflows())
        .with_withheld(withheld)
        .with_vibes(demo::agents(), demo::vibes());
    let bound = rules.bound_at("idv", None);
    assert!(bound.contains(&"get_server_time".to_owned()));
    let offered = rules.available_at("idv", None);
    let mut expected = bound.clone();
    expected.retain(|t| t != "get_server_time");
    assert_eq!(offered, expected, "the rest, in the same order");
    assert_eq!(
        rules.withheld("get_server_time"),
        Some(&gone("time")),
        "decide reads why"
    );
    let oliver = AgentContext {
        vibe: "todos".into(),
        agent: "Oliver".into(),
    };
    assert!(rules
        .agent_bound(&oliver)
        .contains(&"createTodo".to_owned()));
    assert!(!rules
        .agent_tools(&oliver)
        .contains(&"createTodo".to_owned()));
    let stage = rules.stage(&oliver).unwrap();
    assert!(
        !stage
            .stage
            .tools
            .iter()
            .any(|t| t.declaration.name == "createTodo"),
        "the agent's stage leaves it out too"
    );
    assert!(stage
        .stage
        .tools
        .iter()
        .any(|t| t.declaration.name == "toggleTodo"));
}

#[test]
fn an_imported_tool_is_withheld_by_its_link() {
    let link = |tool: &str, server_id, available| LinkRow {
        tool_id: tool.into(),
        server_id,
        upstream_name: tool.trim_start_matches("up__").into(),
        upstream_description: String::new(),
        available,
    };
    let withheld = withheld_of(&[
        link("up__echo", Some(1), true),
        link("up__add", Some(1), false),
        link("up__old", None, false),
    ]);
    assert_eq!(
        withheld,
        HashMap::from([
            (
                "up__add".to_owned(),
                Withheld::Unlisted {
                    upstream_name: "add".into()
                }
            ),
            ("up__old".to_owned(), Withheld::ServerRemoved),
        ])
    );
}
