//! Sign-in throttling: after [`MAX_FAILURES`] wrong passwords within
//! [`WINDOW`] for one account, or from one client address, further attempts
//! are refused with 429 and `Retry-After` until the oldest failure leaves the
//! window — without running the (deliberately slow) password hash.
//!
//! A sliding window, not a token bucket: "5 in 15 minutes" means exactly
//! that, whatever the spacing. Kept in memory (a restart forgives), bounded
//! by [`MAX_TRACKED`] keys and pruned on every sweep.

use std::collections::{HashMap, VecDeque};
use std::net::IpAddr;
use std::sync::Mutex;
use std::time::{Duration, Instant};

/// Failed sign-ins allowed per account and per address within [`WINDOW`].
pub const MAX_FAILURES: usize = 5;
/// How far back failures count.
pub const WINDOW: Duration = Duration::from_secs(15 * 60);
/// Most keys remembered; past it, keys whose failures have all left the
/// window are dropped first, then the stalest.
pub const MAX_TRACKED: usize = 100_000;

/// Recent failures per key (`account:…`, `address:…`).
#[derive(Default)]
pub struct LoginThrottle {
    failures: Mutex<HashMap<String, VecDeque<Instant>>>,
}

/// The keys a sign-in attempt counts against.
pub fn keys(email: &str, address: Option<IpAddr>) -> Vec<String> {
    let mut keys = vec![format!("account:{email}")];
    if let Some(ip) = address {
        keys.push(format!("address:{ip}"));
    }
    keys
}

impl LoginThrottle {
    fn locked(&self) -> std::sync::MutexGuard<'_, HashMap<String, VecDeque<Instant>>> {
        self.failures.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// How long to wait if any of `keys` already has [`MAX_FAILURES`]
    /// failures in the window; `None` if the attempt may go ahead.
    pub fn retry_after(&self, keys: &[String], now: Instant) -> Option<Duration> {
        let failures = self.locked();
        keys.iter()
            .filter_map(|k| failures.get(k))
            .filter_map(|times| {
                let recent: Vec<&Instant> = times
                    .iter()
                    .filter(|t| now.duration_since(**t) < WINDOW)
                    .collect();
                (recent.len() >= MAX_FAILURES)
                    .then(|| WINDOW.saturating_sub(now.duration_since(*recent[0])))
            })
            .max()
    }

    /// Counts a wrong password against every key.
    pub fn failed(&self, keys: &[String], now: Instant) {
        let mut failures = self.locked();
        if failures.len() >= MAX_TRACKED {
            failures.retain(|_, times| {
                times
                    .back()
                    .is_some_and(|t| now.duration_since(*t) < WINDOW)
            });
            while failures.len() >= MAX_TRACKED {
                let Some(stalest) = failures
                    .iter()
                    .min_by_key(|(_, times)| times.back().copied())
                    .map(|(k, _)| k.clone())
                else {
                    break;
                };
                failures.remove(&stalest);
            }
        }
        for key in keys {
            let times = failures.entry(key.clone()).or_default();
            while times
                .front()
                .is_some_and(|t| now.duration_since(*t) >= WINDOW)
            {
                times.pop_front();
            }
            times.push_back(now);
            if times.len() > MAX_FAILURES {
                times.pop_front();
            }
        }
    }

    /// A right password forgives the account's and the address's failures.
    pub fn succeeded(&self, keys: &[String]) {
        let mut failures = self.locked();
        for key in keys {
            failures.remove(key);
        }
    }

    /// Forgets keys whose failures have all left the window.
    pub fn prune(&self, now: Instant) {
        self.locked().retain(|_, times| {
            times
                .back()
                .is_some_and(|t| now.duration_since(*t) < WINDOW)
        });
    }

    /// How many keys are remembered.
    pub fn tracked(&self) -> usize {
        self.locked().len()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn k() -> Vec<String> {
        keys("admin@example.com", Some("10.0.0.1".parse().unwrap()))
    }

    #[test]
    fn the_sixth_attempt_in_the_window_waits_for_the_oldest_failure_to_expire() {
        let throttle = LoginThrottle::default();
        let start = Instant::now();
        for n in 0..MAX_FAILURES {
            assert_eq!(throttle.retry_after(&k(), start), None);
            throttle.failed(&k(), start + Duration::from_secs(n as u64 * 60));
        }
        let now = start + Duration::from_secs(5 * 60);
        assert_eq!(
            throttle.retry_after(&k(), now),
            Some(Duration::from_secs(10 * 60))
        );
        assert_eq!(throttle.retry_after(&k(), start + WINDOW), None);
    }

    #[test]
    fn a_success_forgives_and_other_accounts_elsewhere_are_unaffected() {
        let throttle = LoginThrottle::default();
        let now = Instant::now();
        for _ in 0..MAX_FAILURES {
            throttle.failed(&k(), now);
        }
        let elsewhere = keys("teacher@example.com", Some("10.0.0.2".parse().unwrap()));
        assert_eq!(throttle.retry_after(&elsewhere, now), None);
        // Same address, other account: the address is throttled too.
        let same_address = keys("teacher@example.com", Some("10.0.0.1".parse().unwrap()));
        assert!(throttle.retry_after(&same_address, now).is_some());
        throttle.succeeded(&k());
        assert_eq!(throttle.retry_after(&k(), now), None);
    }

    #[test]
    fn memory_stays_bounded_and_old_keys_are_pruned() {
        let throttle = LoginThrottle::default();
        let now = Instant::now();
        throttle.failed(&keys("a@x.io", None), now);
        throttle.prune(now + WINDOW);
        assert_eq!(throttle.tracked(), 0);
        for _ in 0..20 {
            throttle.failed(&k(), now);
        }
        assert!(throttle.locked().values().all(|t| t.len() <= MAX_FAILURES));
    }
}
