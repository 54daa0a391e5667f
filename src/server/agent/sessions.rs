//! Live agent sessions: opening them, enforcing the rules on every tool call,
//! running the built-in tools, recording every call, and pushing each change
//! to watchers.

use crate::domain::agent_session::{
    CallOutcome, CallResponse, SessionEvent, SessionSnapshot, SessionSummary, ToolCallRecord,
    WorkflowState, IDENTITY_VERIFIED, NEEDS_IDENTITY,
};
use crate::domain::catalogue::ToolId;
use crate::domain::limits::{
    bytes_in_words, excerpt, CALLS_PAGE_MAX, SNAPSHOT_CALLS, SNAPSHOT_VALUE_MAX_BYTES,
    TOOL_ARGUMENTS_MAX_BYTES, TOOL_NAME_MAX_CHARS,
};
use crate::error::ApiError;
use crate::server::agent::rules::Rules;
use crate::server::auth::{random_token, token_hash};
use crate::server::db::now;
use crate::server::store::agent_sessions::{self as rows, SessionRow};
use crate::server::store::tool_calls::{self, NewCall};
use crate::server::{AppState, ServerError};
use serde_json::{json, Value};
use std::time::Instant;

/// Loads a session.
pub async fn get(state: &AppState, id: &str) -> Result<SessionRow, ServerError> {
    rows::find(&state.db, id)
        .await?
        .ok_or_else(|| ApiError::NotFound(format!("Session {id}")).into())
}

/// Checks that `token` is this session's token: 401 without a token or for
/// an unknown one, 403 for another session's token.
pub async fn authorize(
    state: &AppState,
    id: &str,
    token: Option<&str>,
) -> Result<SessionRow, ServerError> {
    let token = token.ok_or(ApiError::Unauthenticated)?;
    let hash = token_hash(token);
    let row = rows::find_by_token_hash(&state.db, &hash)
        .await?
        .ok_or(ApiError::Unauthenticated)?;
    if row.id != id {
        return Err(ApiError::Forbidden {
            needed: "this session's token".into(),
        }
        .into());
    }
    Ok(row)
}

/// Opens a session in `workflow`; returns its id and token.
pub async fn open(
    state: &AppState,
    workflow: &str,
    api_key: Option<i64>,
) -> Result<(String, String), ServerError> {
    if !state.rules().has_workflow(workflow) {
        return Err(ApiError::invalid(
            "workflowId",
            format!("unknown workflow \"{}\"", excerpt(workflow)),
        )
        .into());
    }
    let id = format!("s{}", &random_token()[..15]).to_lowercase();
    let token = format!("st_{}", random_token());
    let ws = WorkflowState::start(workflow);
    let t = now();
    rows::insert(&state.db, &id, &token_hash(&token), api_key, &ws, t).await?;
    state
        .hub
        .publish(&id, &SessionEvent::WorkflowUpdate(ws.update()));
    state
        .hub
        .publish_list(&json!({"type": "opened", "session": summary_of(&id, &ws, t, t, false)}));
    Ok((id, token))
}

fn summary_of(
    id: &str,
    ws: &WorkflowState,
    created_at: i64,
    last_activity: i64,
    ended: bool,
) -> SessionSummary {
    SessionSummary {
        id: id.to_owned(),
        state: ws.clone(),
        last_activity,
        created_at,
        ended,
    }
}

/// Open sessions first, then recently ended ones.
pub async fn list(state: &AppState) -> Result<Vec<SessionSummary>, ServerError> {
    rows::recent(&state.db)
        .await?
        .into_iter()
        .map(|r| {
            Ok(summary_of(
                &r.id,
                &r.workflow_state()?,
                r.created_at,
                r.last_activity,
                r.ended_at.is_some(),
            ))
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
        tools: state.rules().available(&ws.current_workflow),
        state: ws,
        calls: tool_calls::page(&state.db, &row.id, None, SNAPSHOT_CALLS)
            .await?
            .into_iter()
            .map(|c| c.bounded(SNAPSHOT_VALUE_MAX_BYTES))
            .collect(),
        ended: row.ended_at.is_some(),
        session_id: row.id,
    })
}

/// Ends a session (idempotent): records it, tells watchers (`ended`), then
/// closes its stream and frees its broadcast ring and call lock; only the
/// database record stays. Waits for a call in progress to finish first.
pub async fn end(state: &AppState, id: &str, reason: &str) -> Result<(), ServerError> {
    let lock = state.session_lock(id);
    let _guard = lock.lock().await;
    end_locked(state, id, reason).await
}

