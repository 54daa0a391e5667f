//! The banking demo's data: accounts, their transactions, dispute cases and
//! recent-interaction notes, which the built-in banking tools act on.

use crate::server::platform::db::now;
use crate::server::platform::db::Db;
use crate::server::ServerError;

/// What an identity check compares: `(sort_code, date_of_birth)`.
pub async fn identity_details(
    db: &Db,
    account: &str,
) -> Result<Option<(String, String)>, ServerError> {
    Ok(sqlx::query_as(
        "SELECT sort_code, date_of_birth FROM bank_accounts WHERE account_number = $1",
    )
    .bind(account)
    .fetch_optional(db)
    .await?)
}

/// The account holder's name, if the account exists.
pub async fn holder(db: &Db, account: &str) -> Result<Option<String>, ServerError> {
    Ok(
        sqlx::query_scalar("SELECT holder FROM bank_accounts WHERE account_number = $1")
            .bind(account)
            .fetch_optional(db)
            .await?,
    )
}

/// The balance in pence of an existing account.
pub async fn balance_pence(db: &Db, account: &str) -> Result<i64, ServerError> {
    Ok(
        sqlx::query_scalar("SELECT balance_pence FROM bank_accounts WHERE account_number = $1")
            .bind(account)
            .fetch_one(db)
            .await?,
    )
}

/// A booked transaction.
#[derive(Debug, Clone, sqlx::FromRow)]
pub struct Transaction {
    /// The account it was booked on.
    pub account_number: String,
    /// ISO date.
    pub booked_on: String,
    /// As shown on a statement.
    pub description: String,
    /// Signed, in pence.
    pub amount_pence: i64,
}

/// The transaction with this id, if any.
pub async fn transaction(db: &Db, id: &str) -> Result<Option<Transaction>, ServerError> {
    Ok(sqlx::query_as::<_, Transaction>(
        "SELECT account_number, booked_on, description, amount_pence FROM bank_transactions WHERE id = $1",
    )
    .bind(id)
    .fetch_optional(db)
    .await?)
}

/// Opens a dispute case; returns its number.
pub async fn open_dispute(
    db: &Db,
    session: &str,
    account: &str,
    transaction_id: &str,
    reason: &str,
    details: Option<&str>,
) -> Result<i64, ServerError> {
    Ok(sqlx::query_scalar::<_, i64>(
        "INSERT INTO dispute_cases (session_id, account_number, transaction_id, reason, details, created_at) VALUES ($1, $2, $3, $4, $5, $6) RETURNING id",
    )
    .bind(session)
    .bind(account)
    .bind(transaction_id)
    .bind(reason)
    .bind(details)
    .bind(now())
    .fetch_one(db)
    .await?
    )
}

/// Adds a note to an account's recent interactions, dated now.
pub async fn add_interaction(db: &Db, account: &str, note: &str) -> Result<(), ServerError> {
    sqlx::query("INSERT INTO interactions (account_number, at, note) VALUES ($1, $2, $3)")
        .bind(account)
        .bind(now())
        .bind(note)
        .execute(db)
        .await?;
    Ok(())
}

/// The ten newest interaction notes of an account: `(unix seconds, note)`.
pub async fn recent_interactions(
    db: &Db,
    account: &str,
) -> Result<Vec<(i64, String)>, ServerError> {
    Ok(sqlx::query_as(
        "SELECT at, note FROM interactions WHERE account_number = $1 ORDER BY at DESC LIMIT 10",
    )
    .bind(account)
    .fetch_all(db)
    .await?)
}
