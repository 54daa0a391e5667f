//! What the lesson editor does to a draft, as plain functions: every change
//! followed by smart defaults, tasks added with unique ids, presets, and one
//! tool's settings read and changed.
//!
//! The editor's views only route events here, so these rules are tested
//! without a browser and the tool panel and the form cannot drift apart.

use crate::domain::error::{problem_for, FieldError};
use crate::domain::lesson::config::{
    apply_smart_defaults, LessonToolConfiguration, Preset, ToolConfig,
};
use crate::domain::lesson::tools::TUTOR_TOOLS;
use crate::domain::lesson::trigger::TriggerCondition;
use crate::domain::lesson::{LessonDraft, LessonTask};

/// Minutes left a time trigger shows before the teacher picks any.
pub const DEFAULT_MINUTES_REMAINING: u8 = 2;
/// Turns a turn-count trigger shows before the teacher types any.
pub const DEFAULT_MIN_TURNS: u32 = 5;

/// Makes `change`, then brings the tool configuration in line with the
/// lesson (smart defaults). Returns what smart defaults changed, in words
/// to tell the teacher.
pub fn edit_draft(draft: &mut LessonDraft, change: impl FnOnce(&mut LessonDraft)) -> Vec<String> {
    change(draft);
    let facts = draft.facts();
    apply_smart_defaults(&mut draft.tool_configuration, facts)
        .into_iter()
        .map(|c| c.message)
        .collect()
}

/// Adds a task with `text` (trimmed) and an id no other task has; blank
/// text adds nothing.
pub fn add_task(draft: &mut LessonDraft, text: &str) {
    let text = text.trim();
    if text.is_empty() {
        return;
    }
    let taken: Vec<&str> = draft.tasks.iter().map(|t| t.id.as_str()).collect();
    let id = LessonTask::id_for(text, &taken);
    draft.tasks.push(LessonTask {
        id,
        text: text.to_owned(),
    });
}

/// Switches to `preset`'s tools, keeping the teacher's instructions for all
/// tools (they belong to the lesson, not the preset).
pub fn use_preset(config: &mut LessonToolConfiguration, preset: Preset) {
    let global = config.global_instructions.take();
    *config = preset.configuration();
    config.global_instructions = global;
}

/// How many catalogue tools the configuration enables.
pub fn enabled_count(config: &LessonToolConfiguration) -> usize {
    TUTOR_TOOLS
        .iter()
        .filter(|t| config.is_enabled(t.id))
        .count()
}

/// `id`'s settings, or its catalogue default (disabled) if not configured,
/// so every catalogue tool has a row to show.
pub fn config_of(config: &LessonToolConfiguration, id: &str) -> ToolConfig {
    config
        .tool(id)
        .cloned()
        .or_else(|| ToolConfig::default_for(id, false))
        .unwrap_or(ToolConfig {
            tool_id: id.to_owned(),
            enabled: false,
            trigger_condition: TriggerCondition::Always,
            custom_instructions: None,
        })
}

/// Changes `id`'s settings, adding them (disabled, at defaults) if missing;
/// an id the catalogue does not know changes nothing.
pub fn edit_tool(
    config: &mut LessonToolConfiguration,
    id: &str,
    change: impl FnOnce(&mut ToolConfig),
) {
    if config.tool(id).is_none() {
        if let Some(fresh) = ToolConfig::default_for(id, false) {
            config.tools.push(fresh);
        }
    }
    if let Some(tool) = config.tool_mut(id) {
        change(tool);
    }
}

/// The keywords of a keyword trigger; none for any other trigger.
pub fn keywords_of(condition: &TriggerCondition) -> Vec<String> {
    match condition {
        TriggerCondition::Keyword { keywords } => keywords.clone(),
        _ => Vec::new(),
    }
}

/// Changes the tool's keyword list, making its trigger a keyword trigger.
pub fn edit_keywords(tool: &mut ToolConfig, change: impl FnOnce(&mut Vec<String>)) {
    let mut list = keywords_of(&tool.trigger_condition);
    change(&mut list);
    tool.trigger_condition = TriggerCondition::Keyword { keywords: list };
}

/// The minutes a time trigger fires at, or the default to show otherwise.
pub fn minutes_remaining(condition: &TriggerCondition) -> u8 {
    match condition {
        TriggerCondition::TimeRemaining { minutes_remaining } => *minutes_remaining,
        _ => DEFAULT_MINUTES_REMAINING,
    }
}

/// The turns a turn-count trigger waits for, or the default to show otherwise.
pub fn min_turns(condition: &TriggerCondition) -> u32 {
    match condition {
        TriggerCondition::TurnCount { min_turns } => *min_turns,
        _ => DEFAULT_MIN_TURNS,
    }
}

