//! Cross-site request forgery defence: a state-changing call must come
//! from Switchboard's own pages (its `Origin`, or its `Referer`).

use crate::error::ApiError;
use crate::server::AppState;
use crate::RPC_PREFIX;
use axum::extract::{Request, State};
use axum::http::{header, HeaderMap, Method, StatusCode};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};

/// The origin a request claims to come from: its `Origin` header, else the
/// scheme://host[:port] part of its `Referer`.
pub(super) fn claimed_origin(headers: &HeaderMap) -> Option<String> {
    if let Some(origin) = headers.get(header::ORIGIN).and_then(|v| v.to_str().ok()) {
        return Some(origin.to_owned());
    }
    let referer = headers.get(header::REFERER)?.to_str().ok()?;
    let (scheme, rest) = referer.split_once("://")?;
    let host = rest.split(['/', '?', '#']).next()?;
    Some(format!("{scheme}://{host}"))
}

/// Whether the request's claimed origin is the app's own: `PUBLIC_ORIGIN`
/// when configured, else the origin the request itself was addressed to.
fn same_origin(state: &AppState, headers: &HeaderMap) -> bool {
    let Some(claimed) = claimed_origin(headers) else {
        return false;
    };
    match &state.config.public_origin {
        Some(own) => claimed == *own,
        None => headers
            .get(header::HOST)
            .and_then(|h| h.to_str().ok())
            .is_some_and(|host| {
                claimed == format!("http://{host}") || claimed == format!("https://{host}")
            }),
    }
}

/// The origin links the app hands out start with (a password link): the
/// configured `PUBLIC_ORIGIN`, else the one the request was addressed to.
pub fn link_origin(state: &AppState, headers: &HeaderMap) -> String {
    if let Some(own) = &state.config.public_origin {
        return own.clone();
    }
    let host = headers
        .get(header::HOST)
        .and_then(|h| h.to_str().ok())
        .filter(|h| !h.is_empty() && h.bytes().all(|b| b.is_ascii_graphic()))
        .map_or_else(|| state.config.addr.to_string(), str::to_owned);
    format!("http://{host}")
}

/// For a route outside `/rpc/` that a signed-in user's cookie authenticates
/// and that changes something (an upload from a page): 403 unless the
/// request comes from the app's own pages, as `check_origin` does for
/// server functions.
pub fn require_same_origin(state: &AppState, headers: &HeaderMap) -> Result<(), ApiError> {
    if same_origin(state, headers) {
        Ok(())
    } else {
        tracing::warn!(origin = ?claimed_origin(headers), "cross-origin page upload refused");
        Err(ApiError::CrossOrigin)
    }
}

/// Middleware: server-function calls must come from the app's own pages.
/// Server functions carry the session cookie, so without this check any site
/// a signed-in user visits could make those calls in their name.
pub async fn check_origin(State(state): State<AppState>, req: Request, next: Next) -> Response {
    let is_rpc = req.uri().path().starts_with(&format!("{RPC_PREFIX}/"));
    if is_rpc && req.method() != Method::GET && !same_origin(&state, req.headers()) {
        tracing::warn!(path = %req.uri().path(), origin = ?claimed_origin(req.headers()), "cross-origin call refused");
        return (StatusCode::FORBIDDEN, axum::Json(ApiError::CrossOrigin)).into_response();
    }
    next.run(req).await
}
