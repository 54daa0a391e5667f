//! The workflow-editing chat panel: it makes a conversation id when it
//! opens in the browser, sends the admin's message, then calls `POST
//! /api/workflows/{id}/chat/step` again at once with the returned history
//! for as long as the turn is not complete — so each model answer and each
//! tool call appears as it happens. Stop ends the loop after the step in
//! flight; a step that changed the workflow refreshes the definition
//! beside it. Enter sends, Shift+Enter starts a new line.

use crate::domain::workflow_chat::{ChatMessage, ChatRole};
use crate::ui::workflows::chat_view::ChatLog;
use leptos::prelude::*;

/// A new conversation id, from the browser's randomness (empty on the
/// server, where the panel never sends).
fn conversation_id() -> String {
    #[cfg(feature = "hydrate")]
    {
        let word = || (js_sys::Math::random() * 4_294_967_296.0) as u128;
        crate::domain::workflow_def::uuid_v4(word() << 96 | word() << 64 | word() << 32 | word())
    }
    #[cfg(not(feature = "hydrate"))]
    String::new()
}

/// The chat beside a workflow's definition.
#[component]
pub fn ChatPanel(
    /// The workflow the agent edits.
    workflow_id: String,
    /// Why no model can answer (how to configure one); `None` when one can.
    unavailable: Option<String>,
    /// Called when a step changed the workflow.
    on_updated: Callback<()>,
) -> impl IntoView {
    let conversation = RwSignal::new(String::new());
    Effect::new(move |_| conversation.set(conversation_id()));
    let messages = RwSignal::new(Vec::<ChatMessage>::new());
    let input = RwSignal::new(String::new());
    let working = RwSignal::new(false);
    let stopping = RwSignal::new(false);
    let failure = RwSignal::new(None::<String>);
    let url = StoredValue::new(format!("/api/workflows/{workflow_id}/chat/step"));
    let ready = unavailable.is_none();

    let run = move || {
        working.set(true);
        stopping.set(false);
        failure.set(None);
        #[cfg(feature = "hydrate")]
        leptos::task::spawn_local(async move {
            use crate::domain::workflow_chat::ChatResponse;
            use crate::ui::components::http;
            loop {
                let body = serde_json::json!({
                    "conversation_id": conversation.get_untracked(),
                    "messages": messages.get_untracked(),
                });
                let answer = http::send("POST", &url.get_value(), None, Some(&body))
                    .await
                    .and_then(|v| {
                        serde_json::from_value::<ChatResponse>(v).map_err(|e| e.to_string())
                    });
                match answer {
                    Ok(step) => {
                        let _ = messages.try_set(step.messages);
                        if step.workflow_updated {
                            on_updated.run(());
                        }
                        if step.is_complete {
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
        let _ = (url, on_updated);
    };
    let send = move || {
        let text = input.get_untracked().trim().to_owned();
        if text.is_empty() || working.get_untracked() || !ready {
            return;
        }
        input.set(String::new());
        messages.update(|m| m.push(ChatMessage::text(ChatRole::User, text)));
        run();
    };
    let restart = move |_| {
        messages.set(Vec::new());
        failure.set(None);
        conversation.set(conversation_id());
    };
    view! {
        <aside class="panel chat-panel" data-testid="chat-panel" data-conversation=move || conversation.get()>
            <div class="chat-head">
                <h2>"Workflow agent"</h2>
                <button
                    type="button"
                    class="small"
                    data-testid="chat-new"
                    prop:disabled=move || working.get()
                    on:click=restart
                >
                    "New conversation"
                </button>
            </div>
            {unavailable.clone().map(|words| view! {
                <p class="notice" data-testid="chat-unavailable">{words}</p>
            })}
            <Show when=move || messages.with(Vec::is_empty) && ready>
                <p class="muted small">
                    "Ask for a change in plain words, e.g. “Add a custom_agent step called Verify identity with perform_idv_check”."
                </p>
            </Show>
            <ChatLog messages />
            {move || failure.get().map(|words| view! {
                <p class="error" role="alert" data-testid="chat-error">{words}</p>
            })}
            <Show when=move || working.get()>
                <p class="muted small working" role="status" data-testid="chat-working">
                    {move || if stopping.get() { "Stopping after this step…" } else { "Working…" }}
                    " "
                    <button type="button" class="small" data-testid="chat-stop" on:click=move |_| stopping.set(true)>
                        "Stop"
                    </button>
                </p>
            </Show>
            <form class="chat-form" on:submit=move |ev| { ev.prevent_default(); send(); }>
                <textarea
                    rows="3"
                    data-testid="chat-input"
                    aria-label="Message to the workflow agent"
                    placeholder="Enter sends, Shift+Enter for a new line"
                    prop:disabled=move || !ready
                    prop:value=move || input.get()
                    on:input=move |ev| input.set(event_target_value(&ev))
                    on:keydown=move |ev| {
                        if ev.key() == "Enter" && !ev.shift_key() {
                            ev.prevent_default();
                            send();
                        }
                    }
                ></textarea>
                <button type="submit" data-testid="chat-send" prop:disabled=move || working.get() || !ready>
                    "Send"
                </button>
            </form>
        </aside>
    }
}
