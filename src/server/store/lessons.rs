//! Lessons, with optimistic concurrency on every change, and their history:
//! each save (create, edit, restore, duplicate) also stores the content as a
//! numbered version in the same transaction.

use crate::domain::lesson::config::{default_configuration, LessonToolConfiguration};
use crate::domain::lesson::record::{
    describe_changes, LessonSummary, LessonVersionMeta, LessonView,
};
use crate::domain::lesson::review::ReviewItem;
use crate::domain::lesson::{CefrLevel, LessonDraft, LessonTask};
use crate::domain::ownership::Viewer;
use crate::domain::user::{Role, UserView};
use crate::error::ApiError;
use crate::server::platform::db::now;
use crate::server::platform::db::{Conn, Db};
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
fn visible_to(user: &UserView, n: usize) -> (String, i64) {
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

/// Stores a new lesson owned by `owner` as version 1; the draft must
/// already be valid.
pub async fn create(db: &Db, owner: i64, draft: &LessonDraft) -> Result<i64, ServerError> {
    create_with(db, owner, draft, Some(&draft.tool_configuration)).await
}

/// Like `create`, with the configuration column set explicitly (`None`
/// makes a legacy lesson, as the demo data needs; it gets no version row
/// until its first save, the history shows its current content instead).
pub async fn create_with(
    db: &Db,
    owner: i64,
    draft: &LessonDraft,
    configuration: Option<&LessonToolConfiguration>,
) -> Result<i64, ServerError> {
    insert(db, owner, draft, configuration, "Created").await
}

/// Stores a copy of lesson `id` (as `user` may see it) owned by `user`,
/// titled "Copy of …"; returns the new lesson's id.
pub async fn duplicate(db: &Db, user: &UserView, id: i64) -> Result<i64, ServerError> {
    let original = get(db, user, id).await?;
    let copy = original.draft.duplicate();
    let summary = format!(
        "Duplicated from “{}” (lesson {id}, version {})",
        original.draft.title, original.version
    );
    insert(db, user.id, &copy, Some(&copy.tool_configuration), &summary).await
}

async fn insert(
    db: &Db,
    owner: i64,
    draft: &LessonDraft,
    configuration: Option<&LessonToolConfiguration>,
    summary: &str,
) -> Result<i64, ServerError> {
    let t = now();
    let config_json = configuration
        .map(serde_json::to_string)
        .transpose()
        .map_err(json_err)?;
    let mut tx = db.begin().await?;
    let id = sqlx::query_scalar::<_, i64>(
        "INSERT INTO lessons (owner_id, title, conversation_prompt, tasks, review_items, duration_minutes, level,
                              review, tool_configuration, version, created_at, updated_at, updated_by)
         VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, 1, $10, $11, $12) RETURNING id",
    )
    .bind(owner)
    .bind(draft.title.trim())
    .bind(&draft.conversation_prompt)
    .bind(serde_json::to_string(&draft.tasks).map_err(json_err)?)
    .bind(serde_json::to_string(&draft.review_items).map_err(json_err)?)
    .bind(draft.duration_minutes.map(i64::from))
    .bind(draft.level.map(|l| l.as_str()))
    .bind(i64::from(draft.review))
    .bind(config_json)
    .bind(t)
    .bind(t)
    .bind(owner)
    .fetch_one(&mut *tx)
    .await?
    ;
    if configuration.is_some() {
        record_version(&mut tx, id, 1, draft, summary, owner, t).await?;
    }
    tx.commit().await?;
    Ok(id)
}

/// Adds version `version` of lesson `id` to its history, with the author's
/// current display name.
async fn record_version(
    conn: &mut Conn,
    id: i64,
    version: i64,
    draft: &LessonDraft,
    summary: &str,
    author: i64,
    at: i64,
) -> Result<(), ServerError> {
    sqlx::query(
        "INSERT INTO lesson_versions (lesson_id, version, content, summary, author_id, author_name, created_at)
         VALUES ($1, $2, $3, $4, $5, COALESCE((SELECT display_name FROM users WHERE id = $6), 'someone'), $7)",
    )
    .bind(id)
    .bind(version)
    .bind(serde_json::to_string(draft).map_err(json_err)?)
    .bind(summary)
    .bind(author)
    .bind(author)
    .bind(at)
    .execute(conn)
    .await?;
    Ok(())
}

fn json_err(e: serde_json::Error) -> ServerError {
    ServerError::Config(format!("cannot serialise lesson: {e}"))
}

/// Replaces the lesson's content if it is still at `expected_version` and
/// records it as the next version; returns the new version. A lesson
/// changed in between is a conflict and nothing is written.
pub async fn update(
    db: &Db,
    user: &UserView,
    id: i64,
    expected_version: i64,
    draft: &LessonDraft,
) -> Result<i64, ServerError> {
    save_version(db, user, id, expected_version, draft, None).await
}

/// Saves version `restore`'s content as a new version ("Restored version
/// N"), if the lesson is still at `expected_version`; returns the new
/// version. The content must already have been checked.
pub async fn restore(
    db: &Db,
    user: &UserView,
    id: i64,
    expected_version: i64,
    restore: i64,
    draft: &LessonDraft,
) -> Result<i64, ServerError> {
    let summary = format!("Restored version {restore}");
    save_version(db, user, id, expected_version, draft, Some(&summary)).await
}

