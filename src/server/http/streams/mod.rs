//! Caps on open event streams: per agent session and per signed-in user, so
//! one client cannot hold thousands of connections (each with its buffers)
//! against one session or account. Over a cap → 429.
//!
//! A stream holds a [`StreamPermit`] for as long as it is open; dropping it
//! (the watcher left, the session ended, the server stopped) gives the slot
//! back. The same counter ends streams from outside: [`StreamCounter::close`]
//! ends every stream counted under a key at once (a disabled account's
//! `user:{id}`, which its cookie's streams and its API keys' streams all
//! count under), and every stream writer watches its permit's
//! [`StreamPermit::closed`], so no route has its own code for it.
//!
//! MCP sessions per credential are counted here too (`mcp-<endpoint>:…`
//! keys, [`crate::server::http::mcp_sessions`]), a permit per session.
//!
//! With several instances (PostgreSQL) the caps hold across all of them:
//! each instance opens streams only within the slots it leased in the
//! database for the key ([`lease`]), and leases more, under the key's
//! lock, when they run out.

pub mod lease;

use crate::error::ApiError;
use crate::server::ServerError;
use futures_util::future::BoxFuture;
use futures_util::FutureExt;
use std::collections::HashMap;
use std::sync::{Arc, Mutex, OnceLock};
use tokio_util::sync::CancellationToken;

/// Open streams per key (`session:…`, `user:…`, `key:…`; MCP sessions'
/// `mcp-…`).
#[derive(Default)]
pub struct StreamCounter {
    open: Mutex<HashMap<String, Slot>>,
    /// In a cluster, where this instance leases its slots.
    leases: OnceLock<lease::Leases>,
}

/// One key's open streams, and what ends them all.
struct Slot {
    count: usize,
    closer: CancellationToken,
    /// In a cluster, the slots this instance holds in the database for the
    /// key: its streams stay within them.
    leased: usize,
}

impl Slot {
    fn new() -> Self {
        Self {
            count: 0,
            closer: CancellationToken::new(),
            leased: 0,
        }
    }

    /// Whether the slot is worth keeping: streams open, or a lease to give
    /// back.
    fn held(&self) -> bool {
        self.count > 0 || self.leased > 0
    }
}

/// One open stream's slots; frees them when dropped.
pub struct StreamPermit {
    counter: Arc<StreamCounter>,
    keys: Vec<String>,
    closers: Vec<CancellationToken>,
}

/// The key an account's streams count under: the ones its cookie opens
/// and the ones its API keys open.
pub fn user_key(user_id: i64) -> String {
    format!("user:{user_id}")
}

/// The key an API key's own streams count under (they count under its
/// maker's [`user_key`] too).
pub fn api_key_key(key_id: i64) -> String {
    format!("key:{key_id}")
}

impl StreamCounter {
    fn locked(&self) -> std::sync::MutexGuard<'_, HashMap<String, Slot>> {
        self.open.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Takes a slot under every `(key, cap)`, or none and 429 naming the
    /// first cap that is full. In a cluster a key whose lease is used up
    /// leases more first ([`lease`]); 429 when the other instances hold the
    /// rest of its cap.
    pub async fn acquire(
        self: &Arc<Self>,
        limits: &[(String, usize)],
    ) -> Result<StreamPermit, ServerError> {
        let Some(leases) = self.leases.get() else {
            return self
                .take(limits, false)
                .map_err(|(key, cap)| full(&key, cap).into());
        };
        // A key's lease may be used up again by another stream between
        // leasing and taking; each round leases more, so a few suffice.
        for _ in 0..4 {
            let short = match self.take(limits, true) {
                Ok(permit) => return Ok(permit),
                Err(short) => short,
            };
            if !leases.grow(self, &short.0, short.1).await? {
                return Err(full(&short.0, short.1).into());
            }
        }
        Err(full(&limits[0].0, limits[0].1).into())
    }

    /// Takes a slot under every key if each has room — under its cap, or
    /// in a cluster within its lease — or names the first that has none.
    fn take(
        self: &Arc<Self>,
        limits: &[(String, usize)],
        leased: bool,
    ) -> Result<StreamPermit, (String, usize)> {
        let mut open = self.locked();
        let room = |slot: Option<&Slot>, cap: usize| {
            let (count, leased_slots) = slot.map_or((0, 0), |s| (s.count, s.leased));
            count < if leased { leased_slots.min(cap) } else { cap }
        };
        if let Some((key, cap)) = limits.iter().find(|(key, cap)| !room(open.get(key), *cap)) {
            return Err((key.clone(), *cap));
        }
        let mut closers = Vec::with_capacity(limits.len());
        for (key, _) in limits {
            let slot = open.entry(key.clone()).or_insert_with(Slot::new);
            slot.count += 1;
            closers.push(slot.closer.clone());
        }
        Ok(StreamPermit {
            counter: self.clone(),
            keys: limits.iter().map(|(k, _)| k.clone()).collect(),
            closers,
        })
    }

