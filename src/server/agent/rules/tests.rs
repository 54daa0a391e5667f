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
