//! Opening a session (an agent's on a workflow or a vibe, a tutor's on a lesson
//! for a student) and issuing a new plugin token for one.

use crate::domain::api_key::Scope;
use crate::domain::session_origin::Opener;
use crate::domain::student::StudentLabel;
use crate::error::ApiError;
use crate::server::agent::sessions;
use crate::server::http::extract::{self, IssuePluginToken, JsonBody, Key, Session};
use crate::server::students;
use crate::server::{AppState, ServerError};
use axum::extract::State;
use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use axum::Json;
use serde::{Deserialize, Serialize};

#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub(super) struct OpenRequest {
    /// The workflow to start in, for an agent session…
    #[serde(default)]
    workflow_id: Option<String>,
    /// …or the lesson to run, for a tutor session.
    #[serde(default)]
    lesson_id: Option<i64>,
    /// Who a tutor session is for: a name, which finds or makes the lesson
    /// owner's student record of that name…
    #[serde(default)]
    student: Option<String>,
    /// …or the id of one of the lesson owner's student records.
    #[serde(default)]
    student_id: Option<i64>,
    /// …or the vibe to run in, for a session with agents.
    #[serde(default)]
    vibe_id: Option<String>,
    /// The vibe's agent to start with (default: its default agent).
    #[serde(default)]
    agent_id: Option<String>,
    /// Whether Switchboard runs the demo's built-in tools (default yes);
    /// `false` for a backend that executes its own and reports results.
    #[serde(default = "yes")]
    run_builtins: bool,
}

fn yes() -> bool {
    true
}

/// What opening a session answers: its id and its two credentials.
#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
struct OpenedBody {
    session_id: String,
    session_token: String,
    plugin_token: String,
}

/// What a new plugin token answers.
#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
struct PluginTokenBody {
    session_id: String,
    plugin_token: String,
}

pub(super) async fn open(
    key: Key<extract::Sessions>,
    State(state): State<AppState>,
    JsonBody(body): JsonBody<OpenRequest>,
) -> Result<Response, ServerError> {
    if body.agent_id.is_some() && body.vibe_id.is_none() {
        return Err(ApiError::invalid("agentId", "is only for vibe sessions").into());
    }
    if body.student.is_some() && body.lesson_id.is_none() {
        return Err(ApiError::invalid("student", "is only for lesson sessions").into());
    }
    if body.student_id.is_some() && body.lesson_id.is_none() {
        return Err(ApiError::invalid("studentId", "is only for lesson sessions").into());
    }
    let opened = match (&body.workflow_id, body.lesson_id, &body.vibe_id) {
        (Some(workflow), None, None) => {
            sessions::open(&state, workflow, &Opener::key(key.id()), body.run_builtins).await?
        }
        (None, None, Some(vibe)) => {
            sessions::open_vibe(
                &state,
                vibe,
                body.agent_id.as_deref(),
                &Opener::key(key.id()),
            )
            .await?
        }
        (_, _, Some(_)) => {
            return Err(ApiError::invalid(
                "vibeId",
                "give exactly one of workflowId, lessonId and vibeId",
            )
            .into())
        }
        (None, Some(lesson_id), None) => {
            key.require(Scope::LessonsRead)?;
            open_lesson(&state, &key, lesson_id, &body).await?
        }
        _ => {
            return Err(ApiError::invalid(
                "workflowId",
                "give exactly one of workflowId, lessonId and vibeId",
            )
            .into())
        }
    };
    Ok((
        StatusCode::CREATED,
        Json(OpenedBody {
            session_id: opened.id,
            session_token: opened.token,
            plugin_token: opened.plugin_token,
        }),
    )
        .into_response())
}

/// Opens a tutor session of lesson `lesson_id` with key `key`, for the
/// student `body` names (`student`, a name; or `studentId`), if any.
async fn open_lesson(
    state: &AppState,
    key: &crate::server::http::extract::ApiKey,
    lesson_id: i64,
    body: &OpenRequest,
) -> Result<sessions::Opened, ServerError> {
    // A blank name is refused like any other broken one (omit `student`
    // for a session without one).
    let label = body
        .student
        .as_deref()
        .map(|n| StudentLabel::name(n, "student"))
        .transpose()
        .map_err(ApiError::Invalid)?;
    if label.is_some() && body.student_id.is_some() {
        return Err(ApiError::invalid("studentId", "give studentId or student, not both").into());
    }
    let lesson =
        crate::server::store::lessons::get_for_key(&state.db, key.viewer(), lesson_id).await?;
    let opener = key
        .0
        .maker
        .map(|(id, role)| crate::domain::student::Viewer::of(id, role));
    let record =
        students::for_lesson(state, opener, &lesson, body.student_id, label.as_ref()).await?;
    let context = match &record {
        Some(student) => Some(students::context(state, &lesson, student).await?),
        None => None,
    };
    let shown = record.as_ref().map(|s| s.name.as_str());
    let run = sessions::lesson_run(lesson_id, &lesson.draft, shown, context);
    sessions::open_lesson(state, run, &Opener::key(key.id())).await
}

/// `POST /api/sessions/{id}/plugin-token` (session token): a new plugin
/// token for the session, replacing the one it had.
pub(super) async fn plugin_token(
    State(state): State<AppState>,
    session: Session<IssuePluginToken>,
) -> Result<Response, ServerError> {
    let plugin_token = sessions::issue_plugin_token(&state, &session.row).await?;
    Ok((
        StatusCode::CREATED,
        Json(PluginTokenBody {
            session_id: session.into_inner().row.id,
            plugin_token,
        }),
    )
        .into_response())
}
