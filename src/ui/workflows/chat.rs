//! The workflow-editing chat panel beside a workflow's definition: the
//! shared chat (`ui::components::chat`) posting to `POST
//! /api/workflows/{id}/chat/step`, with a conversation id made when the
//! panel opens in the browser (sent with every step) and "New
//! conversation". A step that changed the workflow refreshes the
//! definition beside it.

use crate::ui::components::chat::{Chat, Conversation};
use leptos::prelude::*;
use serde_json::Value;

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
    let chat = Conversation::new();
    let restart = move |_| {
        chat.messages.set(Vec::new());
        conversation.set(conversation_id());
    };
    let extra = Callback::new(
        move |()| serde_json::json!({"conversation_id": conversation.get_untracked()}),
    );
    let on_step = Callback::new(move |step: Value| {
        if step["workflow_updated"].as_bool() == Some(true) {
            on_updated.run(());
        }
    });
    view! {
        <aside class="panel chat-panel" data-testid="chat-panel" data-conversation=move || conversation.get()>
            <div class="chat-head">
                <h2>"Workflow agent"</h2>
                <button
                    type="button"
                    class="small"
                    data-testid="chat-new"
                    prop:disabled=move || chat.working.get()
                    on:click=restart
                >
                    "New conversation"
                </button>
            </div>
            <Chat
                chat
                step_url=format!("/api/workflows/{workflow_id}/chat/step")
                unavailable=Signal::stored(unavailable)
                label="Message to the workflow agent"
                hint="Ask for a change in plain words, e.g. “Add a custom_agent step called Verify identity with perform_idv_check”."
                extra
                on_step
            />
        </aside>
    }
}
