//! The checks a request and each tool pass alone before any plan: sizes
//! of the request's texts and lists, and each definition's name,
//! description and schema.

use super::registration::{
    Registration, ToolDefinition, CONTEXT_MAX_BYTES, DESCRIPTION_MAX_CHARS, LIST_MAX_ITEMS,
    SCHEMA_MAX_BYTES, SCHEMA_MAX_DEPTH, SHORT_TEXT_MAX_CHARS,
};
use super::schema::Schema;
use super::update::FailedTool;
use crate::domain::error::FieldError;
use crate::domain::ids::ToolId;
use crate::domain::limits::excerpt;
use serde_json::Value;

fn check_short(field: &str, text: &str) -> Result<(), FieldError> {
    let n = text.chars().count();
    if n > SHORT_TEXT_MAX_CHARS {
        return Err(FieldError::new(
            field,
            format!("must be at most {SHORT_TEXT_MAX_CHARS} characters (got {n})"),
        ));
    }
    Ok(())
}

fn check_list<T>(field: &str, list: &[T]) -> Result<(), FieldError> {
    if list.len() > LIST_MAX_ITEMS {
        return Err(FieldError::new(
            field,
            format!(
                "must have at most {LIST_MAX_ITEMS} entries (got {})",
                list.len()
            ),
        ));
    }
    Ok(())
}

/// Checks a registration's own fields (not its tools, which are checked
/// one by one): the first field over its limit, named.
pub fn check_registration(r: &Registration) -> Result<(), FieldError> {
    check_short("pluginVersion", &r.plugin_version)?;
    check_short("environment.version", &r.environment.version)?;
    check_list("capabilities", &r.capabilities)?;
    check_list("environment.features", &r.environment.features)?;
    check_list("environment.limitations", &r.environment.limitations)?;
    for (i, c) in r.capabilities.iter().enumerate() {
        check_list(&format!("capabilities[{i}].resources"), &c.resources)?;
        check_list(&format!("capabilities[{i}].permissions"), &c.permissions)?;
    }
    for (field, value) in [
        (
            "environment",
            serde_json::to_string(&r.environment).unwrap_or_default(),
        ),
        (
            "constraints",
            r.constraints
                .as_ref()
                .map(Value::to_string)
                .unwrap_or_default(),
        ),
        (
            "capabilities",
            serde_json::to_string(&r.capabilities).unwrap_or_default(),
        ),
    ] {
        if value.len() > CONTEXT_MAX_BYTES {
            return Err(FieldError::new(
                field,
                format!(
                    "must be at most {CONTEXT_MAX_BYTES} bytes as JSON (got {})",
                    value.len()
                ),
            ));
        }
    }
    Ok(())
}

/// A refused tool (its name shortened if long), the rule it broke, and
/// whether sending it again corrected can succeed.
pub(super) fn failed(name: &str, error: String, recoverable: bool) -> FailedTool {
    FailedTool {
        tool_name: excerpt(name),
        error,
        recoverable,
    }
}

/// Checks one definition alone: its name, description and schema (size,
/// depth, an object schema, and that `compile` accepts it). `reserved`
/// says whether a name belongs to the catalogue.
pub fn check_definition(
    def: &ToolDefinition,
    reserved: &dyn Fn(&str) -> bool,
    compile: &dyn Fn(&Schema) -> Result<(), String>,
) -> Result<(), FailedTool> {
    let name = def.name.as_str();
    ToolId::parse(name).map_err(|e| failed(name, format!("name: {}", e.rule), true))?;
    if reserved(name) {
        return Err(failed(
            name,
            format!("name: `{name}` is a catalogue tool; choose another name"),
            false,
        ));
    }
    let chars = def.description.chars().count();
    if def.description.trim().is_empty() {
        return Err(failed(name, "description: is required".into(), true));
    }
    if chars > DESCRIPTION_MAX_CHARS {
        return Err(failed(
            name,
            format!(
                "description: must be at most {DESCRIPTION_MAX_CHARS} characters (got {chars})"
            ),
            true,
        ));
    }
    check_schema(name, &def.parameters, compile)
}

fn check_schema(
    name: &str,
    schema: &Schema,
    compile: &dyn Fn(&Schema) -> Result<(), String>,
) -> Result<(), FailedTool> {
    let bytes = schema.json().len();
    if bytes > SCHEMA_MAX_BYTES {
        return Err(failed(
            name,
            format!("parameters: must be at most {SCHEMA_MAX_BYTES} bytes as JSON (got {bytes})"),
            true,
        ));
    }
    let shape = schema
        .shape()
        .map_err(|e| failed(name, format!("parameters: {}", excerpt(e)), true))?;
    let levels = shape.depth;
    if levels > SCHEMA_MAX_DEPTH {
        return Err(failed(
            name,
            format!("parameters: must nest at most {SCHEMA_MAX_DEPTH} levels (got {levels})"),
            true,
        ));
    }
    if !shape.object_type {
        return Err(failed(
            name,
            "parameters: must be a JSON Schema with \"type\": \"object\"".into(),
            true,
        ));
    }
    compile(schema).map_err(|e| failed(name, format!("parameters: {}", excerpt(&e)), true))
}
