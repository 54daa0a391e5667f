//! A lesson's run as its teacher reviews it: the stored outcomes of the
//! tutor tools (`outcome`) folded into one report per run, every task of
//! the lesson listed done or not and mastered items named. Apart from
//! `outcome` because recording a call and reading a run back change for
//! different reasons. Pure.

use crate::domain::lesson::outcome::{
    find_item, LessonSummary, LoggedError, ProfileFact, TaskDone, TutorOutcome,
};
use crate::domain::lesson::{LessonDraft, LessonTask};
use serde::{Deserialize, Serialize};

/// One lesson objective as a run ended: done or not.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct TaskResult {
    /// The task.
    pub task: LessonTask,
    /// Whether the tutor marked it complete.
    pub done: bool,
    /// What completed it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub evidence: Option<String>,
}

/// A mastered item with its text (when the lesson still lists it).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct MasteredItem {
    /// The item's id.
    pub item_id: String,
    /// Its text, if the lesson still lists it.
    pub text: Option<String>,
    /// How solidly, 1-5.
    pub confidence: Option<u8>,
}

/// One run of a lesson as its teacher reviews it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct LessonRunReport {
    /// The session.
    pub session_id: String,
    /// Who it was for, if the backend said.
    pub student: Option<String>,
    /// When it opened, Unix seconds.
    pub started_at: i64,
    /// When it ended, if it has.
    pub ended_at: Option<i64>,
    /// A trial (its teacher trying the lesson), listed apart from real runs.
    #[serde(default)]
    pub trial: bool,
    /// How long it ran (so far), in seconds.
    pub duration_seconds: i64,
    /// Errors logged for review, in order.
    pub errors: Vec<LoggedError>,
    /// Every lesson task, done or not.
    pub tasks: Vec<TaskResult>,
    /// Profile facts learnt.
    pub facts: Vec<ProfileFact>,
    /// Items mastered.
    pub mastered: Vec<MasteredItem>,
    /// The last summary shown.
    pub summary: Option<LessonSummary>,
}

/// The facts about a run that are not outcomes.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RunFacts {
    /// The session.
    pub session_id: String,
    /// Who it was for.
    pub student: Option<String>,
    /// Opened, Unix seconds.
    pub started_at: i64,
    /// Ended, Unix seconds.
    pub ended_at: Option<i64>,
    /// Last activity, Unix seconds (the end of a run still open).
    pub last_activity: i64,
    /// A trial, not a real run.
    pub trial: bool,
}

/// Folds a run's stored outcomes into the teacher's report, listing every
/// task of `lesson` (done or not) and naming mastered items.
pub fn report(run: RunFacts, lesson: &LessonDraft, outcomes: Vec<TutorOutcome>) -> LessonRunReport {
    let mut errors = Vec::new();
    let mut facts = Vec::new();
    let mut done: Vec<TaskDone> = Vec::new();
    let mut mastered = Vec::new();
    let mut summary = None;
    for outcome in outcomes {
        match outcome {
            TutorOutcome::Error(e) => errors.push(e),
            TutorOutcome::Fact(f) => facts.push(f),
            TutorOutcome::Task(t) => done.push(t),
            TutorOutcome::Mastered(m) => mastered.push(MasteredItem {
                text: find_item(&lesson.review_items, &m.item_id).map(|i| i.text.clone()),
                item_id: m.item_id,
                confidence: m.confidence,
            }),
            TutorOutcome::Summary(s) => summary = Some(s),
        }
    }
    let tasks = lesson
        .tasks
        .iter()
        .map(|task| {
            let hit = done.iter().find(|d| d.task_id == task.id);
            TaskResult {
                task: task.clone(),
                done: hit.is_some(),
                evidence: hit.and_then(|d| d.evidence.clone()),
            }
        })
        .collect();
    let end = run.ended_at.unwrap_or(run.last_activity);
    LessonRunReport {
        duration_seconds: (end - run.started_at).max(0),
        session_id: run.session_id,
        student: run.student,
        started_at: run.started_at,
        ended_at: run.ended_at,
        trial: run.trial,
        errors,
        tasks,
        facts,
        mastered,
        summary,
    }
}
