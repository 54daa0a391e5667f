//! The slots each instance of a cluster leases per stream cap
//! (`server::http::streams::lease`): PostgreSQL only, read and written
//! under the key's advisory lock when a lease changes.

use crate::server::platform::db::{Conn, Db};
use crate::server::ServerError;

/// What an instance's listener connection is named before its id
/// (`cluster::listener` names it so; `pg_stat_activity` shows it).
pub const LISTENER_PREFIX: &str = "switchboard-listener-";

/// Slots leased for `holder` by the other live instances: seen after
/// `alive_after_ms`, and with their listener's connection open (named
/// `LISTENER_PREFIX` + the instance's id). An instance killed outright
/// loses that connection at once, so its leases stop counting at once and
/// its watchers reconnecting elsewhere are not refused for slots no one
/// holds.
pub async fn others(
    conn: &mut Conn,
    holder: &str,
    instance: &str,
    alive_after_ms: i64,
) -> Result<i64, ServerError> {
    let slots: i64 = sqlx::query_scalar(
        "SELECT COALESCE(SUM(l.slots), 0)::BIGINT FROM stream_leases l
         WHERE l.holder = $1 AND l.instance <> $2 AND l.seen_at_ms > $3
           AND EXISTS (SELECT 1 FROM pg_stat_activity a
                       WHERE a.application_name = $4 || l.instance)",
    )
    .bind(holder)
    .bind(instance)
    .bind(alive_after_ms)
    .bind(LISTENER_PREFIX)
    .fetch_one(conn)
    .await?;
    Ok(slots)
}

/// Sets `instance`'s lease for `holder` to `slots` (none: the row goes).
pub async fn set(
    conn: &mut Conn,
    holder: &str,
    instance: &str,
    slots: usize,
    now_ms: i64,
) -> Result<(), ServerError> {
    if slots == 0 {
        sqlx::query("DELETE FROM stream_leases WHERE holder = $1 AND instance = $2")
            .bind(holder)
            .bind(instance)
            .execute(conn)
            .await?;
        return Ok(());
    }
    sqlx::query(
        "INSERT INTO stream_leases (holder, instance, slots, seen_at_ms) VALUES ($1, $2, $3, $4)
         ON CONFLICT (holder, instance) DO UPDATE SET slots = $3, seen_at_ms = $4",
    )
    .bind(holder)
    .bind(instance)
    .bind(i64::try_from(slots).unwrap_or(i64::MAX))
    .bind(now_ms)
    .execute(conn)
    .await?;
    Ok(())
}

/// Marks every lease of `instance` as seen now, and deletes the leases of
/// instances not seen since `dead_before_ms`.
pub async fn refresh(
    db: &Db,
    instance: &str,
    now_ms: i64,
    dead_before_ms: i64,
) -> Result<(), ServerError> {
    sqlx::query("UPDATE stream_leases SET seen_at_ms = $1 WHERE instance = $2")
        .bind(now_ms)
        .bind(instance)
        .execute(db)
        .await?;
    sqlx::query("DELETE FROM stream_leases WHERE seen_at_ms < $1")
        .bind(dead_before_ms)
        .execute(db)
        .await?;
    Ok(())
}

/// Gives back every lease of `instance` (it stops in order).
pub async fn forget(db: &Db, instance: &str) -> Result<(), ServerError> {
    sqlx::query("DELETE FROM stream_leases WHERE instance = $1")
        .bind(instance)
        .execute(db)
        .await?;
    Ok(())
}
