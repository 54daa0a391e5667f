//! Lessons and their tutor-tool configuration: the teacher's side of
//! Switchboard.
//!
//! A lesson keeps three things apart — the teacher's free-form conversation
//! prompt, the structured tool configuration, and the system's trigger
//! templates — and `prompt::build` assembles them at run time.

pub mod config;
mod inline;
mod normalise;
pub mod nudge;
pub mod optimise;
pub mod outcome;
pub mod prompt;
pub mod record;
pub mod review;
pub mod run_report;
pub mod tools;
pub mod trigger;

use crate::domain::error::FieldError;
use serde::{Deserialize, Serialize};
use std::fmt;

/// Longest lesson title, in characters.
pub const MAX_TITLE_CHARS: usize = 120;
/// Longest conversation prompt, in characters (about 5,000 tokens).
pub const MAX_PROMPT_CHARS: usize = 20_000;
/// Most tasks (objectives) one lesson may list.
pub const MAX_TASKS: usize = 20;
/// Longest task text, in characters.
pub const MAX_TASK_CHARS: usize = 300;
/// Longest lesson, in minutes.
pub const MAX_DURATION_MINUTES: u32 = 180;

/// One lesson objective; the model reports it done by its id.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct LessonTask {
    /// Stable id the model passes to `mark_task_complete` (`order-coffee`).
    pub id: String,
    /// What the student should do, in the teacher's words.
    pub text: String,
}

impl LessonTask {
    /// A task id derived from its text (`"Order a coffee"` → `order-a-coffee`,
    /// `"Comí paella"` → `comi-paella`: Latin letters lose their accents),
    /// made unique among `taken` by a numeric suffix.
    pub fn id_for(text: &str, taken: &[&str]) -> String {
        let mut slug = String::new();
        for c in text.to_lowercase().chars() {
            if c.is_ascii_alphanumeric() {
                slug.push(c);
            } else if let Some(plain) = unaccented(c) {
                slug.push_str(plain);
            } else if !slug.ends_with('-') && !slug.is_empty() {
                slug.push('-');
            }
            if slug.len() >= 40 {
                break;
            }
        }
        let slug = slug.trim_end_matches('-');
        let base = if slug.is_empty() { "task" } else { slug };
        let mut candidate = base.to_owned();
        let mut n = 2;
        while taken.contains(&candidate.as_str()) {
            candidate = format!("{base}-{n}");
            n += 1;
        }
        candidate
    }
}

/// A lower-case Latin letter with a diacritic (Latin-1 and Latin
/// Extended-A, the letters of the languages this app's lessons teach) as
/// the ASCII letters it is written with without it: ids stay `a-z 0-9 -`
/// and still read as the words they came from.
fn unaccented(c: char) -> Option<&'static str> {
    Some(match c {
        'à'..='å' | 'ā' | 'ă' | 'ą' => "a",
        'æ' => "ae",
        'ç' | 'ć' | 'ĉ' | 'ċ' | 'č' => "c",
        'ð' | 'ď' | 'đ' => "d",
        'è'..='ë' | 'ē' | 'ĕ' | 'ė' | 'ę' | 'ě' => "e",
        'ĝ' | 'ğ' | 'ġ' | 'ģ' => "g",
        'ĥ' | 'ħ' => "h",
        'ì'..='ï' | 'ĩ' | 'ī' | 'ĭ' | 'į' | 'ı' => "i",
        'ĵ' => "j",
        'ķ' => "k",
        'ĺ' | 'ļ' | 'ľ' | 'ŀ' | 'ł' => "l",
        'ñ' | 'ń' | 'ņ' | 'ň' => "n",
        'ò'..='ö' | 'ø' | 'ō' | 'ŏ' | 'ő' => "o",
        'œ' => "oe",
        'ŕ' | 'ŗ' | 'ř' => "r",
        'ß' => "ss",
        'ś' | 'ŝ' | 'ş' | 'š' => "s",
        'ţ' | 'ť' | 'ŧ' => "t",
        'þ' => "th",
        'ù'..='ü' | 'ũ' | 'ū' | 'ŭ' | 'ů' | 'ű' | 'ų' => "u",
        'ŵ' => "w",
        'ý' | 'ÿ' | 'ŷ' => "y",
        'ź' | 'ż' | 'ž' => "z",
        _ => return None,
    })
}

/// The student's level on the Common European Framework scale.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
pub enum CefrLevel {
    /// Beginner.
    A1,
    /// Elementary.
    A2,
    /// Intermediate.
    B1,
    /// Upper intermediate.
    B2,
    /// Advanced.
    C1,
    /// Proficient.
    C2,
}

impl CefrLevel {
    /// Every level, lowest first.
    pub const ALL: [CefrLevel; 6] = [Self::A1, Self::A2, Self::B1, Self::B2, Self::C1, Self::C2];

