//! Agent sessions: one row per session an agent backend opened, holding its
//! workflow state as JSON, the account whose identity it verified, and when
//! it was last active or ended.
//!
//! The session engine (`server::agent::sessions`) decides; this module only
//! reads and writes rows.

use crate::domain::agent_session::WorkflowState;
use crate::server::db::now;
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

/// Stores a newly opened session, active as of `at`.
pub async fn insert(
    db: &SqlitePool,
    id: &str,
    token_hash: &str,
    api_key: Option<i64>,
    state: &WorkflowState,
    at: i64,
) -> Result<(), ServerError> {
    sqlx::query(
        "INSERT INTO agent_sessions (id, token_hash, api_key_id, state, created_at, last_activity) VALUES (?, ?, ?, ?, ?, ?)",
    )
    .bind(id)
    .bind(token_hash)
    .bind(api_key)
    .bind(serde_json::to_string(state).unwrap_or_default())
    .bind(at)
    .bind(at)
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