/// The one write path of an edit: the guarded UPDATE (which takes the write
/// lock first) and the history row, in one transaction. `summary` defaults
/// to what changed since the current version.
async fn save_version(
    db: &Db,
    user: &UserView,
    id: i64,
    expected_version: i64,
    draft: &LessonDraft,
    summary: Option<&str>,
) -> Result<i64, ServerError> {
    let current = get(db, user, id).await?;
    if current.version != expected_version {
        return Err(ApiError::Conflict(stale_message(&current)).into());
    }
    // Versions only grow, so if the guarded UPDATE below succeeds nobody
    // saved since `current` was read and the summary compares the right two.
    let summary = summary
        .map(str::to_owned)
        .unwrap_or_else(|| describe_changes(&current.draft, draft));
    let t = now();
    let (filter, bind) = visible_to(user, 13);
    let mut tx = db.begin().await?;
    let done = sqlx::query(&format!(
        "UPDATE lessons AS l SET title = $1, conversation_prompt = $2, tasks = $3, review_items = $4, duration_minutes = $5, level = $6,
                review = $7, tool_configuration = $8, version = version + 1, updated_at = $9, updated_by = $10
         WHERE l.id = $11 AND l.version = $12 AND {filter}"
    ))
    .bind(draft.title.trim())
    .bind(&draft.conversation_prompt)
    .bind(serde_json::to_string(&draft.tasks).map_err(json_err)?)
    .bind(serde_json::to_string(&draft.review_items).map_err(json_err)?)
    .bind(draft.duration_minutes.map(i64::from))
    .bind(draft.level.map(|l| l.as_str()))
    .bind(i64::from(draft.review))
    .bind(serde_json::to_string(&draft.tool_configuration).map_err(json_err)?)
    .bind(t)
    .bind(user.id)
    .bind(id)
    .bind(expected_version)
    .bind(bind)
    .execute(&mut *tx)
    .await?;
    if done.rows_affected() != 1 {
        drop(tx);
        // Either gone/invisible (404) or changed since (409): tell which.
        let current = get(db, user, id).await?;
        return Err(ApiError::Conflict(stale_message(&current)).into());
    }
    // A lesson saved before history was kept gets its old content recorded
    // first, so the version it leaves stays restorable.
    sqlx::query(
        "INSERT INTO lesson_versions
             (lesson_id, version, content, summary, author_id, author_name, created_at)
         VALUES ($1, $2, $3, $4, NULL, $5, $6) ON CONFLICT DO NOTHING",
    )
    .bind(id)
    .bind(current.version)
    .bind(serde_json::to_string(&current.draft).map_err(json_err)?)
    .bind(LEGACY_SUMMARY)
    .bind(current.updated_by.as_deref().unwrap_or("someone"))
    .bind(current.updated_at)
    .execute(&mut *tx)
    .await?;
    let version = expected_version + 1;
    record_version(&mut tx, id, version, draft, &summary, user.id, t).await?;
    tx.commit().await?;
    Ok(version)
}

/// The history line of a version saved before history was kept.
const LEGACY_SUMMARY: &str = "Saved before history was kept";

/// Lesson `id`'s saved versions, newest first. A lesson saved before
/// history existed lists its current version from the lesson itself.
pub async fn history(
    db: &Db,
    user: &UserView,
    id: i64,
) -> Result<Vec<LessonVersionMeta>, ServerError> {
    let current = get(db, user, id).await?;
    let rows: Vec<(i64, String, String, i64)> = sqlx::query_as(
        "SELECT version, author_name, summary, created_at FROM lesson_versions
         WHERE lesson_id = $1 ORDER BY version DESC",
    )
    .bind(id)
    .fetch_all(db)
    .await?;
    let mut list: Vec<LessonVersionMeta> = rows
        .into_iter()
        .map(|(version, author, summary, created_at)| LessonVersionMeta {
            version,
            author,
            created_at,
            summary,
        })
        .collect();
    if list.first().map(|v| v.version) != Some(current.version) {
        list.insert(
            0,
            LessonVersionMeta {
                version: current.version,
                author: current.updated_by.unwrap_or_else(|| "someone".into()),
                created_at: current.updated_at,
                summary: LEGACY_SUMMARY.into(),
            },
        );
    }
    Ok(list)
}

/// The content of version `version` of lesson `id` (the current one comes
/// from the lesson itself).
pub async fn version_content(
    db: &Db,
    user: &UserView,
    id: i64,
    version: i64,
) -> Result<LessonDraft, ServerError> {
    let current = get(db, user, id).await?;
    if version == current.version {
        return Ok(current.draft);
    }
    let content: String = sqlx::query_scalar(
        "SELECT content FROM lesson_versions WHERE lesson_id = $1 AND version = $2",
    )
    .bind(id)
    .bind(version)
    .fetch_optional(db)
    .await?
    .ok_or_else(|| ApiError::NotFound(format!("Version {version} of lesson {id}")))?;
    serde_json::from_str(&content).map_err(|e| {
        ServerError::Config(format!("lesson {id} version {version} is unreadable: {e}"))
    })
}

/// The conflict message for a save that started from an older version.
pub fn stale_message(current: &LessonView) -> String {
    let by = current.updated_by.as_deref().unwrap_or("someone");
    format!(
        "This lesson was changed elsewhere (by {by}, now version {}) — reload to see the changes.",
        current.version
    )
}

/// Deletes the lesson if it is still at `expected_version`.
pub async fn delete(
    db: &Db,
    user: &UserView,
    id: i64,
    expected_version: i64,
) -> Result<(), ServerError> {
    let (filter, bind) = visible_to(user, 3);
    let done = sqlx::query(&format!(
        "DELETE FROM lessons AS l WHERE l.id = $1 AND l.version = $2 AND {filter}"
    ))
    .bind(id)
    .bind(expected_version)
    .bind(bind)
    .execute(db)
    .await?;
    if done.rows_affected() == 1 {
        return Ok(());
    }
    let current = get(db, user, id).await?;
    Err(ApiError::Conflict(stale_message(&current)).into())
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
