//! The clock sessions run on: lesson timing (elapsed, minutes remaining)
//! and the deadlines of calls relayed to plugins read it, so tests can
//! move time forward instead of sleeping.

use std::sync::atomic::{AtomicI64, Ordering};

/// Now by the machine's clock, Unix milliseconds, with no test offset:
/// for times other instances compare (stream leases) and stamps.
pub fn wall_ms() -> i64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_millis() as i64)
}

/// Wall-clock time plus an offset only tests change.
#[derive(Debug, Default)]
pub struct Clock {
    offset: AtomicI64,
}

impl Clock {
    /// Now, Unix seconds.
    pub fn now(&self) -> i64 {
        crate::server::platform::db::now() + self.offset.load(Ordering::Relaxed)
    }

    /// Now, Unix milliseconds (deadlines of calls relayed to plugins).
    pub fn now_ms(&self) -> i64 {
        wall_ms() + self.offset.load(Ordering::Relaxed) * 1000
    }

    /// Moves this clock `seconds` ahead (tests: "ten minutes later").
    pub fn advance(&self, seconds: i64) {
        self.offset.fetch_add(seconds, Ordering::Relaxed);
    }
}
