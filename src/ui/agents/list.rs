//! The vibes and agents, each a link to its editor (plain links, so they
//! work before hydration and without JavaScript).

use crate::ui::agents::Shared;
use leptos::prelude::*;

/// Two lists side by side: vibes (with their agents) and every agent.
#[component]
pub fn Lists(set: Shared) -> impl IntoView {
    let vibes = move || set.with(|s| s.vibes.clone());
    let agents = move || set.with(|s| s.agents.clone());
    view! {
        <div class="two-col">
            <section class="panel" data-testid="vibe-list">
                <h2>"Vibes"</h2>
                <ul class="plain-list">
                    <For each=vibes key=|v| (v.value.id.clone(), v.version) let:vibe>
                        <li>
                            <a href=format!("/agents?vibe={}", vibe.value.id)>
                                {vibe.value.name.clone()}
                            </a>
                            <span class="muted small">
                                {format!(
                                    " · {} · agents: {}",
                                    vibe.value.id,
                                    vibe.value.agents.iter().map(|a| a.as_str()).collect::<Vec<_>>().join(", "),
                                )}
                            </span>
                        </li>
                    </For>
                </ul>
                // The manifest layout (VIBES/, AGENTS/, TOOLS/) for files
                // and review, tools as JSON Schemas or as the seed's
                // Ultravox parameters; imports take either form.
                <p class="small" data-testid="manifest-downloads">
                    "Download all as "
                    <a href="/agents/manifests.zip" rel="external" download="switchboard-manifests.zip">
                        ".zip"
                    </a>
                    " or "
                    <a href="/agents/manifests.tar" rel="external" download="switchboard-manifests.tar">
                        ".tar"
                    </a>
                    "; tools in the seed's Ultravox form: "
                    <a
                        href="/agents/manifests.zip?form=ultravox"
                        rel="external"
                        download="switchboard-manifests-ultravox.zip"
                        data-testid="manifest-download-ultravox"
                    >
                        ".zip"
                    </a>
                    " or "
                    <a
                        href="/agents/manifests.tar?form=ultravox"
                        rel="external"
                        download="switchboard-manifests-ultravox.tar"
                    >
                        ".tar"
                    </a>
                </p>
            </section>
            <section class="panel" data-testid="agent-list">
                <h2>"Agents"</h2>
                <ul class="plain-list">
                    <For each=agents key=|a| (a.value.id.clone(), a.version) let:agent>
                        <li>
                            <a href=format!("/agents?agent={}", agent.value.id)>
                                {agent.value.name.clone()}
                            </a>
                            <span class="muted small">{format!(" · {}", agent.value.description)}</span>
                        </li>
                    </For>
                </ul>
            </section>
        </div>
    }
    .into_any()
}
