//! Tools imported from connected MCP servers (`server::mcp_servers`): an
//! allowed call — already decided by the one call path (the rules in
//! force, the argument schema, the requirements) — is forwarded to the
//! upstream's `tools/call` with a named deadline, for every kind of
//! session. Its answer is the call's result; an answer the upstream flags
//! `isError` is a failed call the model reads; a tool gone upstream, a
//! removed server, an unreachable one or a timeout is a refusal saying so.

use super::{Ctx, Declined, Family, Outcome};
use crate::domain::lesson::outcome::Recorded;
use crate::server::mcp_servers::client::{call, Forwarded};
use crate::server::AppState;
use futures_util::future::BoxFuture;

/// The upstream tools: their ids are known only to the server.
pub const FAMILY: Family = Family {
    name: "upstream",
    tools: Vec::new,
    runs_for: |_| true,
    claims: imported,
    run,
};

/// Whether `tool` was imported from a connected MCP server.
fn imported(state: &AppState, tool: &str) -> bool {
    state.mcp_servers.link(tool).is_some()
}

fn run(cx: Ctx<'_>) -> BoxFuture<'_, Outcome> {
    Box::pin(async move {
        let Some(link) = cx.state.mcp_servers.link(cx.tool) else {
            return Ok(Err(Declined::Refused(format!(
                "`{}` is not an MCP server's tool",
                cx.tool
            ))));
        };
        let Some(server_id) = link.server_id else {
            return Ok(Err(Declined::Refused(format!(
                "`{}` is unavailable: its MCP server was removed",
                cx.tool
            ))));
        };
        if !link.available {
            return Ok(Err(Declined::Refused(format!(
                "`{}` is unavailable: its MCP server no longer lists `{}`",
                cx.tool, link.upstream_name
            ))));
        }
        Ok(
            match call(cx.state, server_id, &link.upstream_name, cx.arguments).await? {
                Forwarded::Answered(result, false) => Ok(Recorded {
                    result,
                    outcome: None,
                }),
                Forwarded::Answered(result, true) => Err(Declined::Failed(result)),
                Forwarded::Failed(why) => Err(Declined::Refused(format!(
                    "`{}` could not run: {why}",
                    cx.tool
                ))),
            },
        )
    })
}
