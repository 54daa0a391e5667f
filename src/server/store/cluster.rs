//! The SQL of several instances on one PostgreSQL database
//! (`server::cluster`): numbering and keeping each session's events,
//! frames too large for a notification, `NOTIFY`, advisory locks.
//!
//! PostgreSQL only, on the cluster's own `PgPool` (its listener and
//! notifications have no SQLite equivalent); the tables are in
//! `migrations/postgres/0002_cluster.sql`. Times are the database's
//! clock, the same for every instance.

use sqlx::{PgPool, Postgres, Transaction};

/// One stored session event.
#[derive(Debug, sqlx::FromRow)]
pub struct EventRow {
    /// Its number in the session.
    pub seq: i64,
    /// Its SSE `event:` name.
    pub name: String,
    /// Its JSON.
    pub json: String,
}

/// One stored list or workflow frame.
#[derive(Debug, sqlx::FromRow)]
pub struct FrameRow {
    /// `list` or `workflow`.
    pub kind: String,
    /// The session or workflow it is about.
    pub key: String,
    /// Whose the session is (`cluster::payload::owners_text`).
    pub owners: String,
    /// Its SSE `event:` name.
    pub name: String,
    /// Its JSON.
    pub json: String,
}

/// Whether `err` is a unique-key violation: another instance took the
/// number first (`append_event`'s caller tries again).
pub fn is_conflict(err: &sqlx::Error) -> bool {
    err.as_database_error()
        .is_some_and(|e| e.is_unique_violation())
}

/// Stores event `name` of `session` as the session's next number (its
/// newest plus one, or `base` plus one for its first) and, in the same
/// statement, notifies `channel` with `head`, the number and `tail`;
/// returns the number. Two instances choosing the same number at once
/// collide on the primary key: the later gets a conflict ([`is_conflict`])
/// after the earlier commits, and tries again.
#[allow(clippy::too_many_arguments)]
pub async fn append_event(
    db: &PgPool,
    session: &str,
    name: &str,
    json: &str,
    base: i64,
    channel: &str,
    head: &str,
    tail: &str,
) -> Result<i64, sqlx::Error> {
    sqlx::query_scalar(
        "WITH next AS (
             SELECT COALESCE(MAX(seq), $5) + 1 AS seq FROM session_events WHERE session_id = $1
         ), ins AS (
             INSERT INTO session_events (session_id, seq, name, json, created_at)
             SELECT $1, next.seq, $2, $3, EXTRACT(EPOCH FROM now())::BIGINT FROM next
             RETURNING seq
         ), told AS (
             SELECT pg_notify($4, $6 || ins.seq || $7) FROM ins
         )
         SELECT ins.seq FROM ins CROSS JOIN told",
    )
    .bind(session)
    .bind(name)
    .bind(json)
    .bind(channel)
    .bind(base)
    .bind(head)
    .bind(tail)
    .fetch_one(db)
    .await
}

/// Stores a list or workflow frame too large for a notification and, in
/// the same statement, notifies `channel` with `prefix` and its id.
#[allow(clippy::too_many_arguments)]
pub async fn store_frame(
    db: &PgPool,
    channel: &str,
    prefix: &str,
    kind: &str,
    key: &str,
    owners: &str,
    name: &str,
    json: &str,
) -> Result<i64, sqlx::Error> {
    sqlx::query_scalar(
        "WITH ins AS (
             INSERT INTO cluster_frames (kind, key, owners, name, json, created_at)
             VALUES ($3, $4, $5, $6, $7, EXTRACT(EPOCH FROM now())::BIGINT)
             RETURNING id
         ), told AS (
             SELECT pg_notify($1, $2 || ins.id) FROM ins
         )
         SELECT ins.id FROM ins CROSS JOIN told",
    )
    .bind(channel)
    .bind(prefix)
    .bind(kind)
    .bind(key)
    .bind(owners)
    .bind(name)
    .bind(json)
    .fetch_one(db)
    .await
}

/// Notifies `channel` with `payload`.
pub async fn notify(db: &PgPool, channel: &str, payload: &str) -> Result<(), sqlx::Error> {
    sqlx::query("SELECT pg_notify($1, $2)::TEXT")
        .bind(channel)
        .bind(payload)
        .execute(db)
        .await?;
    Ok(())
}

