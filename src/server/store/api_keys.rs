//! API keys for agent backends. The key is shown once at creation; only its
//! SHA-256 is stored, plus a short prefix so people can tell keys apart.

use crate::domain::api_key::{ApiKeyView, Scope, API_KEY_PREFIX};
use crate::domain::ownership::Viewer;
use crate::domain::user::Role;
use crate::error::ApiError;
use crate::server::auth::{random_token, token_hash};
use crate::server::platform::db::now;
use crate::server::platform::db::Db;
use crate::server::ServerError;

/// How stale `last_used_at` may get before a request writes it again: at
/// most one write a minute per key, not one per request.
const LAST_USED_GRANULARITY: i64 = 60;

fn scopes_column(scopes: &[Scope]) -> String {
    scopes
        .iter()
        .map(|s| s.as_str())
        .collect::<Vec<_>>()
        .join(" ")
}

fn scopes_of(column: &str) -> Vec<Scope> {
    column
        .split_whitespace()
        .filter_map(|s| Scope::parse(s).ok())
        .collect()
}

/// Creates a key named `name` with `scopes`; returns the secret (shown
/// once) and its view.
pub async fn create(
    db: &Db,
    name: &str,
    scopes: &[Scope],
    created_by: Option<i64>,
) -> Result<(String, ApiKeyView), ServerError> {
    let name = name.trim();
    if name.is_empty() || name.chars().count() > 80 {
        return Err(ApiError::invalid("name", "must be 1-80 characters").into());
    }
    if scopes.is_empty() {
        return Err(ApiError::invalid("scopes", "choose at least one scope").into());
    }
    let secret = format!("{API_KEY_PREFIX}{}", random_token());
    let prefix = secret[..10].to_owned();
    let t = now();
    let id = sqlx::query_scalar::<_, i64>("INSERT INTO api_keys (name, key_hash, prefix, created_by, created_at, scopes) VALUES ($1, $2, $3, $4, $5, $6) RETURNING id")
        .bind(name)
        .bind(token_hash(&secret))
        .bind(&prefix)
        .bind(created_by)
        .bind(t)
        .bind(scopes_column(scopes))
        .fetch_one(db)
        .await?
        ;
    Ok((
        secret,
        ApiKeyView {
            id,
            name: name.to_owned(),
            prefix,
            created_at: t,
            scopes: scopes.to_vec(),
            last_used_at: None,
            revoked: false,
            owner: None,
        },
    ))
}

/// A live key as a request presents it.
#[derive(Debug, Clone)]
pub struct VerifiedKey {
    /// Id, for audit and for ending its sessions.
    pub id: i64,
    /// Name, recorded as the author of what it changes.
    pub name: String,
    /// What it may do.
    pub scopes: Vec<Scope>,
    /// Who made it (their id and role), while their account exists: the
    /// key acts as them (`domain::ownership`).
    pub maker: Option<(i64, Role)>,
}

impl VerifiedKey {
    /// Whose sessions the key sees: its maker's, or (its maker gone) the
    /// ones it opened.
    pub fn viewer(&self) -> Viewer {
        Viewer::key(self.id, self.maker)
    }

    /// The id of the account that made it, while that account exists
    /// (whose streams its streams count with, and close with).
    pub fn maker_id(&self) -> Option<i64> {
        self.maker.map(|(id, _)| id)
    }
}

/// Whether `secret` is a live key: not revoked, and not made by an
/// account that is disabled now (such a key works again once the account
/// is enabled). Notes its use (at most once a minute) and returns it.
pub async fn verify(db: &Db, secret: &str) -> Result<Option<VerifiedKey>, ServerError> {
    type Row = (
        i64,
        String,
        String,
        Option<i64>,
        Option<i64>,
        Option<String>,
    );
    let row: Option<Row> = sqlx::query_as(
        "SELECT k.id, k.name, k.scopes, k.last_used_at, u.id, u.role
         FROM api_keys k LEFT JOIN users u ON u.id = k.created_by
         WHERE k.key_hash = $1 AND k.revoked_at IS NULL AND u.disabled_at IS NULL",
    )
    .bind(token_hash(secret))
    .fetch_optional(db)
    .await?;
    let Some((id, name, scopes, last_used_at, maker, role)) = row else {
        return Ok(None);
    };
    let maker = maker.zip(role.and_then(|r| Role::parse(&r).ok()));
    let t = now();
    // Only a stale stamp is written: most requests stay read-only.
    if last_used_at.is_none_or(|last| last <= t - LAST_USED_GRANULARITY) {
        sqlx::query("UPDATE api_keys SET last_used_at = $1 WHERE id = $2")
            .bind(t)
            .bind(id)
            .execute(db)
            .await?;
    }
    Ok(Some(VerifiedKey {
        id,
        name,
        scopes: scopes_of(&scopes),
        maker,
    }))
}

/// The keys `maker` made, or every key for `None` (an admin), newest
/// first, each with its maker's name.
pub async fn list(db: &Db, maker: Option<i64>) -> Result<Vec<ApiKeyView>, ServerError> {
    #[derive(sqlx::FromRow)]
    struct Row {
        id: i64,
        name: String,
        prefix: String,
        created_at: i64,
        revoked_at: Option<i64>,
        scopes: String,
        last_used_at: Option<i64>,
        owner: Option<String>,
    }
    let rows = sqlx::query_as::<_, Row>(
        "SELECT k.id, k.name, k.prefix, k.created_at, k.revoked_at, k.scopes, k.last_used_at,
                u.display_name AS owner
         FROM api_keys k LEFT JOIN users u ON u.id = k.created_by
         WHERE $1 IS NULL OR k.created_by = $1
         ORDER BY k.created_at DESC, k.id DESC",
    )
    .bind(maker)
    .fetch_all(db)
    .await?;
    Ok(rows
        .into_iter()
        .map(|r| ApiKeyView {
            id: r.id,
            name: r.name,
            prefix: r.prefix,
            created_at: r.created_at,
            scopes: scopes_of(&r.scopes),
            last_used_at: r.last_used_at,
            revoked: r.revoked_at.is_some(),
            owner: r.owner,
        })
        .collect())
}

/// Whether key `id` still works: not revoked, and its maker's account
/// not disabled (as [`verify`] decides).
pub async fn is_live(db: &Db, id: i64) -> Result<bool, ServerError> {
    let live: Option<i64> = sqlx::query_scalar(
        "SELECT k.id FROM api_keys k LEFT JOIN users u ON u.id = k.created_by
         WHERE k.id = $1 AND k.revoked_at IS NULL AND u.disabled_at IS NULL",
    )
    .bind(id)
    .fetch_optional(db)
    .await?;
    Ok(live.is_some())
}

/// Revokes key `id` (one `maker` made, or any for `None`: an admin); it
/// stops working at once. 404 for an unknown, revoked or another's key.
pub async fn revoke(db: &Db, id: i64, maker: Option<i64>) -> Result<(), ServerError> {
    let done = sqlx::query(
        "UPDATE api_keys SET revoked_at = $1
         WHERE id = $2 AND revoked_at IS NULL AND ($3 IS NULL OR created_by = $3)",
    )
    .bind(now())
    .bind(id)
    .bind(maker)
    .execute(db)
    .await?;
    if done.rows_affected() == 0 {
        return Err(ApiError::NotFound(format!("Active API key {id}")).into());
    }
    Ok(())
}
