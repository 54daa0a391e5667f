//! Function declarations: what a model is told about a tool it may call, and
//! the three provider shapes it is exported in.
//!
//! One neutral form is kept and converted at the edge, so adding a provider
//! is one match arm instead of a second copy of every tool.

use crate::domain::error::FieldError;
use serde::{Deserialize, Serialize};
use serde_json::{json, Value};
use std::borrow::Borrow;
use std::fmt;

/// A tool as a model sees it: its name, when to use it, and a JSON Schema
/// for its arguments.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct FunctionDeclaration {
    /// The name the model calls it by.
    pub name: String,
    /// What it does and when to use it, for the model.
    pub description: String,
    /// JSON Schema (an `object`) of the arguments.
    pub parameters: Value,
}

/// The provider whose tool-declaration shape to produce.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum DeclarationFormat {
    /// Google Gemini / Gemini Live: `{"functionDeclarations": […]}`.
    #[default]
    Gemini,
    /// OpenAI (chat, Realtime): `{"tools": [{"type": "function", "function": …}]}`.
    #[serde(rename = "openai")]
    OpenAi,
    /// Anthropic: `{"tools": [{"name", "description", "input_schema"}]}`.
    Anthropic,
    /// Ultravox: `{"selectedTools": [{"toolName"} | {"temporaryTool": …}]}`.
    Ultravox,
}

impl DeclarationFormat {
    /// Every format, in menu order.
    pub const ALL: [DeclarationFormat; 4] =
        [Self::Gemini, Self::OpenAi, Self::Anthropic, Self::Ultravox];

    /// Parses a `format` query value.
    pub fn parse(raw: &str) -> Result<Self, FieldError> {
        Self::ALL
            .into_iter()
            .find(|f| f.as_str() == raw)
            .ok_or_else(|| {
                FieldError::new("format", "must be gemini, openai, anthropic or ultravox")
            })
    }

    /// The query spelling.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Gemini => "gemini",
            Self::OpenAi => "openai",
            Self::Anthropic => "anthropic",
            Self::Ultravox => "ultravox",
        }
    }

    /// The provider's name, for people.
    pub fn label(self) -> &'static str {
        match self {
            Self::Gemini => "Gemini",
            Self::OpenAi => "OpenAI",
            Self::Anthropic => "Anthropic",
            Self::Ultravox => "Ultravox",
        }
    }
}

impl fmt::Display for DeclarationFormat {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

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
            "selectedTools": crate::domain::vibe::ultravox::selected_tools(declarations, ultravox_builtin)
        }),
        DeclarationFormat::Gemini => json!({
            "functionDeclarations": declarations.iter().map(Borrow::borrow).map(|d: &FunctionDeclaration| json!({
                "name": d.name,
                "description": d.description,
                "parameters": d.parameters,
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
    fn anthropic_export_uses_input_schema() {
        let out = export(&sample(), DeclarationFormat::Anthropic);
        assert_eq!(out["tools"][0]["name"], "check_balance");
        assert_eq!(out["tools"][0]["input_schema"]["type"], "object");
        assert!(out["tools"][0].get("parameters").is_none());
    }

    #[test]
    fn formats_parse_from_their_query_spelling_only() {
        for f in DeclarationFormat::ALL {
            assert_eq!(DeclarationFormat::parse(f.as_str()), Ok(f));
        }
        assert_eq!(
            DeclarationFormat::parse("claude").unwrap_err().field,
            "format"
        );
    }
}
