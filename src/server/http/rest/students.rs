//! Students over the API, for a signed-in teacher (their own; an admin:
//! everyone's) or an API key with the `students` scope (as the user who
//! made it): `GET /api/students`, `POST /api/students`,
//! `GET /api/students/{id}` (their runs, errors, facts, tasks, mastered
//! items and review queue). Every lookup of one student goes through
//! `server::students::visible`.

use crate::domain::student::{NewStudent, Student, StudentLabel, StudentSummary};
use crate::domain::student_view::StudentView;
use crate::error::ApiError;
use crate::server::http::extract::{path_id, ActingUser, JsonBody, Students};
use crate::server::store::students as rows;
use crate::server::{students, AppState, ServerError};
use axum::extract::{Path, State};
use axum::http::StatusCode;
use axum::routing::get;
use axum::{Json, Router};
use serde::Serialize;

/// Student routes.
pub fn router() -> Router<AppState> {
    Router::new()
        .route("/api/students", get(list).post(create))
        .route("/api/students/{id}", get(one))
}

/// `GET /api/students`'s answer.
#[derive(Debug, Serialize)]
struct StudentList {
    students: Vec<StudentSummary>,
}

/// `GET /api/students`: the caller's students (an admin: all), with their
/// runs and what is due in their queues.
async fn list(
    ActingUser { viewer, .. }: ActingUser<Students>,
    State(state): State<AppState>,
) -> Result<Json<StudentList>, ServerError> {
    let students = rows::list(&state.db, viewer, state.clock.now()).await?;
    Ok(Json(StudentList { students }))
}

/// `POST /api/students` `{"name"}` or `{"code"}`: a new student of the
/// caller's → 201 with the record; 409 when they have one of that name.
async fn create(
    ActingUser { viewer, .. }: ActingUser<Students>,
    State(state): State<AppState>,
    JsonBody(body): JsonBody<NewStudent>,
) -> Result<(StatusCode, Json<Student>), ServerError> {
    let label: StudentLabel = body.parse().map_err(ApiError::Invalid)?;
    let student = rows::create(&state.db, viewer.user_id, &label, state.clock.now()).await?;
    Ok((StatusCode::CREATED, Json(student)))
}

/// `GET /api/students/{id}`: everything about one student the caller may
/// see (404 otherwise).
async fn one(
    ActingUser { viewer, .. }: ActingUser<Students>,
    State(state): State<AppState>,
    Path(raw): Path<String>,
) -> Result<Json<StudentView>, ServerError> {
    let id = path_id(&raw, "id")?;
    Ok(Json(students::view(&state, viewer, id).await?))
}
