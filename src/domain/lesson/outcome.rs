//! What a tutor session's tools record: the student's errors for review,
//! profile facts, completed tasks, mastered items and the summary.
//!
//! Switchboard runs the tutor tools itself for a lesson session: each call
//! is parsed here into one [`TutorOutcome`] (or refused, naming the valid
//! ids), stored with the call, and read back for the teacher's view of the
//! lesson's runs. Pure: the caller supplies the lesson, what the session
//! already recorded, the time and — for a session opened for a student
//! record — what the session knows of the student ([`StudentContext`]).
//!
//! What each tool answers the model says what was actually done: an error
//! queued for the student's review (with its due time) or only recorded
//! for the teacher; a fact saved to the student's profile or kept with
//! this run only; a summary recorded for the teacher (Switchboard shows
//! the student nothing); a queue item moved to its next box or out of the
//! queue. What is to change on the student's record travels beside the
//! outcome ([`StudentChange`]) and is written with the call.

use crate::domain::lesson::review::ReviewItem;
use crate::domain::lesson::LessonDraft;
use crate::domain::review_queue::{parse_offer_id, QueueItem, Schedule, BOXES};
use crate::domain::student::StudentContext;
use crate::domain::time::format_utc;
use serde::{Deserialize, Serialize};
use serde_json::{json, Value};

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

/// Whether `tool` is a tutor tool Switchboard runs in a lesson session.
pub fn is_tutor_tool(tool: &str) -> bool {
    crate::domain::lesson::tools::tutor_tool(tool).is_some()
}

fn parse<T: for<'de> Deserialize<'de>>(tool: &str, arguments: &Value) -> Result<T, String> {
    serde_json::from_value(arguments.clone())
        .map_err(|e| format!("invalid arguments for `{tool}`: {e}"))
}

fn ids<'a>(ids: impl Iterator<Item = &'a str>) -> String {
    let list: Vec<&str> = ids.collect();
    if list.is_empty() {
        "none".into()
    } else {
        list.join(", ")
    }
}

fn clean(text: String) -> String {
    text.trim().to_owned()
}

/// Runs tutor tool `tool` with `arguments` for a session of `lesson` that
/// has already recorded `before`: the result for the model and what to
/// store, or why it is refused (an unknown task, item or recording id,
/// naming the valid ones; arguments that do not parse).
pub fn record(
    tool: &str,
    arguments: &Value,
    lesson: &LessonDraft,
    before: &[TutorOutcome],
    cx: CallContext<'_>,
) -> Result<Recorded, String> {
    match tool {
        "mark_for_review" => log_error(tool, arguments, before, cx),
        "update_user_profile" => save_fact(tool, arguments, cx),
        "show_session_summary" => {
            let mut summary: LessonSummary = parse(tool, arguments)?;
            summary.summary = clean(summary.summary);
            summary.stars = summary.stars.map(|s| s.clamp(1, 5));
            Ok(Recorded {
                result: json!({
                    "recorded": true,
                    "message": "Recorded for the teacher's view of this run. Switchboard shows the student nothing: tell them the summary yourself if they should hear it.",
                }),
                outcome: Some(TutorOutcome::Summary(summary)),
                student: None,
            })
        }
        "mark_task_complete" => {
            let done: TaskDone = parse(tool, arguments)?;
            let Some(task) = lesson.tasks.iter().find(|t| t.id == done.task_id) else {
                return Err(format!(
                    "there is no task `{}` in this lesson; task ids: {}",
                    crate::domain::limits::excerpt(&done.task_id),
                    ids(lesson.tasks.iter().map(|t| t.id.as_str()))
                ));
            };
            let completed = completed_tasks(before);
            let already = completed.contains(&task.id.as_str());
            let remaining = ids(lesson
                .tasks
                .iter()
                .map(|t| t.id.as_str())
                .filter(|id| *id != task.id && !completed.contains(id)));
            Ok(Recorded {
                result: json!({
                    "taskId": task.id,
                    "completed": true,
                    "alreadyCompleted": already,
                    "remaining": remaining,
                }),
                outcome: (!already).then_some(TutorOutcome::Task(TaskDone {
                    task_id: task.id.clone(),
                    evidence: done.evidence.map(clean).filter(|e| !e.is_empty()),
                })),
                student: None,
            })
        }
        "mark_item_mastered" => {
            let mastered: ItemMastered = parse(tool, arguments)?;
            mark_mastered(mastered, lesson, before, cx)
        }
        "play_student_audio" => {
            #[derive(Deserialize)]
            #[serde(rename_all = "camelCase")]
            struct Args {
                recording_id: String,
                reason: Option<String>,
            }
            let a: Args = parse(tool, arguments)?;
            let recorded = || {
                lesson
                    .review_items
                    .iter()
                    .filter(|i| i.audio.is_some())
                    .map(|i| i.id.as_str())
            };
            let Some((item, audio)) = find_item(&lesson.review_items, &a.recording_id)
                .and_then(|i| i.audio.as_ref().map(|audio| (i, audio)))
            else {
                return Err(format!(
                    "there is no recording for `{}` in this lesson; items with a recording: {}",
                    crate::domain::limits::excerpt(&a.recording_id),
                    ids(recorded())
                ));
            };
            Ok(Recorded {
                result: json!({
                    "itemId": item.id,
                    "text": item.text,
                    "audio": audio,
                    "reason": a.reason,
                    "message": "Play this recording to the student, then compare it with the correct form.",
                }),
                outcome: None,
                student: None,
            })
        }
        _ => Err(format!("`{tool}` is not a tutor tool")),
    }
}