/// [`end`] for a caller that already holds the session's call lock.
async fn end_locked(state: &AppState, id: &str, reason: &str) -> Result<(), ServerError> {
    if rows::end(&state.db, id, reason).await? {
        state.hub.publish(
            id,
            &SessionEvent::Ended {
                reason: reason.to_owned(),
            },
        );
        state.hub.publish_list(&json!({"type": "ended", "id": id}));
    }
    state.hub.close(id);
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

/// Re-announces the available tools of every open session whose set changed
/// after new bindings; no session is restarted.
pub async fn announce_tools(state: &AppState, before: &Rules) -> Result<(), ServerError> {
    let rules = state.rules();
    for row in rows::open(&state.db).await? {
        let ws = row.workflow_state()?;
        let now_tools = rules.available(&ws.current_workflow);
        if now_tools != before.available(&ws.current_workflow) {
            state
                .hub
                .publish(&row.id, &SessionEvent::ToolsChanged { tools: now_tools });
        }
    }
    Ok(())
}

/// Why `tool` may not run now, if it may not: not in the catalogue, not
/// available in the workflow, bad arguments, or identity not verified.
fn refusal(state: &AppState, ws: &WorkflowState, tool: &str, arguments: &Value) -> Option<String> {
    let rules = state.rules();
    if rules.tool(tool).is_none() {
        return Some(format!("`{tool}` is not a tool in the catalogue"));
    }
    if !rules.allows(&ws.current_workflow, tool) {
        return Some(format!(
            "`{tool}` is not available in workflow `{}`; available: {}",
            ws.current_workflow,
            rules.available(&ws.current_workflow).join(", ")
        ));
    }
    if let Err(problem) = rules.check_arguments(tool, arguments) {
        return Some(format!("invalid arguments for `{tool}`: {problem}"));
    }
    if NEEDS_IDENTITY.contains(&tool) && !ws.passed(IDENTITY_VERIFIED) {
        return Some(format!(
            "`{tool}` needs a verified identity; call `perform_idv_check` first"
        ));
    }
    None
}

/// Refuses, before any lookup and without recording anything, a tool name
/// that is not a catalogue id (422 naming `name`) and arguments over
/// [`TOOL_ARGUMENTS_MAX_BYTES`] (413 naming `arguments`).
pub(crate) fn check_call_size(tool: &str, arguments: &Value) -> Result<(), ApiError> {
    if tool.chars().count() > TOOL_NAME_MAX_CHARS {
        return Err(ApiError::invalid(
            "name",
            format!(
                "must be at most {TOOL_NAME_MAX_CHARS} characters (got \"{}\")",
                excerpt(tool)
            ),
        ));
    }
    ToolId::parse(tool).map_err(|e| ApiError::invalid("name", e.rule))?;
    if arguments.to_string().len() > TOOL_ARGUMENTS_MAX_BYTES {
        return Err(ApiError::TooLarge {
            field: "arguments".into(),
            limit: bytes_in_words(TOOL_ARGUMENTS_MAX_BYTES),
        });
    }
    Ok(())
}

/// Checks and, if allowed, runs one tool call; records it and pushes the
/// changes. Calls on one session are serialised, so state never races.
pub async fn call(
    state: &AppState,
    row: SessionRow,
    tool: &str,
    arguments: Value,
) -> Result<CallResponse, ServerError> {
    check_call_size(tool, &arguments)?;
    let lock = state.session_lock(&row.id);
    let _guard = lock.lock().await;
    let started = Instant::now();
    // Re-read under the lock: another call may have changed the state.
    let row = get(state, &row.id).await?;
    if row.ended_at.is_some() {
        state.forget_session_lock(&row.id);
        return Err(ApiError::Conflict(format!("Session {} has ended.", row.id)).into());
    }
    let mut ws = row.workflow_state()?;
    let before = ws.clone();
    let mut verified = row.verified_account.clone();
    let (outcome, result, reason) = match refusal(state, &ws, tool, &arguments) {
        Some(reason) => (CallOutcome::Refused, None, Some(reason)),
        None => match crate::server::agent::builtins::run(
            state,
            &row.id,
            &mut ws,
            &mut verified,
            tool,
            &arguments,
        )
        .await?
        {
            Ok(result) => (CallOutcome::Allowed, Some(result), None),
            Err(reason) => (CallOutcome::Refused, None, Some(reason)),
        },
    };
    let duration_us = started.elapsed().as_micros() as i64;
    let at_ms = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_millis() as i64);
    let call_id = tool_calls::record(
        &state.db,
        &NewCall {
            session_id: &row.id,
            at_ms,
            workflow: &before.current_workflow,
            tool,
            arguments: &arguments,
            outcome,
            result: result.as_ref(),
            reason: reason.as_deref(),
            duration_us,
            state: &ws,
            verified_account: verified.as_deref(),
        },
    )
    .await?;

    let record = ToolCallRecord {
        id: call_id,
        at_ms,
        tool: tool.to_owned(),
        arguments,
        outcome,
        result: result.clone(),
        reason: reason.clone(),
        duration_us,
        workflow: before.current_workflow.clone(),
        truncated: false,
    };
    state.hub.publish(&row.id, &SessionEvent::ToolCall(record));
    if ws != before {
        state
            .hub
            .publish(&row.id, &SessionEvent::WorkflowUpdate(ws.update()));
        state.hub.publish_list(&json!({"type": "updated", "session": summary_of(&row.id, &ws, row.created_at, now(), false)}));
    }
    if ws.current_workflow != before.current_workflow {
        state.hub.publish(
            &row.id,
            &SessionEvent::ToolsChanged {
                tools: state.rules().available(&ws.current_workflow),
            },
        );
    }
    if tool == "end_session" && outcome == CallOutcome::Allowed {
        end_locked(state, &row.id, "ended by agent").await?;
    }
    Ok(CallResponse {
        allowed: outcome == CallOutcome::Allowed,
        result,
        reason,
        state: ws,
        call_id,
    })
}
