//! `/agents`: the admin's agents and vibes. The list of vibes and agents
//! (`list`), a vibe's editor (`vibe_editor`) with its agent × tool matrix
//! (`matrix`), and an agent's editor (`agent_editor`) with what it would
//! get and cost (`preview`); tool checkboxes grouped by category are
//! shared (`ui::components::tool_checks`). Under a vibe's editor, "Try
//! this vibe" (`try_vibe`) opens a trial of it beside the visualiser.
//!
//! What is shown is chosen by the query (`?vibe=todos&agent=Oliver`), so
//! every view is a plain link that renders on the server without
//! JavaScript, like the other pages.

pub mod agent_editor;
pub mod call_settings;
pub mod import;
pub mod list;
pub mod matrix;
pub mod preview;
pub mod try_vibe;
pub mod vibe_editor;

use crate::api::vibes::{agents_data, AgentsSet};
use crate::domain::catalogue::CatalogueTool;
use crate::domain::error::{problem_for, FieldError};
use crate::domain::user::Role;
use crate::domain::vibe::rules::problems;
use crate::domain::vibe::{Agent, Vibe};
use crate::ui::auth::RequireRole;
use crate::ui::components::{fetched, Loaded, MaybeEmpty};
use leptos::prelude::*;
use leptos_router::hooks::use_query_map;
use std::collections::HashSet;

impl MaybeEmpty for AgentsSet {}

/// The loaded set, shared by the views and updated in place after a save,
/// so moving between views shows what was saved without a refetch, and
/// the lists and matrix follow a save (a renamed agent) at once.
pub type Shared = RwSignal<AgentsSet>;

/// The page: admins only. The resource is created outside the role guard
/// so server rendering and hydration create it in the same order.
#[component]
pub fn AgentsPage() -> impl IntoView {
    let query = use_query_map();
    let (vibe, agent) = query.with_untracked(|q| (q.get("vibe"), q.get("agent")));
    view! { <AgentsIsland vibe agent /> }
}

/// The page's interactive part, hydrated on its own; `vibe` and `agent`
/// (from the query) choose the editor shown.
#[island]
fn AgentsIsland(vibe: Option<String>, agent: Option<String>) -> impl IntoView {
    crate::ui::auth::provide_auth();
    let pick = StoredValue::new((vibe, agent));
    let data = fetched(|| (), |_| agents_data());
    view! {
        <RequireRole role=Role::Admin>
            <section class="page-head">
                <h1>"Agents and vibes"</h1>
                <p class="muted">
                    "A vibe is an app experience: its agents, the one a call starts with, the core tools every agent of it has and the app tools its agents may be given. Saving puts a change in force at once: open sessions whose tools change are told."
                </p>
            </section>
            <Loaded resource=data loading="Loading agents…" let:data>
                <Selected set=RwSignal::new(data) pick />
            </Loaded>
            <import::ManifestImport on_done=Callback::new(move |_| data.refetch()) />
        </RequireRole>
    }
}

/// The list, then the editor the query asks for.
#[component]
fn Selected(set: Shared, pick: StoredValue<(Option<String>, Option<String>)>) -> impl IntoView {
    let pick = move || pick.get_value();
    // The editor shown is chosen by the query alone: reading the set
    // untracked keeps an editor (and its unsaved edits) in place when a
    // save updates the set.
    view! {
        <list::Lists set />
        {move || {
            let (vibe, agent) = pick();
            let vibe = vibe.and_then(|id| set.with_untracked(|s| s.vibes.iter().find(|v| v.value.id.as_str() == id).cloned()));
            match agent {
                Some(id) => {
                    let found = set.with_untracked(|s| s.agents.iter().find(|a| a.value.id.as_str() == id).cloned());
                    match found {
                        Some(agent) => {
                            let vibe = vibe.map(|v| v.value).or_else(|| set.with_untracked(|s| s.vibes.iter().find(|v| v.value.has_agent(&id)).map(|v| v.value.clone())));
                            view! { <agent_editor::AgentEditor set agent vibe /> }.into_any()
                        }
                        None => view! { <p class="error">{format!("There is no agent \"{id}\".")}</p> }.into_any(),
                    }
                }
                None => match vibe {
                    Some(vibe) => {
                        let tried = vibe.value.clone();
                        view! {
                            <vibe_editor::VibeEditor set vibe />
                            <try_vibe::TryVibe vibe=tried />
                        }
                        .into_any()
                    }
                    None => ().into_any(),
                },
            }
        }}
    }
    .into_any()
}

/// The catalogue's tool ids, for checking a set.
pub fn catalogue_ids(tools: &[CatalogueTool]) -> HashSet<String> {
    tools.iter().map(|t| t.id.to_string()).collect()
}

/// The rules the loaded set breaks with `agents` and `vibe` as edited in
/// place of their saved selves: the instant, client-side answer the server
/// will give on save.
pub fn problems_with(set: &AgentsSet, edited: &[Agent], vibe: Option<&Vibe>) -> Vec<FieldError> {
    let mut agents: Vec<Agent> = set.agents.iter().map(|a| a.value.clone()).collect();
    let mut vibes: Vec<Vibe> = set.vibes.iter().map(|v| v.value.clone()).collect();
    for agent in edited {
        match agents.iter_mut().find(|a| a.id == agent.id) {
            Some(slot) => *slot = agent.clone(),
            None => agents.push(agent.clone()),
        }
    }
    if let Some(vibe) = vibe {
        match vibes.iter_mut().find(|v| v.id == vibe.id) {
            Some(slot) => *slot = vibe.clone(),
            None => vibes.push(vibe.clone()),
        }
    }
    problems(&agents, &vibes, &catalogue_ids(&set.tools))
}

