//! A live session's own credentials: the bearer or stream token, and
//! `Session<A>` / `PluginSession<A>`, let do act `A` by the door-keeper
//! (`sessions::admit`; the markers declared by `session_acts!`).

use crate::domain::limits::excerpt;
use crate::domain::session_access::Act;
use crate::error::ApiError;
use crate::server::agent::sessions::{self, Admitted};
use crate::server::{AppState, ServerError};
use axum::extract::Query;
use axum::extract::{FromRequestParts, RawPathParams};
use axum::http::{header, request::Parts, HeaderMap, StatusCode};
use axum::response::{IntoResponse, Response};
use axum::Json;
use serde::Deserialize;
use std::marker::PhantomData;
use std::ops::Deref;

/// The token in `Authorization: Bearer …`, if there is one and it is not
/// blank. The scheme is matched without regard to case (`bearer`,
/// `BEARER`), as HTTP's authentication schemes are (RFC 9110 §11.1).
pub fn bearer(headers: &HeaderMap) -> Option<&str> {
    let value = headers.get(header::AUTHORIZATION)?.to_str().ok()?;
    let (scheme, token) = value.trim_start().split_once(' ')?;
    let token = token.trim();
    (scheme.eq_ignore_ascii_case("bearer") && !token.is_empty()).then_some(token)
}

/// A session's (or plugin's) token from `Authorization: Bearer …`, the
/// only place the session API reads it (query strings end up in logs and
/// histories); `None` without one.
#[derive(Debug, Clone)]
pub struct BearerToken(pub Option<String>);

impl<S: Send + Sync> FromRequestParts<S> for BearerToken {
    type Rejection = std::convert::Infallible;

    async fn from_request_parts(parts: &mut Parts, _: &S) -> Result<Self, Self::Rejection> {
        Ok(BearerToken(bearer(&parts.headers).map(str::to_owned)))
    }
}

/// An event stream's token: the header, or `?token=` because a browser's
/// `EventSource` cannot set headers.
#[derive(Debug, Clone)]
pub struct StreamToken(pub Option<String>);

/// `?token=`, read beside whatever else a stream's query holds.
#[derive(Deserialize)]
struct TokenQuery {
    token: Option<String>,
}

/// [`StreamToken`]'s rule on a request's parts.
pub(super) fn stream_token(parts: &Parts) -> Option<String> {
    bearer(&parts.headers).map(str::to_owned).or_else(|| {
        Query::<TokenQuery>::try_from_uri(&parts.uri)
            .ok()
            .and_then(|q| q.0.token)
            .filter(|t| !t.is_empty())
    })
}

impl<S: Send + Sync> FromRequestParts<S> for StreamToken {
    type Rejection = std::convert::Infallible;

    async fn from_request_parts(parts: &mut Parts, _: &S) -> Result<Self, Self::Rejection> {
        Ok(StreamToken(stream_token(parts)))
    }
}

/// What a request on a session does, for [`Session`] and
/// [`PluginSession`]: the act the door-keeper is asked about.
pub trait SessionAct {
    /// The act.
    const ACT: Act;
    /// Whether the route is an event stream, whose token may come as
    /// `?token=` (see [`StreamToken`]).
    const STREAM: bool = false;
}

