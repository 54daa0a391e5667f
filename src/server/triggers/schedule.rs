//! The `schedule` start trigger: a task started with the server looks
//! every [`TICK`] for workflows whose cron expression has come due and
//! opens one session per due time.
//!
//! At most once per due time, across restarts and several servers: each
//! workflow's *mark* (the last due time fired for, or when the schedule
//! was first seen) is kept in the database, and a due time is fired only
//! by the one caller whose compare-and-set moves the mark to it. After a
//! downtime only the latest missed due time fires (one catch-up session,
//! not one per missed time). Times come from the injected clock
//! (`state.clock`), so a test moves time instead of sleeping.

use super::start;
use crate::domain::session_origin::Opener;
use crate::domain::start_trigger::{ScheduleRules, SCHEDULE};
use crate::server::store::workflow_triggers as store;
use crate::server::{AppState, ServerError};
use croner::parser::{CronParser, Seconds};
use croner::Cron;
use jiff::tz::TimeZone;
use jiff::{Timestamp, Zoned};
use std::time::Duration;

/// How often the scheduler looks for due times (cron has minutes).
pub const TICK: Duration = Duration::from_secs(10);

/// A schedule's cron expression and time zone, parsed.
pub struct Parsed {
    cron: Cron,
    tz: TimeZone,
}

/// Parses `rules`: the cron expression (five fields, no seconds) and the
/// IANA time zone, each refused with words naming it.
pub fn parse(rules: &ScheduleRules) -> Result<Parsed, String> {
    let cron = CronParser::builder()
        .seconds(Seconds::Disallowed)
        .build()
        .parse(&rules.cron)
        .map_err(|e| format!("cron `{}`: {e}", rules.cron))?;
    let tz = TimeZone::get(&rules.timezone)
        .map_err(|e| format!("timezone `{}`: {e}", rules.timezone))?;
    Ok(Parsed { cron, tz })
}

impl Parsed {
    fn at(&self, t: i64) -> Option<Zoned> {
        Some(Timestamp::from_second(t).ok()?.to_zoned(self.tz.clone()))
    }

    /// The first due time after `t` (Unix seconds).
    pub fn next_after(&self, t: i64) -> Option<i64> {
        let next = self.cron.find_next_occurrence(&self.at(t)?, false).ok()?;
        Some(next.timestamp().as_second())
    }

    /// The latest due time after `mark` and at or before `now`: the one to
    /// fire now, if any (earlier ones missed meanwhile are not fired).
    pub fn due(&self, mark: i64, now: i64) -> Option<i64> {
        let latest = self
            .cron
            .find_previous_occurrence(&self.at(now)?, true)
            .ok()?
            .timestamp()
            .as_second();
        (latest > mark).then_some(latest)
    }

    /// `t` as the schedule's zone reads it, for the session's summary.
    pub fn local(&self, t: i64) -> String {
        self.at(t)
            .map(|z| z.strftime("%Y-%m-%d %H:%M %Z").to_string())
            .unwrap_or_default()
    }
}

/// Opens a session for every schedule due now that no one fired yet;
/// returns how many it opened. A workflow whose rules do not parse is
/// logged and skipped; one failing does not stop the others.
pub async fn fire_due(state: &AppState) -> Result<usize, ServerError> {
    let now = state.clock.now();
    let schedules: Vec<(String, ScheduleRules)> = {
        let rules = state.rules();
        rules
            .workflow_ids()
            .into_iter()
            .filter_map(|id| {
                let trigger = rules.definition(id)?.trigger.as_ref()?;
                (trigger.trigger_type_id == SCHEDULE).then_some(())?;
                Some((id.to_owned(), ScheduleRules::of(&trigger.filter_rules)?))
            })
            .collect()
    };
    let mut opened = 0;
    for (id, rules) in schedules {
        let parsed = match parse(&rules) {
            Ok(p) => p,
            Err(why) => {
                tracing::warn!(workflow = %id, %why, "schedule skipped");
                continue;
            }
        };
        let mark = store::schedule_mark(&state.db, &id, now).await?;
        let Some(due) = parsed.due(mark, now) else {
            continue;
        };
        if !store::claim_due(&state.db, &id, mark, due).await? {
            continue;
        }
        let opener = Opener {
            started_by: Some(rules.started_by(&parsed.local(due))),
            ..Opener::default()
        };
        match start(state, &id, &opener).await {
            Ok(_) => opened += 1,
            Err(e) => tracing::error!(workflow = %id, error = %e, "scheduled start failed"),
        }
    }
    Ok(opened)
}

