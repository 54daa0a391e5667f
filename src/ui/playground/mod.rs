//! `/playground`: a small CODAP-like plugin that runs in the browser, to
//! drive the plugin loop by hand. It opens a session (or joins one by id
//! and plugin token), registers the tools its data allows (`ui::playground::model`),
//! listens for the agent's relayed calls on `plugin-events`, runs them on
//! its visible table and graph, answers on `tool-results`, and registers
//! again when its tools change. The session page's console plays the
//! agent. Its calls go through `ui::components::http`, as a plugin's would.

pub mod model;
pub mod view;

use crate::api::playground::{playground_workflows, OpenPlaygroundSession, PlaygroundSession};
use crate::domain::user::Role;
use crate::ui::auth::RequireRole;
use crate::ui::components::{fetched, read_json, Loaded};
use crate::ui::current;
use crate::ui::playground::model::Playground;
use leptos::prelude::*;
use view::{BarGraph, DataTable};

/// The page (signed-in users).
#[island]
pub fn PlaygroundPage() -> impl IntoView {
    crate::ui::auth::provide_auth();
    let workflows = fetched(|| (), |_| playground_workflows());
    let open = ServerAction::<OpenPlaygroundSession>::new();
    let session = RwSignal::new(None::<PlaygroundSession>);
    Effect::new(move |_| {
        if let Some(Ok(s)) = current(&open.value()) {
            session.set(Some(s));
        }
    });
    let error = move || {
        current(&open.value())
            .and_then(Result::err)
            .map(|e| e.to_string())
    };
    view! {
        <RequireRole role=Role::Teacher>
            <section class="page-head">
                <h1>"Plugin playground"</h1>
                <p class="muted">
                    "This page is a plugin: it registers tools with a session, runs the agent's calls of them on its table and graph, and answers. Open the session's page to play the agent with the console."
                </p>
            </section>
            {move || match session.get() {
                Some(s) => view! { <Plugin session=s /> }.into_any(),
                None => view! {
                    <div class="two-col">
                        <section class="panel">
                            <h2>"Open a new session"</h2>
                            <Loaded resource=workflows loading="Loading workflows…" let:list>
                                <ActionForm action=open>
                                    <label class="field">
                                        <span>"Workflow"</span>
                                        <select name="workflow_id" data-testid="playground-workflow">
                                            {list.into_iter().map(|(id, name)| view! { <option value=id.clone()>{format!("{name} ({id})")}</option> }).collect_view()}
                                        </select>
                                    </label>
                                    <button type="submit" class="button primary" data-testid="playground-open">"Open session"</button>
                                </ActionForm>
                            </Loaded>
                            {move || error().map(|e| view! { <p class="error" role="alert">{e}</p> })}
                        </section>
                        <JoinForm session />
                    </div>
                }
                .into_any(),
            }}
        </RequireRole>
    }
}

/// Joins a session an agent backend opened, by its id and the plugin token
/// the backend got for it (a session token works too, but a plugin needs
/// no more than the plugin token's rights).
#[component]
fn JoinForm(session: RwSignal<Option<PlaygroundSession>>) -> impl IntoView {
    let id = RwSignal::new(String::new());
    let token = RwSignal::new(String::new());
    view! {
        <section class="panel">
            <h2>"Join a session"</h2>
            <form on:submit=move |ev| {
                ev.prevent_default();
                let (i, t) = (id.get_untracked().trim().to_owned(), token.get_untracked().trim().to_owned());
                if !i.is_empty() && !t.is_empty() {
                    session.set(Some(PlaygroundSession { session_id: i, plugin_token: t }));
                }
            }>
                <label class="field">
                    <span>"Session id"</span>
                    <input type="text" prop:value=id on:input=move |ev| id.set(event_target_value(&ev)) data-testid="join-id" />
                </label>
                <label class="field">
                    <span>"Plugin token"</span>
                    <input type="password" prop:value=token on:input=move |ev| token.set(event_target_value(&ev)) data-testid="join-token" />
                </label>
                <button type="submit" class="button">"Join"</button>
            </form>
        </section>
    }
}

