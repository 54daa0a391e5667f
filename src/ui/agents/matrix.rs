//! The agent × tool matrix of a vibe, in the bindings matrix's style:
//! agents in rows, tools in columns grouped by category, the core tools
//! first and implied (every agent has them). It follows the vibe as edited
//! (its agents, core and app tools) and shows each agent's saved tools; an
//! agent's name opens its editor, where its tools are changed.

use crate::domain::catalogue::{by_category, CatalogueTool};
use crate::domain::vibe::Vibe;
use crate::ui::agents::Shared;
use crate::ui::auth::confirm_leave;
use leptos::prelude::*;

/// The matrix for `vibe`.
#[component]
pub fn AgentMatrix(set: Shared, vibe: RwSignal<Vibe>) -> impl IntoView {
    let table = move || {
        let v = vibe.get();
        let (agents, tools) = set.with_value(|s| {
            let agents: Vec<_> = v
                .agents
                .iter()
                .filter_map(|id| s.agents.iter().find(|a| a.value.id == *id))
                .map(|a| a.value.clone())
                .collect();
            let pick = |list: &[crate::domain::catalogue::ToolId]| -> Vec<CatalogueTool> {
                s.tools
                    .iter()
                    .filter(|t| list.contains(&t.id))
                    .cloned()
                    .collect()
            };
            let core = pick(&v.core_tools);
            let app: Vec<_> = pick(&v.app_tools)
                .into_iter()
                .filter(|t| !v.core_tools.contains(&t.id))
                .collect();
            let mut groups = vec![("core".to_owned(), core)];
            groups.extend(by_category(&app));
            (agents, groups)
        });
        let columns: Vec<(bool, CatalogueTool)> = tools
            .iter()
            .enumerate()
            .flat_map(|(i, (_, list))| list.iter().map(move |t| (i == 0, t.clone())))
            .collect();
        let head = tools
            .iter()
            .filter(|(_, list)| !list.is_empty())
            .map(|(category, list)| view! { <th colspan=list.len().to_string() class="category">{category.clone()}</th> })
            .collect_view();
        let names = columns
            .iter()
            .map(|(_, t)| view! { <th class="tool-col" title=t.description.clone()><span>{t.id.to_string()}</span></th> })
            .collect_view();
        let rows = agents
            .into_iter()
            .map(|agent| {
                let href = format!("/agents?vibe={}&agent={}", v.id, agent.id);
                let cells = columns
                    .iter()
                    .map(|(core, t)| {
                        let on = *core || agent.tools.contains(&t.id);
                        let label = format!("{} has {}", agent.id, t.id);
                        view! {
                            <td class="cell" class:implied=*core data-tool=t.id.to_string()>
                                <input type="checkbox" disabled checked=on aria-label=label />
                            </td>
                        }
                    })
                    .collect_view();
                view! {
                    <tr data-agent=agent.id.to_string()>
                        <th class="row-head" title=agent.description.clone()>
                            <a href=href on:click=move |ev| confirm_leave(&ev)>{agent.name.clone()}</a>
                        </th>
                        {cells}
                    </tr>
                }
            })
            .collect_view();
        view! {
            <table class="matrix" data-testid="agent-matrix">
                <thead>
                    <tr>
                        <th rowspan="2" class="corner">"Agent"</th>
                        {head}
                    </tr>
                    <tr>{names}</tr>
                </thead>
                <tbody>{rows}</tbody>
            </table>
        }
        .into_any()
    };
    view! {
        <section class="panel matrix-panel">
            <h2>"Agents × tools"</h2>
            <div class="matrix-scroll">{table}</div>
            <p class="muted small">
                "Core tools are implied for every agent (dimmed). Open an agent to change its tools."
            </p>
        </section>
    }
    .into_any()
}
