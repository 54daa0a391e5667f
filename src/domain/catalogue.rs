//! The tool catalogue and workflows, held as data so admins can change which
//! tools exist and where they apply without touching code.
//!
//! Ids are parsed once (`ToolId::parse`, `WorkflowId::parse`): a value of
//! these types is known to satisfy the model APIs' naming limits.

use crate::domain::declaration::FunctionDeclaration;
use crate::domain::error::FieldError;
use crate::domain::lesson::tools::TUTOR_TOOLS;
use serde::{Deserialize, Serialize};
use serde_json::{json, Value};
use std::fmt;

/// The tool that switches an agent's workflow; it must stay global or an
/// agent could get stuck inside a sub-workflow.
pub const WORKFLOW_SWITCH_TOOL: &str = "start_workflow";

/// A tool (function) name: `^[a-zA-Z0-9_-]{1,64}$`, the limit Gemini, OpenAI
/// and Anthropic all enforce on function names.
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(try_from = "String", into = "String")]
pub struct ToolId(String);

impl ToolId {
    /// Accepts 1–64 ASCII letters, digits, `_` and `-`.
    pub fn parse(raw: &str) -> Result<Self, FieldError> {
        let ok = !raw.is_empty()
            && raw.len() <= 64
            && raw
                .bytes()
                .all(|b| b.is_ascii_alphanumeric() || b == b'_' || b == b'-');
        if ok {
            Ok(Self(raw.to_owned()))
        } else {
            Err(FieldError::new(
                "id",
                format!("tool id \"{raw}\" must be 1-64 characters of a-z, A-Z, 0-9, _ or -"),
            ))
        }
    }

    /// The id.
    pub fn as_str(&self) -> &str {
        &self.0
    }
}

impl TryFrom<String> for ToolId {
    type Error = FieldError;
    fn try_from(value: String) -> Result<Self, Self::Error> {
        Self::parse(&value)
    }
}

impl From<ToolId> for String {
    fn from(value: ToolId) -> Self {
        value.0
    }
}

impl fmt::Display for ToolId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

/// A workflow id: a lower-case slug (`banking-master`), 1–64 characters.
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(try_from = "String", into = "String")]
pub struct WorkflowId(String);

impl WorkflowId {
    /// Accepts `a-z`, `0-9` and `-`, starting with a letter or digit.
    pub fn parse(raw: &str) -> Result<Self, FieldError> {
        let ok = !raw.is_empty()
            && raw.len() <= 64
            && !raw.starts_with('-')
            && raw
                .bytes()
                .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'-');
        if ok {
            Ok(Self(raw.to_owned()))
        } else {
            Err(FieldError::new(
                "id",
                format!("workflow id \"{raw}\" must be a slug of 1-64 characters: a-z, 0-9 and -"),
            ))
        }
    }

    /// The id.
    pub fn as_str(&self) -> &str {
        &self.0
    }
}

impl TryFrom<String> for WorkflowId {
    type Error = FieldError;
    fn try_from(value: String) -> Result<Self, Self::Error> {
        Self::parse(&value)
    }
}

impl From<WorkflowId> for String {
    fn from(value: WorkflowId) -> Self {
        value.0
    }
}

impl fmt::Display for WorkflowId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

/// A tool in the catalogue.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct CatalogueTool {
    /// Function name.
    pub id: ToolId,
    /// Name people see.
    pub name: String,
    /// What it does; also the model-facing description.
    pub description: String,
    /// Column group in the matrix (`session`, `banking`, `tutor`…).
    pub category: String,
    /// JSON Schema of the arguments.
    pub parameters: Value,
}

impl CatalogueTool {
    /// What the model is told about it.
    pub fn declaration(&self) -> FunctionDeclaration {
        FunctionDeclaration {
            name: self.id.to_string(),
            description: self.description.clone(),
            parameters: self.parameters.clone(),
        }
    }

    /// Field rules that need no schema engine: names, lengths, and that the
    /// parameters are an object schema. (The server also compiles the schema.)
    pub fn problems(&self) -> Vec<FieldError> {
        let mut problems = Vec::new();
        if self.name.trim().is_empty() || self.name.chars().count() > 80 {
            problems.push(FieldError::new("name", "must be 1-80 characters"));
        }
        if self.description.trim().is_empty() || self.description.chars().count() > 1024 {
            problems.push(FieldError::new("description", "must be 1-1024 characters"));
        }
        if self.category.trim().is_empty() || self.category.chars().count() > 40 {
            problems.push(FieldError::new("category", "must be 1-40 characters"));
        }
        if self.parameters.get("type").and_then(Value::as_str) != Some("object") {
            problems.push(FieldError::new(
                "parameters",
                "must be a JSON Schema whose type is \"object\"",
            ));
        }
        problems
    }
}

/// A workflow an agent session can be in.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Workflow {
    /// Slug.
    pub id: WorkflowId,
    /// Name people see.
    pub name: String,
    /// What happens in it.
    pub description: String,
}

impl Workflow {
    /// Field rules.
    pub fn problems(&self) -> Vec<FieldError> {
        let mut problems = Vec::new();
        if self.name.trim().is_empty() || self.name.chars().count() > 80 {
            problems.push(FieldError::new("name", "must be 1-80 characters"));
        }
        if self.description.chars().count() > 500 {
            problems.push(FieldError::new(
                "description",
                "must be at most 500 characters",
            ));
        }
        problems
    }
}

fn tool(
    id: &str,
    name: &str,
    category: &str,
    description: &str,
    parameters: Value,
) -> CatalogueTool {
    CatalogueTool {
        id: ToolId(id.to_owned()),
        name: name.to_owned(),
        description: description.to_owned(),
        category: category.to_owned(),
        parameters,
    }
}

fn object(properties: Value, required: &[&str]) -> Value {
    json!({"type": "object", "properties": properties, "required": required, "additionalProperties": false})
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
    tools.extend(TUTOR_TOOLS.iter().map(|t| {
        let decl = t.declaration();
        tool(t.id, t.name, "tutor", &decl.description, decl.parameters)
    }));
    tools
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
        id: WorkflowId(id.to_owned()),
        name: name.to_owned(),
        description: description.to_owned(),
    })
    .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tool_ids_follow_the_model_api_limit() {
        for ok in ["a", "check_balance", "get-time", &"x".repeat(64), "Tool9"] {
            assert!(ToolId::parse(ok).is_ok(), "{ok}");
        }
        for bad in ["", "has space", "dot.name", &"x".repeat(65), "ünïcode"] {
            assert_eq!(ToolId::parse(bad).unwrap_err().field, "id", "{bad}");
        }
        assert!(serde_json::from_str::<ToolId>("\"a b\"").is_err());
    }

    #[test]
    fn workflow_ids_are_slugs() {
        assert!(WorkflowId::parse("banking-master").is_ok());
        for bad in ["", "Banking", "-x", "a_b", "a b"] {
            assert!(WorkflowId::parse(bad).is_err(), "{bad}");
        }
    }

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

    #[test]
    fn a_tool_without_an_object_schema_is_refused() {
        let mut t = demo_catalogue().remove(0);
        t.parameters = json!({"type": "string"});
        t.name = String::new();
        let fields: Vec<String> = t.problems().into_iter().map(|p| p.field).collect();
        assert_eq!(fields, ["name", "parameters"]);
    }
}
