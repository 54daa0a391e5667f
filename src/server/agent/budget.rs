//! What agent sessions may pile up over many requests: each request is
//! bounded on its own, but a session token used in a loop could fill the
//! database (calls and results), and a few other counts need a window
//! across sessions (playground sessions per user, failed identity checks
//! per account).
//!
//! Counts in a window are kept in memory (a restart forgives, as for
//! sign-ins), on the sessions' injected clock so tests move time instead
//! of sleeping; totals are columns of the session's row, written in the
//! same transaction as the call or result they count.

use crate::domain::limits::{
    bytes_in_words, IDV_FAILURES_PER_ACCOUNT_PER_HOUR, PLAYGROUND_SESSIONS_PER_HOUR,
};
use crate::error::ApiError;
use crate::server::platform::config::SessionBudget;
use crate::server::store::agent_sessions::SessionRow;
use std::collections::{HashMap, VecDeque};
use std::sync::Mutex;

/// Most keys one set of windows remembers; past it, keys whose counts
/// have all left the window are dropped first, then the stalest.
const MAX_KEYS: usize = 100_000;
const MINUTE: i64 = 60;
const HOUR: i64 = 3_600;

/// Sliding windows of event times (Unix seconds) per key: "10 in an hour"
/// means exactly that, whatever the spacing (not a token bucket).
#[derive(Default)]
pub struct Windows {
    times: Mutex<HashMap<String, VecDeque<i64>>>,
}

impl Windows {
    fn locked(&self) -> std::sync::MutexGuard<'_, HashMap<String, VecDeque<i64>>> {
        self.times.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Counts one event for `key` at `now` if fewer than `max` happened in
    /// the last `span` seconds; otherwise `Err(seconds)` until the oldest
    /// leaves the window, and nothing is counted.
    pub fn admit(&self, key: &str, now: i64, span: i64, max: usize) -> Result<(), u64> {
        let mut times = self.locked();
        let window = current(&mut times, key, now, span);
        if window.len() >= max {
            let oldest = window.front().copied().unwrap_or(now);
            return Err((span - (now - oldest)).max(1) as u64);
        }
        window.push_back(now);
        Ok(())
    }

    /// How many events `key` had in the last `span` seconds.
    pub fn count(&self, key: &str, now: i64, span: i64) -> usize {
        self.locked()
            .get(key)
            .map_or(0, |w| w.iter().filter(|t| now - **t < span).count())
    }

    /// Counts one event for `key` at `now`, whatever the count.
    pub fn note(&self, key: &str, now: i64, span: i64) {
        current(&mut self.locked(), key, now, span).push_back(now);
    }

    /// Forgets `key` (its session ended).
    pub fn forget(&self, key: &str) {
        self.locked().remove(key);
    }

    /// How many keys are remembered.
    pub fn len(&self) -> usize {
        self.locked().len()
    }

    /// Whether no key is remembered.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

/// `key`'s window with the times older than `span` dropped, made room
/// for (by [`prune`]) when it is new and the map is full.
fn current<'a>(
    times: &'a mut HashMap<String, VecDeque<i64>>,
    key: &str,
    now: i64,
    span: i64,
) -> &'a mut VecDeque<i64> {
    if !times.contains_key(key) && times.len() >= MAX_KEYS {
        prune(times, now, span);
    }
    let window = times.entry(key.to_owned()).or_default();
    while window.front().is_some_and(|t| now - *t >= span) {
        window.pop_front();
    }
    window
}

/// Drops keys with nothing left in the window, then the stalest, until
/// there is room for one more.
fn prune(times: &mut HashMap<String, VecDeque<i64>>, now: i64, span: i64) {
    times.retain(|_, w| w.back().is_some_and(|t| now - *t < span));
    while times.len() >= MAX_KEYS {
        let Some(stalest) = times
            .iter()
            .min_by_key(|(_, w)| w.back().copied())
            .map(|(k, _)| k.clone())
        else {
            break;
        };
        times.remove(&stalest);
    }
}

/// The windows every session shares.
#[derive(Default)]
pub struct Budgets {
    /// Writes per session (calls, results, state changes, turns).
    writes: Windows,
    /// Playground sessions per signed-in user.
    playground: Windows,
    /// Failed identity checks per account number.
    idv_failures: Windows,
    /// Sessions a workflow's start triggers opened, per workflow.
    starts: Windows,
}

impl Budgets {
    /// Counts one write of `session` at `now`; 429 with `Retry-After` past
    /// `per_minute` in any 60 s, nothing counted.
    pub fn admit_write(&self, session: &str, now: i64, per_minute: usize) -> Result<(), ApiError> {
        self.writes
            .admit(session, now, MINUTE, per_minute)
            .map_err(|retry_after_secs| ApiError::RateLimited {
                limit: format!(
                    "{per_minute} calls, results, state changes and turns per minute per session"
                ),
                retry_after_secs,
            })
    }

    /// Forgets an ended session's window.
    pub fn forget_session(&self, session: &str) {
        self.writes.forget(session);
    }

