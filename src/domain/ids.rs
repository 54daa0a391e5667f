//! The id newtypes (`ToolId`, `WorkflowId`, `AgentId`, `VibeId`), made by one
//! macro: each is a string parsed once, so a value of the type is known to
//! satisfy its rule wherever it goes.
//!
//! A leaf (it imports only `error` and `limits`): ids are what the
//! catalogue, workflows, plugins and vibes name each other by, so keeping
//! them apart from those modules is what lets them not import each other.

use crate::domain::error::FieldError;
use crate::domain::limits::{excerpt, ID_MAX_BYTES};
use serde::{Deserialize, Serialize};
use std::fmt;

/// Defines an id newtype over `String`: `parse` (refusing with the field
/// `id` and "`what` id "…" must be `rule`"), `as_str`, `Display`, and serde
/// through `String` so a stored or posted id is parsed like a typed one.
macro_rules! id_type {
    ($(#[$doc:meta])* $name:ident, $what:literal, $check:expr, $rule:literal) => {
        $(#[$doc])*
        #[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
        #[serde(try_from = "String", into = "String")]
        pub struct $name(String);

        impl $name {
            #[doc = concat!("Accepts ", $rule, ".")]
            pub fn parse(raw: &str) -> Result<Self, FieldError> {
                let check: fn(&str) -> bool = $check;
                if check(raw) {
                    Ok(Self(raw.to_owned()))
                } else {
                    Err(FieldError::new(
                        "id",
                        format!(concat!($what, " id \"{}\" must be ", $rule), excerpt(raw)),
                    ))
                }
            }

            /// The id.
            pub fn as_str(&self) -> &str {
                &self.0
            }
        }

        impl TryFrom<String> for $name {
            type Error = FieldError;
            fn try_from(value: String) -> Result<Self, Self::Error> {
                Self::parse(&value)
            }
        }

        impl From<$name> for String {
            fn from(value: $name) -> Self {
                value.0
            }
        }

        impl fmt::Display for $name {
            fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str(&self.0)
            }
        }
    };
}

/// 1–[`ID_MAX_BYTES`] ASCII letters, digits, `_` and `-`: a function name
/// every provider accepts.
fn is_name(raw: &str) -> bool {
    !raw.is_empty()
        && raw.len() <= ID_MAX_BYTES
        && raw
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b == b'_' || b == b'-')
}

/// 1–[`ID_MAX_BYTES`] of `a-z`, `0-9` and `-`, not starting with `-`: a slug
/// that reads well in a URL.
fn is_slug(raw: &str) -> bool {
    !raw.is_empty()
        && raw.len() <= ID_MAX_BYTES
        && !raw.starts_with('-')
        && raw
            .bytes()
            .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'-')
}

id_type!(
    /// A tool (function) name: `^[a-zA-Z0-9_-]{1,64}$`, the limit Gemini,
    /// OpenAI and Anthropic all enforce on function names.
    ToolId,
    "tool",
    is_name,
    "1-64 characters of a-z, A-Z, 0-9, _ or -"
);

id_type!(
    /// A workflow id: a lower-case slug (`banking-master`), 1–64 characters.
    WorkflowId,
    "workflow",
    is_slug,
    "a slug of 1-64 characters: a-z, 0-9 and -"
);

id_type!(
    /// An agent id (`Oliver`): 1–64 characters of a-z, A-Z, 0-9, _ or -.
    AgentId,
    "agent",
    is_name,
    "1-64 characters of a-z, A-Z, 0-9, _ or -"
);

id_type!(
    /// A vibe id: a lower-case slug (`todos`), 1–64 characters.
    VibeId,
    "vibe",
    is_slug,
    "a slug of 1-64 characters: a-z, 0-9 and -"
);

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_take_mixed_case_and_underscores_slugs_do_not() {
        assert!(ToolId::parse("check_Balance-2").is_ok());
        assert!(AgentId::parse("Oliver").is_ok());
        assert!(WorkflowId::parse("banking-master").is_ok());
        assert!(VibeId::parse("Todos").is_err());
        assert!(WorkflowId::parse("-lead").is_err());
        assert!(WorkflowId::parse("a_b").is_err());
    }

    #[test]
    fn ids_longer_than_the_limit_or_empty_are_refused_naming_the_kind() {
        let long = "a".repeat(ID_MAX_BYTES + 1);
        assert!(ToolId::parse(&"a".repeat(ID_MAX_BYTES)).is_ok());
        let err = ToolId::parse(&long).unwrap_err();
        assert_eq!(err.field, "id");
        assert!(err.rule.starts_with("tool id \""), "{}", err.rule);
        assert!(VibeId::parse("").unwrap_err().rule.starts_with("vibe id"));
    }

    #[test]
    fn ids_go_through_json_as_strings_and_are_parsed_on_the_way_in() {
        let id: WorkflowId = serde_json::from_str("\"idv\"").unwrap();
        assert_eq!(serde_json::to_string(&id).unwrap(), "\"idv\"");
        assert_eq!(id.to_string(), "idv");
        assert!(serde_json::from_str::<WorkflowId>("\"Not A Slug\"").is_err());
    }
}
