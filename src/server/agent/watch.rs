//! What watchers read: the session list, pages of a session's calls, the
//! snapshot a new watcher starts from, and the events that keep both
//! current when a session's state changes.

use super::access::get;
use super::listing::{agent_view, tools_now};
use crate::domain::agent_session::{SessionEvent, SessionSnapshot, SessionSummary, ToolCallRecord};
use crate::domain::limits::{CALLS_PAGE_MAX, SNAPSHOT_CALLS, SNAPSHOT_VALUE_MAX_BYTES};
use crate::domain::ownership::Viewer;
use crate::domain::session_checks::{tool_checks, Outline, WorkflowChecks};
use crate::domain::workflow_state::WorkflowState;
use crate::server::platform::db::now;
use crate::server::store::agent_sessions::{self as rows, SessionRow};
use crate::server::store::{lessons, tool_calls};
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
        trial: false,
        lesson_title: None,
    }
}

/// Session `row`'s summary in state `ws`, active at `last_activity`: what
/// it stores about who opened it included.
fn summary_of_row(row: &SessionRow, ws: &WorkflowState, last_activity: i64) -> SessionSummary {
    SessionSummary {
        started_by: row.started_by(),
        trial: row.trial,
        lesson_title: row.lesson_title.clone(),
        ..summary_of(
            &row.id,
            ws,
            row.created_at,
            last_activity,
            row.ended_at.is_some(),
            row.student.as_deref(),
        )
    }
}

/// Open sessions first, then recently ended ones, of those `viewer` may
/// see (`domain::ownership`, as the store's filter).
pub async fn list(state: &AppState, viewer: Viewer) -> Result<Vec<SessionSummary>, ServerError> {
    rows::recent(&state.db, viewer)
        .await?
        .into_iter()
        .map(|r| Ok(summary_of_row(&r, &r.workflow_state()?, r.last_activity)))
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
        end_reason: row.end_reason.clone(),
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

/// What session `row` runs, for its watchers: its lesson (tasks and
/// review items), its vibe (what its agents' tools require or set) or the
/// workflows it may be in (what each one's tools, its steps' included,
/// require or set). Read from the lesson and the rules in force, so the
/// visualiser draws the session's own definition.
pub async fn outline(state: &AppState, row: &SessionRow) -> Result<Outline, ServerError> {
    if row.lesson_tools.is_some() {
        let lesson = match row.lesson_id {
            Some(id) => Some(lessons::get_any(&state.db, id).await?.draft),
            None => None,
        };
        return Ok(Outline::lesson(lesson.as_ref()));
    }
    let rules = state.rules();
    let labels = &rules.bindings.labels;
    let tools = |ids: &[String]| {
        ids.iter()
            .filter_map(|id| rules.tool(id))
            .collect::<Vec<_>>()
    };
    if let Some(ctx) = row.workflow_state()?.agent {
        let vibe = rules.vibe(&ctx.vibe);
        let agents = vibe.map(|v| rules.agents_of(v)).unwrap_or_default();
        let mut ids: Vec<String> = Vec::new();
        for agent in &agents {
            for id in vibe.map(|v| v.tools_of(agent)).unwrap_or_default() {
                if !ids.contains(&id) {
                    ids.push(id);
                }
            }
        }
        return Ok(Outline::Vibe {
            name: vibe.map_or_else(|| ctx.vibe.clone(), |v| v.name.clone()),
            agents: agents
                .iter()
                .map(|a| (a.id.to_string(), a.name.clone()))
                .collect(),
            checks: tool_checks(tools(&ids), labels),
        });
    }
    let workflows = rules
        .workflows()
        .iter()
        .map(|w| {
            let mut ids = rules.available(w.id.as_str());
            for step in rules
                .definition(w.id.as_str())
                .map_or(&[][..], |d| &d.steps)
            {
                for tool in &step.tools {
                    if !ids.iter().any(|t| t == tool.as_str()) {
                        ids.push(tool.to_string());
                    }
                }
            }
            WorkflowChecks {
                id: w.id.to_string(),
                name: w.name.clone(),
                checks: tool_checks(tools(&ids), labels),
            }
        })
        .collect();
    Ok(Outline::Workflows { workflows })
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
    }
    publish_list_change(state, row, before, ws);
}

/// Tells the session list's watchers when `ws` differs from `before` (the
/// session's own watchers are told by the caller).
pub(super) fn publish_list_change(
    state: &AppState,
    row: &SessionRow,
    before: &WorkflowState,
    ws: &WorkflowState,
) {
    if ws != before {
        state.hub.publish_list(
            &row.id,
            &json!({"type": "updated", "session": summary_of_row(row, ws, now())}),
        );
    }
}
