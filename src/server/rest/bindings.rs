//! `GET`/`PUT /api/bindings`: the current `tool-bindings.json` for scripts
//! and deployments, with ETag / If-Match so a stale copy never overwrites a
//! newer one.

use crate::domain::api_key::Scope;
use crate::domain::bindings::ToolBindings;
use crate::domain::limits::BINDINGS_BODY_MAX_BYTES;
use crate::error::ApiError;
use crate::server::rest::{json_body, ApiKey};
use crate::server::{bindings, store, AppState, ServerError};
use axum::extract::rejection::JsonRejection;
use axum::extract::{DefaultBodyLimit, State};
use axum::http::{header, HeaderMap, HeaderValue};
use axum::response::{IntoResponse, Response};
use axum::routing::get;
use axum::{Json, Router};

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

async fn read(key: ApiKey, State(state): State<AppState>) -> Result<Response, ServerError> {
    key.require(Scope::BindingsRead)?;
    let current = store::bindings::current(&state.db)
        .await?
        .ok_or_else(|| ApiError::NotFound("Tool bindings".into()))?;
    Ok((
        [(header::ETAG, etag(current.meta.version))],
        Json(current.bindings),
    )
        .into_response())
}

/// The version an `If-Match` header names (`"3"`, `W/"3"`). `*` ("any
/// version") is refused like a stale tag: a policy is only replaced by
/// someone who read the version they replace.
pub(crate) fn if_match(headers: &HeaderMap) -> Result<i64, ApiError> {
    let raw = headers
        .get(header::IF_MATCH)
        .and_then(|v| v.to_str().ok())
        .map(str::trim)
        .ok_or(ApiError::PreconditionRequired)?;
    if raw == "*" {
        return Err(ApiError::PreconditionFailed(
            "If-Match: * is not accepted: send the ETag of the version you read, so a newer one is never overwritten.".into(),
        ));
    }
    raw.trim_start_matches("W/")
        .trim_matches('"')
        .parse::<i64>()
        .map_err(|_| {
            ApiError::PreconditionFailed(format!(
                "If-Match {} is not an ETag this server issued.",
                crate::domain::limits::excerpt(raw)
            ))
        })
}

async fn replace(
    key: ApiKey,
    State(state): State<AppState>,
    headers: HeaderMap,
    body: Result<Json<ToolBindings>, JsonRejection>,
) -> Result<Response, ServerError> {
    key.require(Scope::BindingsWrite)?;
    let expected = if_match(&headers)?;
    let document = json_body(body, BINDINGS_BODY_MAX_BYTES)?;
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
        Json(serde_json::json!({ "version": saved.version, "notes": saved.notes })),
    )
        .into_response())
}
