//! When a tutor tool should fire: the seven trigger kinds and their
//! parameters.
//!
//! The condition is an enum whose variants carry their own parameters, so a
//! `keyword` trigger cannot exist without its keywords and a `turn_count`
//! cannot lack its minimum. It serialises as `{"type":"keyword","keywords":[…]}`.

use serde::de::{Deserializer, Error as _};
use serde::{Deserialize, Serialize};
use std::fmt;

/// Most keywords one trigger may list; more dilutes the instruction.
pub const MAX_KEYWORDS: usize = 20;
/// Longest keyword, in characters; a keyword is a topic, not a sentence.
pub const MAX_KEYWORD_CHARS: usize = 40;
/// Largest `minTurns`; a lesson conversation does not run longer.
pub const MAX_TURNS: u32 = 500;
/// The minute marks `time_remaining` may use (the session timer's alerts).
pub const MINUTE_MARKS: [u8; 4] = [1, 2, 3, 5];

/// The kind of a trigger, without its parameters: what a tool allows and
/// what a dropdown offers.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum TriggerKind {
    /// Whenever the model sees fit.
    Always,
    /// When the student mentions one of the keywords.
    Keyword,
    /// After a minimum number of turns.
    TurnCount,
    /// When about N minutes remain.
    TimeRemaining,
    /// When a listed lesson task is completed.
    TaskContext,
    /// When the student makes a mistake.
    ErrorDetected,
    /// When the session is ending.
    SessionEnding,
}

impl TriggerKind {
    /// Every kind, in the order menus list them.
    pub const ALL: [TriggerKind; 7] = [
        Self::Always,
        Self::Keyword,
        Self::TurnCount,
        Self::TimeRemaining,
        Self::TaskContext,
        Self::ErrorDetected,
        Self::SessionEnding,
    ];

    /// The wire spelling (`error_detected`).
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Always => "always",
            Self::Keyword => "keyword",
            Self::TurnCount => "turn_count",
            Self::TimeRemaining => "time_remaining",
            Self::TaskContext => "task_context",
            Self::ErrorDetected => "error_detected",
            Self::SessionEnding => "session_ending",
        }
    }

    /// Parses the wire spelling.
    pub fn parse(raw: &str) -> Option<Self> {
        Self::ALL.into_iter().find(|k| k.as_str() == raw)
    }

    /// How a teacher reads it in a dropdown.
    pub fn label(self) -> &'static str {
        match self {
            Self::Always => "Always available",
            Self::Keyword => "When topics are mentioned",
            Self::TurnCount => "After a number of turns",
            Self::TimeRemaining => "When time is running out",
            Self::TaskContext => "When a lesson task is done",
            Self::ErrorDetected => "When the student makes an error",
            Self::SessionEnding => "When the session ends",
        }
    }

    /// A condition of this kind with sensible starting parameters (keyword
    /// starts empty: the teacher has to say which topics).
    pub fn default_condition(self) -> TriggerCondition {
        match self {
            Self::Always => TriggerCondition::Always,
            Self::Keyword => TriggerCondition::Keyword {
                keywords: Vec::new(),
            },
            Self::TurnCount => TriggerCondition::TurnCount { min_turns: 5 },
            Self::TimeRemaining => TriggerCondition::TimeRemaining {
                minutes_remaining: 2,
            },
            Self::TaskContext => TriggerCondition::TaskContext,
            Self::ErrorDetected => TriggerCondition::ErrorDetected,
            Self::SessionEnding => TriggerCondition::SessionEnding,
        }
    }
}

impl fmt::Display for TriggerKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// When a tool should fire, with the parameters its kind needs.
///
/// Read with [`TriggerCondition`]'s own `Deserialize` (below), written by
/// the derived `Serialize`: the same JSON either way.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize)]
#[serde(
    tag = "type",
    rename_all = "snake_case",
    rename_all_fields = "camelCase"
)]
pub enum TriggerCondition {
    /// Whenever the model sees fit.
    Always,
    /// When the student mentions one of these topics.
    Keyword {
        /// Topics, as the teacher typed them.
        keywords: Vec<String>,
    },
    /// After at least this many turns.
    TurnCount {
        /// At least 1.
        min_turns: u32,
    },
    /// When about this many minutes remain.
    TimeRemaining {
        /// One of [`MINUTE_MARKS`].
        minutes_remaining: u8,
    },
    /// When a listed lesson task is completed.
    TaskContext,
    /// When the student makes a mistake.
    ErrorDetected,
    /// When the session is ending.
    SessionEnding,
}

