//! The JSON API for agent backends (`/api/…`), authenticated with API keys
//! rather than browser sessions. One router per area, merged here, with the
//! body limit and the JSON 404 every area shares.

pub mod bindings;
pub mod catalogue;
pub mod event_streams;
#[cfg(test)]
mod fuzz;
#[cfg(test)]
mod tests {
    use super::data_error;

    #[test]
    fn a_wrong_shape_names_the_field_and_the_rule() {
        let (field, rule) = data_error("Failed to deserialize the JSON body into the target type: messages[0].role: unknown variant `system`, expected one of `user`, `assistant`, `tool` at line 1 column 60");
        assert_eq!(field, "messages[0].role");
        assert_eq!(
            rule,
            "unknown variant `system`, expected one of `user`, `assistant`, `tool`"
        );
        let (field, rule) = data_error("Failed to deserialize the JSON body into the target type: missing field `name` at line 1 column 2");
        assert_eq!(
            (field.as_str(), rule.as_str()),
            ("body", "missing field `name`")
        );
    }
}
pub mod lessons;
pub mod mcp;
pub mod plugins;
pub mod sessions;
pub mod vibes;
pub mod workflows;

use crate::domain::api_key::Scope;
use crate::domain::limits::{bytes_in_words, excerpt, API_BODY_MAX_BYTES};
use crate::error::ApiError;
use crate::server::store::api_keys::VerifiedKey;
use crate::server::{store, AppState, ServerError};
use axum::extract::rejection::JsonRejection;
use axum::extract::{DefaultBodyLimit, FromRequestParts};
use axum::http::{header, request::Parts, StatusCode, Uri};
use axum::routing::any;
use axum::{Json, Router};

/// Every JSON API route; bodies are capped at [`API_BODY_MAX_BYTES`] unless
/// a route says otherwise (bindings), and an unknown `/api/…` path gets a
/// JSON 404 rather than the app's HTML page.
pub fn router() -> Router<AppState> {
    Router::new()
        .merge(lessons::router())
        .merge(bindings::router())
        .merge(catalogue::router())
        .merge(sessions::router())
        .merge(plugins::router())
        .merge(vibes::router())
        .merge(workflows::router())
        .route("/api/{*path}", any(unknown_path))
        .layer(DefaultBodyLimit::max(API_BODY_MAX_BYTES))
}

async fn unknown_path(uri: Uri) -> ServerError {
    ApiError::NotFound(format!("The API path {}", excerpt(uri.path()))).into()
}

/// A numeric id from the path (`field` names it in the error): 422 naming
/// the field for anything else, as for a body field, instead of axum's
/// plain-text rejection.
pub fn path_id(raw: &str, field: &str) -> Result<i64, ServerError> {
    raw.parse().map_err(|_| {
        ApiError::invalid(
            field,
            format!("must be a whole number (got \"{}\")", excerpt(raw)),
        )
        .into()
    })
}

/// A JSON body read by plain `serde_json`. axum's `Json` tracks the path
/// of every value it reads (for its error message), which costs a large
/// body (a 1,000-tool plugin registration) a good part of its parse; here
/// only a body that fails is read again through `Json`, so the rejection,
/// and the 4xx [`json_body`] makes of it, are the same.
pub struct FastJson<T>(pub T);

impl<T, S> axum::extract::FromRequest<S> for FastJson<T>
where
    T: serde::de::DeserializeOwned,
    S: Send + Sync,
{
    type Rejection = JsonRejection;

    async fn from_request(req: axum::extract::Request, state: &S) -> Result<Self, JsonRejection> {
        if !is_json(req.headers()) {
            // `Json` refuses it with its own words.
            return Json::<T>::from_request(req, state)
                .await
                .map(|Json(v)| FastJson(v));
        }
        let bytes = axum::body::Bytes::from_request(req, state).await?;
        match serde_json::from_slice(&bytes) {
            Ok(value) => Ok(FastJson(value)),
            Err(_) => Json::<T>::from_bytes(&bytes).map(|Json(v)| FastJson(v)),
        }
    }
}

