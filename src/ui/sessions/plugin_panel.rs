//! The visualiser's "Plugin tools" panel: the tools the session's plugin
//! registered, each with its status (only active ones are offered to the
//! agent), how often the agent used it and when it was registered; kept
//! current by `tool-availability-update` events and relayed results.

use crate::domain::plugin::{PluginTool, ToolStatus};
use crate::ui::components::LocalTime;
use leptos::prelude::*;

/// The plugin's tools, once it registered some.
#[component]
pub fn PluginPanel(
    /// The plugin's kind and version (`codap 2.1`).
    plugin: RwSignal<Option<String>>,
    /// Its tools.
    tools: RwSignal<Vec<PluginTool>>,
) -> impl IntoView {
    move || {
        plugin.get().map(|who| {
            view! {
                <section class="panel" data-testid="plugin-panel">
                    <h2>"Plugin tools"</h2>
                    <p class="muted small">{who}</p>
                    <ul class="plain-list plugin-tools">
                        <For
                            each=move || tools.get()
                            key=|t| (t.definition.name.clone(), t.status, t.usage_count)
                            let:tool
                        >
                            <li data-testid="plugin-tool" data-tool=tool.definition.name.clone() data-status=tool.status.as_str()>
                                <code title=tool.definition.description.clone()>{tool.definition.name.clone()}</code>
                                " "
                                <span class="chip static" class:muted=tool.status != ToolStatus::Active>
                                    {tool.status.as_str()}
                                </span>
                                <span class="muted small" data-testid="plugin-tool-uses">
                                    {format!(" used {}× · registered ", tool.usage_count)}
                                    <LocalTime ms=tool.registered_at seconds=true />
                                </span>
                            </li>
                        </For>
                    </ul>
                </section>
            }
        })
    }
}
