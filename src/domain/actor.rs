//! Who changes the tool policy, and which powers come with who they are.
//!
//! The catalogue (which tools exist, their schemas, requirements, effects
//! and categories) and the tool bindings (where each tool may be called)
//! together decide what an agent may do. Each door that changes them —
//! a server function, a JSON route, the workflow-editing MCP server, a seed
//! at start-up — names its actor once, and the rules below answer for every
//! door alike, so a new door cannot forget a power.

use crate::domain::api_key::Scope;
use serde::{Deserialize, Serialize};

/// What an actor is, as far as powers go.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub enum Standing {
    /// A signed-in admin in the browser: holds every power (an admin also
    /// edits the bindings, so no power is out of their reach anyway).
    Admin,
    /// An API key with these scopes.
    Key(Vec<Scope>),
    /// Switchboard itself: seeding a new database, a directory named in the
    /// configuration at start-up.
    System,
}

/// Who makes a change: the name the history records and what they may do.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Actor {
    /// How the change is attributed: an admin's e-mail, `API key “ide”`,
    /// or what the system did it from (`Demo catalogue`).
    pub name: String,
    /// The admin's account id, kept with the history (`None` otherwise).
    pub user_id: Option<i64>,
    /// What they are.
    pub standing: Standing,
}

impl Actor {
    /// A signed-in admin, attributed by e-mail.
    pub fn admin(user_id: i64, email: &str) -> Self {
        Self {
            name: email.to_owned(),
            user_id: Some(user_id),
            standing: Standing::Admin,
        }
    }

    /// An API key named `key_name` with `scopes`, attributed as
    /// `API key “name”`.
    pub fn key(key_name: &str, scopes: &[Scope]) -> Self {
        Self {
            name: format!("API key “{key_name}”"),
            user_id: None,
            standing: Standing::Key(scopes.to_vec()),
        }
    }

    /// Switchboard itself, attributed as `name`.
    pub fn system(name: &str) -> Self {
        Self {
            name: name.to_owned(),
            user_id: None,
            standing: Standing::System,
        }
    }

    /// The scope a change of the catalogue's tools needs from a key: adding
    /// a tool, or changing any field of one (its schema, requirements,
    /// effects, category, and the description the model reads).
    pub const CATALOGUE_SCOPE: Scope = Scope::CatalogueWrite;

    /// Whether this actor may add catalogue tools or change them: an admin,
    /// the system, or a key with [`Self::CATALOGUE_SCOPE`].
    pub fn may_change_catalogue(&self) -> bool {
        match &self.standing {
            Standing::Admin | Standing::System => true,
            Standing::Key(scopes) => scopes.contains(&Self::CATALOGUE_SCOPE),
        }
    }

    /// Whether the tools this actor puts on a workflow step must be ones
    /// the bindings already allow in that workflow. True for every API key
    /// (`workflows:write` edits steps, not the policy), so the bindings stay
    /// the one policy an admin reads; an admin, who edits the bindings too,
    /// may give a step a tool of its own.
    pub fn step_tools_within_bindings(&self) -> bool {
        matches!(self.standing, Standing::Key(_))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_a_key_with_catalogue_write_may_change_the_catalogue() {
        assert!(Actor::admin(1, "admin@example.com").may_change_catalogue());
        assert!(Actor::system("Demo catalogue").may_change_catalogue());
        assert!(Actor::key("ci", &[Scope::CatalogueWrite]).may_change_catalogue());
        let vibes = Actor::key("vibes", &[Scope::VibesRead, Scope::VibesWrite]);
        assert!(!vibes.may_change_catalogue());
        assert!(
            !Actor::key("all but", &[Scope::BindingsWrite, Scope::WorkflowsWrite])
                .may_change_catalogue()
        );
    }

    #[test]
    fn keys_put_only_bound_tools_on_steps_and_admins_any() {
        assert!(Actor::key("ide", &Scope::ALL).step_tools_within_bindings());
        assert!(!Actor::admin(1, "admin@example.com").step_tools_within_bindings());
        assert!(!Actor::system("seed").step_tools_within_bindings());
    }

    #[test]
    fn actors_are_attributed_by_email_key_name_or_source() {
        assert_eq!(Actor::admin(3, "a@b.c").name, "a@b.c");
        assert_eq!(Actor::admin(3, "a@b.c").user_id, Some(3));
        assert_eq!(Actor::key("ci", &[]).name, "API key “ci”");
        assert_eq!(Actor::system("Demo catalogue").name, "Demo catalogue");
    }
}
