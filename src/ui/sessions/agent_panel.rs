//! The visualiser's "Agent" panel for a vibe session: who the user is
//! talking to now (name, personality, voice) and in which vibe, updated
//! when `switchAgent` moves the session.

use crate::domain::vibe::AgentView;
use leptos::prelude::*;

/// The current agent, when the session runs in a vibe.
#[component]
pub fn AgentPanel(agent: RwSignal<Option<AgentView>>) -> impl IntoView {
    move || {
        agent.get().map(|a| {
            view! {
                <section class="panel" data-testid="agent-panel" data-agent=a.agent_id.clone()>
                    <h2>"Agent"</h2>
                    <p>
                        <strong data-testid="agent-name">{a.name.clone()}</strong>
                        <span class="muted small">{format!(" in {}", a.vibe_name)}</span>
                    </p>
                    <p class="small">{a.personality.clone()}</p>
                    <p class="muted small">{format!("Voice: {}", a.voice_id)}</p>
                </section>
            }
        })
    }
}
