//! Trying a lesson, a workflow or a vibe before anyone else meets it: a
//! button opens a trial (a session stored with `trial = true`, so the
//! lesson's runs list it apart), then the signed-in user plays the other
//! side — the student, the caller — in a chat with the session's model
//! (`POST /api/sessions/{id}/agent/step`, the shared chat's loop), beside
//! the live visualiser of that same session. The visualiser subscribes to
//! the session's events itself, so every tool call, the progress and the
//! nudges appear there as they happen, exactly as a watcher sees a real
//! run.
//!
//! The pages differ only in where a trial is opened and what the opening
//! asks (a student's name, an agent): those are props.

use crate::api::sessions::session_page;
use crate::ui::components::chat::{model_unavailable, Chat, Conversation};
use crate::ui::components::{fetched, Loaded};
use crate::ui::sessions::visualiser::Visualiser;
use leptos::prelude::*;
use serde_json::Value;

/// The opening form (the page's fields, then the button), and the trial
/// once one is open. Opening again replaces it with a fresh one.
#[component]
pub fn TryIt(
    /// The section's heading ("Try this lesson").
    title: &'static str,
    /// What it is for, under the heading.
    intro: &'static str,
    /// Where a trial is opened: `POST`, answered `201 {"sessionId"}`.
    open_url: String,
    /// The opening request's body (the fields asked); `{}` without.
    #[prop(optional)]
    body: Option<Callback<(), Value>>,
    /// The chat input's accessible name ("Message as the student").
    label: &'static str,
    /// What the empty chat suggests saying.
    hint: &'static str,
    /// Fields asked before opening (a student's name, an agent).
    #[prop(optional)]
    children: Option<Children>,
) -> impl IntoView {
    let session = RwSignal::new(None::<String>);
    let opening = RwSignal::new(false);
    let problem = RwSignal::new(None::<String>);
    let url = StoredValue::new(open_url);
    let open = move |_| {
        opening.set(true);
        problem.set(None);
        #[cfg(feature = "hydrate")]
        leptos::task::spawn_local(async move {
            use crate::ui::components::http;
            let sent = body
                .map(|f| f.run(()))
                .unwrap_or_else(|| serde_json::json!({}));
            match http::send("POST", &url.get_value(), None, Some(&sent)).await {
                Ok(answer) => match answer["sessionId"].as_str() {
                    Some(id) => {
                        let _ = session.try_set(Some(id.to_owned()));
                    }
                    None => {
                        let _ =
                            problem.try_set(Some("The trial opened without a session id.".into()));
                    }
                },
                Err(words) => {
                    let _ = problem.try_set(Some(words));
                }
            }
            let _ = opening.try_set(false);
        });
        #[cfg(not(feature = "hydrate"))]
        let _ = (url, body);
    };
    view! {
        <section class="panel try-it" id="try" data-testid="try-it">
            <h2>{title}</h2>
            <p class="muted small">{intro}</p>
            <div class="try-open">
                {children.map(|c| c())}
                <button
                    type="button"
                    class="button primary"
                    data-testid="try-open"
                    prop:disabled=move || opening.get()
                    on:click=open
                >
                    {move || match (opening.get(), session.with(Option::is_some)) {
                        (true, _) => "Opening…",
                        (false, true) => "Start again",
                        (false, false) => title,
                    }}
                </button>
            </div>
            {move || problem.get().map(|words| view! { <p class="error" role="alert" data-testid="try-error">{words}</p> })}
            {move || session.get().map(|id| view! { <Trial session_id=id label hint /> })}
        </section>
    }
}

/// One open trial: the chat beside the session's visualiser.
#[component]
fn Trial(session_id: String, label: &'static str, hint: &'static str) -> impl IntoView {
    let id = session_id.clone();
    let page = fetched(move || id.clone(), session_page);
    let chat = Conversation::new();
    let step_url = format!("/api/sessions/{session_id}/agent/step");
    view! {
        <div class="try-grid" data-testid="trial" data-session=session_id.clone()>
            <div class="panel chat-panel try-chat" data-testid="chat-panel">
                <Chat chat step_url unavailable=model_unavailable() label hint />
            </div>
            <div class="try-visualiser">
                <Loaded resource=page loading="Opening the live view…" let:data>
                    <Visualiser data embedded=true />
                </Loaded>
            </div>
        </div>
    }
}
