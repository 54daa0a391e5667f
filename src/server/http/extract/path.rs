//! Path ids and version headers: numeric and typed ids refused as a body
//! field would be (422 naming it), `If-Match` and the expected version.

use super::*;
use crate::domain::error::FieldError;
use crate::domain::limits::excerpt;
use crate::error::ApiError;
use crate::server::ServerError;
use axum::extract::FromRequestParts;
use axum::http::{header, request::Parts, HeaderMap};
use axum::response::{IntoResponse, Response};
use std::marker::PhantomData;

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

/// The `{call_id}` of a call's route, as a number (422 naming `callId`).
#[derive(Debug, Clone, Copy)]
pub struct CallId(pub i64);

impl<S: Send + Sync> FromRequestParts<S> for CallId {
    type Rejection = Response;

    async fn from_request_parts(parts: &mut Parts, _: &S) -> Result<Self, Response> {
        let raw = path_param(parts, "call_id").await?;
        path_id(&raw, "callId")
            .map(CallId)
            .map_err(IntoResponse::into_response)
    }
}

/// An id type a route's `{id}` is parsed into ([`IdPath`]).
pub trait PathId: Sized {
    /// The id, or the rule it breaks (naming the field).
    fn parse_path(raw: &str) -> Result<Self, FieldError>;
}

impl PathId for crate::domain::ids::ToolId {
    fn parse_path(raw: &str) -> Result<Self, FieldError> {
        Self::parse(raw)
    }
}

impl PathId for crate::domain::ids::VibeId {
    fn parse_path(raw: &str) -> Result<Self, FieldError> {
        Self::parse(raw)
    }
}

impl PathId for crate::domain::ids::AgentId {
    fn parse_path(raw: &str) -> Result<Self, FieldError> {
        Self::parse(raw)
    }
}

/// A route's `{id}`, checked as a `T` (422 naming what it breaks); the
/// text as sent, for the handler to compare and look up.
#[derive(Debug, Clone)]
pub struct IdPath<T>(pub String, pub PhantomData<T>);

impl<T: PathId, S: Send + Sync> FromRequestParts<S> for IdPath<T> {
    type Rejection = Response;

    async fn from_request_parts(parts: &mut Parts, _: &S) -> Result<Self, Response> {
        let id = path_param(parts, "id").await?;
        match T::parse_path(&id) {
            Ok(_) => Ok(IdPath(id, PhantomData)),
            Err(e) => Err(ServerError::from(e).into_response()),
        }
    }
}

/// The version an `If-Match` header names (`"3"`, `W/"3"`). `*` ("any
/// version") is refused like a stale tag: a policy is only replaced by
/// someone who read the version they replace.
pub fn if_match(headers: &HeaderMap) -> Result<i64, ApiError> {
    let raw = headers
        .get(header::IF_MATCH)
        .and_then(|v| v.to_str().ok())
        .map(str::trim)
        .ok_or_else(|| ApiError::PreconditionRequired {
            send: "If-Match with the ETag you read".into(),
        })?;
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
                excerpt(raw)
            ))
        })
}

/// The version a change builds on, from `If-Match` ([`if_match`]): 428
/// without one, 412 for one this server did not issue.
#[derive(Debug, Clone, Copy)]
pub struct IfMatch(pub i64);

impl<S: Send + Sync> FromRequestParts<S> for IfMatch {
    type Rejection = ServerError;

    async fn from_request_parts(parts: &mut Parts, _: &S) -> Result<Self, ServerError> {
        Ok(IfMatch(if_match(&parts.headers)?))
    }
}

/// The version a PUT starts from: `If-Match` for a change, `If-None-Match:
/// *` to create; neither is 428 (no blind overwrites).
pub fn expected(headers: &HeaderMap) -> Result<Option<i64>, ApiError> {
    let creating = headers
        .get(header::IF_NONE_MATCH)
        .and_then(|v| v.to_str().ok())
        .is_some_and(|v| v.trim() == "*");
    if creating && headers.get(header::IF_MATCH).is_none() {
        return Ok(None);
    }
    if_match(headers).map(Some).map_err(|e| match e {
        ApiError::PreconditionRequired { .. } => ApiError::PreconditionRequired {
            send: "If-Match with the ETag you read to replace it, or If-None-Match: * to create it"
                .into(),
        },
        other => other,
    })
}

/// [`expected`] as an extractor: `Some(version)` to change what is at
/// that version, `None` to create.
#[derive(Debug, Clone, Copy)]
pub struct Expected(pub Option<i64>);

impl<S: Send + Sync> FromRequestParts<S> for Expected {
    type Rejection = ServerError;

    async fn from_request_parts(parts: &mut Parts, _: &S) -> Result<Self, ServerError> {
        Ok(Expected(expected(&parts.headers)?))
    }
}

/// The version an optional `If-Match` names: stale → 412 later, malformed
/// → 412 now; without the header, `None` (build on whatever is current).
#[derive(Debug, Clone, Copy)]
pub struct IfMatchOptional(pub Option<i64>);

impl<S: Send + Sync> FromRequestParts<S> for IfMatchOptional {
    type Rejection = ServerError;

    async fn from_request_parts(parts: &mut Parts, _: &S) -> Result<Self, ServerError> {
        if parts.headers.contains_key(header::IF_MATCH) {
            Ok(IfMatchOptional(Some(if_match(&parts.headers)?)))
        } else {
            Ok(IfMatchOptional(None))
        }
    }
}
