//! A backend's change to a session's state (`PATCH …/state`), checked
//! before it is applied, and which checks a change flipped.

use crate::domain::limits::SESSION_OWN_CHECKS_MAX;
use crate::domain::workflow_state::WorkflowState;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

/// `PATCH /api/sessions/{id}/state`: a backend that tracks the
/// conversation itself sets the step and checks.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct StatePatch {
    /// The step the session is at now.
    #[serde(default)]
    pub active_step: Option<String>,
    /// The workflow step (uuid) the session moves to; its tools join the
    /// workflow's.
    #[serde(default)]
    pub workflow_step: Option<String>,
    /// Checks to set.
    #[serde(default)]
    pub checks: BTreeMap<String, bool>,
}

impl StatePatch {
    /// The same change as an effect branch, so it is validated and applied
    /// by the same code (field names as in this body).
    pub fn change(
        &self,
    ) -> Result<crate::domain::effect::StateChange, crate::domain::error::FieldError> {
        let change = crate::domain::effect::StateChange {
            checks: self.checks.clone(),
            step: self.active_step.clone(),
        };
        match change.problems("state").into_iter().next() {
            Some(mut p) => {
                p.field = p
                    .field
                    .replace("state.step", "activeStep")
                    .replace("state.checks", "checks");
                Err(p)
            }
            None => Ok(change),
        }
    }
}

/// Refuses a change from `before` to `after` that leaves the session with
/// more than [`SESSION_OWN_CHECKS_MAX`] checks nothing declares (`declared`
/// says which are), unless it had that many already and adds none: a
/// backend's own checks are bounded, the catalogue's are bounded by it.
pub fn own_checks_problem(
    before: &WorkflowState,
    after: &WorkflowState,
    declared: impl Fn(&str) -> bool,
) -> Option<crate::domain::error::FieldError> {
    let own = |ws: &WorkflowState| ws.checks.keys().filter(|c| !declared(c)).count();
    let (was, now) = (own(before), own(after));
    (now > SESSION_OWN_CHECKS_MAX && now > was).then(|| {
        crate::domain::error::FieldError::new(
            "checks",
            format!(
                "a session may hold at most {SESSION_OWN_CHECKS_MAX} checks that its workflow, lesson or vibe does not declare; this change would make {now}"
            ),
        )
    })
}

/// The checks whose value `checks` sets anew or differently from `old`: the
/// ones the visualiser makes pulse.
pub fn changed_checks(old: &WorkflowState, checks: &BTreeMap<String, bool>) -> Vec<String> {
    checks
        .iter()
        .filter(|(k, v)| old.checks.get(*k) != Some(v))
        .map(|(k, _)| k.clone())
        .collect()
}