/// `mark_for_review`: the error is stored for the teacher and, in a
/// session for a student record, queued for their review (box 1, due at
/// once); the answer says which.
fn log_error(
    tool: &str,
    arguments: &Value,
    before: &[TutorOutcome],
    cx: CallContext<'_>,
) -> Result<Recorded, String> {
    #[derive(Deserialize)]
    #[serde(rename_all = "camelCase")]
    struct Args {
        error_type: String,
        student_said: String,
        correct_form: String,
        severity: f64,
        explanation: Option<String>,
    }
    let a: Args = parse(tool, arguments)?;
    let logged = before
        .iter()
        .filter(|o| matches!(o, TutorOutcome::Error(_)))
        .count();
    let error = LoggedError {
        error_type: clean(a.error_type),
        student_said: clean(a.student_said),
        correct_form: clean(a.correct_form),
        severity: a.severity.round().clamp(1.0, 10.0) as u8,
        explanation: a.explanation.map(clean).filter(|e| !e.is_empty()),
    };
    let mut result = json!({"logged": true, "errorsLogged": logged + 1});
    let student = match cx.student {
        Some(_) => {
            let schedule = Schedule::new_item(cx.now);
            result["queued"] = json!(true);
            result["box"] = json!(schedule.leitner_box);
            result["dueAt"] = json!(schedule.due_at);
            result["message"] = json!(
                "Logged, and queued for this student's review: due at once, so their next review lesson practises it."
            );
            Some(StudentChange::Queue(schedule))
        }
        None => {
            result["queued"] = json!(false);
            result["message"] = json!(
                "Logged for the teacher's view of this run only: the session has no student record, so nothing is queued for review."
            );
            None
        }
    };
    Ok(Recorded {
        result,
        outcome: Some(TutorOutcome::Error(error)),
        student,
    })
}

/// `update_user_profile`: the fact is stored for the teacher and, in a
/// session for a student record, saved to their profile; the answer says
/// which, and whether later lessons will see it.
fn save_fact(tool: &str, arguments: &Value, cx: CallContext<'_>) -> Result<Recorded, String> {
    let fact: ProfileFact = parse(tool, arguments)?;
    let (result, student) = match cx.student {
        Some(s) => (
            json!({
                "saved": "studentProfile",
                "laterLessonsSeeIt": true,
                "message": if s.uses_facts {
                    "Saved to the student's profile: their later lessons that use profile facts (this one does) get it in their prompt."
                } else {
                    "Saved to the student's profile: their later lessons that use profile facts get it in their prompt (this lesson does not use them)."
                },
            }),
            Some(StudentChange::SaveFact),
        ),
        None => (
            json!({
                "saved": "thisRunOnly",
                "laterLessonsSeeIt": false,
                "message": "Recorded for the teacher's view of this run only: the session has no student record, so later lessons will not know it.",
            }),
            None,
        ),
    };
    Ok(Recorded {
        result,
        outcome: Some(TutorOutcome::Fact(ProfileFact {
            category: clean(fact.category),
            value: clean(fact.value),
            confidence: fact.confidence.map(|c| c.clamp(0.0, 1.0)),
        })),
        student,
    })
}

