//! The two MCP endpoints, authenticated here before the MCP server sees a
//! request. `/api/sessions/{id}/mcp`: the session's tools over MCP
//! (Streamable HTTP); the session token is checked here — 401 without one or for an
//! unknown one, 403 for another session's or for the plugin token (MCP
//! acts as the agent), 409 once the session has ended — before the request
//! reaches the MCP server, which then knows whose session it serves.
//!
//! Both endpoints count what a credential holds ([`serve`]): MCP sessions
//! against `MCP_SESSIONS_PER_CREDENTIAL` on every instance together (a
//! slot is reserved before rmcp runs `initialize`), and their event streams against the stream caps
//! like any other stream; a session id is usable only by the credential
//! that opened it.

use crate::domain::api_key::Scope;
use crate::domain::limits::{bytes_in_words, excerpt, API_BODY_MAX_BYTES};
use crate::domain::user::Role;
use crate::error::ApiError;
use crate::server::agent::mcp::{McpCaller, McpService};
use crate::server::auth::AuthUser;
use crate::server::http::extract::{bearer, user_with_role, ApiKey, CallTool, Session, SignedIn};
use crate::server::http::mcp_sessions::{session_owner, McpSessions};
use crate::server::http::streams::{api_key_key, user_key, StreamPermit};
use crate::server::workflows::mcp::{Editor, WorkflowMcpService};
use crate::server::{AppState, ServerError};
use axum::body::Body;
use axum::extract::{Request, State};
use axum::http::{header, Method, StatusCode};
use axum::response::{IntoResponse, Response};
use axum::routing::any;
use axum::Router;
use futures_util::StreamExt;
use rmcp::transport::streamable_http_server::StreamableHttpService;
use std::sync::Arc;

/// The session MCP route, served by `mcp`.
pub fn router(mcp: Arc<McpService>) -> Router<AppState> {
    Router::new().route(
        "/api/sessions/{id}/mcp",
        any(
            move |state: State<AppState>, session: Session<CallTool>, req: Request| {
                entry(mcp.clone(), state, session, req)
            },
        ),
    )
}

async fn entry(
    mcp: Arc<McpService>,
    State(state): State<AppState>,
    session: Session<CallTool>,
    mut req: Request,
) -> Response {
    let row = session.into_inner().row;
    if row.ended_at.is_some() {
        return ServerError::from(ApiError::Conflict(format!(
            "Session {} has ended: its MCP endpoint is closed.",
            row.id
        )))
        .into_response();
    }
    let credential = Credential {
        owner: session_owner(&row.id),
        streams: vec![(
            format!("session:{}", row.id),
            state.config.max_streams_per_session,
        )],
    };
    req.extensions_mut().insert(McpCaller {
        session: row.id.clone(),
        row,
    });
    serve(&mcp, &state.session_mcp, &state, credential, req).await
}

/// Who an MCP request counts against: the owner of the sessions it opens,
/// and the stream caps (key, cap) its streams take a slot under.
struct Credential {
    owner: String,
    streams: Vec<(String, usize)>,
}

/// Hands an authenticated request to rmcp, counting it against
/// `credential`: a request naming an MCP session of another credential
/// (or none) is 404, as for an expired one, so the client initialises
/// anew; one without a session id reserves a session slot first (429 when
/// the credential's are taken), which the session rmcp opens then holds;
/// a `GET` or `POST` takes a stream slot (429 over the cap), held for as
/// long as its event stream is open.
async fn serve<S>(
    mcp: &StreamableHttpService<S, McpSessions>,
    sessions: &Arc<McpSessions>,
    state: &AppState,
    credential: Credential,
    req: Request,
) -> Response
where
    S: rmcp::ServerHandler + Send + 'static,
{
    let session_id = req
        .headers()
        .get("mcp-session-id")
        .and_then(|v| v.to_str().ok());
    let reservation = match (session_id, req.method()) {
        (Some(id), _) if !sessions.owns(&credential.owner, id) => {
            return ServerError::from(ApiError::NotFound("This MCP session".into()))
                .into_response();
        }
        (None, &Method::POST) => match sessions.reserve(&credential.owner).await {
            Ok(slot) => Some(slot),
            Err(e) => return e.into_response(),
        },
        _ => None,
    };
    let permit = if matches!(*req.method(), Method::GET | Method::POST) {
        match state.streams.acquire(&credential.streams).await {
            Ok(permit) => Some(permit),
            Err(e) => return e.into_response(),
        }
    } else {
        None
    };
    let ending = req.method() == Method::DELETE;
    let response = match reservation {
        Some(slot) => McpSessions::opening(slot, mcp.handle(req)).await,
        None => mcp.handle(req).await,
    };
    let mut response = as_api_error(response.map(Body::new)).await;
    // rmcp answers an ended MCP session 202; clients (the Python SDK) take
    // 200 or 204 as "ended" and log anything else as a failure.
    if ending && response.status() == StatusCode::ACCEPTED {
        *response.status_mut() = StatusCode::NO_CONTENT;
    }
    holding(response, permit)
}

