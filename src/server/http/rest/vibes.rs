//! The agents-and-vibes API for scripts and backends: read and change one
//! object with ETag / If-Match (as for the bindings), list the vibes, and
//! the body an Ultravox backend creates a call with.

use crate::domain::actor::Actor;
use crate::domain::ids::{AgentId, VibeId};
use crate::domain::limits::excerpt;
use crate::domain::limits::{MANIFEST_ARCHIVE_MAX_BYTES, MANIFEST_BODY_MAX_BYTES};
use crate::domain::vibe::tool_file::Form;
use crate::domain::vibe::{Agent, Vibe};
use crate::error::ApiError;
use crate::server::http::extract::{
    self, Admin, BytesBody, Expected, IdPath, IfMatchOptional, JsonBody, Key, QueryParams,
    VibesRead, VibesWrite,
};
use crate::server::http::rest::bindings::etag;
use crate::server::store::vibes::Versioned;
use crate::server::vibes::manifests::{self, ArchiveFormat};
use crate::server::vibes::{self, Change};
use crate::server::{AppState, ServerError};
use axum::extract::{DefaultBodyLimit, Path, State};
use axum::http::{header, StatusCode};
use axum::response::{IntoResponse, Response};
use axum::routing::get;
use axum::{Json, Router};
use serde::{Deserialize, Serialize};
use serde_json::json;

/// Agent and vibe routes.
pub fn router() -> Router<AppState> {
    Router::new()
        .route("/api/vibes", get(list))
        .route(
            "/api/vibes/{id}",
            get(read_vibe)
                .put(put_vibe)
                .layer(DefaultBodyLimit::max(MANIFEST_BODY_MAX_BYTES)),
        )
        .route("/api/vibes/{id}/call-config", get(call_config))
        .route(
            "/api/manifests",
            get(export_api)
                .post(import_api)
                .layer(DefaultBodyLimit::max(MANIFEST_ARCHIVE_MAX_BYTES)),
        )
        .route(
            "/agents/manifests",
            axum::routing::post(import_page)
                .layer(DefaultBodyLimit::max(MANIFEST_ARCHIVE_MAX_BYTES)),
        )
        .route("/agents/manifests.zip", get(export_page_zip))
        .route("/agents/manifests.tar", get(export_page_tar))
        .route(
            "/api/agents/{id}",
            get(read_agent)
                .put(put_agent)
                .layer(DefaultBodyLimit::max(MANIFEST_BODY_MAX_BYTES)),
        )
}

async fn list(_: Key<VibesRead>, State(state): State<AppState>) -> Result<Response, ServerError> {
    let (_, vibes) = vibes::all(&state).await?;
    Ok(Json(json!({
        "vibes": vibes.into_iter().map(|v| json!({"vibe": v.value, "version": v.version})).collect::<Vec<_>>()
    }))
    .into_response())
}

fn found<T: serde::Serialize>(
    what: &str,
    id: &str,
    item: Option<Versioned<T>>,
) -> Result<Response, ServerError> {
    let item = item.ok_or_else(|| ApiError::NotFound(format!("{what} \"{}\"", excerpt(id))))?;
    Ok(([(header::ETAG, etag(item.version))], Json(item.value)).into_response())
}

async fn read_vibe(
    _: Key<VibesRead>,
    State(state): State<AppState>,
    Path(id): Path<String>,
) -> Result<Response, ServerError> {
    let (_, all) = vibes::all(&state).await?;
    found(
        "Vibe",
        &id,
        all.into_iter().find(|v| v.value.id.as_str() == id),
    )
}

async fn read_agent(
    _: Key<VibesRead>,
    State(state): State<AppState>,
    Path(id): Path<String>,
) -> Result<Response, ServerError> {
    let (all, _) = vibes::all(&state).await?;
    found(
        "Agent",
        &id,
        all.into_iter().find(|a| a.value.id.as_str() == id),
    )
}

/// 422 unless the id in the body is the one in the path.
pub(crate) fn same_id(path: &str, body: &str) -> Result<(), ApiError> {
    if path == body {
        Ok(())
    } else {
        Err(ApiError::invalid(
            "id",
            format!(
                "\"{}\" does not match the address (\"{}\")",
                excerpt(body),
                excerpt(path)
            ),
        ))
    }
}

fn saved(version: i64, created: bool) -> Response {
    (
        if created {
            StatusCode::CREATED
        } else {
            StatusCode::OK
        },
        [(header::ETAG, etag(version))],
        Json(VersionBody { version }),
    )
        .into_response()
}

/// What a save answers.
#[derive(Debug, Serialize)]
struct VersionBody {
    version: i64,
}

async fn put_vibe(
    key: Key<VibesWrite>,
    State(state): State<AppState>,
    IdPath(id, _): IdPath<VibeId>,
    Expected(expected): Expected,
    JsonBody(vibe): JsonBody<Vibe, MANIFEST_BODY_MAX_BYTES>,
) -> Result<Response, ServerError> {
    same_id(&id, vibe.id.as_str())?;
    let version = vibes::save(
        &state,
        Change::Vibe(vibe, expected),
        &format!("API key “{}”", key.name()),
    )
    .await?;
    Ok(saved(version, expected.is_none()))
}

