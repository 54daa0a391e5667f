//! The JSON API for agent backends (`/api/…`), authenticated with API keys
//! rather than browser sessions. One router per area, merged here, with the
//! body limit and the JSON 404 every area shares. Who may call a route and
//! what body it takes are its handler's arguments, the extractors of
//! `server::http::extract`.

pub mod accounts;
pub mod bindings;
pub mod catalogue;
pub mod event_streams;
#[cfg(test)]
mod fuzz;
pub mod join_codes;
pub mod lessons;
pub mod mcp;
pub mod mcp_servers;
pub mod plugins;
pub mod retention;
pub mod runner;
pub mod sessions;
pub mod student_data;
pub mod students;
pub mod triggers;
pub mod ultravox;
pub mod vibes;
pub mod workflows;

use crate::domain::limits::{excerpt, API_BODY_MAX_BYTES};
use crate::error::ApiError;
use crate::server::{AppState, ServerError};
use axum::extract::DefaultBodyLimit;
use axum::http::{Method, StatusCode, Uri};
use axum::response::{IntoResponse, Response};
use axum::routing::any;
use axum::Json;
use axum::Router;

/// Every JSON API route; bodies are capped at [`API_BODY_MAX_BYTES`] unless
/// a route says otherwise (bindings), and an unknown `/api/…` path gets a
/// JSON 404 rather than the app's HTML page.
pub fn router() -> Router<AppState> {
    Router::new()
        .merge(lessons::router())
        .merge(accounts::router())
        .merge(bindings::router())
        .merge(catalogue::router())
        .merge(mcp_servers::router())
        .merge(sessions::router())
        .merge(students::router())
        .merge(plugins::router())
        .merge(join_codes::router())
        .merge(vibes::router())
        .merge(runner::router())
        .merge(workflows::router())
        .merge(triggers::router())
        .merge(ultravox::router())
        .merge(retention::router())
        .merge(student_data::router())
        .route("/api/{*path}", any(unknown_path))
        .method_not_allowed_fallback(method_not_allowed)
        .layer(DefaultBodyLimit::max(API_BODY_MAX_BYTES))
}

/// A known path asked with a method it does not take: 405 with `Allow`
/// (axum adds it) and, as every API error, a JSON body that says so.
async fn method_not_allowed(method: Method, uri: Uri) -> Response {
    let words = format!(
        "{method} is not allowed on {}: see the Allow header",
        excerpt(uri.path())
    );
    (
        StatusCode::METHOD_NOT_ALLOWED,
        Json(ApiError::BadRequest(words)),
    )
        .into_response()
}

async fn unknown_path(uri: Uri) -> ServerError {
    ApiError::NotFound(format!("The API path {}", excerpt(uri.path()))).into()
}
