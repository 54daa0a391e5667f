//! Changing lessons, each change checked against the version it was made
//! from and stored with its content as a new numbered version, in one
//! transaction.

use super::history::LEGACY_SUMMARY;
use super::rows::{get, visible_to};
use crate::domain::lesson::config::LessonToolConfiguration;
use crate::domain::lesson::record::{describe_changes, LessonView};
use crate::domain::lesson::LessonDraft;
use crate::domain::user::UserView;
use crate::error::ApiError;
use crate::server::platform::db::now;
use crate::server::platform::db::{Conn, Db};
use crate::server::ServerError;
use sqlx::any::{Any, AnyArguments};
use sqlx::query::Query;
use sqlx::Row;

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
    let insert = sqlx::query(
        "INSERT INTO lessons (owner_id, title, conversation_prompt, tasks, review_items, duration_minutes, level,
                              review, tool_configuration, version, created_at, updated_at, updated_by)
         VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, 1, $10, $11, $12) RETURNING id",
    )
    .bind(owner);
    let id: i64 = with_draft(insert, draft)?
        .bind(config_json)
        .bind(t)
        .bind(t)
        .bind(owner)
        .fetch_one(&mut *tx)
        .await?
        .try_get(0)?;
    if configuration.is_some() {
        record_version(&mut tx, id, 1, draft, summary, owner, t).await?;
    }
    tx.commit().await?;
    Ok(id)
}

/// Binds the draft's columns, title to review, in the order both the
/// INSERT and the UPDATE name them.
fn with_draft<'q>(
    query: Query<'q, Any, AnyArguments<'q>>,
    draft: &'q LessonDraft,
) -> Result<Query<'q, Any, AnyArguments<'q>>, ServerError> {
    Ok(query
        .bind(draft.title.trim())
        .bind(&draft.conversation_prompt)
        .bind(serde_json::to_string(&draft.tasks).map_err(json_err)?)
        .bind(serde_json::to_string(&draft.review_items).map_err(json_err)?)
        .bind(draft.duration_minutes.map(i64::from))
        .bind(draft.level.map(|l| l.as_str()))
        .bind(i64::from(draft.review)))
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
    let update = format!(
        "UPDATE lessons AS l SET title = $1, conversation_prompt = $2, tasks = $3, review_items = $4, duration_minutes = $5, level = $6,
                review = $7, tool_configuration = $8, version = version + 1, updated_at = $9, updated_by = $10
         WHERE l.id = $11 AND l.version = $12 AND {filter}"
    );
    let done = with_draft(sqlx::query(&update), draft)?
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
