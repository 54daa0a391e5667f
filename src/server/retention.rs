//! The retention sweep: once a day, the sessions whose last sign of life
//! (opening, last activity, end) is older than `DATA_RETENTION_DAYS` are
//! purged with their calls, outcomes, todos, plugin rows and join codes,
//! a batch of [`RETENTION_BATCH_SESSIONS`] per write transaction, and what
//! went is logged and kept as the last sweep for admins
//! (`GET /api/retention`). Review items survive, their session cleared:
//! they are the student's, not the run's.
//!
//! Daily across restarts: a task started with the server asks every
//! [`CHECK_EVERY`] whether a day has passed since the last sweep (kept in
//! the database), so a server restarted more often than daily still
//! sweeps. Times come from the injected clock (`state.clock`), so tests
//! move time instead of waiting a year.

use crate::domain::limits::RETENTION_BATCH_SESSIONS;
use crate::domain::retention::SWEEP_INTERVAL_SECS;
use crate::domain::retention::{add_counts, sweep_due, RetentionStatus, SweepReport, SweepStarter};
use crate::server::store::retention::{self as store, PER_SESSION_TABLES, SESSIONS_TABLE};
use crate::server::{agent, AppState, ServerError};
use std::collections::BTreeMap;
use std::time::Duration;

/// How often the task asks whether the daily sweep is due: hourly, so a
/// sweep runs within the hour of being due.
pub const CHECK_EVERY: Duration = Duration::from_secs(3_600);

/// How long after start-up the task first asks: start-up is not held up
/// by a long first sweep.
pub const FIRST_CHECK_AFTER: Duration = Duration::from_secs(60);

/// The end reason of an open session purged by retention.
pub const END_REASON: &str = "retention";

/// Purges every session past the cut-off now, batch by batch, records and
/// logs the sweep and returns its report; `None` when retention is off
/// (nothing is touched). One sweep at a time (`state.retention_lock`).
pub async fn sweep(
    state: &AppState,
    started_by: SweepStarter,
) -> Result<Option<SweepReport>, ServerError> {
    let retention = state.config.data_retention;
    let (Some(days), Some(cutoff)) = (retention.days(), retention.cutoff(state.clock.now())) else {
        return Ok(None);
    };
    let _one_at_a_time = state.retention_lock.lock().await;
    let ran_at = state.clock.now();
    let mut removed: BTreeMap<String, u64> = PER_SESSION_TABLES
        .iter()
        .chain([&SESSIONS_TABLE])
        .map(|table| ((*table).to_owned(), 0))
        .collect();
    let mut review_items_kept = 0;
    loop {
        let batch = store::expired(&state.db, cutoff, RETENTION_BATCH_SESSIONS).await?;
        let full = batch.len() == RETENTION_BATCH_SESSIONS;
        if batch.is_empty() {
            break;
        }
        let mut ids = Vec::with_capacity(batch.len());
        for (id, open) in batch {
            // Watchers are told it ended and everything live is freed
            // before its rows go.
            if open {
                agent::sessions::end(state, &id, END_REASON).await?;
            }
            ids.push(id);
        }
        let purged = store::purge_batch(&state.db, &ids).await?;
        add_counts(&mut removed, &purged.removed);
        review_items_kept += purged.review_items_kept;
        if !full {
            break;
        }
        // Other writers get the database between batches.
        tokio::task::yield_now().await;
    }
    let report = SweepReport {
        ran_at,
        cutoff,
        days,
        started_by,
        removed,
        review_items_kept,
    };
    store::record_sweep(&state.db, &report).await?;
    tracing::info!(
        started_by = started_by.as_str(),
        days,
        cutoff,
        sessions = report.sessions(),
        removed = ?report.removed,
        review_items_kept,
        "retention sweep purged sessions older than the cut-off"
    );
    Ok(Some(report))
}

/// Sweeps if retention is on and a day has passed since the last sweep
/// (or none ran yet); what the daily task does each check.
pub async fn sweep_if_due(state: &AppState) -> Result<Option<SweepReport>, ServerError> {
    if state.config.data_retention.days().is_none() {
        return Ok(None);
    }
    let last = store::last_sweep(&state.db).await?;
    if !sweep_due(last.map(|l| l.ran_at), state.clock.now()) {
        return Ok(None);
    }
    sweep(state, SweepStarter::Daily).await
}

/// The setting, the cut-off a sweep would use now, when the next daily
/// sweep is due and the last sweep, for admins.
pub async fn status(state: &AppState) -> Result<RetentionStatus, ServerError> {
    let retention = state.config.data_retention;
    let now = state.clock.now();
    let last_sweep = store::last_sweep(&state.db).await?;
    let next_sweep_at = retention.days().map(|_| {
        last_sweep
            .as_ref()
            .map_or(now, |l| (l.ran_at + SWEEP_INTERVAL_SECS).max(now))
    });
    Ok(RetentionStatus {
        enabled: retention.days().is_some(),
        days: retention.days(),
        cutoff: retention.cutoff(now),
        next_sweep_at,
        last_sweep,
    })
}

/// The daily task: [`sweep_if_due`] every [`CHECK_EVERY`], first
/// [`FIRST_CHECK_AFTER`] start-up (on one instance at a time, in a
/// cluster), until the task is dropped. A failed
/// sweep is logged and tried again at the next check.
pub async fn run(state: AppState) {
    let first = tokio::time::Instant::now() + FIRST_CHECK_AFTER;
    let mut tick = tokio::time::interval_at(first, CHECK_EVERY);
    tick.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
    loop {
        tick.tick().await;
        // One instance at a time: the next one then finds it not due.
        let swept = crate::server::cluster::once(
            &state,
            crate::server::cluster::Job::Retention,
            sweep_if_due(&state),
        )
        .await;
        if let Err(e) = swept.and_then(|done| done.transpose()) {
            tracing::error!(error = %e, "the retention sweep failed");
        }
    }
}
