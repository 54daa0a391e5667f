//! Why a piece of input was refused: the field and the rule it broke.
//!
//! Every layer reports bad input the same way, so a form can show the message
//! next to the field and an API client can branch on the field's name. It is
//! plain data, so the browser and the server share one definition.

use serde::{Deserialize, Serialize};

/// Why a piece of user input was refused; each names the field and the rule so
/// the UI can show it next to the field and an API client can act on it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, thiserror::Error)]
#[error("{field}: {rule}")]
pub struct FieldError {
    /// The input field (JSON key or form name) that broke the rule.
    pub field: String,
    /// The rule, in words a person can act on.
    pub rule: String,
}

impl FieldError {
    /// Builds an error for `field` breaking `rule`.
    pub fn new(field: impl Into<String>, rule: impl Into<String>) -> Self {
        Self {
            field: field.into(),
            rule: rule.into(),
        }
    }
}
