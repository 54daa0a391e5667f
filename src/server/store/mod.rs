//! Persistence: one module per table family, plain SQL through sqlx. All of
//! the app's SQL lives here, so a schema change touches one folder.
//!
//! Row structs (`…Row`) are server-only and converted into shared domain
//! types at this boundary, the way the Leptos session-auth example keeps `Sql*`
//! types off the wire.

pub mod accounts;
pub mod agent_sessions;
pub mod api_keys;
pub mod auth_sessions;
pub mod bank_accounts;
pub mod bindings;
pub mod catalogue;
pub mod cluster;
pub mod join_codes;
pub mod lesson_outcomes;
pub mod lessons;
pub mod locks;
pub mod mcp_servers;
pub mod plugin_relay;
pub mod plugins;
pub mod retention;
pub mod stream_leases;
pub mod student_data;
pub mod students;
pub mod todos;
pub mod tool_calls;
pub mod users;
pub mod vibes;
pub mod windows;
pub mod workflow_defs;
pub mod workflow_triggers;

use crate::server::platform::db::Db;
use crate::server::ServerError;

/// Answers when the database can be reached (the health check).
pub async fn ping(db: &Db) -> Result<(), ServerError> {
    sqlx::query_scalar::<_, i64>("SELECT 1")
        .fetch_one(db)
        .await?;
    Ok(())
}

/// Whether `err` is a UNIQUE violation on `columns` (`table.column`, or
/// `table.` for any of its keys), so callers can map it to a clear message
/// instead of a 500. SQLite names the columns in its message (`users.email`);
/// PostgreSQL names the table and, in the detail, the key (`Key (email)=…`).
pub fn is_unique_violation(err: &sqlx::Error, columns: &str) -> bool {
    let Some(db) = err.as_database_error() else {
        return false;
    };
    if !db.is_unique_violation() {
        return false;
    }
    if db.message().contains(columns) {
        return true;
    }
    let (table, column) = columns.split_once('.').unwrap_or((columns, ""));
    let Some(pg) = db.try_downcast_ref::<sqlx::postgres::PgDatabaseError>() else {
        return false;
    };
    pg.table() == Some(table)
        && (column.is_empty()
            || pg.detail().is_some_and(|d| {
                d.contains(&format!("({column})")) || d.contains(&format!(", {column})"))
            }))
}
