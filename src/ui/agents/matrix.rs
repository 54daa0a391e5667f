//! The agent × tool matrix of a vibe, in the bindings matrix's style:
//! agents in rows, tools in columns grouped by category, the core tools
//! first and implied (every agent has them, so their boxes are locked).
//! It follows the vibe as edited (its agents, core and app tools); ticking
//! an app tool gives it to that agent, a changed cell is marked until the
//! vibe editor's Save puts it in force.

use crate::domain::catalogue::{by_category, CatalogueTool};
use crate::domain::ids::AgentId;
use crate::domain::ids::ToolId;
use crate::domain::vibe::{Agent, Vibe};
use crate::ui::agents::Shared;
use crate::ui::components::tool_checks::set_tool;
use leptos::prelude::*;

/// Whether `agent` has `tool` in `list` (the agents as edited or saved).
fn has(list: &[Agent], agent: &AgentId, tool: &ToolId) -> bool {
    list.iter()
        .find(|a| a.id == *agent)
        .is_some_and(|a| a.tools.contains(tool))
}

/// The column groups for `vibe`: its core tools first, then its other app
/// tools by category, each in catalogue order.
fn columns(vibe: &Vibe, tools: &[CatalogueTool]) -> Vec<(String, Vec<CatalogueTool>)> {
    let pick = |list: &[ToolId]| -> Vec<CatalogueTool> {
        tools
            .iter()
            .filter(|t| list.contains(&t.id))
            .cloned()
            .collect()
    };
    let app: Vec<_> = pick(&vibe.app_tools)
        .into_iter()
        .filter(|t| !vibe.core_tools.contains(&t.id))
        .collect();
    let mut groups = vec![("core".to_owned(), pick(&vibe.core_tools))];
    groups.extend(by_category(&app));
    groups
}

/// One cell: `tool` for `agent`, locked and ticked for a core tool.
fn cell(
    agent: AgentId,
    tool: ToolId,
    core: bool,
    agents: RwSignal<Vec<Agent>>,
    set: Shared,
) -> AnyView {
    let label = format!("{agent} has {tool}");
    let testid = format!("matrix-{agent}-{tool}");
    let (a, t) = (agent.clone(), tool.clone());
    let on = move || core || agents.with(|list| has(list, &a, &t));
    let (a, t) = (agent.clone(), tool.clone());
    let was = move || {
        set.with(|s| {
            s.agents
                .iter()
                .any(|x| x.value.id == a && x.value.tools.contains(&t))
        })
    };
    let changed = {
        let on = on.clone();
        move || !core && on() != was()
    };
    let initial = untrack(on.clone());
    let column = tool.to_string();
    view! {
        <td class="cell" class:implied=core class:changed=changed data-tool=column>
            <input
                type="checkbox"
                data-testid=testid
                aria-label=label
                disabled=core
                checked=initial
                prop:checked=on
                on:change=move |ev| {
                    let tick = event_target_checked(&ev);
                    agents.update(|list| {
                        if let Some(a) = list.iter_mut().find(|a| a.id == agent) {
                            set_tool(&mut a.tools, tool.clone(), tick);
                        }
                    });
                }
            />
        </td>
    }
    .into_any()
}

/// The matrix for `vibe` as edited; `agents` holds every agent as edited
/// here (only the vibe's members are shown).
#[component]
pub fn AgentMatrix(
    set: Shared,
    vibe: RwSignal<Vibe>,
    agents: RwSignal<Vec<Agent>>,
) -> impl IntoView {
    // The table's shape follows the vibe and the saved set; the boxes follow
    // the edits on their own, so ticking one keeps the keyboard focus.
    let table = move || {
        let v = vibe.get();
        let groups = set.with(|s| columns(&v, &s.tools));
        let rows: Vec<Agent> = agents.with_untracked(|list| {
            v.agents
                .iter()
                .filter_map(|id| list.iter().find(|a| a.id == *id).cloned())
                .collect()
        });
        let cols: Vec<(bool, CatalogueTool)> = groups
            .iter()
            .enumerate()
            .flat_map(|(i, (_, list))| list.iter().map(move |t| (i == 0, t.clone())))
            .collect();
        let head = groups
            .iter()
            .filter(|(_, list)| !list.is_empty())
            .map(|(category, list)| view! { <th colspan=list.len().to_string() class="category">{category.clone()}</th> })
            .collect_view();
        let names = cols
            .iter()
            .map(|(_, t)| view! { <th class="tool-col" title=t.description.clone()><span>{t.id.to_string()}</span></th> })
            .collect_view();
        let body = rows
            .into_iter()
            .map(|agent| {
                let href = format!("/agents?vibe={}&agent={}", v.id, agent.id);
                let cells = cols
                    .iter()
                    .map(|(core, t)| cell(agent.id.clone(), t.id.clone(), *core, agents, set))
                    .collect_view();
                view! {
                    <tr data-agent=agent.id.to_string()>
                        <th class="row-head" title=agent.description.clone()>
                            <a href=href>{agent.name.clone()}</a>
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
                <tbody>{body}</tbody>
            </table>
        }
        .into_any()
    };
    view! {
        <section class="panel matrix-panel">
            <h2>"Agents × tools"</h2>
            <div class="matrix-scroll">{table}</div>
            <p class="muted small">
                "Core tools are implied for every agent (dimmed). Tick an app tool to give it to an agent; changed cells are marked until you save the vibe, which saves the vibe and those agents together."
            </p>
        </section>
    }
    .into_any()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::domain::vibe::demo;

    #[test]
    fn core_tools_come_first_then_the_other_app_tools() {
        let vibe = demo::vibes().remove(0);
        let mut tools = demo::core_tools();
        tools.extend(crate::domain::todos::todo_tools());
        let groups = columns(&vibe, &tools);
        assert_eq!(groups[0].0, "core");
        let core: Vec<_> = groups[0].1.iter().map(|t| t.id.to_string()).collect();
        assert!(core.contains(&"switchAgent".to_owned()) && core.contains(&"hangUp".to_owned()));
        let rest: usize = groups[1..].iter().map(|(_, l)| l.len()).sum();
        assert_eq!(
            rest,
            vibe.app_tools
                .iter()
                .filter(|t| !vibe.core_tools.contains(t))
                .count()
        );
        let oliver = demo::agents()
            .into_iter()
            .find(|a| a.id.as_str() == "Oliver")
            .unwrap();
        let create = ToolId::parse("createTodo").unwrap();
        assert!(has(std::slice::from_ref(&oliver), &oliver.id, &create));
        assert!(!has(&[], &oliver.id, &create));
    }
}
