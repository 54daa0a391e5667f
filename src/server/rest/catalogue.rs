//! The catalogue over the JSON API, versioned like the bindings: read it
//! with its version as the ETag, add or change one tool with `If-Match`,
//! read its history and one version with what it changed, and restore an
//! earlier version. Reading takes `bindings:read` (the catalogue and the
//! bindings are the one tool policy) or `catalogue:write`; every change
//! takes `catalogue:write` and goes through `server::catalogue`, the same
//! code as the editor page and manifest imports.

use crate::domain::api_key::Scope;
use crate::domain::catalogue::CatalogueTool;
use crate::domain::catalogue_history::CatalogueDiff;
use crate::domain::ids::ToolId;
use crate::domain::limits::{API_BODY_MAX_BYTES, CATALOGUE_HISTORY_PAGE_MAX};
use crate::error::ApiError;
use crate::server::catalogue::{self, Changed};
use crate::server::rest::bindings::{etag, if_match};
use crate::server::rest::vibes::{expected, same_id};
use crate::server::rest::{json_body, path_id, ApiKey};
use crate::server::store::{bindings as tools, catalogue as versions};
use crate::server::{AppState, ServerError};
use axum::extract::rejection::JsonRejection;
use axum::extract::{Path, Query, State};
use axum::http::{header, HeaderMap, StatusCode};
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post, put};
use axum::{Json, Router};
use serde::Deserialize;
use serde_json::json;

/// The scopes that may read the catalogue and its history.
const READ: [Scope; 2] = [Scope::BindingsRead, Scope::CatalogueWrite];

/// Catalogue routes.
pub fn router() -> Router<AppState> {
    Router::new()
        .route("/api/catalogue", get(read))
        .route("/api/catalogue/tools/{id}", put(put_tool))
        .route("/api/catalogue/history", get(history))
        .route("/api/catalogue/history/{version}", get(one_version))
        .route("/api/catalogue/restore/{version}", post(restore))
}

/// The catalogue's version now (0 before its first).
async fn version_now(state: &AppState) -> Result<i64, ServerError> {
    Ok(versions::latest(&state.db).await?.map_or(0, |m| m.version))
}

/// `GET /api/catalogue`: `{"version", "tools"}` with `ETag: "version"`.
async fn read(key: ApiKey, State(state): State<AppState>) -> Result<Response, ServerError> {
    key.require_any(&READ)?;
    let version = version_now(&state).await?;
    let tools = tools::tools(&state.db).await?;
    Ok((
        [(header::ETAG, etag(version))],
        Json(json!({"version": version, "tools": tools})),
    )
        .into_response())
}

/// The answer to a change: the version in force after it, as body and ETag,
/// and the tools it added or changed (none when it changed nothing).
fn changed(done: Changed, status: StatusCode) -> Response {
    (
        status,
        [(header::ETAG, etag(done.version))],
        Json(json!({"version": done.version, "changed": done.tools})),
    )
        .into_response()
}

/// `PUT /api/catalogue/tools/{id}`: replaces a tool with `If-Match` naming
/// the catalogue version read (stale → 412), or adds one with
/// `If-None-Match: *` (taken → 409); neither → 428.
async fn put_tool(
    key: ApiKey,
    State(state): State<AppState>,
    Path(id): Path<String>,
    headers: HeaderMap,
    body: Result<Json<CatalogueTool>, JsonRejection>,
) -> Result<Response, ServerError> {
    key.require(Scope::CatalogueWrite)?;
    ToolId::parse(&id).map_err(ApiError::from)?;
    let expected = expected(&headers)?;
    let tool = json_body(body, API_BODY_MAX_BYTES)?;
    same_id(&id, tool.id.as_str())?;
    let create = expected.is_none();
    let done = catalogue::put_tool(&state, &key.actor(), &tool, create, expected).await?;
    let status = if create {
        StatusCode::CREATED
    } else {
        StatusCode::OK
    };
    Ok(changed(done, status))
}

/// `?before=` for the history.
#[derive(Debug, Deserialize)]
struct Page {
    before: Option<String>,
}

/// `GET /api/catalogue/history?before={version}`: up to
/// [`CATALOGUE_HISTORY_PAGE_MAX`] versions, newest first, each with its
/// summary, author and time; `before` in the answer is the next page's
/// (`null`: there is none).
async fn history(
    key: ApiKey,
    State(state): State<AppState>,
    Query(page): Query<Page>,
) -> Result<Response, ServerError> {
    key.require_any(&READ)?;
    let before = page
        .before
        .as_deref()
        .map(|raw| path_id(raw, "before"))
        .transpose()?;
    let list = versions::history(&state.db, before, CATALOGUE_HISTORY_PAGE_MAX).await?;
    let next = (list.len() as i64 == CATALOGUE_HISTORY_PAGE_MAX)
        .then(|| list.last().map(|m| m.version))
        .flatten()
        .filter(|v| *v > 1);
    Ok(Json(json!({"versions": list, "before": next})).into_response())
}

/// `?against=` for one version.
#[derive(Debug, Deserialize)]
struct Against {
    against: Option<String>,
}

/// `GET /api/catalogue/history/{version}?against={other}`: the version's
/// tools, who made it and when, and `diff`, what differs going from
/// version `against` (by default the one before it) to it.
async fn one_version(
    key: ApiKey,
    State(state): State<AppState>,
    Path(raw): Path<String>,
    Query(query): Query<Against>,
) -> Result<Response, ServerError> {
    key.require_any(&READ)?;
    let version = path_id(&raw, "version")?;
    let found = versions::version(&state.db, version).await?;
    let against = match query.against.as_deref() {
        Some(raw) => path_id(raw, "against")?,
        None => version - 1,
    };
    let older = if against <= 0 {
        Vec::new()
    } else {
        versions::version(&state.db, against).await?.tools
    };
    let diff = CatalogueDiff::between(&older, &found.tools);
    Ok(Json(json!({
        "version": found.meta.version,
        "summary": found.meta.summary,
        "author": found.meta.author,
        "createdAt": found.meta.created_at,
        "tools": found.tools,
        "against": against.max(0),
        "diff": diff,
    }))
    .into_response())
}

/// `POST /api/catalogue/restore/{version}` with `If-Match` naming the
/// version now: every tool of that version gets its content back, as a new
/// version (tools added since are kept).
async fn restore(
    key: ApiKey,
    State(state): State<AppState>,
    Path(raw): Path<String>,
    headers: HeaderMap,
) -> Result<Response, ServerError> {
    key.require(Scope::CatalogueWrite)?;
    let version = path_id(&raw, "version")?;
    let expected = if_match(&headers)?;
    let done = catalogue::restore(&state, &key.actor(), version, expected).await?;
    Ok(changed(done, StatusCode::OK))
}
