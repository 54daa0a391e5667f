//! A stored lesson as the list and the editor show it: the draft plus who
//! owns it, its version and when it last changed; and its saved versions as
//! the history lists them.
//!
//! The store builds these from rows; the pages show them.

use crate::domain::lesson::{CefrLevel, LessonDraft};
use serde::{Deserialize, Serialize};

/// A lesson as the list shows it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct LessonSummary {
    /// Id.
    pub id: i64,
    /// Title.
    pub title: String,
    /// The owning teacher's name (admins see everyone's lessons).
    pub owner_name: String,
    /// Number of objectives.
    pub task_count: usize,
    /// Enabled tutor tools.
    pub tools_enabled: usize,
    /// Review lesson?
    pub review: bool,
    /// Student level.
    pub level: Option<CefrLevel>,
    /// Last change, Unix seconds.
    pub updated_at: i64,
    /// Current version (delete needs it).
    pub version: i64,
}

/// A lesson as the editor loads it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct LessonView {
    /// Id.
    pub id: i64,
    /// The version a save must start from.
    pub version: i64,
    /// Owner's account id.
    pub owner_id: i64,
    /// Owner's name.
    pub owner_name: String,
    /// Last change, Unix seconds.
    pub updated_at: i64,
    /// Who made the last change.
    pub updated_by: Option<String>,
    /// The lesson predates tool configuration; `draft` carries the
    /// `standard_lesson` default, stored on first save.
    pub legacy_configuration: bool,
    /// The editable content.
    pub draft: LessonDraft,
}

/// One saved version of a lesson, as the history lists it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct LessonVersionMeta {
    /// The version number (1 is the lesson as created).
    pub version: i64,
    /// Who saved it (display name at the time).
    pub author: String,
    /// When, Unix seconds.
    pub created_at: i64,
    /// One line on what changed ("Changed title and tasks", "Restored
    /// version 2").
    pub summary: String,
}

/// One line on what a save changed, for the history: the parts of the
/// lesson that differ, in form order ("Changed title and tool
/// configuration"), or "No changes".
pub fn describe_changes(old: &LessonDraft, new: &LessonDraft) -> String {
    let parts: Vec<&str> = [
        (old.title.trim() != new.title.trim(), "title"),
        (
            old.conversation_prompt != new.conversation_prompt,
            "conversation prompt",
        ),
        (old.tasks != new.tasks, "tasks"),
        (old.duration_minutes != new.duration_minutes, "duration"),
        (old.level != new.level, "level"),
        (old.review != new.review, "review flag"),
        (
            old.tool_configuration != new.tool_configuration,
            "tool configuration",
        ),
    ]
    .into_iter()
    .filter_map(|(changed, name)| changed.then_some(name))
    .collect();
    match parts.as_slice() {
        [] => "No changes".to_owned(),
        [one] => format!("Changed {one}"),
        [rest @ .., last] => format!("Changed {} and {last}", rest.join(", ")),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_change_summary_names_the_changed_parts_in_form_order() {
        let old = LessonDraft::new("Café");
        assert_eq!(describe_changes(&old, &old), "No changes");
        let mut new = old.clone();
        new.title = "Café 2".into();
        assert_eq!(describe_changes(&old, &new), "Changed title");
        new.review = true;
        new.conversation_prompt = "Hola".into();
        assert_eq!(
            describe_changes(&old, &new),
            "Changed title, conversation prompt and review flag"
        );
    }
}