/// Whether the request says its body is JSON (`application/json` or a
/// `+json` type), as `Json` requires.
fn is_json(headers: &axum::http::HeaderMap) -> bool {
    let Some(value) = headers
        .get(axum::http::header::CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
    else {
        return false;
    };
    let essence = value
        .split(';')
        .next()
        .unwrap_or("")
        .trim()
        .to_ascii_lowercase();
    essence == "application/json"
        || (essence.starts_with("application/") && essence.ends_with("+json"))
}

/// [`json_body`] for a [`FastJson`] body.
pub fn fast_json_body<T>(
    body: Result<FastJson<T>, JsonRejection>,
    limit: usize,
) -> Result<T, ServerError> {
    json_body(body.map(|FastJson(v)| Json(v)), limit)
}

/// A JSON request body, or the error that says what is wrong with it: 413
/// over `limit` bytes, 400 when it is not JSON (or not sent as JSON), 422
/// when it is JSON of the wrong shape (naming the field serde names).
pub fn json_body<T>(body: Result<Json<T>, JsonRejection>, limit: usize) -> Result<T, ServerError> {
    match body {
        Ok(Json(value)) => Ok(value),
        Err(JsonRejection::JsonDataError(e)) => {
            let (field, rule) = data_error(&e.body_text());
            Err(ApiError::invalid(field, excerpt(&rule)).into())
        }
        Err(e) if e.status() == StatusCode::PAYLOAD_TOO_LARGE => Err(ApiError::TooLarge {
            field: "body".into(),
            limit: bytes_in_words(limit),
        }
        .into()),
        Err(e) => Err(ApiError::BadRequest(excerpt(&e.body_text())).into()),
    }
}

/// The field and rule of a JSON body of the wrong shape, from axum's
/// words ("Failed to deserialize …: messages[0].role: unknown variant
/// `system`, expected one of … at line 1 column 60"): the path serde names
/// (`body` for the whole body) and the rule without the position.
fn data_error(text: &str) -> (String, String) {
    let detail = text
        .strip_prefix("Failed to deserialize the JSON body into the target type: ")
        .unwrap_or(text);
    let (field, rule) = match detail.split_once(": ") {
        Some((path, rule)) if path != "." && !path.contains(' ') => (path, rule),
        _ => ("body", detail),
    };
    let rule = match rule.rsplit_once(" at line ") {
        Some((words, at)) if at.contains(" column ") => words,
        _ => rule,
    };
    (field.to_owned(), rule.to_owned())
}

/// A request carrying a live API key in `Authorization: Bearer …`.
#[derive(Debug, Clone)]
pub struct ApiKey(pub VerifiedKey);

impl ApiKey {
    /// The key's id, for audit.
    pub fn id(&self) -> i64 {
        self.0.id
    }

    /// The key's name, recorded as the author of what it changes.
    pub fn name(&self) -> &str {
        &self.0.name
    }

    /// The key as the actor of a change, with its scopes (attributed as
    /// `API key “name”`).
    pub fn actor(&self) -> crate::domain::actor::Actor {
        crate::domain::actor::Actor::key(&self.0.name, &self.0.scopes)
    }

    /// Refuses (403 naming the first) unless the key was given one of
    /// `scopes`.
    pub fn require_any(&self, scopes: &[Scope]) -> Result<(), ApiError> {
        match scopes.iter().find(|s| self.0.scopes.contains(s)) {
            Some(_) => Ok(()),
            None => Err(ApiError::MissingScope {
                scope: scopes.first().map(Scope::to_string).unwrap_or_default(),
            }),
        }
    }

    /// Refuses (403 naming the scope) unless the key was given `scope`.
    pub fn require(&self, scope: Scope) -> Result<(), ApiError> {
        if self.0.scopes.contains(&scope) {
            Ok(())
        } else {
            Err(ApiError::MissingScope {
                scope: scope.to_string(),
            })
        }
    }
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
            Some(key) => Ok(ApiKey(key)),
            None => Err(ApiError::Unauthenticated.into()),
        }
    }
}
