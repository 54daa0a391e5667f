//! The event channel's health, for `/healthz`: whether the listener is
//! connected, how often it connected, and when it last heard anything.

use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::time::Instant;

/// The listener's connection and the last notification it got.
pub(super) struct Health {
    connected: AtomicBool,
    /// How many times the listener connected.
    connections: AtomicU64,
    started: Instant,
    /// Milliseconds after `started` of the last notification, plus one
    /// (0: none yet).
    heard: AtomicU64,
}

impl Default for Health {
    fn default() -> Self {
        Self {
            connected: AtomicBool::new(false),
            connections: AtomicU64::new(0),
            started: Instant::now(),
            heard: AtomicU64::new(0),
        }
    }
}

impl Health {
    /// Whether the listener is connected now.
    pub(super) fn connected(&self) -> bool {
        self.connected.load(Ordering::Relaxed)
    }

    /// The listener connected.
    pub(super) fn up(&self) {
        self.connected.store(true, Ordering::Relaxed);
        self.connections.fetch_add(1, Ordering::Relaxed);
    }

    /// Whether the listener connected more than once: what was notified
    /// in between is to be read from the tables.
    pub(super) fn reconnected(&self) -> bool {
        self.connections.load(Ordering::Relaxed) > 1
    }

    /// The listener lost its connection.
    pub(super) fn down(&self) {
        self.connected.store(false, Ordering::Relaxed);
    }

    /// A notification came.
    pub(super) fn heard(&self) {
        let ms = self.started.elapsed().as_millis() as u64;
        self.heard.store(ms + 1, Ordering::Relaxed);
    }

    /// `{"listening": …, "lastNotificationAgeMs": … | null}`.
    pub(super) fn report(&self) -> serde_json::Value {
        let heard = self.heard.load(Ordering::Relaxed);
        let age = (heard > 0)
            .then(|| (self.started.elapsed().as_millis() as u64).saturating_sub(heard - 1));
        serde_json::json!({
            "listening": self.connected.load(Ordering::Relaxed),
            "lastNotificationAgeMs": age,
        })
    }
}
