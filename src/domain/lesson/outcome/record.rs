//! One tutor tool's call turned into its outcome (or refused, naming the
//! valid ids), and what the session has completed so far.

use super::args::{clean, find_item, ids, parse};
use super::kinds::{CallContext, ItemMastered, LessonSummary, Recorded, TaskDone, TutorOutcome};
use super::student::{log_error, mark_mastered, save_fact};
use crate::domain::lesson::LessonDraft;
use serde::Deserialize;
use serde_json::{json, Value};

/// Whether `tool` is a tutor tool Switchboard runs in a lesson session.
pub fn is_tutor_tool(tool: &str) -> bool {
    crate::domain::lesson::tools::tutor_tool(tool).is_some()
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

fn completed_tasks(outcomes: &[TutorOutcome]) -> Vec<&str> {
    outcomes
        .iter()
        .filter_map(|o| match o {
            TutorOutcome::Task(t) => Some(t.task_id.as_str()),
            _ => None,
        })
        .collect()
}
