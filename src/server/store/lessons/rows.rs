//! A lesson as stored, and reading lessons: the ones a person may see, one
//! by id for a person, an API key or the server itself.

use crate::domain::lesson::config::{default_configuration, LessonToolConfiguration};
use crate::domain::lesson::record::{LessonSummary, LessonView};
use crate::domain::lesson::review::ReviewItem;
use crate::domain::lesson::{CefrLevel, LessonDraft, LessonTask};
use crate::domain::ownership::Viewer;
use crate::domain::user::{Role, UserView};
use crate::error::ApiError;
use crate::server::platform::db::Db;
use crate::server::ServerError;

/// A lesson row as stored.
#[derive(Debug, Clone, sqlx::FromRow)]
pub struct LessonRow {
    /// Primary key.
    pub id: i64,
    /// The teacher who owns it.
    pub owner_id: i64,
    /// Owner's display name (joined).
    pub owner_name: String,
    /// Title.
    pub title: String,
    /// The teacher's prompt.
    pub conversation_prompt: String,
    /// JSON task list.
    pub tasks: String,
    /// JSON review items.
    pub review_items: String,
    /// Planned minutes.
    pub duration_minutes: Option<i64>,
    /// CEFR level.
    pub level: Option<String>,
    /// Review lesson flag.
    #[sqlx(try_from = "crate::server::platform::db::Flag")]
    pub review: bool,
    /// JSON configuration, NULL for legacy lessons.
    pub tool_configuration: Option<String>,
    /// Optimistic-concurrency version.
    pub version: i64,
    /// Last change, Unix seconds.
    pub updated_at: i64,
    /// Who made the last change (display name).
    pub updated_by_name: Option<String>,
}

const SELECT: &str = "SELECT l.id, l.owner_id, o.display_name AS owner_name, l.title, l.conversation_prompt,
        l.tasks, l.review_items, l.duration_minutes, l.level, l.review, l.tool_configuration, l.version, l.updated_at,
        u.display_name AS updated_by_name
     FROM lessons l JOIN users o ON o.id = l.owner_id LEFT JOIN users u ON u.id = l.updated_by";

impl LessonRow {
    /// The shared view. A legacy lesson (no configuration yet) is given the
    /// default configuration for its facts (the standard tools that fit it)
    /// and flagged so the editor can say so.
    pub fn view(self) -> Result<LessonView, ServerError> {
        let corrupt = |what: &str, e: String| {
            ServerError::Config(format!("lesson {} has an unreadable {what}: {e}", self.id))
        };
        let tasks: Vec<LessonTask> =
            serde_json::from_str(&self.tasks).map_err(|e| corrupt("task list", e.to_string()))?;
        let review_items: Vec<ReviewItem> = serde_json::from_str(&self.review_items)
            .map_err(|e| corrupt("review item list", e.to_string()))?;
        let (tool_configuration, legacy) = match &self.tool_configuration {
            Some(json) => (
                serde_json::from_str::<LessonToolConfiguration>(json)
                    .map_err(|e| corrupt("tool configuration", e.to_string()))?,
                false,
            ),
            None => (
                default_configuration(crate::domain::lesson::config::LessonFacts {
                    has_tasks: !tasks.is_empty(),
                    is_review: self.review,
                    has_review_items: !review_items.is_empty(),
                }),
                true,
            ),
        };
        let level = match &self.level {
            Some(l) => Some(CefrLevel::parse(l).map_err(|e| corrupt("level", e.to_string()))?),
            None => None,
        };
        Ok(LessonView {
            id: self.id,
            version: self.version,
            owner_id: self.owner_id,
            owner_name: self.owner_name,
            updated_at: self.updated_at,
            updated_by: self.updated_by_name,
            legacy_configuration: legacy,
            draft: LessonDraft {
                title: self.title,
                conversation_prompt: self.conversation_prompt,
                tasks,
                duration_minutes: self.duration_minutes.map(|m| m as u32),
                level,
                review: self.review,
                review_items,
                tool_configuration,
            },
        })
    }
}

/// The SQL condition restricting rows to what `user` may see: their own
/// lessons, or all for admins.
/// `n` is the placeholder number the condition's one parameter takes in
/// the whole statement.
pub(super) fn visible_to(user: &UserView, n: usize) -> (String, i64) {
    match user.role {
        Role::Admin => (format!("(1 = 1 OR l.owner_id = ${n})"), user.id),
        Role::Teacher => (format!("l.owner_id = ${n}"), user.id),
    }
}

/// The lessons `user` may see, most recently changed first.
pub async fn list(db: &Db, user: &UserView) -> Result<Vec<LessonSummary>, ServerError> {
    let (filter, bind) = visible_to(user, 1);
    let rows = sqlx::query_as::<_, LessonRow>(&format!(
        "{SELECT} WHERE {filter} ORDER BY l.updated_at DESC, l.id DESC"
    ))
    .bind(bind)
    .fetch_all(db)
    .await?;
    rows.into_iter()
        .map(|row| {
            let view = row.view()?;
            Ok(LessonSummary {
                id: view.id,
                title: view.draft.title.clone(),
                owner_name: view.owner_name.clone(),
                task_count: view.draft.tasks.len(),
                tools_enabled: view
                    .draft
                    .tool_configuration
                    .enabled_in_catalogue_order()
                    .len(),
                review: view.draft.review,
                level: view.draft.level,
                updated_at: view.updated_at,
                version: view.version,
            })
        })
        .collect()
}

/// One lesson, if it exists and `user` may see it. Another teacher's lesson
/// is reported as not found, so ids cannot be probed.
pub async fn get(db: &Db, user: &UserView, id: i64) -> Result<LessonView, ServerError> {
    let (filter, bind) = visible_to(user, 2);
    sqlx::query_as::<_, LessonRow>(&format!("{SELECT} WHERE l.id = $1 AND {filter}"))
        .bind(id)
        .bind(bind)
        .fetch_optional(db)
        .await?
        .ok_or_else(|| ApiError::NotFound(format!("Lesson {id}")).into())
        .and_then(LessonRow::view)
}

/// Lesson `id` as API key viewer `viewer` may use it (read its prompt,
/// open a session of it): a teacher's key only that teacher's lessons
/// (another's is 404, as on the pages); an admin's key, or a key whose
/// maker is gone (admins made keys before teachers could), any lesson.
pub async fn get_for_key(db: &Db, viewer: Viewer, id: i64) -> Result<LessonView, ServerError> {
    let lesson = get_any(db, id).await?;
    match viewer {
        Viewer::User(maker) if lesson.owner_id != maker => {
            Err(ApiError::NotFound(format!("Lesson {id}")).into())
        }
        _ => Ok(lesson),
    }
}

/// A lesson by id regardless of owner, for API-key holders (backends).
pub async fn get_any(db: &Db, id: i64) -> Result<LessonView, ServerError> {
    sqlx::query_as::<_, LessonRow>(&format!("{SELECT} WHERE l.id = $1"))
        .bind(id)
        .fetch_optional(db)
        .await?
        .ok_or_else(|| ApiError::NotFound(format!("Lesson {id}")).into())
        .and_then(LessonRow::view)
}
