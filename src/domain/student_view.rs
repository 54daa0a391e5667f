//! A student's page and `GET /api/students/{id}`: their runs across
//! lessons, the errors logged, facts learnt, tasks done and items mastered
//! in them, and their review queue.
//!
//! Pure: the server reads the rows and [`fold`] arranges them, so the page
//! and the API show the same thing.

use crate::domain::lesson::outcome::{ItemMastered, LoggedError, TaskDone, TutorOutcome};
use crate::domain::review_queue::QueueItem;
use crate::domain::student::{KnownFact, Student};
use serde::{Deserialize, Serialize};

/// Most runs (newest first) a student's view lists, with what they
/// recorded: a year of weekly lessons, and a page that still loads fast.
pub const STUDENT_VIEW_RUNS: usize = 100;

/// Most review items a student's view lists, in the queue and out of it.
pub const STUDENT_VIEW_ITEMS: usize = 200;

/// One run opened for the student.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct StudentRun {
    /// The session (its page is `/sessions/{id}`).
    pub session_id: String,
    /// The lesson it ran, unless deleted since.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub lesson_id: Option<i64>,
    /// The lesson's title, unless deleted since.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub lesson_title: Option<String>,
    /// Opened, Unix seconds.
    pub started_at: i64,
    /// Ended, if it has.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ended_at: Option<i64>,
    /// Errors logged in it.
    pub errors: usize,
    /// Tasks completed in it.
    pub tasks: usize,
    /// Items mastered in it.
    pub mastered: usize,
}

/// A run's facts as the server reads them.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RunRow {
    /// The session.
    pub session_id: String,
    /// Its lesson.
    pub lesson_id: Option<i64>,
    /// The lesson's title.
    pub lesson_title: Option<String>,
    /// Opened.
    pub started_at: i64,
    /// Ended.
    pub ended_at: Option<i64>,
}

/// Something a run recorded, with the run it came from.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct FromRun<T> {
    /// The session.
    pub session_id: String,
    /// The lesson's title, unless deleted since.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub lesson_title: Option<String>,
    /// When it was recorded, Unix seconds.
    pub at: i64,
    /// What was recorded.
    #[serde(flatten)]
    pub value: T,
}

/// Everything about one student.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct StudentView {
    /// The record.
    pub student: Student,
    /// Their teacher's name.
    pub teacher_name: String,
    /// Their runs, newest first (at most [`STUDENT_VIEW_RUNS`]).
    pub runs: Vec<StudentRun>,
    /// Errors logged in those runs, newest first.
    pub errors: Vec<FromRun<LoggedError>>,
    /// Profile facts their record keeps, newest first.
    pub facts: Vec<KnownFact>,
    /// Tasks completed, newest first.
    pub tasks: Vec<FromRun<TaskDone>>,
    /// Items marked mastered, newest first (a lesson's own items and their
    /// queue's `q-…` items).
    pub mastered: Vec<FromRun<ItemMastered>>,
    /// Their review queue: items not yet mastered, soonest due first.
    pub queue: Vec<QueueItem>,
    /// Items that left the queue (mastered past the last box), newest
    /// first.
    pub graduated: Vec<QueueItem>,
}

/// The parts of a student's view as read.
pub struct ViewParts {
    /// The record.
    pub student: Student,
    /// Their teacher's name.
    pub teacher_name: String,
    /// Their runs, newest first.
    pub runs: Vec<RunRow>,
    /// What those runs recorded: session, time, outcome, oldest first.
    pub outcomes: Vec<(String, i64, TutorOutcome)>,
    /// Their known facts.
    pub facts: Vec<KnownFact>,
    /// Their queue's items, in the queue and out of it.
    pub items: Vec<QueueItem>,
}

