//! Periodic jobs that run on one instance at a time (a transaction-scoped
//! PostgreSQL advisory lock per job, tried, never waited for), and the
//! pruning of relayed events the idle sweep does.

use super::KEEP_SECS;
use crate::server::store::cluster as store;
use crate::server::{AppState, ServerError};
use std::future::Future;

/// A periodic job that runs on one instance at a time.
#[derive(Debug, Clone, Copy)]
pub enum Job {
    /// Ending idle sessions, deleting expired sign-ins and join codes
    /// (`startup::sweep`).
    IdleSweep,
    /// Opening sessions for due schedules (`triggers::schedule`).
    Scheduler,
    /// The daily retention sweep (`retention`).
    Retention,
}

impl Job {
    /// Its advisory lock key: "SWBD" and the job's number, so it does not
    /// collide with another application's locks on the same database.
    fn key(self) -> i64 {
        const PREFIX: i64 = 0x5357_4244 << 16;
        PREFIX
            | match self {
                Job::IdleSweep => 1,
                Job::Scheduler => 2,
                Job::Retention => 3,
            }
    }
}

/// Runs `work` unless another instance is running `job` right now (then
/// `None`): a transaction-scoped advisory lock, held until `work` is done
/// and released however it ends. On SQLite, always runs it.
pub async fn once<T>(
    state: &AppState,
    job: Job,
    work: impl Future<Output = T>,
) -> Result<Option<T>, ServerError> {
    let Some(cluster) = &state.cluster else {
        return Ok(Some(work.await));
    };
    let mut tx = cluster.db.begin().await?;
    if !store::try_lock(&mut tx, job.key()).await? {
        tracing::debug!(?job, "running on another instance; skipped here");
        return Ok(None);
    }
    let out = work.await;
    tx.commit().await?;
    Ok(Some(out))
}

/// Deletes stored events and frames older than [`KEEP_SECS`] (each open
/// session's newest event stays); nothing on SQLite.
pub async fn prune(state: &AppState) -> Result<u64, ServerError> {
    match &state.cluster {
        Some(cluster) => Ok(store::prune(&cluster.db, KEEP_SECS).await?),
        None => Ok(0),
    }
}
