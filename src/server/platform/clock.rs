//! The clock sessions run on: lesson timing (elapsed, minutes remaining)
//! reads it, so tests can move time forward instead of sleeping.

use std::sync::atomic::{AtomicI64, Ordering};

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

    /// Moves this clock `seconds` ahead (tests: "ten minutes later").
    pub fn advance(&self, seconds: i64) {
        self.offset.fetch_add(seconds, Ordering::Relaxed);
    }
}
