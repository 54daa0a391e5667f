//! The JSON API for agent backends (`/api/…`), authenticated with API keys
//! rather than browser sessions. One router per area, merged here.

pub mod bindings;
pub mod lessons;
pub mod sessions;

use crate::error::ApiError;
use crate::server::{store, AppState, ServerError};
use axum::extract::FromRequestParts;
use axum::http::{header, request::Parts};
use axum::Router;

/// Every JSON API route.
pub fn router() -> Router<AppState> {
    Router::new()
        .merge(lessons::router())
        .merge(bindings::router())
        .merge(sessions::router())
}

/// A request carrying a live API key in `Authorization: Bearer …`.
#[derive(Debug, Clone)]
pub struct ApiKey {
    /// The key's id, for audit.
    pub id: i64,
    /// The key's name, recorded as the author of what it changes.
    pub name: String,
}

impl axum::extract::OptionalFromRequestParts<AppState> for ApiKey {
    type Rejection = ServerError;

    async fn from_request_parts(
        parts: &mut Parts,
        state: &AppState,
    ) -> Result<Option<Self>, Self::Rejection> {
        if parts.headers.get(header::AUTHORIZATION).is_none() {
            return Ok(None);
        }
        <ApiKey as FromRequestParts<AppState>>::from_request_parts(parts, state)
            .await
            .map(Some)
    }
}

impl FromRequestParts<AppState> for ApiKey {
    type Rejection = ServerError;

    async fn from_request_parts(
        parts: &mut Parts,
        state: &AppState,
    ) -> Result<Self, Self::Rejection> {
        let secret = parts
            .headers
            .get(header::AUTHORIZATION)
            .and_then(|v| v.to_str().ok())
            .and_then(|v| v.strip_prefix("Bearer "))
            .map(str::trim)
            .filter(|s| !s.is_empty())
            .ok_or(ApiError::Unauthenticated)?;
        match store::api_keys::verify(&state.db, secret).await? {
            Some((id, name)) => Ok(ApiKey { id, name }),
            None => Err(ApiError::Unauthenticated.into()),
        }
    }
}
