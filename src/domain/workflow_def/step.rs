//! A workflow's steps and their limits: what a step does, its prompt and
//! the tools it may enable.

use crate::domain::ids::ToolId;
use serde::{Deserialize, Serialize};

/// Most steps in one workflow.
pub const MAX_STEPS: usize = 50;

/// Longest step name, in characters.
pub const MAX_STEP_NAME_CHARS: usize = 80;

/// Longest step system prompt, in characters.
pub const MAX_PROMPT_CHARS: usize = 20_000;

/// Most tools one step may enable.
pub const MAX_STEP_TOOLS: usize = 100;

/// What a step does.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum StepType {
    /// A model turn with its own system prompt and no tools of its own.
    CustomLlm,
    /// An agent with a system prompt and tools it may call in this step.
    CustomAgent,
}

impl StepType {
    /// Every step type, for listings.
    pub const ALL: [StepType; 2] = [StepType::CustomLlm, StepType::CustomAgent];

    /// Its id on the wire.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::CustomLlm => "custom_llm",
            Self::CustomAgent => "custom_agent",
        }
    }

    /// What it is, for a person or a model choosing one.
    pub fn description(self) -> &'static str {
        match self {
            Self::CustomLlm => "A model turn with its own system prompt; it has no tools.",
            Self::CustomAgent => {
                "An agent step with a system prompt and the catalogue tools it may call while the session is in this step."
            }
        }
    }

    /// Parses an id, naming the valid ones otherwise.
    pub fn parse(raw: &str) -> Result<Self, String> {
        Self::ALL
            .into_iter()
            .find(|t| t.as_str() == raw)
            .ok_or_else(|| {
                format!(
                    "there is no step type `{}`; step types: custom_llm, custom_agent",
                    crate::domain::limits::excerpt(raw)
                )
            })
    }
}

/// One step of a workflow.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Step {
    /// Its id, stable across renames and moves.
    pub uuid: String,
    /// What it does.
    pub step_type: StepType,
    /// What people call it.
    pub name: String,
    /// The model's instructions in this step.
    #[serde(default)]
    pub system_prompt: String,
    /// The tools the session may call in this step (custom_agent only).
    #[serde(default)]
    pub tools: Vec<ToolId>,
    /// Those of `tools` an API key gave, which are in force only while the
    /// bindings allow them in the workflow: a key may only give a step
    /// tools the bindings allow, so when an admin narrows the bindings its
    /// grant must narrow with them. Tools an admin gave are in force
    /// whatever the bindings say (as are those of definitions saved before
    /// this was recorded).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub bound_only: Vec<ToolId>,
}

impl Step {
    /// The tools this step adds to the workflow's, with `bound` saying
    /// whether the bindings allow a tool in the workflow: an admin's grants
    /// always, a key's only while bound.
    pub fn tools_in_force(&self, bound: impl Fn(&str) -> bool) -> Vec<&ToolId> {
        self.tools
            .iter()
            .filter(|t| !self.bound_only.contains(t) || bound(t.as_str()))
            .collect()
    }

    /// Whether `tool` is on this step but not in force: a key gave it and
    /// the bindings (`bound`) no longer allow it.
    pub fn lapsed(&self, tool: &str, bound: impl Fn(&str) -> bool) -> bool {
        self.bound_only.iter().any(|t| t.as_str() == tool) && !bound(tool)
    }
}
