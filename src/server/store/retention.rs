//! Retention's SQL: the sessions past a cut-off, purging sessions with
//! everything that hangs off them (deleting a student purges through the
//! same [`purge`]), and the last sweep's row (migration
//! `0031_retention.sql`).

use crate::domain::retention::{SweepReport, SweepStarter};
use crate::server::platform::db::{backend_of, json_ids, Conn, Db, Flag};
use crate::server::ServerError;
use std::collections::BTreeMap;

/// Every table holding rows of one session (each by its `session_id`).
/// All but `dispute_cases` go with their session by `ON DELETE CASCADE`
/// (migrations 0004–0022); the banking demo's dispute cases name their
/// session without a foreign key, so [`purge`] deletes them itself.
/// `review_queue` and `student_facts` are not here: their rows are the
/// student's and outlive the session (`ON DELETE SET NULL`). A new per-session table belongs in
/// this list (the HTTP tests check none is missing).
pub const PER_SESSION_TABLES: [&str; 11] = [
    "tool_calls",
    "lesson_outcomes",
    "todos",
    "todo_lists",
    "todo_sessions",
    "session_plugins",
    "session_plugin_tool_uses",
    "session_plugin_tokens",
    "join_codes",
    "session_joined_tokens",
    "dispute_cases",
];

/// The table counted for the sessions themselves.
pub const SESSIONS_TABLE: &str = "agent_sessions";

/// Up to `limit` sessions whose last sign of life — opening, last
/// activity, end — was before `cutoff`, oldest first, each with whether
/// it is still open (the sweep ends those first).
pub async fn expired(
    db: &Db,
    cutoff: i64,
    limit: usize,
) -> Result<Vec<(String, bool)>, ServerError> {
    let rows: Vec<(String, Flag)> = sqlx::query_as(
        "SELECT id, ended_at IS NULL FROM agent_sessions
         WHERE last_activity < $1 AND created_at < $1 AND COALESCE(ended_at, 0) < $1
         ORDER BY last_activity LIMIT $2",
    )
    .bind(cutoff)
    .bind(i64::try_from(limit).unwrap_or(i64::MAX))
    .fetch_all(db)
    .await?;
    Ok(rows.into_iter().map(|(id, open)| (id, open.0)).collect())
}

/// What a purge removed: rows per table, and the review items it kept.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Purged {
    /// Rows removed, by table ([`SESSIONS_TABLE`] for the sessions).
    pub removed: BTreeMap<String, u64>,
    /// Review items that pointed at a purged session, kept with their
    /// session cleared.
    pub review_items_kept: u64,
}

/// Deletes sessions `ids` and every row of theirs, inside the caller's
/// transaction, counting what goes table by table first.
pub async fn purge(conn: &mut Conn, ids: &[String]) -> Result<Purged, ServerError> {
    let ids = serde_json::to_string(ids)
        .map_err(|e| ServerError::Config(format!("session ids did not serialise: {e}")))?;
    let listed = json_ids(backend_of(conn), 1);
    let of_ids = format!("session_id IN ({listed})");
    let mut purged = Purged::default();
    for table in PER_SESSION_TABLES {
        let rows: i64 = sqlx::query_scalar(&format!("SELECT COUNT(*) FROM {table} WHERE {of_ids}"))
            .bind(&ids)
            .fetch_one(&mut *conn)
            .await?;
        purged.removed.insert(table.to_owned(), rows.unsigned_abs());
    }
    let kept: i64 =
        sqlx::query_scalar(&format!("SELECT COUNT(*) FROM review_queue WHERE {of_ids}"))
            .bind(&ids)
            .fetch_one(&mut *conn)
            .await?;
    purged.review_items_kept = kept.unsigned_abs();
    sqlx::query(&format!("DELETE FROM dispute_cases WHERE {of_ids}"))
        .bind(&ids)
        .execute(&mut *conn)
        .await?;
    let sessions = sqlx::query(&format!(
        "DELETE FROM agent_sessions WHERE id IN ({listed})"
    ))
    .bind(&ids)
    .execute(&mut *conn)
    .await?
    .rows_affected();
    purged.removed.insert(SESSIONS_TABLE.to_owned(), sessions);
    Ok(purged)
}

/// [`purge`] as one write transaction of its own (`BEGIN IMMEDIATE`).
pub async fn purge_batch(db: &Db, ids: &[String]) -> Result<Purged, ServerError> {
    let mut tx = crate::server::platform::db::begin_write(db).await?;
    let purged = purge(&mut tx, ids).await?;
    tx.commit().await?;
    Ok(purged)
}

/// The last sweep, if one ran.
pub async fn last_sweep(db: &Db) -> Result<Option<SweepReport>, ServerError> {
    let row: Option<(i64, i64, i64, String, i64, String)> = sqlx::query_as(
        "SELECT ran_at, cutoff, days, removed, review_items_kept, started_by
         FROM retention_sweeps WHERE id = 1",
    )
    .fetch_optional(db)
    .await?;
    Ok(row.map(
        |(ran_at, cutoff, days, removed, kept, started_by)| SweepReport {
            ran_at,
            cutoff,
            days: u32::try_from(days).unwrap_or(0),
            started_by: SweepStarter::parse(&started_by),
            removed: serde_json::from_str(&removed).unwrap_or_default(),
            review_items_kept: kept.unsigned_abs(),
        },
    ))
}

/// Records `report` as the last sweep (replacing the one before).
pub async fn record_sweep(db: &Db, report: &SweepReport) -> Result<(), ServerError> {
    let removed = serde_json::to_string(&report.removed)
        .map_err(|e| ServerError::Config(format!("a sweep report did not serialise: {e}")))?;
    sqlx::query(
        "INSERT INTO retention_sweeps
             (id, ran_at, cutoff, days, removed, review_items_kept, started_by)
         VALUES (1, $1, $2, $3, $4, $5, $6)
         ON CONFLICT (id) DO UPDATE SET ran_at = excluded.ran_at, cutoff = excluded.cutoff,
             days = excluded.days, removed = excluded.removed,
             review_items_kept = excluded.review_items_kept, started_by = excluded.started_by",
    )
    .bind(report.ran_at)
    .bind(report.cutoff)
    .bind(i64::from(report.days))
    .bind(removed)
    .bind(i64::try_from(report.review_items_kept).unwrap_or(i64::MAX))
    .bind(report.started_by.as_str())
    .execute(db)
    .await?;
    Ok(())
}