    /// Ends every stream open under `key` now (their writers see
    /// [`StreamPermit::closed`] and finish the response); streams opened
    /// later are not affected. Returns how many were open.
    pub fn close(&self, key: &str) -> usize {
        let mut open = self.locked();
        let Some(slot) = open.get_mut(key) else {
            return 0;
        };
        std::mem::take(&mut slot.closer).cancel();
        slot.count
    }

    /// Streams open under `key`.
    pub fn open(&self, key: &str) -> usize {
        self.locked().get(key).map_or(0, |s| s.count)
    }

    /// The keys with open streams that start with `prefix` (`user:`,
    /// `key:`): whose credentials a cluster instance checks again after
    /// it may have missed being told one ended.
    pub fn keys_starting(&self, prefix: &str) -> Vec<String> {
        self.locked()
            .iter()
            .filter(|(k, s)| s.count > 0 && k.starts_with(prefix))
            .map(|(k, _)| k.clone())
            .collect()
    }
}

impl StreamPermit {
    /// Resolves when the stream must end because one of its keys was
    /// closed ([`StreamCounter::close`]); owned, so a body can hold it.
    pub fn closed(&self) -> BoxFuture<'static, ()> {
        let closers = self.closers.clone();
        async move {
            if closers.is_empty() {
                return std::future::pending().await;
            }
            let waits = closers.into_iter().map(|c| Box::pin(c.cancelled_owned()));
            futures_util::future::select_all(waits).await;
        }
        .boxed()
    }
}

/// [`StreamPermit::closed`] of a stream that may hold no permit (then it
/// never resolves).
pub fn closed(permit: Option<&StreamPermit>) -> BoxFuture<'static, ()> {
    match permit {
        Some(permit) => permit.closed(),
        None => std::future::pending().boxed(),
    }
}

impl Drop for StreamPermit {
    fn drop(&mut self) {
        let mut open = self.counter.locked();
        for key in &self.keys {
            if let Some(slot) = open.get_mut(key) {
                slot.count -= 1;
                if !slot.held() {
                    open.remove(key);
                }
            }
        }
    }
}

/// The refusal of a full cap.
fn full(key: &str, cap: usize) -> ApiError {
    let what = key.split(':').next().unwrap_or("this");
    ApiError::TooManyStreams {
        limit: format!("{cap} open event streams per {what}"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn a_full_cap_refuses_and_a_dropped_permit_frees_its_slots() {
        let counter = Arc::new(StreamCounter::default());
        let limits = vec![("session:s".to_owned(), 2), ("user:1".to_owned(), 5)];
        let a = counter.acquire(&limits).await.unwrap();
        let _b = counter.acquire(&limits).await.unwrap();
        let err = counter.acquire(&limits).await.err().unwrap();
        let err = ApiError::from(err);
        assert_eq!(err.status(), 429);
        assert!(
            err.to_string().contains("2 open event streams per session"),
            "{err}"
        );
        assert_eq!(counter.open("user:1"), 2);
        drop(a);
        assert_eq!(counter.open("session:s"), 1);
        assert!(counter.acquire(&limits).await.is_ok());
    }

    #[tokio::test]
    async fn closing_a_key_ends_its_open_streams_and_not_later_ones() {
        let counter = Arc::new(StreamCounter::default());
        let mine = counter
            .acquire(&[("session:s".into(), 9), (user_key(1), 9)])
            .await
            .unwrap();
        let other = counter.acquire(&[(user_key(2), 9)]).await.unwrap();
        assert_eq!(counter.close(&user_key(1)), 1);
        tokio::time::timeout(std::time::Duration::from_secs(1), mine.closed())
            .await
            .expect("the closed key's stream ends");
        let later = counter.acquire(&[(user_key(1), 9)]).await.unwrap();
        for still_open in [other.closed(), later.closed()] {
            let waited =
                tokio::time::timeout(std::time::Duration::from_millis(50), still_open).await;
            assert!(waited.is_err(), "an unclosed stream stays open");
        }
        assert_eq!(counter.close("user:404"), 0);
    }
}
