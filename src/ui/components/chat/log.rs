//! The chat's messages: what the person and the model said, and each tool
//! call the model made, collapsible, with its arguments and — once it has
//! run — its result, or the reason it was refused in words (a `tool`
//! message is shown inside the call it answers, matched by
//! `tool_call_id`, not on its own).

use super::model::{pretty, read_result};
use crate::domain::workflow_chat::{ChatMessage, ChatRole, ToolCall};
use leptos::prelude::*;

/// The conversation so far.
#[component]
pub fn ChatLog(messages: RwSignal<Vec<ChatMessage>>) -> impl IntoView {
    let shown = move || {
        messages.with(|list| {
            list.iter()
                .enumerate()
                .filter(|(_, m)| m.role != ChatRole::Tool)
                .map(|(i, m)| (i, m.clone()))
                .collect::<Vec<_>>()
        })
    };
    view! {
        <ol class="chat-log" data-testid="chat-log" aria-live="polite">
            <For each=shown key=|(i, m)| (*i, m.role) let:entry>
                <ChatEntry message=entry.1 messages />
            </For>
        </ol>
    }
}

/// One message: words, and the calls of an assistant message.
#[component]
fn ChatEntry(message: ChatMessage, messages: RwSignal<Vec<ChatMessage>>) -> impl IntoView {
    let (class, testid) = match message.role {
        ChatRole::User => ("chat-msg user", "chat-user"),
        _ => ("chat-msg assistant", "chat-assistant"),
    };
    let words = (!message.content.is_empty()).then(|| {
        view! { <p class="chat-words" data-testid="chat-words">{message.content.clone()}</p> }
    });
    let calls = message.calls().to_vec();
    view! {
        <li class=class data-testid=testid>
            {words}
            {calls.into_iter().map(|call| view! { <CallView call messages /> }).collect_view()}
        </li>
    }
}

/// One tool call, collapsed to its name and state until opened.
#[component]
fn CallView(call: ToolCall, messages: RwSignal<Vec<ChatMessage>>) -> impl IntoView {
    let id = call.id.clone();
    let result = Memo::new(move |_| {
        messages.with(|list| {
            list.iter()
                .find(|m| {
                    m.role == ChatRole::Tool && m.tool_call_id.as_deref() == Some(id.as_str())
                })
                .map(|m| read_result(&m.content))
        })
    });
    let state = move || match result.get() {
        None => "running…",
        Some((outcome, _)) => outcome.as_str(),
    };
    view! {
        <details class="tool-call" data-testid="tool-call" data-tool=call.function.name.clone() data-state=state>
            <summary>
                <code>{call.function.name.clone()}</code>
                " "
                <span class="muted small" data-testid="tool-call-state">{state}</span>
            </summary>
            <div class="small muted">"Arguments"</div>
            <pre data-testid="tool-call-args">{pretty(&call.function.arguments)}</pre>
            {move || result.get().map(|(outcome, words)| view! {
                <div class="small muted">{if outcome.as_str() == "refused" { "Refused because" } else { "Result" }}</div>
                <pre data-testid="tool-call-result">{words}</pre>
            })}
        </details>
    }
}
