//! A new session, and what changes as it runs: its state, its turns, the
//! tools its agent was last shown, its end.

use super::rows::set_plugin_token;
use crate::domain::lesson::nudge::TurnLog;
use crate::domain::session_origin::Opener;
use crate::domain::workflow_state::WorkflowState;
use crate::server::platform::db::now;
use crate::server::platform::db::Db;
use crate::server::ServerError;

/// A session to store.
pub struct NewSession<'a> {
    /// Id.
    pub id: &'a str,
    /// SHA-256 of its token.
    pub token_hash: &'a str,
    /// SHA-256 of its first plugin token.
    pub plugin_token_hash: &'a str,
    /// Who or what opened it.
    pub opener: &'a Opener,
    /// Its first state.
    pub state: &'a WorkflowState,
    /// Whether Switchboard runs the built-in demo tools for it.
    pub runs_builtins: bool,
    /// The tools its backend is told at opening (comma-separated).
    pub tools_seen: &'a str,
    /// For a tutor session: the lesson and what it runs with.
    pub lesson: Option<LessonFields<'a>>,
    /// Opened, Unix seconds.
    pub at: i64,
}

/// What a tutor session stores about its lesson.
#[derive(Debug, Clone, Copy)]
pub struct LessonFields<'a> {
    /// The lesson.
    pub lesson_id: i64,
    /// Its tools when the session opened (comma-separated).
    pub tools: &'a str,
    /// Who it is for.
    pub student: Option<&'a str>,
    /// Its planned length.
    pub planned_minutes: Option<u32>,
    /// The student record it runs for, and what it knows of them (JSON
    /// `StudentContext`, fixed at opening).
    pub student_record: Option<(i64, &'a str)>,
}

/// Stores a newly opened session, active as of its opening, with its
/// plugin token.
pub async fn insert(db: &Db, session: &NewSession<'_>) -> Result<(), ServerError> {
    let mut tx = db.begin().await?;
    sqlx::query(
        "INSERT INTO agent_sessions (id, token_hash, api_key_id, state, runs_builtins, tools_seen,
                                     lesson_id, lesson_tools, student, planned_minutes, created_at, last_activity,
                                     opened_by, trial, started_by, student_id, student_context)
         VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, $16, $17)",
    )
    .bind(session.id)
    .bind(session.token_hash)
    .bind(session.opener.api_key)
    .bind(serde_json::to_string(session.state).unwrap_or_default())
    .bind(i64::from(session.runs_builtins))
    .bind(session.tools_seen)
    .bind(session.lesson.map(|l| l.lesson_id))
    .bind(session.lesson.map(|l| l.tools))
    .bind(session.lesson.and_then(|l| l.student))
    .bind(session.lesson.and_then(|l| l.planned_minutes).map(i64::from))
    .bind(session.at)
    .bind(session.at)
    .bind(session.opener.user)
    .bind(i64::from(session.opener.trial))
    .bind(
        session
            .opener
            .started_by
            .as_ref()
            .map(|s| serde_json::to_string(s).unwrap_or_default()),
    )
    .bind(session.lesson.and_then(|l| l.student_record).map(|(id, _)| id))
    .bind(session.lesson.and_then(|l| l.student_record).map(|(_, context)| context))
    .execute(&mut *tx)
    .await?;
    set_plugin_token(&mut *tx, session.id, session.plugin_token_hash, session.at).await?;
    tx.commit().await?;
    Ok(())
}

/// Sets a session's state (a backend's `PATCH …/state`) and marks it active.
pub async fn set_state(db: &Db, id: &str, state: &WorkflowState) -> Result<(), ServerError> {
    sqlx::query("UPDATE agent_sessions SET state = $1, last_activity = $2 WHERE id = $3")
        .bind(serde_json::to_string(state).unwrap_or_default())
        .bind(now())
        .bind(id)
        .execute(db)
        .await?;
    Ok(())
}

/// Stores a session's turn log (a turn was reported) and marks it active.
pub async fn set_turns(db: &Db, id: &str, log: &TurnLog) -> Result<(), ServerError> {
    sqlx::query("UPDATE agent_sessions SET turns = $1, last_activity = $2 WHERE id = $3")
        .bind(serde_json::to_string(log).unwrap_or_default())
        .bind(now())
        .bind(id)
        .execute(db)
        .await?;
    Ok(())
}

/// Records which tools the session's backend has now been told.
pub async fn set_tools_seen(db: &Db, id: &str, tools: &str) -> Result<(), ServerError> {
    sqlx::query("UPDATE agent_sessions SET tools_seen = $1 WHERE id = $2")
        .bind(tools)
        .bind(id)
        .execute(db)
        .await?;
    Ok(())
}

/// Marks the session ended now with `reason`; `false` if it had already
/// ended (or does not exist), so ending is idempotent.
pub async fn end(db: &Db, id: &str, reason: &str) -> Result<bool, ServerError> {
    let done = sqlx::query(
        "UPDATE agent_sessions SET ended_at = $1, end_reason = $2 WHERE id = $3 AND ended_at IS NULL",
    )
    .bind(now())
    .bind(reason)
    .bind(id)
    .execute(db)
    .await?;
    Ok(done.rows_affected() == 1)
}
