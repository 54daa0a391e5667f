//! Join codes and the plugin tokens exchanged for them (migration
//! `0022_join_codes.sql`): only hashes are stored. Making a code and
//! exchanging one are each one `BEGIN IMMEDIATE` transaction, so the cap
//! on live codes holds under concurrent requests and two exchanges of one
//! code cannot both win. The rule of a live code is
//! `domain::join_code::is_live`, written here as SQL.

use crate::server::platform::db::Db;
use crate::server::ServerError;

/// Who made a code.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CreatedBy {
    /// The session's backend, with its session token.
    SessionToken,
    /// A signed-in user on the session's page.
    User(i64),
}

/// A code to store.
#[derive(Debug, Clone, Copy)]
pub struct NewCode<'a> {
    /// SHA-256 of the code.
    pub code_hash: &'a str,
    /// The session it joins.
    pub session_id: &'a str,
    /// Who made it.
    pub created_by: CreatedBy,
    /// Now, Unix seconds.
    pub now: i64,
    /// When it expires, Unix seconds.
    pub expires_at: i64,
}

/// What [`insert`] did.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Inserted {
    /// Stored.
    Stored,
    /// The session already has `live_max` live codes; the oldest expires
    /// at this time. Nothing stored.
    Full {
        /// When the soonest-expiring live code expires, Unix seconds.
        frees_at: i64,
    },
    /// Another code (live or spent, not yet swept) has this hash: draw
    /// again. Nothing stored.
    Taken,
}

/// Stores a code unless its session already holds `live_max` live ones.
pub async fn insert(db: &Db, code: &NewCode<'_>, live_max: usize) -> Result<Inserted, ServerError> {
    let mut tx = crate::server::platform::db::begin_write(db).await?;
    let (live, frees_at): (i64, Option<i64>) = sqlx::query_as(
        "SELECT COUNT(*), MIN(expires_at) FROM join_codes
         WHERE session_id = $1 AND used_at IS NULL AND expires_at > $2",
    )
    .bind(code.session_id)
    .bind(code.now)
    .fetch_one(&mut *tx)
    .await?;
    if usize::try_from(live).unwrap_or(usize::MAX) >= live_max {
        return Ok(Inserted::Full {
            frees_at: frees_at.unwrap_or(code.now),
        });
    }
    let (by, user) = match code.created_by {
        CreatedBy::SessionToken => ("session_token", None),
        CreatedBy::User(id) => ("user", Some(id)),
    };
    let done = sqlx::query(
        "INSERT INTO join_codes (code_hash, session_id, created_by, created_by_user, created_at, expires_at)
         VALUES ($1, $2, $3, $4, $5, $6) ON CONFLICT (code_hash) DO NOTHING",
    )
    .bind(code.code_hash)
    .bind(code.session_id)
    .bind(by)
    .bind(user)
    .bind(code.now)
    .bind(code.expires_at)
    .execute(&mut *tx)
    .await?;
    if done.rows_affected() == 0 {
        return Ok(Inserted::Taken);
    }
    tx.commit().await?;
    Ok(Inserted::Stored)
}

/// Exchanges the live code hashing to `code_hash` of an open session: marks
/// it used and stores `token_hash` as a plugin token of its session, in one
/// transaction; the session's id, or `None` when no live code of an open
/// session has that hash (unknown, used, expired, or its session ended).
pub async fn redeem(
    db: &Db,
    code_hash: &str,
    token_hash: &str,
    now: i64,
) -> Result<Option<String>, ServerError> {
    let mut tx = crate::server::platform::db::begin_write(db).await?;
    let used: Option<(i64, String)> = sqlx::query_as(
        "UPDATE join_codes SET used_at = $1
         WHERE code_hash = $2 AND used_at IS NULL AND expires_at > $3
           AND session_id IN (SELECT id FROM agent_sessions WHERE ended_at IS NULL)
         RETURNING id, session_id",
    )
    .bind(now)
    .bind(code_hash)
    .bind(now)
    .fetch_optional(&mut *tx)
    .await?;
    let Some((code_id, session_id)) = used else {
        return Ok(None);
    };
    sqlx::query(
        "INSERT INTO session_joined_tokens (token_hash, session_id, join_code_id, created_at)
         VALUES ($1, $2, $3, $4)",
    )
    .bind(token_hash)
    .bind(&session_id)
    .bind(code_id)
    .bind(now)
    .execute(&mut *tx)
    .await?;
    tx.commit().await?;
    Ok(Some(session_id))
}

/// Deletes codes that expired before `cutoff` (used or not): an expired
/// code can never be exchanged, so its row only grows the table. The
/// tokens exchanged for them stay.
pub async fn purge_expired(db: &Db, cutoff: i64) -> Result<u64, ServerError> {
    let done = sqlx::query("DELETE FROM join_codes WHERE expires_at <= $1")
        .bind(cutoff)
        .execute(db)
        .await?;
    Ok(done.rows_affected())
}
