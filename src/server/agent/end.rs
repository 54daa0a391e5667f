//! Ending sessions: by the agent, an admin, a revoked key or idleness.
//! An ended session keeps its record; everything live (stream, plugin,
//! windows, MCP sessions, call lock) is freed.

use crate::domain::agent_session::SessionEvent;
use crate::server::platform::db::now;
use crate::server::store::agent_sessions as rows;
use crate::server::{AppState, ServerError};
use serde_json::json;

/// Ends a session (idempotent): records it, tells watchers (`ended`), then
/// closes its stream and its MCP sessions and frees its broadcast ring and
/// call lock; only the database record stays. Waits for a call in progress to finish first.
pub async fn end(state: &AppState, id: &str, reason: &str) -> Result<(), ServerError> {
    let _guard = state.lock_session(id).await?;
    end_locked(state, id, reason).await
}

/// [`end`] for a caller that already holds the session's call lock.
pub(super) async fn end_locked(
    state: &AppState,
    id: &str,
    reason: &str,
) -> Result<(), ServerError> {
    if rows::end(&state.db, id, reason).await? {
        crate::server::students::session_ended(state, id).await?;
        state.hub.publish(
            id,
            &SessionEvent::Ended {
                reason: reason.to_owned(),
            },
        );
        state
            .hub
            .publish_list(id, &json!({"type": "ended", "id": id}));
    }
    state.hub.close(id);
    state.plugins.forget(id);
    crate::server::agent::plugins::session_ended(state, id).await;
    state.budgets.forget_session(id).await?;
    state
        .session_mcp
        .close_owner(&crate::server::http::mcp_sessions::session_owner(id));
    state.forget_session_lock(id);
    Ok(())
}

/// Ends every open session opened with API key `key_id` (it was revoked).
pub async fn end_opened_by_key(
    state: &AppState,
    key_id: i64,
    reason: &str,
) -> Result<(), ServerError> {
    for id in rows::open_for_key(&state.db, key_id).await? {
        end(state, &id, reason).await?;
    }
    Ok(())
}

/// Ends sessions idle longer than the configured time.
pub async fn expire_idle(state: &AppState) -> Result<usize, ServerError> {
    let cutoff = now() - state.config.session_idle.as_secs() as i64;
    let ids = rows::idle_since(&state.db, cutoff).await?;
    for id in &ids {
        end(state, id, "idle timeout").await?;
    }
    Ok(ids.len())
}
