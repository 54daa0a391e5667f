//! Students: each a teacher's record, by name or by a pseudonymous code for
//! schools that must not store names, and what a lesson opened for one
//! learns of them (the items due in their review queue, the facts their
//! earlier lessons learnt).
//!
//! Who may see a student is one rule, [`Viewer::may_see`]: its teacher, or
//! an admin. Every student route asks it (through the server's one lookup),
//! so a new route cannot forget it.

use crate::domain::error::FieldError;
use crate::domain::limits::STUDENT_MAX_CHARS;
use crate::domain::review_queue::QueueItem;
use serde::{Deserialize, Serialize};

/// Longest pseudonymous code: schools' codes are short identifiers
/// (`7B-0412`), and anything longer is more likely a name pasted in the
/// wrong field.
pub const STUDENT_CODE_MAX_CHARS: usize = 32;

/// Most profile facts an opted-in lesson's prompt carries about its
/// student, newest first: enough to personalise a conversation, few enough
/// that the facts never crowd out the teacher's prompt.
pub const FACTS_PER_LESSON: usize = 12;

/// What a student record is called: a name, or a pseudonymous code.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum StudentLabel {
    /// A name (`Ana`), at most [`STUDENT_MAX_CHARS`] characters.
    Name(String),
    /// A code (`7B-0412`): 1–[`STUDENT_CODE_MAX_CHARS`] letters, digits,
    /// `-` or `_`.
    Code(String),
}

impl StudentLabel {
    /// A name, trimmed: 1–[`STUDENT_MAX_CHARS`] characters without control
    /// characters, reported under `field`.
    pub fn name(raw: &str, field: &str) -> Result<Self, FieldError> {
        let name = raw.trim();
        if name.is_empty() {
            return Err(FieldError::new(field, "is required"));
        }
        if name.chars().count() > STUDENT_MAX_CHARS {
            return Err(FieldError::new(
                field,
                format!("must be at most {STUDENT_MAX_CHARS} characters"),
            ));
        }
        if name.chars().any(char::is_control) {
            return Err(FieldError::new(field, "may not contain control characters"));
        }
        Ok(Self::Name(name.to_owned()))
    }

    /// A pseudonymous code, trimmed, under `code`.
    pub fn code(raw: &str) -> Result<Self, FieldError> {
        let code = raw.trim();
        let plain = code
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '-' || c == '_');
        if code.is_empty() || code.chars().count() > STUDENT_CODE_MAX_CHARS || !plain {
            return Err(FieldError::new(
                "code",
                format!(
                    "must be 1-{STUDENT_CODE_MAX_CHARS} letters, digits, - or _ (a school's pseudonymous code)"
                ),
            ));
        }
        Ok(Self::Code(code.to_owned()))
    }

    /// The text stored and shown (the name, or the code).
    pub fn text(&self) -> &str {
        match self {
            Self::Name(text) | Self::Code(text) => text,
        }
    }

    /// Whether it is a pseudonymous code.
    pub fn pseudonymous(&self) -> bool {
        matches!(self, Self::Code(_))
    }
}

/// `POST /api/students`: `{"name": "Ana"}` or `{"code": "7B-0412"}`.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct NewStudent {
    /// The student's name…
    #[serde(default)]
    pub name: Option<String>,
    /// …or a pseudonymous code, for schools that must not store names.
    #[serde(default)]
    pub code: Option<String>,
}

impl NewStudent {
    /// The label asked for: exactly one of `name` and `code`.
    pub fn parse(&self) -> Result<StudentLabel, FieldError> {
        match (&self.name, &self.code) {
            (Some(name), None) => StudentLabel::name(name, "name"),
            (None, Some(code)) => StudentLabel::code(code),
            _ => Err(FieldError::new(
                "name",
                "give exactly one of name and code (a pseudonymous code)",
            )),
        }
    }
}

/// A student record.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Student {
    /// Its id (`studentId` when opening a session).
    pub id: i64,
    /// The teacher it belongs to.
    pub teacher_id: i64,
    /// The name, or the code when pseudonymous.
    pub name: String,
    /// Whether `name` is a pseudonymous code.
    pub pseudonymous: bool,
    /// Created, Unix seconds.
    pub created_at: i64,
}

/// Who is asking about students: a signed-in user, or the user an API key
/// acts for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Viewer {
    /// The user.
    pub user_id: i64,
    /// Whether they are an admin (who sees every teacher's students).
    pub admin: bool,
}

impl Viewer {
    /// Account `user_id` with `role` (signed in, or the maker of an API
    /// key, whom the key acts as).
    pub fn of(user_id: i64, role: crate::domain::user::Role) -> Self {
        Viewer {
            user_id,
            admin: role == crate::domain::user::Role::Admin,
        }
    }

    /// The one rule of who may see (and open sessions for) a student of
    /// teacher `teacher_id`: that teacher, or an admin.
    pub fn may_see(&self, teacher_id: i64) -> bool {
        self.teacher_filter().is_none_or(|only| only == teacher_id)
    }

