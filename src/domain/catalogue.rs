//! The tool catalogue and workflows, held as data so admins can change which
//! tools exist and where they apply without touching code.
//!
//! Ids are parsed once (`ToolId::parse`, `WorkflowId::parse`, in `ids`): a value of
//! these types is known to satisfy the model APIs' naming limits.

use crate::domain::declaration::FunctionDeclaration;
use crate::domain::effect::{rules_problems, Effect};
use crate::domain::error::FieldError;
use crate::domain::ids::{ToolId, WorkflowId};
use crate::domain::limits::{unprintable, PRINTABLE_RULE};
use crate::domain::workflow_state::START_STEP;
use serde::{Deserialize, Serialize};
use serde_json::{json, Value};
use std::collections::{BTreeMap, BTreeSet};

/// The tool that switches an agent's workflow; it must stay global or an
/// agent could get stuck inside a sub-workflow.
pub const WORKFLOW_SWITCH_TOOL: &str = "start_workflow";

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
    /// Checks a session must have passed before the tool may run
    /// (`identity_verified`); a call without them is refused naming them.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub requires: Vec<String>,
    /// What the tool's result changes in the session (see
    /// [`crate::domain::effect`]), whoever executed it.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub effects: Vec<Effect>,
    /// One of Ultravox's own tools (`hangUp`): an Ultravox call selects it
    /// by name (`{"toolName": …}`) instead of declaring it as a temporary
    /// tool.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub ultravox_builtin: bool,
}

impl CatalogueTool {
    /// A tool with no requirements or effects, whose `id` the caller knows
    /// to be valid (demo data); panics otherwise, so a typo fails a test.
    pub fn new(id: &str, name: &str, category: &str, description: &str, parameters: Value) -> Self {
        Self {
            id: ToolId::parse(id).expect("a valid demo tool id"),
            name: name.to_owned(),
            description: description.to_owned(),
            category: category.to_owned(),
            parameters,
            requires: Vec::new(),
            effects: Vec::new(),
            ultravox_builtin: false,
        }
    }

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
        } else if unprintable(&self.name).is_some() {
            problems.push(FieldError::new("name", PRINTABLE_RULE));
        }
        if unprintable(&self.category).is_some() {
            problems.push(FieldError::new("category", PRINTABLE_RULE));
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

    /// [`problems`](Self::problems) plus the rules on `requires` and
    /// `effects` against the whole catalogue `others` (the tool's own
    /// earlier version, if any, is ignored): every required check must be
    /// one some tool's effects can set.
    pub fn problems_in(&self, others: &[CatalogueTool]) -> Vec<FieldError> {
        let mut problems = self.problems();
        let known = known_checks(
            others
                .iter()
                .filter(|t| t.id != self.id)
                .chain(std::iter::once(self)),
        );
        problems.extend(rules_problems(&self.requires, &self.effects, &known));
        problems
    }
}

/// Every check some tool's effects can set: the checks a requirement may name.
pub fn known_checks<'a>(tools: impl IntoIterator<Item = &'a CatalogueTool>) -> BTreeSet<String> {
    tools
        .into_iter()
        .flat_map(|t| t.effects.iter().flat_map(|e| e.checks().cloned()))
        .collect()
}

