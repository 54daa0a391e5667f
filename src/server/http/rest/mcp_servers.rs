//! Connected MCP servers over the JSON API, for a key scoped
//! `catalogue:write` (their tools are catalogue tools): add one, list them
//! and read one with their status, last error and imported tools — never
//! their headers —, and remove one. Every route goes through
//! `server::mcp_servers`, the one door.

use crate::server::http::extract::{path_id, CatalogueWrite, JsonBody, Key};
use crate::server::mcp_servers::{self, NewMcpServer, ServerView};
use crate::server::{AppState, ServerError};
use axum::extract::{Path, State};
use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use axum::routing::get;
use axum::{Json, Router};
use serde::Serialize;

/// Connected MCP server routes.
pub fn router() -> Router<AppState> {
    Router::new()
        .route("/api/mcp-servers", get(list).post(add))
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

/// Every server.
#[derive(Debug, Serialize)]
struct Servers {
    servers: Vec<ServerView>,
}

/// `GET /api/mcp-servers`: `{"servers": [...]}`, by name.
async fn list(
    _: Key<CatalogueWrite>,
    State(state): State<AppState>,
) -> Result<Json<Servers>, ServerError> {
    Ok(Json(Servers {
        servers: mcp_servers::list(&state).await?,
    }))
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
