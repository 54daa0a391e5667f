//! An edit refused: the argument it is about and why, in words for a
//! person and a model alike.

/// An edit refused: the argument it is about and why.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct EditError {
    /// The argument (`step_uuid`, `enabled_tools[2]`).
    pub field: String,
    /// Why, for a person or a model.
    pub message: String,
}

/// The refusal of argument `field`, saying why.
pub(super) fn refuse(field: &str, message: impl Into<String>) -> EditError {
    EditError {
        field: field.into(),
        message: message.into(),
    }
}
