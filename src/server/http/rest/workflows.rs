//! Workflow definitions over the JSON API (key scope `workflows:write`):
//! read a definition with its ETag, apply one edit on top of the version
//! read (`If-Match`, as for the bindings), read the history. The same
//! `server::workflows::edit` the settings page and the workflow agent use.
//!
//! Also the settings page's two routes, for the signed-in admin: the
//! `workflow_changed` event stream (an API key with the scope may listen
//! too) and the workflow chat's one-action step.

use crate::domain::actor::Actor;
use crate::domain::workflow_chat::{ChatRequest, CHAT_BODY_MAX_BYTES};
use crate::domain::workflow_def::Edit;
use crate::domain::workflow_def::{trigger_types, Definition, TriggerType};
use crate::server::http::extract::{Admin, IfMatch, JsonBody, Key, KeyOrAdmin, WorkflowsWrite};
use crate::server::http::rest::bindings::etag;
use crate::server::http::rest::sessions::event_stream;
use crate::server::store::workflow_defs;
use crate::server::workflows::mcp::Editor;
use crate::server::{workflows, workflows::chat, AppState, ServerError};
use axum::extract::{DefaultBodyLimit, Path, State};
use axum::http::header;
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post};
use axum::{Json, Router};
use serde::Serialize;

/// Most history entries one request returns.
pub const HISTORY_MAX: i64 = 100;

/// Workflow definition routes.
pub fn router() -> Router<AppState> {
    Router::new()
        .route("/api/workflows/{id}/definition", get(read))
        .route("/api/workflows/{id}/edits", post(edit))
        .route("/api/workflows/{id}/history", get(history))
        .route("/api/workflows/{id}/events", get(events))
        .route(
            "/api/workflows/{id}/chat/step",
            post(chat_step).layer(DefaultBodyLimit::max(CHAT_BODY_MAX_BYTES)),
        )
}

/// A workflow's definition at a version, with the trigger types it may
/// use.
#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
struct DefinitionBody<'a> {
    workflow_id: &'a str,
    version: i64,
    definition: Definition,
    trigger_types: Vec<TriggerType>,
}

/// A workflow's saved versions.
#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
struct HistoryBody {
    workflow_id: String,
    versions: Vec<workflow_defs::HistoryEntry>,
}

/// The definition as body, its version as ETag.
fn answer(id: &str, found: workflow_defs::Versioned) -> Response {
    (
        [(header::ETAG, etag(found.version))],
        Json(DefinitionBody {
            workflow_id: id,
            version: found.version,
            definition: found.definition,
            trigger_types: trigger_types(),
        }),
    )
        .into_response()
}

/// `GET /api/workflows/{id}/definition`: the definition, its version as
/// the ETag, and the trigger types it may use — for a key, or the signed-in
/// admin (the settings page's Export link: the file its Import takes back).
async fn read(
    _: KeyOrAdmin<WorkflowsWrite>,
    State(state): State<AppState>,
    Path(id): Path<String>,
) -> Result<Response, ServerError> {
    Ok(answer(&id, workflows::get(&state, &id).await?))
}

/// `POST /api/workflows/{id}/edits` with one edit (`{"edit": "add_step",
/// "step_type": "custom_agent", "name": "Verify identity"}`) and `If-Match`.
async fn edit(
    key: Key<WorkflowsWrite>,
    State(state): State<AppState>,
    Path(id): Path<String>,
    IfMatch(expected): IfMatch,
    JsonBody(change): JsonBody<Edit>,
) -> Result<Response, ServerError> {
    let saved = workflows::edit(&state, &id, &change, Some(expected), &key.actor()).await?;
    Ok(answer(&id, saved))
}

/// `GET /api/workflows/{id}/history`: the saved versions, newest first,
/// each with its edit and author.
async fn history(
    _: Key<WorkflowsWrite>,
    State(state): State<AppState>,
    Path(id): Path<String>,
) -> Result<Response, ServerError> {
    workflows::get(&state, &id).await?;
    let versions = workflow_defs::history(&state.db, &id, HISTORY_MAX).await?;
    Ok(Json(HistoryBody {
        workflow_id: id,
        versions,
    })
    .into_response())
}

/// `GET /api/workflows/{id}/events`: `workflow_changed` each time the
/// definition is saved (by anyone, through any door), for the signed-in
/// admin's settings page or an API key with `workflows:write`. Counted
/// against the listener's stream cap; nothing is replayed — a page that
/// reconnects reads the definition again.
async fn events(
    who: KeyOrAdmin<WorkflowsWrite>,
    State(state): State<AppState>,
    Path(id): Path<String>,
) -> Result<Response, ServerError> {
    workflows::get(&state, &id).await?;
    let permit = state
        .streams
        .acquire(&who.stream_limits(state.config.max_streams_per_user))
        .await?;
    let rx = state.hub.subscribe_workflow(&id);
    Ok(event_stream(Vec::new(), Some(rx), 0, Some(permit)))
}

/// `POST /api/workflows/{id}/chat/step`: one action of the workflow chat
/// for the signed-in admin (from the app's own pages, as the cookie
/// authenticates it). The history with one message added.
async fn chat_step(
    Admin(admin): Admin,
    State(state): State<AppState>,
    Path(id): Path<String>,
    JsonBody(request): JsonBody<ChatRequest, CHAT_BODY_MAX_BYTES>,
) -> Result<Response, ServerError> {
    let editor = Editor {
        actor: Actor::admin(
            admin.0.id,
            &format!("{} (workflow agent)", admin.0.display_name),
        ),
    };
    let answer = chat::step(&state, &id, editor, request).await?;
    Ok(Json(answer).into_response())
}
