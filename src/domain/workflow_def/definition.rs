//! A workflow's whole definition, its start trigger and ordered steps, as
//! stored and as the settings page and the workflow-editing agent read it.

use super::error::{refuse, EditError};
use super::step::Step;
use super::trigger::Trigger;
use crate::domain::ids::ToolId;
use serde::{Deserialize, Serialize};

/// Everything a workflow is beyond id, name and bound tools.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Definition {
    /// What starts it, once set.
    #[serde(default)]
    pub trigger: Option<Trigger>,
    /// Its steps, in order.
    #[serde(default)]
    pub steps: Vec<Step>,
}

impl Definition {
    /// The step `uuid`, or why there is none (naming the steps there are).
    pub fn step(&self, uuid: &str) -> Result<&Step, EditError> {
        self.steps.iter().find(|s| s.uuid == uuid).ok_or_else(|| {
            let known: Vec<String> = self
                .steps
                .iter()
                .map(|s| format!("{} ({})", s.uuid, s.name))
                .collect();
            refuse(
                "step_uuid",
                format!(
                    "there is no step `{}` in this workflow; steps: {}",
                    crate::domain::limits::excerpt(uuid),
                    if known.is_empty() {
                        "none yet".into()
                    } else {
                        known.join(", ")
                    }
                ),
            )
        })
    }

    pub(super) fn step_mut(&mut self, uuid: &str) -> Result<&mut Step, EditError> {
        self.step(uuid)?;
        Ok(self
            .steps
            .iter_mut()
            .find(|s| s.uuid == uuid)
            .expect("found above"))
    }

    /// The tools step `uuid` has (none for an unknown step), in force or
    /// not: see [`Step::tools_in_force`].
    pub fn step_tools(&self, uuid: &str) -> &[ToolId] {
        self.steps
            .iter()
            .find(|s| s.uuid == uuid)
            .map_or(&[], |s| s.tools.as_slice())
    }

    /// Step `uuid`, if the definition has it.
    pub fn step_of(&self, uuid: &str) -> Option<&Step> {
        self.steps.iter().find(|s| s.uuid == uuid)
    }

    /// Step `uuid`'s position and the tools it has that `allowed` (the
    /// tools the bindings allow in the workflow) leaves out; `None` when it
    /// has none such (or there is no such step).
    pub fn tools_outside(&self, uuid: &str, allowed: &[String]) -> Option<(usize, Vec<String>)> {
        let (i, step) = self
            .steps
            .iter()
            .enumerate()
            .find(|(_, s)| s.uuid == uuid)?;
        let outside: Vec<String> = step
            .tools
            .iter()
            .filter(|t| !allowed.iter().any(|a| a == t.as_str()))
            .map(ToString::to_string)
            .collect();
        (!outside.is_empty()).then_some((i, outside))
    }
}
