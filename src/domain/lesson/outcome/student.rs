//! The calls that touch the student's own record: an error queued for
//! review, a profile fact, a review item mastered, and the offers a
//! session left unanswered.

use super::args::{clean, find_item, ids_text, parse};
use super::kinds::{
    CallContext, ItemMastered, LoggedError, ProfileFact, Recorded, StudentChange, TutorOutcome,
};
use crate::domain::lesson::LessonDraft;
use crate::domain::review_queue::{parse_offer_id, QueueItem, Schedule, BOXES};
use crate::domain::student::StudentContext;
use crate::domain::time::format_utc;
use serde::Deserialize;
use serde_json::{json, Value};

/// `mark_for_review`: the error is stored for the teacher and, in a
/// session for a student record, queued for their review (box 1, due at
/// once); the answer says which.
pub(super) fn log_error(
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
pub(super) fn save_fact(
    tool: &str,
    arguments: &Value,
    cx: CallContext<'_>,
) -> Result<Recorded, String> {
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
pub(super) fn mark_mastered(
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
