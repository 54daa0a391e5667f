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
//! injected clock's seconds, so tests move time instead of sleeping. On
//! SQLite (one instance) kept in memory (a restart forgives), bounded by
//! `windows::MAX_TRACKED` keys and pruned on every sweep; on PostgreSQL
//! counted in the database, so a guesser spreading attempts over several
//! instances gets no more than from one.

use crate::domain::limits::{
    JOIN_GUESSES_PER_ADDRESS, JOIN_GUESS_WINDOW_SECS, LOGIN_ACCOUNT_ATTEMPTS,
    LOGIN_ACCOUNT_WINDOW_SECS, LOGIN_ADDRESS_ATTEMPTS, LOGIN_ADDRESS_WINDOW_SECS,
    LOGIN_PAIR_ATTEMPTS, LOGIN_PAIR_WINDOW_SECS,
};
use crate::server::platform::db::Db;
use crate::server::platform::windows::Windows;
pub use crate::server::platform::windows::{Admission, Key, Limit};
use crate::server::ServerError;
use std::net::IpAddr;

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

/// Recent attempts per key: in memory on SQLite, in the database on
/// PostgreSQL so every instance counts the same attempts
/// (`server::platform::windows`).
#[derive(Default)]
pub struct LoginThrottle {
    windows: Windows,
}

impl LoginThrottle {
    /// The throttle for the instances on `db`.
    pub fn for_db(db: &Db) -> Self {
        Self {
            windows: Windows::for_db(db, "signin/"),
        }
    }

    /// How long until an attempt under `keys` would be let in, if it
    /// would not be now; counts nothing. For doors that count only their
    /// failures with [`begin`](Self::begin) (a hook's wrong secret), so
    /// many right requests at once never fill a window.
    pub async fn wait(&self, keys: &[Key], now: i64) -> Result<Option<u64>, ServerError> {
        self.windows.wait(keys, now).await
    }

    /// Starts an attempt at `now`: counts it under every key, or, if any
    /// key is full, counts nothing and says the seconds until the fullest
    /// frees a slot.
    pub async fn begin(&self, keys: &[Key], now: i64) -> Result<Admission, ServerError> {
        self.windows.admit(keys, now).await
    }

    /// A right password: the account's attempts (from here and overall)
    /// are forgiven; the address keeps its count, less this attempt.
    pub async fn succeeded(&self, keys: &[Key], started: i64) -> Result<(), ServerError> {
        for key in keys {
            if key.name.starts_with("address:") {
                self.windows.forget_one(&key.name, started).await?;
            } else {
                self.windows.forget(&key.name).await?;
            }
        }
        Ok(())
    }

    /// An attempt the server could not decide (busy, a database error):
    /// it does not count against the caller.
    pub async fn undecided(&self, keys: &[Key], started: i64) -> Result<(), ServerError> {
        for key in keys {
            self.windows.forget_one(&key.name, started).await?;
        }
        Ok(())
    }

    /// Forgets keys whose attempts have all left their window (in memory;
    /// the database prunes its rows as it counts).
    pub fn prune(&self, now: i64) {
        self.windows.prune(now);
    }

