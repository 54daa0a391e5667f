//! JSON Schema parameters as Ultravox's `dynamicParameters` and back.

use serde::{Deserialize, Serialize};
use serde_json::{json, Map, Value};

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
