//! A student's rights over the JSON API: `DELETE /api/students/{id}`
//! removes all their data, `GET /api/students/{id}/export` gives it as a
//! JSON file. For the student's teacher or an admin, signed in or by an
//! API key scoped `students` acting as the account that made it
//! ([`ActingUser`]); anyone else gets 404, as for an unknown student.

use crate::server::http::extract::{path_id, ActingUser, Students};
use crate::server::student_data::{self, access::may_see, export};
use crate::server::{AppState, ServerError};
use axum::extract::{Path, State};
use axum::http::{header, StatusCode};
use axum::response::{IntoResponse, Response};
use axum::routing::{delete, get};
use axum::Router;

/// Student data routes.
pub fn router() -> Router<AppState> {
    Router::new()
        .route("/api/students/{id}", delete(remove))
        .route("/api/students/{id}/export", get(export_file))
}

/// `DELETE /api/students/{id}`: 204 once the student and all their data
/// are gone (their open sessions ended first); 404 for a student the
/// caller may not see or that does not exist.
async fn remove(
    who: ActingUser<Students>,
    State(state): State<AppState>,
    Path(id): Path<String>,
) -> Result<StatusCode, ServerError> {
    student_data::delete(&state, &who.viewer, path_id(&id, "id")?).await?;
    Ok(StatusCode::NO_CONTENT)
}

/// `GET /api/students/{id}/export`: the student's data as a JSON
/// attachment, streamed (`student_data::export`); 404 as for deleting.
async fn export_file(
    who: ActingUser<Students>,
    State(state): State<AppState>,
    Path(id): Path<String>,
) -> Result<Response, ServerError> {
    let student = may_see(&state, &who.viewer, path_id(&id, "id")?).await?;
    let disposition = format!("attachment; filename=\"student-{}.json\"", student.id);
    Ok((
        [
            (header::CONTENT_TYPE, "application/json".to_owned()),
            (header::CONTENT_DISPOSITION, disposition),
            (header::CACHE_CONTROL, "no-store".to_owned()),
        ],
        export::body(state, student),
    )
        .into_response())
}
