//! Who is calling, and with what body, said once at the edge: the axum
//! extractors every REST handler starts with, so a handler's arguments
//! name its caller and its body and its first line is its work.
//!
//! - callers: [`Admin`] and [`Teacher`] (a signed-in account with that
//!   role; for anything but `GET` also from the app's own pages, since the
//!   cookie authenticates it), [`ApiKey`] (any live key) and [`Key<S>`]
//!   (a key with one of the scopes `S` names), [`Session<A>`] (the
//!   session's token or plugin token, let do act `A` by the door-keeper,
//!   `sessions::admit`) and [`PluginSession<A>`] (the same for the plugin
//!   API, with its own 404), [`BearerToken`] and [`StreamToken`] for routes
//!   that decide themselves;
//! - bodies: [`JsonBody<T, LIMIT>`] (and [`FastJsonBody`] for the large
//!   plugin bodies, [`BytesBody`] for archives), whose refusals are the
//!   API's JSON errors: 413 naming the limit, 400 for what is not JSON,
//!   422 naming the field;
//! - headers and path: [`IfMatch`], [`Expected`], [`IdPath<T>`],
//!   [`CallId`].
//!
//! Extractors run in the order a handler lists them, and the body last,
//! so a handler lists them in the order its checks answer (401, 403, then
//! the path, the preconditions, the body).

use crate::domain::api_key::Scope;
use crate::domain::error::FieldError;
use crate::domain::limits::{bytes_in_words, excerpt, API_BODY_MAX_BYTES};
use crate::domain::session_access::Act;
use crate::domain::user::Role;
use crate::error::ApiError;
use crate::server::agent::sessions::{self, Admitted};
use crate::server::auth::{require_same_origin, AuthUser};
use crate::server::store::api_keys::VerifiedKey;
use crate::server::{store, AppState, ServerError};
use axum::extract::rejection::JsonRejection;
use axum::extract::{FromRequest, FromRequestParts, OptionalFromRequestParts, RawPathParams};
use axum::extract::{Query, Request};
use axum::http::{header, request::Parts, HeaderMap, Method, StatusCode};
use axum::response::{IntoResponse, Response};
use axum::Json;
use serde::de::DeserializeOwned;
use serde::Deserialize;
use std::marker::PhantomData;
use std::ops::Deref;

// ---------------------------------------------------------------- bodies

/// A JSON request body of type `T`, refused as the API refuses any body
/// (see [`json_body`]); `LIMIT` is the byte limit the 413 names — the
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
        json_body(Json::<T>::from_request(req, state).await, LIMIT).map(JsonBody)
    }
}

/// [`JsonBody`] read by plain `serde_json` ([`FastJson`]), for bodies
/// large enough that axum's path tracking costs a good part of the parse
/// (a 1,000-tool plugin registration); refused in the same words.
pub struct FastJsonBody<T, const LIMIT: usize = { API_BODY_MAX_BYTES }>(pub T);

