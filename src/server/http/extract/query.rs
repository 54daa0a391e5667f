//! Query strings: read into a typed struct and refused as a body field
//! would be (422 naming the parameter and the rule), instead of axum's
//! plain-text 400.

use crate::domain::limits::excerpt;
use crate::error::ApiError;
use crate::server::ServerError;
use axum::extract::{FromRequestParts, Query};
use axum::http::request::Parts;
use axum::http::Uri;
use serde::de::DeserializeOwned;

/// The request's query string as `T`; a parameter of the wrong type, or
/// one given twice, is 422 naming it (see [`query_params`]).
pub struct QueryParams<T>(pub T);

impl<T, S> FromRequestParts<S> for QueryParams<T>
where
    T: DeserializeOwned,
    S: Send + Sync,
{
    type Rejection = ServerError;

    async fn from_request_parts(parts: &mut Parts, _: &S) -> Result<Self, ServerError> {
        query_params(&parts.uri).map(QueryParams)
    }
}

/// `uri`'s query string as `T`, or 422 naming the parameter serde names
/// and the rule it breaks: `?limit=abc` → `limit` "invalid digit found in
/// string", `?format=a&format=b` → `format` "may be given once".
pub fn query_params<T: DeserializeOwned>(uri: &Uri) -> Result<T, ServerError> {
    Query::<T>::try_from_uri(uri)
        .map(|Query(v)| v)
        .map_err(|e| {
            let (field, rule) = query_error(&e.body_text());
            ApiError::invalid(field, excerpt(&rule)).into()
        })
}

/// The parameter and rule in axum's words for a query string it could
/// not read ("Failed to deserialize query string: limit: invalid digit
/// found in string"); a whole-string error names the parameter it quotes
/// (`duplicate field `format``), else `query`.
pub(super) fn query_error(text: &str) -> (String, String) {
    let detail = text
        .strip_prefix("Failed to deserialize query string: ")
        .unwrap_or(text);
    if let Some((path, rule)) = detail.split_once(": ") {
        if path != "." && !path.contains(' ') {
            return (path.to_owned(), rule.to_owned());
        }
    }
    let detail = detail.strip_prefix(".: ").unwrap_or(detail);
    if let Some(name) = detail
        .strip_prefix("duplicate field `")
        .and_then(|rest| rest.split_once('`'))
        .map(|(name, _)| name)
    {
        return (name.to_owned(), "may be given once".to_owned());
    }
    ("query".to_owned(), detail.to_owned())
}