/// rmcp's own refusals (a body over the limit, not JSON-RPC, a missing
/// `Accept`, an unknown MCP session) come as plain text; the API's are
/// JSON, so each is said again as an [`ApiError`]: 413 `TooLarge` naming
/// the body's limit, 415 → 400 `BadRequest`, 404 `NotFound`, any other
/// status kept with `BadRequest`'s shape. JSON-RPC answers and event
/// streams pass untouched.
async fn as_api_error(response: Response) -> Response {
    let status = response.status();
    let plain = !response
        .headers()
        .get(header::CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .is_some_and(|v| v.starts_with("application/json") || v.starts_with("text/event-stream"));
    if !status.is_client_error() || !plain {
        return response;
    }
    let text = axum::body::to_bytes(response.into_body(), RMCP_REFUSAL_MAX_BYTES)
        .await
        .map(|b| excerpt(&String::from_utf8_lossy(&b)))
        .unwrap_or_default();
    let error = match status.as_u16() {
        413 => ApiError::TooLarge {
            field: "body".into(),
            limit: bytes_in_words(API_BODY_MAX_BYTES),
        },
        404 => ApiError::NotFound(text),
        _ => ApiError::BadRequest(text),
    };
    let mut answer = ServerError::from(error).into_response();
    if status.as_u16() != 415 {
        *answer.status_mut() = status;
    }
    answer
}

/// Most bytes of an rmcp refusal's text read (it is one line).
const RMCP_REFUSAL_MAX_BYTES: usize = 4096;

/// `response`, holding `permit` for as long as its body is sent if it is
/// an event stream; any other answer frees the slot at once.
fn holding(response: Response, permit: Option<StreamPermit>) -> Response {
    let is_stream = response
        .headers()
        .get(header::CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .is_some_and(|v| v.starts_with("text/event-stream"));
    match permit {
        Some(permit) if is_stream => response.map(|body| {
            let closed = permit.closed();
            Body::from_stream(
                body.into_data_stream()
                    .map(move |chunk| {
                        let _held = &permit;
                        chunk
                    })
                    .take_until(closed),
            )
        }),
        _ => response,
    }
}

/// `/mcp`: the workflow-editing MCP server, for an API key with
/// `workflows:write` or the signed-in admin (whose cookie calls must come
/// from the app's own pages, like a server function).
pub fn workflow_router(mcp: Arc<WorkflowMcpService>) -> Router<AppState> {
    Router::new().route(
        "/mcp",
        any(
            move |state: State<AppState>, user: SignedIn, req: Request| {
                workflow_entry(mcp.clone(), state, user, req)
            },
        ),
    )
}

async fn workflow_entry(
    mcp: Arc<WorkflowMcpService>,
    State(state): State<AppState>,
    SignedIn(user): SignedIn,
    mut req: Request,
) -> Response {
    let (method, headers) = (req.method().clone(), req.headers().clone());
    let (editor, owner, key_user) = match editor_of(&state, user.as_ref(), &method, &headers).await
    {
        Ok(who) => who,
        Err(e) => return e.into_response(),
    };
    req.extensions_mut().insert(editor);
    let per_user = state.config.max_streams_per_user;
    let mut streams = vec![(owner.clone(), per_user)];
    // A key's streams count with the account that made it, so they end
    // when that account is disabled.
    streams.extend(key_user.map(|id| (user_key(id), per_user)));
    let credential = Credential { streams, owner };
    serve(&mcp, &state.workflow_mcp, &state, credential, req).await
}

/// Who edits: the API key in `Authorization` (with `workflows:write`), or
/// else the signed-in admin; with the credential's name for the caps
/// (`key:{id}`, `user:{id}`, as the other streams count them) and, for a
/// key, the account that made it.
async fn editor_of(
    state: &AppState,
    user: Option<&AuthUser>,
    method: &Method,
    headers: &axum::http::HeaderMap,
) -> Result<(Editor, String, Option<i64>), ServerError> {
    if let Some(secret) = bearer(headers) {
        let key = ApiKey::verify(state, secret).await?;
        key.require(Scope::WorkflowsWrite)?;
        let editor = Editor { actor: key.actor() };
        return Ok((editor, api_key_key(key.id()), key.0.maker_id()));
    }
    let user = user_with_role(state, user, Role::Admin, method, headers)?;
    let editor = Editor {
        actor: crate::domain::actor::Actor::admin(user.0.id, &user.0.display_name),
    };
    Ok((editor, user_key(user.0.id), None))
}
