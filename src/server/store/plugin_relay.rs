//! The SQL of calls relayed to plugins across instances
//! (`agent::plugins::across`, `migrations/postgres/0004_plugin_relay.sql`):
//! the calls waiting for an answer, each instance's plugin streams, and
//! the notifications that tell the other instances.
//!
//! PostgreSQL only (`pg_notify`; the tables exist only there): called
//! when `AppState::cluster` is set. Times are Unix ms on the calling
//! instance's clock.

use crate::server::platform::db::Db;

/// A relayed call still waiting for its answer.
#[derive(Debug, Clone, sqlx::FromRow)]
pub struct WaitingRow {
    /// The recorded call's id.
    pub call_id: i64,
    /// Its session.
    pub session_id: String,
    /// The plugin tool called.
    pub tool: String,
    /// Its arguments, as JSON text.
    pub arguments: String,
    /// When its agent stops waiting.
    pub deadline_ms: i64,
}

/// Stores `call` as waiting and, in the same statement, notifies
/// `channel` with `payload`.
pub async fn insert_call(
    db: &Db,
    call: &WaitingRow,
    channel: &str,
    payload: &str,
) -> Result<(), sqlx::Error> {
    sqlx::query(
        "WITH ins AS (
             INSERT INTO plugin_relay_calls (call_id, session_id, tool, arguments, deadline_ms)
             VALUES ($1, $2, $3, $4, $5) RETURNING call_id
         )
         SELECT pg_notify($6, $7)::TEXT FROM ins",
    )
    .bind(call.call_id)
    .bind(&call.session_id)
    .bind(&call.tool)
    .bind(&call.arguments)
    .bind(call.deadline_ms)
    .bind(channel)
    .bind(payload)
    .execute(db)
    .await?;
    Ok(())
}

/// Call `call_id` if it is still waiting (not answered).
pub async fn waiting_call(db: &Db, call_id: i64) -> Result<Option<WaitingRow>, sqlx::Error> {
    sqlx::query_as(
        "SELECT call_id, session_id, tool, arguments, deadline_ms FROM plugin_relay_calls
         WHERE call_id = $1 AND answer IS NULL",
    )
    .bind(call_id)
    .fetch_optional(db)
    .await
}

/// `session`'s calls still waiting and not past their deadline at
/// `now_ms`, oldest first.
pub async fn waiting_calls(
    db: &Db,
    session: &str,
    now_ms: i64,
) -> Result<Vec<WaitingRow>, sqlx::Error> {
    sqlx::query_as(
        "SELECT call_id, session_id, tool, arguments, deadline_ms FROM plugin_relay_calls
         WHERE session_id = $1 AND answer IS NULL AND deadline_ms > $2
         ORDER BY call_id",
    )
    .bind(session)
    .bind(now_ms)
    .fetch_all(db)
    .await
}

/// Gives waiting call `call_id` of `session` its `answer` if nobody did
/// and its deadline is after `now_ms` and, in the same statement,
/// notifies `channel` with `payload`; false when it was not waiting
/// (answered, given up on, another session's or none).
pub async fn answer(
    db: &Db,
    session: &str,
    call_id: i64,
    answer: &str,
    now_ms: i64,
    channel: &str,
    payload: &str,
) -> Result<bool, sqlx::Error> {
    let told: Option<String> = sqlx::query_scalar(
        "WITH upd AS (
             UPDATE plugin_relay_calls SET answer = $3
             WHERE session_id = $1 AND call_id = $2 AND answer IS NULL AND deadline_ms > $4
             RETURNING call_id
         )
         SELECT pg_notify($5, $6)::TEXT FROM upd",
    )
    .bind(session)
    .bind(call_id)
    .bind(answer)
    .bind(now_ms)
    .bind(channel)
    .bind(payload)
    .fetch_optional(db)
    .await?;
    Ok(told.is_some())
}

/// Deletes answered call `call_id`, returning its answer (`None`: not
/// answered, or gone).
pub async fn take_answer(db: &Db, call_id: i64) -> Result<Option<String>, sqlx::Error> {
    sqlx::query_scalar(
        "DELETE FROM plugin_relay_calls WHERE call_id = $1 AND answer IS NOT NULL RETURNING answer",
    )
    .bind(call_id)
    .fetch_optional(db)
    .await
}

/// Deletes call `call_id` (its agent stopped waiting), returning its
/// answer if one came in the meantime.
pub async fn give_up(db: &Db, call_id: i64) -> Result<Option<String>, sqlx::Error> {
    let answer: Option<Option<String>> =
        sqlx::query_scalar("DELETE FROM plugin_relay_calls WHERE call_id = $1 RETURNING answer")
            .bind(call_id)
            .fetch_optional(db)
            .await?;
    Ok(answer.flatten())
}

/// Deletes `session`'s waiting calls and stream counts (it ended) and, in
/// the same statement, notifies `channel` with `payload`.
pub async fn end_session(
    db: &Db,
    session: &str,
    channel: &str,
    payload: &str,
) -> Result<(), sqlx::Error> {
    sqlx::query(
        "WITH calls AS (DELETE FROM plugin_relay_calls WHERE session_id = $1),
              streams AS (DELETE FROM plugin_streams WHERE session_id = $1)
         SELECT pg_notify($2, $3)::TEXT",
    )
    .bind(session)
    .bind(channel)
    .bind(payload)
    .execute(db)
    .await?;
    Ok(())
}

