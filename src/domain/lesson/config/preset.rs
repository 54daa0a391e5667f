//! The presets a teacher starts from, and which preset a configuration
//! still is.

use super::configuration::{LessonToolConfiguration, ToolConfig};
use super::facts::{fits_lesson, LessonFacts};
use crate::domain::lesson::tools::TUTOR_TOOLS;
use crate::domain::lesson::trigger::TriggerKind;
use serde::{Deserialize, Serialize};
use std::collections::BTreeSet;

/// A ready-made configuration for a common kind of lesson.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Preset {
    /// Error tracking, profile, summary, task completion.
    StandardLesson,
    /// Error tracking, mastery, audio playback, summary.
    ReviewLesson,
    /// Just error tracking and the summary.
    ConversationOnly,
    /// No tools at all.
    NoTracking,
}

impl Preset {
    /// Every preset, in menu order.
    pub const ALL: [Preset; 4] = [
        Self::StandardLesson,
        Self::ReviewLesson,
        Self::ConversationOnly,
        Self::NoTracking,
    ];

    /// The wire spelling.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::StandardLesson => "standard_lesson",
            Self::ReviewLesson => "review_lesson",
            Self::ConversationOnly => "conversation_only",
            Self::NoTracking => "no_tracking",
        }
    }

    /// Parses the wire spelling.
    pub fn parse(raw: &str) -> Option<Self> {
        Self::ALL.into_iter().find(|p| p.as_str() == raw)
    }

    /// The menu label.
    pub fn label(self) -> &'static str {
        match self {
            Self::StandardLesson => "Standard lesson",
            Self::ReviewLesson => "Review lesson",
            Self::ConversationOnly => "Conversation only",
            Self::NoTracking => "No tracking",
        }
    }

    /// The enabled tools and their triggers.
    fn enabled(self) -> &'static [(&'static str, TriggerKind)] {
        use TriggerKind::*;
        match self {
            Self::StandardLesson => &[
                ("mark_for_review", ErrorDetected),
                ("update_user_profile", Always),
                ("show_session_summary", SessionEnding),
                ("mark_task_complete", TaskContext),
            ],
            Self::ReviewLesson => &[
                ("mark_for_review", ErrorDetected),
                ("mark_item_mastered", Always),
                ("play_student_audio", Always),
                ("show_session_summary", SessionEnding),
            ],
            Self::ConversationOnly => &[
                ("mark_for_review", ErrorDetected),
                ("show_session_summary", SessionEnding),
            ],
            Self::NoTracking => &[],
        }
    }

    /// The full configuration: all six tools listed, the preset's enabled
    /// with its triggers, the rest off at their defaults, so the panel always
    /// shows every tool.
    pub fn configuration(self) -> LessonToolConfiguration {
        let enabled = self.enabled();
        let tools = TUTOR_TOOLS
            .iter()
            .map(|tool| {
                let on = enabled.iter().find(|(id, _)| *id == tool.id);
                ToolConfig {
                    tool_id: tool.id.to_owned(),
                    enabled: on.is_some(),
                    trigger_condition: on
                        .map_or(tool.default_trigger, |(_, kind)| *kind)
                        .default_condition(),
                    custom_instructions: None,
                }
            })
            .collect();
        LessonToolConfiguration {
            tools,
            global_instructions: None,
            teacher_choices: BTreeSet::new(),
            use_profile_facts: false,
        }
    }

    /// The preset whose enabled tools and trigger kinds `config` has, if any
    /// (instructions and trigger parameters do not matter).
    pub fn matching(config: &LessonToolConfiguration) -> Option<Preset> {
        let have = shape(config, |_| true);
        Self::ALL
            .into_iter()
            .find(|p| shape(&p.configuration(), |_| true) == have)
    }

    /// The preset the menu shows for `config` on a lesson with `facts`: the
    /// exact match if there is one, else the preset whose tools `config` has
    /// once the tools the lesson cannot use are set aside — so a new lesson
    /// without tasks (standard tools, Task Completion off) still reads
    /// "Standard lesson" rather than "Custom".
    pub fn for_lesson(config: &LessonToolConfiguration, facts: LessonFacts) -> Option<Preset> {
        Self::matching(config).or_else(|| {
            let have = shape(config, |_| true);
            Self::ALL
                .into_iter()
                .find(|p| shape(&p.configuration(), |id| fits_lesson(id, facts)) == have)
        })
    }
}

/// The enabled tools of `config` that pass `keep`, with their trigger kinds:
/// what makes two configurations the same preset.
fn shape(
    config: &LessonToolConfiguration,
    keep: impl Fn(&str) -> bool,
) -> BTreeSet<(String, TriggerKind)> {
    config
        .tools
        .iter()
        .filter(|t| t.enabled && keep(&t.tool_id))
        .map(|t| (t.tool_id.clone(), t.trigger_condition.kind()))
        .collect()
}
