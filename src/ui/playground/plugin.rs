//! The playground at work as a session's plugin: it becomes the plugin
//! (with the plugin token of a session it opened, or by a join code),
//! registers the tools its data allows, runs the agent's relayed calls on
//! its table and graph, and registers again when its tools change. The
//! talking is done by the served JavaScript client (`client`).

use crate::api::playground::PlaygroundSession;
use crate::ui::components::events::{Link, LinkBadge};
use crate::ui::playground::model::Playground;
use crate::ui::playground::view::{BarGraph, DataTable};
use leptos::prelude::*;

/// How the page becomes a session's plugin.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Start {
    /// A session the playground opened: its id and plugin token.
    Opened(PlaygroundSession),
    /// A join code a session's backend or page made.
    Code(String),
}

/// What the plugin shows, as signals (copied into the client's callbacks).
#[derive(Clone, Copy)]
struct Ui {
    state: RwSignal<Playground>,
    registered: RwSignal<Vec<String>>,
    log: RwSignal<Vec<(u32, String)>>,
    link: RwSignal<Link>,
    session: RwSignal<Option<String>>,
    failed: RwSignal<Option<String>>,
}

#[cfg(feature = "hydrate")]
impl Ui {
    /// Adds a line to the plugin log (the last 50 kept).
    fn note(self, text: String) {
        self.log.update(|l| {
            let n = l.last().map_or(1, |(n, _)| n + 1);
            l.push((n, text));
            if l.len() > 50 {
                l.remove(0);
            }
        })
    }
}

/// The names of the tools that make sense for `state`.
#[cfg(feature = "hydrate")]
fn tool_names(state: &Playground) -> Vec<String> {
    crate::ui::playground::model::tools_for(state)
        .into_iter()
        .map(|t| t.name)
        .collect()
}

/// The plugin at work: joins, registers, listens, runs, answers.
#[component]
pub fn Plugin(start: Start) -> impl IntoView {
    let ui = Ui {
        state: RwSignal::new(Playground::default()),
        registered: RwSignal::new(Vec::new()),
        log: RwSignal::new(Vec::new()),
        link: RwSignal::new(Link::Connecting),
        session: RwSignal::new(match &start {
            Start::Opened(s) => Some(s.session_id.clone()),
            Start::Code(_) => None,
        }),
        failed: RwSignal::new(None),
    };
    #[cfg(feature = "hydrate")]
    connect(start, ui);
    #[cfg(not(feature = "hydrate"))]
    let _ = start;
    let Ui {
        state,
        registered,
        log,
        link,
        session,
        failed,
    } = ui;
    view! {
        {move || failed.get().map(|e| view! { <p class="error" role="alert" data-testid="join-error">{e}</p> })}
        <section class="panel" data-testid="playground" data-session=move || session.get()>
            <div class="split">
                <h2>"Session " <code>{move || session.get().unwrap_or_else(|| "joining…".into())}</code></h2>
                <LinkBadge link testid="plugin-connection" state=true />
            </div>
            <p>
                <a href=move || format!("/sessions/{}", session.get().unwrap_or_default()) target="_blank" data-testid="watch-link">"Open the session page"</a>
                " to watch it and call tools with the console."
            </p>
            <p class="small" data-testid="registered-tools">
                "Registered tools: "
                {move || {
                    let list = registered.get();
                    if list.is_empty() { "none yet".to_owned() } else { list.join(", ") }
                }}
            </p>
        </section>
        <div class="two-col">
            <section class="panel">
                <h2>"Data"</h2>
                <DataTable state />
                <BarGraph state />
            </section>
            <section class="panel">
                <h2>"Plugin log"</h2>
                <ol class="plain-list small" data-testid="plugin-log">
                    <For each=move || log.get() key=|(n, _)| *n let:entry>
                        <li>{entry.1}</li>
                    </For>
                </ol>
            </section>
        </div>
    }
}

/// The stream state the badge shows for the client's status.
#[cfg(feature = "hydrate")]
fn link_of(status: &str) -> Link {
    match status {
        "live" => Link::Live,
        "idle" | "connecting" => Link::Connecting,
        _ => Link::Reconnecting,
    }
}

/// Becomes the plugin `start` says, then listens (calls, tool changes,
/// the stream's state) and registers.
#[cfg(feature = "hydrate")]
fn connect(start: Start, ui: Ui) {
    use crate::ui::playground::client;
    leptos::task::spawn_local(async move {
        let plugin = match start {
            Start::Opened(s) => client::with_token(&s.session_id, &s.plugin_token),
            Start::Code(code) => match client::join(&code).await {
                Ok(plugin) => plugin,
                Err(e) => {
                    ui.failed.try_set(Some(format!("Joining failed: {e}")));
                    return;
                }
            },
        };
        ui.session.try_set(Some(plugin.session_id()));
        client::on_status(&plugin, move |status, error| {
            ui.link.try_set(link_of(&status));
            if let Some(e) = error {
                ui.note(format!("The plugin stopped: {e}"));
            }
        });
        let me = plugin.clone();
        client::on_call(&plugin, move |name, arguments| {
            answer(ui, &me, &name, &arguments)
        });
        client::on_tools_changed(&plugin, move |update| {
            ui.note(format!(
                "Tools changed: {} plugin tools",
                update["toolCount"]
            ));
        });
        register(ui, plugin).await;
    });
}

/// Runs relayed call `name` on the data; registers again if that changed
/// which tools make sense.
#[cfg(feature = "hydrate")]
fn answer(
    ui: Ui,
    plugin: &crate::ui::playground::client::Plugin,
    name: &str,
    arguments: &serde_json::Value,
) -> Result<serde_json::Value, String> {
    let outcome = ui
        .state
        .try_update(|s| crate::ui::playground::model::execute(s, name, arguments))
        .unwrap_or_else(|| Err("the playground was closed".into()));
    ui.note(match &outcome {
        Ok(result) => format!("{name} → {result}"),
        Err(e) => format!("{name} failed: {e}"),
    });
    if ui.registered.get_untracked() != tool_names(&ui.state.get_untracked()) {
        leptos::task::spawn_local(register(ui, plugin.clone()));
    }
    outcome
}

/// Registers the tools the data allows now.
#[cfg(feature = "hydrate")]
async fn register(ui: Ui, plugin: crate::ui::playground::client::Plugin) {
    let state = ui.state.get_untracked();
    let names = tool_names(&state);
    let body = crate::ui::playground::registration(&state);
    match crate::ui::playground::client::register(&plugin, &body).await {
        Ok(()) => {
            ui.note(format!("Registered: {}", names.join(", ")));
            ui.registered.try_set(names);
        }
        Err(e) => ui.note(format!("Registration failed: {e}")),
    }
}
