//! Accounts as admins run them: the list, making one (with its first
//! password or a reset link, in one transaction), changing its role or
//! disabling it under the last-admin rule, reset links (only their
//! SHA-256 stored), and the last sign-in.
//!
//! Every change is one `BEGIN IMMEDIATE` transaction: the last-admin count
//! and the change it allows are read and written under the one write lock,
//! so two admins disabling each other at once cannot both pass.

use crate::domain::account::{keeps_an_admin, AccountChange, AccountView, NewAccount};
use crate::domain::user::{Email, Role};
use crate::error::ApiError;
use crate::server::platform::db::{Conn, Db};
use crate::server::store::is_unique_violation;
use crate::server::ServerError;

/// An account's columns as the list shows them.
#[derive(sqlx::FromRow)]
struct AccountRow {
    id: i64,
    email: String,
    display_name: String,
    role: String,
    disabled_at: Option<i64>,
    last_sign_in_at: Option<i64>,
    created_at: i64,
}

const COLUMNS: &str =
    "id, email, display_name, role, disabled_at, last_sign_in_at, created_at FROM users";

impl AccountRow {
    fn view(self) -> Result<AccountView, ServerError> {
        let corrupt =
            |what: &str| ServerError::Config(format!("user {} has an invalid {what}", self.id));
        Ok(AccountView {
            id: self.id,
            email: Email::parse(&self.email).map_err(|_| corrupt("email"))?,
            role: Role::parse(&self.role).map_err(|_| corrupt("role"))?,
            name: self.display_name,
            disabled: self.disabled_at.is_some(),
            last_sign_in_at: self.last_sign_in_at,
            created_at: self.created_at,
        })
    }
}

/// Every account, admins first, then by e-mail.
pub async fn list(db: &Db) -> Result<Vec<AccountView>, ServerError> {
    sqlx::query_as::<_, AccountRow>(&format!("SELECT {COLUMNS} ORDER BY role, email"))
        .fetch_all(db)
        .await?
        .into_iter()
        .map(AccountRow::view)
        .collect()
}

async fn one_in(conn: &mut Conn, id: i64) -> Result<AccountView, ServerError> {
    sqlx::query_as::<_, AccountRow>(&format!("SELECT {COLUMNS} WHERE id = $1"))
        .bind(id)
        .fetch_optional(conn)
        .await?
        .ok_or_else(|| ApiError::NotFound(format!("Account {id}")))?
        .view()
}

/// One account; 404 if there is none with `id`.
pub async fn one(db: &Db, id: i64) -> Result<AccountView, ServerError> {
    one_in(&mut *db.acquire().await?, id).await
}

/// A reset link to store: the SHA-256 of its token, until when it works,
/// and who made it.
pub struct NewReset<'a> {
    /// The token's hash (the token itself is never stored).
    pub token_hash: &'a str,
    /// Unix seconds.
    pub expires_at: i64,
    /// The admin who made it, if it was an admin.
    pub created_by: Option<i64>,
}

/// Makes the account `new` with the password `hash` (a hash of a random
/// secret nobody knows when it gets a reset link instead) and, with
/// `reset`, its first link, in one transaction: 409 for an e-mail in use,
/// and then nothing is written.
pub async fn create(
    db: &Db,
    new: &NewAccount,
    hash: &str,
    reset: Option<NewReset<'_>>,
    now: i64,
) -> Result<AccountView, ServerError> {
    let mut tx = crate::server::platform::db::begin_write(db).await?;
    let inserted = sqlx::query_scalar::<_, i64>(
        "INSERT INTO users (email, display_name, role, password_hash, created_at) VALUES ($1, $2, $3, $4, $5) RETURNING id",
    )
    .bind(new.email.as_str())
    .bind(new.name.as_str())
    .bind(new.role.as_str())
    .bind(hash)
    .bind(now)
    .fetch_one(&mut *tx)
    .await;
    let id = match inserted {
        Ok(done) => done,
        Err(e) if is_unique_violation(&e, "users.email") => {
            return Err(ApiError::Conflict(format!(
                "An account with the e-mail {} already exists.",
                new.email
            ))
            .into())
        }
        Err(e) => return Err(e.into()),
    };
    if let Some(reset) = reset {
        insert_reset(&mut tx, id, &reset, now).await?;
    }
    let view = one_in(&mut tx, id).await?;
    tx.commit().await?;
    Ok(view)
}

async fn insert_reset(
    conn: &mut Conn,
    user_id: i64,
    reset: &NewReset<'_>,
    now: i64,
) -> Result<(), ServerError> {
    sqlx::query("DELETE FROM password_resets WHERE user_id = $1")
        .bind(user_id)
        .execute(&mut *conn)
        .await?;
    sqlx::query(
        "INSERT INTO password_resets (token_hash, user_id, created_by, created_at, expires_at) VALUES ($1, $2, $3, $4, $5)",
    )
    .bind(reset.token_hash)
    .bind(user_id)
    .bind(reset.created_by)
    .bind(now)
    .bind(reset.expires_at)
    .execute(&mut *conn)
    .await?;
    Ok(())
}