/// The scheduler: [`fire_due`] every [`TICK`] (on one instance at a time,
/// in a cluster) until the task is dropped.
pub async fn run(state: AppState) {
    let mut tick = tokio::time::interval(TICK);
    tick.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
    loop {
        tick.tick().await;
        // One instance at a time looks (the marks already keep a due time
        // from firing twice; the lock saves the others the work).
        let looked = crate::server::cluster::once(
            &state,
            crate::server::cluster::Job::Scheduler,
            fire_due(&state),
        )
        .await;
        if let Err(e) = looked.and_then(|done| done.transpose()) {
            tracing::error!(error = %e, "the scheduler's look for due schedules failed");
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn rules(cron: &str, tz: &str) -> Parsed {
        parse(&ScheduleRules {
            cron: cron.into(),
            timezone: tz.into(),
        })
        .unwrap()
    }

    /// 2026-01-05 (a Monday) 08:30:00 UTC.
    const MONDAY_0830: i64 = 1_767_601_800;

    #[test]
    fn the_next_due_time_is_the_first_match_after_the_instant() {
        let r = rules("0 9 * * 1-5", "UTC");
        assert_eq!(r.next_after(MONDAY_0830), Some(MONDAY_0830 + 30 * 60));
        // At the due time itself, the next is a day later.
        assert_eq!(
            r.next_after(MONDAY_0830 + 30 * 60),
            Some(MONDAY_0830 + 30 * 60 + 86_400)
        );
    }

    #[test]
    fn a_time_zone_moves_the_due_time() {
        // 09:00 in New York is 14:00 UTC in January.
        let r = rules("0 9 * * *", "America/New_York");
        assert_eq!(
            r.next_after(MONDAY_0830),
            Some(MONDAY_0830 + 5 * 3600 + 30 * 60)
        );
        assert_eq!(
            r.local(MONDAY_0830 + 5 * 3600 + 30 * 60),
            "2026-01-05 09:00 EST"
        );
    }

    #[test]
    fn a_due_time_fires_once_and_only_after_the_mark() {
        let r = rules("0 * * * *", "UTC");
        let nine = MONDAY_0830 + 30 * 60;
        // Nothing due between the mark and now.
        assert_eq!(r.due(MONDAY_0830, MONDAY_0830 + 60), None);
        // Due at nine, fired: the mark moves to nine, and it is not due again.
        assert_eq!(r.due(MONDAY_0830, nine), Some(nine));
        assert_eq!(r.due(nine, nine + 59 * 60), None);
        assert_eq!(r.due(nine, nine + 3600), Some(nine + 3600));
    }

    #[test]
    fn after_a_downtime_only_the_latest_missed_due_time_fires() {
        let r = rules("*/5 * * * *", "UTC");
        let later = MONDAY_0830 + 3 * 3600 + 7 * 60;
        assert_eq!(
            r.due(MONDAY_0830, later),
            Some(MONDAY_0830 + 3 * 3600 + 5 * 60)
        );
    }

    #[test]
    fn bad_rules_are_refused_naming_the_part() {
        let bad = |cron: &str, tz: &str| {
            parse(&ScheduleRules {
                cron: cron.into(),
                timezone: tz.into(),
            })
            .err()
            .unwrap()
        };
        assert!(bad("61 * * * *", "UTC").starts_with("cron `61 * * * *`"));
        assert!(bad("0 0 * * * *", "UTC").starts_with("cron"));
        assert!(bad("0 9 * * *", "Mars/Olympus").starts_with("timezone `Mars/Olympus`"));
    }
}
