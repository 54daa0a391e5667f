//! A watcher's start on any instance (`Last-Event-ID` against any
//! instance): the channel positioned from the table when this instance does
//! not know where the session's numbering stands, a replay from the table
//! when the local ring does not reach back far enough, and the kept events
//! a late listener gets before its snapshot.

use super::{listener, order, Cluster};
use crate::domain::limits::REPLAY_MAX_BYTES;
use crate::domain::plugin::AVAILABILITY_EVENT;
use crate::server::agent::hub::{Frame, Subscription, REPLAY};
use crate::server::store::cluster as store;
use crate::server::{AppState, ServerError};
use std::sync::Arc;

/// Subscribes to `session` on this instance: [`Hub::subscribe`], with the
/// channel positioned from the database first when it does not know where
/// the session's numbering stands, and a `Last-Event-ID` older than the
/// local ring (or newer than what reached this instance yet) served from
/// `session_events`.
pub async fn subscribe(
    state: &AppState,
    session: &str,
    last_seen: Option<u64>,
) -> Result<Subscription, ServerError> {
    let hub = &state.hub;
    let Some(cluster) = &state.cluster else {
        return Ok(hub.subscribe(session, last_seen));
    };
    let here = hub.last_id(session);
    if here.is_none() || last_seen > here {
        hub.open_channel(session);
        let stored = store::last_seq(&cluster.db, session).await?;
        if let Some(stored) = stored.and_then(|s| u64::try_from(s).ok()) {
            hub.position(session, stored);
            // Events up to it are stored; deliver what has not come yet.
            let last = hub.last_id(session).unwrap_or(stored);
            if last < stored {
                listener::fill(hub, cluster, session, last, Some(stored)).await?;
            }
        }
    }
    let mut sub = hub.subscribe(session, last_seen);
    if let Some(seen) = last_seen.filter(|&seen| sub.needs_snapshot && seen < sub.snapshot_id) {
        if let Some(replay) = replay(cluster, session, seen, sub.snapshot_id).await? {
            sub.replay = replay;
            sub.history.clear();
            sub.needs_snapshot = false;
        }
    }
    if sub.needs_snapshot && sub.snapshot_id > 0 {
        sub.history = history(cluster, session, sub.snapshot_id).await?;
    }
    Ok(sub)
}

/// The kept events a late listener gets before its snapshot (the plugin's
/// availability updates, as `Hub::subscribe` keeps them from its ring), up
/// to `upto`, from the table: this instance's ring may have begun after
/// them.
async fn history(
    cluster: &Cluster,
    session: &str,
    upto: u64,
) -> Result<Vec<Arc<Frame>>, ServerError> {
    let upto = i64::try_from(upto).unwrap_or(i64::MAX);
    let rows = store::named_upto(
        &cluster.db,
        session,
        AVAILABILITY_EVENT,
        upto,
        REPLAY as i64,
    )
    .await?;
    Ok(rows
        .iter()
        .map(|r| Arc::new(Frame::new(r.seq as u64, &r.name, &r.json)))
        .collect())
}

/// `session`'s events after `seen` up to `upto` from the table, if they
/// are all there and within what a ring would hold; `None` means a
/// snapshot.
async fn replay(
    cluster: &Cluster,
    session: &str,
    seen: u64,
    upto: u64,
) -> Result<Option<Vec<Arc<Frame>>>, ServerError> {
    let to_i64 = |n: u64| i64::try_from(n).unwrap_or(i64::MAX);
    let limit = REPLAY as i64 + 1;
    let rows = store::events_after(
        &cluster.db,
        session,
        to_i64(seen),
        Some(to_i64(upto)),
        limit,
    )
    .await?;
    let seqs = rows
        .iter()
        .map(|r| u64::try_from(r.seq).unwrap_or_default());
    let bytes: usize = rows.iter().map(|r| r.json.len() + r.name.len()).sum();
    if rows.len() > REPLAY || bytes > REPLAY_MAX_BYTES || !order::complete(seen, upto, seqs) {
        return Ok(None);
    }
    Ok(Some(
        rows.iter()
            .map(|r| Arc::new(Frame::new(r.seq as u64, &r.name, &r.json)))
            .collect(),
    ))
}
