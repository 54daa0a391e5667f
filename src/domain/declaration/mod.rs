//! Function declarations: what a model is told about a tool it may call,
//! and the providers whose shapes it is exported in.
//!
//! One neutral form is kept here and converted at the edge ([`export`],
//! with Ultravox's own shapes in [`ultravox`]), so adding a provider is one
//! match arm instead of a second copy of every tool. This module imports
//! neither of them: the neutral form is what everything else of the domain
//! (catalogue, plugins, vibes, lessons) builds on.

use crate::domain::error::FieldError;
use serde::{Deserialize, Serialize};
use serde_json::Value;
use std::fmt;

pub mod export;
pub mod gemini;
pub mod ultravox;

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
    /// OpenAI Chat Completions: `{"tools": [{"type": "function", "function": …}]}`.
    #[serde(rename = "openai")]
    OpenAi,
    /// OpenAI Realtime (`session.update`): `{"tools": [{"type": "function",
    /// "name", "description", "parameters"}]}`, each tool flat.
    #[serde(rename = "openai-realtime")]
    OpenAiRealtime,
    /// Anthropic: `{"tools": [{"name", "description", "input_schema"}]}`.
    Anthropic,
    /// Ultravox: `{"selectedTools": [{"toolName"} | {"temporaryTool": …}]}`.
    Ultravox,
    /// Amazon Nova Sonic (`promptStart`): `{"toolConfiguration": {"tools":
    /// [{"toolSpec": {"name", "description", "inputSchema": {"json"}}}]}}`,
    /// the schema as a JSON string.
    #[serde(rename = "nova-sonic")]
    NovaSonic,
}

impl DeclarationFormat {
    /// Every format, in menu order.
    pub const ALL: [DeclarationFormat; 6] = [
        Self::Gemini,
        Self::OpenAi,
        Self::OpenAiRealtime,
        Self::Anthropic,
        Self::Ultravox,
        Self::NovaSonic,
    ];

    /// Parses a `format` query value.
    pub fn parse(raw: &str) -> Result<Self, FieldError> {
        Self::ALL
            .into_iter()
            .find(|f| f.as_str() == raw)
            .ok_or_else(|| {
                FieldError::new(
                    "format",
                    "must be gemini, openai, openai-realtime, anthropic, ultravox or nova-sonic",
                )
            })
    }

    /// The query spelling.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Gemini => "gemini",
            Self::OpenAi => "openai",
            Self::OpenAiRealtime => "openai-realtime",
            Self::Anthropic => "anthropic",
            Self::Ultravox => "ultravox",
            Self::NovaSonic => "nova-sonic",
        }
    }

    /// The provider's name, for people.
    pub fn label(self) -> &'static str {
        match self {
            Self::Gemini => "Gemini",
            Self::OpenAi => "OpenAI",
            Self::OpenAiRealtime => "OpenAI Realtime",
            Self::Anthropic => "Anthropic",
            Self::Ultravox => "Ultravox",
            Self::NovaSonic => "Nova Sonic",
        }
    }
}

impl fmt::Display for DeclarationFormat {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

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
