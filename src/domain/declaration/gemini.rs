//! A tool's JSON Schema as Gemini reads it: `functionDeclarations[].parameters`
//! is Gemini's own `Schema` (an OpenAPI subset), not JSON Schema.
//!
//! Gemini refuses a whole request whose parameters carry a field its
//! `Schema` lacks (`Unknown name "additionalProperties" at
//! 'tools[0].function_declarations[0].parameters'`), and a string `format`
//! other than `enum` and `date-time`. The catalogue's schemas are JSON
//! Schema, checked as such on every call, so the Gemini shape keeps only
//! what Gemini knows: a `const` becomes a one-value `enum`, a `oneOf` an
//! `anyOf`, a nullable type list `nullable`, and a string format Gemini
//! lacks is named in the description instead (`(format: date)`), so the
//! model still reads it. What is dropped (`additionalProperties`, `$schema`,
//! …) is still enforced: a call that breaks it is refused with the reason.

use serde_json::{Map, Value};

/// The fields of Gemini's `Schema` kept as they are (those holding schemas
/// are converted in turn).
const KEPT: [&str; 17] = [
    "title",
    "description",
    "nullable",
    "enum",
    "maxItems",
    "minItems",
    "required",
    "minProperties",
    "maxProperties",
    "minLength",
    "maxLength",
    "pattern",
    "example",
    "propertyOrdering",
    "default",
    "minimum",
    "maximum",
];

