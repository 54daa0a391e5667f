//! Live agent sessions: opening them, enforcing the rules on every tool call,
//! running the built-in tools, recording every call, and pushing each change
//! to watchers.

use crate::domain::agent_session::{
    CallOutcome, CallResponse, SessionEvent, SessionSnapshot, SessionSummary, ToolCallRecord,
    WorkflowState, IDENTITY_VERIFIED, NEEDS_IDENTITY,
};
use crate::error::ApiError;
use crate::server::auth::{random_token, token_hash};
use crate::server::db::now;
use crate::server::{AppState, ServerError};
use serde_json::{json, Value};
use std::time::Instant;

/// A session row.
#[derive(Debug, Clone, sqlx::FromRow)]
pub struct SessionRow {
    /// Id.
    pub id: String,
    /// SHA-256 of the session token.
    pub token_hash: String,
    /// JSON WorkflowState.
    pub state: String,
    /// Account whose identity was verified, if any.
    pub verified_account: Option<String>,
    /// Set once ended.
    pub ended_at: Option<i64>,
    /// Last call or open, Unix seconds.
    pub last_activity: i64,
    /// Opened, Unix seconds.
    pub created_at: i64,
}

impl SessionRow {
    /// The parsed workflow state.
    pub fn workflow_state(&self) -> Result<WorkflowState, ServerError> {
        serde_json::from_str(&self.state).map_err(|e| {
            ServerError::Config(format!("session {} has an unreadable state: {e}", self.id))
        })
    }
}

const SELECT: &str = "SELECT id, token_hash, state, verified_account, ended_at, last_activity, created_at FROM agent_sessions";

/// Loads a session.
pub async fn get(state: &AppState, id: &str) -> Result<SessionRow, ServerError> {
    sqlx::query_as::<_, SessionRow>(&format!("{SELECT} WHERE id = ?"))
        .bind(id)
        .fetch_optional(&state.db)
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
    let row = sqlx::query_as::<_, SessionRow>(&format!("{SELECT} WHERE token_hash = ?"))
        .bind(&hash)
        .fetch_optional(&state.db)
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
        return Err(
            ApiError::invalid("workflowId", format!("unknown workflow \"{workflow}\"")).into(),
        );
    }
    let id = format!("s{}", &random_token()[..15]).to_lowercase();
    let token = format!("st_{}", random_token());
    let ws = WorkflowState::start(workflow);
    let t = now();
    sqlx::query(
        "INSERT INTO agent_sessions (id, token_hash, api_key_id, state, created_at, last_activity) VALUES (?, ?, ?, ?, ?, ?)",
    )
    .bind(&id)
    .bind(token_hash(&token))
    .bind(api_key)
    .bind(serde_json::to_string(&ws).unwrap_or_default())
    .bind(t)
    .bind(t)
    .execute(&state.db)
    .await?;
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
    let rows = sqlx::query_as::<_, SessionRow>(&format!(
        "{SELECT} ORDER BY ended_at IS NOT NULL, last_activity DESC LIMIT 200"
    ))
    .fetch_all(&state.db)
    .await?;
    rows.into_iter()
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

/// The recorded calls of a session, oldest first (at most the last 200).
pub async fn calls(state: &AppState, id: &str) -> Result<Vec<ToolCallRecord>, ServerError> {
    #[derive(sqlx::FromRow)]
    struct Row {
        id: i64,
        at_ms: i64,
        workflow: String,
        tool: String,
        arguments: String,
        outcome: String,
        result: Option<String>,
        reason: Option<String>,
        duration_us: i64,
    }
    let rows = sqlx::query_as::<_, Row>(
        "SELECT * FROM (SELECT id, at_ms, workflow, tool, arguments, outcome, result, reason, duration_us
         FROM tool_calls WHERE session_id = ? ORDER BY id DESC LIMIT 200) ORDER BY id",
    )
    .bind(id)
    .fetch_all(&state.db)
    .await?;
    Ok(rows
        .into_iter()
        .map(|r| ToolCallRecord {
            id: r.id,
            at_ms: r.at_ms,
            tool: r.tool,
            arguments: serde_json::from_str(&r.arguments).unwrap_or(Value::Null),
            outcome: if r.outcome == "allowed" {
                CallOutcome::Allowed
            } else {
                CallOutcome::Refused
            },
            result: r.result.and_then(|s| serde_json::from_str(&s).ok()),
            reason: r.reason,
            duration_us: r.duration_us,
            workflow: r.workflow,
        })
        .collect())
}

