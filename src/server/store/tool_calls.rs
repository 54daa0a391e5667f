//! The record of every tool call a session made, allowed or refused, with
//! its arguments, result or reason, and how long the check took.
//!
//! A call and the session state it leaves behind are written in one
//! transaction, so the timeline and the session never disagree.

use crate::domain::agent_session::{CallOutcome, CallStatus, ToolCallRecord};
use crate::domain::lesson::outcome::{StudentChange, TutorOutcome};
use crate::domain::workflow_state::WorkflowState;
use crate::server::platform::db::now;
use crate::server::platform::db::Db;
use crate::server::store::{lesson_outcomes, students};
use crate::server::ServerError;
use serde_json::Value;

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
    /// Done, or awaiting the backend's result.
    pub status: CallStatus,
    /// The tools the backend is told in the call's response.
    pub tools_seen: &'a str,
    /// What a tutor tool recorded, stored with the call.
    pub tutor_outcome: Option<&'a TutorOutcome>,
    /// What the call changes on the session's student record (the
    /// student's id and the change), written in the same transaction.
    pub student_change: Option<(i64, StudentChange)>,
    /// Now on the injected clock, Unix seconds (the student's record's
    /// times).
    pub now: i64,
}

/// Stores `call` and the session's new state together; returns the call's id.
pub async fn record(db: &Db, call: &NewCall<'_>) -> Result<i64, ServerError> {
    let mut tx = db.begin().await?;
    let call_id = sqlx::query_scalar::<_, i64>(
        "INSERT INTO tool_calls (session_id, at_ms, workflow, tool, arguments, outcome, result, reason, duration_us, status)
         VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10) RETURNING id",
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
    // The `status` column tracks a result's progress (`done`, `awaiting`,
    // `failed`, as its CHECK says); a refusal is in `outcome`, and
    // `CallStatus::parse` reads such a row back as `refused`.
    .bind(match call.status {
        CallStatus::Refused => CallStatus::Done.as_str(),
        status => status.as_str(),
    })
    .fetch_one(&mut *tx)
    .await?
    ;
    if let Some(outcome) = call.tutor_outcome {
        lesson_outcomes::insert(&mut tx, call.session_id, call_id, outcome).await?;
    }
    if let Some((student, change)) = call.student_change {
        students::apply(
            &mut tx,
            student,
            call.session_id,
            call.tutor_outcome,
            change,
            call.now,
        )
        .await?;
    }
    sqlx::query(
        "UPDATE agent_sessions SET state = $1, verified_account = $2, tools_seen = $3, last_activity = $4,
                calls_stored = calls_stored + 1, bytes_stored = bytes_stored + $5 WHERE id = $6",
    )
    .bind(serde_json::to_string(call.state).unwrap_or_default())
    .bind(call.verified_account)
    .bind(call.tools_seen)
    .bind(now())
    .bind(stored_bytes(call.arguments, call.result))
    .bind(call.session_id)
    .execute(&mut *tx)
    .await?;
    tx.commit().await?;
    Ok(call_id)
}

/// The bytes a call adds to its session's budget: its arguments' and
/// result's JSON, as stored.
pub fn stored_bytes(arguments: &Value, result: Option<&Value>) -> i64 {
    (arguments.to_string().len() + result.map_or(0, |r| r.to_string().len())) as i64
}

/// The newest `limit` calls of a session made before call `before` (or
/// the newest overall), oldest first: one page of its timeline.
pub async fn page(
    db: &Db,
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
        status: String,
    }
    let rows = sqlx::query_as::<_, Row>(
        "SELECT * FROM (SELECT id, at_ms, workflow, tool, arguments, outcome, result, reason, duration_us, status
         FROM tool_calls WHERE session_id = $1 AND id < $2 ORDER BY id DESC LIMIT $3) AS newest ORDER BY id",
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
            outcome: CallOutcome::parse(&r.outcome),
            result: r.result.and_then(|s| serde_json::from_str(&s).ok()),
            reason: r.reason,
            duration_us: r.duration_us,
            workflow: r.workflow,
            truncated: false,
            status: CallStatus::parse(&r.status, CallOutcome::parse(&r.outcome)),
        })
        .collect())
}

/// What a result report needs to know about the call it completes.
pub struct CallToComplete {
    /// The tool called.
    pub tool: String,
    /// Allowed or refused.
    pub outcome: CallOutcome,
    /// Whether its result is still awaited.
    pub status: CallStatus,
}

/// Call `call_id` of session `session_id`, if it is one of that session's.
pub async fn find(
    db: &Db,
    session_id: &str,
    call_id: i64,
) -> Result<Option<CallToComplete>, ServerError> {
    let row: Option<(String, String, String)> = sqlx::query_as(
        "SELECT tool, outcome, status FROM tool_calls WHERE id = $1 AND session_id = $2",
    )
    .bind(call_id)
    .bind(session_id)
    .fetch_optional(db)
    .await?;
    Ok(row.map(|(tool, outcome, status)| {
        let outcome = CallOutcome::parse(&outcome);
        CallToComplete {
            tool,
            outcome,
            status: CallStatus::parse(&status, outcome),
        }
    }))
}

/// Call `call_id` of session `session_id`'s status and result as stored
/// now (the agent runner waits on it for a backend's report).
pub async fn reported(
    db: &Db,
    session_id: &str,
    call_id: i64,
) -> Result<Option<(CallStatus, Option<Value>)>, ServerError> {
    let row: Option<(String, String, Option<String>)> = sqlx::query_as(
        "SELECT outcome, status, result FROM tool_calls WHERE id = $1 AND session_id = $2",
    )
    .bind(call_id)
    .bind(session_id)
    .fetch_optional(db)
    .await?;
    Ok(row.map(|(outcome, status, result)| {
        (
            CallStatus::parse(&status, CallOutcome::parse(&outcome)),
            result.and_then(|r| serde_json::from_str(&r).ok()),
        )
    }))
}

/// Stores a backend's (or plugin's) result for an awaiting call and the
/// session state it leaves, together, adding `waited_us` to its duration;
/// returns the whole duration, or `None` (and nothing written) if the call
/// was no longer awaiting, so a result is taken at most once.
pub async fn complete(
    db: &Db,
    session_id: &str,
    call_id: i64,
    status: CallStatus,
    result: &Value,
    state: &WorkflowState,
    waited_us: i64,
) -> Result<Option<i64>, ServerError> {
    let mut tx = db.begin().await?;
    let done: Option<i64> = sqlx::query_scalar(
        "UPDATE tool_calls SET status = $1, result = $2, duration_us = duration_us + $3
         WHERE id = $4 AND session_id = $5 AND status = 'awaiting'
         RETURNING duration_us",
    )
    .bind(status.as_str())
    .bind(result.to_string())
    .bind(waited_us)
    .bind(call_id)
    .bind(session_id)
    .fetch_optional(&mut *tx)
    .await?;
    let Some(duration_us) = done else {
        return Ok(None);
    };
    sqlx::query(
        "UPDATE agent_sessions SET state = $1, last_activity = $2, bytes_stored = bytes_stored + $3 WHERE id = $4",
    )
    .bind(serde_json::to_string(state).unwrap_or_default())
    .bind(now())
    .bind(result.to_string().len() as i64)
    .bind(session_id)
        .execute(&mut *tx)
        .await?;
    tx.commit().await?;
    Ok(Some(duration_us))
}