/// What an editor shows of its object's problems: all of them (the
/// server's answer to the last save, until the next edit, then the
/// client-side rules), one field's, and those about other objects.
#[derive(Clone, Copy)]
pub struct EditorProblems {
    /// Every problem, the server's first.
    pub all: Memo<Vec<FieldError>>,
    /// The server's refusal of the last save.
    pub refused: RwSignal<Option<FieldError>>,
    prefix: StoredValue<String>,
}

impl EditorProblems {
    /// Problems of an object whose fields start with `prefix`
    /// (`agents.Oliver.`): `edits` tracks the edited signals (an edit
    /// clears the server's last refusal) and `check` runs the rules on
    /// them.
    pub fn new(
        prefix: String,
        edits: impl Fn() + Send + Sync + 'static,
        check: impl Fn() -> Vec<FieldError> + Send + Sync + 'static,
    ) -> Self {
        let refused = RwSignal::new(None::<FieldError>);
        Effect::new(move |_| {
            edits();
            refused.set(None);
        });
        let all = Memo::new(move |_| {
            let mut list: Vec<FieldError> = refused.get().into_iter().collect();
            list.extend(check());
            list
        });
        Self {
            all,
            refused,
            prefix: StoredValue::new(prefix),
        }
    }

    /// The first problem with field `key` of the object (or under it).
    pub fn field(self, key: &str) -> impl Fn() -> Option<String> + Send + Sync + 'static {
        let name = format!("{}{key}", self.prefix.get_value());
        move || self.all.with(|p| problem_for(p, &name, true))
    }

    /// Problems about other objects the edit breaks (a vibe that lists
    /// this agent, say), as text.
    pub fn others(self) -> impl Fn() -> Vec<String> + Send + Sync + 'static {
        move || {
            let prefix = self.prefix.get_value();
            self.all.with(|p| {
                p.iter()
                    .filter(|e| !e.field.starts_with(&prefix))
                    .map(|e| e.to_string())
                    .collect()
            })
        }
    }
}

/// An editor's foot: the other objects' problems the edit causes, Discard
/// (back to the saved version) and Save, both idle while nothing changed.
#[component]
pub fn SaveBar(
    /// Problems about other objects, as text.
    others: Signal<Vec<String>>,
    /// Whether there are unsaved edits.
    dirty: Memo<bool>,
    /// Whether a save is under way.
    #[prop(into)]
    saving: Signal<bool>,
    /// Puts the saved version back.
    on_discard: Callback<()>,
    /// Saves the edit.
    on_save: Callback<()>,
    /// The save button's words (`Save agent`).
    label: &'static str,
    /// The save button's `data-testid`.
    testid: &'static str,
) -> impl IntoView {
    view! {
        <ul class="field-error" data-testid="other-problems">
            {move || others.get().into_iter().map(|p| view! { <li>{p}</li> }).collect_view()}
        </ul>
        <div class="save-bar">
            <button type="button" class="button" disabled=move || !dirty.get() on:click=move |_| on_discard.run(())>
                "Discard"
            </button>
            <button
                type="button"
                class="button primary"
                data-testid=testid
                disabled=move || saving.try_get().unwrap_or(true) || !dirty.get()
                on:click=move |_| on_save.run(())
            >
                {move || if saving.try_get().unwrap_or(false) { "Saving…" } else { label }}
            </button>
        </div>
    }
}

/// Asks before unsaved edits are left, while `dirty` says there are some.
pub fn guard_unsaved(dirty: Memo<bool>) {
    crate::ui::components::guard_unsaved(move || dirty.try_get_untracked().unwrap_or(false));
}

/// A labelled text input or textarea bound to one field of an edited
/// object, with the rule it breaks beside it.
pub fn text_field<T: Send + Sync + 'static>(
    edited: RwSignal<T>,
    label: &'static str,
    key: &'static str,
    get: fn(&T) -> String,
    set: fn(&mut T, String),
    rows: Option<u32>,
    problem: impl Fn() -> Option<String> + Send + Sync + 'static,
) -> AnyView {
    let id = format!("field-{key}");
    let value = move || edited.with(get);
    let initial = edited.with_untracked(get);
    let on_input = move |ev| {
        let v = event_target_value(&ev);
        edited.update(|t| set(t, v));
    };
    let input = match rows {
        Some(rows) => view! {
            <textarea id=id.clone() name=key rows=rows.to_string() prop:value=value on:input=on_input>
                {initial}
            </textarea>
        }
        .into_any(),
        None => view! { <input id=id.clone() name=key type="text" prop:value=value value=initial on:input=on_input /> }
            .into_any(),
    };
    view! {
        <div class="field" data-field=key>
            <label for=id>{label}</label>
            {input}
            <crate::ui::components::FieldProblem message=problem />
        </div>
    }
    .into_any()
}
