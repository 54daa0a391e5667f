//! Tools imported from connected MCP servers (`server::mcp_servers`): an
//! allowed call — already decided by the one call path (the rules in
//! force, the argument schema, the requirements) — is forwarded to the
//! upstream's `tools/call` with a named deadline, for every kind of
//! session. Its answer is the call's result; an answer the upstream flags
//! `isError` is a failed call the model reads; a tool gone upstream, a
//! removed server, an unreachable one or a timeout is a refusal saying so.

use super::{Ctx, Declined, Family, Outcome};
use crate::domain::decide::{Refusal, Withheld};
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
        // `decide` refused it already while the rules in force withhold
        // it; this covers the moment before they are reloaded.
        let withheld = Withheld::of(
            link.server_id.is_some(),
            &link.upstream_name,
            link.available,
        );
        let server_id = match (link.server_id, withheld) {
            (Some(id), None) => id,
            (_, why) => {
                let refusal = Refusal::Withheld {
                    tool: cx.tool.to_owned(),
                    why: why.unwrap_or(Withheld::ServerRemoved),
                };
                return Ok(Err(Declined::Refused(refusal.to_string())));
            }
        };
        Ok(
            match call(cx.state, server_id, &link.upstream_name, cx.arguments).await? {
                Forwarded::Answered(result, false) => Ok(Recorded::plain(result)),
                Forwarded::Answered(result, true) => Err(Declined::Failed(result)),
                Forwarded::Failed(why) => Err(Declined::Refused(format!(
                    "`{}` could not run: {why}",
                    cx.tool
                ))),
            },
        )
    })
}