/// Every step a session can be at by the catalogue's own doing: the one a
/// session starts at and each step some tool's effects move it to. The
/// steps the label editor offers to describe.
pub fn known_steps<'a>(tools: impl IntoIterator<Item = &'a CatalogueTool>) -> BTreeSet<String> {
    tools
        .into_iter()
        .flat_map(|t| t.effects.iter().flat_map(|e| e.steps().cloned()))
        .chain(std::iter::once(START_STEP.to_owned()))
        .collect()
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
        } else if unprintable(&self.name).is_some() {
            problems.push(FieldError::new("name", PRINTABLE_RULE));
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

/// An object schema with these properties, `required`, and nothing else.
pub fn object(properties: Value, required: &[&str]) -> Value {
    json!({"type": "object", "properties": properties, "required": required, "additionalProperties": false})
}

/// Tools grouped by category, groups in the order their first tool appears
/// in the catalogue: the matrix's column groups.
pub fn by_category(tools: &[CatalogueTool]) -> Vec<(String, Vec<CatalogueTool>)> {
    let mut groups: Vec<(String, Vec<CatalogueTool>)> = Vec::new();
    for tool in tools {
        match groups.iter_mut().find(|(c, _)| *c == tool.category) {
            Some((_, list)) => list.push(tool.clone()),
            None => groups.push((tool.category.clone(), vec![tool.clone()])),
        }
    }
    groups
}

/// The name people see for workflow `id`; the id itself for a workflow the
/// list does not know (one removed since, say), so something always shows.
pub fn workflow_name(workflows: &[Workflow], id: &str) -> String {
    workflows
        .iter()
        .find(|w| w.id.as_str() == id)
        .map_or_else(|| id.to_owned(), |w| w.name.clone())
}

/// A catalogue editor form as typed: field name → text. The editor keeps
/// text, not typed values, so a half-typed id or schema stays on screen.
pub type FormFields = BTreeMap<&'static str, String>;

/// Why a form was refused: field name → rule, one per field; `form` is for
/// problems with no field of their own.
pub type FormProblems = BTreeMap<String, String>;

/// The tool editor's fields for editing `tool` (the schema pretty-printed).
pub fn tool_fields(tool: &CatalogueTool) -> FormFields {
    BTreeMap::from([
        ("id", tool.id.to_string()),
        ("name", tool.name.clone()),
        ("description", tool.description.clone()),
        ("category", tool.category.clone()),
        (
            "parameters",
            serde_json::to_string_pretty(&tool.parameters).unwrap_or_default(),
        ),
        ("requires", tool.requires.join(", ")),
        (
            "ultravoxBuiltin",
            if tool.ultravox_builtin { "true" } else { "" }.to_owned(),
        ),
        (
            "effects",
            if tool.effects.is_empty() {
                String::new()
            } else {
                serde_json::to_string_pretty(&tool.effects).unwrap_or_default()
            },
        ),
    ])
}

/// The tool the editor's fields describe, or every problem to show next to
/// its field. Blank parameters mean "no arguments" (an empty object
/// schema); the field rules are only checked once id and schema parse.
pub fn tool_from_fields(fields: &FormFields) -> Result<CatalogueTool, FormProblems> {
    let get = |k: &str| fields.get(k).cloned().unwrap_or_default();
    let mut problems = FormProblems::new();
    let id = ToolId::parse(get("id").trim())
        .map_err(|e| problems.insert("id".to_owned(), e.rule))
        .ok();
    let raw = get("parameters");
    let parameters = if raw.trim().is_empty() {
        Some(json!({"type": "object", "properties": {}}))
    } else {
        serde_json::from_str(&raw)
            .map_err(|e| problems.insert("parameters".to_owned(), format!("is not JSON: {e}")))
            .ok()
    };
    let requires: Vec<String> = get("requires")
        .split([',', ' ', '\n'])
        .filter(|c| !c.is_empty())
        .map(str::to_owned)
        .collect();
    let raw_effects = get("effects");
    let effects = if raw_effects.trim().is_empty() {
        Some(Vec::new())
    } else {
        serde_json::from_str::<Vec<Effect>>(&raw_effects)
            .map_err(|e| {
                problems.insert(
                    "effects".to_owned(),
                    format!("must be a JSON list of effects: {e}"),
                )
            })
            .ok()
    };
    if let (Some(id), Some(parameters), Some(effects)) = (id, parameters, effects) {
        let tool = CatalogueTool {
            id,
            name: get("name"),
            description: get("description"),
            category: get("category"),
            parameters,
            requires,
            effects,
            ultravox_builtin: matches!(get("ultravoxBuiltin").as_str(), "on" | "true"),
        };
        for p in tool.problems() {
            problems.entry(p.field).or_insert(p.rule);
        }
        if problems.is_empty() {
            return Ok(tool);
        }
    }
    Err(problems)
}

/// The workflow editor's fields for editing `workflow`.
pub fn workflow_fields(workflow: &Workflow) -> FormFields {
    BTreeMap::from([
        ("id", workflow.id.to_string()),
        ("name", workflow.name.clone()),
        ("description", workflow.description.clone()),
    ])
}

/// The workflow the editor's fields describe, or every problem to show
/// next to its field.
pub fn workflow_from_fields(fields: &FormFields) -> Result<Workflow, FormProblems> {
    let get = |k: &str| fields.get(k).cloned().unwrap_or_default();
    let mut problems = FormProblems::new();
    if let Ok(id) =
        WorkflowId::parse(get("id").trim()).map_err(|e| problems.insert("id".to_owned(), e.rule))
    {
        let workflow = Workflow {
            id,
            name: get("name"),
            description: get("description"),
        };
        for p in workflow.problems() {
            problems.entry(p.field).or_insert(p.rule);
        }
        if problems.is_empty() {
            return Ok(workflow);
        }
    }
    Err(problems)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::server::seed::catalogue::{demo_catalogue, demo_workflows};

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
    fn a_tool_without_an_object_schema_is_refused() {
        let mut t = demo_catalogue().remove(0);
        t.parameters = json!({"type": "string"});
        t.name = String::new();
        let fields: Vec<String> = t.problems().into_iter().map(|p| p.field).collect();
        assert_eq!(fields, ["name", "parameters"]);
    }

    #[test]
    fn tools_group_by_category_in_order_of_first_appearance() {
        let mut tools = demo_catalogue();
        tools.truncate(4);
        tools[0].category = "b".into();
        tools[1].category = "a".into();
        tools[2].category = "b".into();
        tools[3].category = "c".into();
        let groups = by_category(&tools);
        let shape: Vec<(&str, Vec<&str>)> = groups
            .iter()
            .map(|(c, list)| (c.as_str(), list.iter().map(|t| t.id.as_str()).collect()))
            .collect();
        assert_eq!(
            shape,
            [
                ("b", vec![tools[0].id.as_str(), tools[2].id.as_str()]),
                ("a", vec![tools[1].id.as_str()]),
                ("c", vec![tools[3].id.as_str()]),
            ]
        );
        assert!(by_category(&[]).is_empty());
    }

    #[test]
    fn an_unknown_workflow_is_named_by_its_id() {
        let workflows = demo_workflows();
        assert_eq!(
            workflow_name(&workflows, workflows[0].id.as_str()),
            workflows[0].name
        );
        assert_eq!(workflow_name(&workflows, "gone"), "gone");
    }

    #[test]
    fn a_tool_survives_the_editor_fields_unchanged() {
        for tool in demo_catalogue() {
            assert_eq!(tool_from_fields(&tool_fields(&tool)), Ok(tool));
        }
        for workflow in demo_workflows() {
            assert_eq!(
                workflow_from_fields(&workflow_fields(&workflow)),
                Ok(workflow)
            );
        }
    }

    #[test]
    fn blank_parameters_mean_a_tool_without_arguments() {
        let mut fields = tool_fields(&demo_catalogue()[0]);
        fields.insert("parameters", "  ".into());
        let tool = tool_from_fields(&fields).unwrap();
        assert_eq!(tool.parameters, json!({"type": "object", "properties": {}}));
    }

    #[test]
    fn a_bad_id_and_schema_are_reported_before_the_field_rules() {
        let fields = FormFields::from([("id", "no spaces".into()), ("parameters", "{".into())]);
        let problems = tool_from_fields(&fields).unwrap_err();
        assert_eq!(problems.keys().collect::<Vec<_>>(), ["id", "parameters"]);
        assert!(problems["parameters"].starts_with("is not JSON: "));

        let fields = FormFields::from([("id", "fine".into())]);
        let problems = tool_from_fields(&fields).unwrap_err();
        assert_eq!(
            problems.keys().collect::<Vec<_>>(),
            ["category", "description", "name"]
        );
    }

    #[test]
    fn a_workflow_needs_a_slug_and_a_name() {
        let problems =
            workflow_from_fields(&FormFields::from([("id", "Bad Id".into())])).unwrap_err();
        assert_eq!(problems.keys().collect::<Vec<_>>(), ["id"]);
        let problems = workflow_from_fields(&FormFields::from([("id", "ok".into())])).unwrap_err();
        assert_eq!(problems.keys().collect::<Vec<_>>(), ["name"]);
    }
}
