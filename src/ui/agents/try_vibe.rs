//! "Try this vibe" under a vibe's editor: the admin opens a trial
//! (`POST /api/vibes/{id}/trials`, starting with the vibe's default agent
//! or the one picked) and talks to it as a user would, in text. When the
//! agent calls `switchAgent` the session's agent, prompt and tools change
//! live — the visualiser's agent panel beside the chat shows who is
//! answering now (`ui::sessions::try_it`).

use crate::domain::vibe::Vibe;
use crate::ui::sessions::try_it::TryIt;
use leptos::prelude::*;

/// The trial panel of `vibe` as saved.
#[component]
pub fn TryVibe(vibe: Vibe) -> impl IntoView {
    let agent = RwSignal::new(String::new());
    let body = Callback::new(move |()| match agent.get_untracked() {
        picked if picked.is_empty() => serde_json::json!({}),
        picked => serde_json::json!({ "agentId": picked }),
    });
    let default = vibe.default_agent.to_string();
    let options = vibe
        .agents
        .iter()
        .map(|a| view! { <option value=a.to_string()>{a.to_string()}</option> })
        .collect_view();
    view! {
        <TryIt
            title="Try this vibe"
            intro="Talk to the saved vibe as a user would, in text. When its agent switches (switchAgent), the agent, its prompt and its tools change live: the agent panel beside the chat shows who answers now."
            open_url=format!("/api/vibes/{}/trials", vibe.id)
            body
            label="Message as the user"
            hint="Say what a user would, e.g. “Add buy milk to my list.”"
        >
            <div class="field">
                <label for="try-agent">"Start with"</label>
                <select id="try-agent" data-testid="try-agent" on:change=move |ev| agent.set(event_target_value(&ev))>
                    <option value="">{format!("{default} (the vibe's default)")}</option>
                    {options}
                </select>
            </div>
        </TryIt>
    }
}