/// The first problem with tool `id`'s settings, shown under its row (none
/// for a tool not configured, which cannot break a rule).
pub fn tool_problem(draft: &LessonDraft, problems: &[FieldError], id: &str) -> Option<String> {
    let index = draft
        .tool_configuration
        .tools
        .iter()
        .position(|t| t.tool_id == id)?;
    problem_for(problems, &format!("toolConfiguration.tools[{index}]"), true)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::domain::lesson::trigger::TriggerKind;

    const SUMMARY: &str = "show_session_summary";

    fn bare() -> LessonDraft {
        let mut draft = LessonDraft::new("Café");
        draft.tool_configuration = LessonToolConfiguration::default();
        draft
    }

    #[test]
    fn a_change_is_followed_by_smart_defaults_and_reported() {
        let mut draft = bare();
        let notices = edit_draft(&mut draft, |d| add_task(d, "Order a drink"));
        assert_eq!(draft.tasks.len(), 1);
        assert!(!notices.is_empty(), "adding a task turns task tracking on");
        assert!(draft.tool_configuration.is_enabled("mark_task_complete"));
        // Applying the same facts again changes nothing more.
        assert!(edit_draft(&mut draft, |_| {}).is_empty());
    }

    #[test]
    fn tasks_get_unique_ids_and_blank_ones_are_ignored() {
        let mut draft = bare();
        add_task(&mut draft, "  Order a drink ");
        add_task(&mut draft, "Order a drink");
        add_task(&mut draft, "   ");
        let ids: Vec<&str> = draft.tasks.iter().map(|t| t.id.as_str()).collect();
        assert_eq!(ids.len(), 2);
        assert_ne!(ids[0], ids[1]);
        assert_eq!(draft.tasks[0].text, "Order a drink");
    }

    #[test]
    fn a_preset_keeps_the_instructions_for_all_tools() {
        let mut config = LessonToolConfiguration {
            global_instructions: Some("Be brief.".into()),
            ..Default::default()
        };
        use_preset(&mut config, Preset::ReviewLesson);
        assert_eq!(config.global_instructions.as_deref(), Some("Be brief."));
        assert_eq!(Preset::matching(&config), Some(Preset::ReviewLesson));
        assert_eq!(
            enabled_count(&config),
            config.enabled_in_catalogue_order().len()
        );
    }

    #[test]
    fn an_unconfigured_tool_reads_as_its_disabled_default() {
        let config = LessonToolConfiguration::default();
        let summary = config_of(&config, SUMMARY);
        assert!(!summary.enabled);
        assert_eq!(Some(summary), ToolConfig::default_for(SUMMARY, false));
        let unknown = config_of(&config, "no_such_tool");
        assert_eq!(unknown.trigger_condition, TriggerCondition::Always);
        assert_eq!(enabled_count(&config), 0);
    }

    #[test]
    fn editing_a_missing_tool_adds_it_first_and_unknown_ids_change_nothing() {
        let mut config = LessonToolConfiguration::default();
        edit_tool(&mut config, SUMMARY, |t| {
            t.custom_instructions = Some("x".into())
        });
        let summary = config.tool(SUMMARY).unwrap();
        assert!(!summary.enabled);
        assert_eq!(summary.custom_instructions.as_deref(), Some("x"));
        edit_tool(&mut config, "no_such_tool", |t| t.enabled = true);
        assert_eq!(config.tools.len(), 1);
    }

    #[test]
    fn keyword_edits_turn_the_trigger_into_a_keyword_trigger() {
        let mut tool = ToolConfig::default_for(SUMMARY, true).unwrap();
        assert!(keywords_of(&tool.trigger_condition).is_empty());
        edit_keywords(&mut tool, |list| list.push("food".into()));
        edit_keywords(&mut tool, |list| list.push("drinks".into()));
        assert_eq!(tool.trigger_condition.kind(), TriggerKind::Keyword);
        assert_eq!(keywords_of(&tool.trigger_condition), ["food", "drinks"]);
        edit_keywords(&mut tool, |list| {
            list.remove(0);
        });
        assert_eq!(keywords_of(&tool.trigger_condition), ["drinks"]);
    }

    #[test]
    fn trigger_parameters_fall_back_to_their_defaults() {
        let minutes = TriggerCondition::TimeRemaining {
            minutes_remaining: 5,
        };
        let turns = TriggerCondition::TurnCount { min_turns: 9 };
        assert_eq!(minutes_remaining(&minutes), 5);
        assert_eq!(min_turns(&turns), 9);
        assert_eq!(minutes_remaining(&turns), DEFAULT_MINUTES_REMAINING);
        assert_eq!(min_turns(&TriggerCondition::Always), DEFAULT_MIN_TURNS);
    }

    #[test]
    fn a_tool_problem_is_found_by_the_tool_position_in_the_draft() {
        let mut draft = bare();
        edit_tool(&mut draft.tool_configuration, "mark_for_review", |_| {});
        edit_tool(&mut draft.tool_configuration, SUMMARY, |_| {});
        let problems = vec![FieldError::new(
            "toolConfiguration.tools[1].customInstructions",
            "is too long",
        )];
        assert_eq!(
            tool_problem(&draft, &problems, SUMMARY).as_deref(),
            Some("is too long")
        );
        assert_eq!(tool_problem(&draft, &problems, "mark_for_review"), None);
        assert_eq!(tool_problem(&draft, &problems, "mark_task_complete"), None);
    }
}
