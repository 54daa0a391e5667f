//! One chat with a model that acts through tools, shared by the
//! workflow-editing chat (`/workflows/{id}`) and the try-it panels (a
//! lesson, a workflow or a vibe tried beside the live visualiser).
//!
//! The server takes one action per request — a model answer, one tool
//! call's result, or a stop — and answers with the whole history and
//! whether the turn is complete; the browser calls again at once until it
//! is, so each answer and each tool call appears as it happens. Stop ends
//! the loop after the step in flight. Enter sends, Shift+Enter starts a new
//! line. With no model configured the panel says how to configure one
//! (`model`) instead of offering an input nothing would answer.
//!
//! What differs between the chats — the step's URL, fields besides the
//! messages, what a step's answer changes on the page — are props, so the
//! loop, the input and the drawing of messages (`log`) are written once.

pub mod log;
pub mod model;

use crate::domain::workflow_chat::{ChatMessage, ChatRole};
use leptos::prelude::*;
use log::ChatLog;
use serde_json::Value;

pub use model::model_unavailable;

/// A conversation's messages and whether a turn is under way, owned by
/// the page so it can start afresh or disable its own buttons meanwhile.
#[derive(Clone, Copy)]
pub struct Conversation {
    /// Every message so far, as the server returned them.
    pub messages: RwSignal<Vec<ChatMessage>>,
    /// A turn is being played (steps are on their way).
    pub working: RwSignal<bool>,
}

impl Conversation {
    /// An empty conversation.
    pub fn new() -> Self {
        Self {
            messages: RwSignal::new(Vec::new()),
            working: RwSignal::new(false),
        }
    }
}

impl Default for Conversation {
    fn default() -> Self {
        Self::new()
    }
}

/// The messages, the working indicator with Stop, and the input.
#[component]
pub fn Chat(
    /// The conversation shown and continued.
    chat: Conversation,
    /// Where each step is posted (`/api/sessions/{id}/agent/step`).
    step_url: String,
    /// Why no model can answer (how to configure one); `None` when one can.
    #[prop(into)]
    unavailable: Signal<Option<String>>,
    /// The input's accessible name ("Message to the workflow agent").
    label: &'static str,
    /// What the empty conversation suggests saying.
    #[prop(optional)]
    hint: Option<&'static str>,
    /// Fields sent with the messages in every step (a conversation id).
    #[prop(optional)]
    extra: Option<Callback<(), Value>>,
    /// Told of every step's answer (to refresh what the step changed).
    #[prop(optional)]
    on_step: Option<Callback<Value>>,
) -> impl IntoView {
    let Conversation { messages, working } = chat;
    let input = RwSignal::new(String::new());
    let stopping = RwSignal::new(false);
    let failure = RwSignal::new(None::<String>);
    let url = StoredValue::new(step_url);
    let ready = move || unavailable.with(Option::is_none);

    let run = move || {
        working.set(true);
        stopping.set(false);
        failure.set(None);
        #[cfg(feature = "hydrate")]
        leptos::task::spawn_local(async move {
            use crate::ui::components::http;
            loop {
                let mut body = extra
                    .map(|f| f.run(()))
                    .unwrap_or_else(|| serde_json::json!({}));
                body["messages"] = serde_json::json!(messages.get_untracked());
                match http::send("POST", &url.get_value(), None, Some(&body)).await {
                    Ok(step) => {
                        let history =
                            serde_json::from_value::<Vec<ChatMessage>>(step["messages"].clone());
                        match history {
                            Ok(history) => {
                                let _ = messages.try_set(history);
                            }
                            Err(e) => {
                                let _ = failure
                                    .try_set(Some(format!("The answer could not be read: {e}")));
                                break;
                            }
                        }
                        let complete = step["is_complete"].as_bool().unwrap_or(true);
                        if let Some(f) = on_step {
                            f.run(step);
                        }
                        if complete {
                            break;
                        }
                    }
                    Err(words) => {
                        let _ = failure.try_set(Some(words));
                        break;
                    }
                }
                if stopping.get_untracked() {
                    break;
                }
            }
            let _ = working.try_set(false);
            let _ = stopping.try_set(false);
        });
        #[cfg(not(feature = "hydrate"))]
        let _ = (url, extra, on_step);
    };
    let send = move || {
        let text = input.get_untracked().trim().to_owned();
        if text.is_empty() || working.get_untracked() || !ready() {
            return;
        }
        input.set(String::new());
        messages.update(|m| m.push(ChatMessage::text(ChatRole::User, text)));
        run();
    };
    view! {
        {move || unavailable.get().map(|words| view! {
            <p class="notice" data-testid="chat-unavailable">{words}</p>
        })}
        {hint.map(|hint| view! {
            <Show when=move || messages.with(Vec::is_empty) && ready()>
                <p class="muted small">{hint}</p>
            </Show>
        })}
        <ChatLog messages />
        {move || failure.get().map(|words| view! {
            <p class="error" role="alert" data-testid="chat-error">{words}</p>
        })}
        <Show when=move || working.get()>
            <p class="muted small working" role="status" data-testid="chat-working">
                {move || if stopping.get() { "Stopping after this step…" } else { "Working…" }}
                " "
                <button type="button" class="button small" data-testid="chat-stop" on:click=move |_| stopping.set(true)>
                    "Stop"
                </button>
            </p>
        </Show>
        <Show when=ready>
            <form class="chat-form" on:submit=move |ev| { ev.prevent_default(); send(); }>
                <textarea
                    rows="3"
                    data-testid="chat-input"
                    aria-label=label
                    placeholder="Enter sends, Shift+Enter for a new line"
                    prop:value=move || input.get()
                    on:input=move |ev| input.set(event_target_value(&ev))
                    on:keydown=move |ev| {
                        if ev.key() == "Enter" && !ev.shift_key() {
                            ev.prevent_default();
                            send();
                        }
                    }
                ></textarea>
                <button type="submit" class="button primary" data-testid="chat-send" prop:disabled=move || working.get()>
                    "Send"
                </button>
            </form>
        </Show>
    }
}