/// Applies `change` to account `id` unless it would leave no active
/// admin (409 with the rule's words); disabling also ends the account's
/// sign-ins and its unused reset links. Counted and written in one
/// `BEGIN IMMEDIATE` transaction. Returns the account before and after.
pub async fn change(
    db: &Db,
    id: i64,
    change: AccountChange,
    now: i64,
) -> Result<(AccountView, AccountView), ServerError> {
    let mut tx = crate::server::platform::db::begin_write(db).await?;
    let before = one_in(&mut tx, id).await?;
    let active_admins: i64 = sqlx::query_scalar(
        "SELECT COUNT(*) FROM users WHERE role = 'admin' AND disabled_at IS NULL",
    )
    .fetch_one(&mut *tx)
    .await?;
    keeps_an_admin(before.role, before.disabled, change, active_admins)
        .map_err(ApiError::Conflict)?;
    let role = change.role.unwrap_or(before.role);
    let disabled = change.disabled.unwrap_or(before.disabled);
    sqlx::query(
        "UPDATE users SET role = $1,
            disabled_at = CASE WHEN $2 THEN COALESCE(disabled_at, $3) ELSE NULL END
         WHERE id = $4",
    )
    .bind(role.as_str())
    .bind(disabled)
    .bind(now)
    .bind(id)
    .execute(&mut *tx)
    .await?;
    if disabled {
        for table in ["auth_sessions", "password_resets"] {
            sqlx::query(&format!("DELETE FROM {table} WHERE user_id = $1"))
                .bind(id)
                .execute(&mut *tx)
                .await?;
        }
    }
    let after = one_in(&mut tx, id).await?;
    tx.commit().await?;
    Ok((before, after))
}

/// Whether account `id` exists and is not disabled.
pub async fn is_active(db: &Db, id: i64) -> Result<bool, ServerError> {
    let active: Option<i64> =
        sqlx::query_scalar("SELECT id FROM users WHERE id = $1 AND disabled_at IS NULL")
            .bind(id)
            .fetch_optional(db)
            .await?;
    Ok(active.is_some())
}

/// Stores a new reset link for account `user_id`, replacing its older
/// ones; 404 for no such account, 409 for a disabled one (enable it
/// first: a link would not let it sign in).
pub async fn new_reset(
    db: &Db,
    user_id: i64,
    reset: NewReset<'_>,
    now: i64,
) -> Result<AccountView, ServerError> {
    let mut tx = crate::server::platform::db::begin_write(db).await?;
    let account = one_in(&mut tx, user_id).await?;
    if account.disabled {
        return Err(ApiError::Conflict(
            "This account is disabled: enable it before sending it a password link.".into(),
        )
        .into());
    }
    insert_reset(&mut tx, user_id, &reset, now).await?;
    tx.commit().await?;
    Ok(account)
}

/// The words every refused reset link gets, whatever the reason (unknown,
/// used, expired, replaced, or its account disabled since).
fn link_refused() -> ServerError {
    ApiError::NotFound(
        "This password link (it works once, for a limited time; ask an admin for a new one)".into(),
    )
    .into()
}

/// The account a live reset link (unused, unexpired, its account enabled)
/// opens; 404 otherwise. Read-only: for checking a link before hashing.
pub async fn reset_account(db: &Db, token_hash: &str, now: i64) -> Result<i64, ServerError> {
    sqlx::query_scalar(
        "SELECT r.user_id FROM password_resets r JOIN users u ON u.id = r.user_id
         WHERE r.token_hash = $1 AND r.used_at IS NULL AND r.expires_at > $2 AND u.disabled_at IS NULL",
    )
    .bind(token_hash)
    .bind(now)
    .fetch_optional(db)
    .await?
    .ok_or_else(link_refused)
}

/// Uses the reset link `token_hash` once: sets its account's password to
/// `hash`, marks the link used and ends the account's sign-ins, in one
/// transaction (a second use of the same link finds it used: 404).
pub async fn use_reset(
    db: &Db,
    token_hash: &str,
    hash: &str,
    now: i64,
) -> Result<i64, ServerError> {
    let mut tx = crate::server::platform::db::begin_write(db).await?;
    let user_id: i64 = sqlx::query_scalar(
        "UPDATE password_resets SET used_at = $1
         WHERE token_hash = $2 AND used_at IS NULL AND expires_at > $3
           AND user_id IN (SELECT id FROM users WHERE disabled_at IS NULL)
         RETURNING user_id",
    )
    .bind(now)
    .bind(token_hash)
    .bind(now)
    .fetch_optional(&mut *tx)
    .await?
    .ok_or_else(link_refused)?;
    sqlx::query("UPDATE users SET password_hash = $1 WHERE id = $2")
        .bind(hash)
        .bind(user_id)
        .execute(&mut *tx)
        .await?;
    sqlx::query("DELETE FROM auth_sessions WHERE user_id = $1")
        .bind(user_id)
        .execute(&mut *tx)
        .await?;
    tx.commit().await?;
    Ok(user_id)
}

/// Notes a successful sign-in (shown in the accounts list).
pub async fn signed_in(db: &Db, id: i64, now: i64) -> Result<(), ServerError> {
    sqlx::query("UPDATE users SET last_sign_in_at = $1 WHERE id = $2")
        .bind(now)
        .bind(id)
        .execute(db)
        .await?;
    Ok(())
}
