//! Ultravox's shapes: its parameter list form of a tool's arguments, the
//! `selectedTools` of a call or stage, and the stage-change answer that
//! switches the agent mid-call.
//!
//! Ultravox describes arguments as a list
//! `[{"name","location":"PARAMETER_LOCATION_BODY","schema","required"}]`
//! where the other providers take one JSON Schema object. Body parameters
//! convert both ways without loss; parameters in other locations (query,
//! header, path) have no JSON Schema equivalent and are kept under
//! [`OTHER_LOCATIONS_KEY`] so they round-trip.

use crate::domain::declaration::FunctionDeclaration;
use serde::{Deserialize, Serialize};
use serde_json::{json, Map, Value};
use std::borrow::Borrow;

/// Where a body parameter goes.
pub const BODY: &str = "PARAMETER_LOCATION_BODY";
/// The JSON Schema key that keeps non-body Ultravox parameters.
pub const OTHER_LOCATIONS_KEY: &str = "x-ultravox-parameters";

/// One Ultravox dynamic parameter.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct UltravoxParameter {
    /// Argument name.
    pub name: String,
    /// `PARAMETER_LOCATION_BODY`, `…_QUERY`, `…_HEADER`, `…_PATH`.
    pub location: String,
    /// The argument's own JSON Schema.
    pub schema: Value,
    /// Whether the model must pass it.
    #[serde(default)]
    pub required: bool,
}

/// A JSON Schema object's properties as Ultravox parameters (body), then
/// any kept non-body parameters.
pub fn to_ultravox(schema: &Value) -> Vec<UltravoxParameter> {
    let required: Vec<&str> = schema
        .get("required")
        .and_then(Value::as_array)
        .map(|r| r.iter().filter_map(Value::as_str).collect())
        .unwrap_or_default();
    let mut out: Vec<UltravoxParameter> = schema
        .get("properties")
        .and_then(Value::as_object)
        .map(|props| {
            props
                .iter()
                .map(|(name, schema)| UltravoxParameter {
                    name: name.clone(),
                    location: BODY.to_owned(),
                    schema: schema.clone(),
                    required: required.contains(&name.as_str()),
                })
                .collect()
        })
        .unwrap_or_default();
    if let Some(others) = schema.get(OTHER_LOCATIONS_KEY) {
        out.extend(
            serde_json::from_value::<Vec<UltravoxParameter>>(others.clone()).unwrap_or_default(),
        );
    }
    out
}

/// Ultravox parameters as a JSON Schema object: body parameters become
/// `properties` (and `required`); the others are kept under
/// [`OTHER_LOCATIONS_KEY`].
pub fn from_ultravox(parameters: &[UltravoxParameter]) -> Value {
    let mut properties = Map::new();
    let mut required = Vec::new();
    let mut others = Vec::new();
    for p in parameters {
        if p.location == BODY {
            properties.insert(p.name.clone(), p.schema.clone());
            if p.required {
                required.push(Value::String(p.name.clone()));
            }
        } else {
            others.push(serde_json::to_value(p).unwrap_or(Value::Null));
        }
    }
    let mut schema = json!({"type": "object", "properties": properties});
    if !required.is_empty() {
        schema["required"] = Value::Array(required);
    }
    if !others.is_empty() {
        schema[OTHER_LOCATIONS_KEY] = Value::Array(others);
    }
    schema
}

/// One entry of `selectedTools`: Ultravox's own tool by name, or a
/// temporary tool declared in full (the client, i.e. the backend, runs it).
pub fn selected_tool(declaration: &FunctionDeclaration, ultravox_builtin: bool) -> Value {
    if ultravox_builtin {
        return json!({"toolName": declaration.name});
    }
    json!({"temporaryTool": {
        "modelToolName": declaration.name,
        "description": declaration.description,
        "dynamicParameters": to_ultravox(&declaration.parameters),
        "client": {},
    }})
}

/// `selectedTools` for `declarations`; `builtin` says which are Ultravox's own.
pub fn selected_tools<D: Borrow<FunctionDeclaration>>(
    declarations: &[D],
    builtin: impl Fn(&str) -> bool,
) -> Vec<Value> {
    declarations
        .iter()
        .map(Borrow::borrow)
        .map(|d: &FunctionDeclaration| selected_tool(d, builtin(&d.name)))
        .collect()
}

/// What an agent's stage gets: its prompt, voice and tools.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Stage {
    /// The rendered system prompt.
    pub system_prompt: String,
    /// The agent's voice.
    pub voice: String,
    /// Its tools, in Ultravox's shape.
    pub selected_tools: Vec<Value>,
}

/// A stage with its JSON serialised once (when the rules are built), so
/// the answer to each `switchAgent` only escapes the words to say: the
/// switch is on the conversation's critical path.
#[derive(Debug, Clone, PartialEq)]
pub struct PreparedStage {
    /// The stage.
    pub stage: Stage,
    /// `{"systemPrompt":…,"voice":…,"selectedTools":[…],"toolResultText":`
    prefix: String,
}

impl PreparedStage {
    /// Serialises `stage`'s parts.
    pub fn new(stage: Stage) -> Self {
        let prefix = format!(
            "{{\"systemPrompt\":{},\"voice\":{},\"selectedTools\":{},\"toolResultText\":",
            Value::String(stage.system_prompt.clone()),
            Value::String(stage.voice.clone()),
            Value::Array(stage.selected_tools.clone()),
        );
        Self { stage, prefix }
    }