/// Arranges a student's rows into their view.
pub fn fold(parts: ViewParts) -> StudentView {
    let title_of = |session: &str| {
        parts
            .runs
            .iter()
            .find(|r| r.session_id == session)
            .and_then(|r| r.lesson_title.clone())
    };
    let mut runs: Vec<StudentRun> = parts
        .runs
        .iter()
        .map(|r| StudentRun {
            session_id: r.session_id.clone(),
            lesson_id: r.lesson_id,
            lesson_title: r.lesson_title.clone(),
            started_at: r.started_at,
            ended_at: r.ended_at,
            errors: 0,
            tasks: 0,
            mastered: 0,
        })
        .collect();
    let (mut errors, mut tasks, mut mastered) = (Vec::new(), Vec::new(), Vec::new());
    for (session_id, at, outcome) in parts.outcomes.into_iter().rev() {
        if let Some(run) = runs.iter_mut().find(|r| r.session_id == session_id) {
            match &outcome {
                TutorOutcome::Error(_) => run.errors += 1,
                TutorOutcome::Task(_) => run.tasks += 1,
                TutorOutcome::Mastered(_) => run.mastered += 1,
                TutorOutcome::Fact(_) | TutorOutcome::Summary(_) => {}
            }
        }
        let title = title_of(&session_id);
        match outcome {
            TutorOutcome::Error(e) => errors.push(from_run(&session_id, title, at, e)),
            TutorOutcome::Task(t) => tasks.push(from_run(&session_id, title, at, t)),
            TutorOutcome::Mastered(m) => mastered.push(from_run(&session_id, title, at, m)),
            TutorOutcome::Fact(_) | TutorOutcome::Summary(_) => {}
        }
    }
    let (mut graduated, mut queue): (Vec<QueueItem>, Vec<QueueItem>) = parts
        .items
        .into_iter()
        .partition(|i| i.schedule.left_queue());
    queue.sort_by_key(|i| (i.schedule.due_at, i.id));
    graduated.sort_by_key(|i| std::cmp::Reverse((i.schedule.mastered_at, i.id)));
    StudentView {
        student: parts.student,
        teacher_name: parts.teacher_name,
        runs,
        errors,
        facts: parts.facts,
        tasks,
        mastered,
        queue,
        graduated,
    }
}

/// What run `session_id` (of lesson `title`) recorded at `at`.
fn from_run<T>(session_id: &str, title: Option<String>, at: i64, value: T) -> FromRun<T> {
    FromRun {
        session_id: session_id.to_owned(),
        lesson_title: title,
        at,
        value,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::domain::review_queue::Schedule;

    fn parts() -> ViewParts {
        let item = |id: i64, due_at: i64, mastered_at: Option<i64>| QueueItem {
            id,
            session_id: None,
            error_type: "grammar".into(),
            student_said: "yo soy hambre".into(),
            correct_form: "tengo hambre".into(),
            explanation: None,
            severity: 4,
            schedule: Schedule {
                leitner_box: 2,
                due_at,
                mastered_at,
            },
            last_reviewed_at: None,
            created_at: 1,
        };
        ViewParts {
            student: Student {
                id: 1,
                teacher_id: 2,
                name: "Ana".into(),
                pseudonymous: false,
                created_at: 1,
            },
            teacher_name: "Teacher".into(),
            runs: vec![RunRow {
                session_id: "s1".into(),
                lesson_id: Some(3),
                lesson_title: Some("Café".into()),
                started_at: 10,
                ended_at: None,
            }],
            outcomes: vec![
                (
                    "s1".into(),
                    11,
                    TutorOutcome::Task(TaskDone {
                        task_id: "greet".into(),
                        evidence: None,
                    }),
                ),
                (
                    "s1".into(),
                    12,
                    TutorOutcome::Mastered(ItemMastered {
                        item_id: "q-4".into(),
                        confidence: None,
                    }),
                ),
            ],
            facts: vec![],
            items: vec![item(5, 300, None), item(4, 200, None), item(6, 1, Some(50))],
        }
    }

    #[test]
    fn a_students_view_counts_each_runs_outcomes_and_splits_the_queue() {
        let view = fold(parts());
        assert_eq!((view.runs[0].tasks, view.runs[0].mastered), (1, 1));
        assert_eq!(view.tasks[0].lesson_title.as_deref(), Some("Café"));
        assert_eq!(view.mastered[0].at, 12);
        assert_eq!(
            view.queue.iter().map(|i| i.id).collect::<Vec<_>>(),
            [4, 5],
            "soonest due first"
        );
        assert_eq!(view.graduated[0].id, 6);
    }
}
