//! A tool's `config.json` in the manifest layout, in either of its two
//! forms.
//!
//! - **Switchboard's form** is a catalogue tool as the API shows it:
//!   `parameters` is one JSON Schema object, and `category` names the
//!   matrix group.
//! - **The seed's form** (seed 003's `TOOLS/<group>/<id>/config.json`) is
//!   `{"id", "name", "description", "modelToolName", "parameters"}` with
//!   `parameters` a list of Ultravox dynamic parameters `{name, location,
//!   schema, required}`. The list becomes a JSON Schema through
//!   `declaration::ultravox::from_ultravox`: body parameters without loss,
//!   the others kept beside them. `name` is the tool's display name (as
//!   in Switchboard's form); `modelToolName` is the name the model calls
//!   it by, which in Switchboard is the id, so it must equal `id`.
//!
//! A file says which form it is by its `parameters` (a list or an object).
//! What Switchboard keeps that the seed's form has no field for is written
//! beside it only where it is not the default — `category` when the group
//! folder would not give it back, `requires`, `effects`, `ultravoxBuiltin`,
//! and `schemaKeywords` (the schema's own keywords a parameter list cannot
//! hold, such as `additionalProperties`, the order of `required`, or
//! `null` for a keyword the list would add) — so an export in either form
//! imports back to the same catalogue.

use crate::domain::catalogue::CatalogueTool;
use crate::domain::declaration::ultravox::{
    from_ultravox, to_ultravox, UltravoxParameter, BODY, OTHER_LOCATIONS_KEY,
};
use crate::domain::effect::Effect;
use crate::domain::error::FieldError;
use crate::domain::ids::ToolId;
use serde::Deserialize;
use serde_json::{json, Map, Value};

/// Ultravox's parameter locations.
pub const LOCATIONS: [&str; 4] = [
    BODY,
    "PARAMETER_LOCATION_QUERY",
    "PARAMETER_LOCATION_HEADER",
    "PARAMETER_LOCATION_PATH",
];

/// The category of a tool file directly under `TOOLS/` that names none.
pub const UNGROUPED_CATEGORY: &str = "other";

/// Which form an export writes tools' `config.json` in.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Form {
    /// `parameters` as one JSON Schema object (`?form=switchboard`).
    #[default]
    Switchboard,
    /// The seed's: `parameters` as Ultravox dynamic parameters, with
    /// `modelToolName` (`?form=ultravox`).
    Ultravox,
}

impl Form {
    /// Parses `switchboard` or `ultravox`; refusals name `form`.
    pub fn parse(raw: &str) -> Result<Self, FieldError> {
        match raw {
            "switchboard" => Ok(Self::Switchboard),
            "ultravox" => Ok(Self::Ultravox),
            _ => Err(FieldError::new("form", "must be switchboard or ultravox")),
        }
    }
}

/// A tool file as written, in either form.
#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct ToolFile {
    id: ToolId,
    name: String,
    description: String,
    #[serde(default)]
    category: Option<String>,
    #[serde(default)]
    model_tool_name: Option<String>,
    parameters: Value,
    #[serde(default)]
    schema_keywords: Option<Map<String, Value>>,
    #[serde(default)]
    requires: Vec<String>,
    #[serde(default)]
    effects: Vec<Effect>,
    #[serde(default)]
    ultravox_builtin: bool,
}

/// A folder name for a tool group (`vibe-core`, `todos`): anything but
/// a-z, 0-9, `-` and `_` becomes `-`.
pub fn group_folder(category: &str) -> String {
    let folder: String = category
        .trim()
        .to_lowercase()
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '_' || c == '-' {
                c
            } else {
                '-'
            }
        })
        .collect();
    if folder.is_empty() {
        UNGROUPED_CATEGORY.into()
    } else {
        folder
    }
}

