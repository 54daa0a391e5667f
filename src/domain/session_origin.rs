//! Who or what opened a session: an API key, a signed-in user trying a
//! lesson, a workflow or a vibe (a *trial*, listed apart from real runs),
//! or a workflow's start trigger with a summary of what set it off.
//!
//! Kept with the session so the lesson's sessions page can list trials
//! apart, the runner can tell whose session it drives, and a watcher can
//! see why a session exists.

use serde::{Deserialize, Serialize};

/// Longest summary of a trigger's payload kept with a session.
pub const STARTED_BY_SUMMARY_MAX_CHARS: usize = 200;

/// What started a session: a start trigger's type and a summary of its
/// payload.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct StartedBy {
    /// The trigger type (`manual`, `webhook`, `chat_message`,
    /// `inbound_call`, `schedule`).
    pub trigger: String,
    /// What set it off, in a line (cut to [`STARTED_BY_SUMMARY_MAX_CHARS`]).
    pub summary: String,
}

impl StartedBy {
    /// A trigger's start with `summary`, cut to the limit.
    pub fn new(trigger: impl Into<String>, summary: &str) -> Self {
        let summary = if summary.chars().count() > STARTED_BY_SUMMARY_MAX_CHARS {
            let mut cut: String = summary
                .chars()
                .take(STARTED_BY_SUMMARY_MAX_CHARS - 1)
                .collect();
            cut.push('…');
            cut
        } else {
            summary.to_owned()
        };
        Self {
            trigger: trigger.into(),
            summary,
        }
    }
}

/// Who opens a session, as stored with it.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Opener {
    /// The API key that opened it.
    pub api_key: Option<i64>,
    /// The signed-in user who opened it (a trial or a manual start).
    pub user: Option<i64>,
    /// A user trying their configuration: listed apart from real runs.
    pub trial: bool,
    /// The start trigger that opened it.
    pub started_by: Option<StartedBy>,
}

impl Opener {
    /// A session opened with API key `id`.
    pub fn key(id: i64) -> Self {
        Self {
            api_key: Some(id),
            ..Self::default()
        }
    }

    /// A trial opened by signed-in user `user`.
    pub fn trial(user: i64) -> Self {
        Self {
            user: Some(user),
            trial: true,
            ..Self::default()
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_long_summary_is_cut_to_the_limit_and_says_so() {
        let s = StartedBy::new("webhook", &"x".repeat(500));
        assert_eq!(s.summary.chars().count(), STARTED_BY_SUMMARY_MAX_CHARS);
        assert!(s.summary.ends_with('…'));
        assert_eq!(StartedBy::new("manual", "by ann").summary, "by ann");
    }
}
