//! Where a live session is: its workflow, the step within it and its named
//! checks, plus the names of the checks and the step every session starts
//! at.
//!
//! A leaf (it imports nothing else of the domain) because everything reads
//! it: effects change it, the catalogue names its checks, events carry it,
//! the visualiser shows it. Kept apart from the events that carry it so a
//! module that only needs the state need not import the session's events.

use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

/// Check set by a successful identity check; banking tools refuse without it.
pub const IDENTITY_VERIFIED: &str = "identity_verified";
/// Check set when `lookup_account` finds the account.
pub const ACCOUNT_FOUND: &str = "account_found";

/// The step every session starts at (and is back at after a workflow switch).
pub const START_STEP: &str = "started";

/// Where a session is: its workflow, the step within it, and named checks
/// (absent = not yet known).
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct WorkflowState {
    /// Workflow id (`idv`).
    pub current_workflow: String,
    /// Step within it, as the last tool call left it (`awaiting_identity`).
    pub current_step: String,
    /// Named checks such as `identity_verified`.
    pub checks: BTreeMap<String, bool>,
    /// Failed identity checks so far; at [`MAX_FAILED_IDENTITY_CHECKS`] the
    /// session may not try again (a caller guessing dates of birth).
    #[serde(default, skip_serializing_if = "is_zero")]
    pub failed_identity_checks: u32,
    /// For a session in a vibe: the vibe and its current agent. Their tools
    /// (core ∪ the agent's) are the session's, instead of a workflow's.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub agent: Option<AgentContext>,
    /// The workflow step (a `workflow_def::Step` uuid) the session is in,
    /// when its workflow has steps: that step's tools join the workflow's.
    /// Not `current_step`, which is an outcome label.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub workflow_step: Option<String>,
}

/// The vibe a session runs in and the agent it is talking to now.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct AgentContext {
    /// The vibe (`todos`).
    pub vibe: String,
    /// The current agent (`Oliver`).
    pub agent: String,
}

/// Failed `perform_idv_check` calls a session may make before identity
/// checks are locked for it.
pub const MAX_FAILED_IDENTITY_CHECKS: u32 = 5;

fn is_zero(n: &u32) -> bool {
    *n == 0
}

impl WorkflowState {
    /// A fresh session in `workflow`.
    pub fn start(workflow: &str) -> Self {
        Self {
            current_workflow: workflow.to_owned(),
            current_step: START_STEP.into(),
            checks: BTreeMap::new(),
            failed_identity_checks: 0,
            agent: None,
            workflow_step: None,
        }
    }

    /// Whether `check` is known to be true.
    pub fn passed(&self, check: &str) -> bool {
        self.checks.get(check).copied().unwrap_or(false)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn checks_are_unknown_until_set() {
        let mut state = WorkflowState::start("idv");
        assert!(!state.passed(IDENTITY_VERIFIED));
        assert_eq!(state.checks.get(IDENTITY_VERIFIED), None);
        state.checks.insert(IDENTITY_VERIFIED.into(), false);
        assert!(!state.passed(IDENTITY_VERIFIED));
        state.checks.insert(IDENTITY_VERIFIED.into(), true);
        assert!(state.passed(IDENTITY_VERIFIED));
    }
}