    /// The same answer as [`stage_change`], from the prepared parts.
    pub fn change(&self, tool_result_text: &str) -> Value {
        let mut result = String::with_capacity(self.prefix.len() + tool_result_text.len() + 8);
        result.push_str(&self.prefix);
        result.push_str(&serde_json::to_string(tool_result_text).unwrap_or_default());
        result.push('}');
        json!({"responseType": "new-stage", "result": result})
    }
}

/// The answer to a `switchAgent` call in Ultravox's stage-change shape:
/// `{"responseType":"new-stage","result":"<JSON of the stage and what to
/// say>"}`.
pub fn stage_change(stage: &Stage, tool_result_text: &str) -> Value {
    let result = json!({
        "systemPrompt": stage.system_prompt,
        "voice": stage.voice,
        "toolResultText": tool_result_text,
        "selectedTools": stage.selected_tools,
    });
    json!({"responseType": "new-stage", "result": result.to_string()})
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn body_parameters_convert_both_ways_and_other_locations_are_kept() {
        let params = vec![
            UltravoxParameter {
                name: "text".into(),
                location: BODY.into(),
                schema: json!({"type": "string"}),
                required: true,
            },
            UltravoxParameter {
                name: "X-Trace".into(),
                location: "PARAMETER_LOCATION_HEADER".into(),
                schema: json!({"type": "string"}),
                required: false,
            },
        ];
        let schema = from_ultravox(&params);
        assert_eq!(schema["properties"]["text"], json!({"type": "string"}));
        assert_eq!(schema["required"], json!(["text"]));
        assert_eq!(
            schema[OTHER_LOCATIONS_KEY][0]["location"],
            "PARAMETER_LOCATION_HEADER"
        );
        assert_eq!(to_ultravox(&schema), params);
    }

    #[test]
    fn a_builtin_is_selected_by_name_and_others_declared() {
        let d = FunctionDeclaration {
            name: "createTodo".into(),
            description: "Adds a todo.".into(),
            parameters: json!({"type": "object", "properties": {"text": {"type": "string"}}, "required": ["text"]}),
        };
        assert_eq!(selected_tool(&d, true), json!({"toolName": "createTodo"}));
        let t = selected_tool(&d, false);
        assert_eq!(t["temporaryTool"]["modelToolName"], "createTodo");
        assert_eq!(t["temporaryTool"]["client"], json!({}));
        assert_eq!(
            t["temporaryTool"]["dynamicParameters"],
            json!([{"name": "text", "location": BODY, "schema": {"type": "string"}, "required": true}])
        );
    }

    #[test]
    fn a_prepared_stage_answers_exactly_as_a_fresh_one() {
        let stage = Stage {
            system_prompt: "You are \"Oliver\".\nBe brief.".into(),
            voice: "Mark".into(),
            selected_tools: vec![
                json!({"toolName": "hangUp"}),
                json!({"temporaryTool": {"modelToolName": "x"}}),
            ],
        };
        let text = "I'm now switching you to \"Oliver\"...";
        let prepared = PreparedStage::new(stage.clone()).change(text);
        let fresh = stage_change(&stage, text);
        assert_eq!(prepared["responseType"], fresh["responseType"]);
        let a: Value = serde_json::from_str(prepared["result"].as_str().unwrap()).unwrap();
        let b: Value = serde_json::from_str(fresh["result"].as_str().unwrap()).unwrap();
        assert_eq!(a, b);
    }

    #[test]
    fn a_stage_change_carries_the_stage_as_a_json_string() {
        let stage = Stage {
            system_prompt: "You are Oliver.".into(),
            voice: "Mark".into(),
            selected_tools: vec![json!({"toolName": "hangUp"})],
        };
        let answer = stage_change(&stage, "I'm now switching you to Oliver...");
        assert_eq!(answer["responseType"], "new-stage");
        let inner: Value = serde_json::from_str(answer["result"].as_str().unwrap()).unwrap();
        assert_eq!(
            inner["toolResultText"],
            "I'm now switching you to Oliver..."
        );
        assert_eq!(inner["selectedTools"][0]["toolName"], "hangUp");
        assert_eq!(inner["voice"], "Mark");
    }

    fn leaf() -> impl Strategy<Value = Value> {
        prop_oneof![
            Just(json!({"type": "string"})),
            Just(json!({"type": "integer", "minimum": 1})),
            "[a-z ]{0,20}".prop_map(|d| json!({"type": "boolean", "description": d})),
            prop::collection::vec("[a-z]{1,5}", 1..4)
                .prop_map(|e| json!({"type": "string", "enum": e})),
        ]
    }

    proptest! {
        /// JSON Schema → Ultravox → JSON Schema is the identity for an
        /// object schema of body parameters.
        #[test]
        fn json_schema_to_ultravox_and_back_is_identity(
            props in prop::collection::btree_map("[a-zA-Z_][a-zA-Z0-9_]{0,12}", leaf(), 0..8),
            required_mask in prop::collection::vec(any::<bool>(), 8),
        ) {
            let required: Vec<Value> = props
                .keys()
                .zip(&required_mask)
                .filter(|(_, r)| **r)
                .map(|(k, _)| Value::String(k.clone()))
                .collect();
            let mut schema = json!({"type": "object", "properties": props});
            if !required.is_empty() {
                schema["required"] = Value::Array(required);
            }
            prop_assert_eq!(from_ultravox(&to_ultravox(&schema)), schema);
        }
    }
}
