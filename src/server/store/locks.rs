//! Locks held in PostgreSQL, so that instances sharing one database
//! serialise what one process serialises with a mutex
//! (`server::platform::locks`): a session's calls, results, state changes,
//! turns and ends; saves of agents and vibes; edits of workflows.

use crate::server::platform::db::Conn;
use crate::server::ServerError;

/// Waits for, then holds until the end of the transaction on `conn`, the
/// advisory lock named `name`. The key is hashed by the server
/// (`hashtextextended`), so every instance locks the same number.
pub async fn lock(conn: &mut Conn, name: &str) -> Result<(), ServerError> {
    sqlx::query(
        "SELECT COUNT(*) FROM (SELECT pg_advisory_xact_lock(hashtextextended($1, 0))) AS l",
    )
    .bind(name)
    .execute(conn)
    .await?;
    Ok(())
}