/// `schema` (JSON Schema) as a Gemini `Schema`.
pub fn schema(schema: &Value) -> Value {
    let Value::Object(from) = schema else {
        // `true` or anything else that is not a schema object: any value.
        return Value::Object(Map::new());
    };
    let mut to = Map::new();
    for (key, value) in from {
        match key.as_str() {
            "properties" => {
                if let Value::Object(props) = value {
                    let props = props
                        .iter()
                        .map(|(k, v)| (k.clone(), self::schema(v)))
                        .collect();
                    to.insert(key.clone(), Value::Object(props));
                }
            }
            "items" => {
                to.insert(key.clone(), self::schema(value));
            }
            "anyOf" | "oneOf" => {
                if let Value::Array(options) = value {
                    let options = options.iter().map(self::schema).collect();
                    to.insert("anyOf".to_owned(), Value::Array(options));
                }
            }
            "const" => {
                to.insert("enum".to_owned(), Value::Array(vec![value.clone()]));
            }
            k if KEPT.contains(&k) => {
                to.insert(key.clone(), value.clone());
            }
            _ => {}
        }
    }
    match from.get("type") {
        Some(Value::String(t)) => {
            to.insert("type".to_owned(), Value::String(t.clone()));
        }
        Some(Value::Array(types)) => {
            let named: Vec<&Value> = types
                .iter()
                .filter(|t| t.as_str().is_some_and(|t| t != "null"))
                .collect();
            if types.iter().any(|t| t.as_str() == Some("null")) {
                to.insert("nullable".to_owned(), Value::Bool(true));
            }
            if let [one] = named.as_slice() {
                to.insert("type".to_owned(), (*one).clone());
            }
        }
        _ => {}
    }
    if let Some(Value::String(format)) = from.get("format") {
        let string = to.get("type").and_then(Value::as_str) == Some("string");
        let known = match to.get("type").and_then(Value::as_str) {
            Some("string") => ["enum", "date-time"].contains(&format.as_str()),
            Some("number") => ["float", "double"].contains(&format.as_str()),
            Some("integer") => ["int32", "int64"].contains(&format.as_str()),
            _ => false,
        };
        if known {
            to.insert("format".to_owned(), Value::String(format.clone()));
        } else if string {
            let said = match to.get("description").and_then(Value::as_str) {
                Some(d) if !d.is_empty() => format!("{d} (format: {format})"),
                _ => format!("(format: {format})"),
            };
            to.insert("description".to_owned(), Value::String(said));
        }
    }
    Value::Object(to)
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;
    use serde_json::json;

    #[test]
    fn json_schema_keywords_gemini_lacks_are_left_out_or_said_in_words() {
        let out = schema(&json!({
            "$schema": "https://json-schema.org/draft/2020-12/schema",
            "type": "object",
            "additionalProperties": false,
            "required": ["dateOfBirth"],
            "properties": {
                "dateOfBirth": {"type": "string", "format": "date", "description": "Date of birth"},
                "at": {"type": "string", "format": "date-time"},
                "kind": {"const": "card"},
                "note": {"type": ["string", "null"], "maxLength": 80},
                "tags": {"type": "array", "items": {"type": "string", "format": "email"}},
                "either": {"oneOf": [{"type": "integer", "minimum": 1}, {"type": "string"}]}
            }
        }));
        assert_eq!(
            out,
            json!({
                "type": "object",
                "required": ["dateOfBirth"],
                "properties": {
                    "dateOfBirth": {"type": "string", "description": "Date of birth (format: date)"},
                    "at": {"type": "string", "format": "date-time"},
                    "kind": {"enum": ["card"]},
                    "note": {"type": "string", "nullable": true, "maxLength": 80},
                    "tags": {"type": "array", "items": {"type": "string", "description": "(format: email)"}},
                    "either": {"anyOf": [{"type": "integer", "minimum": 1}, {"type": "string"}]}
                }
            })
        );
    }

    #[test]
    fn a_schema_gemini_reads_already_is_unchanged() {
        let tutor = json!({
            "type": "object",
            "properties": {
                "errorType": {"type": "string", "enum": ["grammar", "vocabulary"], "description": "Kind of mistake."},
                "severity": {"type": "integer", "minimum": 1, "maximum": 5}
            },
            "required": ["errorType"]
        });
        assert_eq!(schema(&tutor), tutor);
    }

    /// Any JSON, schema-like or not.
    fn any_json() -> impl Strategy<Value = Value> {
        let key = prop_oneof![
            Just("type".to_owned()),
            Just("properties".to_owned()),
            Just("items".to_owned()),
            Just("format".to_owned()),
            Just("additionalProperties".to_owned()),
            Just("oneOf".to_owned()),
            Just("const".to_owned()),
            Just("description".to_owned()),
            "[a-z$]{1,6}",
        ];
        let leaf = prop_oneof![
            Just(Value::Null),
            any::<bool>().prop_map(Value::from),
            any::<i32>().prop_map(Value::from),
            prop_oneof![Just("string"), Just("object"), Just("null"), Just("date")]
                .prop_map(Value::from),
        ];
        leaf.prop_recursive(4, 40, 5, move |inner| {
            prop_oneof![
                prop::collection::vec(inner.clone(), 0..4).prop_map(Value::Array),
                prop::collection::vec((key.clone(), inner), 0..5)
                    .prop_map(|m| Value::Object(m.into_iter().collect())),
            ]
        })
    }

    /// Whether every schema position in `v` holds only Gemini's fields.
    fn only_gemini_fields(v: &Value) -> bool {
        let Value::Object(m) = v else { return false };
        m.iter().all(|(k, v)| match k.as_str() {
            "properties" => v
                .as_object()
                .is_some_and(|p| p.values().all(only_gemini_fields)),
            "items" => only_gemini_fields(v),
            "anyOf" => v
                .as_array()
                .is_some_and(|a| a.iter().all(only_gemini_fields)),
            "type" | "format" => true,
            k => KEPT.contains(&k),
        })
    }

    proptest! {
        #[test]
        fn whatever_the_schema_the_gemini_shape_has_only_gemini_fields(v in any_json()) {
            let out = schema(&v);
            prop_assert!(only_gemini_fields(&out), "{v} → {out}");
            // Converting twice changes nothing more.
            prop_assert_eq!(schema(&out), out);
        }
    }
}
