//! The demo catalogue and workflows a fresh database starts with: session
//! tools, the banking demo, the mortgage calculator and the six tutor tools,
//! and the workflows they are bound in.
//!
//! Seed data, not rules: it lives with the seeding, and the domain's
//! `catalogue` keeps only what a catalogue is. `migrations/` inserts the
//! same rows (a test in `server::catalogue::bindings` checks they agree); tests that
//! need a realistic catalogue read it from here.

use crate::domain::agent_runner::GO_TO_STEP_TOOL;
use crate::domain::catalogue::{object, CatalogueTool, Workflow};
use crate::domain::effect::{Effect, StateChange};
use crate::domain::ids::WorkflowId;
use crate::domain::lesson::tools::TUTOR_TOOLS;
use crate::domain::workflow_state::{ACCOUNT_FOUND, IDENTITY_VERIFIED};
use serde_json::{json, Value};
use std::collections::BTreeMap;

/// One demo tool.
fn tool(
    id: &str,
    name: &str,
    category: &str,
    description: &str,
    parameters: Value,
) -> CatalogueTool {
    CatalogueTool::new(id, name, category, description, parameters)
}

/// An effect that always moves the session to `step`.
fn step_effect(step: &str) -> Effect {
    Effect {
        then: StateChange {
            step: Some(step.to_owned()),
            ..StateChange::default()
        },
        ..Effect::default()
    }
}

/// An effect setting `check` (and moving to `yes`/`no`) by whether the
/// result's `pointer` is `true`.
fn check_effect(pointer: &str, check: &str, yes: &str, no: &str) -> Effect {
    let change = |passed: bool, step: &str| StateChange {
        checks: BTreeMap::from([(check.to_owned(), passed)]),
        step: Some(step.to_owned()),
    };
    Effect {
        when: Some(pointer.to_owned()),
        equals: Some(Value::Bool(true)),
        then: change(true, yes),
        otherwise: Some(change(false, no)),
    }
}

/// The demo catalogue: session tools, the banking tools, the mortgage
/// calculator and the six tutor tools.
pub fn demo_catalogue() -> Vec<CatalogueTool> {
    let account =
        json!({"type": "string", "pattern": "^[0-9]{8}$", "description": "8-digit account number"});
    let mut tools = vec![
        tool(
            "get_server_time",
            "Server time",
            "session",
            "Returns the current server date and time (UTC).",
            object(json!({}), &[]),
        ),
        tool(
            "start_workflow",
            "Switch workflow",
            "session",
            "Moves the conversation into another workflow; the available tools change at once.",
            object(
                json!({"workflowId": {"type": "string", "description": "Id of the workflow to enter"}}),
                &["workflowId"],
            ),
        ),
        tool(
            "end_session",
            "End session",
            "session",
            "Ends the call politely once the customer has nothing more to ask.",
            object(
                json!({"reason": {"type": "string", "description": "Why the session ends"}}),
                &[],
            ),
        ),
        tool(
            "manage_recent_interactions",
            "Recent interactions",
            "banking",
            "Lists or notes the customer's recent contacts with the bank.",
            object(
                json!({"action": {"type": "string", "enum": ["list", "add"]}, "note": {"type": "string", "maxLength": 500}}),
                &["action"],
            ),
        ),
        tool(
            "check_balance",
            "Check balance",
            "banking",
            "Reads the current balance of a verified customer's account.",
            object(json!({"accountNumber": account}), &["accountNumber"]),
        ),
        tool(
            "perform_idv_check",
            "Identity check",
            "banking",
            "Verifies the caller's identity against the account's records.",
            object(
                json!({
                    "accountNumber": account,
                    "sortCode": {"type": "string", "pattern": "^[0-9]{2}-[0-9]{2}-[0-9]{2}$", "description": "Sort code, 12-34-56"},
                    "dateOfBirth": {"type": "string", "format": "date", "pattern": "^[0-9]{4}-[0-9]{2}-[0-9]{2}$", "description": "YYYY-MM-DD"}
                }),
                &["accountNumber", "sortCode", "dateOfBirth"],
            ),
        ),
        tool(
            "lookup_account",
            "Find account",
            "banking",
            "Finds an account by number and tells whether it exists.",
            object(json!({"accountNumber": account}), &["accountNumber"]),
        ),
        tool(
            "create_dispute_case",
            "Open dispute",
            "banking",
            "Opens a dispute case for a transaction the verified customer does not recognise.",
            object(
                json!({
                    "transactionId": {"type": "string", "minLength": 1},
                    "reason": {"type": "string", "enum": ["unrecognised", "duplicate", "wrong_amount", "not_received"]},
                    "details": {"type": "string", "maxLength": 1000}
                }),
                &["transactionId", "reason"],
            ),
        ),
        tool(
            "lookup_transaction",
            "Find transaction",
            "banking",
            "Looks up one of the verified customer's transactions.",
            object(
                json!({"transactionId": {"type": "string", "minLength": 1}}),
                &["transactionId"],
            ),
        ),
        tool(
            "mortgage_calculator",
            "Mortgage calculator",
            "mortgage",
            "Estimates the monthly repayment of a mortgage.",
            object(
                json!({
                    "principal": {"type": "number", "exclusiveMinimum": 0},
                    "annualRatePercent": {"type": "number", "minimum": 0, "maximum": 25},
                    "years": {"type": "integer", "minimum": 1, "maximum": 40}
                }),
                &["principal", "annualRatePercent", "years"],
            ),
        ),
    ];
    for t in &mut tools {
        let id = t.id.as_str();
        if NEEDS_IDENTITY.contains(&id) {
            t.requires = vec![IDENTITY_VERIFIED.to_owned()];
        }
        t.effects = match id {
            "end_session" => vec![step_effect("ended")],
            "perform_idv_check" => vec![check_effect(
                "/verified",
                IDENTITY_VERIFIED,
                "identity_verified",
                "identity_failed",
            )],
            "lookup_account" => vec![check_effect(
                "/found",
                ACCOUNT_FOUND,
                "account_found",
                "account_not_found",
            )],
            "check_balance" => vec![step_effect("balance_given")],
            "lookup_transaction" => vec![step_effect("transaction_found")],
            "create_dispute_case" => vec![step_effect("dispute_opened")],
            _ => Vec::new(),
        };
    }
    tools.extend(TUTOR_TOOLS.iter().map(|t| {
        let decl = t.declaration();
        tool(t.id, t.name, "tutor", &decl.description, decl.parameters)
    }));
    tools
}

