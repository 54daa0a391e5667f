//! Triggers evaluated while a lesson runs: the backend reports each turn,
//! and Switchboard answers with *nudges* — short instructions for the model
//! when an enabled tool's trigger fires (a keyword in the student's words,
//! the turn count reached, minutes remaining, the session ending).
//!
//! A model cannot see a clock or count turns reliably; this is what tells
//! it. Pure: the caller passes the time, so tests inject a clock. Each
//! nudge fires once per session (per keyword for keyword triggers).

use crate::domain::lesson::config::ToolConfig;
use crate::domain::lesson::prompt::{interpolate, minutes_phrase, situation_template};
use crate::domain::lesson::trigger::{TriggerCondition, TriggerKind};
use serde::{Deserialize, Serialize};

/// The last stretch of a lesson that counts as "the session is ending".
pub const SESSION_ENDING_SECONDS: i64 = 60;
/// Longest turn text a backend may report, in bytes (only keyword triggers
/// read it; it is not stored).
pub const TURN_TEXT_MAX_BYTES: usize = 16 * 1024;
/// Most nudges a session keeps for watchers (each fires once, so a session
/// rarely comes near it).
pub const MAX_KEPT_NUDGES: usize = 200;

/// Who spoke.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Speaker {
    /// The student.
    Student,
    /// The tutor model.
    Tutor,
}

impl Speaker {
    /// Parses `student` or `tutor`.
    pub fn parse(raw: &str) -> Option<Self> {
        match raw {
            "student" => Some(Self::Student),
            "tutor" => Some(Self::Tutor),
            _ => None,
        }
    }
}

/// One instruction for the model, and why it fired.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Nudge {
    /// The tool to call.
    pub tool: String,
    /// The trigger that fired.
    pub trigger: TriggerKind,
    /// What to tell the model.
    pub text: String,
    /// When it fired, Unix seconds.
    pub at: i64,
}

/// A session's turns so far and the nudges already given.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct TurnLog {
    /// Turns the student took.
    pub student: u32,
    /// Turns the tutor took.
    pub tutor: u32,
    /// Keys of the nudges already given (`tool:time`, `tool:kw:football`).
    #[serde(default)]
    pub fired: Vec<String>,
    /// The nudges given, oldest first (at most [`MAX_KEPT_NUDGES`]).
    #[serde(default)]
    pub nudges: Vec<Nudge>,
}

/// When a session started and how long it should run.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Timing {
    /// Opened, Unix seconds.
    pub started_at: i64,
    /// Planned length, if the lesson has one.
    pub planned_minutes: Option<u32>,
}

impl Timing {
    /// Seconds left at `now` (negative once overdue); `None` without a plan.
    pub fn remaining(&self, now: i64) -> Option<i64> {
        self.planned_minutes
            .map(|m| i64::from(m) * 60 - (now - self.started_at))
    }
}

/// Whether `keyword` occurs in `text` as whole words, ignoring case
/// ("art" is in "I love art." but not in "start").
pub fn mentions(text: &str, keyword: &str) -> bool {
    let keyword = keyword.trim().to_lowercase();
    if keyword.is_empty() {
        return false;
    }
    let text = text.to_lowercase();
    let mut from = 0;
    while let Some(pos) = text[from..].find(&keyword) {
        let start = from + pos;
        let end = start + keyword.len();
        let before = text[..start].chars().next_back();
        let after = text[end..].chars().next();
        if !before.is_some_and(char::is_alphanumeric) && !after.is_some_and(char::is_alphanumeric) {
            return true;
        }
        from = start + text[start..].chars().next().map_or(1, char::len_utf8);
    }
    false
}

