//! A stored lesson as the list and the editor show it: the draft plus who
//! owns it, its version and when it last changed.
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