/// Writes `instance`'s plugin streams of `session`: `open` of them, the
/// last closed at `closed_at_ms`, as of `now_ms`.
pub async fn put_streams(
    db: &Db,
    session: &str,
    instance: &str,
    open: i64,
    closed_at_ms: Option<i64>,
    now_ms: i64,
) -> Result<(), sqlx::Error> {
    sqlx::query(
        "INSERT INTO plugin_streams (session_id, instance, open_streams, closed_at_ms, seen_at_ms)
         VALUES ($1, $2, $3, $4, $5)
         ON CONFLICT (session_id, instance) DO UPDATE SET
           open_streams = excluded.open_streams, closed_at_ms = excluded.closed_at_ms,
           seen_at_ms = excluded.seen_at_ms",
    )
    .bind(session)
    .bind(instance)
    .bind(open)
    .bind(closed_at_ms)
    .bind(now_ms)
    .execute(db)
    .await?;
    Ok(())
}

/// Deletes `instance`'s row of `session` (it holds nothing of it any more).
pub async fn drop_streams(db: &Db, session: &str, instance: &str) -> Result<(), sqlx::Error> {
    sqlx::query("DELETE FROM plugin_streams WHERE session_id = $1 AND instance = $2")
        .bind(session)
        .bind(instance)
        .execute(db)
        .await?;
    Ok(())
}

/// `instance` is alive at `now_ms`: refreshes its rows with open streams;
/// how many there were.
pub async fn heartbeat(db: &Db, instance: &str, now_ms: i64) -> Result<u64, sqlx::Error> {
    let done = sqlx::query(
        "UPDATE plugin_streams SET seen_at_ms = $2 WHERE instance = $1 AND open_streams > 0",
    )
    .bind(instance)
    .bind(now_ms)
    .execute(db)
    .await?;
    Ok(done.rows_affected())
}

/// `instance` stops: every stream it had counts as closed at `now_ms`.
pub async fn instance_stopped(db: &Db, instance: &str, now_ms: i64) -> Result<(), sqlx::Error> {
    sqlx::query(
        "UPDATE plugin_streams SET open_streams = 0, closed_at_ms = $2, seen_at_ms = $2
         WHERE instance = $1 AND open_streams > 0",
    )
    .bind(instance)
    .bind(now_ms)
    .execute(db)
    .await?;
    Ok(())
}

/// Whether some instance holds a plugin stream of `session` at `now_ms`
/// (open, and its instance heard from less than `grace_ms` ago) or closed
/// its last less than `grace_ms` ago.
pub async fn reachable(
    db: &Db,
    session: &str,
    now_ms: i64,
    grace_ms: i64,
) -> Result<bool, sqlx::Error> {
    let rows: i64 = sqlx::query_scalar(
        "SELECT COUNT(*) FROM plugin_streams
         WHERE session_id = $1
           AND ((open_streams > 0 AND seen_at_ms > $2 - $3) OR closed_at_ms > $2 - $3)",
    )
    .bind(session)
    .bind(now_ms)
    .bind(grace_ms)
    .fetch_one(db)
    .await?;
    Ok(rows > 0)
}

/// Deletes stream rows that say nothing any more (nothing open or closed
/// within `grace_ms`, or an instance not heard from for as long) and
/// calls `keep_ms` past their deadline (their instance died waiting).
pub async fn prune(db: &Db, now_ms: i64, grace_ms: i64, keep_ms: i64) -> Result<u64, sqlx::Error> {
    let streams = sqlx::query(
        "DELETE FROM plugin_streams
         WHERE seen_at_ms < $1 - $2 AND (closed_at_ms IS NULL OR closed_at_ms < $1 - $2)",
    )
    .bind(now_ms)
    .bind(grace_ms)
    .execute(db)
    .await?;
    let calls = sqlx::query("DELETE FROM plugin_relay_calls WHERE deadline_ms < $1 - $2")
        .bind(now_ms)
        .bind(keep_ms)
        .execute(db)
        .await?;
    Ok(streams.rows_affected() + calls.rows_affected())
}

/// Stores `session`'s frame `name` (`json`) for the plugin streams of
/// every instance (`cluster_frames`, kind `plugin`, pruned with the
/// cluster's frames) and, in the same statement, notifies `channel` with
/// `prefix` and its id.
pub async fn store_frame(
    db: &Db,
    session: &str,
    name: &str,
    json: &str,
    channel: &str,
    prefix: &str,
) -> Result<(), sqlx::Error> {
    sqlx::query(
        "WITH ins AS (
             INSERT INTO cluster_frames (kind, key, owners, name, json, created_at)
             VALUES ('plugin', $1, '', $2, $3, EXTRACT(EPOCH FROM now())::BIGINT)
             RETURNING id
         )
         SELECT pg_notify($4, $5 || ins.id)::TEXT FROM ins",
    )
    .bind(session)
    .bind(name)
    .bind(json)
    .bind(channel)
    .bind(prefix)
    .execute(db)
    .await?;
    Ok(())
}

/// Plugin frame `id`: its session, event name and JSON, if not pruned.
pub async fn frame(db: &Db, id: i64) -> Result<Option<(String, String, String)>, sqlx::Error> {
    sqlx::query_as("SELECT key, name, json FROM cluster_frames WHERE id = $1 AND kind = 'plugin'")
        .bind(id)
        .fetch_optional(db)
        .await
}

/// Notifies `channel` with `payload`.
pub async fn notify(db: &Db, channel: &str, payload: &str) -> Result<(), sqlx::Error> {
    sqlx::query("SELECT pg_notify($1, $2)::TEXT")
        .bind(channel)
        .bind(payload)
        .execute(db)
        .await?;
    Ok(())
}
