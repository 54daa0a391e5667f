//! Agent sessions: one row per session an agent backend opened, holding its
//! workflow state as JSON, the account whose identity it verified, and when
//! it was last active or ended; and each session's plugin token (migration
//! `0018_plugin_tokens.sql`), kept as a hash like the session token (the
//! plugin tokens exchanged for join codes are `join_codes`').
//!
//! The session engine (`server::agent::sessions`) decides; this module only
//! reads and writes rows.

use crate::domain::lesson::nudge::{Timing, TurnLog};
use crate::domain::session_origin::{Opener, StartedBy};
use crate::domain::workflow_state::WorkflowState;
use crate::server::platform::db::now;
use crate::server::ServerError;
use sqlx::SqlitePool;

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
    /// Whether Switchboard runs the built-in demo tools for this session
    /// (otherwise the backend executes every tool but the session tools).
    pub runs_builtins: bool,
    /// The tools the backend was last told (comma-separated), to tell it
    /// when they change.
    pub tools_seen: Option<String>,
    /// The lesson it runs, for a tutor session.
    pub lesson_id: Option<i64>,
    /// A tutor session's tools (comma-separated): the lesson's enabled
    /// tutor tools when it opened.
    pub lesson_tools: Option<String>,
    /// Who a tutor session is for.
    pub student: Option<String>,
    /// A tutor session's planned length.
    pub planned_minutes: Option<i64>,
    /// JSON TurnLog: the turns reported and the nudges given.
    pub turns: Option<String>,
    /// The API key that opened it (none for a page's own sessions).
    pub api_key_id: Option<i64>,
    /// Calls recorded for it so far (its budget's count).
    pub calls_stored: i64,
    /// Bytes of arguments and results recorded for it so far.
    pub bytes_stored: i64,
    /// The signed-in user who opened it (a trial or a manual start).
    pub opened_by: Option<i64>,
    /// A user trying their configuration, listed apart from real runs.
    pub trial: bool,
    /// JSON `StartedBy`: the start trigger that opened it.
    pub started_by: Option<String>,
    /// The student record a tutor session runs for.
    pub student_id: Option<i64>,
}

impl SessionRow {
    /// The parsed workflow state.
    pub fn workflow_state(&self) -> Result<WorkflowState, ServerError> {
        serde_json::from_str(&self.state).map_err(|e| {
            ServerError::Config(format!("session {} has an unreadable state: {e}", self.id))
        })
    }

    /// What started it, when a start trigger did.
    pub fn started_by(&self) -> Option<StartedBy> {
        serde_json::from_str(self.started_by.as_deref()?).ok()
    }

    /// The turns reported so far (none yet: an empty log).
    pub fn turn_log(&self) -> Result<TurnLog, ServerError> {
        self.turns.as_deref().map_or(Ok(TurnLog::default()), |t| {
            serde_json::from_str(t).map_err(|e| {
                ServerError::Config(format!(
                    "session {} has an unreadable turn log: {e}",
                    self.id
                ))
            })
        })
    }

    /// When it started and how long it should run.
    pub fn timing(&self) -> Timing {
        Timing {
            started_at: self.created_at,
            planned_minutes: self
                .planned_minutes
                .map(|m| m.clamp(0, u32::MAX.into()) as u32),
        }
    }
}

const SELECT: &str = "SELECT id, token_hash, state, verified_account, ended_at, last_activity, created_at, runs_builtins, tools_seen, lesson_id, lesson_tools, student, planned_minutes, turns, api_key_id, calls_stored, bytes_stored, opened_by, trial, started_by, student_id FROM agent_sessions";

/// The session with this id, if any.
pub async fn find(db: &SqlitePool, id: &str) -> Result<Option<SessionRow>, ServerError> {
    Ok(
        sqlx::query_as::<_, SessionRow>(&format!("{SELECT} WHERE id = ?"))
            .bind(id)
            .fetch_optional(db)
            .await?,
    )
}

/// The session whose token hashes to `token_hash`, if any.
pub async fn find_by_token_hash(
    db: &SqlitePool,
    token_hash: &str,
) -> Result<Option<SessionRow>, ServerError> {
    Ok(
        sqlx::query_as::<_, SessionRow>(&format!("{SELECT} WHERE token_hash = ?"))
            .bind(token_hash)
            .fetch_optional(db)
            .await?,
    )
}

/// The session whose plugin token hashes to `token_hash`, if any: its own
/// plugin token, or one a plugin got by exchanging a join code
/// (`store::join_codes`).
pub async fn find_by_plugin_token_hash(
    db: &SqlitePool,
    token_hash: &str,
) -> Result<Option<SessionRow>, ServerError> {
    Ok(sqlx::query_as::<_, SessionRow>(&format!(
        "{SELECT} WHERE id IN (SELECT session_id FROM session_plugin_tokens WHERE token_hash = ?
                               UNION ALL
                               SELECT session_id FROM session_joined_tokens WHERE token_hash = ?)"
    ))
    .bind(token_hash)
    .bind(token_hash)
    .fetch_optional(db)
    .await?)
}

