//! A student's rights over their data: deleting a student removes all of
//! it (their record, their sessions with every call, outcome, todo and
//! plugin row, their review items) in one transaction, after ending their
//! live sessions; exporting gives all of it as one JSON file ([`export`]).
//! Who may do either is [`access::may_see`]'s one rule.

pub mod access;
pub mod export;

use crate::error::ApiError;
use crate::server::store::student_data as store;
use crate::server::{agent, AppState, ServerError};
use access::{may_see, Viewer};

/// The end reason of a session ended because its student was deleted.
pub const END_REASON: &str = "student deleted";

/// Deletes student `id` with all their data, if `viewer` may see them
/// (404 otherwise). Their open sessions are ended first, so watchers are
/// told and nothing live keeps their data; a session opened for them
/// while this runs is deleted with the rest and freed after.
pub async fn delete(state: &AppState, viewer: &Viewer, id: i64) -> Result<(), ServerError> {
    may_see(state, viewer, id).await?;
    for session in store::open_sessions(&state.db, id).await? {
        agent::sessions::end(state, &session, END_REASON).await?;
    }
    let deleted = store::delete(&state.db, id)
        .await?
        .ok_or_else(|| ApiError::NotFound(format!("Student {id}")))?;
    // Ending an already deleted session frees what is live of it (a
    // no-op for the ones ended above).
    for session in &deleted.still_open {
        agent::sessions::end(state, session, END_REASON).await?;
    }
    tracing::info!(
        student = id,
        by = viewer.user_id,
        sessions = deleted.sessions,
        review_items = deleted.review_items,
        removed = ?deleted.purged.removed,
        "student deleted with all their data"
    );
    Ok(())
}
