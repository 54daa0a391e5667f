//! The server layer's error type.
//!
//! Failures that are the caller's fault are `ApiError`s and pass through
//! untouched; everything else (database, hashing, join errors) is logged here
//! with its details and reaches the client only as `ApiError::Internal`.

use crate::error::ApiError;

/// What can go wrong inside the server.
#[derive(Debug, thiserror::Error)]
pub enum ServerError {
    /// A problem the client can act on; shown to it as is.
    #[error(transparent)]
    Api(#[from] ApiError),
    /// The database refused or failed.
    #[error("database error: {0}")]
    Database(#[from] sqlx::Error),
    /// A migration failed at start-up.
    #[error("migration error: {0}")]
    Migration(#[from] sqlx::migrate::MigrateError),
    /// Password hashing failed (corrupt stored hash, out of memory…).
    #[error("password hashing error: {0}")]
    PasswordHash(String),
    /// A blocking task panicked or was cancelled.
    #[error("background task failed: {0}")]
    Task(#[from] tokio::task::JoinError),
    /// The in-process MCP client could not reach the workflow tools.
    #[error("MCP client error: {0}")]
    Mcp(String),
    /// Start-up configuration is unusable.
    #[error("configuration error: {0}")]
    Config(String),
}

impl From<ServerError> for ApiError {
    fn from(err: ServerError) -> Self {
        match err {
            ServerError::Api(api) => api,
            other => {
                tracing::error!(error = %other, "request failed");
                ApiError::Internal
            }
        }
    }
}

impl From<sqlx::Error> for ApiError {
    fn from(err: sqlx::Error) -> Self {
        ServerError::from(err).into()
    }
}

impl From<crate::domain::error::FieldError> for ServerError {
    fn from(err: crate::domain::error::FieldError) -> Self {
        ServerError::Api(err.into())
    }
}

impl axum::response::IntoResponse for ServerError {
    fn into_response(self) -> axum::response::Response {
        let mut api = ApiError::from(self);
        // A field is named by the caller's own input as often as by us (an
        // unknown JSON key, a file in an archive): quoted back in a line at
        // most, whichever door refused it.
        if let ApiError::Invalid(e) = &mut api {
            e.field = crate::domain::limits::field_excerpt(&e.field);
        }
        let status = axum::http::StatusCode::from_u16(api.status())
            .unwrap_or(axum::http::StatusCode::INTERNAL_SERVER_ERROR);
        let mut response = (status, axum::Json(&api)).into_response();
        if let Some(secs) = api.retry_after() {
            response
                .headers_mut()
                .insert(axum::http::header::RETRY_AFTER, secs.into());
        }
        response
    }
}