/// Reads `{"type": …, <its parameter>}` in one pass. serde's derived
/// reader for an enum tagged inside its object buffers the whole object
/// first (its `Content` tree, to find the tag wherever it stands), which
/// the editor's browser bundle carried for this one type; here every
/// parameter a kind may take is read where it stands, and the kind then
/// takes its own. The same JSON is accepted, with one difference: a
/// parameter of another kind (`"keywords"` on a `turn_count`) must still
/// have its own type instead of being ignored unread.
impl<'de> Deserialize<'de> for TriggerCondition {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        /// The object as sent: the kind and the parameters present.
        #[derive(Deserialize)]
        #[serde(
            rename_all = "camelCase",
            expecting = "a trigger condition: an object with its \"type\""
        )]
        struct Wire {
            #[serde(rename = "type")]
            kind: TriggerKind,
            keywords: Option<Vec<String>>,
            min_turns: Option<u32>,
            minutes_remaining: Option<u8>,
        }
        let wire = Wire::deserialize(deserializer)?;
        let missing = D::Error::missing_field;
        Ok(match wire.kind {
            TriggerKind::Always => Self::Always,
            TriggerKind::Keyword => Self::Keyword {
                keywords: wire.keywords.ok_or_else(|| missing("keywords"))?,
            },
            TriggerKind::TurnCount => Self::TurnCount {
                min_turns: wire.min_turns.ok_or_else(|| missing("minTurns"))?,
            },
            TriggerKind::TimeRemaining => Self::TimeRemaining {
                minutes_remaining: wire
                    .minutes_remaining
                    .ok_or_else(|| missing("minutesRemaining"))?,
            },
            TriggerKind::TaskContext => Self::TaskContext,
            TriggerKind::ErrorDetected => Self::ErrorDetected,
            TriggerKind::SessionEnding => Self::SessionEnding,
        })
    }
}

impl TriggerCondition {
    /// The kind, without parameters.
    pub fn kind(&self) -> TriggerKind {
        match self {
            Self::Always => TriggerKind::Always,
            Self::Keyword { .. } => TriggerKind::Keyword,
            Self::TurnCount { .. } => TriggerKind::TurnCount,
            Self::TimeRemaining { .. } => TriggerKind::TimeRemaining,
            Self::TaskContext => TriggerKind::TaskContext,
            Self::ErrorDetected => TriggerKind::ErrorDetected,
            Self::SessionEnding => TriggerKind::SessionEnding,
        }
    }

