//! A tutor session's tutor tools: each records what it noted (an error to
//! review, a profile fact, a completed task, …) against the lesson, for
//! the teacher.

use super::{Ctx, Declined, Family, Outcome};
use crate::domain::lesson::outcome;
use crate::domain::lesson::tools::TUTOR_TOOLS;
use crate::server::store::{lesson_outcomes, lessons};
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
        Ok(
            outcome::record(cx.tool, cx.arguments, &lesson.draft, &before)
                .map_err(Declined::Refused),
        )
    })
}