/// Stored frame `id`, if not pruned.
pub async fn frame(db: &PgPool, id: i64) -> Result<Option<FrameRow>, sqlx::Error> {
    sqlx::query_as("SELECT kind, key, owners, name, json FROM cluster_frames WHERE id = $1")
        .bind(id)
        .fetch_optional(db)
        .await
}

/// `session`'s events after `after` (up to `upto` if given), oldest
/// first, at most `limit`.
pub async fn events_after(
    db: &PgPool,
    session: &str,
    after: i64,
    upto: Option<i64>,
    limit: i64,
) -> Result<Vec<EventRow>, sqlx::Error> {
    sqlx::query_as(
        "SELECT seq, name, json FROM session_events
         WHERE session_id = $1 AND seq > $2 AND ($3::BIGINT IS NULL OR seq <= $3)
         ORDER BY seq LIMIT $4",
    )
    .bind(session)
    .bind(after)
    .bind(upto)
    .bind(limit)
    .fetch_all(db)
    .await
}

/// `session`'s stored events named `name` up to `upto`, oldest first, at
/// most the newest `limit`.
pub async fn named_upto(
    db: &PgPool,
    session: &str,
    name: &str,
    upto: i64,
    limit: i64,
) -> Result<Vec<EventRow>, sqlx::Error> {
    sqlx::query_as(
        "SELECT seq, name, json FROM (
             SELECT seq, name, json FROM session_events
             WHERE session_id = $1 AND name = $2 AND seq <= $3
             ORDER BY seq DESC LIMIT $4
         ) AS newest ORDER BY seq",
    )
    .bind(session)
    .bind(name)
    .bind(upto)
    .bind(limit)
    .fetch_all(db)
    .await
}

/// The newest number of `session`'s stored events (`None`: none yet).
pub async fn last_seq(db: &PgPool, session: &str) -> Result<Option<i64>, sqlx::Error> {
    sqlx::query_scalar("SELECT MAX(seq) FROM session_events WHERE session_id = $1")
        .bind(session)
        .fetch_one(db)
        .await
}

/// Which of `sessions` are not open any more (ended, or gone).
pub async fn not_open(db: &PgPool, sessions: &[String]) -> Result<Vec<String>, sqlx::Error> {
    sqlx::query_scalar(
        "SELECT t.id FROM unnest($1::TEXT[]) AS t(id)
         WHERE NOT EXISTS (
             SELECT 1 FROM agent_sessions s WHERE s.id = t.id AND s.ended_at IS NULL
         )",
    )
    .bind(sessions)
    .fetch_all(db)
    .await
}

/// Deletes what is older than `keep_secs`: stored frames, and session
/// events except each open session's newest (which keeps its numbering
/// going); and, whatever their age, the events of sessions that are gone
/// (purged by retention). Returns how many rows went.
pub async fn prune(db: &PgPool, keep_secs: i64) -> Result<u64, sqlx::Error> {
    let events = sqlx::query(
        "DELETE FROM session_events e
         WHERE NOT EXISTS (SELECT 1 FROM agent_sessions s WHERE s.id = e.session_id)
            OR (e.created_at < EXTRACT(EPOCH FROM now())::BIGINT - $1
                AND (e.seq < (SELECT MAX(m.seq) FROM session_events m
                              WHERE m.session_id = e.session_id)
                     OR NOT EXISTS (SELECT 1 FROM agent_sessions s
                                    WHERE s.id = e.session_id AND s.ended_at IS NULL)))",
    )
    .bind(keep_secs)
    .execute(db)
    .await?;
    let frames = sqlx::query(
        "DELETE FROM cluster_frames WHERE created_at < EXTRACT(EPOCH FROM now())::BIGINT - $1",
    )
    .bind(keep_secs)
    .execute(db)
    .await?;
    Ok(events.rows_affected() + frames.rows_affected())
}

/// Takes advisory lock `key` for the rest of `tx` if no other connection
/// holds it; false if one does. Released when `tx` ends, however it ends.
pub async fn try_lock(tx: &mut Transaction<'_, Postgres>, key: i64) -> Result<bool, sqlx::Error> {
    sqlx::query_scalar("SELECT pg_try_advisory_xact_lock($1)")
        .bind(key)
        .fetch_one(&mut **tx)
        .await
}