    /// Checks the parameters; the error is the rule broken, in words, and
    /// the JSON field it is about.
    pub fn check(&self) -> Result<(), (&'static str, String)> {
        match self {
            Self::Keyword { keywords } => {
                if keywords.is_empty() {
                    return Err(("keywords", "needs at least one keyword".into()));
                }
                if keywords.len() > MAX_KEYWORDS {
                    return Err((
                        "keywords",
                        format!("may list at most {MAX_KEYWORDS} keywords"),
                    ));
                }
                if keywords.iter().any(|k| k.trim().is_empty()) {
                    return Err(("keywords", "keywords must not be blank".into()));
                }
                if let Some(long) = keywords
                    .iter()
                    .find(|k| k.trim().chars().count() > MAX_KEYWORD_CHARS)
                {
                    return Err((
                        "keywords",
                        format!("keyword \"{long}\" is longer than {MAX_KEYWORD_CHARS} characters"),
                    ));
                }
                let mut seen = std::collections::BTreeSet::new();
                if let Some(dup) = keywords
                    .iter()
                    .find(|k| !seen.insert(k.trim().to_lowercase()))
                {
                    return Err(("keywords", format!("keyword \"{dup}\" is listed twice")));
                }
                Ok(())
            }
            Self::TurnCount { min_turns } if *min_turns < 1 || *min_turns > MAX_TURNS => Err((
                "minTurns",
                format!("must be a whole number of turns, 1 to {MAX_TURNS}"),
            )),
            Self::TimeRemaining { minutes_remaining }
                if !MINUTE_MARKS.contains(minutes_remaining) =>
            {
                Err(("minutesRemaining", "must be 1, 2, 3 or 5".into()))
            }
            _ => Ok(()),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn conditions_serialise_in_the_tagged_camel_case_shape() {
        let cases = [
            (TriggerCondition::Always, json!({"type": "always"})),
            (
                TriggerCondition::Keyword {
                    keywords: vec!["hobby".into()],
                },
                json!({"type": "keyword", "keywords": ["hobby"]}),
            ),
            (
                TriggerCondition::TurnCount { min_turns: 3 },
                json!({"type": "turn_count", "minTurns": 3}),
            ),
            (
                TriggerCondition::TimeRemaining {
                    minutes_remaining: 5,
                },
                json!({"type": "time_remaining", "minutesRemaining": 5}),
            ),
            (
                TriggerCondition::TaskContext,
                json!({"type": "task_context"}),
            ),
            (
                TriggerCondition::ErrorDetected,
                json!({"type": "error_detected"}),
            ),
            (
                TriggerCondition::SessionEnding,
                json!({"type": "session_ending"}),
            ),
        ];
        for (condition, expected) in cases {
            assert_eq!(serde_json::to_value(&condition).unwrap(), expected);
            let back: TriggerCondition = serde_json::from_value(expected).unwrap();
            assert_eq!(back, condition);
        }
    }

    #[test]
    fn a_malformed_condition_is_refused_naming_what_is_wrong() {
        let read = |text: &str| serde_json::from_str::<TriggerCondition>(text);
        let refusal = |text: &str| read(text).unwrap_err().to_string();
        assert!(refusal(r#"{"type": "keyword"}"#).contains("missing field `keywords`"));
        assert!(refusal(r#"{"type": "turn_count", "minTurns": null}"#)
            .contains("missing field `minTurns`"));
        assert!(
            refusal(r#"{"type": "time_remaining"}"#).contains("missing field `minutesRemaining`")
        );
        assert!(refusal(r#"{"keywords": ["a"]}"#).contains("missing field `type`"));
        assert!(refusal(r#"{"type": "sometimes"}"#).contains("unknown variant `sometimes`"));
        assert!(refusal(r#"{"type": "turn_count", "minTurns": -1}"#).contains("invalid value"));
        assert!(refusal(r#"{"type": "always", "type": "always"}"#).contains("duplicate field"));
        assert!(refusal(r#""always""#).contains("expected a trigger condition"));
        // The tag may stand anywhere; unknown fields are ignored, as before.
        assert_eq!(
            read(r#"{"minTurns": 3, "note": {"x": [1]}, "type": "turn_count"}"#).unwrap(),
            TriggerCondition::TurnCount { min_turns: 3 }
        );
        assert_eq!(
            read(r#"{"type": "always", "minTurns": 3}"#).unwrap(),
            TriggerCondition::Always
        );
    }

    #[test]
    fn every_kind_round_trips_through_its_spelling_and_default() {
        for kind in TriggerKind::ALL {
            assert_eq!(TriggerKind::parse(kind.as_str()), Some(kind));
            assert_eq!(kind.default_condition().kind(), kind);
            assert!(!kind.label().is_empty());
        }
        assert_eq!(TriggerKind::parse("sometimes"), None);
    }

    #[test]
    fn a_keyword_trigger_needs_sensible_keywords() {
        let kw = |list: &[&str]| TriggerCondition::Keyword {
            keywords: list.iter().map(|s| s.to_string()).collect(),
        };
        assert!(kw(&["hobby", "family"]).check().is_ok());
        assert_eq!(kw(&[]).check().unwrap_err().1, "needs at least one keyword");
        assert_eq!(
            kw(&["  "]).check().unwrap_err().1,
            "keywords must not be blank"
        );
        assert!(kw(&[&"x".repeat(41)])
            .check()
            .unwrap_err()
            .1
            .contains("longer than 40"));
        assert!(kw(&["Hobby", "hobby "])
            .check()
            .unwrap_err()
            .1
            .contains("listed twice"));
        let many: Vec<String> = (0..21).map(|i| format!("k{i}")).collect();
        let many: Vec<&str> = many.iter().map(String::as_str).collect();
        assert!(kw(&many).check().unwrap_err().1.contains("at most 20"));
    }

    #[test]
    fn turn_counts_and_minute_marks_are_bounded() {
        assert!(TriggerCondition::TurnCount { min_turns: 1 }.check().is_ok());
        assert_eq!(
            TriggerCondition::TurnCount { min_turns: 0 }
                .check()
                .unwrap_err()
                .0,
            "minTurns"
        );
        for ok in MINUTE_MARKS {
            assert!(TriggerCondition::TimeRemaining {
                minutes_remaining: ok
            }
            .check()
            .is_ok());
        }
        for bad in [0, 4, 10] {
            let err = TriggerCondition::TimeRemaining {
                minutes_remaining: bad,
            }
            .check()
            .unwrap_err();
            assert_eq!(err, ("minutesRemaining", "must be 1, 2, 3 or 5".into()));
        }
    }
}