/// `mark_item_mastered`: a lesson's own item is recorded for the teacher;
/// a queue item this session offered (`q-<id>`) moves on in the student's
/// queue by the Leitner rule. Any other id is refused, naming the valid
/// ones.
fn mark_mastered(
    mastered: ItemMastered,
    lesson: &LessonDraft,
    before: &[TutorOutcome],
    cx: CallContext<'_>,
) -> Result<Recorded, String> {
    let offered: &[QueueItem] = cx.student.map_or(&[], |s| &s.due);
    let queued =
        parse_offer_id(&mastered.item_id).and_then(|id| offered.iter().find(|i| i.id == id));
    let item_id = match (find_item(&lesson.review_items, &mastered.item_id), queued) {
        (Some(item), _) => item.id.clone(),
        (None, Some(item)) => item.offer_id(),
        (None, None) => {
            let ids = lesson
                .review_items
                .iter()
                .map(|i| i.id.clone())
                .chain(offered.iter().map(QueueItem::offer_id))
                .collect::<Vec<_>>();
            return Err(format!(
                "there is no review item `{}` in this lesson; item ids: {}",
                crate::domain::limits::excerpt(&mastered.item_id),
                ids_text(&ids)
            ));
        }
    };
    let already = before
        .iter()
        .any(|o| matches!(o, TutorOutcome::Mastered(m) if m.item_id == item_id));
    let mut result = json!({"itemId": item_id, "mastered": true, "alreadyMastered": already});
    let mut student = None;
    match queued {
        None => {
            result["message"] = json!(
                "Recorded for the teacher's view of this run (one of the lesson's own items, which are not in a review queue)."
            );
        }
        Some(_) if already => {
            result["message"] = json!("Already moved on in this session: nothing changed.");
        }
        Some(item) if item.schedule.left_queue() => {
            result["message"] = json!("This item has already left the student's review queue.");
        }
        Some(item) => {
            let to = item.schedule.mastered(cx.now);
            result["box"] = json!(to.leitner_box);
            if to.left_queue() {
                result["leftQueue"] = json!(true);
                result["message"] = json!(format!(
                    "Mastered in the last box ({BOXES}): it has left the student's review queue."
                ));
            } else {
                result["leftQueue"] = json!(false);
                result["dueAt"] = json!(to.due_at);
                result["message"] = json!(format!(
                    "Moved to box {} of {BOXES} in the student's review queue: it comes back on {}.",
                    to.leitner_box,
                    format_utc(to.due_at)
                ));
            }
            student = Some(StudentChange::Move { item: item.id, to });
        }
    }
    Ok(Recorded {
        result,
        outcome: (!already).then_some(TutorOutcome::Mastered(ItemMastered {
            item_id,
            confidence: mastered.confidence.map(|c| c.clamp(1, 5)),
        })),
        student,
    })
}

/// The queue items a review session offered (`context`) that its run
/// (`outcomes`) did not mark mastered: they go back to box 1 when it ends.
pub fn missed_offers(context: &StudentContext, outcomes: &[TutorOutcome]) -> Vec<i64> {
    context
        .due
        .iter()
        .filter(|item| {
            let id = item.offer_id();
            !outcomes
                .iter()
                .any(|o| matches!(o, TutorOutcome::Mastered(m) if m.item_id == id))
        })
        .map(|item| item.id)
        .collect()
}

fn ids_text(ids: &[String]) -> String {
    if ids.is_empty() {
        "none".into()
    } else {
        ids.join(", ")
    }
}

