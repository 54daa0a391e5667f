//! Sign-in throttling, counted when an attempt starts: before the
//! (deliberately slow) password hash runs, the attempt takes a slot under
//! each of its keys — the account from this address, the account, the
//! address — or is refused with 429 and `Retry-After` if any of them is
//! full. The check and the taking are one step under one lock, so a burst
//! of concurrent guesses gets as many password checks as the tightest
//! limit allows and no more.
//!
//! The tight limit is per account *and* address, so a stranger guessing
//! `admin@example.com` from one address locks out only that address; the
//! account's own limit is slower and higher than one address can reach
//! (`domain::limits`). Sliding windows, not token buckets: "5 in 15
//! minutes" means exactly that, whatever the spacing. Times are the
//! injected clock's seconds, so tests move time instead of sleeping. Kept
//! in memory (a restart forgives), bounded by [`MAX_TRACKED`] keys and
//! pruned on every sweep.

use crate::domain::limits::{
    JOIN_GUESSES_PER_ADDRESS, JOIN_GUESS_WINDOW_SECS, LOGIN_ACCOUNT_ATTEMPTS,
    LOGIN_ACCOUNT_WINDOW_SECS, LOGIN_ADDRESS_ATTEMPTS, LOGIN_ADDRESS_WINDOW_SECS,
    LOGIN_PAIR_ATTEMPTS, LOGIN_PAIR_WINDOW_SECS,
};
use std::collections::{HashMap, VecDeque};
use std::net::IpAddr;
use std::sync::Mutex;

/// Most keys remembered; past it, keys whose attempts have all left their
/// window are dropped first, then the stalest.
pub const MAX_TRACKED: usize = 100_000;

/// Attempts allowed under one key within a sliding window.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Limit {
    /// Attempts allowed in the window.
    pub attempts: usize,
    /// The window, seconds.
    pub window_secs: i64,
}

/// One thing an attempt counts against, with its limit.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Key {
    name: String,
    limit: Limit,
}

/// The keys a sign-in attempt counts against: the account from this
/// address, the account, and the address (when known).
pub fn keys(email: &str, address: Option<IpAddr>) -> Vec<Key> {
    let key = |name: String, attempts, window_secs| Key {
        name,
        limit: Limit {
            attempts,
            window_secs,
        },
    };
    let mut keys = Vec::with_capacity(3);
    if let Some(ip) = address {
        keys.push(key(
            format!("pair:{email} {ip}"),
            LOGIN_PAIR_ATTEMPTS,
            LOGIN_PAIR_WINDOW_SECS,
        ));
    }
    keys.push(key(
        format!("account:{email}"),
        LOGIN_ACCOUNT_ATTEMPTS,
        LOGIN_ACCOUNT_WINDOW_SECS,
    ));
    if let Some(ip) = address {
        keys.push(key(
            format!("address:{ip}"),
            LOGIN_ADDRESS_ATTEMPTS,
            LOGIN_ADDRESS_WINDOW_SECS,
        ));
    }
    keys
}

/// The keys a wrong join code counts against (`POST /api/plugins/join`):
/// the join door from this address ([`JOIN_GUESSES_PER_ADDRESS`]) and the
/// address itself, shared with sign-ins, as a wrong password counts. No
/// key is shared by every caller, so one guesser locks out only itself.
pub fn join_keys(address: Option<IpAddr>) -> Vec<Key> {
    let door = Key {
        name: match address {
            Some(ip) => format!("join:{ip}"),
            None => "join:unknown".into(),
        },
        limit: Limit {
            attempts: JOIN_GUESSES_PER_ADDRESS,
            window_secs: JOIN_GUESS_WINDOW_SECS,
        },
    };
    let address = address.map(|ip| Key {
        name: format!("address:{ip}"),
        limit: Limit {
            attempts: LOGIN_ADDRESS_ATTEMPTS,
            window_secs: LOGIN_ADDRESS_WINDOW_SECS,
        },
    });
    std::iter::once(door).chain(address).collect()
}

/// Recent attempts per key: when each started (clock seconds) and the
/// longest window it counts in.
#[derive(Default)]
pub struct LoginThrottle {
    attempts: Mutex<HashMap<String, Entry>>,
}

#[derive(Default)]
struct Entry {
    window_secs: i64,
    started: VecDeque<i64>,
}

impl Entry {
    /// Drops attempts that have left the window.
    fn expire(&mut self, now: i64) {
        while self
            .started
            .front()
            .is_some_and(|t| now - *t >= self.window_secs)
        {
            self.started.pop_front();
        }
    }

