//! An agent's editor: persona fields, voice, tools as checkboxes grouped by
//! category, and the prompt template with its placeholders shown as chips
//! (unknown ones as errors), beside what the agent would get (`preview`).
//! Problems show beside their fields as the admin types, checked against
//! the whole loaded set with the same rules the server applies on save.

use crate::api::vibes::{SaveAgent, Saved};
use crate::domain::vibe::template::{placeholders, PLACEHOLDERS};
use crate::domain::vibe::{Agent, Vibe};
use crate::error::ApiError;
use crate::ui::agents::preview::Preview;
use crate::ui::agents::{
    guard_unsaved, problems_with, text_field, EditorProblems, SaveBar, Shared,
};
use crate::ui::components::tool_checks::{set_tool, ToolChecks};
use crate::ui::components::{SaveMessage, SaveStatus};
use crate::ui::current;
use leptos::prelude::*;

/// Edits `agent` (as loaded, with its version) in the context of `vibe`,
/// the vibe the preview stages it in.
#[component]
pub fn AgentEditor(set: Shared, agent: Saved<Agent>, vibe: Option<Vibe>) -> impl IntoView {
    let id = agent.value.id.to_string();
    let saved = RwSignal::new(agent.value.clone());
    let edited = RwSignal::new(agent.value.clone());
    let version = RwSignal::new(agent.version);
    let dirty = Memo::new(move |_| saved.with(|s| edited.with(|e| s != e)));
    guard_unsaved(dirty);

    let checked = EditorProblems::new(
        format!("agents.{id}."),
        move || edited.track(),
        move || edited.with(|a| set.with(|s| problems_with(s, std::slice::from_ref(a), None))),
    );
    let refused = checked.refused;
    let field = move |key: &str| checked.field(key);
    let others = checked.others();

    let save = ServerAction::<SaveAgent>::new();
    let (result, saving) = (save.value(), save.pending());
    let message: SaveMessage = RwSignal::new(None);
    Effect::new(move |_| match current(&result) {
        Some(Ok(v)) => {
            let now = edited.get_untracked();
            version.set(v);
            saved.set(now.clone());
            set.update(|s| {
                if let Some(slot) = s.agents.iter_mut().find(|a| a.value.id == now.id) {
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

    let candidates = set.with_untracked(|s| {
        s.tools
            .iter()
            .filter(|t| match &vibe {
                Some(v) => v.app_tools.contains(&t.id) || agent.value.tools.contains(&t.id),
                None => true,
            })
            .cloned()
            .collect::<Vec<_>>()
    });
    let core = vibe.as_ref().map(|v| {
        v.core_tools
            .iter()
            .map(|t| t.as_str())
            .collect::<Vec<_>>()
            .join(", ")
    });
    let ticked = move |tool: &str| edited.with(|a| a.tools.iter().any(|t| t.as_str() == tool));
    let toggle = move |tool, on| edited.update(|a| set_tool(&mut a.tools, tool, on));
    let reload = format!("/agents?agent={id}");
    let heading = format!("Agent {}", agent.value.id);

    let fields = view! {
        {text_field(edited, "Name", "name", |a| a.name.clone(), |a, v| a.name = v, None, field("name"))}
        {text_field(edited, "Voice id", "voiceId", |a| a.voice_id.clone(), |a, v| a.voice_id = v, None, field("voiceId"))}
        {text_field(edited, "Personality", "personality", |a| a.personality.clone(), |a, v| a.personality = v, Some(3), field("personality"))}
        {text_field(edited, "Description (what the other agents are told)", "description", |a| a.description.clone(), |a, v| a.description = v, Some(2), field("description"))}
    }
    .into_any();
    let tools = view! {
        <ToolChecks tools=candidates legend="Tools" prefix="agent-tool" ticked toggle />
        {core.map(|c| view! { <p class="muted small">{format!("Plus the vibe's core tools: {c}.")}</p> })}
        <crate::ui::components::FieldProblem message=field("tools") testid="tools-problem" />
    }
    .into_any();
    let template = view! {
        {text_field(edited, "System prompt template", "systemPromptTemplate", |a| a.system_prompt_template.clone(), |a, v| a.system_prompt_template = v, Some(10), field("systemPromptTemplate"))}
        <Placeholders edited />
    }
    .into_any();

    view! {
        <div class="two-col agent-editor">
            <section class="panel" data-testid="agent-editor" data-agent=id.clone()>
                <div class="split">
                    <h2>{heading}</h2>
                    <span class="muted small" data-testid="agent-version">{move || format!("Version {}", version.get())}</span>
                </div>
                {fields}
                {tools}
                {template}
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
                        save.dispatch(SaveAgent {
                            agent: edited.get_untracked(),
                            version: Some(version.get_untracked()),
                        });
                    })
                    label="Save agent"
                    testid="save-agent"
                />
                <SaveStatus message testid="agent-status" reload />
            </section>
            {match vibe {
                Some(vibe) => view! { <Preview set edited vibe /> }.into_any(),
                None => view! { <p class="muted">"This agent is in no vibe yet, so there is nothing to preview."</p> }.into_any(),
            }}
        </div>
    }
    .into_any()
}

/// The template's placeholders as chips: known ones plain, unknown ones
/// (a typo the model would read verbatim) marked as errors.
#[component]
fn Placeholders(edited: RwSignal<Agent>) -> impl IntoView {
    let found = move || {
        let mut list = edited.with(|a| placeholders(&a.system_prompt_template));
        list.sort();
        list.dedup();
        list
    };
    view! {
        <div class="tool-chips" data-testid="placeholders">
            <span class="muted small">"Placeholders:"</span>
            <For each=found key=|p| p.clone() let:p>
                {
                    let known = PLACEHOLDERS.contains(&p.as_str());
                    view! {
                        <span class="chip static" class:unknown=!known data-known=known.to_string() title=if known { "Filled in per call" } else { "Unknown: the model would read it verbatim" }>
                            {format!("{{{{{p}}}}}")}
                        </span>
                    }
                }
            </For>
        </div>
        <p class="muted small">
            "Known: " {PLACEHOLDERS.map(|p| format!("{{{{{p}}}}}")).join(", ")}
        </p>
    }
    .into_any()
}