    /// How many keys have attempts in their window.
    pub async fn tracked(&self, now: i64) -> Result<usize, ServerError> {
        self.windows.tracked(now).await
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn from(email: &str, ip: &str) -> Vec<Key> {
        keys(email, Some(ip.parse().unwrap()))
    }

    /// `begin`, as `Ok` or the seconds to wait.
    async fn begin(throttle: &LoginThrottle, keys: &[Key], now: i64) -> Result<(), u64> {
        match throttle.begin(keys, now).await.unwrap() {
            Admission::Admitted => Ok(()),
            Admission::Full(wait) => Err(wait),
        }
    }

    #[tokio::test]
    async fn the_sixth_attempt_from_one_address_waits_for_the_oldest_to_expire() {
        let throttle = LoginThrottle::default();
        let k = from("admin@example.com", "10.0.0.1");
        for n in 0..LOGIN_PAIR_ATTEMPTS as i64 {
            assert_eq!(begin(&throttle, &k, n * 60).await, Ok(()));
        }
        assert_eq!(begin(&throttle, &k, 5 * 60).await, Err(10 * 60));
        assert_eq!(begin(&throttle, &k, LOGIN_PAIR_WINDOW_SECS).await, Ok(()));
    }

    #[tokio::test]
    async fn attempts_count_when_they_start_so_a_burst_gets_only_the_limit() {
        let throttle = LoginThrottle::default();
        let k = from("admin@example.com", "10.0.0.1");
        let mut started = 0;
        for _ in 0..40 {
            started += usize::from(begin(&throttle, &k, 0).await.is_ok());
        }
        assert_eq!(started, LOGIN_PAIR_ATTEMPTS);
    }

    #[tokio::test]
    async fn a_locked_pair_does_not_lock_the_account_from_elsewhere() {
        let throttle = LoginThrottle::default();
        let stranger = from("admin@example.com", "10.0.0.1");
        // The stranger keeps at it for an hour, at the most the pair allows.
        for quarter in 0..4 {
            for _ in 0..LOGIN_PAIR_ATTEMPTS {
                assert!(
                    begin(&throttle, &stranger, quarter * LOGIN_PAIR_WINDOW_SECS)
                        .await
                        .is_ok()
                );
            }
            assert!(
                begin(&throttle, &stranger, quarter * LOGIN_PAIR_WINDOW_SECS)
                    .await
                    .is_err()
            );
        }
        let owner = from("admin@example.com", "192.0.2.8");
        assert_eq!(
            begin(&throttle, &owner, 4 * LOGIN_PAIR_WINDOW_SECS - 1).await,
            Ok(())
        );
    }

    #[tokio::test]
    async fn many_addresses_together_hit_the_slower_account_limit() {
        let throttle = LoginThrottle::default();
        for n in 0..LOGIN_ACCOUNT_ATTEMPTS {
            let k = from("admin@example.com", &format!("10.0.1.{n}"));
            assert!(begin(&throttle, &k, 0).await.is_ok());
        }
        let k = from("admin@example.com", "10.0.2.1");
        assert_eq!(
            begin(&throttle, &k, 60).await,
            Err(LOGIN_ACCOUNT_WINDOW_SECS as u64 - 60)
        );
    }

    #[tokio::test]
    async fn a_success_forgives_the_account_and_undecided_attempts_do_not_count() {
        let throttle = LoginThrottle::default();
        let k = from("admin@example.com", "10.0.0.1");
        for _ in 0..LOGIN_PAIR_ATTEMPTS - 1 {
            begin(&throttle, &k, 0).await.unwrap();
        }
        begin(&throttle, &k, 1).await.unwrap();
        throttle.succeeded(&k, 1).await.unwrap();
        for _ in 0..LOGIN_PAIR_ATTEMPTS {
            begin(&throttle, &k, 2).await.unwrap();
        }
        throttle.undecided(&k, 2).await.unwrap();
        assert_eq!(begin(&throttle, &k, 3).await, Ok(()));
        assert!(begin(&throttle, &k, 3).await.is_err());
    }

    #[tokio::test]
    async fn wrong_join_codes_lock_out_their_address_only_and_count_as_sign_ins_there() {
        let throttle = LoginThrottle::default();
        let guesser = join_keys(Some("10.0.0.1".parse().unwrap()));
        for _ in 0..JOIN_GUESSES_PER_ADDRESS {
            begin(&throttle, &guesser, 0).await.unwrap();
        }
        assert_eq!(
            begin(&throttle, &guesser, 60).await,
            Err(JOIN_GUESS_WINDOW_SECS as u64 - 60)
        );
        let other = join_keys(Some("10.0.0.2".parse().unwrap()));
        assert_eq!(begin(&throttle, &other, 60).await, Ok(()));
        // The guesses took slots of the address's sign-in limit too.
        let mut left = 0;
        for n in 0..LOGIN_ADDRESS_ATTEMPTS {
            let k = from(&format!("u{n}@x.io"), "10.0.0.1");
            left += usize::from(begin(&throttle, &k, 60).await.is_ok());
        }
        assert_eq!(left, LOGIN_ADDRESS_ATTEMPTS - JOIN_GUESSES_PER_ADDRESS);
    }

    #[tokio::test]
    async fn old_keys_are_pruned() {
        let throttle = LoginThrottle::default();
        begin(&throttle, &keys("a@x.io", None), 0).await.unwrap();
        assert_eq!(throttle.tracked(0).await.unwrap(), 1);
        throttle.prune(LOGIN_ACCOUNT_WINDOW_SECS);
        assert_eq!(
            throttle.tracked(LOGIN_ACCOUNT_WINDOW_SECS).await.unwrap(),
            0
        );
    }
}