    /// How long until an attempt fits under `limit`, if it does not now.
    fn wait(&self, limit: Limit, now: i64) -> Option<i64> {
        let recent = self.started.len();
        (recent >= limit.attempts).then(|| {
            let oldest_that_must_leave = self.started[recent - limit.attempts];
            (limit.window_secs - (now - oldest_that_must_leave)).max(1)
        })
    }
}

impl LoginThrottle {
    fn locked(&self) -> std::sync::MutexGuard<'_, HashMap<String, Entry>> {
        self.attempts.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// How long until an attempt under `keys` would be let in, if it
    /// would not be now; counts nothing. For doors that count only their
    /// failures with [`begin`](Self::begin) (a hook's wrong secret), so
    /// many right requests at once never fill a window.
    pub fn wait(&self, keys: &[Key], now: i64) -> Option<u64> {
        let mut attempts = self.locked();
        keys.iter()
            .filter_map(|key| {
                let entry = attempts.get_mut(&key.name)?;
                entry.expire(now);
                entry.wait(key.limit, now)
            })
            .max()
            .map(i64::unsigned_abs)
    }

    /// Starts an attempt at `now`: counts it under every key and returns
    /// `Ok`, or, if any key is full, counts nothing and returns the
    /// seconds until the fullest frees a slot.
    pub fn begin(&self, keys: &[Key], now: i64) -> Result<(), u64> {
        let mut attempts = self.locked();
        let wait = keys
            .iter()
            .filter_map(|key| {
                let entry = attempts.get_mut(&key.name)?;
                entry.expire(now);
                entry.wait(key.limit, now)
            })
            .max();
        if let Some(wait) = wait {
            return Err(wait.unsigned_abs());
        }
        make_room(&mut attempts, keys.len(), now);
        for key in keys {
            let entry = attempts.entry(key.name.clone()).or_default();
            entry.window_secs = key.limit.window_secs;
            entry.started.push_back(now);
            // Never more than the limit is needed to answer `wait`.
            while entry.started.len() > key.limit.attempts {
                entry.started.pop_front();
            }
        }
        Ok(())
    }

    /// A right password: the account's attempts (from here and overall)
    /// are forgiven; the address keeps its count, less this attempt.
    pub fn succeeded(&self, keys: &[Key], started: i64) {
        let mut attempts = self.locked();
        for key in keys {
            if key.name.starts_with("address:") {
                forget_one(&mut attempts, &key.name, started);
            } else {
                attempts.remove(&key.name);
            }
        }
    }

    /// An attempt the server could not decide (busy, a database error):
    /// it does not count against the caller.
    pub fn undecided(&self, keys: &[Key], started: i64) {
        let mut attempts = self.locked();
        for key in keys {
            forget_one(&mut attempts, &key.name, started);
        }
    }

    /// Forgets keys whose attempts have all left their window.
    pub fn prune(&self, now: i64) {
        self.locked().retain(|_, entry| {
            entry.expire(now);
            !entry.started.is_empty()
        });
    }

    /// How many keys are remembered.
    pub fn tracked(&self) -> usize {
        self.locked().len()
    }
}

/// Removes one attempt started at `started` from `name`'s.
fn forget_one(attempts: &mut HashMap<String, Entry>, name: &str, started: i64) {
    if let Some(entry) = attempts.get_mut(name) {
        if let Some(at) = entry.started.iter().rposition(|t| *t == started) {
            entry.started.remove(at);
        }
        if entry.started.is_empty() {
            attempts.remove(name);
        }
    }
}