async fn put_agent(
    key: Key<VibesWrite>,
    State(state): State<AppState>,
    IdPath(id, _): IdPath<AgentId>,
    Expected(expected): Expected,
    JsonBody(agent): JsonBody<Agent, MANIFEST_BODY_MAX_BYTES>,
) -> Result<Response, ServerError> {
    same_id(&id, agent.id.as_str())?;
    let version = vibes::save(
        &state,
        Change::Agent(agent, expected),
        &format!("API key “{}”", key.name()),
    )
    .await?;
    Ok(saved(version, expected.is_none()))
}

/// `?format=`.
#[derive(Debug, Deserialize)]
struct FormatQuery {
    format: Option<String>,
}

/// `?format=` (the archive) and `?form=` (the tools' `config.json` form)
/// of an export.
#[derive(Debug, Deserialize)]
struct ExportQuery {
    format: Option<String>,
    form: Option<String>,
}

impl ExportQuery {
    /// The form asked for (Switchboard's when none); 422 naming `form`.
    fn form(&self) -> Result<Form, ApiError> {
        Ok(Form::parse(self.form.as_deref().unwrap_or("switchboard"))?)
    }
}

async fn download(
    state: &AppState,
    format: ArchiveFormat,
    form: Form,
) -> Result<Response, ServerError> {
    let set = manifests::current(state).await?;
    let bytes = manifests::archive_in(&set, format, form)?;
    let name = match form {
        Form::Switchboard => "switchboard-manifests",
        Form::Ultravox => "switchboard-manifests-ultravox",
    };
    Ok((
        [
            (header::CONTENT_TYPE, format.content_type().to_owned()),
            (
                header::CONTENT_DISPOSITION,
                format!("attachment; filename=\"{name}.{}\"", format.extension()),
            ),
        ],
        bytes,
    )
        .into_response())
}

/// `GET /api/manifests?format=zip|tar&form=switchboard|ultravox`: every
/// agent and vibe, with the tools they use, in the manifest layout; tools
/// in Switchboard's form (a JSON Schema) or the seed's (Ultravox
/// parameters and `modelToolName`).
async fn export_api(
    _: Key<VibesRead>,
    State(state): State<AppState>,
    QueryParams(query): QueryParams<ExportQuery>,
) -> Result<Response, ServerError> {
    download(
        &state,
        ArchiveFormat::parse(query.format.as_deref().unwrap_or("zip"))?,
        query.form()?,
    )
    .await
}

/// `GET /agents/manifests.zip?form=…`: the same, for a signed-in admin.
async fn export_page_zip(
    _: Admin,
    State(state): State<AppState>,
    QueryParams(query): QueryParams<ExportQuery>,
) -> Result<Response, ServerError> {
    download(&state, ArchiveFormat::Zip, query.form()?).await
}

/// `GET /agents/manifests.tar?form=…`: the same as a tar file.
async fn export_page_tar(
    _: Admin,
    State(state): State<AppState>,
    QueryParams(query): QueryParams<ExportQuery>,
) -> Result<Response, ServerError> {
    download(&state, ArchiveFormat::Tar, query.form()?).await
}

/// Imports `body` (a `.zip` or `.tar`) by `actor`, on top of catalogue
/// version `expected` if the request named one: what it counted.
async fn import_archive(
    state: &AppState,
    body: &[u8],
    actor: &Actor,
    expected: Option<i64>,
) -> Result<Response, ServerError> {
    let files = manifests::unpack(body)?;
    Ok(Json(manifests::import(state, &files, actor, expected).await?).into_response())
}

/// `POST /api/manifests` with a `.zip` or `.tar` body (tools in either
/// form; seed 003's own tree too): replaces every agent and vibe (adding
/// or updating the tools it carries) if the whole set is valid; otherwise
/// 422 naming the file and field, and nothing changes. A
/// tool added or changed needs `catalogue:write` too (403 otherwise, for
/// the whole import). An `If-Match` names the catalogue version it builds
/// on (stale → 412); without one, whatever is current.
async fn import_api(
    key: Key<VibesWrite>,
    State(state): State<AppState>,
    IfMatchOptional(expected): IfMatchOptional,
    BytesBody(body): BytesBody<MANIFEST_ARCHIVE_MAX_BYTES>,
) -> Result<Response, ServerError> {
    import_archive(&state, &body, &key.actor(), expected).await
}

/// `POST /agents/manifests`: the same import from the `/agents` page, for a
/// signed-in admin. The cookie authenticates it, so it must come from the
/// app's own pages (403 otherwise), like a server function.
async fn import_page(
    Admin(admin): Admin,
    State(state): State<AppState>,
    IfMatchOptional(expected): IfMatchOptional,
    BytesBody(body): BytesBody<MANIFEST_ARCHIVE_MAX_BYTES>,
) -> Result<Response, ServerError> {
    let admin = admin.admin_actor()?;
    import_archive(&state, &body, &admin, expected).await
}

/// `GET /api/vibes/{id}/call-config?format=ultravox`: the body to create an
/// Ultravox call starting with the vibe's default agent (the shared
/// builder, `ultravox::vibe_config`; a session's own,
/// `GET /api/sessions/{id}/call-config`, has HTTP tools).
async fn call_config(
    _: Key<extract::Sessions>,
    State(state): State<AppState>,
    Path(id): Path<String>,
    QueryParams(query): QueryParams<FormatQuery>,
) -> Result<Response, ServerError> {
    if query.format.as_deref().unwrap_or("ultravox") != "ultravox" {
        return Err(ApiError::invalid("format", "must be ultravox").into());
    }
    Ok(Json(crate::server::ultravox::vibe_config(&state.rules(), &id)?).into_response())
}