    /// Parses `A1`…`C2` (any case).
    pub fn parse(raw: &str) -> Result<Self, FieldError> {
        Self::ALL
            .into_iter()
            .find(|l| l.as_str().eq_ignore_ascii_case(raw.trim()))
            .ok_or_else(|| FieldError::new("level", "must be one of A1, A2, B1, B2, C1, C2"))
    }

    /// The level's name.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::A1 => "A1",
            Self::A2 => "A2",
            Self::B1 => "B1",
            Self::B2 => "B2",
            Self::C1 => "C1",
            Self::C2 => "C2",
        }
    }
}

impl fmt::Display for CefrLevel {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// Everything a teacher edits about a lesson, as the form and the API send it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct LessonDraft {
    /// Shown in the lesson list.
    pub title: String,
    /// The teacher's free-form prompt for the tutor.
    pub conversation_prompt: String,
    /// Objectives, in order.
    #[serde(default)]
    pub tasks: Vec<LessonTask>,
    /// Planned length.
    #[serde(default)]
    pub duration_minutes: Option<u32>,
    /// Student level.
    #[serde(default)]
    pub level: Option<CefrLevel>,
    /// Whether this is a review lesson (enables the review tools).
    #[serde(default)]
    pub review: bool,
    /// A review lesson's items, with the ids the review tools take.
    #[serde(default)]
    pub review_items: Vec<review::ReviewItem>,
    /// The tool configuration.
    pub tool_configuration: config::LessonToolConfiguration,
}

impl LessonDraft {
    /// A new, empty lesson with the `standard_lesson` tools that fit a
    /// lesson without tasks (Task Completion stays off until a task is
    /// added, so the prompt never asks to mark objectives that do not exist).
    pub fn new(title: &str) -> Self {
        Self {
            title: title.to_owned(),
            conversation_prompt: String::new(),
            tasks: Vec::new(),
            duration_minutes: Some(15),
            level: Some(CefrLevel::A2),
            review: false,
            review_items: Vec::new(),
            tool_configuration: config::default_configuration(config::LessonFacts::default()),
        }
    }

    /// A copy of this lesson to edit separately ("Duplicate lesson"): the
    /// same content under "Copy of …", cut to the title limit.
    pub fn duplicate(&self) -> Self {
        let title: String = format!("Copy of {}", self.title.trim())
            .chars()
            .take(MAX_TITLE_CHARS)
            .collect();
        Self {
            title: title.trim_end().to_owned(),
            ..self.clone()
        }
    }

    /// The facts smart defaults react to.
    pub fn facts(&self) -> config::LessonFacts {
        config::LessonFacts {
            has_tasks: !self.tasks.is_empty(),
            is_review: self.review,
            has_review_items: !self.review_items.is_empty(),
        }
    }

    /// Every rule the lesson breaks (its own fields, then its tool
    /// configuration under `toolConfiguration.`). Empty means it can be saved.
    pub fn problems(&self) -> Vec<FieldError> {
        let mut problems = Vec::new();
        let title = self.title.trim();
        if title.is_empty() {
            problems.push(FieldError::new("title", "is required"));
        } else if title.chars().count() > MAX_TITLE_CHARS {
            problems.push(FieldError::new(
                "title",
                format!("must be at most {MAX_TITLE_CHARS} characters"),
            ));
        } else if crate::domain::limits::unprintable(title).is_some() {
            problems.push(FieldError::new(
                "title",
                crate::domain::limits::PRINTABLE_RULE,
            ));
        }
        if self.conversation_prompt.chars().count() > MAX_PROMPT_CHARS {
            problems.push(FieldError::new(
                "conversationPrompt",
                format!("must be at most {MAX_PROMPT_CHARS} characters"),
            ));
        }
        if self.tasks.len() > MAX_TASKS {
            problems.push(FieldError::new(
                "tasks",
                format!("at most {MAX_TASKS} tasks"),
            ));
        }
        let mut ids = std::collections::BTreeSet::new();
        for (i, task) in self.tasks.iter().enumerate() {
            let text = task.text.trim();
            if text.is_empty() {
                problems.push(FieldError::new(
                    format!("tasks[{i}].text"),
                    "task text is required",
                ));
            } else if text.chars().count() > MAX_TASK_CHARS {
                problems.push(FieldError::new(
                    format!("tasks[{i}].text"),
                    format!("must be at most {MAX_TASK_CHARS} characters"),
                ));
            }
            if !review::is_valid_id(&task.id) {
                problems.push(FieldError::new(
                    format!("tasks[{i}].id"),
                    "task id must be 1-64 characters of a-z, 0-9, - or _",
                ));
            } else if !ids.insert(task.id.as_str()) {
                problems.push(FieldError::new(
                    format!("tasks[{i}].id"),
                    format!("task id \"{}\" is used twice", task.id),
                ));
            }
        }
        problems.extend(review::problems(&self.review_items));
        if let Some(minutes) = self.duration_minutes {
            if minutes == 0 || minutes > MAX_DURATION_MINUTES {
                problems.push(FieldError::new(
                    "durationMinutes",
                    format!("must be a whole number of minutes, 1 to {MAX_DURATION_MINUTES}"),
                ));
            }
        }
        problems.extend(self.tool_configuration.problems().into_iter().map(|p| {
            let field = if p.field.starts_with("tools")
                || p.field.starts_with("global")
                || p.field.starts_with("teacher")
            {
                format!("toolConfiguration.{}", p.field)
            } else {
                p.field
            };
            FieldError::new(field, p.rule)
        }));
        problems
    }
}

