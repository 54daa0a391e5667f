//! What the lesson editor does to a draft, as plain functions: every change
//! followed by smart defaults, tasks added with unique ids, presets, and one
//! tool's settings read and changed.
//!
//! The editor's views only route events here, so these rules are tested
//! without a browser and the tool panel and the form cannot drift apart.
//!
//! It lives beside its page, not in `domain`: only the lesson editor uses it
//! (pure all the same, and compiled into that page's bundle only).

use crate::domain::error::{problem_for, FieldError};
use crate::domain::lesson::config::{
    apply_smart_defaults, LessonToolConfiguration, Preset, ToolConfig,
};
use crate::domain::lesson::review::ReviewItem;
use crate::domain::lesson::tools::{tutor_tool, TUTOR_TOOLS};
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

/// Adds a review item with `text` (trimmed), an id no other item has and,
/// if `audio` is not blank, that recording reference; blank text adds
/// nothing.
pub fn add_review_item(draft: &mut LessonDraft, text: &str, audio: &str) {
    let text = text.trim();
    if text.is_empty() {
        return;
    }
    let taken: Vec<&str> = draft.review_items.iter().map(|i| i.id.as_str()).collect();
    let id = LessonTask::id_for(text, &taken);
    let audio = audio.trim();
    draft.review_items.push(ReviewItem {
        id,
        text: text.to_owned(),
        audio: (!audio.is_empty()).then(|| audio.to_owned()),
    });
}

/// A row of one of the editor's lists (a task, a review item), known by an
/// id that its text's edits leave alone.
pub trait ListedById {
    /// The row's id.
    fn list_id(&self) -> &str;
}

impl ListedById for LessonTask {
    fn list_id(&self) -> &str {
        &self.id
    }
}

impl ListedById for ReviewItem {
    fn list_id(&self) -> &str {
        &self.id
    }
}

/// Whether a list's rows came, went or moved (its ids changed), for a memo
/// the list is redrawn from: a row's text typed in changes nothing, so the
/// row keeps its focus while the preview follows every keystroke.
pub fn ids_changed<T: ListedById>(old: Option<&Vec<T>>, new: Option<&Vec<T>>) -> bool {
    match (old, new) {
        (Some(old), Some(new)) => !old
            .iter()
            .map(ListedById::list_id)
            .eq(new.iter().map(ListedById::list_id)),
        (None, None) => false,
        _ => true,
    }
}

/// Switches to `preset`'s tools. Picking a preset is the teacher's explicit
/// choice for every tool, so all of them join `teacher_choices` and smart
/// defaults never switch them back (they suggest instead). What the teacher
/// wrote belongs to the lesson, not the preset, and is kept: the global and
/// per-tool instructions, and the trigger settings (keywords, turns,
/// minutes) of every tool the preset leaves off. Only a tool the preset turns
/// on with another trigger loses its parameters — [`preset_losses`] lists
/// those so the editor can ask first.
pub fn use_preset(config: &mut LessonToolConfiguration, preset: Preset) {
    let mut fresh = preset.configuration();
    for tool in &mut fresh.tools {
        let Some(old) = config.tool(&tool.tool_id) else {
            continue;
        };
        tool.custom_instructions = old.custom_instructions.clone();
        if !tool.enabled || old.trigger_condition.kind() == tool.trigger_condition.kind() {
            tool.trigger_condition = old.trigger_condition.clone();
        }
    }
    fresh.global_instructions = config.global_instructions.take();
    fresh.use_profile_facts = config.use_profile_facts;
    fresh.teacher_choices = TUTOR_TOOLS.iter().map(|t| t.id.to_owned()).collect();
    *config = fresh;
}

/// What switching to `preset` would drop, one line per tool ("Profile
/// Learning: keywords hobby, family", "Error Tracking: after 7 turns"):
/// the trigger parameters of a tool the preset turns on with another
/// trigger (keywords, turns, minutes). Empty means nothing the teacher set
/// is lost and the switch needs no confirmation.
pub fn preset_losses(config: &LessonToolConfiguration, preset: Preset) -> Vec<String> {
    let fresh = preset.configuration();
    fresh
        .tools
        .iter()
        .filter(|t| t.enabled)
        .filter_map(|t| {
            let old = config.tool(&t.tool_id)?;
            if old.trigger_condition.kind() == t.trigger_condition.kind() {
                return None;
            }
            let set = match &old.trigger_condition {
                TriggerCondition::Keyword { keywords } if !keywords.is_empty() => {
                    format!("keywords {}", keywords.join(", "))
                }
                TriggerCondition::TurnCount { min_turns } => format!("after {min_turns} turns"),
                TriggerCondition::TimeRemaining { minutes_remaining } => {
                    format!("{minutes_remaining} minutes left")
                }
                _ => return None,
            };
            let name = tutor_tool(&t.tool_id).map_or(t.tool_id.as_str(), |tool| tool.name);
            Some(format!("{name}: {set}"))
        })
        .collect()
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
mod tests;
