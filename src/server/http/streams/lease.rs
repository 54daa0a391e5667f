//! Stream caps across the instances of a cluster. Counting every stream in
//! the database would put a write on each stream's opening and closing,
//! and a lock on a crowd's session key for each watcher; instead each
//! instance leases slots per key (`stream_leases`) and opens streams within
//! its lease without asking anyone:
//!
//! - a key whose lease is used up leases [`chunk`] more (one slot for the
//!   per-user caps, up to 256 for a session's audience), in a transaction
//!   holding the key's advisory lock, and only as far as the cap minus what
//!   the other live instances lease: the leases never add up past the cap,
//!   so neither do the streams;
//! - every [`HEARTBEAT`] the instance marks its leases as seen and gives
//!   back what it does not use, so a slot freed on one instance is free on
//!   the others within a heartbeat (until then a stream near the cap may
//!   be refused early, never let in late);
//! - the leases of an instance whose listener's connection is gone (killed:
//!   the database sees the connection close at once) stop counting at once,
//!   so its watchers reconnecting to another instance are let in; those of
//!   an instance not seen for [`ALIVE_WITHIN_MS`] (hung) stop counting then;
//!   both are deleted a minute after they were last seen. An instance cut
//!   off from the database counts as gone until its listener is back: what
//!   it has open stays open, so while it is away the others may let in up
//!   to its share again (no stream is refused for an instance that died).
//!
//! On SQLite there is one instance and no lease: the caps are counted in
//! this process alone.

use super::StreamCounter;
use crate::server::platform::clock::wall_ms;
use crate::server::platform::db::Db;
use crate::server::store::{locks, stream_leases as store};
use crate::server::ServerError;
use std::time::Duration;

/// How often an instance refreshes and trims its leases.
pub const HEARTBEAT: Duration = Duration::from_secs(5);

/// How long an instance's leases count after it was last seen (by the
/// machines' clocks, which must agree to well under it).
pub const ALIVE_WITHIN_MS: i64 = 15_000;

/// How long the leases of an instance no longer seen are kept.
const DELETE_AFTER_MS: i64 = 60_000;

/// How many slots a key's lease grows by: one for small caps (a user's 50
/// streams: nothing held that another instance could use), a 64th of the
/// cap for large ones (a session's audience: one transaction per 256
/// watchers at most, not one per watcher).
pub fn chunk(cap: usize) -> usize {
    (cap / 64).clamp(1, 256)
}

/// One instance's leases in a cluster's database.
pub struct Leases {
    db: Db,
    instance: String,
}

impl Leases {
    /// Leases `key` more slots for `counter`'s streams, up to `cap` in all
    /// instances; whether there is room now (someone else may have leased
    /// it here meanwhile). `false`: the others hold the rest of the cap.
    pub(super) async fn grow(
        &self,
        counter: &StreamCounter,
        key: &str,
        cap: usize,
    ) -> Result<bool, ServerError> {
        let mut tx = self.db.begin().await?;
        locks::lock(&mut tx, &lock_name(key)).await?;
        let now = wall_ms();
        let others = store::others(&mut tx, key, &self.instance, now - ALIVE_WITHIN_MS).await?;
        let others = usize::try_from(others).unwrap_or(usize::MAX);
        // Decided and written under the key's lock, so no other instance
        // leases the same slots meanwhile.
        let grant = {
            let mut open = counter.locked();
            let slot = open.entry(key.to_owned()).or_insert_with(super::Slot::new);
            if slot.count < slot.leased.min(cap) {
                return Ok(true);
            }
            let grant = (slot.count + chunk(cap)).min(cap.saturating_sub(others));
            if grant <= slot.count {
                if !slot.held() {
                    open.remove(key);
                }
                return Ok(false);
            }
            slot.leased = grant;
            grant
        };
        let written = async {
            store::set(&mut tx, key, &self.instance, grant, now).await?;
            tx.commit().await.map_err(ServerError::from)
        }
        .await;
        if let Err(e) = written {
            // Not leased after all: take back only what is not in use.
            if let Some(slot) = counter.locked().get_mut(key) {
                slot.leased = slot.count;
            }
            return Err(e);
        }
        Ok(true)
    }

    /// Gives back the slots of `key` not in use here.
    async fn trim(&self, counter: &StreamCounter, key: &str) -> Result<(), ServerError> {
        let mut tx = self.db.begin().await?;
        locks::lock(&mut tx, &lock_name(key)).await?;
        let keep = {
            let mut open = counter.locked();
            let Some(slot) = open.get_mut(key) else {
                return Ok(());
            };
            slot.leased = slot.count;
            let keep = slot.count;
            if !slot.held() {
                open.remove(key);
            }
            keep
        };
        store::set(&mut tx, key, &self.instance, keep, wall_ms()).await?;
        tx.commit().await?;
        Ok(())
    }

    /// One heartbeat: this instance's leases marked as seen, unused slots
    /// given back, dead instances' leases deleted.
    async fn beat(&self, counter: &StreamCounter) -> Result<(), ServerError> {
        let now = wall_ms();
        store::refresh(&self.db, &self.instance, now, now - DELETE_AFTER_MS).await?;
        for key in counter.over_leased() {
            self.trim(counter, &key).await?;
        }
        Ok(())
    }
}

/// The advisory lock a key's leases are changed under.
fn lock_name(key: &str) -> String {
    format!("streams:{key}")
}

impl StreamCounter {
    /// Keys whose lease is larger than what is open here.
    fn over_leased(&self) -> Vec<String> {
        self.locked()
            .iter()
            .filter(|(_, s)| s.leased > s.count)
            .map(|(k, _)| k.clone())
            .collect()
    }

    /// From now on this counter's caps hold across the instances of the
    /// cluster whose database is `db` (`instance` is this one's id).
    /// Returns the heartbeat task, which gives back the leases when
    /// `stop` is cancelled.
    pub fn lease_from(
        self: &std::sync::Arc<Self>,
        db: Db,
        instance: String,
        stop: tokio_util::sync::CancellationToken,
    ) -> tokio::task::JoinHandle<()> {
        let _ = self.leases.set(Leases { db, instance });
        let counter = self.clone();
        tokio::spawn(async move {
            let Some(leases) = counter.leases.get() else {
                return;
            };
            let mut ticks = tokio::time::interval(HEARTBEAT);
            ticks.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
            loop {
                tokio::select! {
                    _ = ticks.tick() => {
                        if let Err(e) = leases.beat(&counter).await {
                            tracing::warn!(error = %e, "refreshing this instance's stream leases failed");
                        }
                    }
                    _ = stop.cancelled() => break,
                }
            }
            if let Err(e) = store::forget(&leases.db, &leases.instance).await {
                tracing::warn!(error = %e, "giving back this instance's stream leases failed");
            }
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn small_caps_lease_one_slot_at_a_time_and_large_ones_a_64th_up_to_256() {
        assert_eq!(chunk(1), 1);
        assert_eq!(chunk(50), 1);
        assert_eq!(chunk(128), 2);
        assert_eq!(chunk(20_000), 256);
        assert_eq!(chunk(1_000_000), 256);
    }
}