#[cfg(test)]
pub(crate) mod fixtures;

#[cfg(test)]
mod tests {
    use super::*;

    proptest::proptest! {
        #[test]
        fn a_task_id_from_any_text_is_a_valid_id(text in "\\PC{0,120}") {
            let id = LessonTask::id_for(&text, &[]);
            proptest::prop_assert!(review::is_valid_id(&id), "{text:?} → {id:?}");
        }
    }

    #[test]
    fn task_ids_are_slugs_made_unique() {
        assert_eq!(
            LessonTask::id_for("Order a café con leche!", &[]),
            "order-a-cafe-con-leche"
        );
        assert_eq!(LessonTask::id_for("Comí paella", &[]), "comi-paella");
        assert_eq!(LessonTask::id_for("¿Cuánto cuesta?", &[]), "cuanto-cuesta");
        assert_eq!(LessonTask::id_for("Straße, Øl", &[]), "strasse-ol");
        assert_eq!(LessonTask::id_for("Comí", &["comi"]), "comi-2");
        assert_eq!(LessonTask::id_for("Pay", &["pay"]), "pay-2");
        assert_eq!(LessonTask::id_for("Pay", &["pay", "pay-2"]), "pay-3");
        assert_eq!(LessonTask::id_for("¿?", &[]), "task");
    }

    #[test]
    fn levels_parse_in_any_case_and_refuse_others() {
        assert_eq!(CefrLevel::parse("b2"), Ok(CefrLevel::B2));
        assert_eq!(CefrLevel::parse("D1").unwrap_err().field, "level");
        assert_eq!(serde_json::to_string(&CefrLevel::C1).unwrap(), "\"C1\"");
    }

    #[test]
    fn a_new_lesson_is_valid_once_titled() {
        assert!(LessonDraft::new("Café role-play").problems().is_empty());
        assert_eq!(LessonDraft::new("  ").problems()[0].field, "title");
    }

    #[test]
    fn a_new_lesson_has_the_standard_tools_but_no_task_completion() {
        let draft = LessonDraft::new("Café");
        let config = &draft.tool_configuration;
        assert!(!config.is_enabled("mark_task_complete"));
        assert_eq!(config.enabled_in_catalogue_order().len(), 3);
        assert_eq!(
            config::Preset::for_lesson(config, draft.facts()),
            Some(config::Preset::StandardLesson)
        );
    }

    #[test]
    fn a_duplicate_keeps_the_content_under_a_copy_title_within_the_limit() {
        let mut draft = LessonDraft::new("Café");
        draft.tasks.push(LessonTask {
            id: "greet".into(),
            text: "Greet".into(),
        });
        let copy = draft.duplicate();
        assert_eq!(copy.title, "Copy of Café");
        assert_eq!(copy.tasks, draft.tasks);
        assert_eq!(copy.tool_configuration, draft.tool_configuration);
        let long = LessonDraft::new(&"x".repeat(MAX_TITLE_CHARS)).duplicate();
        assert_eq!(long.title.chars().count(), MAX_TITLE_CHARS);
        assert!(long.problems().is_empty());
    }

    #[test]
    fn lesson_problems_name_their_fields() {
        let mut draft = LessonDraft::new("x");
        draft.tasks = vec![
            LessonTask {
                id: "a".into(),
                text: "".into(),
            },
            LessonTask {
                id: "a".into(),
                text: "ok".into(),
            },
            LessonTask {
                id: "Bad Id".into(),
                text: "ok".into(),
            },
        ];
        draft.duration_minutes = Some(0);
        draft.tool_configuration.tools[0].custom_instructions = Some("x".repeat(2001));
        let fields: Vec<String> = draft.problems().into_iter().map(|p| p.field).collect();
        assert_eq!(
            fields,
            [
                "tasks[0].text",
                "tasks[1].id",
                "tasks[2].id",
                "durationMinutes",
                "toolConfiguration.tools[0].customInstructions"
            ]
        );
    }
}