/// Declares a marker type per act, for [`Session`] and [`PluginSession`].
macro_rules! session_acts {
    ($($(#[$doc:meta])* $name:ident => $act:expr $(, stream = $stream:expr)?;)+) => {$(
        $(#[$doc])*
        #[derive(Debug, Clone, Copy)]
        pub struct $name;
        impl SessionAct for $name {
            const ACT: Act = $act;
            $(const STREAM: bool = $stream;)?
        }
    )+};
}

session_acts! {
    /// `GET …/tools`.
    ReadTools => Act::ReadTools;
    /// `POST …/tool-calls`, and MCP.
    CallTool => Act::CallTool;
    /// `POST …/tool-calls/{callId}/result`.
    ReportResult => Act::ReportResult;
    /// `PATCH …/state`.
    ChangeState => Act::ChangeState;
    /// `POST …/turns`.
    ReportTurn => Act::ReportTurn;
    /// `POST …/end`.
    End => Act::End;
    /// `POST …/plugin-token`.
    IssuePluginToken => Act::IssuePluginToken;
    /// `POST …/join-codes`.
    IssueJoinCode => Act::IssueJoinCode;
    /// `POST …/register-tools`, `PATCH …/tools`.
    ChangePluginTools => Act::ChangePluginTools;
    /// `GET …/metadata`.
    ReadMetadata => Act::ReadMetadata;
    /// `GET …/plugin-events` (an event stream).
    ListenForCalls => Act::ListenForCalls, stream = true;
    /// `POST …/tool-results/{callId}`: the plugin answers a call relayed
    /// to it.
    AnswerRelayedCall => Act::AnswerCall { relayed: true };
}

/// The path parameter `name` of the route (empty if it has none); a path
/// axum cannot read (not UTF-8) is refused in axum's own words, as
/// `Path` refuses it.
pub(super) async fn path_param(parts: &mut Parts, name: &str) -> Result<String, Response> {
    let params = RawPathParams::from_request_parts(parts, &())
        .await
        .map_err(IntoResponse::into_response)?;
    let found = params.iter().find(|(param, _)| *param == name);
    Ok(found.map(|(_, value)| value.to_owned()).unwrap_or_default())
}

/// The token a route acting as `A` reads.
pub(super) fn token_for<A: SessionAct>(parts: &Parts) -> Option<String> {
    if A::STREAM {
        stream_token(parts)
    } else {
        bearer(&parts.headers).map(str::to_owned)
    }
}

/// A request on session `{id}` with its session token or plugin token, let
/// do `A` by the door-keeper (`sessions::admit`, the table in
/// `domain::session_access`): 401 without a token or for an unknown one,
/// 403 for another session's token or a credential without the right.
/// Derefs to the [`Admitted`] session.
#[derive(Debug, Clone)]
pub struct Session<A>(pub Admitted, PhantomData<A>);

impl<A> Session<A> {
    /// The admitted session, by value.
    pub fn into_inner(self) -> Admitted {
        self.0
    }
}

impl<A> Deref for Session<A> {
    type Target = Admitted;

    fn deref(&self) -> &Admitted {
        &self.0
    }
}

impl<A: SessionAct + Send + Sync> FromRequestParts<AppState> for Session<A> {
    type Rejection = Response;

    async fn from_request_parts(parts: &mut Parts, state: &AppState) -> Result<Self, Response> {
        let id = path_param(parts, "id").await?;
        let token = token_for::<A>(parts);
        let admitted = sessions::admit(state, &id, token.as_deref(), A::ACT)
            .await
            .map_err(IntoResponse::into_response)?;
        Ok(Session(admitted, PhantomData))
    }
}

/// The plugin API's [`Session`]: the same door-keeper, but an unknown or
/// ended session is the plugin API's 404 (`{"error":
/// "session_not_found", …}`, [`plugin_not_found`]) once a token came
/// (401 without one).
#[derive(Debug, Clone)]
pub struct PluginSession<A>(pub Admitted, PhantomData<A>);

impl<A> PluginSession<A> {
    /// The admitted session, by value.
    pub fn into_inner(self) -> Admitted {
        self.0
    }
}

impl<A> Deref for PluginSession<A> {
    type Target = Admitted;

    fn deref(&self) -> &Admitted {
        &self.0
    }
}

impl<A: SessionAct + Send + Sync> FromRequestParts<AppState> for PluginSession<A> {
    type Rejection = Response;

    async fn from_request_parts(parts: &mut Parts, state: &AppState) -> Result<Self, Response> {
        let id = path_param(parts, "id").await?;
        let Some(token) = token_for::<A>(parts) else {
            return Err(ServerError::from(ApiError::Unauthenticated).into_response());
        };
        match sessions::get(state, &id).await {
            Ok(row) if row.ended_at.is_none() => {}
            Ok(_) => return Err(plugin_not_found(&id)),
            Err(ServerError::Api(ApiError::NotFound(_))) => return Err(plugin_not_found(&id)),
            Err(e) => return Err(e.into_response()),
        }
        let admitted = sessions::admit(state, &id, Some(&token), A::ACT)
            .await
            .map_err(IntoResponse::into_response)?;
        Ok(PluginSession(admitted, PhantomData))
    }
}

/// The plugin API's 404 body.
#[derive(serde::Serialize)]
struct PluginNotFound {
    error: &'static str,
    message: String,
}

/// 404 in the plugin API's shape: `{"error": "session_not_found",
/// "message": …}`.
pub fn plugin_not_found(id: &str) -> Response {
    (
        StatusCode::NOT_FOUND,
        Json(PluginNotFound {
            error: "session_not_found",
            message: format!("There is no open session {}.", excerpt(id)),
        }),
    )
        .into_response()
}
