//! What a server function needs from the request it runs in: the shared
//! state, the signed-in user, and a way to set cookies and the HTTP status.
//!
//! Keeping these in one place keeps each server function to its three steps:
//! auth → store → domain, and its first line says who may call it
//! ([`admin`], [`teacher`]). The REST handlers' counterpart is
//! `server::http::extract`.

use crate::domain::user::Role;
use crate::error::ApiError;
use crate::server::auth::{self, AuthUser};
use crate::server::{AppState, ServerError};
use axum::http::{header, request::Parts, HeaderValue, StatusCode};
use leptos::prelude::use_context;
use leptos_axum::ResponseOptions;
use std::future::Future;

/// The shared state, provided to every server function by the router.
pub fn state() -> Result<AppState, ServerError> {
    use_context::<AppState>().ok_or_else(|| {
        ServerError::Config("AppState missing from the server-function context".into())
    })
}

/// The signed-in user of the current request, if any.
pub fn user() -> Option<AuthUser> {
    use_context::<Parts>().and_then(|parts| parts.extensions.get::<AuthUser>().cloned())
}

/// The signed-in user if their role satisfies `needed`: `Unauthenticated`
/// without a session, `Forbidden` with the wrong role.
pub fn require(needed: Role) -> Result<AuthUser, ServerError> {
    let user = user().ok_or(ApiError::Unauthenticated)?;
    user.require(needed)?;
    Ok(user)
}

/// The signed-in admin ([`require`] `Admin`): the first line of a server
/// function only admins may call. (Cross-site calls never get this far:
/// `auth::check_origin` refuses them for every server function.)
pub fn admin() -> Result<AuthUser, ServerError> {
    require(Role::Admin)
}

/// The signed-in teacher, or admin ([`require`] `Teacher`): the first line
/// of a server function for anyone who teaches.
pub fn teacher() -> Result<AuthUser, ServerError> {
    require(Role::Teacher)
}

/// The address the current request came from: the TCP peer, or, when the
/// peer is one of `TRUSTED_PROXIES`, the client its `X-Forwarded-For` names
/// (see [`TrustedProxies::client`](crate::domain::net::TrustedProxies::client)).
pub fn client_address(state: &AppState) -> Option<std::net::IpAddr> {
    use_context::<Parts>().and_then(|parts| {
        let peer = parts
            .extensions
            .get::<axum::extract::ConnectInfo<std::net::SocketAddr>>()?
            .0
            .ip();
        let forwarded = parts
            .headers
            .get_all("x-forwarded-for")
            .iter()
            .filter_map(|v| v.to_str().ok());
        Some(state.config.trusted_proxies.client(peer, forwarded))
    })
}

/// The origin links handed out in this request start with
/// (`auth::link_origin`).
pub fn link_origin(state: &AppState) -> String {
    let headers = use_context::<Parts>()
        .map(|parts| parts.headers)
        .unwrap_or_default();
    auth::link_origin(state, &headers)
}

/// The raw sign-in token of the current request.
pub fn session_token() -> Option<String> {
    use_context::<Parts>().and_then(|parts| auth::session_token(&parts.headers))
}

/// Sets (or, with `max_age` `None`, clears) the sign-in cookie.
pub fn set_session_cookie(state: &AppState, token: &str, max_age: Option<std::time::Duration>) {
    if let (Some(response), Ok(value)) = (
        use_context::<ResponseOptions>(),
        HeaderValue::from_str(&auth::session_cookie(state, token, max_age)),
    ) {
        response.append_header(header::SET_COOKIE, value);
    }
}

/// Runs a server function's body and turns its error into the client-facing
/// [`ApiError`] with the matching HTTP status; internal details are logged
/// there and then, and not sent.
pub async fn finish<T>(body: impl Future<Output = Result<T, ServerError>>) -> Result<T, ApiError> {
    body.await.map_err(|err| {
        let api = ApiError::from(err);
        if let Some(response) = use_context::<ResponseOptions>() {
            response.set_status(
                StatusCode::from_u16(api.status()).unwrap_or(StatusCode::INTERNAL_SERVER_ERROR),
            );
            if let Some(secs) = api.retry_after() {
                response.insert_header(header::RETRY_AFTER, HeaderValue::from(secs));
            }
        }
        api
    })
}
