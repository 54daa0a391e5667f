//! Sign-in sessions, keyed by the SHA-256 of the cookie token.

use crate::server::platform::db::now;
use crate::server::platform::db::Db;
use crate::server::store::users::UserRow;
use crate::server::ServerError;

/// Records a new session for `user_id` lasting until `expires_at`.
pub async fn create(
    db: &Db,
    token_hash: &str,
    user_id: i64,
    expires_at: i64,
) -> Result<(), ServerError> {
    sqlx::query("INSERT INTO auth_sessions (token_hash, user_id, created_at, expires_at) VALUES ($1, $2, $3, $4)")
        .bind(token_hash)
        .bind(user_id)
        .bind(now())
        .bind(expires_at)
        .execute(db)
        .await?;
    Ok(())
}

/// The account behind an unexpired session, if any; never a disabled one
/// (its sessions are deleted when it is disabled, and refused here too).
pub async fn find_user(db: &Db, token_hash: &str) -> Result<Option<UserRow>, ServerError> {
    Ok(sqlx::query_as::<_, UserRow>(
        "SELECT u.id, u.email, u.display_name, u.role, u.password_hash, u.disabled_at
         FROM auth_sessions s JOIN users u ON u.id = s.user_id
         WHERE s.token_hash = $1 AND s.expires_at > $2 AND u.disabled_at IS NULL",
    )
    .bind(token_hash)
    .bind(now())
    .fetch_optional(db)
    .await?)
}

/// Ends a session; ending one that is already gone is not an error.
pub async fn delete(db: &Db, token_hash: &str) -> Result<(), ServerError> {
    sqlx::query("DELETE FROM auth_sessions WHERE token_hash = $1")
        .bind(token_hash)
        .execute(db)
        .await?;
    Ok(())
}

/// Ends every sign-in of `user_id` except the one whose token hashes to
/// `keep` (the session making the change); returns how many ended.
pub async fn delete_for_user(
    db: &Db,
    user_id: i64,
    keep: Option<&str>,
) -> Result<u64, ServerError> {
    Ok(
        sqlx::query("DELETE FROM auth_sessions WHERE user_id = $1 AND token_hash != $2")
            .bind(user_id)
            .bind(keep.unwrap_or(""))
            .execute(db)
            .await?
            .rows_affected(),
    )
}

/// Removes expired sessions so the table does not grow without bound.
pub async fn purge_expired(db: &Db) -> Result<u64, ServerError> {
    Ok(
        sqlx::query("DELETE FROM auth_sessions WHERE expires_at <= $1")
            .bind(now())
            .execute(db)
            .await?
            .rows_affected(),
    )
}
