//! A lesson's tool configuration as stored and edited: each tutor tool on
//! or off, when it fires, the teacher's instructions, checked whole.

use crate::domain::error::FieldError;
use crate::domain::lesson::optimise::trimmed;
use crate::domain::lesson::tools::{tutor_tool, TUTOR_TOOLS};
use crate::domain::lesson::trigger::TriggerCondition;
use serde::{Deserialize, Serialize};
use std::collections::BTreeSet;

/// Longest per-tool or global instruction, in characters.
pub const MAX_INSTRUCTION_CHARS: usize = 2000;

/// One tool's settings in a lesson.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ToolConfig {
    /// Catalogue id (`mark_for_review`…).
    pub tool_id: String,
    /// Whether the model gets this tool at all.
    pub enabled: bool,
    /// When it should fire.
    pub trigger_condition: TriggerCondition,
    /// Extra words from the teacher, appended to the trigger instruction.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub custom_instructions: Option<String>,
}

impl ToolConfig {
    /// The catalogue's default settings for `id`, enabled or not.
    pub fn default_for(id: &str, enabled: bool) -> Option<Self> {
        tutor_tool(id).map(|tool| Self {
            tool_id: tool.id.to_owned(),
            enabled,
            trigger_condition: tool.default_trigger.default_condition(),
            custom_instructions: None,
        })
    }

    /// The custom instructions if they say anything.
    pub fn instructions(&self) -> Option<&str> {
        self.custom_instructions
            .as_deref()
            .map(trimmed)
            .filter(|s| !s.is_empty())
    }
}

/// All of a lesson's tool settings.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct LessonToolConfiguration {
    /// One entry per configured tool.
    pub tools: Vec<ToolConfig>,
    /// Words put before the per-tool lines in the functions section.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub global_instructions: Option<String>,
    /// Tools whose on/off state the teacher set by hand; smart defaults never
    /// change these again.
    #[serde(default, skip_serializing_if = "BTreeSet::is_empty")]
    pub teacher_choices: BTreeSet<String>,
    /// Whether a session opened for a student record puts the facts their
    /// earlier lessons learnt (`update_user_profile`) into this lesson's
    /// prompt (off unless the teacher opts in: a school may not want a
    /// lesson to know them).
    #[serde(default, skip_serializing_if = "is_false")]
    pub use_profile_facts: bool,
}

fn is_false(value: &bool) -> bool {
    !value
}

impl LessonToolConfiguration {
    /// The settings of `id`, if configured.
    pub fn tool(&self, id: &str) -> Option<&ToolConfig> {
        self.tools.iter().find(|t| t.tool_id == id)
    }

    /// Mutable settings of `id`, if configured.
    pub fn tool_mut(&mut self, id: &str) -> Option<&mut ToolConfig> {
        self.tools.iter_mut().find(|t| t.tool_id == id)
    }

    /// Whether `id` is configured and enabled.
    pub fn is_enabled(&self, id: &str) -> bool {
        self.tool(id).is_some_and(|t| t.enabled)
    }

    /// Enabled tools in catalogue order (the order prompts use), skipping
    /// unknown ids.
    pub fn enabled_in_catalogue_order(&self) -> Vec<&ToolConfig> {
        TUTOR_TOOLS
            .iter()
            .filter_map(|tool| self.tool(tool.id).filter(|t| t.enabled))
            .collect()
    }

    /// The global instructions if they say anything.
    pub fn global(&self) -> Option<&str> {
        self.global_instructions
            .as_deref()
            .map(trimmed)
            .filter(|s| !s.is_empty())
    }

    /// Every rule the configuration breaks, each naming the field (as a JSON
    /// path) and, for tool settings, the tool. Empty means valid.
    pub fn problems(&self) -> Vec<FieldError> {
        let mut problems = Vec::new();
        let mut seen = BTreeSet::new();
        for (i, config) in self.tools.iter().enumerate() {
            let at = |field: &str| format!("tools[{i}].{field}");
            let Some(tool) = tutor_tool(&config.tool_id) else {
                problems.push(FieldError::new(
                    at("toolId"),
                    format!("unknown tool id \"{}\"", config.tool_id),
                ));
                continue;
            };
            let named = format!("{} ({})", tool.name, tool.id);
            if !seen.insert(tool.id) {
                problems.push(FieldError::new(
                    at("toolId"),
                    format!("{named} is listed twice"),
                ));
            }
            let kind = config.trigger_condition.kind();
            if !tool.allows(kind) {
                let allowed: Vec<&str> = tool.allowed.iter().map(|k| k.as_str()).collect();
                problems.push(FieldError::new(
                    at("triggerCondition.type"),
                    format!(
                        "{named}: trigger {kind} is not allowed; allowed: {}",
                        allowed.join(", ")
                    ),
                ));
            } else if let Err((field, rule)) = config.trigger_condition.check() {
                problems.push(FieldError::new(
                    at(&format!("triggerCondition.{field}")),
                    format!("{named}: {rule}"),
                ));
            }
            if let Some(text) = &config.custom_instructions {
                if text.chars().count() > MAX_INSTRUCTION_CHARS {
                    problems.push(FieldError::new(
                        at("customInstructions"),
                        format!("{named}: custom instructions are longer than {MAX_INSTRUCTION_CHARS} characters"),
                    ));
                }
            }
        }
        if let Some(text) = &self.global_instructions {
            if text.chars().count() > MAX_INSTRUCTION_CHARS {
                problems.push(FieldError::new(
                    "globalInstructions",
                    format!(
                        "global instructions are longer than {MAX_INSTRUCTION_CHARS} characters"
                    ),
                ));
            }
        }
        for id in &self.teacher_choices {
            if tutor_tool(id).is_none() {
                problems.push(FieldError::new(
                    "teacherChoices",
                    format!("unknown tool id \"{id}\""),
                ));
            }
        }
        problems
    }

    /// The configuration if it breaks no rule, else the first problem.
    pub fn validate(&self) -> Result<(), FieldError> {
        match self.problems().into_iter().next() {
            Some(problem) => Err(problem),
            None => Ok(()),
        }
    }

    /// Records the teacher's own on/off choice for `id`, which smart defaults
    /// will respect from then on.
    pub fn set_enabled_by_teacher(&mut self, id: &str, enabled: bool) {
        if self.tool(id).is_none() {
            if let Some(config) = ToolConfig::default_for(id, enabled) {
                self.tools.push(config);
            }
        }
        if let Some(config) = self.tool_mut(id) {
            config.enabled = enabled;
            self.teacher_choices.insert(id.to_owned());
        }
    }
}