/// Everything a new watcher needs.
pub async fn snapshot(state: &AppState, id: &str) -> Result<SessionSnapshot, ServerError> {
    let row = get(state, id).await?;
    let ws = row.workflow_state()?;
    Ok(SessionSnapshot {
        session_id: row.id.clone(),
        tools: state.rules().available(&ws.current_workflow),
        state: ws,
        calls: calls(state, id).await?,
        ended: row.ended_at.is_some(),
    })
}

/// Ends a session (idempotent) and tells watchers.
pub async fn end(state: &AppState, id: &str, reason: &str) -> Result<(), ServerError> {
    let done = sqlx::query(
        "UPDATE agent_sessions SET ended_at = ?, end_reason = ? WHERE id = ? AND ended_at IS NULL",
    )
    .bind(now())
    .bind(reason)
    .bind(id)
    .execute(&state.db)
    .await?;
    if done.rows_affected() == 1 {
        state.hub.publish(
            id,
            &SessionEvent::Ended {
                reason: reason.to_owned(),
            },
        );
        state.hub.publish_list(&json!({"type": "ended", "id": id}));
    }
    Ok(())
}

/// Ends sessions idle longer than the configured time.
pub async fn expire_idle(state: &AppState) -> Result<usize, ServerError> {
    let cutoff = now() - state.config.session_idle.as_secs() as i64;
    let ids: Vec<String> = sqlx::query_scalar(
        "SELECT id FROM agent_sessions WHERE ended_at IS NULL AND last_activity < ?",
    )
    .bind(cutoff)
    .fetch_all(&state.db)
    .await?;
    for id in &ids {
        end(state, id, "idle timeout").await?;
    }
    Ok(ids.len())
}

/// Re-announces the available tools of every open session whose set changed
/// after new bindings; no session is restarted.
pub async fn announce_tools(
    state: &AppState,
    before: &crate::server::rules::Rules,
) -> Result<(), ServerError> {
    let rows = sqlx::query_as::<_, SessionRow>(&format!("{SELECT} WHERE ended_at IS NULL"))
        .fetch_all(&state.db)
        .await?;
    let rules = state.rules();
    for row in rows {
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

/// Checks and, if allowed, runs one tool call; records it and pushes the
/// changes. Calls on one session are serialised, so state never races.
pub async fn call(
    state: &AppState,
    row: SessionRow,
    tool: &str,
    arguments: Value,
) -> Result<CallResponse, ServerError> {
    let lock = state.session_lock(&row.id);
    let _guard = lock.lock().await;
    let started = Instant::now();
    // Re-read under the lock: another call may have changed the state.
    let row = get(state, &row.id).await?;
    if row.ended_at.is_some() {
        return Err(ApiError::Conflict(format!("Session {} has ended.", row.id)).into());
    }
    let mut ws = row.workflow_state()?;
    let before = ws.clone();
    let mut verified = row.verified_account.clone();
    let (outcome, result, reason) = match refusal(state, &ws, tool, &arguments) {
        Some(reason) => (CallOutcome::Refused, None, Some(reason)),
        None => match crate::server::builtins::run(
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
    let mut tx = state.db.begin().await?;
    let call_id = sqlx::query(
        "INSERT INTO tool_calls (session_id, at_ms, workflow, tool, arguments, outcome, result, reason, duration_us)
         VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
    )
    .bind(&row.id)
    .bind(at_ms)
    .bind(&before.current_workflow)
    .bind(tool)
    .bind(arguments.to_string())
    .bind(if outcome == CallOutcome::Allowed { "allowed" } else { "refused" })
    .bind(result.as_ref().map(Value::to_string))
    .bind(&reason)
    .bind(duration_us)
    .execute(&mut *tx)
    .await?
    .last_insert_rowid();
    sqlx::query(
        "UPDATE agent_sessions SET state = ?, verified_account = ?, last_activity = ? WHERE id = ?",
    )
    .bind(serde_json::to_string(&ws).unwrap_or_default())
    .bind(&verified)
    .bind(now())
    .bind(&row.id)
    .execute(&mut *tx)
    .await?;
    tx.commit().await?;

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
        end(state, &row.id, "ended by agent").await?;
    }
    Ok(CallResponse {
        allowed: outcome == CallOutcome::Allowed,
        result,
        reason,
        state: ws,
        call_id,
    })
}