/// The plugin at work in `session`: registers, listens, runs, answers.
#[component]
fn Plugin(session: PlaygroundSession) -> impl IntoView {
    let state = RwSignal::new(Playground::default());
    let registered = RwSignal::new(Vec::<String>::new());
    let log = RwSignal::new(Vec::<(u32, String)>::new());
    let link = RwSignal::new(crate::ui::components::events::Link::Connecting);
    let id = session.session_id.clone();
    let token = StoredValue::new(session.plugin_token.clone());
    let note = move |text: String| {
        log.update(|l| {
            let n = l.last().map_or(1, |(n, _)| n + 1);
            l.push((n, text));
            if l.len() > 50 {
                l.remove(0);
            }
        })
    };
    let register = {
        let id = id.clone();
        move || {
            #[cfg(feature = "hydrate")]
            {
                let id = id.clone();
                leptos::task::spawn_local(async move {
                    let body = registration(&state.get_untracked());
                    let names: Vec<String> =
                        crate::ui::playground::model::tools_for(&state.get_untracked())
                            .into_iter()
                            .map(|t| t.name)
                            .collect();
                    let url = format!("/api/sessions/{id}/register-tools");
                    match crate::ui::components::http::send(
                        "POST",
                        &url,
                        Some(&token.get_value()),
                        Some(&body),
                    )
                    .await
                    {
                        Ok(_) => {
                            note(format!("Registered: {}", names.join(", ")));
                            registered.try_set(names);
                        }
                        Err(e) => note(format!("Registration failed: {e}")),
                    }
                });
            }
            #[cfg(not(feature = "hydrate"))]
            let _ = (&id, token, note, registered);
        }
    };
    register();
    let on_request = {
        let id = id.clone();
        let register = register.clone();
        move |_: &str, text: String| {
            let Ok(request) = read_json::<serde_json::Value>(&text) else {
                return;
            };
            let name = request["name"].as_str().unwrap_or_default().to_owned();
            let call_id = request["callId"].as_str().unwrap_or_default().to_owned();
            let outcome = state
                .try_update(|s| {
                    crate::ui::playground::model::execute(s, &name, &request["arguments"])
                })
                .unwrap_or_else(|| Err("the playground was closed".into()));
            note(match &outcome {
                Ok(result) => format!("{name} → {result}"),
                Err(e) => format!("{name} failed: {e}"),
            });
            let answer = match outcome {
                Ok(result) => serde_json::json!({"result": result}),
                Err(e) => serde_json::json!({"error": e}),
            };
            let now: Vec<String> = crate::ui::playground::model::tools_for(&state.get_untracked())
                .into_iter()
                .map(|t| t.name)
                .collect();
            let changed = registered.get_untracked() != now;
            #[cfg(feature = "hydrate")]
            {
                let url = format!("/api/sessions/{id}/tool-results/{call_id}");
                let register = register.clone();
                leptos::task::spawn_local(async move {
                    if let Err(e) = crate::ui::components::http::send(
                        "POST",
                        &url,
                        Some(&token.get_value()),
                        Some(&answer),
                    )
                    .await
                    {
                        note(format!("Answer to call {call_id} failed: {e}"));
                    }
                    if changed {
                        register();
                    }
                });
            }
            #[cfg(not(feature = "hydrate"))]
            let _ = (&id, answer, changed, &register, call_id);
        }
    };
    crate::ui::components::events::subscribe(
        format!(
            "/api/sessions/{id}/plugin-events?token={}",
            session.plugin_token
        ),
        &["tool-call-request"],
        on_request,
        link,
    );
    let watch = format!("/sessions/{id}");
    view! {
        <section class="panel" data-testid="playground" data-session=id.clone()>
            <div class="split">
                <h2>"Session " <code>{id.clone()}</code></h2>
                <crate::ui::components::events::LinkBadge link testid="plugin-connection" state=true />
            </div>
            <p>
                <a href=watch.clone() target="_blank" data-testid="watch-link">"Open the session page"</a>
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

/// The registration the playground sends for `state`.
pub fn registration(state: &Playground) -> serde_json::Value {
    let tables: Vec<&String> = state.table.iter().collect();
    serde_json::json!({
        "pluginType": "codap",
        "pluginVersion": "playground-1",
        "capabilities": [
            {"type": "data_analysis", "level": "basic", "resources": ["table"], "permissions": ["read", "write"]},
            {"type": "visualization", "level": "basic", "resources": ["bar-graph"], "permissions": ["write"]}
        ],
        "availableTools": crate::ui::playground::model::tools_for(state),
        "environment": {
            "version": "1.0",
            "features": ["table", "bar-graph"],
            "limitations": [format!("{} rows", crate::ui::playground::model::MAX_ROWS)],
            "contextInfo": {"dataContexts": tables, "components": if state.graph.is_some() { vec!["graph"] } else { vec![] }}
        }
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_registration_is_what_the_api_takes() {
        let body = registration(&Playground::default());
        let parsed: crate::domain::plugin::Registration = serde_json::from_value(body).unwrap();
        assert_eq!(parsed.available_tools[0].name, "createTable");
        assert_eq!(parsed.capabilities.len(), 2);
    }
}
