//! What watchers read: the session list, pages of a session's calls, the
//! snapshot a new watcher starts from, and the events that keep both
//! current when a session's state changes.

use super::access::get;
use super::listing::{agent_view, tools_now};
use crate::domain::agent_session::{SessionEvent, SessionSnapshot, SessionSummary, ToolCallRecord};
use crate::domain::limits::{CALLS_PAGE_MAX, SNAPSHOT_CALLS, SNAPSHOT_VALUE_MAX_BYTES};
use crate::domain::workflow_state::WorkflowState;
use crate::server::platform::db::now;
use crate::server::store::agent_sessions::{self as rows, SessionRow};
use crate::server::store::tool_calls;
use crate::server::{AppState, ServerError};
use serde_json::json;

pub(super) fn summary_of(
    id: &str,
    ws: &WorkflowState,
    created_at: i64,
    last_activity: i64,
    ended: bool,
    student: Option<&str>,
) -> SessionSummary {
    SessionSummary {
        id: id.to_owned(),
        state: ws.clone(),
        last_activity,
        created_at,
        ended,
        student: student.map(str::to_owned),
        started_by: None,
    }
}

/// Open sessions first, then recently ended ones.
pub async fn list(state: &AppState) -> Result<Vec<SessionSummary>, ServerError> {
    rows::recent(&state.db)
        .await?
        .into_iter()
        .map(|r| {
            let summary = summary_of(
                &r.id,
                &r.workflow_state()?,
                r.created_at,
                r.last_activity,
                r.ended_at.is_some(),
                r.student.as_deref(),
            );
            Ok(SessionSummary {
                started_by: r.started_by(),
                ..summary
            })
        })
        .collect()
}

/// One page of a session's calls older than `before` (all of each call,
/// unlike a snapshot's excerpts), oldest first; at most [`CALLS_PAGE_MAX`].
pub async fn calls_page(
    state: &AppState,
    id: &str,
    before: Option<i64>,
    limit: usize,
) -> Result<Vec<ToolCallRecord>, ServerError> {
    tool_calls::page(&state.db, id, before, limit.clamp(1, CALLS_PAGE_MAX)).await
}

/// Everything a new watcher needs: the state, the tools now, and the last
/// [`SNAPSHOT_CALLS`] calls with large values cut to excerpts, so a session
/// with thousands of calls still costs a new watcher a few hundred KB.
pub async fn snapshot(state: &AppState, id: &str) -> Result<SessionSnapshot, ServerError> {
    snapshot_of(state, get(state, id).await?).await
}

/// [`snapshot`] of a row already read.
pub async fn snapshot_of(
    state: &AppState,
    row: SessionRow,
) -> Result<SessionSnapshot, ServerError> {
    let ws = row.workflow_state()?;
    Ok(SessionSnapshot {
        started_at: row.created_at,
        ended_at: row.ended_at,
        planned_minutes: row.timing().planned_minutes,
        turns: row.turn_log()?,
        agent: agent_view(state, &ws),
        tools: tools_now(state, &row.id, row.lesson_tools.as_deref(), &ws),
        plugin: state.plugins.get(&row.id).map(|l| l.current()),
        state: ws,
        calls: tool_calls::page(&state.db, &row.id, None, SNAPSHOT_CALLS)
            .await?
            .into_iter()
            .map(|c| c.bounded(SNAPSHOT_VALUE_MAX_BYTES))
            .collect(),
        ended: row.ended_at.is_some(),
        started_by: row.started_by(),
        session_id: row.id,
    })
}

/// Tells watchers (the session's and the list's) when `ws` differs from
/// `before`.
pub(super) fn publish_state_change(
    state: &AppState,
    row: &SessionRow,
    before: &WorkflowState,
    ws: &WorkflowState,
) {
    if ws != before {
        state
            .hub
            .publish(&row.id, &SessionEvent::WorkflowUpdate(ws.update()));
        state.hub.publish_list(&json!({"type": "updated", "session": summary_of(&row.id, ws, row.created_at, now(), false, row.student.as_deref())}));
    }
}
