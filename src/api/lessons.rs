//! Lessons: listing, editing with optimistic concurrency, history with
//! restore, duplicating, and the exact BPE token count the preview shows.

use crate::domain::lesson::record::{LessonSummary, LessonVersionMeta, LessonView};
use crate::domain::lesson::LessonDraft;
use crate::error::ApiError;
use leptos::prelude::*;
use leptos::server_fn::codec::Json;
use serde::{Deserialize, Serialize};

/// The lessons the caller may see (own, or all for admins).
#[server(prefix = "/rpc", endpoint = "list_lessons")]
pub async fn list_lessons() -> Result<Vec<LessonSummary>, ApiError> {
    use crate::server::{http::ctx, store};
    ctx::finish(async {
        let user = ctx::teacher()?;
        let state = ctx::state()?;
        store::lessons::list(&state.db, &user.0).await
    })
    .await
}

/// One lesson for the editor.
#[server(prefix = "/rpc", endpoint = "get_lesson")]
pub async fn get_lesson(id: i64) -> Result<LessonView, ApiError> {
    use crate::server::{http::ctx, store};
    ctx::finish(async {
        let user = ctx::teacher()?;
        let state = ctx::state()?;
        store::lessons::get(&state.db, &user.0, id).await
    })
    .await
}

/// Creates a lesson with the standard tools and returns its id.
#[server(prefix = "/rpc", endpoint = "create_lesson")]
pub async fn create_lesson(title: String) -> Result<i64, ApiError> {
    use crate::server::{http::ctx, store};
    ctx::finish(async {
        let user = ctx::teacher()?;
        let state = ctx::state()?;
        let draft = LessonDraft::new(&title);
        if let Some(problem) = draft.problems().into_iter().next() {
            return Err(ApiError::Invalid(problem).into());
        }
        let id = store::lessons::create(&state.db, user.0.id, &draft).await?;
        leptos_axum::redirect(&format!("/lessons/{id}"));
        Ok(id)
    })
    .await
}

/// Saves the lesson if nobody changed it since `version`; returns the new
/// version. Invalid content is refused naming the field; nothing is written.
#[server(prefix = "/rpc", endpoint = "save_lesson", input = Json)]
pub async fn save_lesson(id: i64, version: i64, draft: LessonDraft) -> Result<i64, ApiError> {
    use crate::server::{http::ctx, store};
    ctx::finish(async {
        let user = ctx::teacher()?;
        let state = ctx::state()?;
        if let Some(problem) = draft.problems().into_iter().next() {
            return Err(ApiError::Invalid(problem).into());
        }
        store::lessons::update(&state.db, &user.0, id, version, &draft).await
    })
    .await
}

/// Deletes the lesson if nobody changed it since `version`.
#[server(prefix = "/rpc", endpoint = "delete_lesson")]
pub async fn delete_lesson(id: i64, version: i64) -> Result<(), ApiError> {
    use crate::server::{http::ctx, store};
    ctx::finish(async {
        let user = ctx::teacher()?;
        let state = ctx::state()?;
        store::lessons::delete(&state.db, &user.0, id, version).await
    })
    .await
}

/// Lesson `id`'s saved versions, newest first: number, author, time and
/// what changed.
#[server(prefix = "/rpc", endpoint = "lesson_history")]
pub async fn lesson_history(id: i64) -> Result<Vec<LessonVersionMeta>, ApiError> {
    use crate::server::{http::ctx, store};
    ctx::finish(async {
        let user = ctx::teacher()?;
        let state = ctx::state()?;
        store::lessons::history(&state.db, &user.0, id).await
    })
    .await
}

/// Saves version `restore`'s content as a new version (history is never
/// rewritten), if the lesson is still at `version`; returns the new version.
#[server(prefix = "/rpc", endpoint = "restore_lesson")]
pub async fn restore_lesson(id: i64, version: i64, restore: i64) -> Result<i64, ApiError> {
    use crate::server::{http::ctx, store};
    ctx::finish(async {
        let user = ctx::teacher()?;
        let state = ctx::state()?;
        if restore < 1 {
            return Err(
                ApiError::invalid("restore", "must be a version number (1 or more)").into(),
            );
        }
        let draft = store::lessons::version_content(&state.db, &user.0, id, restore).await?;
        if let Some(problem) = draft.problems().into_iter().next() {
            return Err(ApiError::Invalid(problem).into());
        }
        store::lessons::restore(&state.db, &user.0, id, version, restore, &draft).await
    })
    .await
}

/// Copies lesson `id` (its saved content) into a new lesson owned by the
/// caller and returns the copy's id.
#[server(prefix = "/rpc", endpoint = "duplicate_lesson")]
pub async fn duplicate_lesson(id: i64) -> Result<i64, ApiError> {
    use crate::server::{http::ctx, store};
    ctx::finish(async {
        let user = ctx::teacher()?;
        let state = ctx::state()?;
        store::lessons::duplicate(&state.db, &user.0, id).await
    })
    .await
}

/// The exact token count of a text with the `o200k_base` BPE.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct TokenCount {
    /// Tokens.
    pub tokens: usize,
}

/// Counts `text`'s tokens with a real BPE tokenizer (too large to ship to
/// the browser, so the preview asks the server after a pause in typing).
#[server(prefix = "/rpc", endpoint = "count_tokens", input = Json)]
pub async fn count_tokens(text: String) -> Result<TokenCount, ApiError> {
    use crate::server::{http::ctx, platform::tokens};
    ctx::finish(async {
        ctx::teacher()?;
        if text.len() > 400_000 {
            return Err(ApiError::invalid("text", "must be at most 400,000 bytes").into());
        }
        Ok(TokenCount {
            tokens: tokens::count(&text).await?,
        })
    })
    .await
}

/// A lesson's runs, as its teacher reviews them.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct LessonRunsPage {
    /// The lesson.
    pub lesson_id: i64,
    /// Its title.
    pub title: String,
    /// Its runs, newest first.
    pub runs: Vec<crate::domain::lesson::run_report::LessonRunReport>,
}

/// The runs of a lesson the caller may see (own, or any for admins).
#[server(prefix = "/rpc", endpoint = "lesson_runs")]
pub async fn lesson_runs(id: i64) -> Result<LessonRunsPage, ApiError> {
    use crate::server::{http::ctx, lessons::runs, store};
    ctx::finish(async {
        let user = ctx::teacher()?;
        let state = ctx::state()?;
        let lesson = store::lessons::get(&state.db, &user.0, id).await?;
        Ok(LessonRunsPage {
            lesson_id: lesson.id,
            runs: runs::runs(&state, &lesson).await?,
            title: lesson.draft.title,
        })
    })
    .await
}
