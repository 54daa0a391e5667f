//! Why a piece of input was refused: the field and the rule it broke.
//!
//! Every layer reports bad input the same way, so a form can show the message
//! next to the field and an API client can branch on the field's name. It is
//! plain data, so the browser and the server share one definition.
//!
//! A bindings document is refused by place (`global`, `workflows.<id>`,
//! `labels.checks.<key>`) rather than by form field: [`BindingProblem`]. It
//! lives here, with the other refusal, so the bindings and their labels
//! both report through it without importing each other.

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

/// A problem with a bindings document (bindings or their labels).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct BindingProblem {
    /// Where: `global`, or `workflows.<id>`.
    pub at: String,
    /// What is wrong, naming the offender.
    pub message: String,
}

/// The rule broken by `field` exactly, or (with `prefix`) by anything under
/// it (`tasks[2]` covers `tasks[2].text`), for showing one message next to
/// the field in a form; the first such problem wins.
pub fn problem_for(problems: &[FieldError], field: &str, prefix: bool) -> Option<String> {
    problems
        .iter()
        .find(|p| {
            p.field == field
                || (prefix
                    && p.field.starts_with(field)
                    && p.field[field.len()..].starts_with(['.', '[']))
        })
        .map(|p| p.rule.clone())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn problems() -> Vec<FieldError> {
        vec![
            FieldError::new("title", "must not be empty"),
            FieldError::new("tasks[1].text", "is too long"),
            FieldError::new("tasks[10]", "is a duplicate"),
            FieldError::new("title", "second title rule"),
        ]
    }

    #[test]
    fn a_field_gets_its_first_own_problem() {
        assert_eq!(
            problem_for(&problems(), "title", false).as_deref(),
            Some("must not be empty")
        );
        assert_eq!(problem_for(&problems(), "level", false), None);
    }

    #[test]
    fn a_prefix_covers_only_what_lies_under_the_field() {
        assert_eq!(
            problem_for(&problems(), "tasks[1]", true).as_deref(),
            Some("is too long")
        );
        assert_eq!(problem_for(&problems(), "tasks[1]", false), None);
        // `tasks[10]` is not under `tasks[1]`.
        assert_eq!(problem_for(&problems(), "tasks[", true), None);
        assert_eq!(
            problem_for(&problems(), "tasks", true).as_deref(),
            Some("is too long")
        );
    }
}
