//! CORS for the token-authenticated API: lets a page on an origin listed
//! in `API_ORIGINS` (a CODAP plugin in CODAP's iframe) call the session
//! and plugin routes, the join exchange and the client module, under the
//! rules of `domain::cors`.
//!
//! It is the outermost layer but tracing (`router::with_middleware`), so a
//! preflight (`OPTIONS` with `Access-Control-Request-Method`) is answered
//! here, before the request timeout and before any sign-in lookup or
//! same-origin check. An allowed preflight gets 204 with what it may send;
//! one from an origin not listed gets 403 and no allow headers (the
//! browser then refuses the call). A response to another origin never
//! says `Access-Control-Allow-Credentials`, and a request that carries the
//! sign-in cookie gets no CORS headers at all: only bearer tokens travel
//! across origins. Event streams answered on the bare socket
//! (`serve::direct`) write the head this layer made, so they carry the
//! same headers.

use crate::domain::cors::{
    serves_other_origins, Allowed, ApiOrigins, ALLOWED_HEADERS, ALLOWED_METHODS, EXPOSED_HEADERS,
    PREFLIGHT_MAX_AGE_SECS,
};
use crate::error::ApiError;
use crate::server::{auth, AppState, ServerError};
use axum::extract::{Request, State};
use axum::http::header::{
    ACCESS_CONTROL_ALLOW_HEADERS, ACCESS_CONTROL_ALLOW_METHODS, ACCESS_CONTROL_ALLOW_ORIGIN,
    ACCESS_CONTROL_EXPOSE_HEADERS, ACCESS_CONTROL_MAX_AGE, ACCESS_CONTROL_REQUEST_METHOD, ORIGIN,
    VARY,
};
use axum::http::{HeaderMap, HeaderValue, Method, StatusCode};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};

/// Middleware: answers preflights of the routes that serve other origins
/// and adds the CORS headers to their responses; every other route passes
/// untouched, and while `API_ORIGINS` is unset so does every request but a
/// preflight (403, as from an origin not listed).
pub async fn cors(State(state): State<AppState>, req: Request, next: Next) -> Response {
    let origins = &state.config.api_origins;
    if !serves_other_origins(req.uri().path()) {
        return next.run(req).await;
    }
    let origin = req.headers().get(ORIGIN).cloned();
    let is_preflight = req.method() == Method::OPTIONS
        && origin.is_some()
        && req.headers().contains_key(ACCESS_CONTROL_REQUEST_METHOD);
    if !origins.is_set() {
        // No origin is listed: a preflight is refused as one from an
        // origin not listed is, and nothing else changes.
        return if is_preflight {
            preflight(None, false)
        } else {
            next.run(req).await
        };
    }
    let allowed = origin
        .as_ref()
        .and_then(|o| o.to_str().ok())
        .and_then(|o| origins.allows(o));
    let varies = matches!(origins, ApiOrigins::List(_));
    if is_preflight {
        return preflight(allowed.zip(origin), varies);
    }
    // A browser sends the cookie across origins only when the page asked
    // for credentials: such a call is never let read the answer.
    let allowed = allowed.filter(|_| auth::session_token(req.headers()).is_none());
    let mut response = next.run(req).await;
    let headers = response.headers_mut();
    if varies {
        headers.append(VARY, HeaderValue::from_static("Origin"));
    }
    if let Some((allowed, origin)) = allowed.zip(origin) {
        allow_origin(headers, allowed, origin);
        headers.insert(
            ACCESS_CONTROL_EXPOSE_HEADERS,
            HeaderValue::from_static(EXPOSED_HEADERS),
        );
    }
    response
}

/// The answer to a preflight: 204 with the methods and headers a call may
/// use, or, for an origin not listed, 403 without them.
fn preflight(allowed: Option<(Allowed, HeaderValue)>, varies: bool) -> Response {
    let mut response = match allowed {
        Some((allowed, origin)) => {
            let mut response = StatusCode::NO_CONTENT.into_response();
            let headers = response.headers_mut();
            allow_origin(headers, allowed, origin);
            headers.insert(
                ACCESS_CONTROL_ALLOW_METHODS,
                HeaderValue::from_static(ALLOWED_METHODS),
            );
            headers.insert(
                ACCESS_CONTROL_ALLOW_HEADERS,
                HeaderValue::from_static(ALLOWED_HEADERS),
            );
            headers.insert(
                ACCESS_CONTROL_MAX_AGE,
                HeaderValue::from(PREFLIGHT_MAX_AGE_SECS),
            );
            response
        }
        None => ServerError::from(ApiError::Forbidden {
            needed: "an origin listed in API_ORIGINS".into(),
        })
        .into_response(),
    };
    if varies {
        response
            .headers_mut()
            .append(VARY, HeaderValue::from_static("Origin"));
    }
    response
}

/// `Access-Control-Allow-Origin`: `*`, or the request's own origin.
fn allow_origin(headers: &mut HeaderMap, allowed: Allowed, origin: HeaderValue) {
    let value = match allowed {
        Allowed::Any => HeaderValue::from_static("*"),
        Allowed::Echo => origin,
    };
    headers.insert(ACCESS_CONTROL_ALLOW_ORIGIN, value);
}
