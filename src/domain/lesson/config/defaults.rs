//! Smart defaults: the configuration a lesson starts with, and the
//! changes that follow the lesson form (a lesson without tasks loses
//! Task Completion, a review lesson gains the review tools).

use super::configuration::{LessonToolConfiguration, ToolConfig};
use super::facts::{LessonFacts, REVIEW_TOOLS, SUMMARY_TOOL, TASK_TOOL};
use super::preset::Preset;
use crate::domain::lesson::tools::tutor_tool;
use crate::domain::lesson::trigger::TriggerKind;
use serde::{Deserialize, Serialize};

/// The configuration a lesson starts with when nobody chose one (a new
/// lesson, or one stored before tools could be configured): the standard
/// lesson's tools brought in line with the lesson by smart defaults, so a
/// lesson without tasks does not get Task Completion.
pub fn default_configuration(facts: LessonFacts) -> LessonToolConfiguration {
    let mut config = Preset::StandardLesson.configuration();
    apply_smart_defaults(&mut config, facts);
    config
}

/// A change smart defaults made, to tell the teacher about.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct AutoChange {
    /// The tool that changed.
    pub tool_id: String,
    /// What to show ("Task tracking enabled automatically").
    pub message: String,
}

/// What smart defaults want for one tool they look after.
struct Want {
    /// The tool.
    id: &'static str,
    /// Its trigger if smart defaults add it.
    kind: TriggerKind,
    /// Whether the lesson wants it on.
    on: bool,
    /// Only add it when missing; never switch it.
    only_if_missing: bool,
    /// Notice when switched on.
    on_message: &'static str,
    /// Notice when switched off.
    off_message: &'static str,
}

/// What smart defaults want for each tool they look after, given the lesson.
fn wanted(facts: LessonFacts) -> [Want; 4] {
    [
        Want {
            id: TASK_TOOL,
            kind: TriggerKind::TaskContext,
            on: facts.has_tasks,
            only_if_missing: false,
            on_message: "Task tracking enabled automatically",
            off_message: "Task tracking turned off automatically: the lesson has no tasks",
        },
        Want {
            id: REVIEW_TOOLS[0],
            kind: TriggerKind::Always,
            on: facts.is_review,
            only_if_missing: false,
            on_message: "Mastery marking enabled automatically for a review lesson",
            off_message: "Mastery marking turned off automatically: not a review lesson",
        },
        Want {
            id: REVIEW_TOOLS[1],
            kind: TriggerKind::Always,
            on: facts.is_review,
            only_if_missing: false,
            on_message: "Audio playback enabled automatically for a review lesson",
            off_message: "Audio playback turned off automatically: not a review lesson",
        },
        Want {
            id: SUMMARY_TOOL,
            kind: TriggerKind::SessionEnding,
            on: true,
            only_if_missing: true,
            on_message: "Session summary added automatically",
            off_message: "",
        },
    ]
}

/// Brings `config` in line with the lesson: Task Completion on exactly when
/// there are tasks; Mastery Marking and Audio Playback on exactly in a review
/// lesson; Session Summary added if missing. A tool the teacher chose —
/// switched by hand, or set by picking a preset (`teacher_choices`) — is
/// never changed: for those smart defaults only suggest (see
/// [`suggestions`]). Returns what changed; applying it again changes nothing.
pub fn apply_smart_defaults(
    config: &mut LessonToolConfiguration,
    facts: LessonFacts,
) -> Vec<AutoChange> {
    let mut changes = Vec::new();
    for want in wanted(facts) {
        if config.teacher_choices.contains(want.id) {
            continue;
        }
        let message = match config.tool_mut(want.id) {
            Some(_) if want.only_if_missing => None,
            Some(existing) if existing.enabled == want.on => None,
            Some(existing) => {
                existing.enabled = want.on;
                Some(if want.on {
                    want.on_message
                } else {
                    want.off_message
                })
            }
            None if want.on => {
                config.tools.push(ToolConfig {
                    tool_id: want.id.to_owned(),
                    enabled: true,
                    trigger_condition: want.kind.default_condition(),
                    custom_instructions: None,
                });
                Some(want.on_message)
            }
            None => None,
        };
        if let Some(message) = message {
            changes.push(AutoChange {
                tool_id: want.id.to_owned(),
                message: message.to_owned(),
            });
        }
    }
    changes
}

/// What smart defaults would switch on but may not, because the teacher
/// chose that tool's state: each one is shown as a notice with a button that
/// applies it. (Their opposite — a chosen tool the lesson cannot use — is a
/// contradiction, see `advice`.)
pub fn suggestions(config: &LessonToolConfiguration, facts: LessonFacts) -> Vec<AutoChange> {
    wanted(facts)
        .into_iter()
        .filter(|w| {
            w.on && !w.only_if_missing
                && config.teacher_choices.contains(w.id)
                && !config.is_enabled(w.id)
        })
        .map(|Want { id, .. }| {
            let name = tutor_tool(id).map_or(id, |t| t.name);
            let why = if id == TASK_TOOL {
                "This lesson has tasks"
            } else {
                "This is a review lesson"
            };
            AutoChange {
                tool_id: id.to_owned(),
                message: format!("{why}, but {name} is off."),
            }
        })
        .collect()
}