/// The tool in file `path` (`bytes`), found in group folder `group` (none
/// for a file directly under `TOOLS/`). Problems name the file and field
/// (`TOOLS/todos/createTodo/config.json: modelToolName`).
pub fn read(path: &str, group: Option<&str>, bytes: &[u8]) -> Result<CatalogueTool, FieldError> {
    let at = |field: &str| format!("{path}: {field}");
    let file: ToolFile = serde_json::from_slice(bytes)
        .map_err(|e| FieldError::new(path, format!("is not valid: {e}")))?;
    if let Some(model_name) = file.model_tool_name.as_deref() {
        if model_name != file.id.as_str() {
            return Err(FieldError::new(
                at("modelToolName"),
                format!(
                    "must equal the tool's id \"{}\" (got \"{}\"): Switchboard declares a tool to the model by its id",
                    file.id,
                    crate::domain::limits::excerpt(model_name)
                ),
            ));
        }
    }
    let parameters = match (file.parameters, file.schema_keywords) {
        (Value::Array(list), keywords) => {
            let mut schema = from_ultravox(&parameter_list(&list).map_err(|e| relocate(e, path))?);
            apply_keywords(&mut schema, keywords.unwrap_or_default()).map_err(|e| relocate(e, path))?;
            schema
        }
        (Value::Object(schema), None) => Value::Object(schema),
        (Value::Object(_), Some(_)) => {
            return Err(FieldError::new(
                at("schemaKeywords"),
                "belongs only beside a list of Ultravox parameters",
            ))
        }
        _ => {
            return Err(FieldError::new(
                at("parameters"),
                "must be a JSON Schema object or a list of Ultravox parameters {name, location, schema, required}",
            ))
        }
    };
    Ok(CatalogueTool {
        id: file.id,
        name: file.name,
        description: file.description,
        category: file
            .category
            .or(group.map(str::to_owned))
            .unwrap_or_else(|| UNGROUPED_CATEGORY.into()),
        parameters,
        requires: file.requires,
        effects: file.effects,
        ultravox_builtin: file.ultravox_builtin,
    })
}

/// `problem` (a field of a tool file) as a problem of file `path`.
fn relocate(problem: FieldError, path: &str) -> FieldError {
    FieldError::new(format!("{path}: {}", problem.field), problem.rule)
}

/// The Ultravox parameters of `list`: each `{name, location, schema,
/// required?}` with a known location, each name once per location.
fn parameter_list(list: &[Value]) -> Result<Vec<UltravoxParameter>, FieldError> {
    let mut parameters: Vec<UltravoxParameter> = Vec::with_capacity(list.len());
    for (i, item) in list.iter().enumerate() {
        let parameter: UltravoxParameter = serde_json::from_value(item.clone()).map_err(|e| {
            FieldError::new(
                format!("parameters[{i}]"),
                format!("is not an Ultravox parameter {{name, location, schema, required}}: {e}"),
            )
        })?;
        if !LOCATIONS.contains(&parameter.location.as_str()) {
            return Err(FieldError::new(
                format!("parameters[{i}].location"),
                format!("must be one of {}", LOCATIONS.join(", ")),
            ));
        }
        if !parameter.schema.is_object() {
            return Err(FieldError::new(
                format!("parameters[{i}].schema"),
                "must be a JSON Schema object",
            ));
        }
        if parameters
            .iter()
            .any(|p| p.name == parameter.name && p.location == parameter.location)
        {
            return Err(FieldError::new(
                format!("parameters[{i}].name"),
                format!("\"{}\" is declared twice", parameter.name),
            ));
        }
        parameters.push(parameter);
    }
    Ok(parameters)
}

/// Sets `keywords` on `schema` (`null` removes one); the parameters' own
/// keys are the list's, so they cannot be set here.
fn apply_keywords(schema: &mut Value, keywords: Map<String, Value>) -> Result<(), FieldError> {
    let Some(object) = schema.as_object_mut() else {
        return Ok(());
    };
    for (key, value) in keywords {
        let taken = key == OTHER_LOCATIONS_KEY || (key == "properties" && !value.is_null());
        if taken {
            return Err(FieldError::new(
                format!("schemaKeywords.{key}"),
                "is written by the parameters list",
            ));
        }
        if value.is_null() {
            object.remove(&key);
        } else {
            object.insert(key, value);
        }
    }
    Ok(())
}

/// The keywords of `schema` that its Ultravox list does not give back:
/// each key whose value differs after the round trip, with the value to
/// set (`null` to remove).
fn lost_keywords(schema: &Value) -> Map<String, Value> {
    let rebuilt = from_ultravox(&to_ultravox(schema));
    let (Some(original), Some(rebuilt)) = (schema.as_object(), rebuilt.as_object()) else {
        return Map::new();
    };
    original
        .keys()
        .chain(rebuilt.keys())
        .filter(|k| original.get(*k) != rebuilt.get(*k))
        .map(|k| (k.clone(), original.get(k).cloned().unwrap_or(Value::Null)))
        .collect()
}

