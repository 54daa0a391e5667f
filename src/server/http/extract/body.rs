//! Request bodies: JSON under a named limit (the API's refusals: 413 naming
//! the limit, 400 not JSON, 422 naming the field), read fast enough for the
//! large plugin bodies, and raw bytes for archives.

use crate::domain::limits::{bytes_in_words, excerpt, nul_at, API_BODY_MAX_BYTES, NUL_RULE};
use crate::error::ApiError;
use crate::server::ServerError;
use axum::extract::rejection::JsonRejection;
use axum::extract::FromRequest;
use axum::extract::Request;
use axum::http::{header, HeaderMap, StatusCode};
use axum::Json;
use serde::de::{DeserializeOwned, IgnoredAny};

/// A JSON request body of type `T`, refused as the API refuses any body
/// (see [`read_json`]); `LIMIT` is the byte limit the 413 names — the
/// route's `DefaultBodyLimit` (the API's [`API_BODY_MAX_BYTES`] unless the
/// route sets another), which is what enforces it.
pub struct JsonBody<T, const LIMIT: usize = { API_BODY_MAX_BYTES }>(pub T);

impl<T, S, const LIMIT: usize> FromRequest<S> for JsonBody<T, LIMIT>
where
    T: DeserializeOwned,
    S: Send + Sync,
{
    type Rejection = ServerError;

    async fn from_request(req: Request, state: &S) -> Result<Self, ServerError> {
        read_json(req, state, LIMIT).await.map(JsonBody)
    }
}

/// A raw request body (an archive), refused as a JSON body is: 413 naming
/// `LIMIT` over it, 400 for a body that cannot be read.
pub struct BytesBody<const LIMIT: usize>(pub axum::body::Bytes);

impl<S, const LIMIT: usize> FromRequest<S> for BytesBody<LIMIT>
where
    S: Send + Sync,
{
    type Rejection = ServerError;

    async fn from_request(req: Request, state: &S) -> Result<Self, ServerError> {
        match axum::body::Bytes::from_request(req, state).await {
            Ok(bytes) => Ok(BytesBody(bytes)),
            Err(e) if e.status() == StatusCode::PAYLOAD_TOO_LARGE => Err(ApiError::TooLarge {
                field: "body".into(),
                limit: bytes_in_words(LIMIT),
            }
            .into()),
            Err(e) => Err(ApiError::BadRequest(excerpt(&e.body_text())).into()),
        }
    }
}

/// Whether the request says its body is JSON (`application/json` or a
/// `+json` type), as `Json` requires.
pub fn is_json(headers: &HeaderMap) -> bool {
    let Some(value) = headers
        .get(header::CONTENT_TYPE)
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

/// A JSON request body, or the error that says what is wrong with it: 413
/// over `limit` bytes, 400 when it is not JSON (or not sent as JSON), 422
/// when it is JSON of the wrong shape (naming the field serde names).
///
/// The body is read by plain `serde_json`: axum's `Json` tracks the path of
/// every value it reads (for its error message), which costs a large body
/// a good part of its parse, so only a body that fails is read again
/// through `Json`, for the path. serde_json calls a value of the wrong
/// kind for an enum (`"pluginType": 1`) a syntax error; a body that is
/// JSON is never refused as "not JSON", whatever its reader said.
pub async fn read_json<T, S>(req: Request, state: &S, limit: usize) -> Result<T, ServerError>
where
    T: DeserializeOwned,
    S: Send + Sync,
{
    if !is_json(req.headers()) {
        return Err(ApiError::BadRequest(
            "Expected request with `Content-Type: application/json`".into(),
        )
        .into());
    }
    let bytes = match axum::body::Bytes::from_request(req, state).await {
        Ok(bytes) => bytes,
        Err(e) if e.status() == StatusCode::PAYLOAD_TOO_LARGE => {
            return Err(ApiError::TooLarge {
                field: "body".into(),
                limit: bytes_in_words(limit),
            }
            .into())
        }
        Err(e) => return Err(ApiError::BadRequest(excerpt(&e.body_text())).into()),
    };
    if let Some(field) = nul_at(&bytes) {
        return Err(ApiError::invalid(field, NUL_RULE).into());
    }
    if let Ok(value) = serde_json::from_slice(&bytes) {
        return Ok(value);
    }
    let shape = |text: &str| {
        let (field, rule) = data_error(text);
        ApiError::invalid(field, excerpt(&rule)).into()
    };
    match Json::<T>::from_bytes(&bytes) {
        Ok(Json(value)) => Ok(value),
        Err(JsonRejection::JsonDataError(e)) => Err(shape(&e.body_text())),
        Err(JsonRejection::JsonSyntaxError(e))
            if serde_json::from_slice::<IgnoredAny>(&bytes).is_ok() =>
        {
            Err(shape(&e.body_text()))
        }
        Err(e) => Err(ApiError::BadRequest(excerpt(&e.body_text())).into()),
    }
}

/// The field and rule of a JSON body of the wrong shape, from axum's
/// words ("Failed to deserialize …: messages[0].role: unknown variant
/// `system`, expected one of … at line 1 column 60"): the path serde names
/// (`body` for the whole body) and the rule without the position.
pub(super) fn data_error(text: &str) -> (String, String) {
    let detail = text
        .strip_prefix("Failed to deserialize the JSON body into the target type: ")
        .or_else(|| text.strip_prefix("Failed to parse the request body as JSON: "))
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
