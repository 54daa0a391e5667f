//! Connected MCP servers over the JSON API, for a key scoped
//! `catalogue:write` (their tools are catalogue tools): add one, list them
//! and read one with their status, last error and imported tools — never
//! their headers —, and remove one; and follow the list as it changes
//! (`/events`, also for the signed-in admin's page). Every route goes
//! through `server::mcp_servers`, the one door.

use crate::domain::mcp_server_view::ServerList;
use crate::server::http::extract::{path_id, CatalogueWrite, JsonBody, Key, KeyOrAdmin};
use crate::server::http::rest::event_streams::event_stream;
use crate::server::mcp_servers::{self, health, NewMcpServer, ServerView};
use crate::server::{AppState, ServerError};
use axum::extract::{Path, State};
use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use axum::routing::get;
use axum::{Json, Router};

/// Connected MCP server routes.
pub fn router() -> Router<AppState> {
    Router::new()
        .route("/api/mcp-servers", get(list).post(add))
        .route("/api/mcp-servers/events", get(events))
        .route("/api/mcp-servers/{id}", get(one).delete(remove))
}

/// `POST /api/mcp-servers {"name", "url", "headers"?}`: 201 with the
/// server (status `connecting`); 422 naming the field, 409 for a taken
/// name, nothing stored then. Connecting and importing go on in the
/// background.
async fn add(
    key: Key<CatalogueWrite>,
    State(state): State<AppState>,
    JsonBody(body): JsonBody<NewMcpServer>,
) -> Result<Response, ServerError> {
    let view = mcp_servers::add(&state, &key.actor(), body).await?;
    Ok((StatusCode::CREATED, Json(view)).into_response())
}

/// `GET /api/mcp-servers`: `{"servers": [...]}`, by name.
async fn list(
    _: Key<CatalogueWrite>,
    State(state): State<AppState>,
) -> Result<Json<ServerList>, ServerError> {
    Ok(Json(ServerList {
        servers: mcp_servers::list(&state).await?,
    }))
}

/// `GET /api/mcp-servers/events`: event `servers` with the whole list
/// (as `GET /api/mcp-servers` answers it) at once and after every change
/// — a status, an import, a server added or removed, calls (a few frames
/// a second at most) —, for an API key with `catalogue:write` or the
/// signed-in admin. Counted against the listener's stream cap; nothing is
/// replayed, as each frame is the whole list.
async fn events(
    who: KeyOrAdmin<CatalogueWrite>,
    State(state): State<AppState>,
) -> Result<Response, ServerError> {
    let permit = state
        .streams
        .acquire(&who.stream_limits(state.config.max_streams_per_user))
        .await?;
    let (first, rx) = health::subscribe(&state).await?;
    Ok(event_stream(vec![first.sse.clone()], rx, 0, Some(permit)))
}

/// `GET /api/mcp-servers/{id}`: the server, 404 if unknown.
async fn one(
    _: Key<CatalogueWrite>,
    State(state): State<AppState>,
    Path(id): Path<String>,
) -> Result<Json<ServerView>, ServerError> {
    Ok(Json(mcp_servers::view(&state, path_id(&id, "id")?).await?))
}

/// `DELETE /api/mcp-servers/{id}`: 204; its tools stay in the catalogue,
/// unavailable. 404 if unknown.
async fn remove(
    key: Key<CatalogueWrite>,
    State(state): State<AppState>,
    Path(id): Path<String>,
) -> Result<StatusCode, ServerError> {
    mcp_servers::remove(&state, &key.actor(), path_id(&id, "id")?).await?;
    Ok(StatusCode::NO_CONTENT)
}
