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

mod args;
mod kinds;
mod record;
mod student;
pub(in crate::domain::lesson) use args::find_item;
pub use kinds::*;
pub use record::*;
pub use student::*;

#[cfg(test)]
mod tests {
    use super::*;
    use crate::domain::lesson::fixtures::cafe_lesson;
    use crate::domain::lesson::run_report::{report, RunFacts};
    use crate::domain::lesson::LessonDraft;
    use crate::domain::review_queue::{QueueItem, Schedule, BOXES};
    use crate::domain::student::StudentContext;
    use serde_json::json;

    const NO_STUDENT: CallContext<'static> = CallContext {
        now: 0,
        student: None,
    };

    #[test]
    fn an_error_is_stored_with_its_type_said_correct_and_severity() {
        let r = record(
            "mark_for_review",
            &json!({"errorType": "grammar", "studentSaid": " yo soy hambre ", "correctForm": "tengo hambre", "severity": 4}),
            &cafe_lesson(),
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
            &cafe_lesson(),
            &[],
            NO_STUDENT,
        );
        assert!(missing
            .unwrap_err()
            .contains("invalid arguments for `mark_for_review`"));
    }

    #[test]
    fn an_unknown_task_is_refused_naming_the_valid_ids_and_a_repeat_is_not_stored_twice() {
        let l = cafe_lesson();
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
        let l = cafe_lesson();
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
        let l = cafe_lesson();
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
        let r = record("mark_for_review", &args, &cafe_lesson(), &[], cx).unwrap();
        assert_eq!(
            r.student,
            Some(StudentChange::Queue(Schedule::new_item(NOW)))
        );
        assert_eq!(
            (r.result["queued"].clone(), r.result["dueAt"].clone()),
            (json!(true), json!(NOW))
        );
        let alone = record("mark_for_review", &args, &cafe_lesson(), &[], NO_STUDENT).unwrap();
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
        let saved = record("update_user_profile", &args, &cafe_lesson(), &[], cx).unwrap();
        assert_eq!(saved.student, Some(StudentChange::SaveFact));
        assert_eq!(saved.result["saved"], "studentProfile");
        let run_only = record(
            "update_user_profile",
            &args,
            &cafe_lesson(),
            &[],
            NO_STUDENT,
        )
        .unwrap();
        assert_eq!(run_only.result["saved"], "thisRunOnly");
        assert!(run_only.result.get("remembered").is_none());
        let summary = record(
            "show_session_summary",
            &json!({"summary": "Good", "strengths": [], "areasToImprove": []}),
            &cafe_lesson(),
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
        let l = cafe_lesson();
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
