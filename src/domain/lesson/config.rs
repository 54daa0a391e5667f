//! A lesson's tool configuration: which tutor tools are on, when each fires,
//! and the teacher's extra instructions — plus presets, validation and the
//! smart defaults that follow the lesson form.
//!
//! Kept apart from the teacher's free-form prompt on purpose: editing the
//! prompt can no longer weaken or delete a tool instruction.

use crate::domain::error::FieldError;
use crate::domain::lesson::optimise::trimmed;
use crate::domain::lesson::tools::{tutor_tool, TUTOR_TOOLS};
use crate::domain::lesson::trigger::{TriggerCondition, TriggerKind};
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

/// Whether tool `id` can do anything in a lesson with `facts`: Task
/// Completion needs tasks to mark, and the review tools a review lesson's
/// items. An enabled tool that does not fit is a contradiction: the panel
/// warns about it and the prompt builder leaves it out.
pub fn fits_lesson(id: &str, facts: LessonFacts) -> bool {
    match id {
        TASK_TOOL => facts.has_tasks,
        _ if REVIEW_TOOLS.contains(&id) => facts.is_review && facts.has_review_items,
        _ => true,
    }
}

/// The tool that marks lesson objectives done; it needs tasks.
pub const TASK_TOOL: &str = "mark_task_complete";
/// The tools that only make sense in a review lesson.
pub const REVIEW_TOOLS: [&str; 2] = ["mark_item_mastered", "play_student_audio"];
/// The tool smart defaults add when a configuration lacks it.
pub const SUMMARY_TOOL: &str = "show_session_summary";

/// The configuration a lesson starts with when nobody chose one (a new
/// lesson, or one stored before tools could be configured): the standard
/// lesson's tools brought in line with the lesson by smart defaults, so a
/// lesson without tasks does not get Task Completion.
pub fn default_configuration(facts: LessonFacts) -> LessonToolConfiguration {
    let mut config = Preset::StandardLesson.configuration();
    apply_smart_defaults(&mut config, facts);
    config
}

