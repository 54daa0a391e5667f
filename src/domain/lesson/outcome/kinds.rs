//! The outcomes a tutor tool's call records, as stored with the call and
//! read back for the teacher, and what a call changes on the student's
//! record.

use crate::domain::review_queue::Schedule;
use crate::domain::student::StudentContext;
use serde::{Deserialize, Serialize};
use serde_json::Value;

/// A mistake the tutor logged (`mark_for_review`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct LoggedError {
    /// grammar, pronunciation, vocabulary or cultural.
    pub error_type: String,
    /// What the student said.
    pub student_said: String,
    /// The correct form.
    pub correct_form: String,
    /// 1 (slip) to 10 (blocks understanding).
    pub severity: u8,
    /// Why, for the review lesson.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub explanation: Option<String>,
}

/// Something the student revealed about themselves (`update_user_profile`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ProfileFact {
    /// interest, goal, preference, personal_detail or learning_style.
    pub category: String,
    /// The fact, in a few words.
    pub value: String,
    /// How sure the tutor was, 0-1.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub confidence: Option<f64>,
}

/// A lesson objective the student achieved (`mark_task_complete`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct TaskDone {
    /// The task's id.
    pub task_id: String,
    /// What the student said or did.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub evidence: Option<String>,
}

/// A review item the student has mastered (`mark_item_mastered`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ItemMastered {
    /// The item's id.
    pub item_id: String,
    /// How solidly, 1-5.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub confidence: Option<u8>,
}

/// The end-of-session summary (`show_session_summary`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct LessonSummary {
    /// Two or three sentences.
    pub summary: String,
    /// What the student did well.
    #[serde(default)]
    pub strengths: Vec<String>,
    /// What to work on.
    #[serde(default)]
    pub areas_to_improve: Vec<String>,
    /// Suggested next activities.
    #[serde(default)]
    pub next_steps: Vec<String>,
    /// The tutor's rating of the session, 1-5.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub stars: Option<u8>,
}

/// One stored outcome of a tutor tool call.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "lowercase")]
pub enum TutorOutcome {
    /// `mark_for_review`.
    Error(LoggedError),
    /// `update_user_profile`.
    Fact(ProfileFact),
    /// `mark_task_complete`.
    Task(TaskDone),
    /// `mark_item_mastered`.
    Mastered(ItemMastered),
    /// `show_session_summary`.
    Summary(LessonSummary),
}

impl TutorOutcome {
    /// The stored `kind` (the serde tag).
    pub fn kind(&self) -> &'static str {
        match self {
            Self::Error(_) => "error",
            Self::Fact(_) => "fact",
            Self::Task(_) => "task",
            Self::Mastered(_) => "mastered",
            Self::Summary(_) => "summary",
        }
    }
}

/// What a tutor tool call did: the result the model gets, and the outcome
/// to store (none for playback, or a task or item already recorded).
#[derive(Debug, Clone, PartialEq)]
pub struct Recorded {
    /// The tool's result.
    pub result: Value,
    /// What to store with the call.
    pub outcome: Option<TutorOutcome>,
    /// What changes on the session's student record, written with the call.
    pub student: Option<StudentChange>,
}

impl Recorded {
    /// A result with nothing for the teacher or the student.
    pub fn plain(result: Value) -> Self {
        Self {
            result,
            outcome: None,
            student: None,
        }
    }
}

/// What a tutor call changes on the session's student record.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum StudentChange {
    /// Queue the logged error (the call's outcome) for review, scheduled so.
    Queue(Schedule),
    /// Move queue item `item` to its new place.
    Move {
        /// The queue item.
        item: i64,
        /// Its new box and due time (or out of the queue).
        to: Schedule,
    },
    /// Save the fact (the call's outcome) on the student's profile.
    SaveFact,
}

/// What a tutor call knows besides the lesson and the run so far.
#[derive(Debug, Clone, Copy)]
pub struct CallContext<'a> {
    /// Now, Unix seconds (the injected clock).
    pub now: i64,
    /// The student record the session runs for, with the queue items it
    /// offered as they stand now; none for a session without one.
    pub student: Option<&'a StudentContext>,
}
