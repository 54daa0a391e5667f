//! The label editor under the matrix: what watchers read for each check
//! and step. Labels are part of the bindings document, so they are edited
//! into the same unsaved document as the matrix and saved, versioned,
//! downloaded and restored with it.

use crate::domain::bindings::ToolBindings;
use crate::domain::catalogue::{known_checks, known_steps, CatalogueTool};
use crate::domain::effect::label_problem;
use crate::domain::error::BindingProblem;
use crate::domain::state_labels::{humanise, CheckLabel};
use crate::ui::components::FieldProblem;
use leptos::prelude::*;
use std::collections::BTreeSet;

/// The problem (if any) placed at `at` or under it, from the live check of
/// the edited labels.
fn problem_at(
    problems: Memo<Vec<BindingProblem>>,
    at: String,
) -> impl Fn() -> Option<String> + Send + Sync + 'static {
    move || {
        problems.with(|list| {
            list.iter()
                .find(|p| p.at == at || p.at.starts_with(&format!("{at}.")))
                .map(|p| p.message.clone())
        })
    }
}

/// A label for every check the catalogue's effects set and a description
/// for every step they (and a new session) reach, plus any other step a
/// backend sets, added by key. A blank field means "no label": the key is
/// then shown humanised (the placeholder shows how).
#[component]
pub fn LabelEditor(edited: RwSignal<ToolBindings>, tools: Vec<CatalogueTool>) -> impl IntoView {
    let checks = StoredValue::new(known_checks(&tools));
    let steps = StoredValue::new(known_steps(&tools));
    let problems =
        Memo::new(move |_| edited.with(|b| checks.with_value(|known| b.labels.problems(known))));
    // Known keys always have a row; labelled others (from a file, or a
    // check no tool sets any more) too, so they can be fixed or cleared.
    let check_keys = move || {
        let mut keys = checks.get_value();
        keys.extend(edited.with(|b| b.labels.checks.keys().cloned().collect::<BTreeSet<_>>()));
        keys.into_iter().collect::<Vec<_>>()
    };
    let step_keys = move || {
        let mut keys = steps.get_value();
        keys.extend(edited.with(|b| b.labels.steps.keys().cloned().collect::<BTreeSet<_>>()));
        keys.into_iter().collect::<Vec<_>>()
    };
    let check_column = view! {
        <div>
            <h3>"Checks"</h3>
            <For each=check_keys key=|k| k.clone() let:key>
                <CheckRow key edited problems />
            </For>
        </div>
    }
    .into_any();
    let step_column = view! {
        <div>
            <h3>"Steps"</h3>
            <For each=step_keys key=|k| k.clone() let:key>
                <StepRow key edited problems />
            </For>
            <NewStep edited />
        </div>
    }
    .into_any();
    view! {
        <section class="panel" data-testid="labels">
            <h2>"Check and step labels"</h2>
            <p class="muted small">
                "What people watching a session read instead of the keys. Saved with the bindings (Save above); a blank field shows the key in words."
            </p>
            <div class="two-col">{check_column} {step_column}</div>
        </section>
    }
    .into_any()
}

/// One check: its label and description.
#[component]
fn CheckRow(
    key: String,
    edited: RwSignal<ToolBindings>,
    problems: Memo<Vec<BindingProblem>>,
) -> impl IntoView {
    let k = StoredValue::new(key.clone());
    let get = move |description: bool| {
        edited.with(|b| {
            k.with_value(|k| {
                b.labels
                    .checks
                    .get(k)
                    .map(|c| {
                        if description {
                            c.description.clone()
                        } else {
                            c.label.clone()
                        }
                    })
                    .unwrap_or_default()
            })
        })
    };
    let set = move |description: bool, value: String| {
        edited.update(|b| {
            let key = k.get_value();
            let mut entry = b.labels.checks.remove(&key).unwrap_or_default();
            if description {
                entry.description = value;
            } else {
                entry.label = value;
            }
            if entry != CheckLabel::default() {
                b.labels.checks.insert(key, entry);
            }
        })
    };
    let id = format!("check-label-{key}");
    view! {
        <div class="field label-row" data-label-check=key.clone()>
            <label for=id.clone()>
                <code>{key.clone()}</code>
            </label>
            <input
                id=id
                type="text"
                placeholder=humanise(&key)
                aria-label=format!("Label of check {key}")
                prop:value=move || get(false)
                on:input=move |ev| set(false, event_target_value(&ev))
            />
            <input
                type="text"
                placeholder="What passing it means (optional)"
                aria-label=format!("Description of check {key}")
                prop:value=move || get(true)
                on:input=move |ev| set(true, event_target_value(&ev))
            />
            <FieldProblem message=problem_at(problems, format!("labels.checks.{key}")) />
        </div>
    }
}

/// One step: its description.
#[component]
fn StepRow(
    key: String,
    edited: RwSignal<ToolBindings>,
    problems: Memo<Vec<BindingProblem>>,
) -> impl IntoView {
    let k = StoredValue::new(key.clone());
    let id = format!("step-label-{key}");
    view! {
        <div class="field label-row" data-label-step=key.clone()>
            <label for=id.clone()>
                <code>{key.clone()}</code>
            </label>
            <input
                id=id
                type="text"
                placeholder=humanise(&key)
                aria-label=format!("Description of step {key}")
                prop:value=move || {
                    edited.with(|b| k.with_value(|k| b.labels.steps.get(k).cloned().unwrap_or_default()))
                }
                on:input=move |ev| {
                    let value = event_target_value(&ev);
                    edited.update(|b| {
                        let key = k.get_value();
                        if value.is_empty() {
                            b.labels.steps.remove(&key);
                        } else {
                            b.labels.steps.insert(key, value);
                        }
                    })
                }
            />
            <FieldProblem message=problem_at(problems, format!("labels.steps.{key}")) />
        </div>
    }
}

/// Describes a step the catalogue does not know of (one a backend sets
/// with `PATCH …/state`): its key, then a row like the others.
#[component]
fn NewStep(edited: RwSignal<ToolBindings>) -> impl IntoView {
    let key = RwSignal::new(String::new());
    let problem = RwSignal::new(None::<String>);
    let add = move |_| {
        let k = key.get_untracked().trim().to_owned();
        if let Some(p) = label_problem("step", &k) {
            problem.set(Some(format!("step {}", p.rule)));
            return;
        }
        problem.set(None);
        edited.update(|b| {
            b.labels
                .steps
                .entry(k.clone())
                .or_insert_with(|| humanise(&k));
        });
        key.set(String::new());
    };
    view! {
        <div class="field">
            <label for="new-step-key">"Another step (its key)"</label>
            <div class="inline-form">
                <input
                    id="new-step-key"
                    type="text"
                    placeholder="awaiting_callback"
                    prop:value=move || key.get()
                    on:input=move |ev| key.set(event_target_value(&ev))
                />
                <button type="button" class="button small" on:click=add>
                    "Add step"
                </button>
            </div>
            <FieldProblem message=move || problem.get() />
        </div>
    }
}
