//! Connected MCP servers: the one door every entry point uses to add,
//! remove and read them, and the in-memory index of which catalogue tools
//! came from which server.
//!
//! An upstream server's tools are catalogue tools: an import goes through
//! `catalogue::change` (so versions, history and the rules in force hold,
//! and sessions are told once), and a session's call of one is decided by
//! the one call path like any other, then forwarded by the `upstream`
//! family of `agent::execute`. The connection itself, its back-off and
//! `tools/list_changed`, is `client`; how a server is reached (HTTP with
//! TLS, or a process on stdio) is `transport`, `tls` and `stdio`; what
//! admins watch of them (call times, the live list's event stream),
//! `health`.

pub mod client;
pub mod health;
pub mod stdio;
pub mod tls;
pub mod transport;

use crate::domain::actor::Actor;
use crate::domain::error::FieldError;
use crate::domain::limits::MCP_SERVERS_MAX;
use crate::domain::mcp_server::{import, McpServerName, McpServerStatus, UpstreamTool};
use crate::domain::mcp_server_view::CallTimes;
pub use crate::domain::mcp_server_view::{ServerTool, ServerView};
use crate::domain::mcp_stdio::{Endpoint, Reach};
use crate::error::ApiError;
use crate::server::agent::rules::withheld_of;
use crate::server::catalogue::{change, field_as_is};
use crate::server::store::bindings::tools as catalogue_tools;
use crate::server::store::mcp_servers::{self as store, LinkRow, McpServerRow};
use crate::server::{AppState, ServerError};
use serde::Deserialize;
use std::collections::{BTreeMap, HashMap};
use std::sync::{Arc, Mutex, OnceLock, RwLock};

/// A server to add, as sent: each field parsed by [`NewMcpServer::parse`].
#[derive(Debug, Clone, Deserialize)]
pub struct NewMcpServer {
    /// Its name.
    pub name: String,
    /// Its Streamable HTTP endpoint (or `command`).
    #[serde(default)]
    pub url: Option<String>,
    /// Headers sent with every request to it.
    #[serde(default)]
    pub headers: BTreeMap<String, String>,
    /// The program and arguments of a stdio server (or `url`), where
    /// `MCP_STDIO_ALLOWED`.
    #[serde(default)]
    pub command: Option<Vec<String>>,
    /// Variables a stdio server's process gets.
    #[serde(default)]
    pub env: BTreeMap<String, String>,
}

impl NewMcpServer {
    /// Each field parsed (a command only when `stdio_allowed`), or the
    /// first refused naming its field.
    pub fn parse(self, stdio_allowed: bool) -> Result<(McpServerName, Reach), FieldError> {
        let name = McpServerName::parse(&self.name)?;
        let reach = Reach::parse(
            self.url,
            self.headers,
            self.command,
            self.env,
            stdio_allowed,
        )?;
        Ok((name, reach))
    }
}

/// Where an imported tool is called.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Link {
    /// Its server (`None`: removed).
    pub server_id: Option<i64>,
    /// Its name upstream.
    pub upstream_name: String,
    /// Whether the upstream still lists it.
    pub available: bool,
}

/// A live connection to one server: the peer to call, and how to make
/// its task reconnect (a call that found the upstream gone kicks it).
#[derive(Clone)]
pub struct Live {
    /// The MCP client's handle.
    pub peer: rmcp::Peer<rmcp::RoleClient>,
    /// Wakes the server's task to drop this connection and reconnect.
    pub kick: Arc<tokio::sync::Notify>,
}

/// The index of imported tools and the live connections, shared by the
/// executor and the connection tasks (`client`), which it tells when
/// servers are added or removed.
#[derive(Default)]
pub struct Registry {
    links: RwLock<HashMap<String, Link>>,
    live: Mutex<HashMap<i64, Live>>,
    /// Notified when a server is added or removed.
    pub servers_changed: tokio::sync::Notify,
    /// The HTTP client upstreams are reached with (TLS, `MCP_CA_FILE`),
    /// built by [`load`].
    http: OnceLock<reqwest13::Client>,
    /// Each server's forwarded call times (`health`).
    times: Mutex<HashMap<i64, CallTimes>>,
    /// Notified when anything admins see of the servers changed: a
    /// status, an import, a server added or removed, a call (`health`
    /// sends the list to the watching pages).
    views_changed: tokio::sync::Notify,
    /// The watching pages' channel, while the server runs (`health`).
    frames: Mutex<Option<tokio::sync::broadcast::Sender<Arc<crate::server::agent::hub::Frame>>>>,
}