/// Counts a turn by `speaker` saying `text`, then evaluates every tool in
/// `tools` (the session's enabled tutor tools) at `now`: returns the
/// nudges that fire now and keeps them in `log`.
pub fn evaluate(
    tools: &[ToolConfig],
    log: &mut TurnLog,
    speaker: Speaker,
    text: Option<&str>,
    timing: Timing,
    now: i64,
) -> Vec<Nudge> {
    match speaker {
        Speaker::Student => log.student = log.student.saturating_add(1),
        Speaker::Tutor => log.tutor = log.tutor.saturating_add(1),
    }
    let remaining = timing.remaining(now);
    let mut fresh = Vec::new();
    for tool in tools.iter().filter(|t| t.enabled) {
        let id = tool.tool_id.as_str();
        let fires: Vec<(String, Vec<(&str, String)>)> = match &tool.trigger_condition {
            TriggerCondition::Keyword { keywords } => match (speaker, text) {
                (Speaker::Student, Some(text)) => keywords
                    .iter()
                    .filter(|k| mentions(text, k))
                    .map(|k| {
                        (
                            format!("{id}:kw:{}", k.trim().to_lowercase()),
                            vec![("keyword", k.trim().to_owned())],
                        )
                    })
                    .collect(),
                _ => Vec::new(),
            },
            TriggerCondition::TurnCount { min_turns } if log.student >= *min_turns => {
                vec![(
                    format!("{id}:turns"),
                    vec![("minTurns", log.student.to_string())],
                )]
            }
            TriggerCondition::TimeRemaining { minutes_remaining }
                if remaining.is_some_and(|r| r <= i64::from(*minutes_remaining) * 60) =>
            {
                let left = remaining.unwrap_or_default().max(0);
                // Round up: with 1:30 left, "about 2 minutes".
                let minutes = ((left + 59) / 60).max(1) as u8;
                vec![(
                    format!("{id}:time"),
                    vec![("minutesRemaining", minutes_phrase(minutes))],
                )]
            }
            TriggerCondition::SessionEnding
                if remaining.is_some_and(|r| r <= SESSION_ENDING_SECONDS) =>
            {
                vec![(format!("{id}:ending"), Vec::new())]
            }
            _ => Vec::new(),
        };
        for (key, values) in fires {
            if log.fired.contains(&key) {
                continue;
            }
            let situation = interpolate(situation_template(tool.trigger_condition.kind()), &values);
            let mut text = format!("{situation}: call `{id}` now.");
            if let Some(extra) = tool.instructions() {
                text.push(' ');
                text.push_str(extra);
            }
            log.fired.push(key);
            fresh.push(Nudge {
                tool: id.to_owned(),
                trigger: tool.trigger_condition.kind(),
                text,
                at: now,
            });
        }
    }
    log.nudges.extend(fresh.iter().cloned());
    let over = log.nudges.len().saturating_sub(MAX_KEPT_NUDGES);
    log.nudges.drain(..over);
    fresh
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn tool(id: &str, trigger: TriggerCondition) -> ToolConfig {
        ToolConfig {
            tool_id: id.into(),
            enabled: true,
            trigger_condition: trigger,
            custom_instructions: None,
        }
    }

    fn lesson_tools() -> Vec<ToolConfig> {
        vec![
            tool(
                "update_user_profile",
                TriggerCondition::Keyword {
                    keywords: vec!["football".into(), "Art".into()],
                },
            ),
            tool("mark_for_review", TriggerCondition::ErrorDetected),
            tool(
                "show_session_summary",
                TriggerCondition::TimeRemaining {
                    minutes_remaining: 2,
                },
            ),
        ]
    }

    const TEN: Timing = Timing {
        started_at: 1_000,
        planned_minutes: Some(10),
    };

    #[test]
    fn the_time_nudge_fires_once_when_the_minutes_remaining_are_reached() {
        let tools = lesson_tools();
        let mut log = TurnLog::default();
        let at = |minute: i64| 1_000 + minute * 60;
        assert!(evaluate(&tools, &mut log, Speaker::Tutor, None, TEN, at(7)).is_empty());
        let nudges = evaluate(&tools, &mut log, Speaker::Student, None, TEN, at(8));
        assert_eq!(nudges.len(), 1);
        assert_eq!(
            nudges[0].text,
            "About 2 minutes remain: call `show_session_summary` now."
        );
        assert_eq!(nudges[0].trigger, TriggerKind::TimeRemaining);
        assert!(evaluate(&tools, &mut log, Speaker::Tutor, None, TEN, at(9)).is_empty());
        assert_eq!((log.student, log.tutor, log.nudges.len()), (1, 2, 1));
    }

    #[test]
    fn keywords_fire_on_whole_words_in_the_students_turns_once_each() {
        let tools = lesson_tools();
        let mut log = TurnLog::default();
        let fire = |log: &mut TurnLog, who, text| {
            evaluate(&tools, log, who, Some(text), TEN, 1_000)
                .into_iter()
                .map(|n| n.text)
                .collect::<Vec<_>>()
        };
        assert!(fire(&mut log, Speaker::Tutor, "Do you like football?").is_empty());
        assert!(fire(&mut log, Speaker::Student, "I start at nine").is_empty());
        assert_eq!(
            fire(
                &mut log,
                Speaker::Student,
                "I love FOOTBALL and modern art."
            ),
            [
                "The student mentioned football: call `update_user_profile` now.",
                "The student mentioned Art: call `update_user_profile` now."
            ]
        );
        assert!(fire(&mut log, Speaker::Student, "football again").is_empty());
    }

    #[test]
    fn turn_counts_and_session_ending_fire_with_the_teachers_instructions() {
        let mut profile = tool(
            "update_user_profile",
            TriggerCondition::TurnCount { min_turns: 3 },
        );
        profile.custom_instructions = Some("Ask about hobbies first.".into());
        let tools = vec![
            profile,
            tool("show_session_summary", TriggerCondition::SessionEnding),
        ];
        let mut log = TurnLog::default();
        for _ in 0..2 {
            assert!(evaluate(&tools, &mut log, Speaker::Student, None, TEN, 1_000).is_empty());
        }
        let third = evaluate(&tools, &mut log, Speaker::Student, None, TEN, 1_000);
        assert_eq!(
            third[0].text,
            "3 turns of conversation have passed: call `update_user_profile` now. Ask about hobbies first."
        );
        let ending = evaluate(
            &tools,
            &mut log,
            Speaker::Tutor,
            None,
            TEN,
            1_000 + 9 * 60 + 1,
        );
        assert_eq!(
            ending[0].text,
            "The session is ending: call `show_session_summary` now."
        );
        let none = Timing {
            planned_minutes: None,
            ..TEN
        };
        let mut fresh = TurnLog::default();
        assert!(evaluate(
            &tools[1..],
            &mut fresh,
            Speaker::Tutor,
            None,
            none,
            i64::MAX / 2
        )
        .is_empty());
    }

    #[test]
    fn mentions_handles_phrases_accents_and_edges() {
        assert!(mentions("Me gusta el fútbol.", "fútbol"));
        assert!(mentions("new york is big", "New York"));
        assert!(!mentions("fútbolista", "fútbol"));
        assert!(!mentions("anything", "  "));
        assert!(mentions("ártart art", "art"));
    }

    proptest! {
        /// Over any sequence of turns and times, each nudge fires at most
        /// once, turns are counted exactly, time nudges fire only once the
        /// minutes remaining are reached, and the log keeps what fired.
        #[test]
        fn nudges_fire_once_and_only_when_due(
            steps in prop::collection::vec((any::<bool>(), 0i64..900, prop::option::of("[a-z ]{0,30}")), 1..60),
            minutes in prop::sample::select(vec![1u8, 2, 3, 5]),
            turns in 1u32..20,
        ) {
            let tools = vec![
                tool("update_user_profile", TriggerCondition::TurnCount { min_turns: turns }),
                tool("show_session_summary", TriggerCondition::TimeRemaining { minutes_remaining: minutes }),
                tool("mark_task_complete", TriggerCondition::Keyword { keywords: vec!["abc".into()] }),
            ];
            let mut log = TurnLog::default();
            let mut now = TEN.started_at;
            let mut all = Vec::new();
            let (mut students, mut tutors) = (0, 0);
            for (student, wait, text) in steps {
                now += wait;
                let who = if student { students += 1; Speaker::Student } else { tutors += 1; Speaker::Tutor };
                for n in evaluate(&tools, &mut log, who, text.as_deref(), TEN, now) {
                    if n.trigger == TriggerKind::TimeRemaining {
                        prop_assert!(TEN.remaining(now).unwrap() <= i64::from(minutes) * 60);
                    }
                    if n.trigger == TriggerKind::TurnCount {
                        prop_assert!(log.student >= turns);
                    }
                    all.push(n);
                }
            }
            prop_assert_eq!((log.student, log.tutor), (students, tutors));
            let mut keys: Vec<&String> = log.fired.iter().collect();
            keys.sort();
            keys.dedup();
            prop_assert_eq!(keys.len(), log.fired.len());
            prop_assert_eq!(&log.nudges, &all);
            prop_assert!(all.len() <= 3);
            let due = TEN.remaining(now).unwrap() <= i64::from(minutes) * 60;
            prop_assert_eq!(all.iter().any(|n| n.trigger == TriggerKind::TimeRemaining), due);
            prop_assert_eq!(all.iter().any(|n| n.trigger == TriggerKind::TurnCount), students >= turns);
        }
    }
}
