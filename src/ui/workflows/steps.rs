//! The workflow's steps in order, one card each (`step_card`), and the
//! form that adds one at the end.

use crate::domain::workflow_def::{Edit, StepType, MAX_STEP_NAME_CHARS};
use crate::ui::workflows::step_card::StepCard;
use crate::ui::workflows::Editing;
use leptos::prelude::*;

/// The steps panel.
#[component]
pub fn StepsEditor(editing: Editing) -> impl IntoView {
    let page = editing.page;
    let order = Memo::new(move |_| {
        page.with(|p| {
            p.definition
                .steps
                .iter()
                .map(|s| s.uuid.clone())
                .collect::<Vec<_>>()
        })
    });
    let name = RwSignal::new(String::new());
    let kind = RwSignal::new(StepType::CustomAgent.as_str().to_owned());
    let add = move |ev: leptos::ev::SubmitEvent| {
        ev.prevent_default();
        let step_name = name.get_untracked().trim().to_owned();
        if step_name.is_empty() {
            return;
        }
        name.set(String::new());
        editing.apply(Edit::AddStep {
            step_type: kind.get_untracked(),
            name: step_name,
        });
    };
    view! {
        <section class="panel" data-testid="steps-panel">
            <h2>"Steps"</h2>
            <Show when=move || order.with(Vec::is_empty)>
                <p class="muted" data-testid="no-steps">
                    "No steps yet. Add one below, or ask the workflow agent."
                </p>
            </Show>
            <ol class="workflow-steps" data-testid="workflow-steps">
                <For each=move || order.get() key=|uuid| uuid.clone() let:uuid>
                    <StepCard uuid order editing />
                </For>
            </ol>
            <form class="add-step" on:submit=add>
                <select
                    data-testid="new-step-type"
                    aria-label="Step type"
                    prop:value=move || kind.get()
                    on:change=move |ev| kind.set(event_target_value(&ev))
                >
                    {StepType::ALL
                        .iter()
                        .map(|t| view! { <option value=t.as_str()>{t.as_str()}</option> })
                        .collect_view()}
                </select>
                <input
                    type="text"
                    placeholder="New step's name"
                    aria-label="New step's name"
                    data-testid="new-step-name"
                    maxlength=MAX_STEP_NAME_CHARS.to_string()
                    prop:value=move || name.get()
                    on:input=move |ev| name.set(event_target_value(&ev))
                />
                <button type="submit" data-testid="add-step" prop:disabled=move || editing.busy.get()>
                    "Add step"
                </button>
            </form>
        </section>
    }
}