    /// The same rule as a list's filter: the one teacher whose students
    /// this viewer sees, or `None` for every teacher's (an admin).
    pub fn teacher_filter(&self) -> Option<i64> {
        (!self.admin).then_some(self.user_id)
    }
}

/// One student in their teacher's list, with what is waiting for them.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct StudentSummary {
    /// The record.
    #[serde(flatten)]
    pub student: Student,
    /// Their teacher's name.
    pub teacher_name: String,
    /// Lesson runs opened for them.
    pub runs: i64,
    /// Items in their review queue (not yet mastered).
    pub queued: i64,
    /// Of those, the items due now.
    pub due: i64,
    /// When their last run opened, Unix seconds.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub last_run_at: Option<i64>,
}

/// A profile fact a student's lesson learnt (`update_user_profile`), kept
/// on their record.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct KnownFact {
    /// interest, goal, preference, personal_detail or learning_style.
    pub category: String,
    /// The fact, in a few words.
    pub value: String,
    /// How sure the tutor was, 0-1.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub confidence: Option<f64>,
    /// When a lesson last learnt it, Unix seconds.
    pub learnt_at: i64,
}

/// The facts a lesson's prompt carries: newest first, one per category and
/// value (case and spacing aside), at most [`FACTS_PER_LESSON`].
pub fn facts_for_lesson(facts: &[KnownFact]) -> Vec<KnownFact> {
    let mut sorted: Vec<&KnownFact> = facts.iter().collect();
    sorted.sort_by_key(|f| std::cmp::Reverse(f.learnt_at));
    let mut seen = std::collections::BTreeSet::new();
    sorted
        .into_iter()
        .filter(|f| seen.insert(fact_key(f)))
        .take(FACTS_PER_LESSON)
        .cloned()
        .collect()
}

/// A fact's identity for de-duplication: its category and value, lower
/// case, spaces collapsed.
fn fact_key(fact: &KnownFact) -> (String, String) {
    let norm = |s: &str| {
        s.split_whitespace()
            .collect::<Vec<_>>()
            .join(" ")
            .to_lowercase()
    };
    (norm(&fact.category), norm(&fact.value))
}

/// What a lesson opened for a student knows of them, fixed when the
/// session opens (so its prompt stays the same for the whole run): the
/// review items due for them (a review lesson only) and their known facts
/// (a lesson with `useProfileFacts` only).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct StudentContext {
    /// The student's record.
    pub student_id: i64,
    /// Whether the lesson puts known facts into its prompt, so a fact
    /// learnt now reaches later lessons like it.
    #[serde(default)]
    pub uses_facts: bool,
    /// Due review items offered to the session, most overdue first.
    #[serde(default)]
    pub due: Vec<QueueItem>,
    /// Known facts, newest first.
    #[serde(default)]
    pub facts: Vec<KnownFact>,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_student_is_a_name_or_a_code_never_both() {
        let name = NewStudent {
            name: Some("  Ana  ".into()),
            code: None,
        };
        assert_eq!(name.parse(), Ok(StudentLabel::Name("Ana".into())));
        let code = NewStudent {
            name: None,
            code: Some("7B-0412".into()),
        };
        assert!(code.parse().unwrap().pseudonymous());
        for bad in [
            NewStudent::default(),
            NewStudent {
                name: Some("Ana".into()),
                code: Some("x".into()),
            },
        ] {
            assert_eq!(bad.parse().unwrap_err().field, "name");
        }
    }

    #[test]
    fn names_and_codes_have_their_limits() {
        let long = "a".repeat(STUDENT_MAX_CHARS + 1);
        assert_eq!(
            StudentLabel::name(&long, "student").unwrap_err().field,
            "student"
        );
        assert!(StudentLabel::name("   ", "name").is_err());
        assert!(StudentLabel::name("Ana\u{7}", "name").is_err());
        assert!(StudentLabel::code("Ana María").is_err());
        assert!(StudentLabel::code(&"x".repeat(STUDENT_CODE_MAX_CHARS + 1)).is_err());
        assert_eq!(StudentLabel::code("7B_04").unwrap().text(), "7B_04");
    }

    #[test]
    fn a_teacher_sees_only_their_students_and_an_admin_all() {
        let teacher = Viewer {
            user_id: 2,
            admin: false,
        };
        assert!(teacher.may_see(2) && !teacher.may_see(3));
        assert_eq!(teacher.teacher_filter(), Some(2));
        assert!(Viewer {
            user_id: 1,
            admin: true
        }
        .may_see(3));
    }

    #[test]
    fn facts_for_a_lesson_are_newest_first_without_repeats_and_bounded() {
        let fact = |value: &str, at: i64| KnownFact {
            category: "interest".into(),
            value: value.into(),
            confidence: None,
            learnt_at: at,
        };
        let mut facts: Vec<KnownFact> = (0..30).map(|i| fact(&format!("f{i}"), i)).collect();
        facts.push(fact("Football", 100));
        facts.push(fact(" football ", 50));
        let picked = facts_for_lesson(&facts);
        assert_eq!(picked.len(), FACTS_PER_LESSON);
        assert_eq!(picked[0].value, "Football");
        assert_eq!(picked[1].value, "f29", "the older repeat is dropped");
    }
}
