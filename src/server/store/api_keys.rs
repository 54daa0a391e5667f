//! API keys for agent backends. The key is shown once at creation; only its
//! SHA-256 is stored, plus a short prefix so people can tell keys apart.

use crate::domain::api_key::ApiKeyView;
use crate::error::ApiError;
use crate::server::auth::{random_token, token_hash};
use crate::server::db::now;
use crate::server::ServerError;
use sqlx::SqlitePool;

/// Creates a key named `name`; returns the secret (shown once) and its view.
pub async fn create(
    db: &SqlitePool,
    name: &str,
    created_by: Option<i64>,
) -> Result<(String, ApiKeyView), ServerError> {
    let name = name.trim();
    if name.is_empty() || name.chars().count() > 80 {
        return Err(ApiError::invalid("name", "must be 1-80 characters").into());
    }
    let secret = format!("sb_{}", random_token());
    let prefix = secret[..10].to_owned();
    let t = now();
    let id = sqlx::query("INSERT INTO api_keys (name, key_hash, prefix, created_by, created_at) VALUES (?, ?, ?, ?, ?)")
        .bind(name)
        .bind(token_hash(&secret))
        .bind(&prefix)
        .bind(created_by)
        .bind(t)
        .execute(db)
        .await?
        .last_insert_rowid();
    Ok((
        secret,
        ApiKeyView {
            id,
            name: name.to_owned(),
            prefix,
            created_at: t,
            revoked: false,
        },
    ))
}

/// Whether `secret` is a live (unrevoked) key; returns its id and name.
pub async fn verify(db: &SqlitePool, secret: &str) -> Result<Option<(i64, String)>, ServerError> {
    Ok(
        sqlx::query_as("SELECT id, name FROM api_keys WHERE key_hash = ? AND revoked_at IS NULL")
            .bind(token_hash(secret))
            .fetch_optional(db)
            .await?,
    )
}

/// Every key, newest first.
pub async fn list(db: &SqlitePool) -> Result<Vec<ApiKeyView>, ServerError> {
    #[derive(sqlx::FromRow)]
    struct Row {
        id: i64,
        name: String,
        prefix: String,
        created_at: i64,
        revoked_at: Option<i64>,
    }
    let rows = sqlx::query_as::<_, Row>(
        "SELECT id, name, prefix, created_at, revoked_at FROM api_keys ORDER BY created_at DESC, id DESC",
    )
    .fetch_all(db)
    .await?;
    Ok(rows
        .into_iter()
        .map(|r| ApiKeyView {
            id: r.id,
            name: r.name,
            prefix: r.prefix,
            created_at: r.created_at,
            revoked: r.revoked_at.is_some(),
        })
        .collect())
}

/// Revokes a key; it stops working at once.
pub async fn revoke(db: &SqlitePool, id: i64) -> Result<(), ServerError> {
    let done =
        sqlx::query("UPDATE api_keys SET revoked_at = ? WHERE id = ? AND revoked_at IS NULL")
            .bind(now())
            .bind(id)
            .execute(db)
            .await?;
    if done.rows_affected() == 0 {
        return Err(ApiError::NotFound(format!("Active API key {id}")).into());
    }
    Ok(())
}