/// Makes `token_hash` session `id`'s plugin token, replacing the one it
/// had (which stops working).
pub async fn set_plugin_token<'e, E>(
    db: E,
    id: &str,
    token_hash: &str,
    at: i64,
) -> Result<(), ServerError>
where
    E: sqlx::SqliteExecutor<'e>,
{
    sqlx::query(
        "INSERT INTO session_plugin_tokens (session_id, token_hash, created_at) VALUES (?, ?, ?)
         ON CONFLICT (session_id) DO UPDATE SET token_hash = excluded.token_hash, created_at = excluded.created_at",
    )
    .bind(id)
    .bind(token_hash)
    .bind(at)
    .execute(db)
    .await?;
    Ok(())
}

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
pub async fn insert(db: &SqlitePool, session: &NewSession<'_>) -> Result<(), ServerError> {
    let mut tx = db.begin().await?;
    sqlx::query(
        "INSERT INTO agent_sessions (id, token_hash, api_key_id, state, runs_builtins, tools_seen,
                                     lesson_id, lesson_tools, student, planned_minutes, created_at, last_activity,
                                     opened_by, trial, started_by, student_id, student_context)
         VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
    )
    .bind(session.id)
    .bind(session.token_hash)
    .bind(session.opener.api_key)
    .bind(serde_json::to_string(session.state).unwrap_or_default())
    .bind(session.runs_builtins)
    .bind(session.tools_seen)
    .bind(session.lesson.map(|l| l.lesson_id))
    .bind(session.lesson.map(|l| l.tools))
    .bind(session.lesson.and_then(|l| l.student))
    .bind(session.lesson.and_then(|l| l.planned_minutes))
    .bind(session.at)
    .bind(session.at)
    .bind(session.opener.user)
    .bind(session.opener.trial)
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
pub async fn set_state(
    db: &SqlitePool,
    id: &str,
    state: &WorkflowState,
) -> Result<(), ServerError> {
    sqlx::query("UPDATE agent_sessions SET state = ?, last_activity = ? WHERE id = ?")
        .bind(serde_json::to_string(state).unwrap_or_default())
        .bind(now())
        .bind(id)
        .execute(db)
        .await?;
    Ok(())
}

/// Stores a session's turn log (a turn was reported) and marks it active.
pub async fn set_turns(db: &SqlitePool, id: &str, log: &TurnLog) -> Result<(), ServerError> {
    sqlx::query("UPDATE agent_sessions SET turns = ?, last_activity = ? WHERE id = ?")
        .bind(serde_json::to_string(log).unwrap_or_default())
        .bind(now())
        .bind(id)
        .execute(db)
        .await?;
    Ok(())
}

/// Records which tools the session's backend has now been told.
pub async fn set_tools_seen(db: &SqlitePool, id: &str, tools: &str) -> Result<(), ServerError> {
    sqlx::query("UPDATE agent_sessions SET tools_seen = ? WHERE id = ?")
        .bind(tools)
        .bind(id)
        .execute(db)
        .await?;
    Ok(())
}

/// Open sessions first, then recently ended ones (at most 200).
pub async fn recent(db: &SqlitePool) -> Result<Vec<SessionRow>, ServerError> {
    Ok(sqlx::query_as::<_, SessionRow>(&format!(
        "{SELECT} ORDER BY ended_at IS NOT NULL, last_activity DESC LIMIT 200"
    ))
    .fetch_all(db)
    .await?)
}

/// Every session that has not ended.
pub async fn open(db: &SqlitePool) -> Result<Vec<SessionRow>, ServerError> {
    Ok(
        sqlx::query_as::<_, SessionRow>(&format!("{SELECT} WHERE ended_at IS NULL"))
            .fetch_all(db)
            .await?,
    )
}

/// Ids of user `user`'s open trials, newest first.
pub async fn open_trials_of(db: &SqlitePool, user: i64) -> Result<Vec<String>, ServerError> {
    Ok(sqlx::query_scalar(
        "SELECT id FROM agent_sessions WHERE opened_by = ? AND trial = 1 AND ended_at IS NULL
         ORDER BY created_at DESC, rowid DESC",
    )
    .bind(user)
    .fetch_all(db)
    .await?)
}

/// Ids of the open sessions opened with API key `key_id`.
pub async fn open_for_key(db: &SqlitePool, key_id: i64) -> Result<Vec<String>, ServerError> {
    Ok(sqlx::query_scalar(
        "SELECT id FROM agent_sessions WHERE api_key_id = ? AND ended_at IS NULL",
    )
    .bind(key_id)
    .fetch_all(db)
    .await?)
}

/// Marks the session ended now with `reason`; `false` if it had already
/// ended (or does not exist), so ending is idempotent.
pub async fn end(db: &SqlitePool, id: &str, reason: &str) -> Result<bool, ServerError> {
    let done = sqlx::query(
        "UPDATE agent_sessions SET ended_at = ?, end_reason = ? WHERE id = ? AND ended_at IS NULL",
    )
    .bind(now())
    .bind(reason)
    .bind(id)
    .execute(db)
    .await?;
    Ok(done.rows_affected() == 1)
}

/// Ids of open sessions last active before `cutoff` (Unix seconds).
pub async fn idle_since(db: &SqlitePool, cutoff: i64) -> Result<Vec<String>, ServerError> {
    Ok(sqlx::query_scalar(
        "SELECT id FROM agent_sessions WHERE ended_at IS NULL AND last_activity < ?",
    )
    .bind(cutoff)
    .fetch_all(db)
    .await?)
}