    /// Sessions whose write window is remembered (ended ones are not).
    pub fn sessions_tracked(&self) -> usize {
        self.writes.len()
    }

    /// Counts one playground session opened by user `user` at `now`; 429
    /// past [`PLAYGROUND_SESSIONS_PER_HOUR`] in any hour.
    pub fn admit_playground(&self, user: i64, now: i64) -> Result<(), ApiError> {
        self.playground
            .admit(&user.to_string(), now, HOUR, PLAYGROUND_SESSIONS_PER_HOUR)
            .map_err(|retry_after_secs| ApiError::RateLimited {
                limit: format!("{PLAYGROUND_SESSIONS_PER_HOUR} playground sessions per hour"),
                retry_after_secs,
            })
    }

    /// Counts one session started in workflow `workflow` by a start
    /// trigger (a hook, a chat message, a call, a schedule or a manual
    /// start) at `now`; 429 past `per_minute` (`WORKFLOW_STARTS_PER_MINUTE`)
    /// in any 60 s, so a leaked hook URL cannot open sessions without bound.
    pub fn admit_start(&self, workflow: &str, now: i64, per_minute: usize) -> Result<(), ApiError> {
        self.starts
            .admit(workflow, now, MINUTE, per_minute)
            .map_err(|retry_after_secs| ApiError::RateLimited {
                limit: format!("{per_minute} sessions started per minute per workflow"),
                retry_after_secs,
            })
    }

    /// Whether identity checks for `account` are locked at `now`: it had
    /// [`IDV_FAILURES_PER_ACCOUNT_PER_HOUR`] failures in the last hour,
    /// from any session.
    pub fn idv_locked(&self, account: &str, now: i64) -> bool {
        self.idv_failures.count(account, now, HOUR) >= IDV_FAILURES_PER_ACCOUNT_PER_HOUR
    }

    /// Counts a failed identity check for `account`.
    pub fn idv_failed(&self, account: &str, now: i64) {
        self.idv_failures.note(account, now, HOUR);
    }
}

/// Refuses (429, nothing stored) a call that would take `row` past its
/// total budget: [`SessionBudget::calls_max`] calls, or
/// [`SessionBudget::stored_max_bytes`] with `bytes` more.
pub fn check_call(row: &SessionRow, budget: &SessionBudget, bytes: usize) -> Result<(), ApiError> {
    if row.calls_stored >= budget.calls_max as i64 {
        return Err(ApiError::BudgetSpent {
            limit: format!("{} tool calls per session", budget.calls_max),
        });
    }
    check_bytes(row, budget, bytes)
}

/// Refuses (429, nothing stored) a result of `bytes` that would take
/// `row` past [`SessionBudget::stored_max_bytes`].
pub fn check_bytes(row: &SessionRow, budget: &SessionBudget, bytes: usize) -> Result<(), ApiError> {
    if row.bytes_stored.saturating_add(bytes as i64) > budget.stored_max_bytes as i64 {
        return Err(ApiError::BudgetSpent {
            limit: format!(
                "{} of call arguments and results per session",
                bytes_in_words(budget.stored_max_bytes)
            ),
        });
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_window_admits_its_maximum_then_says_when_the_oldest_leaves() {
        let w = Windows::default();
        for t in 0..3 {
            assert!(w.admit("s", 100 + t, 60, 3).is_ok());
        }
        assert_eq!(w.admit("s", 110, 60, 3), Err(50));
        assert_eq!(w.count("s", 110, 60), 3, "a refusal is not counted");
        assert!(
            w.admit("s", 160, 60, 3).is_ok(),
            "the first left the window"
        );
    }

    #[test]
    fn keys_are_counted_apart_and_forgotten() {
        let w = Windows::default();
        assert!(w.admit("a", 0, 60, 1).is_ok());
        assert!(w.admit("b", 0, 60, 1).is_ok());
        assert!(w.admit("a", 1, 60, 1).is_err());
        w.forget("a");
        assert!(w.admit("a", 2, 60, 1).is_ok());
    }

    #[test]
    fn identity_checks_lock_per_account_after_the_hourly_failures() {
        let b = Budgets::default();
        for _ in 0..IDV_FAILURES_PER_ACCOUNT_PER_HOUR {
            assert!(!b.idv_locked("12345678", 1_000));
            b.idv_failed("12345678", 1_000);
        }
        assert!(b.idv_locked("12345678", 1_000));
        assert!(!b.idv_locked("87654321", 1_000), "another account is free");
        assert!(!b.idv_locked("12345678", 1_000 + HOUR), "an hour later");
    }

    #[test]
    fn a_full_window_prunes_keys_that_left_it() {
        let mut times: HashMap<String, VecDeque<i64>> = HashMap::new();
        times.insert("old".into(), VecDeque::from([0]));
        times.insert("new".into(), VecDeque::from([100]));
        prune(&mut times, 100, 60);
        assert!(times.contains_key("new") && !times.contains_key("old"));
    }
}
