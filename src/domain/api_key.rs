//! API keys as admins see them: listed by name and prefix, the secret shown
//! only once, at creation.
//!
//! The store builds these and the admin panel shows them, so they are shared
//! domain data rather than server-function types.

use crate::domain::error::FieldError;
use serde::{Deserialize, Serialize};
use std::fmt;

/// The prefix of an API key's secret (`sb_…`), which tells it apart from
/// a session's tokens where a route takes either.
pub const API_KEY_PREFIX: &str = "sb_";

/// What an API key may do. A backend gets only the scopes it needs, so a
/// leaked voice-agent key cannot rewrite the tool policy.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(try_from = "String", into = "String")]
pub enum Scope {
    /// Open and drive agent sessions (`/api/sessions…`).
    Sessions,
    /// Read lesson prompts (`GET /api/lessons/{id}/prompt`).
    LessonsRead,
    /// Read the tool bindings (`GET /api/bindings`).
    BindingsRead,
    /// Replace the tool bindings (`PUT /api/bindings`).
    BindingsWrite,
    /// Read agents and vibes (`GET /api/vibes…`, `GET /api/agents/…`).
    VibesRead,
    /// Change agents and vibes (`PUT /api/vibes/…`, `PUT /api/agents/…`).
    VibesWrite,
    /// Read and edit workflow definitions (`/api/workflows/…`, the
    /// workflow-editing MCP server).
    WorkflowsWrite,
    /// Add catalogue tools or change them (schema, requirements, effects,
    /// category, description) by any door: `PUT /api/catalogue/tools/…`,
    /// a manifest import that carries a changed tool, a restore. Separate
    /// from `vibes:write` because a tool's requirements are policy: without
    /// it, emptying `check_balance`'s `requires` would be an agent edit.
    CatalogueWrite,
    /// Students, acting as the user who made the key (a teacher's own
    /// students, an admin's all): list, add and read them, export a
    /// student's data, delete a student with everything of theirs
    /// (`/api/students…`); for an admin's key also the retention sweep
    /// (`/api/retention`).
    Students,
    /// Create accounts, change their roles, disable and re-enable them
    /// (`/api/accounts…`): a school's own systems provisioning teachers.
    AccountsWrite,
}

impl Scope {
    /// Every scope, in the order the panel lists them.
    pub const ALL: [Scope; 10] = [
        Scope::Sessions,
        Scope::LessonsRead,
        Scope::BindingsRead,
        Scope::BindingsWrite,
        Scope::VibesRead,
        Scope::VibesWrite,
        Scope::WorkflowsWrite,
        Scope::CatalogueWrite,
        Scope::Students,
        Scope::AccountsWrite,
    ];

    /// The scopes a teacher's key may hold: a teacher's own powers in the
    /// browser (running and watching their lessons' sessions, reading
    /// their lessons' prompts, their own students' records, which the key
    /// reaches as its maker does); the others are the admin role's.
    pub const TEACHER: [Scope; 3] = [Scope::Sessions, Scope::LessonsRead, Scope::Students];

    /// What keys made before scopes existed were allowed: everything but
    /// replacing the bindings.
    pub const LEGACY: [Scope; 3] = [Scope::Sessions, Scope::LessonsRead, Scope::BindingsRead];

    /// The name used in the API, the database and error messages.
    pub fn as_str(self) -> &'static str {
        match self {
            Scope::Sessions => "sessions",
            Scope::LessonsRead => "lessons:read",
            Scope::BindingsRead => "bindings:read",
            Scope::BindingsWrite => "bindings:write",
            Scope::VibesRead => "vibes:read",
            Scope::VibesWrite => "vibes:write",
            Scope::WorkflowsWrite => "workflows:write",
            Scope::CatalogueWrite => "catalogue:write",
            Scope::Students => "students",
            Scope::AccountsWrite => "accounts:write",
        }
    }

    /// One line for the admin panel.
    pub fn description(self) -> &'static str {
        match self {
            Scope::Sessions => "open and drive agent sessions",
            Scope::LessonsRead => "read lesson prompts",
            Scope::BindingsRead => "read the tool bindings",
            Scope::BindingsWrite => "replace the tool bindings",
            Scope::VibesRead => "read agents and vibes",
            Scope::VibesWrite => "change agents and vibes",
            Scope::WorkflowsWrite => "read and edit workflow definitions",
            Scope::CatalogueWrite => "add and change catalogue tools, restore catalogue versions",
            Scope::Students => "list, add, read, export and delete the students of the key's user",
            Scope::AccountsWrite => "create accounts, change roles, disable and enable them",
        }
    }

    /// Parses a scope name.
    pub fn parse(raw: &str) -> Result<Self, FieldError> {
        Scope::ALL
            .into_iter()
            .find(|s| s.as_str() == raw)
            .ok_or_else(|| {
                FieldError::new(
                    "scopes",
                    format!(
                        "\"{}\" is not a scope; use {}",
                        crate::domain::limits::excerpt(raw),
                        Scope::ALL.map(Scope::as_str).join(", ")
                    ),
                )
            })
    }

    /// Parses a list of scope names: at least one, none unknown, no
    /// repeats (sorted in panel order).
    pub fn parse_list<S: AsRef<str>>(raw: &[S]) -> Result<Vec<Scope>, FieldError> {
        let mut scopes = raw
            .iter()
            .map(|s| Scope::parse(s.as_ref().trim()))
            .collect::<Result<Vec<_>, _>>()?;
        scopes.sort();
        scopes.dedup();
        if scopes.is_empty() {
            return Err(FieldError::new("scopes", "choose at least one scope"));
        }
        Ok(scopes)
    }
}

impl fmt::Display for Scope {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

impl TryFrom<String> for Scope {
    type Error = FieldError;
    fn try_from(value: String) -> Result<Self, Self::Error> {
        Scope::parse(&value)
    }
}

impl From<Scope> for String {
    fn from(scope: Scope) -> Self {
        scope.as_str().to_owned()
    }
}

/// A key as listed (never its secret).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ApiKeyView {
    /// Id, for revoking.
    pub id: i64,
    /// What it is for ("Gemini Live backend").
    pub name: String,
    /// The first characters, to tell keys apart.
    pub prefix: String,
    /// Unix seconds.
    pub created_at: i64,
    /// What it may do.
    pub scopes: Vec<Scope>,
    /// Last authenticated request, Unix seconds (to the minute); `None`
    /// if never used.
    pub last_used_at: Option<i64>,
    /// Revoked keys are kept for the record.
    pub revoked: bool,
    /// The name of the account that made it, whose sessions it sees (in
    /// the admins' list); `None` once that account is gone.
    #[serde(default)]
    pub owner: Option<String>,
}

/// A freshly created key: the only time the secret is shown.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct CreatedApiKey {
    /// The secret, for `Authorization: Bearer …`.
    pub secret: String,
    /// Its listing.
    pub key: ApiKeyView,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn scope_names_round_trip() {
        for scope in Scope::ALL {
            assert_eq!(Scope::parse(scope.as_str()), Ok(scope));
        }
    }

    #[test]
    fn a_scope_list_is_sorted_deduplicated_and_never_empty() {
        assert_eq!(
            Scope::parse_list(&["bindings:write", "sessions", "sessions"]),
            Ok(vec![Scope::Sessions, Scope::BindingsWrite])
        );
        assert_eq!(Scope::parse_list::<&str>(&[]).unwrap_err().field, "scopes");
        let err = Scope::parse_list(&["admin"]).unwrap_err();
        assert!(
            err.rule.contains("\"admin\" is not a scope"),
            "{}",
            err.rule
        );
    }
}
