//! "Is the session's plugin connected?" — a plugin stream open, or one
//! closed less than [`RECONNECT_GRACE_MS`] ago — on this instance, or in a
//! cluster on any.
//!
//! In a cluster each instance writes its own streams per session to
//! `plugin_streams` (how many are open, when the last closed), one writer
//! task in the order they change, and refreshes its rows with open
//! streams every [`HEARTBEAT`]. An instance killed with streams open stops
//! refreshing them: its row then counts as closed at its last heartbeat,
//! so its plugin is "connected" for the grace (it reconnects to another
//! instance meanwhile) and not after. An instance that stops in order
//! marks its streams closed.

use super::session_relay::RECONNECT_GRACE_MS;
use super::waiting::Changed;
use crate::server::store::plugin_relay as store;
use crate::server::{AppState, ServerError};
use std::time::Duration;
use tokio::sync::mpsc;

/// How often an instance refreshes its rows with open plugin streams: well
/// inside [`RECONNECT_GRACE_MS`], so a live instance's row never looks
/// stale.
pub const HEARTBEAT: Duration = Duration::from_secs(5);

/// How often rows that say nothing any more are deleted.
const PRUNE_EVERY: Duration = Duration::from_secs(60);

/// How long past its deadline a call's row is kept if its agent's
/// instance did not delete it (it died waiting): then nobody can answer it.
const KEEP_PAST_DEADLINE_MS: i64 = 60_000;

/// Whether a call of `session`'s plugin would reach it now: a stream open
/// here or left less than the grace ago, or in a cluster the same on
/// another instance.
pub async fn connected(state: &AppState, session: &str) -> Result<bool, ServerError> {
    let now = state.clock.now_ms();
    if state.plugins.relays().reachable(session, now) {
        return Ok(true);
    }
    if state.cluster.is_none() {
        return Ok(false);
    }
    Ok(store::reachable(&state.db, session, now, RECONNECT_GRACE_MS).await?)
}

/// Writes this instance's streams of each session told on `changed` (and
/// tells whoever waits for it), refreshes them every [`HEARTBEAT`] and
/// prunes, until the queue closes.
pub(super) async fn write(
    state: AppState,
    instance: String,
    mut changed: mpsc::UnboundedReceiver<Changed>,
) {
    let mut beat = tokio::time::interval(HEARTBEAT);
    let mut prune = tokio::time::interval(PRUNE_EVERY);
    loop {
        tokio::select! {
            told = changed.recv() => {
                let Some(told) = told else { return };
                write_one(&state, &instance, &told.session).await;
                if let Some(done) = told.done {
                    let _ = done.send(());
                }
            }
            _ = beat.tick() => heartbeat(&state, &instance).await,
            _ = prune.tick() => {
                let now = state.clock.now_ms();
                let pruned =
                    store::prune(&state.db, now, RECONNECT_GRACE_MS, KEEP_PAST_DEADLINE_MS).await;
                if let Err(e) = pruned {
                    tracing::error!(error = %e, "pruning plugin relay rows failed");
                }
            }
        }
    }
}

/// Writes this instance's streams of `session` as they are now (its row
/// goes when nothing of it is kept here); a failure is logged, and the
/// next heartbeat writes it again.
async fn write_one(state: &AppState, instance: &str, session: &str) {
    let now = state.clock.now_ms();
    let written = match state.plugins.relays().presence(session) {
        Some((open, closed_at)) => {
            let open = i64::try_from(open).unwrap_or(i64::MAX);
            store::put_streams(&state.db, session, instance, open, closed_at, now).await
        }
        None => store::drop_streams(&state.db, session, instance).await,
    };
    if let Err(e) = written {
        tracing::error!(error = %e, session, "writing the plugin streams of an instance failed");
    }
}

/// Refreshes this instance's rows with open streams; if fewer were there
/// than it holds (pruned while the database was out of reach, or a write
/// failed), writes each again.
async fn heartbeat(state: &AppState, instance: &str) {
    let now = state.clock.now_ms();
    let open = state.plugins.relays().listened();
    match store::heartbeat(&state.db, instance, now).await {
        Ok(beat) if beat as usize >= open.len() => {}
        Ok(_) => {
            for session in &open {
                write_one(state, instance, session).await;
            }
        }
        Err(e) => tracing::error!(error = %e, "the plugin streams' heartbeat failed"),
    }
}

/// This instance stops: its streams count as closed now (the plugins
/// reconnect elsewhere within the grace). Nothing on SQLite.
pub async fn stopped(state: &AppState) {
    let Some(cluster) = &state.cluster else {
        return;
    };
    let now = state.clock.now_ms();
    if let Err(e) = store::instance_stopped(&state.db, cluster.instance(), now).await {
        tracing::error!(error = %e, "marking this instance's plugin streams closed failed");
    }
}