/// Keeps the map under [`MAX_TRACKED`] with room for `adding` keys:
/// expired keys go first, then the stalest.
fn make_room(attempts: &mut HashMap<String, Entry>, adding: usize, now: i64) {
    if attempts.len() + adding <= MAX_TRACKED {
        return;
    }
    attempts.retain(|_, entry| {
        entry.expire(now);
        !entry.started.is_empty()
    });
    while attempts.len() + adding > MAX_TRACKED {
        let Some(stalest) = attempts
            .iter()
            .min_by_key(|(_, entry)| entry.started.back().copied())
            .map(|(k, _)| k.clone())
        else {
            break;
        };
        attempts.remove(&stalest);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn from(email: &str, ip: &str) -> Vec<Key> {
        keys(email, Some(ip.parse().unwrap()))
    }

    #[test]
    fn the_sixth_attempt_from_one_address_waits_for_the_oldest_to_expire() {
        let throttle = LoginThrottle::default();
        let k = from("admin@example.com", "10.0.0.1");
        for n in 0..LOGIN_PAIR_ATTEMPTS as i64 {
            assert_eq!(throttle.begin(&k, n * 60), Ok(()));
        }
        assert_eq!(throttle.begin(&k, 5 * 60), Err(10 * 60));
        assert_eq!(throttle.begin(&k, LOGIN_PAIR_WINDOW_SECS), Ok(()));
    }

    #[test]
    fn attempts_count_when_they_start_so_a_burst_gets_only_the_limit() {
        let throttle = LoginThrottle::default();
        let k = from("admin@example.com", "10.0.0.1");
        let started = (0..40).filter(|_| throttle.begin(&k, 0).is_ok()).count();
        assert_eq!(started, LOGIN_PAIR_ATTEMPTS);
    }

    #[test]
    fn a_locked_pair_does_not_lock_the_account_from_elsewhere() {
        let throttle = LoginThrottle::default();
        let stranger = from("admin@example.com", "10.0.0.1");
        // The stranger keeps at it for an hour, at the most the pair allows.
        for quarter in 0..4 {
            for _ in 0..LOGIN_PAIR_ATTEMPTS {
                assert!(throttle
                    .begin(&stranger, quarter * LOGIN_PAIR_WINDOW_SECS)
                    .is_ok());
            }
            assert!(throttle
                .begin(&stranger, quarter * LOGIN_PAIR_WINDOW_SECS)
                .is_err());
        }
        let owner = from("admin@example.com", "192.0.2.8");
        assert_eq!(
            throttle.begin(&owner, 4 * LOGIN_PAIR_WINDOW_SECS - 1),
            Ok(())
        );
    }

    #[test]
    fn many_addresses_together_hit_the_slower_account_limit() {
        let throttle = LoginThrottle::default();
        for n in 0..LOGIN_ACCOUNT_ATTEMPTS {
            let k = from("admin@example.com", &format!("10.0.1.{n}"));
            assert!(throttle.begin(&k, 0).is_ok());
        }
        let k = from("admin@example.com", "10.0.2.1");
        assert_eq!(
            throttle.begin(&k, 60),
            Err(LOGIN_ACCOUNT_WINDOW_SECS as u64 - 60)
        );
    }

    #[test]
    fn a_success_forgives_the_account_and_undecided_attempts_do_not_count() {
        let throttle = LoginThrottle::default();
        let k = from("admin@example.com", "10.0.0.1");
        for _ in 0..LOGIN_PAIR_ATTEMPTS - 1 {
            throttle.begin(&k, 0).unwrap();
        }
        throttle.begin(&k, 1).unwrap();
        throttle.succeeded(&k, 1);
        for _ in 0..LOGIN_PAIR_ATTEMPTS {
            throttle.begin(&k, 2).unwrap();
        }
        throttle.undecided(&k, 2);
        assert_eq!(throttle.begin(&k, 3), Ok(()));
        assert!(throttle.begin(&k, 3).is_err());
    }

    #[test]
    fn wrong_join_codes_lock_out_their_address_only_and_count_as_sign_ins_there() {
        let throttle = LoginThrottle::default();
        let guesser = join_keys(Some("10.0.0.1".parse().unwrap()));
        for _ in 0..JOIN_GUESSES_PER_ADDRESS {
            throttle.begin(&guesser, 0).unwrap();
        }
        assert_eq!(
            throttle.begin(&guesser, 60),
            Err(JOIN_GUESS_WINDOW_SECS as u64 - 60)
        );
        let other = join_keys(Some("10.0.0.2".parse().unwrap()));
        assert_eq!(throttle.begin(&other, 60), Ok(()));
        // The guesses took slots of the address's sign-in limit too.
        let left = (0..LOGIN_ADDRESS_ATTEMPTS)
            .filter(|n| {
                throttle
                    .begin(&from(&format!("u{n}@x.io"), "10.0.0.1"), 60)
                    .is_ok()
            })
            .count();
        assert_eq!(left, LOGIN_ADDRESS_ATTEMPTS - JOIN_GUESSES_PER_ADDRESS);
    }

    #[test]
    fn memory_stays_bounded_and_old_keys_are_pruned() {
        let throttle = LoginThrottle::default();
        throttle.begin(&keys("a@x.io", None), 0).unwrap();
        throttle.prune(LOGIN_ACCOUNT_WINDOW_SECS);
        assert_eq!(throttle.tracked(), 0);
        let k = from("admin@example.com", "10.0.0.1");
        for n in 0..100 {
            let _ = throttle.begin(&k, n * LOGIN_PAIR_WINDOW_SECS);
        }
        assert!(throttle
            .locked()
            .values()
            .all(|e| e.started.len() <= LOGIN_ACCOUNT_ATTEMPTS));
    }
}