impl<T, S, const LIMIT: usize> FromRequest<S> for FastJsonBody<T, LIMIT>
where
    T: DeserializeOwned,
    S: Send + Sync,
{
    type Rejection = ServerError;

    async fn from_request(req: Request, state: &S) -> Result<Self, ServerError> {
        let body = FastJson::<T>::from_request(req, state).await;
        json_body(body.map(|FastJson(v)| Json(v)), LIMIT).map(FastJsonBody)
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

/// A JSON body read by plain `serde_json`. axum's `Json` tracks the path
/// of every value it reads (for its error message), which costs a large
/// body a good part of its parse; here only a body that fails is read
/// again through `Json`, so the rejection, and the 4xx [`json_body`] makes
/// of it, are the same.
pub struct FastJson<T>(pub T);

impl<T, S> FromRequest<S> for FastJson<T>
where
    T: DeserializeOwned,
    S: Send + Sync,
{
    type Rejection = JsonRejection;

    async fn from_request(req: Request, state: &S) -> Result<Self, JsonRejection> {
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
fn is_json(headers: &HeaderMap) -> bool {
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

// ------------------------------------------------------ signed-in users

/// The signed-in account `resolve_user` found for the request: 401 without
/// one.
fn signed_in(parts: &Parts) -> Result<AuthUser, ApiError> {
    parts
        .extensions
        .get::<AuthUser>()
        .cloned()
        .ok_or(ApiError::Unauthenticated)
}

/// A signed-in account with `role` (401 signed out, 403 with the wrong
/// role). Its cookie authenticates the request, so anything but a `GET`
/// must come from the app's own pages (403 `CrossOrigin`), as the
/// `/rpc/` middleware asks of server functions.
pub fn user_with_role(
    state: &AppState,
    user: Option<&AuthUser>,
    role: Role,
    method: &Method,
    headers: &HeaderMap,
) -> Result<AuthUser, ApiError> {
    let user = user.ok_or(ApiError::Unauthenticated)?;
    user.require(role)?;
    if method != Method::GET {
        require_same_origin(state, headers)?;
    }
    Ok(user.clone())
}

/// A signed-in admin (see [`user_with_role`]).
#[derive(Debug, Clone)]
pub struct Admin(pub AuthUser);

impl FromRequestParts<AppState> for Admin {
    type Rejection = ServerError;

    async fn from_request_parts(parts: &mut Parts, state: &AppState) -> Result<Self, ServerError> {
        let user = signed_in(parts)?;
        let (method, headers) = (&parts.method, &parts.headers);
        Ok(Admin(user_with_role(
            state,
            Some(&user),
            Role::Admin,
            method,
            headers,
        )?))
    }
}

/// A signed-in teacher, or admin (see [`user_with_role`]).
#[derive(Debug, Clone)]
pub struct Teacher(pub AuthUser);

impl FromRequestParts<AppState> for Teacher {
    type Rejection = ServerError;

    async fn from_request_parts(parts: &mut Parts, state: &AppState) -> Result<Self, ServerError> {
        let user = signed_in(parts)?;
        let (method, headers) = (&parts.method, &parts.headers);
        Ok(Teacher(user_with_role(
            state,
            Some(&user),
            Role::Teacher,
            method,
            headers,
        )?))
    }
}

/// The signed-in account, if any, for routes anyone signed in may use
/// beside another credential (watching sessions).
#[derive(Debug, Clone)]
pub struct SignedIn(pub Option<AuthUser>);

impl<S: Send + Sync> FromRequestParts<S> for SignedIn {
    type Rejection = std::convert::Infallible;

    async fn from_request_parts(parts: &mut Parts, _: &S) -> Result<Self, Self::Rejection> {
        Ok(SignedIn(parts.extensions.get::<AuthUser>().cloned()))
    }
}

// -------------------------------------------------------------- API keys

/// A request carrying a live API key in `Authorization: Bearer …`: 401
/// without one or for one that is unknown or revoked.
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
        self.require_any(&[scope])
    }

    /// The live key whose secret is `secret`: 401 for an unknown or
    /// revoked one.
    pub async fn verify(state: &AppState, secret: &str) -> Result<Self, ServerError> {
        match store::api_keys::verify(&state.db, secret).await? {
            Some(key) => Ok(ApiKey(key)),
            None => Err(ApiError::Unauthenticated.into()),
        }
    }
}

impl OptionalFromRequestParts<AppState> for ApiKey {
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

    async fn from_request_parts(parts: &mut Parts, state: &AppState) -> Result<Self, ServerError> {
        let secret = bearer(&parts.headers).ok_or(ApiError::Unauthenticated)?;
        ApiKey::verify(state, secret).await
    }
}

/// The scopes a [`Key`] must have one of (the first is the one a refusal
/// names).
pub trait KeyScope {
    /// One of these lets the key in.
    const SCOPES: &'static [Scope];
}

/// An API key with a scope `S` names: 401 without a live key, then 403
/// `MissingScope` naming the scope. Derefs to the [`ApiKey`].
#[derive(Debug, Clone)]
pub struct Key<S>(pub ApiKey, PhantomData<S>);

impl<S> Deref for Key<S> {
    type Target = ApiKey;

    fn deref(&self) -> &ApiKey {
        &self.0
    }
}

impl<S: KeyScope + Send + Sync> FromRequestParts<AppState> for Key<S> {
    type Rejection = ServerError;

    async fn from_request_parts(parts: &mut Parts, state: &AppState) -> Result<Self, ServerError> {
        let key = <ApiKey as FromRequestParts<AppState>>::from_request_parts(parts, state).await?;
        key.require_any(S::SCOPES)?;
        Ok(Key(key, PhantomData))
    }
}

/// Declares a marker type per scope set, for [`Key`].
macro_rules! key_scopes {
    ($($(#[$doc:meta])* $name:ident => [$($scope:ident),+];)+) => {$(
        $(#[$doc])*
        #[derive(Debug, Clone, Copy)]
        pub struct $name;
        impl KeyScope for $name {
            const SCOPES: &'static [Scope] = &[$(Scope::$scope),+];
        }
    )+};
}

key_scopes! {
    /// `sessions`: open and list sessions, a vibe's call body.
    Sessions => [Sessions];
    /// `lessons:read`: a lesson's prompt.
    LessonsRead => [LessonsRead];
    /// `bindings:read`: the bindings.
    BindingsRead => [BindingsRead];
    /// `bindings:write`: replace the bindings.
    BindingsWrite => [BindingsWrite];
    /// `vibes:read`: agents, vibes and their manifests.
    VibesRead => [VibesRead];
    /// `vibes:write`: change agents and vibes, import manifests.
    VibesWrite => [VibesWrite];
    /// `workflows:write`: read and edit workflow definitions.
    WorkflowsWrite => [WorkflowsWrite];
    /// `catalogue:write`: change the catalogue.
    CatalogueWrite => [CatalogueWrite];
    /// The catalogue and its history are read with `bindings:read` (the
    /// catalogue and the bindings are one tool policy) or
    /// `catalogue:write`; a refusal names `bindings:read`.
    CatalogueRead => [BindingsRead, CatalogueWrite];
}

// ------------------------------------------------------ session tokens

/// The token in `Authorization: Bearer …`, if there is one and it is not
/// blank.
pub fn bearer(headers: &HeaderMap) -> Option<&str> {
    headers
        .get(header::AUTHORIZATION)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.strip_prefix("Bearer "))
        .map(str::trim)
        .filter(|t| !t.is_empty())
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
fn stream_token(parts: &Parts) -> Option<String> {
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
async fn path_param(parts: &mut Parts, name: &str) -> Result<String, Response> {
    let params = RawPathParams::from_request_parts(parts, &())
        .await
        .map_err(IntoResponse::into_response)?;
    let found = params.iter().find(|(param, _)| *param == name);
    Ok(found.map(|(_, value)| value.to_owned()).unwrap_or_default())
}

/// The token a route acting as `A` reads.
fn token_for<A: SessionAct>(parts: &Parts) -> Option<String> {
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

// --------------------------------------------------- path and headers

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
        .ok_or(ApiError::PreconditionRequired)?;
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
    if_match(headers).map(Some)
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

#[cfg(test)]
mod tests {
    use super::*;
    use axum::body::Body;
    use axum::http::Request as HttpRequest;

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

    #[derive(Debug, Deserialize)]
    struct Named {
        name: String,
    }

    /// What a route taking `JsonBody<Named, 100>` (or `FastJsonBody`) under
    /// a 100-byte body limit answers `body` sent as `content_type`.
    async fn answer(
        fast: bool,
        content_type: Option<&str>,
        body: &str,
    ) -> (u16, serde_json::Value) {
        use axum::extract::DefaultBodyLimit;
        use axum::routing::post;
        use tower::ServiceExt;
        let route = if fast {
            post(|FastJsonBody(n): FastJsonBody<Named, 100>| async move { n.name })
        } else {
            post(|JsonBody(n): JsonBody<Named, 100>| async move { n.name })
        };
        let app = axum::Router::new()
            .route("/", route)
            .layer(DefaultBodyLimit::max(100));
        let mut req = HttpRequest::builder().method("POST").uri("/");
        if let Some(ct) = content_type {
            req = req.header(header::CONTENT_TYPE, ct);
        }
        let req = req.body(Body::from(body.to_owned())).expect("request");
        let response = app.oneshot(req).await.expect("answered");
        let status = response.status().as_u16();
        let bytes = axum::body::to_bytes(response.into_body(), 1 << 16)
            .await
            .expect("body");
        let value = serde_json::from_slice(&bytes)
            .unwrap_or(serde_json::json!(String::from_utf8_lossy(&bytes)));
        (status, value)
    }

    #[tokio::test]
    async fn a_body_of_the_wrong_shape_is_422_naming_the_field() {
        for fast in [false, true] {
            for (text, field) in [(r#"{"name": 3}"#, "name"), ("{}", "body")] {
                let (status, body) = answer(fast, Some("application/json"), text).await;
                assert_eq!(status, 422, "{body}");
                match serde_json::from_value::<ApiError>(body) {
                    Ok(ApiError::Invalid(e)) => assert_eq!(e.field, field),
                    other => panic!("not a field error: {other:?}"),
                }
            }
        }
    }

    #[tokio::test]
    async fn a_body_that_is_not_json_or_not_sent_as_json_is_400() {
        for fast in [false, true] {
            for (ct, text) in [
                (Some("application/json"), "{not json"),
                (Some("text/plain"), r#"{"name": "a"}"#),
                (None, r#"{"name": "a"}"#),
            ] {
                let (status, body) = answer(fast, ct, text).await;
                assert_eq!(status, 400, "{ct:?} {text}: {body}");
                let err = serde_json::from_value::<ApiError>(body);
                assert!(matches!(err, Ok(ApiError::BadRequest(_))), "{err:?}");
            }
        }
    }

    #[tokio::test]
    async fn a_body_over_its_limit_is_413_naming_the_limit() {
        let big = format!(r#"{{"name": "{}"}}"#, "a".repeat(200));
        for fast in [false, true] {
            let (status, body) = answer(fast, Some("application/json"), &big).await;
            assert_eq!(status, 413, "{body}");
            let expected = serde_json::to_value(ApiError::TooLarge {
                field: "body".into(),
                limit: bytes_in_words(100),
            })
            .unwrap();
            assert_eq!(body, expected);
        }
    }

    #[tokio::test]
    async fn an_archive_over_its_limit_is_413_naming_the_limit() {
        use axum::extract::DefaultBodyLimit;
        use axum::routing::post;
        use tower::ServiceExt;
        let app = axum::Router::new()
            .route(
                "/",
                post(|BytesBody(b): BytesBody<100>| async move { b.len().to_string() }),
            )
            .layer(DefaultBodyLimit::max(100));
        let send = |len: usize| {
            let req = HttpRequest::builder()
                .method("POST")
                .uri("/")
                .body(Body::from(vec![0u8; len]))
                .expect("request");
            app.clone().oneshot(req)
        };
        assert_eq!(send(100).await.expect("answered").status(), 200);
        let refused = send(101).await.expect("answered");
        assert_eq!(refused.status(), 413);
        let bytes = axum::body::to_bytes(refused.into_body(), 1 << 16)
            .await
            .expect("body");
        let err: ApiError = serde_json::from_slice(&bytes).expect("an ApiError");
        assert_eq!(
            err,
            ApiError::TooLarge {
                field: "body".into(),
                limit: bytes_in_words(100)
            }
        );
    }

    #[tokio::test]
    async fn a_good_body_is_taken_by_both_readers() {
        for fast in [false, true] {
            let ct = Some("application/json; charset=utf-8");
            let (status, body) = answer(fast, ct, r#"{"name":"a"}"#).await;
            assert_eq!((status, body), (200, serde_json::json!("a")));
            let ct = Some("application/vnd.x+json");
            assert_eq!(answer(fast, ct, r#"{"name":"b"}"#).await.0, 200);
        }
    }

    #[test]
    fn if_match_takes_strong_and_weak_tags_and_refuses_a_star() {
        let mut headers = HeaderMap::new();
        assert!(matches!(
            if_match(&headers),
            Err(ApiError::PreconditionRequired)
        ));
        headers.insert(header::IF_MATCH, "W/\"3\"".parse().unwrap());
        assert_eq!(if_match(&headers).unwrap(), 3);
        headers.insert(header::IF_MATCH, "*".parse().unwrap());
        assert!(matches!(
            if_match(&headers),
            Err(ApiError::PreconditionFailed(_))
        ));
        headers.remove(header::IF_MATCH);
        headers.insert(header::IF_NONE_MATCH, "*".parse().unwrap());
        assert_eq!(expected(&headers).unwrap(), None);
    }

    #[test]
    fn a_stream_token_comes_from_the_header_before_the_query() {
        let parts = |uri: &str, auth: Option<&str>| {
            let mut b = HttpRequest::builder().uri(uri);
            if let Some(a) = auth {
                b = b.header(header::AUTHORIZATION, a);
            }
            b.body(()).unwrap().into_parts().0
        };
        assert_eq!(
            stream_token(&parts("/s?token=q", None)).as_deref(),
            Some("q")
        );
        assert_eq!(
            stream_token(&parts("/s?token=q", Some("Bearer h"))).as_deref(),
            Some("h")
        );
        assert_eq!(stream_token(&parts("/s?token=", Some("Bearer  "))), None);
    }
}
