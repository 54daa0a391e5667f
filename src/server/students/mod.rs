//! Students: the one door every student route and session opening uses.
//!
//! [`visible`] is the only lookup of a student for a caller: it answers
//! 404 for a student the caller may not see (`domain::student::Viewer::
//! may_see`: their teacher, or an admin), so ids cannot be probed. A
//! session opened for a lesson takes its student record here
//! ([`for_lesson`]): by `studentId` (a student of the lesson's owner the
//! opener may see) or by `student` (a name: the owner's record of that
//! name, made if new). What the session knows of the student is fixed
//! when it opens ([`context`]) and, for a review lesson, its offered items
//! that were not mastered go back to box 1 when it ends ([`session_ended`]).

use crate::domain::lesson::outcome::missed_offers;
use crate::domain::lesson::record::LessonView;
use crate::domain::review_queue::Schedule;
use crate::domain::student::{facts_for_lesson, Student, StudentContext, StudentLabel, Viewer};
use crate::domain::student_view::{
    fold, StudentView, ViewParts, STUDENT_VIEW_ITEMS, STUDENT_VIEW_RUNS,
};
use crate::error::ApiError;
use crate::server::auth::AuthUser;
use crate::server::store::{lesson_outcomes, students};
use crate::server::{AppState, ServerError};

/// The signed-in account `user` as one who asks about students.
pub fn viewer_of(user: &AuthUser) -> Viewer {
    Viewer::of(user.0.id, user.0.role)
}

/// Student `id` with their teacher's name, if `viewer` may see them; 404
/// otherwise (whether it exists or not).
pub async fn visible(
    state: &AppState,
    viewer: Viewer,
    id: i64,
) -> Result<(Student, String), ServerError> {
    match students::get(&state.db, id).await? {
        Some((student, teacher)) if viewer.may_see(student.teacher_id) => Ok((student, teacher)),
        _ => Err(ApiError::NotFound(format!("Student {id}")).into()),
    }
}

/// Who a session of `lesson` opened by a caller acting as `opener` (the
/// key's user; none for a key no user made) runs for: student `id`, who
/// must be a student of the lesson's owner that the opener may see (else
/// 422 naming `studentId`), or the owner's record named `name` (made if
/// new). `None` when neither is given.
pub async fn for_lesson(
    state: &AppState,
    opener: Option<Viewer>,
    lesson: &LessonView,
    id: Option<i64>,
    name: Option<&StudentLabel>,
) -> Result<Option<Student>, ServerError> {
    if let Some(id) = id {
        let found = students::get(&state.db, id).await?;
        return match found {
            Some((student, _))
                if student.teacher_id == lesson.owner_id
                    && opener.is_none_or(|v| v.may_see(student.teacher_id)) =>
            {
                Ok(Some(student))
            }
            _ => Err(ApiError::invalid(
                "studentId",
                format!(
                    "there is no student {id} among the students of lesson {}'s teacher",
                    lesson.id
                ),
            )
            .into()),
        };
    }
    match name {
        Some(name) => Ok(Some(
            students::find_or_create(&state.db, lesson.owner_id, name, state.clock.now()).await?,
        )),
        None => Ok(None),
    }
}

/// What a session of `lesson` opened now for `student` knows of them: a
/// review lesson gets the items due for them, a lesson that uses profile
/// facts gets their known facts.
pub async fn context(
    state: &AppState,
    lesson: &LessonView,
    student: &Student,
) -> Result<StudentContext, ServerError> {
    let draft = &lesson.draft;
    let uses_facts = draft.tool_configuration.use_profile_facts;
    let due = if draft.review {
        students::due_items(&state.db, student.id, state.clock.now()).await?
    } else {
        Vec::new()
    };
    let facts = if uses_facts {
        let known = students::facts(&state.db, student.id, STUDENT_VIEW_ITEMS).await?;
        facts_for_lesson(&known)
    } else {
        Vec::new()
    };
    Ok(StudentContext {
        student_id: student.id,
        uses_facts,
        due,
        facts,
    })
}

/// Student `id`'s view, for `viewer` (404 unless they may see them).
pub async fn view(state: &AppState, viewer: Viewer, id: i64) -> Result<StudentView, ServerError> {
    let (student, teacher_name) = visible(state, viewer, id).await?;
    let runs = students::runs(&state.db, id, STUDENT_VIEW_RUNS).await?;
    let since = runs.last().map_or(i64::MAX, |r| r.started_at);
    let outcomes = lesson_outcomes::of_student(&state.db, id, since).await?;
    Ok(fold(ViewParts {
        student,
        teacher_name,
        runs,
        outcomes,
        facts: students::facts(&state.db, id, STUDENT_VIEW_ITEMS).await?,
        items: students::items(&state.db, id, STUDENT_VIEW_ITEMS).await?,
    }))
}

/// Session `session` has just ended: the queue items it offered that its
/// run did not mark mastered go back to box 1 (Leitner's rule for a
/// missed item), due after box 1's interval.
pub async fn session_ended(state: &AppState, session: &str) -> Result<(), ServerError> {
    let Some(context) = students::context_of(&state.db, session).await? else {
        return Ok(());
    };
    if context.due.is_empty() {
        return Ok(());
    }
    let outcomes = lesson_outcomes::for_session(&state.db, session).await?;
    let now = state.clock.now();
    let current = students::items_now(
        &state.db,
        context.student_id,
        &missed_offers(&context, &outcomes),
    )
    .await?;
    let mut tx = state.db.begin().await?;
    // An item another session moved on since (no longer due) stays put.
    for item in current.into_iter().filter(|i| i.schedule.is_due(now)) {
        let to: Schedule = item.schedule.missed(now);
        if to != item.schedule {
            students::move_item(&mut tx, context.student_id, item.id, to, now).await?;
        }
    }
    tx.commit().await?;
    Ok(())
}
