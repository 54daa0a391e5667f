//! The event streams: one session's (replay or snapshot, then live) and
//! the list's changes, each counted against the stream caps.

use super::SessionQuery;
use crate::domain::agent_session::SessionEvent;
use crate::server::agent::hub::Frame;
use crate::server::agent::sessions;
use crate::server::http::extract::{QueryParams, Viewing, Watching};
use crate::server::http::rest::event_streams::{event_stream, list_stream, session_stream};
use crate::server::{AppState, ServerError};
use axum::body::Bytes;
use axum::extract::State;
use axum::http::HeaderMap;
use axum::response::Response;

/// The `snapshot` event of `row`'s session, as event `id`.
async fn snapshot_frame(
    state: &AppState,
    row: crate::server::store::agent_sessions::SessionRow,
    id: u64,
) -> Result<Bytes, ServerError> {
    let snapshot = sessions::snapshot_of(state, row).await?;
    let json =
        serde_json::to_string(&SessionEvent::Snapshot(Box::new(snapshot))).unwrap_or_default();
    Ok(Frame::new(id, "snapshot", &json).sse)
}

/// `GET /api/sessions/{id}/events`: the session's own token or plugin
/// token, or a person or API key who may see it ([`Watching`]).
pub(super) async fn events(
    State(state): State<AppState>,
    watching: Watching,
    QueryParams(_): QueryParams<SessionQuery>,
    headers: HeaderMap,
) -> Result<Response, ServerError> {
    let id = watching.row.id;
    let permit = state
        .streams
        .acquire(&stream_limits(&state, Some(&id), &watching.listeners))
        .await?;
    let last_seen = headers
        .get("last-event-id")
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.trim().parse::<u64>().ok());
    // Across instances, the replay may come from the database.
    let sub = crate::server::cluster::subscribe(&state, &id, last_seen).await?;
    // Read after subscribing: a session that ended before this point gets
    // its final snapshot and a closed stream (and no channel is kept for
    // it); one that ends after will send `ended` on the live stream.
    // The same read gives the snapshot, when one is needed. The session's
    // end already told every instance to close its channel; the one the
    // subscription may have just made here is closed here, at once (a
    // relayed close would leave it until its notification came back, and
    // cost a notification per watch of an ended session).
    let row = sessions::get(&state, &id).await?;
    if row.ended_at.is_some() {
        state.hub.close_here(&id);
        let frame = snapshot_frame(&state, row, sub.snapshot_id).await?;
        return Ok(event_stream(vec![frame], None, 0, None));
    }
    let mut first = Vec::with_capacity(sub.replay.len() + sub.history.len() + 1);
    if sub.needs_snapshot {
        first.extend(sub.history.iter().map(|f| f.sse.clone()));
        first.push(snapshot_frame(&state, row, sub.snapshot_id).await?);
    }
    let last_replayed = sub.replay.last().map_or(sub.snapshot_id, |f| f.id);
    first.extend(sub.replay.iter().map(|f| f.sse.clone()));
    // The snapshot or replay stands for everything up to `last_replayed`;
    // the sink was made at `snapshot_id` and the replay ends there too.
    debug_assert_eq!(last_replayed, sub.snapshot_id);
    Ok(session_stream(first, sub.sink, permit))
}

/// The caps a new stream counts against: its session's, and the signed-in
/// user's or API key's (`listener`) if there is one.
fn stream_limits(
    state: &AppState,
    session: Option<&str>,
    listeners: &[String],
) -> Vec<(String, usize)> {
    let mut limits = Vec::new();
    if let Some(id) = session {
        limits.push((
            format!("session:{id}"),
            state.config.max_streams_per_session,
        ));
    }
    for listener in listeners {
        limits.push((listener.clone(), state.config.max_streams_per_user));
    }
    limits
}

/// `GET /api/sessions/events` (the signed-in account, or an API key with
/// `sessions`): the list's changes, only of sessions the caller may see.
pub(super) async fn list_events(
    viewing: Viewing,
    State(state): State<AppState>,
) -> Result<Response, ServerError> {
    let permit = state
        .streams
        .acquire(&stream_limits(&state, None, &viewing.listeners))
        .await?;
    let rx = state.hub.subscribe_list();
    Ok(list_stream(state, viewing.viewer, rx, permit))
}
