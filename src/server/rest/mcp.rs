//! The two MCP endpoints, authenticated here before the MCP server sees a
//! request. `/api/sessions/{id}/mcp`: the session's tools over MCP
//! (Streamable HTTP); the session token is checked here — 401 without one or for an
//! unknown one, 403 for another session's or for the plugin token (MCP
//! acts as the agent) — before the request reaches
//! the MCP server, which then knows whose session it serves.

use crate::domain::api_key::Scope;
use crate::domain::session_access::Act;
use crate::domain::user::Role;
use crate::error::ApiError;
use crate::server::agent::mcp::{McpCaller, McpService};
use crate::server::agent::sessions;
use crate::server::auth::AuthUser;
use crate::server::rest::sessions::token;
use crate::server::workflow_mcp::{Editor, WorkflowMcpService};
use crate::server::{AppState, ServerError};
use axum::body::Body;
use axum::extract::{Path, Request, State};
use axum::http::Method;
use axum::response::{IntoResponse, Response};
use axum::routing::any;
use axum::{Extension, Router};
use std::sync::Arc;

/// The session MCP route, served by `mcp`.
pub fn router(mcp: Arc<McpService>) -> Router<AppState> {
    Router::new().route(
        "/api/sessions/{id}/mcp",
        any(
            move |state: State<AppState>, id: Path<String>, req: Request| {
                entry(mcp.clone(), state, id, req)
            },
        ),
    )
}

async fn entry(
    mcp: Arc<McpService>,
    State(state): State<AppState>,
    Path(id): Path<String>,
    mut req: Request,
) -> Response {
    let row = match sessions::admit(&state, &id, token(req.headers()), Act::CallTool).await {
        Ok(admitted) => admitted.row,
        Err(e) => return e.into_response(),
    };
    req.extensions_mut().insert(McpCaller { session: row.id });
    mcp.handle(req).await.map(Body::new)
}

/// `/mcp`: the workflow-editing MCP server, for an API key with
/// `workflows:write` or the signed-in admin (whose cookie calls must come
/// from the app's own pages, like a server function).
pub fn workflow_router(mcp: Arc<WorkflowMcpService>) -> Router<AppState> {
    Router::new().route(
        "/mcp",
        any(
            move |state: State<AppState>, user: Option<Extension<AuthUser>>, req: Request| {
                workflow_entry(mcp.clone(), state, user, req)
            },
        ),
    )
}

async fn workflow_entry(
    mcp: Arc<WorkflowMcpService>,
    State(state): State<AppState>,
    user: Option<Extension<AuthUser>>,
    mut req: Request,
) -> Response {
    let (method, headers) = (req.method().clone(), req.headers().clone());
    let editor = match editor_of(&state, user.as_deref(), &method, &headers).await {
        Ok(editor) => editor,
        Err(e) => return e.into_response(),
    };
    req.extensions_mut().insert(editor);
    mcp.handle(req).await.map(Body::new)
}

/// Who edits: the API key in `Authorization` (with `workflows:write`), or
/// else the signed-in admin.
async fn editor_of(
    state: &AppState,
    user: Option<&AuthUser>,
    method: &Method,
    headers: &axum::http::HeaderMap,
) -> Result<Editor, ServerError> {
    if let Some(secret) = token(headers) {
        let key = crate::server::store::api_keys::verify(&state.db, secret)
            .await?
            .ok_or(ApiError::Unauthenticated)?;
        let key = crate::server::rest::ApiKey(key);
        key.require(Scope::WorkflowsWrite)?;
        return Ok(Editor { actor: key.actor() });
    }
    let user = user.ok_or(ApiError::Unauthenticated)?;
    user.require(Role::Admin)?;
    if method != Method::GET {
        crate::server::auth::require_same_origin(state, headers)?;
    }
    Ok(Editor {
        actor: crate::domain::actor::Actor::admin(user.0.id, &user.0.display_name),
    })
}
