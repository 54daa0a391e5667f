//! Rate-limit events kept in the database (`window_events`), so that on
//! PostgreSQL every instance counts the same sign-in attempts and session
//! writes (`server::platform::windows`). One row per counted event, with
//! the time it leaves its window; expired rows are deleted in passing.
//!
//! A check-then-count runs in one transaction that first locks its keys:
//! on PostgreSQL a transaction-scoped advisory lock per key (hashed by the
//! server, so every instance computes the same number), taken in sorted
//! order so two attempts sharing keys cannot deadlock; on SQLite (used by
//! the unit tests only; a SQLite server counts in memory) the write lock of
//! `BEGIN IMMEDIATE`.

use crate::server::platform::db::{backend, begin_write, Backend, Conn, Db};
use crate::server::ServerError;
use sqlx::{Any, Transaction};

/// Starts a transaction holding the lock of every key in `names`.
pub async fn begin_locked(
    db: &Db,
    names: &[&str],
) -> Result<Transaction<'static, Any>, ServerError> {
    if backend(db) == Backend::Sqlite {
        return begin_write(db).await;
    }
    let mut sorted: Vec<&str> = names.to_vec();
    sorted.sort_unstable();
    sorted.dedup();
    let mut tx = db.begin().await?;
    for name in sorted {
        sqlx::query(
            "SELECT COUNT(*) FROM (SELECT pg_advisory_xact_lock(hashtextextended($1, 0))) AS l",
        )
        .bind(format!("window:{name}"))
        .execute(&mut *tx)
        .await?;
    }
    Ok(tx)
}

/// The times (Unix seconds) of `name`'s newest `n` events after `since`,
/// newest first.
pub async fn newest(
    conn: &mut Conn,
    name: &str,
    since: i64,
    n: usize,
) -> Result<Vec<i64>, ServerError> {
    Ok(sqlx::query_scalar(
        "SELECT at FROM window_events WHERE key = $1 AND at > $2 ORDER BY at DESC, id DESC LIMIT $3",
    )
    .bind(name)
    .bind(since)
    .bind(n as i64)
    .fetch_all(conn)
    .await?)
}

/// How many events `name` had after `since`.
pub async fn count(db: &Db, name: &str, since: i64) -> Result<usize, ServerError> {
    let n: i64 =
        sqlx::query_scalar("SELECT COUNT(*) FROM window_events WHERE key = $1 AND at > $2")
            .bind(name)
            .bind(since)
            .fetch_one(db)
            .await?;
    Ok(n as usize)
}

/// Counts one event of `name` at `at`, kept until `expires_at`.
pub async fn insert(
    conn: &mut Conn,
    name: &str,
    at: i64,
    expires_at: i64,
) -> Result<(), ServerError> {
    sqlx::query("INSERT INTO window_events (key, at, expires_at) VALUES ($1, $2, $3)")
        .bind(name)
        .bind(at)
        .bind(expires_at)
        .execute(conn)
        .await?;
    Ok(())
}

/// Forgets every event of `name`.
pub async fn delete_key(db: &Db, name: &str) -> Result<(), ServerError> {
    sqlx::query("DELETE FROM window_events WHERE key = $1")
        .bind(name)
        .execute(db)
        .await?;
    Ok(())
}

/// Forgets one event of `name` counted at `at` (the newest such).
pub async fn delete_one(db: &Db, name: &str, at: i64) -> Result<(), ServerError> {
    sqlx::query(
        "DELETE FROM window_events WHERE id IN
           (SELECT id FROM window_events WHERE key = $1 AND at = $2 ORDER BY id DESC LIMIT 1)",
    )
    .bind(name)
    .bind(at)
    .execute(db)
    .await?;
    Ok(())
}

/// Deletes the events that left their window by `now`.
pub async fn prune(db: &Db, now: i64) -> Result<u64, ServerError> {
    Ok(
        sqlx::query("DELETE FROM window_events WHERE expires_at <= $1")
            .bind(now)
            .execute(db)
            .await?
            .rows_affected(),
    )
}

/// How many keys starting with `prefix` have an event still in its window
/// at `now`.
pub async fn keys_under(db: &Db, prefix: &str, now: i64) -> Result<usize, ServerError> {
    let n: i64 = sqlx::query_scalar(
        "SELECT COUNT(*) FROM (SELECT DISTINCT key FROM window_events
           WHERE key >= $1 AND key < $2 AND expires_at > $3) AS k",
    )
    .bind(prefix)
    .bind(format!("{prefix}\u{10FFFF}"))
    .bind(now)
    .fetch_one(db)
    .await?;
    Ok(n as usize)
}
