//! Workflow definitions over the JSON API (key scope `workflows:write`):
//! read a definition with its ETag, apply one edit on top of the version
//! read (`If-Match`, as for the bindings), read the history. The same
//! `server::workflows::edit` the settings page and the workflow agent use.

use crate::domain::api_key::Scope;
use crate::domain::workflow_def::{trigger_types, Edit};
use crate::server::rest::bindings::{etag, if_match};
use crate::server::rest::{json_body, ApiKey};
use crate::server::store::workflow_defs;
use crate::server::{workflows, AppState, ServerError};
use axum::extract::rejection::JsonRejection;
use axum::extract::{Path, State};
use axum::http::{header, HeaderMap};
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post};
use axum::{Json, Router};
use serde_json::json;

/// Most history entries one request returns.
pub const HISTORY_MAX: i64 = 100;

/// Workflow definition routes.
pub fn router() -> Router<AppState> {
    Router::new()
        .route("/api/workflows/{id}/definition", get(read))
        .route("/api/workflows/{id}/edits", post(edit))
        .route("/api/workflows/{id}/history", get(history))
}

fn answer(id: &str, found: workflow_defs::Versioned) -> Response {
    (
        [(header::ETAG, etag(found.version))],
        Json(json!({
            "workflowId": id,
            "version": found.version,
            "definition": found.definition,
            "triggerTypes": trigger_types(),
        })),
    )
        .into_response()
}

/// `GET /api/workflows/{id}/definition`: the definition, its version as
/// the ETag, and the trigger types it may use.
async fn read(
    key: ApiKey,
    State(state): State<AppState>,
    Path(id): Path<String>,
) -> Result<Response, ServerError> {
    key.require(Scope::WorkflowsWrite)?;
    Ok(answer(&id, workflows::get(&state, &id).await?))
}

/// `POST /api/workflows/{id}/edits` with one edit (`{"edit": "add_step",
/// "step_type": "custom_agent", "name": "Verify identity"}`) and `If-Match`.
async fn edit(
    key: ApiKey,
    State(state): State<AppState>,
    Path(id): Path<String>,
    headers: HeaderMap,
    body: Result<Json<Edit>, JsonRejection>,
) -> Result<Response, ServerError> {
    key.require(Scope::WorkflowsWrite)?;
    let expected = if_match(&headers)?;
    let change = json_body(body, crate::domain::limits::API_BODY_MAX_BYTES)?;
    let by = format!("API key “{}”", key.name());
    let saved = workflows::edit(&state, &id, &change, Some(expected), &by).await?;
    Ok(answer(&id, saved))
}

/// `GET /api/workflows/{id}/history`: the saved versions, newest first,
/// each with its edit and author.
async fn history(
    key: ApiKey,
    State(state): State<AppState>,
    Path(id): Path<String>,
) -> Result<Response, ServerError> {
    key.require(Scope::WorkflowsWrite)?;
    workflows::get(&state, &id).await?;
    let entries = workflow_defs::history(&state.db, &id, HISTORY_MAX).await?;
    Ok(Json(json!({"workflowId": id, "versions": entries})).into_response())
}
