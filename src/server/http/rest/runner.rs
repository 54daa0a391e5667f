//! The agent runner's doors: `POST /api/sessions/{id}/agent/step` (one
//! action of a model driving a session), `GET /api/model` (whether a model
//! is configured, and how to configure one), and the trials a signed-in
//! user opens to try their configuration with it — a lesson (`POST
//! /api/lessons/{id}/trials`) or a vibe (`POST /api/vibes/{id}/trials`).
//!
//! A step is driven either by the session's backend (its session token) or
//! by a signed-in user from the app's own pages (same-origin, as the
//! cookie authenticates it) whom `sessions::may_drive` lets drive it: the
//! runner can do nothing that user could not.

use crate::domain::agent_runner::StepRequest;
use crate::domain::limits::STUDENT_MAX_CHARS;
use crate::domain::session_access::Act;
use crate::domain::session_origin::Opener;
use crate::domain::user::Role;
use crate::domain::workflow_chat::CHAT_BODY_MAX_BYTES;
use crate::error::ApiError;
use crate::server::agent::{runner, sessions};
use crate::server::auth::require_same_origin;
use crate::server::http::extract::{path_id, Admin, BearerToken, JsonBody, SignedIn, Teacher};
use crate::server::{store, AppState, ServerError};
use axum::extract::{DefaultBodyLimit, Path, State};
use axum::http::{HeaderMap, StatusCode};
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post};
use axum::{Json, Router};
use serde::Deserialize;
use serde_json::json;

/// The runner's routes.
pub fn router() -> Router<AppState> {
    Router::new()
        .route(
            "/api/sessions/{id}/agent/step",
            post(step).layer(DefaultBodyLimit::max(CHAT_BODY_MAX_BYTES)),
        )
        .route("/api/model", get(model))
        .route("/api/lessons/{id}/trials", post(try_lesson))
        .route("/api/vibes/{id}/trials", post(try_vibe))
}

/// `POST /api/sessions/{id}/agent/step`: the history with one message
/// added, whether the turn is complete, and the session's state.
async fn step(
    State(state): State<AppState>,
    Path(id): Path<String>,
    SignedIn(user): SignedIn,
    BearerToken(token): BearerToken,
    headers: HeaderMap,
    JsonBody(request): JsonBody<StepRequest, CHAT_BODY_MAX_BYTES>,
) -> Result<Response, ServerError> {
    let row = match (token, user) {
        (Some(token), _) => {
            sessions::admit(&state, &id, Some(&token), Act::CallTool)
                .await?
                .row
        }
        (None, Some(user)) => {
            require_same_origin(&state, &headers)?;
            // Seeing it first: another teacher's session is 404, not 403.
            let row = sessions::watchable(&state, &id, sessions::viewer_of(&user)).await?;
            sessions::may_drive(&row, &user)?;
            row
        }
        (None, None) => return Err(ApiError::Unauthenticated.into()),
    };
    Ok(Json(runner::step(&state, row, request).await?).into_response())
}

/// `GET /api/model` (signed in): the model the runner and the workflow
/// chat use, or what to do to have one: for an admin, the settings to set;
/// for a teacher, who can (a teacher cannot set the server's environment).
async fn model(
    State(state): State<AppState>,
    SignedIn(user): SignedIn,
) -> Result<Response, ServerError> {
    let user = user.ok_or(ApiError::Unauthenticated)?;
    Ok(Json(match &state.config.llm {
        Ok(llm) => json!({"configured": true, "model": llm.model}),
        Err(help) if user.0.role == Role::Admin => json!({"configured": false, "help": help}),
        Err(_) => json!({"configured": false, "help": NO_MODEL_FOR_TEACHERS}),
    })
    .into_response())
}

/// What a teacher is told when no model is configured.
const NO_MODEL_FOR_TEACHERS: &str = "No model is set up to play the tutor yet: \
    ask an admin of this Switchboard to configure one.";

/// `POST /api/lessons/{id}/trials` body.
#[derive(Debug, Default, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
struct LessonTrial {
    /// Who the teacher plays (a name), optional.
    #[serde(default)]
    student: Option<String>,
}

/// `POST /api/lessons/{id}/trials`: the lesson's owner (or an admin)
/// opens a trial run of it → 201 `{"sessionId"}`.
async fn try_lesson(
    Teacher(user): Teacher,
    State(state): State<AppState>,
    Path(raw): Path<String>,
    JsonBody(body): JsonBody<LessonTrial>,
) -> Result<Response, ServerError> {
    let lesson_id = path_id(&raw, "id")?;
    let student = body
        .student
        .as_deref()
        .map(str::trim)
        .filter(|s| !s.is_empty());
    if student.is_some_and(|s| s.chars().count() > STUDENT_MAX_CHARS) {
        return Err(ApiError::invalid(
            "student",
            format!("must be at most {STUDENT_MAX_CHARS} characters"),
        )
        .into());
    }
    // Owner-scoped: another teacher's lesson is a 404, as on its page.
    let lesson = store::lessons::get(&state.db, &user.view(), lesson_id).await?;
    // A trial is the teacher playing a student: it keeps the name for the
    // list but touches no student record (their queue, their profile).
    let run = sessions::lesson_run(lesson_id, &lesson.draft, student, None);
    let opened = sessions::open_lesson(&state, run, &Opener::trial(user.0.id)).await?;
    Ok(created(&opened.id))
}

/// `POST /api/vibes/{id}/trials` body.
#[derive(Debug, Default, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
struct VibeTrial {
    /// The agent to start with (default: the vibe's default agent).
    #[serde(default)]
    agent_id: Option<String>,
}

/// `POST /api/vibes/{id}/trials` (admins): a trial text call in the vibe
/// → 201 `{"sessionId"}`.
async fn try_vibe(
    Admin(admin): Admin,
    State(state): State<AppState>,
    Path(vibe): Path<String>,
    JsonBody(body): JsonBody<VibeTrial>,
) -> Result<Response, ServerError> {
    debug_assert_eq!(admin.0.role, Role::Admin);
    let opened = sessions::open_vibe(
        &state,
        &vibe,
        body.agent_id.as_deref(),
        &Opener::trial(admin.0.id),
    )
    .await?;
    Ok(created(&opened.id))
}

/// 201 with the new session's id (its page is `/sessions/{id}`).
fn created(id: &str) -> Response {
    (StatusCode::CREATED, Json(json!({"sessionId": id}))).into_response()
}
