//! A tutor session's tutor tools: each records what it noted (an error to
//! review, a profile fact, a completed task, …) against the lesson, for
//! the teacher, and — for a session opened for a student record — what
//! changes on the student's record (their review queue, their profile).

use super::{Ctx, Declined, Family, Outcome};
use crate::domain::lesson::outcome::{self, CallContext};
use crate::domain::lesson::tools::TUTOR_TOOLS;
use crate::domain::student::StudentContext;
use crate::server::store::{lesson_outcomes, lessons, students};
use crate::server::{AppState, ServerError};
use futures_util::future::BoxFuture;

/// The tutor tools, run for tutor sessions.
pub const FAMILY: Family = Family {
    name: "tutor",
    tools: || TUTOR_TOOLS.iter().map(|t| t.id).collect(),
    runs_for: |kind| kind.lesson,
    claims: super::by_id_only,
    run,
};

fn run(cx: Ctx<'_>) -> BoxFuture<'_, Outcome> {
    Box::pin(async move {
        let Some(lesson_id) = cx.row.lesson_id else {
            return Ok(Err(Declined::Refused(
                "the lesson this session runs has been deleted".into(),
            )));
        };
        let lesson = lessons::get_any(&cx.state.db, lesson_id).await?;
        let before = lesson_outcomes::for_session(&cx.state.db, &cx.row.id).await?;
        let student = student_now(cx.state, &cx.row.id).await?;
        let call = CallContext {
            now: cx.state.clock.now(),
            student: student.as_ref(),
        };
        Ok(
            outcome::record(cx.tool, cx.arguments, &lesson.draft, &before, call)
                .map_err(Declined::Refused),
        )
    })
}

/// What session `session` knows of its student, with the queue items it
/// offered as they stand now (another session may have moved one).
async fn student_now(
    state: &AppState,
    session: &str,
) -> Result<Option<StudentContext>, ServerError> {
    let Some(mut context) = students::context_of(&state.db, session).await? else {
        return Ok(None);
    };
    let ids: Vec<i64> = context.due.iter().map(|i| i.id).collect();
    context.due = students::items_now(&state.db, context.student_id, &ids).await?;
    Ok(Some(context))
}
