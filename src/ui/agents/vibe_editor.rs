//! A vibe's editor: name, description, its agents and the one a call starts
//! with, core and app tools; problems beside their fields as the admin
//! edits, then the agent × tool matrix of the vibe as edited.

use crate::api::vibes::{SaveVibe, Saved};
use crate::domain::vibe::{AgentId, Vibe};
use crate::error::ApiError;
use crate::ui::agents::matrix::AgentMatrix;
use crate::ui::agents::tool_checks::{set_tool, ToolChecks};
use crate::ui::agents::{
    guard_unsaved, problems_with, text_field, EditorProblems, SaveBar, Shared,
};
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
    let dirty = Memo::new(move |_| saved.with(|s| edited.with(|e| s != e)));
    guard_unsaved(dirty);

    let checked = EditorProblems::new(edited, format!("vibes.{id}."), move |v| {
        set.with_value(|s| problems_with(s, None, Some(v)))
    });
    let refused = checked.refused;
    let field = move |key: &str| checked.field(key);
    let others = checked.others();

    let save = ServerAction::<SaveVibe>::new();
    let (result, saving) = (save.value(), save.pending());
    let message: SaveMessage = RwSignal::new(None);
    Effect::new(move |_| match current(&result) {
        Some(Ok(v)) => {
            let now = edited.get_untracked();
            version.set(v);
            saved.set(now.clone());
            set.update_value(|s| {
                if let Some(slot) = s.vibes.iter_mut().find(|x| x.value.id == now.id) {
                    *slot = Saved {
                        value: now,
                        version: v,
                    };
                }
            });
            message.set(Some(Ok(format!("Saved: version {v}, in force now."))));
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
        set.with_value(|s| s.agents.iter().map(|a| a.value.id.clone()).collect());
    let tools = set.with_value(|s| s.tools.clone());
    let reload = format!("/agents?vibe={id}");
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
                                checked=on.clone()()
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
    }
    .into_any();

    view! {
        <section class="panel" data-testid="vibe-editor" data-vibe=id.clone()>
            <div class="split">
                <h2>{heading}</h2>
                <span class="muted small" data-testid="vibe-version">{move || format!("Version {}", version.get())}</span>
            </div>
            {fields}
            {agents}
            {tool_lists}
            <SaveBar
                others=Signal::derive(others)
                dirty
                saving
                on_discard=Callback::new(move |_| {
                    edited.set(saved.get_untracked());
                    message.set(None);
                })
                on_save=Callback::new(move |_| {
                    message.set(None);
                    save.dispatch(SaveVibe {
                        vibe: edited.get_untracked(),
                        version: Some(version.get_untracked()),
                    });
                })
                label="Save vibe"
                testid="save-vibe"
            />
            <SaveStatus message testid="vibe-status" reload />
        </section>
        <AgentMatrix set vibe=edited />
    }
    .into_any()
}
