//! How long session data is kept: the `DATA_RETENTION_DAYS` setting, the
//! cut-off a sweep purges before, when the daily sweep is due, and what a
//! sweep reports to admins.
//!
//! A school keeps what its tutor sessions recorded (calls, the student's
//! words, outcomes) for a school year by default and no longer; `0` or
//! `off` keeps everything, for installations whose own policy purges.
//! Review items are the student's, not the run's: a purge keeps them with
//! their session link cleared (`review_queue.session_id` is `SET NULL`).
//! Pure arithmetic here; the sweep itself is `server::retention`.

use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

/// A school year: what `DATA_RETENTION_DAYS` is when unset.
pub const DEFAULT_RETENTION_DAYS: u32 = 365;

/// The longest retention accepted (a century): more is a typo, and days
/// past it would take the cut-off before the epoch.
pub const RETENTION_MAX_DAYS: u32 = 36_500;

/// Seconds in a day (retention is counted in whole days of 86,400 s).
pub const DAY_SECS: i64 = 86_400;

/// How long after one sweep the next is due: daily.
pub const SWEEP_INTERVAL_SECS: i64 = DAY_SECS;

/// The retention in force.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Retention {
    /// Nothing is purged (`DATA_RETENTION_DAYS=0` or `off`).
    Off,
    /// Sessions are kept this many days after their last sign of life.
    Days(u32),
}

impl Default for Retention {
    fn default() -> Self {
        Retention::Days(DEFAULT_RETENTION_DAYS)
    }
}

impl Retention {
    /// Reads the setting's value: unset or empty is the default, `0` or
    /// `off` (any case) turns purging off, a whole number of days
    /// 1–[`RETENTION_MAX_DAYS`] sets it; anything else is refused with
    /// words naming the setting.
    pub fn parse(raw: Option<&str>) -> Result<Self, String> {
        let Some(raw) = raw.map(str::trim).filter(|r| !r.is_empty()) else {
            return Ok(Self::default());
        };
        if raw.eq_ignore_ascii_case("off") {
            return Ok(Retention::Off);
        }
        match raw.parse::<u32>() {
            Ok(0) => Ok(Retention::Off),
            Ok(days) if days <= RETENTION_MAX_DAYS => Ok(Retention::Days(days)),
            _ => Err(format!(
                "DATA_RETENTION_DAYS must be a number of days 1-{RETENTION_MAX_DAYS}, \
                 or 0 or off to keep everything, got {raw:?}"
            )),
        }
    }

    /// The days kept, or `None` when purging is off.
    pub fn days(self) -> Option<u32> {
        match self {
            Retention::Off => None,
            Retention::Days(days) => Some(days),
        }
    }

    /// The instant (Unix seconds) before which a session's data is purged
    /// at `now`: `now` less the retention's days. `None` when off.
    pub fn cutoff(self, now: i64) -> Option<i64> {
        self.days()
            .map(|days| now.saturating_sub(i64::from(days) * DAY_SECS))
    }
}

/// Whether the daily sweep is due at `now`, the last having run at
/// `last_ran_at` (never: due). A clock set back (a last run in the future)
/// waits until a day past it rather than sweeping on every tick.
pub fn sweep_due(last_ran_at: Option<i64>, now: i64) -> bool {
    last_ran_at.is_none_or(|last| now.saturating_sub(last) >= SWEEP_INTERVAL_SECS)
}

/// What started a sweep.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum SweepStarter {
    /// The daily task.
    Daily,
    /// An admin, `POST /api/retention/sweep`.
    Admin,
}

impl SweepStarter {
    /// The stored spelling.
    pub fn as_str(self) -> &'static str {
        match self {
            SweepStarter::Daily => "daily",
            SweepStarter::Admin => "admin",
        }
    }

    /// Reads the stored spelling (anything but `admin` is the task).
    pub fn parse(raw: &str) -> Self {
        if raw == "admin" {
            SweepStarter::Admin
        } else {
            SweepStarter::Daily
        }
    }
}

