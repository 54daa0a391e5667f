//! The admins' page of connected MCP servers: the list, adding one and
//! removing one — through `server::mcp_servers`, the door the JSON API
//! uses too, so a server added here or over the API is the same server.

use crate::domain::mcp_server_view::ServerView;
use crate::error::ApiError;
use leptos::prelude::*;

/// Every connected server with its status, tools and call figures
/// (admins).
#[server(prefix = "/rpc", endpoint = "mcp_servers_list")]
pub async fn mcp_servers_list() -> Result<Vec<ServerView>, ApiError> {
    use crate::server::{http::ctx, mcp_servers};
    ctx::finish(async {
        ctx::admin()?;
        mcp_servers::list(&ctx::state()?).await
    })
    .await
}

/// Adds server `name` at `url`, sending `headers` (one `Name: value` a
/// line) with every request to it (admins): its view; 422 naming the
/// field, 409 for a taken name, nothing stored then.
#[server(prefix = "/rpc", endpoint = "add_mcp_server")]
pub async fn add_mcp_server(
    name: String,
    url: String,
    #[server(default)] headers: String,
) -> Result<ServerView, ApiError> {
    use crate::domain::actor::Actor;
    use crate::domain::mcp_server_view::header_lines;
    use crate::server::http::ctx;
    use crate::server::mcp_servers::{self, NewMcpServer};
    ctx::finish(async {
        let admin = ctx::admin()?;
        let headers = header_lines(&headers).map_err(ApiError::Invalid)?;
        let by = Actor::admin(admin.0.id, &admin.0.display_name);
        let new = NewMcpServer {
            name,
            url: Some(url),
            headers,
            command: None,
            env: Default::default(),
        };
        mcp_servers::add(&ctx::state()?, &by, new).await
    })
    .await
}

/// Removes server `id` (admins); its tools stay in the catalogue,
/// unavailable. 404 if unknown.
#[server(prefix = "/rpc", endpoint = "remove_mcp_server")]
pub async fn remove_mcp_server(id: i64) -> Result<(), ApiError> {
    use crate::domain::actor::Actor;
    use crate::server::{http::ctx, mcp_servers};
    ctx::finish(async {
        let admin = ctx::admin()?;
        let by = Actor::admin(admin.0.id, &admin.0.display_name);
        mcp_servers::remove(&ctx::state()?, &by, id).await
    })
    .await
}
