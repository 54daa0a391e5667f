//! A session as stored, and finding one by id, by its token's hash or by
//! its plugin token's; a new plugin token for one.

use crate::domain::lesson::nudge::{Timing, TurnLog};
use crate::domain::session_origin::StartedBy;
use crate::domain::workflow_state::WorkflowState;
use crate::server::platform::db::Db;
use crate::server::ServerError;

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
    /// Why it ended (`ended by agent`, `idle timeout`…), once it has.
    pub end_reason: Option<String>,
    /// Last call or open, Unix seconds.
    pub last_activity: i64,
    /// Opened, Unix seconds.
    pub created_at: i64,
    /// Whether Switchboard runs the built-in demo tools for this session
    /// (otherwise the backend executes every tool but the session tools).
    #[sqlx(try_from = "crate::server::platform::db::Flag")]
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
    #[sqlx(try_from = "crate::server::platform::db::Flag")]
    pub trial: bool,
    /// JSON `StartedBy`: the start trigger that opened it.
    pub started_by: Option<String>,
    /// The student record a tutor session runs for.
    pub student_id: Option<i64>,
    /// Its lesson's title now, for a tutor session (read with the row, so
    /// every list entry and update names the lesson).
    pub lesson_title: Option<String>,
}

impl SessionRow {
    /// `Ok` while the session is open; once it has ended, the 409 every
    /// door of a session's agent answers (`Session s… has ended.`).
    pub fn still_open(&self) -> Result<(), crate::error::ApiError> {
        match self.ended_at {
            None => Ok(()),
            Some(_) => Err(crate::error::ApiError::Conflict(format!(
                "Session {} has ended.",
                self.id
            ))),
        }
    }

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

pub(super) const SELECT: &str = "SELECT id, token_hash, state, verified_account, ended_at, end_reason, last_activity, created_at, runs_builtins, tools_seen, lesson_id, lesson_tools, student, planned_minutes, turns, api_key_id, calls_stored, bytes_stored, opened_by, trial, started_by, student_id, (SELECT title FROM lessons WHERE lessons.id = agent_sessions.lesson_id) AS lesson_title FROM agent_sessions";

/// The session with this id, if any.
pub async fn find(db: &Db, id: &str) -> Result<Option<SessionRow>, ServerError> {
    Ok(
        sqlx::query_as::<_, SessionRow>(&format!("{SELECT} WHERE id = $1"))
            .bind(id)
            .fetch_optional(db)
            .await?,
    )
}

/// The session whose token hashes to `token_hash`, if any.
pub async fn find_by_token_hash(
    db: &Db,
    token_hash: &str,
) -> Result<Option<SessionRow>, ServerError> {
    Ok(
        sqlx::query_as::<_, SessionRow>(&format!("{SELECT} WHERE token_hash = $1"))
            .bind(token_hash)
            .fetch_optional(db)
            .await?,
    )
}

/// The session whose plugin token hashes to `token_hash`, if any: its own
/// plugin token, or one a plugin got by exchanging a join code
/// (`store::join_codes`).
pub async fn find_by_plugin_token_hash(
    db: &Db,
    token_hash: &str,
) -> Result<Option<SessionRow>, ServerError> {
    Ok(sqlx::query_as::<_, SessionRow>(&format!(
        "{SELECT} WHERE id IN (SELECT session_id FROM session_plugin_tokens WHERE token_hash = $1
                               UNION ALL
                               SELECT session_id FROM session_joined_tokens WHERE token_hash = $2)"
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
    E: sqlx::Executor<'e, Database = sqlx::Any>,
{
    sqlx::query(
        "INSERT INTO session_plugin_tokens (session_id, token_hash, created_at) VALUES ($1, $2, $3)
         ON CONFLICT (session_id) DO UPDATE SET token_hash = excluded.token_hash, created_at = excluded.created_at",
    )
    .bind(id)
    .bind(token_hash)
    .bind(at)
    .execute(db)
    .await?;
    Ok(())
}
