//! `/mcp-servers`: the admins' connected MCP servers — each with its
//! status, last error, tools and call figures (`server_card`), an add form
//! (`add_form`) and removal — kept live by the servers' event stream
//! (`GET /api/mcp-servers/events`), whose every frame is the whole list.

pub mod add_form;
pub mod server_card;

use crate::api::mcp_servers::mcp_servers_list;
use crate::domain::mcp_server_view::{with_added, without, ServerList, ServerView, SERVERS_EVENT};
use crate::domain::user::Role;
use crate::ui::auth::RequireRole;
use crate::ui::components::events::{subscribe, Link, LinkBadge};
use crate::ui::components::{fetched, read_json, Loaded};
use add_form::AddServer;
use leptos::prelude::*;
use server_card::ServerCard;

/// The event names the page listens for.
const SERVERS_EVENTS: [&str; 1] = [SERVERS_EVENT];

/// The page (admins). The list is read with the page, then replaced by
/// each frame of the stream.
#[island]
pub fn McpServersPage() -> impl IntoView {
    crate::ui::auth::provide_auth();
    let list = fetched(|| (), |_| mcp_servers_list());
    view! {
        <RequireRole role=Role::Admin>
            <section class="page-head">
                <h1>"MCP servers"</h1>
                <p class="muted">
                    "Upstream MCP servers whose tools join the catalogue as <server>__<tool>, to be bound in the "
                    <a href="/bindings">"tool bindings"</a>
                    " like any other. Their status, tools and call times update as they change."
                </p>
            </section>
            <Loaded resource=list loading="Loading MCP servers…" let:servers>
                <LiveServers servers />
            </Loaded>
        </RequireRole>
    }
}

/// The add form and the servers, live: the stream's frames replace the
/// list, and an add or a removal here changes it at once.
#[component]
fn LiveServers(servers: Vec<ServerView>) -> impl IntoView {
    let servers = RwSignal::new(servers);
    let link = RwSignal::new(Link::Connecting);
    subscribe(
        "/api/mcp-servers/events".into(),
        &SERVERS_EVENTS,
        move |_, data| {
            if let Ok(list) = read_json::<ServerList>(&data) {
                let _ = servers.try_set(list.servers);
            }
        },
        link,
    );
    // The page's own add and removal show at once, stream or not; neither
    // reads the list again, which could cross a newer frame on the way
    // and put an older list over it.
    let added = move |server: ServerView| servers.update(|list| with_added(list, server));
    let removed = move |id: i64| servers.update(|list| without(list, id));
    view! {
        <AddServer on_added=added />
        <section class="panel" data-testid="mcp-servers">
            <p class="muted small">
                {move || match servers.with(Vec::len) {
                    1 => "1 server ".to_owned(),
                    n => format!("{n} servers "),
                }}
                <LinkBadge link testid="servers-connection" state=true />
            </p>
            {move || {
                servers
                    .with(Vec::is_empty)
                    .then(|| view! { <p class="muted empty" data-testid="no-servers">"No MCP server yet: add one above."</p> })
            }}
            // Keyed by everything a card shows, so only changed cards are
            // rebuilt.
            <For each=move || servers.get() key=shown let:server>
                <ServerCard server on_removed=removed />
            </For>
        </section>
    }
}

/// What a card shows, as its key.
fn shown(s: &ServerView) -> (i64, String, Option<String>, u64, Option<u64>, String) {
    let tools = s
        .tools
        .iter()
        .map(|t| format!("{}={}={}", t.id, t.upstream_name, t.available))
        .collect::<Vec<_>>()
        .join(",");
    (
        s.id,
        format!("{}|{}|{}", s.name, reach(s), s.status.as_str()),
        s.last_error.clone(),
        s.calls,
        s.median_call_ms.map(f64::to_bits),
        tools,
    )
}

/// Where server `s` is reached: its URL, or a stdio server's command line.
pub(crate) fn reach(s: &ServerView) -> String {
    match (&s.url, &s.command) {
        (Some(url), _) => url.clone(),
        (None, Some(command)) => command.join(" "),
        (None, None) => String::new(),
    }
}