pub(super) fn find_item<'a>(items: &'a [ReviewItem], id: &str) -> Option<&'a ReviewItem> {
    items.iter().find(|i| i.id == id)
}

fn completed_tasks(outcomes: &[TutorOutcome]) -> Vec<&str> {
    outcomes
        .iter()
        .filter_map(|o| match o {
            TutorOutcome::Task(t) => Some(t.task_id.as_str()),
            _ => None,
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::domain::lesson::review::ReviewItem;
    use crate::domain::lesson::run_report::{report, RunFacts};
    use crate::domain::lesson::LessonTask;

    const NO_STUDENT: CallContext<'static> = CallContext {
        now: 0,
        student: None,
    };

    fn lesson() -> LessonDraft {
        let mut draft = LessonDraft::new("Café");
        draft.tasks = vec![
            LessonTask {
                id: "greet".into(),
                text: "Greet the waiter".into(),
            },
            LessonTask {
                id: "order".into(),
                text: "Order a drink".into(),
            },
        ];
        draft.review_items = vec![
            ReviewItem {
                id: "fui".into(),
                text: "Ayer fui al mercado".into(),
                audio: Some("rec/fui.webm".into()),
            },
            ReviewItem {
                id: "comi".into(),
                text: "Comí paella".into(),
                audio: None,
            },
        ];
        draft
    }

    #[test]
    fn an_error_is_stored_with_its_type_said_correct_and_severity() {
        let r = record(
            "mark_for_review",
            &json!({"errorType": "grammar", "studentSaid": " yo soy hambre ", "correctForm": "tengo hambre", "severity": 4}),
            &lesson(),
            &[],
            NO_STUDENT,
        )
        .unwrap();
        assert_eq!(r.result["errorsLogged"], 1);
        assert_eq!(
            r.outcome,
            Some(TutorOutcome::Error(LoggedError {
                error_type: "grammar".into(),
                student_said: "yo soy hambre".into(),
                correct_form: "tengo hambre".into(),
                severity: 4,
                explanation: None,
            }))
        );
        let missing = record(
            "mark_for_review",
            &json!({"errorType": "grammar"}),
            &lesson(),
            &[],
            NO_STUDENT,
        );
        assert!(missing
            .unwrap_err()
            .contains("invalid arguments for `mark_for_review`"));
    }

    #[test]
    fn an_unknown_task_is_refused_naming_the_valid_ids_and_a_repeat_is_not_stored_twice() {
        let l = lesson();
        let err = record(
            "mark_task_complete",
            &json!({"taskId": "pay"}),
            &l,
            &[],
            NO_STUDENT,
        )
        .unwrap_err();
        assert_eq!(
            err,
            "there is no task `pay` in this lesson; task ids: greet, order"
        );
        let first = record(
            "mark_task_complete",
            &json!({"taskId": "greet"}),
            &l,
            &[],
            NO_STUDENT,
        )
        .unwrap();
        assert_eq!(first.result["remaining"], "order");
        let stored = first.outcome.unwrap();
        let again = record(
            "mark_task_complete",
            &json!({"taskId": "greet"}),
            &l,
            &[stored],
            NO_STUDENT,
        )
        .unwrap();
        assert_eq!(again.result["alreadyCompleted"], true);
        assert_eq!(again.outcome, None);
    }

    #[test]
    fn review_tools_take_only_the_lessons_item_and_recording_ids() {
        let l = lesson();
        let err = record(
            "mark_item_mastered",
            &json!({"itemId": "x"}),
            &l,
            &[],
            NO_STUDENT,
        )
        .unwrap_err();
        assert!(err.ends_with("item ids: fui, comi"), "{err}");
        let ok = record(
            "mark_item_mastered",
            &json!({"itemId": "comi", "confidence": 9}),
            &l,
            &[],
            NO_STUDENT,
        )
        .unwrap();
        assert_eq!(
            ok.outcome,
            Some(TutorOutcome::Mastered(ItemMastered {
                item_id: "comi".into(),
                confidence: Some(5)
            }))
        );
        let no_audio = record(
            "play_student_audio",
            &json!({"recordingId": "comi"}),
            &l,
            &[],
            NO_STUDENT,
        )
        .unwrap_err();
        assert!(
            no_audio.ends_with("items with a recording: fui"),
            "{no_audio}"
        );
        let played = record(
            "play_student_audio",
            &json!({"recordingId": "fui"}),
            &l,
            &[],
            NO_STUDENT,
        )
        .unwrap();
        assert_eq!(played.result["audio"], "rec/fui.webm");
        assert_eq!(played.outcome, None);
        let empty = LessonDraft::new("x");
        let none = record(
            "mark_item_mastered",
            &json!({"itemId": "fui"}),
            &empty,
            &[],
            NO_STUDENT,
        )
        .unwrap_err();
        assert!(none.ends_with("item ids: none"), "{none}");
    }

    #[test]
    fn the_report_lists_every_task_and_the_last_summary() {
        let l = lesson();
        let mut outcomes = Vec::new();
        for (tool, args) in [
            (
                "mark_task_complete",
                json!({"taskId": "order", "evidence": "Un café, por favor"}),
            ),
            ("mark_item_mastered", json!({"itemId": "fui"})),
            (
                "update_user_profile",
                json!({"category": "interest", "value": "football", "confidence": 3}),
            ),
            (
                "show_session_summary",
                json!({"summary": "first", "strengths": [], "areasToImprove": []}),
            ),
            (
                "show_session_summary",
                json!({"summary": "Good work", "strengths": ["ordering"], "areasToImprove": ["past tense"], "stars": 4}),
            ),
        ] {
            if let Some(o) = record(tool, &args, &l, &outcomes, NO_STUDENT)
                .unwrap()
                .outcome
            {
                outcomes.push(o);
            }
        }
        let run = RunFacts {
            session_id: "s1".into(),
            student: Some("Ana".into()),
            started_at: 100,
            ended_at: None,
            last_activity: 700,
            trial: false,
        };
        let r = report(run, &l, outcomes);
        assert_eq!(r.duration_seconds, 600);
        assert_eq!(
            r.tasks
                .iter()
                .map(|t| (t.task.id.as_str(), t.done))
                .collect::<Vec<_>>(),
            [("greet", false), ("order", true)]
        );
        assert_eq!(r.tasks[1].evidence.as_deref(), Some("Un café, por favor"));
        assert_eq!(r.mastered[0].text.as_deref(), Some("Ayer fui al mercado"));
        assert_eq!(r.facts[0].confidence, Some(1.0));
        let summary = r.summary.unwrap();
        assert_eq!(summary.summary, "Good work");
        assert_eq!(summary.stars, Some(4));
    }

    #[test]
    fn outcomes_serialise_with_their_kind() {
        let o = TutorOutcome::Task(TaskDone {
            task_id: "greet".into(),
            evidence: None,
        });
        let v = serde_json::to_value(&o).unwrap();
        assert_eq!(v, json!({"kind": "task", "taskId": "greet"}));
        assert_eq!(o.kind(), "task");
        let back: TutorOutcome = serde_json::from_value(v).unwrap();
        assert_eq!(back, o);
    }

    fn queued(id: i64, leitner_box: u8) -> QueueItem {
        QueueItem {
            id,
            session_id: None,
            error_type: "grammar".into(),
            student_said: "yo soy hambre".into(),
            correct_form: "tengo hambre".into(),
            explanation: None,
            severity: 5,
            schedule: Schedule {
                leitner_box,
                due_at: 10,
                mastered_at: None,
            },
            last_reviewed_at: None,
            created_at: 1,
        }
    }

    fn ana(due: Vec<QueueItem>) -> StudentContext {
        StudentContext {
            student_id: 7,
            uses_facts: false,
            due,
            facts: vec![],
        }
    }

    const NOW: i64 = 1_000_000;

    #[test]
    fn an_error_is_queued_for_a_students_review_and_says_so_or_says_it_is_not() {
        let args = json!({"errorType": "grammar", "studentSaid": "yo soy", "correctForm": "tengo", "severity": 3});
        let student = ana(vec![]);
        let cx = CallContext {
            now: NOW,
            student: Some(&student),
        };
        let r = record("mark_for_review", &args, &lesson(), &[], cx).unwrap();
        assert_eq!(
            r.student,
            Some(StudentChange::Queue(Schedule::new_item(NOW)))
        );
        assert_eq!(
            (r.result["queued"].clone(), r.result["dueAt"].clone()),
            (json!(true), json!(NOW))
        );
        let alone = record("mark_for_review", &args, &lesson(), &[], NO_STUDENT).unwrap();
        assert_eq!(alone.student, None);
        assert_eq!(alone.result["queued"], false);
        assert!(alone.result["message"]
            .as_str()
            .unwrap()
            .contains("no student record"));
    }

    #[test]
    fn facts_are_saved_to_a_students_profile_or_kept_with_the_run_and_summaries_are_never_shown() {
        let args = json!({"category": "interest", "value": "football"});
        let student = ana(vec![]);
        let cx = CallContext {
            now: NOW,
            student: Some(&student),
        };
        let saved = record("update_user_profile", &args, &lesson(), &[], cx).unwrap();
        assert_eq!(saved.student, Some(StudentChange::SaveFact));
        assert_eq!(saved.result["saved"], "studentProfile");
        let run_only = record("update_user_profile", &args, &lesson(), &[], NO_STUDENT).unwrap();
        assert_eq!(run_only.result["saved"], "thisRunOnly");
        assert!(run_only.result.get("remembered").is_none());
        let summary = record(
            "show_session_summary",
            &json!({"summary": "Good", "strengths": [], "areasToImprove": []}),
            &lesson(),
            &[],
            cx,
        )
        .unwrap();
        assert!(summary.result.get("shown").is_none());
        assert!(summary.result["message"]
            .as_str()
            .unwrap()
            .contains("shows the student nothing"));
    }

    #[test]
    fn an_offered_queue_item_moves_to_its_next_box_and_other_queue_ids_are_refused() {
        let student = ana(vec![queued(12, 1), queued(13, BOXES)]);
        let cx = CallContext {
            now: NOW,
            student: Some(&student),
        };
        let l = lesson();
        let moved = record(
            "mark_item_mastered",
            &json!({"itemId": "q-12"}),
            &l,
            &[],
            cx,
        )
        .unwrap();
        let to = Schedule::new_item(10).mastered(NOW);
        assert_eq!(moved.student, Some(StudentChange::Move { item: 12, to }));
        assert_eq!(moved.result["box"], 2);
        assert_eq!(moved.result["dueAt"], to.due_at);
        let again = record(
            "mark_item_mastered",
            &json!({"itemId": "q-12"}),
            &l,
            &[moved.outcome.unwrap()],
            cx,
        )
        .unwrap();
        assert_eq!((again.student, again.outcome), (None, None));
        let out = record(
            "mark_item_mastered",
            &json!({"itemId": "q-13"}),
            &l,
            &[],
            cx,
        )
        .unwrap();
        assert_eq!(out.result["leftQueue"], true);
        let refused = record(
            "mark_item_mastered",
            &json!({"itemId": "q-99"}),
            &l,
            &[],
            cx,
        )
        .unwrap_err();
        assert!(
            refused.ends_with("item ids: fui, comi, q-12, q-13"),
            "{refused}"
        );
        let fixed = record("mark_item_mastered", &json!({"itemId": "fui"}), &l, &[], cx).unwrap();
        assert_eq!(fixed.student, None, "a lesson's own item is in no queue");
    }

    #[test]
    fn offered_items_not_mastered_in_the_run_are_the_missed_ones() {
        let student = ana(vec![queued(12, 2), queued(13, 1)]);
        let mastered = TutorOutcome::Mastered(ItemMastered {
            item_id: "q-13".into(),
            confidence: None,
        });
        assert_eq!(missed_offers(&student, &[mastered]), [12]);
        assert_eq!(missed_offers(&student, &[]), [12, 13]);
    }
}
