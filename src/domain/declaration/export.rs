//! The declarations in each provider's shape, from the neutral form: the
//! Gemini (its parameters as Gemini's own `Schema`, [`gemini`]), OpenAI
//! (Chat Completions and Realtime), Anthropic and Nova Sonic shapes here,
//! Ultravox's `selectedTools` from [`ultravox`].
//!
//! Kept apart from the neutral form so the exporters can use it (and
//! Ultravox's module) without the form importing them back.

use crate::domain::declaration::{gemini, ultravox};
use crate::domain::declaration::{DeclarationFormat, FunctionDeclaration};
use serde_json::{json, Value};
use std::borrow::Borrow;

/// The declarations in `format`'s shape, ready to splice into that
/// provider's request (for Ultravox, every tool declared as a temporary
/// tool; see [`export_with`]).
pub fn export<D: Borrow<FunctionDeclaration>>(
    declarations: &[D],
    format: DeclarationFormat,
) -> Value {
    export_with(declarations, format, |_| false)
}

/// [`export`], with `ultravox_builtin` saying which tools Ultravox has
/// itself (selected by name in its format).
pub fn export_with<D: Borrow<FunctionDeclaration>>(
    declarations: &[D],
    format: DeclarationFormat,
    ultravox_builtin: impl Fn(&str) -> bool,
) -> Value {
    match format {
        DeclarationFormat::Ultravox => json!({
            "selectedTools": ultravox::selected_tools(declarations, ultravox_builtin)
        }),
        DeclarationFormat::Gemini => json!({
            "functionDeclarations": declarations.iter().map(Borrow::borrow).map(|d: &FunctionDeclaration| json!({
                "name": d.name,
                "description": d.description,
                "parameters": gemini::schema(&d.parameters),
            })).collect::<Vec<_>>()
        }),
        DeclarationFormat::OpenAi => json!({
            "tools": declarations.iter().map(Borrow::borrow).map(|d: &FunctionDeclaration| json!({
                "type": "function",
                "function": {
                    "name": d.name,
                    "description": d.description,
                    "parameters": d.parameters,
                }
            })).collect::<Vec<_>>()
        }),
        DeclarationFormat::OpenAiRealtime => json!({
            "tools": declarations.iter().map(Borrow::borrow).map(|d: &FunctionDeclaration| json!({
                "type": "function",
                "name": d.name,
                "description": d.description,
                "parameters": d.parameters,
            })).collect::<Vec<_>>()
        }),
        DeclarationFormat::NovaSonic => json!({
            "toolConfiguration": {
                "tools": declarations.iter().map(Borrow::borrow).map(|d: &FunctionDeclaration| json!({
                    "toolSpec": {
                        "name": d.name,
                        "description": d.description,
                        "inputSchema": {"json": d.parameters.to_string()},
                    }
                })).collect::<Vec<_>>()
            }
        }),
        DeclarationFormat::Anthropic => json!({
            "tools": declarations.iter().map(Borrow::borrow).map(|d: &FunctionDeclaration| json!({
                "name": d.name,
                "description": d.description,
                "input_schema": d.parameters,
            })).collect::<Vec<_>>()
        }),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sample() -> Vec<FunctionDeclaration> {
        vec![FunctionDeclaration {
            name: "check_balance".into(),
            description: "Reads the balance.".into(),
            parameters: json!({"type": "object", "properties": {"accountNumber": {"type": "string"}}}),
        }]
    }

    #[test]
    fn gemini_export_lists_function_declarations() {
        let out = export(&sample(), DeclarationFormat::Gemini);
        assert_eq!(out["functionDeclarations"][0]["name"], "check_balance");
        assert_eq!(
            out["functionDeclarations"][0]["parameters"]["type"],
            "object"
        );
    }

    #[test]
    fn openai_export_wraps_each_tool_as_a_function() {
        let out = export(&sample(), DeclarationFormat::OpenAi);
        assert_eq!(out["tools"][0]["type"], "function");
        assert_eq!(out["tools"][0]["function"]["name"], "check_balance");
        assert_eq!(out["tools"][0]["function"]["parameters"]["type"], "object");
    }

    #[test]
    fn openai_realtime_export_lists_each_tool_flat() {
        let out = export(&sample(), DeclarationFormat::OpenAiRealtime);
        assert_eq!(
            out["tools"][0],
            json!({"type": "function", "name": "check_balance", "description": "Reads the balance.",
                   "parameters": sample()[0].parameters})
        );
    }

    #[test]
    fn nova_sonic_export_carries_the_schema_as_a_json_string() {
        let out = export(&sample(), DeclarationFormat::NovaSonic);
        let spec = &out["toolConfiguration"]["tools"][0]["toolSpec"];
        assert_eq!(spec["name"], "check_balance");
        let schema: Value =
            serde_json::from_str(spec["inputSchema"]["json"].as_str().unwrap()).unwrap();
        assert_eq!(schema, sample()[0].parameters);
    }

    #[test]
    fn every_format_parses_from_its_own_spelling() {
        for f in DeclarationFormat::ALL {
            assert_eq!(DeclarationFormat::parse(f.as_str()), Ok(f));
            assert_eq!(serde_json::to_value(f).unwrap(), f.as_str());
        }
    }

    #[test]
    fn anthropic_export_uses_input_schema() {
        let out = export(&sample(), DeclarationFormat::Anthropic);
        assert_eq!(out["tools"][0]["name"], "check_balance");
        assert_eq!(out["tools"][0]["input_schema"]["type"], "object");
        assert!(out["tools"][0].get("parameters").is_none());
    }
}