impl Registry {
    /// The HTTP client for upstreams, once [`load`] has built it.
    pub fn http_client(&self) -> Option<reqwest13::Client> {
        self.http.get().cloned()
    }

    /// The link of catalogue tool `tool`, if it was imported.
    pub fn link(&self, tool: &str) -> Option<Link> {
        self.links.read().ok()?.get(tool).cloned()
    }

    /// Server `id`'s live connection, if any.
    pub fn live(&self, id: i64) -> Option<Live> {
        self.live.lock().ok()?.get(&id).cloned()
    }

    /// Records server `id`'s live connection (`None`: it has none).
    pub fn set_live(&self, id: i64, live: Option<Live>) {
        if let Ok(mut all) = self.live.lock() {
            match live {
                Some(live) => all.insert(id, live),
                None => all.remove(&id),
            };
        }
    }

    /// Tells the watching pages that what they show changed.
    pub fn touch(&self) {
        self.views_changed.notify_one();
    }

    /// Server `id`'s call times, if it had calls.
    fn call_times(&self, id: i64) -> Option<CallTimes> {
        self.times.lock().ok()?.get(&id).cloned()
    }

    fn set_links(&self, rows: Vec<LinkRow>) {
        let map = rows
            .into_iter()
            .map(|r| {
                let link = Link {
                    server_id: r.server_id,
                    upstream_name: r.upstream_name,
                    available: r.available,
                };
                (r.tool_id, link)
            })
            .collect();
        if let Ok(mut links) = self.links.write() {
            *links = map;
        }
    }
}

/// At start-up: builds the upstreams' HTTP client (an unreadable
/// `MCP_CA_FILE` stops the start) and reads the imported tools' links (the
/// connections are made by `client::supervise`; the rules in force, loaded
/// before, already withhold the unavailable ones).
pub async fn load(state: &AppState) -> Result<(), ServerError> {
    let client = tls::http_client(state.config.mcp_transports.ca_file.as_deref())?;
    let _ = state.mcp_servers.http.set(client);
    let rows = store::links(&state.db).await?;
    state.mcp_servers.set_links(rows);
    Ok(())
}

/// Adds a server (nothing stored when a field is refused: 422 naming it;
/// 409 for a taken name) and starts connecting to it; its view.
pub async fn add(
    state: &AppState,
    actor: &Actor,
    new: NewMcpServer,
) -> Result<ServerView, ServerError> {
    crate::server::catalogue::require_power(actor)?;
    let stdio_allowed = state.config.mcp_transports.stdio_allowed;
    let (name, reach) = new.parse(stdio_allowed).map_err(ApiError::Invalid)?;
    let now = state.clock.now_ms() / 1000;
    let id = store::insert(&state.db, &name, &reach, now, MCP_SERVERS_MAX).await?;
    tracing::info!(server = %name, id, "MCP server added");
    state.mcp_servers.servers_changed.notify_one();
    state.mcp_servers.touch();
    view(state, id).await
}

/// Removes server `id` (404 if unknown): its task closes its connection
/// and its tools stay in the catalogue, unavailable.
pub async fn remove(state: &AppState, actor: &Actor, id: i64) -> Result<(), ServerError> {
    crate::server::catalogue::require_power(actor)?;
    if !store::delete(&state.db, id).await? {
        return Err(not_found(id));
    }
    state.mcp_servers.servers_changed.notify_one();
    if let Ok(mut times) = state.mcp_servers.times.lock() {
        times.remove(&id);
    }
    state.mcp_servers.touch();
    reload_links(state).await
}

/// Every server with its tools.
pub async fn list(state: &AppState) -> Result<Vec<ServerView>, ServerError> {
    let servers = store::all(&state.db).await?;
    let links = store::links(&state.db).await?;
    let tools = catalogue_tools(&state.db).await?;
    Ok(servers
        .into_iter()
        .map(|s| {
            let times = state.mcp_servers.call_times(s.id);
            view_of(s, &links, &tools).with_health(times.as_ref())
        })
        .collect())
}