/// The demo's tools that act on a customer's money or data and so require
/// a verified caller (data on each tool: its `requires`).
const NEEDS_IDENTITY: [&str; 4] = [
    "check_balance",
    "lookup_transaction",
    "create_dispute_case",
    "manage_recent_interactions",
];

/// The session tool that moves a workflow session between its steps
/// (`domain::agent_runner::GO_TO_STEP_TOOL`): every database gets it (an
/// older one at its next start), and every workflow with two steps or
/// more offers it.
pub fn step_tool() -> CatalogueTool {
    tool(
        GO_TO_STEP_TOOL,
        "Go to step",
        "session",
        "Moves the conversation to another step of this workflow (by the step's name); the step's instructions and tools apply from then on.",
        object(
            json!({"step": {"type": "string", "minLength": 1, "maxLength": 80, "description": "The name of the step to go to"}}),
            &["step"],
        ),
    )
}

/// The demo workflows.
pub fn demo_workflows() -> Vec<Workflow> {
    [
        (
            "banking-master",
            "Banking Master",
            "General banking once the caller is verified: balances and recent activity.",
        ),
        (
            "idv",
            "ID&V",
            "Identification and verification of the caller before anything else.",
        ),
        (
            "disputes",
            "Disputes",
            "Dispute resolution for transactions the customer does not recognise.",
        ),
        (
            "mortgage",
            "Mortgages",
            "Mortgage questions and repayment estimates.",
        ),
    ]
    .into_iter()
    .map(|(id, name, description)| Workflow {
        id: WorkflowId::parse(id).expect("a valid demo workflow id"),
        name: name.to_owned(),
        description: description.to_owned(),
    })
    .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::domain::catalogue::WORKFLOW_SWITCH_TOOL;

    #[test]
    fn the_demo_catalogue_is_valid_and_unique() {
        let tools = demo_catalogue();
        let mut ids: Vec<&str> = tools.iter().map(|t| t.id.as_str()).collect();
        let count = ids.len();
        ids.sort();
        ids.dedup();
        assert_eq!(ids.len(), count);
        assert_eq!(count, 16);
        for t in &tools {
            assert!(t.problems().is_empty(), "{}: {:?}", t.id, t.problems());
        }
        assert!(ids.contains(&WORKFLOW_SWITCH_TOOL));
        assert!(demo_workflows().iter().all(|w| w.problems().is_empty()));
    }
}
