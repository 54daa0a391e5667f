//! `GET`/`PUT /api/bindings`: the current `tool-bindings.json` for scripts
//! and deployments, with ETag / If-Match so a stale copy never overwrites a
//! newer one.

use crate::domain::bindings::ToolBindings;
use crate::domain::limits::BINDINGS_BODY_MAX_BYTES;
use crate::error::ApiError;
use crate::server::http::extract::{BindingsRead, BindingsWrite, IfMatch, JsonBody, Key};
use crate::server::{catalogue::bindings, store, AppState, ServerError};
use axum::extract::{DefaultBodyLimit, State};
use axum::http::{header, HeaderValue};
use axum::response::{IntoResponse, Response};
use axum::routing::get;
use axum::{Json, Router};
use serde::Serialize;

/// Bindings routes.
pub fn router() -> Router<AppState> {
    Router::new().route(
        "/api/bindings",
        get(read)
            .put(replace)
            .layer(DefaultBodyLimit::max(BINDINGS_BODY_MAX_BYTES)),
    )
}

pub(crate) fn etag(version: i64) -> HeaderValue {
    HeaderValue::from_str(&format!("\"{version}\"")).unwrap_or(HeaderValue::from_static("\"0\""))
}

async fn read(
    _: Key<BindingsRead>,
    State(state): State<AppState>,
) -> Result<Response, ServerError> {
    let current = store::bindings::current(&state.db)
        .await?
        .ok_or_else(|| ApiError::NotFound("Tool bindings".into()))?;
    Ok((
        [(header::ETAG, etag(current.meta.version))],
        Json(current.bindings),
    )
        .into_response())
}

/// What a replacement answers (fields in the order of the bytes sent
/// before it was typed: alphabetical).
#[derive(Debug, Serialize)]
struct Replaced {
    notes: Vec<String>,
    version: i64,
}

async fn replace(
    key: Key<BindingsWrite>,
    State(state): State<AppState>,
    IfMatch(expected): IfMatch,
    JsonBody(document): JsonBody<ToolBindings, BINDINGS_BODY_MAX_BYTES>,
) -> Result<Response, ServerError> {
    let current = store::bindings::current(&state.db)
        .await?
        .map_or(0, |c| c.meta.version);
    if expected != current {
        return Err(ApiError::PreconditionFailed(format!(
            "The bindings are at version {current}, not {expected} — GET them again and reapply your change."
        ))
        .into());
    }
    let saved = bindings::save_in_force(
        &state,
        expected,
        &document,
        None,
        &format!("API key “{}”", key.name()),
        None,
    )
    .await
    .map_err(|e| match e {
        ServerError::Api(ApiError::Conflict(message)) => {
            ApiError::PreconditionFailed(message).into()
        }
        other => other,
    })?;
    Ok((
        [(header::ETAG, etag(saved.version))],
        Json(Replaced {
            notes: saved.notes,
            version: saved.version,
        }),
    )
        .into_response())
}
