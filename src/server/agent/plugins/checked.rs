//! A plugin tool's parameters schema once checked, ready for its calls.
//! A schema with a keyword only compiling can judge (a `$ref`, a
//! `format`) is compiled when registered; a plain one (`rules::is_plain`)
//! is only checked then — against its meta-schema, its patterns built —
//! with the same verdict in the same words, and compiled when a call first
//! needs it. Checking reads the text first (`rules::check_plain_text`),
//! so a plain schema that is right has no tree until its first call. A
//! plugin registers a thousand tools and calls a few: compiling all of
//! them was most of a registration's time.

use crate::domain::plugin::Schema;
use crate::server::agent::rules::{
    check_plain, check_plain_text, check_with, compile_schema, is_plain, SharedPattern,
};
use crate::server::platform::weak_table::Keyed;
use serde_json::Value;
use std::sync::OnceLock;

/// A schema a registration accepted, compiled now or on its first call.
/// Shared by every session holding the same text (`shared`), so it is
/// compiled once for all of them.
pub struct CheckedSchema {
    schema: Schema,
    compiled: OnceLock<Result<jsonschema::Validator, String>>,
    /// A plain schema's patterns, built when it was checked and held, so
    /// that compiling it finds them built (the process keeps a pattern
    /// only while something holds it).
    _patterns: Vec<SharedPattern>,
}

impl CheckedSchema {
    /// Checks `schema` as a registration must: the schema ready for calls,
    /// or why it is refused (what compiling it says). Slow for a schema
    /// that must be compiled: call it off the async threads.
    pub fn check(schema: Schema) -> Result<Self, String> {
        // Most schemas are plain and right: read from the text, their
        // trees are not built until a call needs them.
        if let Some(patterns) = check_plain_text(schema.json()) {
            return Ok(Self {
                schema,
                compiled: OnceLock::new(),
                _patterns: patterns,
            });
        }
        let (compiled, patterns) = if is_plain(schema.value()) {
            (OnceLock::new(), check_plain(schema.value())?)
        } else {
            let validator = compile_schema(schema.value())?;
            (OnceLock::from(Ok(validator)), Vec::new())
        };
        Ok(Self {
            schema,
            compiled,
            _patterns: patterns,
        })
    }

    /// Checks a call's `arguments`, compiling the schema if no call has
    /// yet (a plain schema compiles in microseconds, and only once per
    /// process). A plain schema its meta-schema accepted always compiles;
    /// were it ever not to, the call is refused saying so, never let
    /// through unchecked.
    pub fn check_arguments(&self, arguments: &Value) -> Result<(), String> {
        match self
            .compiled
            .get_or_init(|| compile_schema(self.schema.value()))
        {
            Ok(validator) => check_with(validator, arguments),
            Err(e) => Err(format!(
                "the tool's parameters schema does not compile: {e}"
            )),
        }
    }

    /// Whether it has been compiled (at registration or by a call).
    #[cfg(test)]
    pub fn is_compiled(&self) -> bool {
        self.compiled.get().is_some()
    }
}

/// Found in the process's table (`shared`) by its schema's text.
impl Keyed for CheckedSchema {
    fn key(&self) -> &str {
        self.schema.json()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn a_plain_schema_is_compiled_by_its_first_call() {
        let checked = CheckedSchema::check(Schema::new(json!({
            "type": "object", "properties": {"n": {"type": "integer", "maximum": 3}}, "required": ["n"]
        })))
        .unwrap();
        assert!(!checked.is_compiled());
        assert_eq!(checked.check_arguments(&json!({"n": 2})), Ok(()));
        assert!(checked.is_compiled());
        let refused = checked.check_arguments(&json!({"n": 9})).unwrap_err();
        assert!(refused.contains("field `n`"), "{refused}");
        assert!(checked.check_arguments(&json!({})).is_err());
    }

    #[test]
    fn a_schema_with_a_pattern_keeps_it_built_until_its_first_call_and_a_bad_one_is_refused() {
        let checked = CheckedSchema::check(Schema::new(json!({
            "type": "object", "properties": {"code": {"type": "string", "pattern": "^[A-Z]{3}$"}}
        })))
        .unwrap();
        assert!(!checked.is_compiled());
        assert_eq!(checked._patterns.len(), 1);
        assert!(checked.check_arguments(&json!({"code": "abc"})).is_err());
        assert_eq!(checked.check_arguments(&json!({"code": "ABC"})), Ok(()));
        let referenced = CheckedSchema::check(Schema::new(json!({
            "$defs": {"code": {"type": "string"}}, "properties": {"code": {"$ref": "#/$defs/code"}}
        })))
        .unwrap();
        assert!(referenced.is_compiled());
        let bad =
            json!({"type": "object", "properties": {"code": {"type": "string", "pattern": "(["}}});
        assert_eq!(
            CheckedSchema::check(Schema::new(bad.clone())).map(|_| ()),
            compile_schema(&bad).map(|_| ())
        );
    }

    #[test]
    fn a_plain_schema_the_meta_schema_refuses_is_refused_when_registered() {
        let bad = json!({"type": "object", "properties": {"n": {"type": "integr"}}});
        let refused = CheckedSchema::check(Schema::new(bad.clone())).map(|_| ());
        assert!(refused.is_err());
        assert_eq!(refused, compile_schema(&bad).map(|_| ()));
    }
}