/// `tool`'s `config.json` in `form`.
pub fn write(tool: &CatalogueTool, form: Form) -> Value {
    if form == Form::Switchboard {
        return serde_json::to_value(tool).unwrap_or_default();
    }
    let mut file = json!({
        "id": tool.id,
        "name": tool.name,
        "description": tool.description,
        "modelToolName": tool.id,
        "parameters": to_ultravox(&tool.parameters),
    });
    let mut extra = |key: &str, value: Value| {
        file[key] = value;
    };
    if group_folder(&tool.category) != tool.category {
        extra("category", json!(tool.category));
    }
    let keywords = lost_keywords(&tool.parameters);
    if !keywords.is_empty() {
        extra("schemaKeywords", Value::Object(keywords));
    }
    if !tool.requires.is_empty() {
        extra("requires", json!(tool.requires));
    }
    if !tool.effects.is_empty() {
        extra("effects", json!(tool.effects));
    }
    if tool.ultravox_builtin {
        extra("ultravoxBuiltin", json!(true));
    }
    file
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::domain::catalogue::object;
    use crate::domain::todos::todo_tools;
    use crate::domain::vibe::demo;

    /// The seed's `TOOLS/todos/updateTodo/config.json`, as it is.
    const SEED_UPDATE_TODO: &str = r#"{
        "id": "updateTodo",
        "name": "Update Todo",
        "description": "Update the text of an existing todo. Use this when a user wants to change the content of a todo item.",
        "modelToolName": "updateTodo",
        "parameters": [
            {"name": "oldText", "location": "PARAMETER_LOCATION_BODY", "schema": {"type": "string", "description": "The current text of the todo to update"}, "required": true},
            {"name": "newText", "location": "PARAMETER_LOCATION_BODY", "schema": {"type": "string", "description": "The new text to replace the old text with"}, "required": true}
        ]
    }"#;

    const PATH: &str = "TOOLS/todos/updateTodo/config.json";

    #[test]
    fn a_seed_tool_file_reads_as_a_catalogue_tool_in_its_group() {
        let tool = read(PATH, Some("todos"), SEED_UPDATE_TODO.as_bytes()).unwrap();
        assert_eq!(tool.id.as_str(), "updateTodo");
        assert_eq!(tool.name, "Update Todo");
        assert_eq!(tool.category, "todos");
        assert_eq!(
            tool.parameters,
            json!({
                "type": "object",
                "properties": {
                    "oldText": {"type": "string", "description": "The current text of the todo to update"},
                    "newText": {"type": "string", "description": "The new text to replace the old text with"}
                },
                "required": ["oldText", "newText"]
            })
        );
        assert!(tool.problems().is_empty(), "{:?}", tool.problems());
        assert!(!tool.ultravox_builtin && tool.requires.is_empty());
        let ungrouped = read(
            "TOOLS/updateTodo/config.json",
            None,
            SEED_UPDATE_TODO.as_bytes(),
        );
        assert_eq!(ungrouped.unwrap().category, UNGROUPED_CATEGORY);
    }

    #[test]
    fn other_locations_and_an_empty_list_are_kept() {
        let file = json!({
            "id": "hangUp", "name": "Hang Up", "description": "End the call", "modelToolName": "hangUp",
            "parameters": [{"name": "X-Call", "location": "PARAMETER_LOCATION_HEADER", "schema": {"type": "string"}}]
        });
        let tool = read(
            "TOOLS/core/hangUp/config.json",
            Some("core"),
            file.to_string().as_bytes(),
        )
        .unwrap();
        assert_eq!(tool.parameters[OTHER_LOCATIONS_KEY][0]["name"], "X-Call");
        assert_eq!(tool.parameters["properties"], json!({}));
        let empty = json!({"id": "hangUp", "name": "Hang Up", "description": "End the call", "modelToolName": "hangUp", "parameters": []});
        let tool = read(
            "TOOLS/core/hangUp/config.json",
            Some("core"),
            empty.to_string().as_bytes(),
        )
        .unwrap();
        assert_eq!(tool.parameters, json!({"type": "object", "properties": {}}));
    }

    #[test]
    fn problems_name_the_file_and_the_field() {
        let problem = |file: Value| {
            let e = read(PATH, Some("todos"), file.to_string().as_bytes()).unwrap_err();
            (e.field, e.rule)
        };
        let base: Value = serde_json::from_str(SEED_UPDATE_TODO).unwrap();
        let with = |key: &str, value: Value| {
            let mut file = base.clone();
            file[key] = value;
            file
        };
        let (field, rule) = problem(with("modelToolName", json!("update_todo")));
        assert_eq!(field, format!("{PATH}: modelToolName"));
        assert!(
            rule.starts_with("must equal the tool's id \"updateTodo\" (got \"update_todo\")"),
            "{rule}"
        );
        let (field, _) = problem(with("parameters", json!("oldText")));
        assert_eq!(field, format!("{PATH}: parameters"));
        let (field, rule) = problem(with(
            "parameters",
            json!([{"name": "a", "location": "PARAMETER_LOCATION_BODY", "schema": {}}, {"name": "b", "location": "BODY", "schema": {}}]),
        ));
        assert_eq!(field, format!("{PATH}: parameters[1].location"));
        assert!(
            rule.starts_with("must be one of PARAMETER_LOCATION_BODY"),
            "{rule}"
        );
        let (field, _) = problem(with("parameters", json!([{"name": "a", "schema": {}}])));
        assert_eq!(field, format!("{PATH}: parameters[0]"));
        let (field, rule) = problem(with(
            "parameters",
            json!([{"name": "a", "location": BODY, "schema": {}}, {"name": "a", "location": BODY, "schema": {}}]),
        ));
        assert_eq!(
            (field.as_str(), rule.as_str()),
            (
                format!("{PATH}: parameters[1].name").as_str(),
                "\"a\" is declared twice"
            )
        );
        let (field, _) = problem(with(
            "parameters",
            json!([{"name": "a", "location": BODY, "schema": "string"}]),
        ));
        assert_eq!(field, format!("{PATH}: parameters[0].schema"));
        let (field, _) = problem(with("schemaKeywords", json!({"properties": {"x": {}}})));
        assert_eq!(field, format!("{PATH}: schemaKeywords.properties"));
        let (field, _) = problem(with("id", json!("not an id!")));
        assert_eq!(field, PATH);
        let object_form = with("parameters", json!({"type": "object"}));
        let mut both = object_form.clone();
        both["schemaKeywords"] = json!({});
        assert_eq!(problem(both).0, format!("{PATH}: schemaKeywords"));
        assert!(read(PATH, Some("todos"), object_form.to_string().as_bytes()).is_ok());
    }

    #[test]
    fn every_demo_tool_round_trips_through_both_forms() {
        let mut tools: Vec<CatalogueTool> =
            demo::core_tools().into_iter().chain(todo_tools()).collect();
        // Keywords a list cannot hold, an empty schema, a category that is
        // not a folder name, and a tool's rules.
        let mut odd = CatalogueTool::new(
            "odd",
            "Odd",
            "Vibe Core",
            "Odd one.",
            json!({"type": "object", "description": "no properties"}),
        );
        odd.requires = vec!["identity_verified".into()];
        odd.ultravox_builtin = true;
        tools.push(odd);
        tools.push(CatalogueTool::new(
            "even",
            "Even",
            "core",
            "Even one.",
            object(
                json!({"b": {"type": "string"}, "a": {"type": "string"}}),
                &["b", "a"],
            ),
        ));
        for tool in &tools {
            for form in [Form::Switchboard, Form::Ultravox] {
                let file = write(tool, form).to_string();
                let group = group_folder(&tool.category);
                let back = read("TOOLS/x/config.json", Some(&group), file.as_bytes()).unwrap();
                assert_eq!(&back, tool, "{form:?}: {file}");
            }
        }
        let create = write(&todo_tools()[0], Form::Ultravox);
        assert_eq!(create["modelToolName"], "createTodo");
        assert_eq!(create["parameters"][2]["name"], "todoText");
        assert_eq!(create["parameters"][2]["required"], true);
        assert_eq!(
            create["schemaKeywords"],
            json!({"additionalProperties": false})
        );
        assert!(create.get("category").is_none(), "the folder says it");
    }

    #[test]
    fn the_form_is_parsed_by_name() {
        assert_eq!(Form::parse("ultravox"), Ok(Form::Ultravox));
        assert_eq!(Form::parse("switchboard"), Ok(Form::Switchboard));
        assert_eq!(Form::parse("seed").unwrap_err().field, "form");
    }
}
