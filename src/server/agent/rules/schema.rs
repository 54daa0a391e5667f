//! Tool argument schemas for the rules in force: compiled once per change
//! (never fetching a `$ref`), and the readable refusal a call's arguments
//! get when they do not fit.

use crate::domain::limits::excerpt;
use serde_json::Value;

/// Checks `arguments` with a compiled schema (a catalogue tool's or a
/// plugin tool's); the error names up to three fields and their rules.
pub fn check_with(validator: &jsonschema::Validator, arguments: &Value) -> Result<(), String> {
    let problems: Vec<String> = validator
        .iter_errors(arguments)
        .take(3)
        .map(|e| {
            let path = e.instance_path().to_string();
            let field = path.trim_start_matches('/').replace('/', ".");
            let problem = excerpt(&e.to_string());
            if field.is_empty() {
                format!("arguments: {problem}")
            } else {
                format!("field `{}`: {problem}", excerpt(&field))
            }
        })
        .collect();
    if problems.is_empty() {
        Ok(())
    } else {
        Err(problems.join("; "))
    }
}

/// Compiles a tool's JSON Schema. Patterns are compiled once per process
/// (`pattern.rs`: linear time, no backtracking; `patternProperties` use
/// jsonschema's `regex` engine, also linear), and jsonschema's default
/// features are off, so a schema can never make the server fetch a `$ref`
/// over the network or from a file. Slow for large schemas: call it off the
/// async threads.
pub fn compile_schema(schema: &Value) -> Result<jsonschema::Validator, String> {
    jsonschema::options()
        .with_pattern_options(jsonschema::PatternOptions::regex())
        .with_keyword("pattern", super::pattern::factory)
        .build(schema)
        .map_err(|e| excerpt(&e.to_string()))
}
