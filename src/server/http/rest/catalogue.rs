//! The catalogue over the JSON API, versioned like the bindings: read it
//! with its version as the ETag, add or change one tool with `If-Match`,
//! read its history and one version with what it changed, and restore an
//! earlier version. Reading takes `bindings:read` (the catalogue and the
//! bindings are the one tool policy) or `catalogue:write`; every change
//! takes `catalogue:write` and goes through `server::catalogue`, the same
//! code as the editor page and manifest imports.

use crate::domain::bindings::VersionMeta;
use crate::domain::catalogue::CatalogueTool;
use crate::domain::catalogue_history::CatalogueDiff;
use crate::domain::ids::ToolId;
use crate::domain::limits::CATALOGUE_HISTORY_PAGE_MAX;
use crate::server::catalogue::{self, Changed};
use crate::server::http::extract::{
    if_match, path_id, CatalogueRead, CatalogueWrite, Expected, IdPath, JsonBody, Key, Known,
    QueryParams,
};
use crate::server::http::rest::bindings::etag;
use crate::server::http::rest::vibes::same_id;
use crate::server::store::{bindings as tools, catalogue as versions};
use crate::server::{AppState, ServerError};
use axum::extract::{Path, State};
use axum::http::{header, HeaderMap, StatusCode};
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post, put};
use axum::{Json, Router};
use serde::{Deserialize, Serialize};

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

/// The catalogue at a version.
#[derive(Debug, Serialize)]
struct Catalogue {
    version: i64,
    tools: Vec<CatalogueTool>,
}

/// `GET /api/catalogue`: `{"version", "tools"}` with `ETag: "version"`.
async fn read(
    _: Key<CatalogueRead>,
    State(state): State<AppState>,
) -> Result<Response, ServerError> {
    let version = version_now(&state).await?;
    let tools = tools::tools(&state.db).await?;
    Ok((
        [(header::ETAG, etag(version))],
        Json(Catalogue { version, tools }),
    )
        .into_response())
}

/// What a change answers.
#[derive(Debug, Serialize)]
struct ChangedBody {
    version: i64,
    changed: Vec<String>,
}

/// The answer to a change: the version in force after it, as body and ETag,
/// and the tools it added or changed (none when it changed nothing).
fn changed(done: Changed, status: StatusCode) -> Response {
    (
        status,
        [(header::ETAG, etag(done.version))],
        Json(ChangedBody {
            version: done.version,
            changed: done.tools,
        }),
    )
        .into_response()
}

/// `PUT /api/catalogue/tools/{id}`: replaces a tool with `If-Match` naming
/// the catalogue version read (stale → 412), or adds one with
/// `If-None-Match: *` (taken → 409); neither → 428.
async fn put_tool(
    key: Key<CatalogueWrite>,
    State(state): State<AppState>,
    IdPath(id, _): IdPath<ToolId>,
    Expected(expected): Expected,
    JsonBody(Known(tool)): JsonBody<Known<CatalogueTool>>,
) -> Result<Response, ServerError> {
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
    _: Key<CatalogueRead>,
    State(state): State<AppState>,
    QueryParams(page): QueryParams<Page>,
) -> Result<Response, ServerError> {
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
    Ok(Json(History {
        versions: list,
        before: next,
    })
    .into_response())
}

/// A page of the catalogue's history.
#[derive(Debug, Serialize)]
struct History {
    versions: Vec<VersionMeta>,
    before: Option<i64>,
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
    _: Key<CatalogueRead>,
    State(state): State<AppState>,
    Path(raw): Path<String>,
    QueryParams(query): QueryParams<Against>,
) -> Result<Response, ServerError> {
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
    Ok(Json(OneVersion {
        version: found.meta.version,
        summary: found.meta.summary,
        author: found.meta.author,
        created_at: found.meta.created_at,
        tools: found.tools,
        against: against.max(0),
        diff,
    })
    .into_response())
}

/// One version of the catalogue, with what differs from version `against`.
#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
struct OneVersion {
    version: i64,
    summary: String,
    author: String,
    created_at: i64,
    tools: Vec<CatalogueTool>,
    against: i64,
    diff: CatalogueDiff,
}

/// `POST /api/catalogue/restore/{version}` with `If-Match` naming the
/// version now: every tool of that version gets its content back, as a new
/// version (tools added since are kept).
async fn restore(
    key: Key<CatalogueWrite>,
    State(state): State<AppState>,
    Path(raw): Path<String>,
    headers: HeaderMap,
) -> Result<Response, ServerError> {
    let version = path_id(&raw, "version")?;
    let expected = if_match(&headers)?;
    let done = catalogue::restore(&state, &key.actor(), version, expected).await?;
    Ok(changed(done, StatusCode::OK))
}
