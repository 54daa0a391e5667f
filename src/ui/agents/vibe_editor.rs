//! A vibe's editor: name, description, its agents and the one a call starts
//! with, core and app tools, the tools its voice page runs and its calls'
//! Ultravox settings; problems beside their fields as the admin
//! edits, then the agent × tool matrix of the vibe as edited, where its
//! agents' tools are changed. One Save puts the vibe and the agents changed
//! in the matrix in force together, or none of them.

use crate::api::vibes::{SaveVibeWithAgents, Saved, VibeSaved};
use crate::domain::ids::AgentId;
use crate::domain::vibe::{Agent, Vibe};
use crate::error::ApiError;
use crate::ui::agents::call_settings::call_settings_fields;
use crate::ui::agents::matrix::AgentMatrix;
use crate::ui::agents::{
    guard_unsaved, problems_with, text_field, EditorProblems, SaveBar, Shared,
};
use crate::ui::components::tool_checks::{set_tool, ToolChecks};
use crate::ui::components::{FieldProblem, SaveMessage, SaveStatus};
use crate::ui::current;
use leptos::prelude::*;

/// Edits `vibe` (as loaded, with its version).
#[component]
pub fn VibeEditor(set: Shared, vibe: Saved<Vibe>) -> impl IntoView {
    let id = vibe.value.id.to_string();
    let saved = RwSignal::new(vibe.value.clone());
    let edited = RwSignal::new(vibe.value.clone());
    let version = RwSignal::new(vibe.version);
    // Every agent as edited in the matrix; only the vibe's members count.
    let saved_agents = move || {
        set.with_untracked(|s| s.agents.iter().map(|a| a.value.clone()).collect::<Vec<_>>())
    };
    let agent_edits = RwSignal::new(saved_agents());
    let changed_agents = Memo::new(move |_| {
        let members = edited.with(|v| v.agents.clone());
        agent_edits.with(|list| {
            set.with(|s| {
                list.iter()
                    .filter(|a| members.contains(&a.id))
                    .filter_map(|a| {
                        let was = s.agents.iter().find(|x| x.value.id == a.id)?;
                        (!same_agent(&was.value, a)).then(|| Saved {
                            value: a.clone(),
                            version: was.version,
                        })
                    })
                    .collect::<Vec<_>>()
            })
        })
    });
    let vibe_dirty = Memo::new(move |_| saved.with(|s| edited.with(|e| s != e)));
    let dirty = Memo::new(move |_| vibe_dirty.get() || !changed_agents.with(Vec::is_empty));
    guard_unsaved(dirty);

    let checked = EditorProblems::new(
        format!("vibes.{id}."),
        move || {
            edited.track();
            agent_edits.track();
        },
        move || {
            let changed: Vec<Agent> =
                changed_agents.with(|c| c.iter().map(|a| a.value.clone()).collect());
            edited.with(|v| set.with(|s| problems_with(s, &changed, Some(v))))
        },
    );
    let refused = checked.refused;
    let field = move |key: &str| checked.field(key);
    let others = checked.others();

    let save = ServerAction::<SaveVibeWithAgents>::new();
    let (result, saving) = (save.value(), save.pending());
    let message: SaveMessage = RwSignal::new(None);
    // What the last save sent, to record once it is answered.
    let sent = StoredValue::new((None::<Vibe>, Vec::<Agent>::new()));
    Effect::new(move |_| match current(&result) {
        Some(Ok(VibeSaved { vibe, agents })) => {
            let (sent_vibe, sent_agents) = sent.get_value();
            let mut parts = Vec::new();
            set.update(|s| {
                if let (Some(now), Some(v)) = (sent_vibe, vibe) {
                    version.set(v);
                    saved.set(now.clone());
                    parts.push(format!("vibe version {v}"));
                    if let Some(slot) = s.vibes.iter_mut().find(|x| x.value.id == now.id) {
                        *slot = Saved {
                            value: now,
                            version: v,
                        };
                    }
                }
                for (agent, v) in sent_agents.into_iter().zip(agents) {
                    parts.push(format!("{} version {v}", agent.id));
                    if let Some(slot) = s.agents.iter_mut().find(|x| x.value.id == agent.id) {
                        *slot = Saved {
                            value: agent,
                            version: v,
                        };
                    }
                }
            });
            message.set(Some(Ok(format!(
                "Saved: {}, in force now.",
                parts.join(", ")
            ))));
        }
        Some(Err(e)) => {
            if let ApiError::Invalid(problem) = &e {
                refused.set(Some(problem.clone()));
            }
            message.set(Some(Err(e)));
        }
        None => {}
    });

    let all_agents: Vec<AgentId> =
        set.with_untracked(|s| s.agents.iter().map(|a| a.value.id.clone()).collect());
    let tools = set.with_untracked(|s| s.tools.clone());
    let reload = format!("/agents?vibe={id}");
    let id_for_save = id.clone();
    let heading = format!("Vibe {id}");

    let fields = view! {
        {text_field(edited, "Name", "name", |v| v.name.clone(), |v, x| v.name = x, None, field("name"))}
        {text_field(edited, "Description", "description", |v| v.description.clone(), |v, x| v.description = x, Some(2), field("description"))}
    }
    .into_any();
    let agents = view! {
        <fieldset class="tool-checks" data-testid="vibe-agents">
            <legend>"Agents"</legend>
            <For each=move || all_agents.clone() key=|a| a.clone() let:agent>
                {
                    let name = agent.to_string();
                    let on = {
                        let agent = agent.clone();
                        move || edited.with(|v| v.agents.contains(&agent))
                    };
                    view! {
                        <label class="small tool-check">
                            <input
                                type="checkbox"
                                data-testid=format!("vibe-agent-{name}")
                                checked=untrack(on.clone())
                                prop:checked=on
                                on:change=move |ev| {
                                    let tick = event_target_checked(&ev);
                                    edited.update(|v| {
                                        v.agents.retain(|a| *a != agent);
                                        if tick {
                                            v.agents.push(agent.clone());
                                        }
                                    });
                                }
                            />
                            {name.clone()}
                        </label>
                    }
                }
            </For>
            <FieldProblem message=field("agents") />
        </fieldset>
        <div class="field" data-field="defaultAgent">
            <label for="field-defaultAgent">"Default agent (a call starts with it)"</label>
            <select
                id="field-defaultAgent"
                on:change=move |ev| {
                    if let Ok(a) = AgentId::parse(&event_target_value(&ev)) {
                        edited.update(|v| v.default_agent = a);
                    }
                }
            >
                {move || {
                    edited
                        .with(|v| {
                            let mut list = v.agents.clone();
                            if !list.contains(&v.default_agent) {
                                list.insert(0, v.default_agent.clone());
                            }
                            list.into_iter()
                                .map(|a| {
                                    let chosen = a == v.default_agent;
                                    view! { <option value=a.to_string() selected=chosen>{a.to_string()}</option> }
                                })
                                .collect_view()
                        })
                }}
            </select>
            <FieldProblem message=field("defaultAgent") />
        </div>
    }
    .into_any();
    let client_tool_choices = tools.clone();
    let tool_lists = view! {
        <ToolChecks
            tools=tools.clone()
            legend="Core tools (every agent of the vibe has them)"
            prefix="core-tool"
            ticked=move |t: &str| edited.with(|v| v.core_tools.iter().any(|x| x.as_str() == t))
            toggle=move |t, on| edited.update(|v| set_tool(&mut v.core_tools, t, on))
        />
        <FieldProblem message=field("coreTools") testid="core-tools-problem" />
        <ToolChecks
            tools
            legend="App tools (its agents may be given them)"
            prefix="app-tool"
            ticked=move |t: &str| edited.with(|v| v.app_tools.iter().any(|x| x.as_str() == t))
            toggle=move |t, on| edited.update(|v| set_tool(&mut v.app_tools, t, on))
        />
        <FieldProblem message=field("appTools") testid="app-tools-problem" />
        <ToolChecks
            tools=client_tool_choices
            legend="Client tools (the voice page runs them; Ultravox calls every other tool on Switchboard)"
            prefix="client-tool"
            ticked=move |t: &str| edited.with(|v| v.runs_on_client(t))
            toggle=move |t, on| edited.update(|v| set_tool(&mut v.client_tools, t, on))
        />
        <FieldProblem message=field("clientTools") testid="client-tools-problem" />
    }
    .into_any();
    let call_settings = call_settings_fields(edited, checked);

    view! {
        <section class="panel" data-testid="vibe-editor" data-vibe=id.clone()>
            <div class="split">
                <h2>{heading}</h2>
                <span class="muted small" data-testid="vibe-version">{move || format!("Version {}", version.get())}</span>
            </div>
            {fields}
            {agents}
            {tool_lists}
            {call_settings}
            <SaveBar
                others=Signal::derive(others)
                dirty
                saving
                on_discard=Callback::new(move |_| {
                    edited.set(saved.get_untracked());
                    agent_edits.set(saved_agents());
                    message.set(None);
                })
                on_save=Callback::new(move |_| {
                    message.set(None);
                    let vibe = vibe_dirty.get_untracked().then(|| edited.get_untracked());
                    let agents = changed_agents.get_untracked();
                    sent.set_value((vibe.clone(), agents.iter().map(|a| a.value.clone()).collect()));
                    save.dispatch(SaveVibeWithAgents {
                        vibe_id: id_for_save.clone(),
                        vibe: vibe.map(|value| Saved { value, version: version.get_untracked() }),
                        agents,
                    });
                })
                label="Save vibe"
                testid="save-vibe"
            />
            <SaveStatus message testid="vibe-status" reload />
        </section>
        <AgentMatrix set vibe=edited agents=agent_edits />
    }
    .into_any()
}

/// Whether two versions of an agent are the same, its tools as a set (a
/// tool unticked and ticked again in the matrix is no change).
fn same_agent(a: &Agent, b: &Agent) -> bool {
    let sorted = |x: &Agent| {
        let mut tools = x.tools.clone();
        tools.sort();
        Agent { tools, ..x.clone() }
    };
    a == b || sorted(a) == sorted(b)
}
