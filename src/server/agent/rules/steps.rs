//! The rules' part that workflow definitions bring: a session's step, and
//! the tools that step adds to its workflow's (an admin's grants always, a
//! key's only while the bindings allow them), with `go_to_step` when there
//! is another step to go to. Kept apart from the bindings' index it builds
//! on, so each file reads as one concern.

use super::Rules;
use crate::domain::agent_runner::GO_TO_STEP_TOOL;
use crate::domain::workflow_def::Definition;
use std::collections::HashMap;

impl Rules {
    /// Adds the workflows' definitions (their steps' tools join a
    /// session's while it is in that step).
    pub fn with_definitions(mut self, definitions: HashMap<String, Definition>) -> Self {
        self.definitions = definitions;
        self
    }

    /// Workflow `workflow`'s definition, if saved.
    pub fn definition(&self, workflow: &str) -> Option<&Definition> {
        self.definitions.get(workflow)
    }

    /// The step a session entering `workflow` starts in: its first, if it
    /// has steps.
    pub fn first_step(&self, workflow: &str) -> Option<String> {
        self.definition(workflow)?
            .steps
            .first()
            .map(|s| s.uuid.clone())
    }

    /// The tools of `workflow` while in step `step`: the workflow's (global
    /// and bound), then the step's own, then `go_to_step` when the
    /// workflow has another step to go to; but those withheld.
    pub fn available_at(&self, workflow: &str, step: Option<&str>) -> Vec<String> {
        self.offered(self.bound_at(workflow, step))
    }

    /// [`Rules::available_at`] with the withheld ones.
    pub fn bound_at(&self, workflow: &str, step: Option<&str>) -> Vec<String> {
        let mut tools = self.available(workflow);
        if let (Some(def), Some(step)) = (self.definition(workflow), step) {
            let moves = (def.steps.len() > 1 && self.tool(GO_TO_STEP_TOOL).is_some())
                .then_some(GO_TO_STEP_TOOL);
            // `tools` is the bindings' list here: a key's grant is in force
            // only while it is on it.
            let own: Vec<&str> = def
                .step_of(step)
                .into_iter()
                .flat_map(|s| s.tools_in_force(|t| tools.iter().any(|b| b == t)))
                .map(|t| t.as_str())
                .collect();
            for tool in own.into_iter().chain(moves) {
                if !tools.iter().any(|t| t == tool) {
                    tools.push(tool.to_owned());
                }
            }
        }
        tools
    }
}
