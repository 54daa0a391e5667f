//! Accounts.

use crate::domain::user::AccountSummary;
use crate::domain::user::{Email, Role, UserView};
use crate::error::ApiError;
use crate::server::platform::db::now;
use crate::server::platform::db::Db;
use crate::server::store::is_unique_violation;
use crate::server::ServerError;

/// An account as stored, hash included; never sent to a client.
#[derive(Debug, Clone, sqlx::FromRow)]
pub struct UserRow {
    /// Primary key.
    pub id: i64,
    /// Normalised login e-mail.
    pub email: String,
    /// Name shown in the header.
    pub display_name: String,
    /// `teacher` or `admin` (a CHECK constraint keeps it so).
    pub role: String,
    /// Argon2 PHC string.
    pub password_hash: String,
    /// When an admin disabled it (Unix seconds); `None` while it may sign in.
    pub disabled_at: Option<i64>,
}

impl UserRow {
    /// The shared view of this account. The CHECK constraint and the unique
    /// e-mail rule make a parse failure a corrupted database, reported as such.
    pub fn view(&self) -> Result<UserView, ServerError> {
        let corrupt = |what: &str| {
            ServerError::Config(format!("user {} has an invalid stored {what}", self.id))
        };
        Ok(UserView {
            id: self.id,
            email: Email::parse(&self.email).map_err(|_| corrupt("email"))?,
            display_name: self.display_name.clone(),
            role: Role::parse(&self.role).map_err(|_| corrupt("role"))?,
        })
    }
}

/// Creates an account; a taken e-mail is a conflict naming the address.
pub async fn create(
    db: &Db,
    email: &Email,
    display_name: &str,
    role: Role,
    password_hash: &str,
) -> Result<i64, ServerError> {
    let result = sqlx::query_scalar::<_, i64>(
        "INSERT INTO users (email, display_name, role, password_hash, created_at) VALUES ($1, $2, $3, $4, $5) RETURNING id",
    )
    .bind(email.as_str())
    .bind(display_name)
    .bind(role.as_str())
    .bind(password_hash)
    .bind(now())
    .fetch_one(db)
    .await;
    match result {
        Ok(done) => Ok(done),
        Err(e) if is_unique_violation(&e, "users.email") => Err(ApiError::Conflict(format!(
            "An account with the e-mail {email} already exists."
        ))
        .into()),
        Err(e) => Err(e.into()),
    }
}

/// The account with this login e-mail, if any.
pub async fn find_by_email(db: &Db, email: &Email) -> Result<Option<UserRow>, ServerError> {
    Ok(sqlx::query_as::<_, UserRow>(
        "SELECT id, email, display_name, role, password_hash, disabled_at FROM users WHERE email = $1",
    )
    .bind(email.as_str())
    .fetch_optional(db)
    .await?)
}

/// The account with this id, if any.
pub async fn find_by_id(db: &Db, id: i64) -> Result<Option<UserRow>, ServerError> {
    Ok(sqlx::query_as::<_, UserRow>(
        "SELECT id, email, display_name, role, password_hash, disabled_at FROM users WHERE id = $1",
    )
    .bind(id)
    .fetch_optional(db)
    .await?)
}

/// Replaces an account's password hash.
pub async fn set_password_hash(db: &Db, id: i64, hash: &str) -> Result<(), ServerError> {
    sqlx::query("UPDATE users SET password_hash = $1 WHERE id = $2")
        .bind(hash)
        .bind(id)
        .execute(db)
        .await?;
    Ok(())
}

/// How many accounts exist; zero means a fresh database that needs seeding.
pub async fn count(db: &Db) -> Result<i64, ServerError> {
    Ok(sqlx::query_scalar("SELECT COUNT(*) FROM users")
        .fetch_one(db)
        .await?)
}

/// Every account with its number of unexpired sign-in sessions.
pub async fn list_with_sessions(db: &Db) -> Result<Vec<AccountSummary>, ServerError> {
    #[derive(sqlx::FromRow)]
    struct Row {
        #[sqlx(flatten)]
        user: UserRow,
        open_sessions: i64,
    }
    let rows = sqlx::query_as::<_, Row>(
        "SELECT u.id, u.email, u.display_name, u.role, u.password_hash, u.disabled_at,
                (SELECT COUNT(*) FROM auth_sessions s WHERE s.user_id = u.id AND s.expires_at > $1) AS open_sessions
         FROM users u ORDER BY u.role, u.email",
    )
    .bind(now())
    .fetch_all(db)
    .await?;
    rows.into_iter()
        .map(|r| {
            Ok(AccountSummary {
                user: r.user.view()?,
                open_sessions: r.open_sessions,
            })
        })
        .collect()
}
