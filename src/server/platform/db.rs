//! Opening the SQLite database and bringing its schema up to date.
//!
//! SQLite is the embedded default so a fresh machine needs no database
//! server. WAL mode lets readers proceed while a writer commits; foreign keys
//! are on so the schema's `REFERENCES` are enforced.

use crate::server::ServerError;
use sqlx::sqlite::{SqliteConnectOptions, SqliteJournalMode, SqlitePoolOptions, SqliteSynchronous};
use sqlx::SqlitePool;
use std::str::FromStr;
use std::time::Duration;

/// Opens (creating if missing, with its folder) the database at `url` and
/// applies every pending migration from `migrations/`.
pub async fn connect(url: &str) -> Result<SqlitePool, ServerError> {
    let options = SqliteConnectOptions::from_str(url)
        .map_err(|e| ServerError::Config(format!("DATABASE_URL {url:?} is not a SQLite URL: {e}")))?
        .create_if_missing(true)
        .journal_mode(SqliteJournalMode::Wal)
        .synchronous(SqliteSynchronous::Normal)
        .foreign_keys(true)
        .busy_timeout(Duration::from_secs(5));
    if let Some(parent) = std::path::Path::new(options.get_filename()).parent() {
        if !parent.as_os_str().is_empty() {
            std::fs::create_dir_all(parent).map_err(|e| {
                ServerError::Config(format!(
                    "cannot create database folder {}: {e}",
                    parent.display()
                ))
            })?;
        }
    }
    let pool = SqlitePoolOptions::new()
        .max_connections(8)
        .connect_with(options)
        .await?;
    sqlx::migrate!("./migrations").run(&pool).await?;
    Ok(pool)
}

/// Current time as Unix seconds, the unit every timestamp column uses.
pub fn now() -> i64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_secs() as i64)
        .unwrap_or_default()
}
