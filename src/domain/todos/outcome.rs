//! A todo as answers show it, and the shapes every answer takes: the
//! seed's success and failure answers.

use serde::Serialize;
use serde_json::{json, Value};

/// Why a todo tool did not do what was asked: `error` for the model and
/// the timeline, `spoken` (the answer's `toolResultText`) for a voice
/// agent to say.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Failure {
    /// What went wrong, naming what exists where that helps.
    pub error: String,
    /// The same for the user's ears.
    pub spoken: String,
}

impl Failure {
    /// A failure with its `error` and `spoken` texts.
    pub(super) fn new(error: impl Into<String>, spoken: impl Into<String>) -> Self {
        Self {
            error: error.into(),
            spoken: spoken.into(),
        }
    }

    /// The seed's failure answer: `{"success": false, "error",
    /// "toolResultText"}`.
    pub fn answer(&self) -> Value {
        json!({"success": false, "error": self.error, "toolResultText": self.spoken})
    }
}

/// A success answer: `{"success": true, "message", "toolResultText"}` and
/// the fields of `extra`.
pub(super) fn success(message: String, spoken: String, extra: Value) -> Value {
    let mut answer = json!({"success": true, "message": message, "toolResultText": spoken});
    if let (Some(answer), Value::Object(extra)) = (answer.as_object_mut(), extra) {
        answer.extend(extra);
    }
    answer
}

/// What a call whose arguments did not parse answers: `reason` from
/// [`TodoCommand::parse`].
pub fn invalid_arguments(reason: &str) -> Failure {
    Failure::new(
        reason,
        format!(
            "Sorry, I couldn't do that: {}.",
            reason
                .split_once(": ")
                .map_or(reason, |(_, problem)| problem)
                .replace('`', "")
        ),
    )
}

/// A todo's number in its session: numbered from 1 in the order the
/// session created them, never reused.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct TodoId(i64);

impl TodoId {
    /// The id of `todo`.
    pub fn of(todo: &Todo) -> Self {
        Self(todo.id)
    }

    /// The number.
    pub fn get(self) -> i64 {
        self.0
    }
}

/// A todo as answers show it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Todo {
    /// Its [`TodoId`] number in the session.
    pub id: i64,
    /// What is to be done.
    pub text: String,
    /// Whether it is done.
    pub done: bool,
    /// Its tags, as given.
    pub tags: Vec<String>,
    /// The name of the list it is on.
    pub list: String,
}
