//! `/playground`: a small CODAP-like plugin that runs in the browser, to
//! drive the plugin loop by hand. It opens a session (or joins one by a
//! join code), registers the tools its data allows (`ui::playground::model`),
//! runs the agent's relayed calls on its visible table and graph, answers
//! them, and registers again when its tools change (`plugin`). The session
//! page's console plays the agent. It talks to the API through the
//! JavaScript client Switchboard serves to every plugin page (`client`).

#[cfg(feature = "hydrate")]
mod client;
pub mod model;
mod plugin;
pub mod view;

use crate::api::playground::{playground_workflows, OpenPlaygroundSession};
use crate::domain::user::Role;
use crate::ui::auth::RequireRole;
use crate::ui::components::{fetched, Loaded};
use crate::ui::current;
use crate::ui::playground::model::Playground;
use leptos::prelude::*;
use plugin::{Plugin, Start};

/// The page (signed-in users).
#[island]
pub fn PlaygroundPage() -> impl IntoView {
    crate::ui::auth::provide_auth();
    let workflows = fetched(|| (), |_| playground_workflows());
    let open = ServerAction::<OpenPlaygroundSession>::new();
    let start = RwSignal::new(None::<Start>);
    Effect::new(move |_| {
        if let Some(Ok(s)) = current(&open.value()) {
            start.set(Some(Start::Opened(s)));
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
            {move || match start.get() {
                Some(s) => view! { <Plugin start=s /> }.into_any(),
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
                        <JoinForm start />
                    </div>
                }
                .into_any(),
            }}
        </RequireRole>
    }
}

/// Joins a session by a join code, which the session's backend
/// (`POST /api/sessions/{id}/join-codes`) or page made: the client
/// exchanges it for the session's plugin token, plugin rights only.
#[component]
fn JoinForm(start: RwSignal<Option<Start>>) -> impl IntoView {
    let code = RwSignal::new(String::new());
    view! {
        <section class="panel">
            <h2>"Join a session"</h2>
            <form on:submit=move |ev| {
                ev.prevent_default();
                let c = code.get_untracked().trim().to_owned();
                if !c.is_empty() {
                    start.set(Some(Start::Code(c)));
                }
            }>
                <label class="field">
                    <span>"Join code"</span>
                    <input type="text" autocomplete="off" prop:value=code on:input=move |ev| code.set(event_target_value(&ev)) data-testid="join-code" />
                </label>
                <button type="submit" class="button" data-testid="join-submit">"Join"</button>
            </form>
        </section>
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
