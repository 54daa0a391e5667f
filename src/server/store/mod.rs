//! Persistence: one module per table family, plain SQL through sqlx.
//!
//! Row structs (`…Row`) are server-only and converted into shared domain
//! types at this boundary, the way the Leptos session-auth example keeps `Sql*`
//! types off the wire.

pub mod api_keys;
pub mod auth_sessions;
pub mod bindings;
pub mod lessons;
pub mod users;

/// Whether `err` is a UNIQUE violation on `columns` (SQLite names the columns,
/// e.g. `users.email`, not the constraint), so callers can map it to a clear
/// message instead of a 500.
pub fn is_unique_violation(err: &sqlx::Error, columns: &str) -> bool {
    err.as_database_error()
        .is_some_and(|db| db.is_unique_violation() && db.message().contains(columns))
}
