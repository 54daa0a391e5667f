//! A lesson's history: its versions, newest first, and one version's
//! content.

use super::rows::get;
use crate::domain::lesson::record::LessonVersionMeta;
use crate::domain::lesson::LessonDraft;
use crate::domain::user::UserView;
use crate::error::ApiError;
use crate::server::platform::db::Db;
use crate::server::ServerError;

/// The history line of a version saved before history was kept.
pub(super) const LEGACY_SUMMARY: &str = "Saved before history was kept";

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
