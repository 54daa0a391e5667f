//! The admins' session console as data: the form fields a tool's JSON Schema
//! `parameters` call for, and the JSON arguments made back from what was
//! typed into them.
//!
//! Kept out of the view so the rules (which inputs a schema yields, how a
//! typed "25" becomes the number 25) are unit-tested here rather than only
//! exercised through a browser.
//!
//! It lives beside its page, not in `domain`: only the session console uses it
//! (pure all the same, and compiled into that page's bundle only).

use crate::domain::catalogue::CatalogueTool;
use serde_json::{Map, Value};
use std::collections::BTreeMap;

/// One input the console shows for one tool parameter.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ConsoleField {
    /// The parameter's name: the argument's key and the input's `data-field`.
    pub name: String,
    /// The input's label: the name, plus its schema type when given
    /// (`years (integer)`), so the admin knows what to type.
    pub label: String,
    /// The schema's description, shown as the placeholder of a text input.
    pub placeholder: String,
    /// The allowed values when the schema has a string `enum` (the console
    /// then offers a select); empty for free text.
    pub options: Vec<String>,
}

/// The JSON Schema of tool `id`'s parameters; `Null` (no fields) for a tool
/// the list does not have.
pub fn schema_of(tools: &[CatalogueTool], id: &str) -> Value {
    tools
        .iter()
        .find(|t| t.id.as_str() == id)
        .map(|t| t.parameters.clone())
        .unwrap_or_default()
}

/// One field per property of an object schema, in the schema's order.
pub fn fields(schema: &Value) -> Vec<ConsoleField> {
    let Some(properties) = schema.get("properties").and_then(Value::as_object) else {
        return Vec::new();
    };
    properties
        .iter()
        .map(|(name, spec)| {
            let kind = spec.get("type").and_then(Value::as_str);
            ConsoleField {
                name: name.clone(),
                label: format!(
                    "{name}{}",
                    kind.map(|t| format!(" ({t})")).unwrap_or_default()
                ),
                placeholder: spec
                    .get("description")
                    .and_then(Value::as_str)
                    .unwrap_or_default()
                    .to_owned(),
                options: spec
                    .get("enum")
                    .and_then(Value::as_array)
                    .map(|a| {
                        a.iter()
                            .filter_map(|v| v.as_str().map(str::to_owned))
                            .collect()
                    })
                    .unwrap_or_default(),
            }
        })
        .collect()
}

/// The arguments object from the typed `values` (parameter name → text).
/// Blank fields are left out, so the tool's own checks see them as missing;
/// numbers and booleans become JSON numbers and booleans as the schema
/// types them, and a number that does not parse is sent as the text typed
/// (the tool then refuses it with its own reason).
pub fn arguments(schema: &Value, values: &BTreeMap<String, String>) -> Value {
    let mut object = Map::new();
    for (name, value) in values {
        if value.trim().is_empty() {
            continue;
        }
        let kind = schema["properties"][name]["type"]
            .as_str()
            .unwrap_or("string");
        let parsed = match kind {
            "integer" | "number" => {
                serde_json::from_str(value.trim()).unwrap_or_else(|_| Value::String(value.clone()))
            }
            "boolean" => Value::Bool(value == "true"),
            _ => Value::String(value.clone()),
        };
        object.insert(name.clone(), parsed);
    }
    Value::Object(object)
}

/// What the console sends: the `raw` JSON when the admin typed any (it wins
/// over the fields), otherwise the arguments made from the fields. A
/// message to show instead when the raw JSON does not parse.
pub fn console_arguments(
    schema: &Value,
    values: &BTreeMap<String, String>,
    raw: &str,
) -> Result<Value, String> {
    if raw.trim().is_empty() {
        Ok(arguments(schema, values))
    } else {
        serde_json::from_str(raw).map_err(|e| format!("Raw JSON is not valid: {e}"))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::server::seed::catalogue::demo_catalogue;
    use serde_json::json;

    fn mortgage() -> Value {
        json!({
            "type": "object",
            "properties": {
                "principal": {"type": "number", "description": "Amount borrowed"},
                "years": {"type": "integer"},
                "kind": {"type": "string", "enum": ["repayment", "interest-only"]},
                "fixed": {"type": "boolean"},
                "note": {}
            }
        })
    }

    fn typed(pairs: &[(&str, &str)]) -> BTreeMap<String, String> {
        pairs
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect()
    }

    #[test]
    fn every_property_becomes_a_field_labelled_with_its_type() {
        let fields = fields(&mortgage());
        let labels: Vec<&str> = fields.iter().map(|f| f.label.as_str()).collect();
        assert_eq!(labels.len(), 5);
        assert!(labels.contains(&"principal (number)"));
        assert!(labels.contains(&"years (integer)"));
        assert!(labels.contains(&"note"), "no type, no suffix: {labels:?}");
        let principal = fields.iter().find(|f| f.name == "principal").unwrap();
        assert_eq!(principal.placeholder, "Amount borrowed");
        assert!(principal.options.is_empty());
    }

    #[test]
    fn a_string_enum_becomes_a_choice_of_its_values() {
        let fields = fields(&mortgage());
        let kind = fields.iter().find(|f| f.name == "kind").unwrap();
        assert_eq!(kind.options, ["repayment", "interest-only"]);
    }

    #[test]
    fn a_schema_without_properties_has_no_fields() {
        assert!(fields(&json!({"type": "object"})).is_empty());
        assert!(fields(&Value::Null).is_empty());
    }

    #[test]
    fn typed_values_become_arguments_of_the_schema_types() {
        let args = arguments(
            &mortgage(),
            &typed(&[
                ("principal", " 200000 "),
                ("years", "25"),
                ("kind", "repayment"),
                ("fixed", "true"),
                ("note", "42"),
            ]),
        );
        assert_eq!(
            args,
            json!({"principal": 200000, "years": 25, "kind": "repayment", "fixed": true, "note": "42"})
        );
    }

    #[test]
    fn blank_fields_are_left_out_and_bad_numbers_sent_as_typed() {
        let args = arguments(
            &mortgage(),
            &typed(&[("principal", "lots"), ("years", "  ")]),
        );
        assert_eq!(args, json!({"principal": "lots"}));
    }

    #[test]
    fn raw_json_wins_over_the_fields_and_must_parse() {
        let values = typed(&[("years", "25")]);
        assert_eq!(
            console_arguments(&mortgage(), &values, r#"{"years": 30}"#),
            Ok(json!({"years": 30}))
        );
        assert_eq!(
            console_arguments(&mortgage(), &values, "  "),
            Ok(json!({"years": 25}))
        );
        let refused = console_arguments(&mortgage(), &values, "{nope").unwrap_err();
        assert!(refused.starts_with("Raw JSON is not valid: "), "{refused}");
    }

    #[test]
    fn the_schema_is_looked_up_by_tool_id() {
        let tools = demo_catalogue();
        assert_eq!(schema_of(&tools, tools[0].id.as_str()), tools[0].parameters);
        assert_eq!(schema_of(&tools, "no_such_tool"), Value::Null);
    }
}
