//! Caps on open event streams: per agent session and per signed-in user, so
//! one client cannot hold thousands of connections (each with its buffers)
//! against one session or account. Over a cap → 429.
//!
//! A stream holds a [`StreamPermit`] for as long as it is open; dropping it
//! (the watcher left, the session ended, the server stopped) gives the slot
//! back.

use crate::error::ApiError;
use std::collections::HashMap;
use std::sync::{Arc, Mutex};

/// Open streams per key (`session:…`, `user:…`).
#[derive(Default)]
pub struct StreamCounter {
    open: Mutex<HashMap<String, usize>>,
}

/// One open stream's slots; frees them when dropped.
pub struct StreamPermit {
    counter: Arc<StreamCounter>,
    keys: Vec<String>,
}

impl StreamCounter {
    fn locked(&self) -> std::sync::MutexGuard<'_, HashMap<String, usize>> {
        self.open.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Takes a slot under every `(key, cap)`, or none and 429 naming the
    /// first cap that is full.
    pub fn acquire(self: &Arc<Self>, limits: &[(String, usize)]) -> Result<StreamPermit, ApiError> {
        let mut open = self.locked();
        if let Some((key, cap)) = limits
            .iter()
            .find(|(key, cap)| open.get(key).copied().unwrap_or(0) >= *cap)
        {
            let what = key.split(':').next().unwrap_or("this");
            return Err(ApiError::TooManyStreams {
                limit: format!("{cap} open event streams per {what}"),
            });
        }
        for (key, _) in limits {
            *open.entry(key.clone()).or_default() += 1;
        }
        Ok(StreamPermit {
            counter: self.clone(),
            keys: limits.iter().map(|(k, _)| k.clone()).collect(),
        })
    }

    /// Streams open under `key`.
    pub fn open(&self, key: &str) -> usize {
        self.locked().get(key).copied().unwrap_or(0)
    }

    /// How many keys have open streams (zero when nobody watches).
    pub fn keys(&self) -> usize {
        self.locked().len()
    }
}

impl Drop for StreamPermit {
    fn drop(&mut self) {
        let mut open = self.counter.locked();
        for key in &self.keys {
            if let Some(n) = open.get_mut(key) {
                *n -= 1;
                if *n == 0 {
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
}
