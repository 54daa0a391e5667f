//! What agent sessions may pile up over many requests: each request is
//! bounded on its own, but a session token used in a loop could fill the
//! database (calls and results), and a few other counts need a window
//! across sessions (playground sessions per user, failed identity checks
//! per account, sessions started per workflow).
//!
//! Counts in a window are `server::platform::windows`: in memory on
//! SQLite (a restart forgives, as for sign-ins), in the database on
//! PostgreSQL so the limits hold across instances; on the sessions'
//! injected clock so tests move time instead of sleeping. Totals are
//! columns of the session's row, written in the same transaction as the
//! call or result they count.

use crate::domain::limits::{
    bytes_in_words, IDV_FAILURES_PER_ACCOUNT_PER_HOUR, PLAYGROUND_SESSIONS_PER_HOUR,
};
use crate::error::ApiError;
use crate::server::platform::config::SessionBudget;
use crate::server::platform::db::Db;
use crate::server::platform::windows::{Admission, Key, Limit, Windows};
use crate::server::store::agent_sessions::SessionRow;
use crate::server::ServerError;

const MINUTE: i64 = 60;
const HOUR: i64 = 3_600;

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
    /// Plugin registrations and updates per session.
    plugin_updates: Windows,
}

/// `limit` as a 429 when `admission` is full.
fn refused(admission: Admission, limit: impl FnOnce() -> String) -> Result<(), ServerError> {
    match admission {
        Admission::Admitted => Ok(()),
        Admission::Full(retry_after_secs) => Err(ApiError::RateLimited {
            limit: limit(),
            retry_after_secs,
        }
        .into()),
    }
}

/// Counts one of `name`'s in `windows` at `now`; past `per_minute` in any
/// 60 s, nothing counted and 429 naming the limit ("`per_minute` `what`").
async fn per_minute_in(
    windows: &Windows,
    name: &str,
    now: i64,
    per_minute: usize,
    what: &str,
) -> Result<(), ServerError> {
    let admission = windows.admit(&[key(name, per_minute, MINUTE)], now).await?;
    refused(admission, || format!("{per_minute} {what}"))
}

/// `name` under at most `attempts` in `window_secs`.
fn key(name: impl Into<String>, attempts: usize, window_secs: i64) -> Key {
    Key {
        name: name.into(),
        limit: Limit {
            attempts,
            window_secs,
        },
    }
}

impl Budgets {
    /// The budgets of the instances on `db` (in memory on SQLite, in the
    /// database on PostgreSQL).
    pub fn for_db(db: &Db) -> Self {
        Self {
            writes: Windows::for_db(db, "writes/"),
            playground: Windows::for_db(db, "playground/"),
            idv_failures: Windows::for_db(db, "idv/"),
            starts: Windows::for_db(db, "starts/"),
            plugin_updates: Windows::for_db(db, "plugin-updates/"),
        }
    }

    /// Counts one write of `session` at `now`; 429 with `Retry-After` past
    /// `per_minute` in any 60 s, nothing counted.
    pub async fn admit_write(
        &self,
        session: &str,
        now: i64,
        per_minute: usize,
    ) -> Result<(), ServerError> {
        let what = "calls, results, state changes and turns per minute per session";
        per_minute_in(&self.writes, session, now, per_minute, what).await
    }

    /// Counts one plugin registration or update of `session` at `now`;
    /// 429 past `per_minute` (`PLUGIN_UPDATES_PER_MINUTE`) in any 60 s,
    /// nothing counted.
    pub async fn admit_plugin_update(
        &self,
        session: &str,
        now: i64,
        per_minute: usize,
    ) -> Result<(), ServerError> {
        let what = "plugin registrations or updates per minute per session";
        per_minute_in(&self.plugin_updates, session, now, per_minute, what).await
    }

    /// Forgets an ended session's windows.
    pub async fn forget_session(&self, session: &str) -> Result<(), ServerError> {
        self.writes.forget(session).await?;
        self.plugin_updates.forget(session).await
    }

    /// Sessions whose write window holds writes at `now` (ended ones'
    /// never do).
    pub async fn sessions_tracked(&self, now: i64) -> Result<usize, ServerError> {
        self.writes.tracked(now).await
    }

    /// Counts one playground session opened by user `user` at `now`; 429
    /// past [`PLAYGROUND_SESSIONS_PER_HOUR`] in any hour.
    pub async fn admit_playground(&self, user: i64, now: i64) -> Result<(), ServerError> {
        let k = key(user.to_string(), PLAYGROUND_SESSIONS_PER_HOUR, HOUR);
        let admission = self.playground.admit(&[k], now).await?;
        refused(admission, || {
            format!("{PLAYGROUND_SESSIONS_PER_HOUR} playground sessions per hour")
        })
    }

    /// Counts one session started in workflow `workflow` by a start
    /// trigger (a hook, a chat message, a call, a schedule or a manual
    /// start) at `now`; 429 past `per_minute` (`WORKFLOW_STARTS_PER_MINUTE`)
    /// in any 60 s, so a leaked hook URL cannot open sessions without bound.
    pub async fn admit_start(
        &self,
        workflow: &str,
        now: i64,
        per_minute: usize,
    ) -> Result<(), ServerError> {
        let what = "sessions started per minute per workflow";
        per_minute_in(&self.starts, workflow, now, per_minute, what).await
    }

    /// Whether identity checks for `account` are locked at `now`: it had
    /// [`IDV_FAILURES_PER_ACCOUNT_PER_HOUR`] failures in the last hour,
    /// from any session.
    pub async fn idv_locked(&self, account: &str, now: i64) -> Result<bool, ServerError> {
        let failures = self.idv_failures.count(&idv_key(account), now).await?;
        Ok(failures >= IDV_FAILURES_PER_ACCOUNT_PER_HOUR)
    }

    /// Counts a failed identity check for `account`.
    pub async fn idv_failed(&self, account: &str, now: i64) -> Result<(), ServerError> {
        self.idv_failures.note(&idv_key(account), now).await
    }
}

/// The window of `account`'s failed identity checks.
fn idv_key(account: &str) -> Key {
    key(account, IDV_FAILURES_PER_ACCOUNT_PER_HOUR, HOUR)
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

    #[tokio::test]
    async fn identity_checks_lock_per_account_after_the_hourly_failures() {
        let b = Budgets::default();
        for _ in 0..IDV_FAILURES_PER_ACCOUNT_PER_HOUR {
            assert!(!b.idv_locked("12345678", 1_000).await.unwrap());
            b.idv_failed("12345678", 1_000).await.unwrap();
        }
        assert!(b.idv_locked("12345678", 1_000).await.unwrap());
        assert!(
            !b.idv_locked("87654321", 1_000).await.unwrap(),
            "another account is free"
        );
        assert!(
            !b.idv_locked("12345678", 1_000 + HOUR).await.unwrap(),
            "an hour later"
        );
    }

    #[tokio::test]
    async fn a_session_past_its_writes_per_minute_is_told_when_to_come_back() {
        let b = Budgets::default();
        for t in 0..3 {
            b.admit_write("s", 100 + t, 3).await.unwrap();
        }
        let Err(ServerError::Api(ApiError::RateLimited {
            retry_after_secs, ..
        })) = b.admit_write("s", 110, 3).await
        else {
            panic!("the fourth write in a minute was let in");
        };
        assert_eq!(retry_after_secs, 50);
        b.forget_session("s").await.unwrap();
        assert!(b.admit_write("s", 111, 3).await.is_ok());
    }
}