/// Server `id` with its tools (404 if unknown).
pub async fn view(state: &AppState, id: i64) -> Result<ServerView, ServerError> {
    let server = store::get(&state.db, id)
        .await?
        .ok_or_else(|| not_found(id))?;
    let links = store::links(&state.db).await?;
    let tools = catalogue_tools(&state.db).await?;
    let times = state.mcp_servers.call_times(id);
    Ok(view_of(server, &links, &tools).with_health(times.as_ref()))
}

fn not_found(id: i64) -> ServerError {
    ApiError::NotFound(format!("MCP server {id}")).into()
}

fn view_of(
    server: McpServerRow,
    links: &[LinkRow],
    tools: &[crate::domain::catalogue::CatalogueTool],
) -> ServerView {
    let tools = links
        .iter()
        .filter(|l| l.server_id == Some(server.id))
        .map(|l| ServerTool {
            id: l.tool_id.clone(),
            upstream_name: l.upstream_name.clone(),
            description: tools
                .iter()
                .find(|t| t.id.as_str() == l.tool_id)
                .map_or_else(|| l.upstream_description.clone(), |t| t.description.clone()),
            available: l.available,
        })
        .collect();
    ServerView {
        id: server.id,
        name: server.name.to_string(),
        url: match &server.endpoint {
            Endpoint::Url(url) => Some(url.as_str().to_owned()),
            Endpoint::Command(_) => None,
        },
        command: match &server.endpoint {
            Endpoint::Command(command) => Some(command.parts().to_vec()),
            Endpoint::Url(_) => None,
        },
        status: server.status,
        last_error: server.last_error,
        tools,
        tool_count: 0,
        calls: 0,
        median_call_ms: None,
    }
}

/// Imports server `id`'s `listed` tools into the catalogue (through its
/// one door, as one version by the system), links them, marks those it no
/// longer lists unavailable, and records its status. Entries left out are
/// named in its last error.
pub async fn import_listed(
    state: &AppState,
    id: i64,
    name: &McpServerName,
    listed: &[UpstreamTool],
) -> Result<(), ServerError> {
    let imported = import(name, listed);
    let current = catalogue_tools(&state.db).await?;
    let before = store::links(&state.db).await?;
    let tools: Vec<_> = imported
        .tools
        .into_iter()
        .map(|t| {
            let existing = current.iter().find(|c| c.id == t.tool.id);
            let last = before
                .iter()
                .find(|l| l.tool_id == t.tool.id.as_str())
                .map(|l| l.upstream_description.as_str());
            t.over(existing, last)
        })
        .collect();
    let incoming: Vec<_> = tools.iter().map(|t| t.tool.clone()).collect();
    let actor = Actor::system(&format!("MCP server {name}"));
    change(state, &actor, &incoming, None, None, &field_as_is).await?;
    let links: Vec<LinkRow> = tools
        .iter()
        .map(|t| LinkRow {
            tool_id: t.tool.id.to_string(),
            server_id: Some(id),
            upstream_name: t.upstream_name.clone(),
            upstream_description: t.upstream_description.clone(),
            available: true,
        })
        .collect();
    store::set_links(&state.db, id, &links).await?;
    reload_links(state).await?;
    let note = (!imported.skipped.is_empty()).then(|| imported.skipped.join("; "));
    let now = state.clock.now_ms() / 1000;
    store::set_status(
        &state.db,
        id,
        McpServerStatus::Connected,
        note.as_deref(),
        now,
    )
    .await?;
    state.mcp_servers.touch();
    Ok(())
}

/// Re-reads every imported tool's link into the registry and, when that
/// changes which tools are withheld (gone upstream, server removed, or
/// back), puts new rules in force and tells open sessions, as after a
/// bindings change.
async fn reload_links(state: &AppState) -> Result<(), ServerError> {
    let rows = store::links(&state.db).await?;
    let withheld = withheld_of(&rows);
    state.mcp_servers.set_links(rows);
    if *state.rules().withheld_tools() != withheld {
        crate::server::agent::listing::rules_changed(state).await?;
    }
    Ok(())
}