/// The facts of the lesson form that smart defaults react to.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct LessonFacts {
    /// The lesson lists at least one task.
    pub has_tasks: bool,
    /// The lesson is a review lesson.
    pub is_review: bool,
    /// The lesson lists at least one review item (the review tools' ids).
    pub has_review_items: bool,
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

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn enabled(config: &LessonToolConfiguration) -> Vec<(&str, TriggerKind)> {
        config
            .enabled_in_catalogue_order()
            .into_iter()
            .map(|t| (t.tool_id.as_str(), t.trigger_condition.kind()))
            .collect()
    }

    #[test]
    fn every_preset_enables_exactly_its_tools_with_its_triggers() {
        use TriggerKind::*;
        assert_eq!(
            enabled(&Preset::StandardLesson.configuration()),
            [
                ("mark_for_review", ErrorDetected),
                ("update_user_profile", Always),
                ("show_session_summary", SessionEnding),
                ("mark_task_complete", TaskContext)
            ]
        );
        assert_eq!(
            enabled(&Preset::ReviewLesson.configuration()),
            [
                ("mark_for_review", ErrorDetected),
                ("show_session_summary", SessionEnding),
                ("mark_item_mastered", Always),
                ("play_student_audio", Always)
            ]
        );
        assert_eq!(
            enabled(&Preset::ConversationOnly.configuration()),
            [
                ("mark_for_review", ErrorDetected),
                ("show_session_summary", SessionEnding)
            ]
        );
        assert!(enabled(&Preset::NoTracking.configuration()).is_empty());
        for preset in Preset::ALL {
            let config = preset.configuration();
            assert_eq!(config.tools.len(), 6, "{preset:?} lists every tool");
            assert!(config.problems().is_empty(), "{preset:?} is valid");
            assert_eq!(Preset::matching(&config), Some(preset));
            assert_eq!(Preset::parse(preset.as_str()), Some(preset));
        }
    }

    #[test]
    fn the_configuration_json_is_camel_case_with_tagged_triggers() {
        let mut config = Preset::ConversationOnly.configuration();
        config.tools[0].custom_instructions = Some("Focus on past tenses.".into());
        config.global_instructions = Some("Be brief.".into());
        let value = serde_json::to_value(&config).unwrap();
        assert_eq!(value["tools"][0]["toolId"], "mark_for_review");
        assert_eq!(
            value["tools"][0]["triggerCondition"],
            json!({"type": "error_detected"})
        );
        assert_eq!(
            value["tools"][0]["customInstructions"],
            "Focus on past tenses."
        );
        assert_eq!(value["globalInstructions"], "Be brief.");
        assert!(value.get("teacherChoices").is_none());
        let back: LessonToolConfiguration = serde_json::from_value(value).unwrap();
        assert_eq!(back, config);
    }

    #[test]
    fn a_trigger_the_tool_does_not_allow_is_refused_naming_tool_and_rule() {
        let mut config = Preset::StandardLesson.configuration();
        config
            .tool_mut("show_session_summary")
            .unwrap()
            .trigger_condition = TriggerCondition::Always;
        let err = config.validate().unwrap_err();
        assert_eq!(err.field, "tools[2].triggerCondition.type");
        assert_eq!(
            err.rule,
            "Session Summary (show_session_summary): trigger always is not allowed; allowed: session_ending, time_remaining"
        );
    }

    #[test]
    fn duplicates_and_unknown_ids_are_refused() {
        let mut config = Preset::NoTracking.configuration();
        config.tools.push(config.tools[0].clone());
        config.tools.push(ToolConfig {
            tool_id: "launch_rocket".into(),
            ..config.tools[0].clone()
        });
        let problems = config.problems();
        assert_eq!(problems.len(), 2, "{problems:?}");
        assert_eq!(problems[0].field, "tools[6].toolId");
        assert!(problems[0]
            .rule
            .contains("Error Tracking (mark_for_review) is listed twice"));
        assert_eq!(problems[1].field, "tools[7].toolId");
        assert_eq!(problems[1].rule, "unknown tool id \"launch_rocket\"");
    }

    #[test]
    fn keyword_problems_name_the_keywords_field() {
        let mut config = Preset::StandardLesson.configuration();
        config
            .tool_mut("update_user_profile")
            .unwrap()
            .trigger_condition = TriggerCondition::Keyword { keywords: vec![] };
        let err = config.validate().unwrap_err();
        assert_eq!(err.field, "tools[1].triggerCondition.keywords");
        assert_eq!(
            err.rule,
            "Profile Learning (update_user_profile): needs at least one keyword"
        );
    }

    #[test]
    fn instructions_over_2000_characters_are_refused() {
        let mut config = Preset::StandardLesson.configuration();
        config.tools[3].custom_instructions = Some("x".repeat(2000));
        assert!(config.validate().is_ok());
        config.tools[3].custom_instructions = Some("é".repeat(2001));
        assert_eq!(
            config.validate().unwrap_err().field,
            "tools[3].customInstructions"
        );
        config.tools[3].custom_instructions = None;
        config.global_instructions = Some("x".repeat(2001));
        assert_eq!(config.validate().unwrap_err().field, "globalInstructions");
    }

    #[test]
    fn tasks_turn_task_completion_on_and_say_so() {
        let mut config = Preset::ConversationOnly.configuration();
        let changes = apply_smart_defaults(
            &mut config,
            LessonFacts {
                has_tasks: true,
                is_review: false,
                has_review_items: false,
            },
        );
        assert_eq!(changes.len(), 1);
        assert_eq!(changes[0].message, "Task tracking enabled automatically");
        let task = config.tool("mark_task_complete").unwrap();
        assert!(task.enabled);
        assert_eq!(task.trigger_condition, TriggerCondition::TaskContext);
        assert!(apply_smart_defaults(
            &mut config,
            LessonFacts {
                has_tasks: true,
                is_review: false,
                has_review_items: false,
            }
        )
        .is_empty());
    }

    #[test]
    fn a_missing_task_tool_is_added_with_task_context() {
        let mut config = LessonToolConfiguration::default();
        let changes = apply_smart_defaults(
            &mut config,
            LessonFacts {
                has_tasks: true,
                is_review: false,
                has_review_items: false,
            },
        );
        let ids: Vec<&str> = changes.iter().map(|c| c.tool_id.as_str()).collect();
        assert_eq!(ids, ["mark_task_complete", "show_session_summary"]);
        assert_eq!(
            config
                .tool("show_session_summary")
                .unwrap()
                .trigger_condition,
            TriggerCondition::SessionEnding
        );
    }

    #[test]
    fn a_review_lesson_gets_mastery_and_audio_with_always() {
        let mut config = Preset::StandardLesson.configuration();
        apply_smart_defaults(
            &mut config,
            LessonFacts {
                has_tasks: false,
                is_review: true,
                has_review_items: false,
            },
        );
        for id in ["mark_item_mastered", "play_student_audio"] {
            let tool = config.tool(id).unwrap();
            assert!(tool.enabled, "{id}");
            assert_eq!(tool.trigger_condition, TriggerCondition::Always);
        }
    }

    #[test]
    fn without_tasks_or_review_smart_defaults_turn_those_tools_off_and_say_so() {
        let mut config = Preset::StandardLesson.configuration();
        config.tool_mut("mark_item_mastered").unwrap().enabled = true;
        let changes = apply_smart_defaults(&mut config, LessonFacts::default());
        let messages: Vec<&str> = changes.iter().map(|c| c.message.as_str()).collect();
        assert_eq!(
            messages,
            [
                "Task tracking turned off automatically: the lesson has no tasks",
                "Mastery marking turned off automatically: not a review lesson"
            ]
        );
        assert_eq!(
            Preset::for_lesson(&config, LessonFacts::default()),
            Some(Preset::StandardLesson)
        );
        assert_eq!(Preset::matching(&config), None);
    }

    #[test]
    fn a_chosen_tool_gets_a_suggestion_instead_of_a_change() {
        let mut config = Preset::NoTracking.configuration();
        config.set_enabled_by_teacher("mark_task_complete", false);
        let facts = LessonFacts {
            has_tasks: true,
            is_review: false,
            has_review_items: false,
        };
        assert!(apply_smart_defaults(&mut config, facts).is_empty());
        let suggested = suggestions(&config, facts);
        assert_eq!(suggested.len(), 1);
        assert_eq!(suggested[0].tool_id, "mark_task_complete");
        assert!(suggestions(&config, LessonFacts::default()).is_empty());
    }

    #[test]
    fn the_menu_reads_a_preset_with_its_unusable_tools_set_aside_but_not_others() {
        let facts = LessonFacts::default();
        let conversation = Preset::ConversationOnly.configuration();
        assert_eq!(
            Preset::for_lesson(&conversation, facts),
            Some(Preset::ConversationOnly)
        );
        let mut mastery_only = conversation.clone();
        mastery_only.tool_mut("mark_item_mastered").unwrap().enabled = true;
        assert_eq!(Preset::for_lesson(&mastery_only, facts), None);
        assert!(fits_lesson("mark_for_review", facts));
        assert!(!fits_lesson("mark_task_complete", facts));
        assert!(!fits_lesson("play_student_audio", facts));
    }

    #[test]
    fn a_teachers_explicit_choice_is_never_reversed() {
        let mut config = Preset::StandardLesson.configuration();
        config.set_enabled_by_teacher("mark_task_complete", false);
        let changes = apply_smart_defaults(
            &mut config,
            LessonFacts {
                has_tasks: true,
                is_review: false,
                has_review_items: false,
            },
        );
        assert!(changes.is_empty());
        assert!(!config.is_enabled("mark_task_complete"));
        // A disabled summary the teacher did not touch stays disabled: it is
        // only added when missing.
        let mut config = Preset::NoTracking.configuration();
        assert!(apply_smart_defaults(&mut config, LessonFacts::default()).is_empty());
        assert!(!config.is_enabled("show_session_summary"));
    }
}