/// What one sweep did: when, with which cut-off, and the rows it removed
/// per table (`agent_sessions` is the sessions themselves).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct SweepReport {
    /// When it ran, Unix seconds (the server's clock).
    pub ran_at: i64,
    /// Sessions whose last sign of life was before this were purged.
    pub cutoff: i64,
    /// The retention it ran with.
    pub days: u32,
    /// The daily task or an admin.
    pub started_by: SweepStarter,
    /// Rows removed, by table.
    pub removed: BTreeMap<String, u64>,
    /// Review items of purged sessions, kept with their session cleared.
    pub review_items_kept: u64,
}

impl SweepReport {
    /// Sessions purged.
    pub fn sessions(&self) -> u64 {
        self.removed.get("agent_sessions").copied().unwrap_or(0)
    }
}

/// The retention as admins see it (`GET /api/retention`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct RetentionStatus {
    /// Whether anything is purged.
    pub enabled: bool,
    /// `DATA_RETENTION_DAYS`, `None` when off.
    pub days: Option<u32>,
    /// The cut-off a sweep now would use.
    pub cutoff: Option<i64>,
    /// When the daily sweep is next due (Unix seconds), when on.
    pub next_sweep_at: Option<i64>,
    /// The last sweep, if one ran.
    pub last_sweep: Option<SweepReport>,
}

/// Adds `more` to `total`, table by table.
pub fn add_counts(total: &mut BTreeMap<String, u64>, more: &BTreeMap<String, u64>) {
    for (table, rows) in more {
        *total.entry(table.clone()).or_default() += rows;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn unset_or_empty_keeps_a_school_year() {
        assert_eq!(Retention::parse(None), Ok(Retention::Days(365)));
        assert_eq!(Retention::parse(Some("  ")), Ok(Retention::Days(365)));
    }

    #[test]
    fn zero_or_off_keeps_everything() {
        for raw in ["0", "off", "OFF", " Off "] {
            assert_eq!(Retention::parse(Some(raw)), Ok(Retention::Off), "{raw}");
        }
        assert_eq!(Retention::Off.cutoff(1_000_000_000), None);
        assert_eq!(Retention::Off.days(), None);
    }

    #[test]
    fn a_number_of_days_is_taken_up_to_a_century() {
        assert_eq!(Retention::parse(Some("30")), Ok(Retention::Days(30)));
        assert_eq!(
            Retention::parse(Some("36500")),
            Ok(Retention::Days(RETENTION_MAX_DAYS))
        );
    }

    #[test]
    fn nonsense_is_refused_naming_the_setting() {
        for raw in ["-1", "a year", "1.5", "36501", "99999999999"] {
            let err = Retention::parse(Some(raw)).unwrap_err();
            assert!(err.contains("DATA_RETENTION_DAYS"), "{err}");
            assert!(err.contains(raw), "{err}");
        }
    }

    #[test]
    fn the_cutoff_is_now_less_whole_days() {
        let now = 1_767_601_800;
        assert_eq!(Retention::Days(1).cutoff(now), Some(now - 86_400));
        assert_eq!(Retention::Days(365).cutoff(now), Some(now - 365 * 86_400));
        assert_eq!(
            Retention::Days(RETENTION_MAX_DAYS).cutoff(i64::MIN + 1),
            Some(i64::MIN),
            "saturates instead of overflowing"
        );
    }

    #[test]
    fn the_sweep_is_due_once_a_day() {
        let now = 1_767_601_800;
        assert!(sweep_due(None, now));
        assert!(!sweep_due(Some(now), now));
        assert!(!sweep_due(Some(now - DAY_SECS + 1), now));
        assert!(sweep_due(Some(now - DAY_SECS), now));
        assert!(!sweep_due(Some(now + 3_600), now), "a clock set back waits");
    }

    #[test]
    fn counts_add_up_table_by_table() {
        let mut total = BTreeMap::from([("tool_calls".to_owned(), 2)]);
        add_counts(
            &mut total,
            &BTreeMap::from([("tool_calls".to_owned(), 3), ("todos".to_owned(), 1)]),
        );
        assert_eq!(total["tool_calls"], 5);
        assert_eq!(total["todos"], 1);
    }
}
