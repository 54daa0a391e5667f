//! `/api/sessions/{id}/mcp`: the session's tools over MCP (Streamable
//! HTTP). The session token is checked here — 401 without one or for an
//! unknown one, 403 for another session's — before the request reaches
//! the MCP server, which then knows whose session it serves.

use crate::server::agent::mcp::{McpCaller, McpService};
use crate::server::agent::sessions;
use crate::server::rest::sessions::token;
use crate::server::AppState;
use axum::body::Body;
use axum::extract::{Path, Request, State};
use axum::response::{IntoResponse, Response};
use axum::routing::any;
use axum::Router;
use std::sync::Arc;

/// The MCP route, served by `mcp`.
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
    let row = match sessions::authorize(&state, &id, token(req.headers())).await {
        Ok(row) => row,
        Err(e) => return e.into_response(),
    };
    req.extensions_mut().insert(McpCaller { session: row.id });
    mcp.handle(req).await.map(Body::new)
}
