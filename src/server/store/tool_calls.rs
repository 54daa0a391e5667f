//! The record of every tool call a session made, allowed or refused, with
//! its arguments, result or reason, and how long the check took.
//!
//! A call and the session state it leaves behind are written in one
//! transaction, so the timeline and the session never disagree.

use crate::domain::agent_session::{CallOutcome, ToolCallRecord, WorkflowState};
use crate::server::db::now;
use crate::server::ServerError;
use serde_json::Value;
use sqlx::SqlitePool;

/// A call to record, and the session state it leaves.
pub struct NewCall<'a> {
    /// The session.
    pub session_id: &'a str,
    /// Unix milliseconds.
    pub at_ms: i64,
    /// The workflow the call was checked in.
    pub workflow: &'a str,
    /// The tool's name.
    pub tool: &'a str,
    /// The arguments as sent.
    pub arguments: &'a Value,
    /// Allowed or refused.
    pub outcome: CallOutcome,
    /// The result, if it ran.
    pub result: Option<&'a Value>,
    /// Why it was refused, if it was.
    pub reason: Option<&'a str>,
    /// Check and run time.
    pub duration_us: i64,
    /// The session's state after the call.
    pub state: &'a WorkflowState,
    /// The account verified after the call, if any.
    pub verified_account: Option<&'a str>,
}

/// Stores `call` and the session's new state together; returns the call's id.
pub async fn record(db: &SqlitePool, call: &NewCall<'_>) -> Result<i64, ServerError> {
    let mut tx = db.begin().await?;
    let call_id = sqlx::query(
        "INSERT INTO tool_calls (session_id, at_ms, workflow, tool, arguments, outcome, result, reason, duration_us)
         VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
    )
    .bind(call.session_id)
    .bind(call.at_ms)
    .bind(call.workflow)
    .bind(call.tool)
    .bind(call.arguments.to_string())
    .bind(if call.outcome == CallOutcome::Allowed { "allowed" } else { "refused" })
    .bind(call.result.map(Value::to_string))
    .bind(call.reason)
    .bind(call.duration_us)
    .execute(&mut *tx)
    .await?
    .last_insert_rowid();
    sqlx::query(
        "UPDATE agent_sessions SET state = ?, verified_account = ?, last_activity = ? WHERE id = ?",
    )
    .bind(serde_json::to_string(call.state).unwrap_or_default())
    .bind(call.verified_account)
    .bind(now())
    .bind(call.session_id)
    .execute(&mut *tx)
    .await?;
    tx.commit().await?;
    Ok(call_id)
}

/// The newest `limit` calls of a session made before call `before` (or
/// the newest overall), oldest first: one page of its timeline.
pub async fn page(
    db: &SqlitePool,
    session_id: &str,
    before: Option<i64>,
    limit: usize,
) -> Result<Vec<ToolCallRecord>, ServerError> {
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
         FROM tool_calls WHERE session_id = ? AND id < ? ORDER BY id DESC LIMIT ?) ORDER BY id",
    )
    .bind(session_id)
    .bind(before.unwrap_or(i64::MAX))
    .bind(i64::try_from(limit).unwrap_or(i64::MAX))
    .fetch_all(db)
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
            truncated: false,
        })
        .collect())
}
