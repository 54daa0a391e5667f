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

use crate::error::ApiError;
use futures_util::future::BoxFuture;
use futures_util::FutureExt;
use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use tokio_util::sync::CancellationToken;

/// Open streams per key (`session:…`, `user:…`).
#[derive(Default)]
pub struct StreamCounter {
    open: Mutex<HashMap<String, Slot>>,
}

/// One key's open streams, and what ends them all.
struct Slot {
    count: usize,
    closer: CancellationToken,
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
    /// first cap that is full.
    pub fn acquire(self: &Arc<Self>, limits: &[(String, usize)]) -> Result<StreamPermit, ApiError> {
        let mut open = self.locked();
        if let Some((key, cap)) = limits
            .iter()
            .find(|(key, cap)| open.get(key).map_or(0, |s| s.count) >= *cap)
        {
            let what = key.split(':').next().unwrap_or("this");
            return Err(ApiError::TooManyStreams {
                limit: format!("{cap} open event streams per {what}"),
            });
        }
        let mut closers = Vec::with_capacity(limits.len());
        for (key, _) in limits {
            let slot = open.entry(key.clone()).or_insert_with(|| Slot {
                count: 0,
                closer: CancellationToken::new(),
            });
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

    /// How many keys have open streams (zero when nobody watches).
    pub fn keys(&self) -> usize {
        self.locked().len()
    }

    /// The keys with open streams that start with `prefix` (`user:`,
    /// `key:`): whose credentials a cluster instance checks again after
    /// it may have missed being told one ended.
    pub fn keys_starting(&self, prefix: &str) -> Vec<String> {
        self.locked()
            .keys()
            .filter(|k| k.starts_with(prefix))
            .cloned()
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
                if slot.count == 0 {
                    open.remove(key);
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_full_cap_refuses_and_a_dropped_permit_frees_its_slots() {
        let counter = Arc::new(StreamCounter::default());
        let limits = vec![("session:s".to_owned(), 2), ("user:1".to_owned(), 5)];
        let a = counter.acquire(&limits).unwrap();
        let _b = counter.acquire(&limits).unwrap();
        let err = counter.acquire(&limits).err().unwrap();
        assert_eq!(err.status(), 429);
        assert!(
            err.to_string().contains("2 open event streams per session"),
            "{err}"
        );
        assert_eq!(counter.open("user:1"), 2);
        drop(a);
        assert_eq!(counter.open("session:s"), 1);
        assert!(counter.acquire(&limits).is_ok());
    }

    #[tokio::test]
    async fn closing_a_key_ends_its_open_streams_and_not_later_ones() {
        let counter = Arc::new(StreamCounter::default());
        let mine = counter
            .acquire(&[("session:s".into(), 9), (user_key(1), 9)])
            .unwrap();
        let other = counter.acquire(&[(user_key(2), 9)]).unwrap();
        assert_eq!(counter.close(&user_key(1)), 1);
        tokio::time::timeout(std::time::Duration::from_secs(1), mine.closed())
            .await
            .expect("the closed key's stream ends");
        let later = counter.acquire(&[(user_key(1), 9)]).unwrap();
        for still_open in [other.closed(), later.closed()] {
            let waited =
                tokio::time::timeout(std::time::Duration::from_millis(50), still_open).await;
            assert!(waited.is_err(), "an unclosed stream stays open");
        }
        assert_eq!(counter.close("user:404"), 0);
    }
}
