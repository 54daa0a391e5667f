//! One connected MCP server: its name and URL, its status as a badge (its
//! `data-state` for scripts), its last error, its tool count, calls and
//! median call time, its tools with a link to bind them, and removal
//! after a confirmation. Never its headers: the view has none.

use crate::api::mcp_servers::RemoveMcpServer;
use crate::domain::mcp_server::McpServerStatus;
use crate::domain::mcp_server_view::{ServerTool, ServerView};
use crate::ui::current;
use leptos::prelude::*;

/// The card of `server`; `on_removed` gets its id once it is removed.
#[component]
pub fn ServerCard<F>(server: ServerView, on_removed: F) -> impl IntoView
where
    F: Fn(i64) + Copy + Send + Sync + 'static,
{
    let median = server
        .median_call_ms
        .map_or_else(|| "–".to_owned(), |ms| format!("{ms:.1} ms"));
    let tools = server.tools.clone();
    view! {
        <article class="panel mcp-server" data-server=server.name.clone() data-testid=format!("mcp-server-{}", server.name)>
            <header class="split">
                <div>
                    <h2>{server.name.clone()} " " <StatusBadge status=server.status /></h2>
                    <p class="muted small"><code>{super::reach(&server)}</code></p>
                </div>
                <RemoveServer id=server.id name=server.name.clone() on_removed />
            </header>
            {server.last_error.clone().map(|e| view! { <p class="error" data-testid="server-error">{e}</p> })}
            <p class="small">
                <span data-testid="server-tool-count">{server.tool_count}</span>
                {plural(server.tool_count as u64, " tool available", " tools available")}
                " · "
                <span data-testid="server-calls">{server.calls}</span>
                {plural(server.calls, " call", " calls")}
                " · median "
                <span data-testid="server-median">{median}</span>
            </p>
            <ToolTable tools />
        </article>
    }
}

/// `one` for 1, else `many`.
fn plural(n: u64, one: &'static str, many: &'static str) -> &'static str {
    if n == 1 {
        one
    } else {
        many
    }
}

/// The status as a badge: green connected, amber connecting, red error.
#[component]
fn StatusBadge(status: McpServerStatus) -> impl IntoView {
    let class = match status {
        McpServerStatus::Connected => "badge ok",
        McpServerStatus::Connecting => "badge warn",
        McpServerStatus::Error => "badge bad",
    };
    view! {
        <span class=class data-testid="server-status" data-state=status.as_str()>
            {status.as_str()}
        </span>
    }
}

/// The imported tools: catalogue id, upstream name, whether the upstream
/// still lists it; bound in the matrix at `/bindings`.
#[component]
fn ToolTable(tools: Vec<ServerTool>) -> impl IntoView {
    if tools.is_empty() {
        return view! { <p class="muted small">"No tools imported yet."</p> }.into_any();
    }
    view! {
        <table class="table compact" data-testid="server-tools">
            <thead>
                <tr>
                    <th>"Tool"</th>
                    <th>"Upstream name"</th>
                    <th>"Available"</th>
                </tr>
            </thead>
            <tbody>
                {tools
                    .into_iter()
                    .map(|t| {
                        view! {
                            <tr data-tool=t.id.clone() data-available=t.available.to_string()>
                                <td title=t.description.clone()><code>{t.id.clone()}</code></td>
                                <td><code>{t.upstream_name.clone()}</code></td>
                                <td>{if t.available { "yes" } else { "no: gone upstream" }}</td>
                            </tr>
                        }
                    })
                    .collect_view()}
            </tbody>
        </table>
        <p class="small">
            <a href="/bindings" data-testid="bind-tools">"Bind these tools in the matrix →"</a>
        </p>
    }
    .into_any()
}

/// "Remove", then "Remove <name>?" with yes and cancel; a failure is shown
/// beside it.
#[component]
fn RemoveServer<F>(id: i64, name: String, on_removed: F) -> impl IntoView
where
    F: Fn(i64) + Copy + Send + Sync + 'static,
{
    let asking = RwSignal::new(false);
    let remove = ServerAction::<RemoveMcpServer>::new();
    Effect::new(move |_| {
        if let Some(Ok(())) = current(&remove.value()) {
            on_removed(id);
        }
    });
    let question = format!("Remove {name}? Its tools stay in the catalogue, unavailable.");
    view! {
        <div class="remove-server">
            {move || {
                if asking.get() {
                    view! {
                        <span class="small" data-testid="confirm-remove">
                            {question.clone()} " "
                            <button type="button" class="button danger-solid small" on:click=move |_| {
                                remove.dispatch(RemoveMcpServer { id });
                            }>"Yes, remove"</button>
                            " "
                            <button type="button" class="button ghost small" on:click=move |_| asking.set(false)>
                                "Cancel"
                            </button>
                        </span>
                    }
                        .into_any()
                } else {
                    view! {
                        <button type="button" class="button danger small" on:click=move |_| asking.set(true)>
                            "Remove"
                        </button>
                    }
                        .into_any()
                }
            }}
            {move || {
                current(&remove.value())
                    .and_then(Result::err)
                    .map(|e| view! { <p class="error" role="alert">{e.to_string()}</p> })
            }}
        </div>
    }
}
