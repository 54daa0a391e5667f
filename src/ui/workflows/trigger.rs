//! The start trigger: its type (from the catalogue of trigger types) and
//! its filter rules, edited as JSON and checked by the server against the
//! type's schema (the refusal names the rule that failed).

use crate::domain::workflow_def::{Edit, TriggerType};
use crate::error::ApiError;
use crate::ui::components::{read_json, Draft, DraftArea};
use crate::ui::workflows::Editing;
use leptos::prelude::*;
use serde_json::Value;

/// Rules as the textarea shows them.
fn pretty(rules: &Value) -> String {
    serde_json::to_string_pretty(rules).unwrap_or_else(|_| "{}".into())
}

/// The rule names a type's schema allows, for the hint under the box.
fn rule_names(t: &TriggerType) -> String {
    let names: Vec<String> = t
        .filter_schema
        .get("properties")
        .and_then(Value::as_object)
        .map(|p| p.keys().cloned().collect())
        .unwrap_or_default();
    if names.is_empty() {
        "This trigger type takes no filter rules: {}.".into()
    } else {
        format!("Rules it takes: {}.", names.join(", "))
    }
}

/// The trigger panel.
#[component]
pub fn TriggerEditor(editing: Editing) -> impl IntoView {
    let page = editing.page;
    let trigger = Memo::new(move |_| page.with(|p| p.definition.trigger.clone()));
    let types = StoredValue::new(page.with_untracked(|p| p.trigger_types.clone()));
    // A change saved anywhere replaces the box's text unless it is being
    // edited.
    let draft = Draft::following(move || {
        trigger
            .get()
            .map(|t| pretty(&t.filter_rules))
            .unwrap_or_default()
    });
    let current_type = move || trigger.with(|t| t.as_ref().map(|t| t.trigger_type_id.clone()));
    let chosen = move || {
        current_type()
            .and_then(|id| types.with_value(|list| list.iter().find(|t| t.id == id).cloned()))
    };
    let save_rules = move |_| {
        let Some(t) = trigger.get_untracked() else {
            return;
        };
        let sent = draft.sending();
        match read_json::<Value>(&sent) {
            Ok(rules) => {
                editing.apply_then(
                    Edit::UpdateTriggerSettings {
                        trigger_uuid: t.uuid,
                        filter_rules: rules,
                    },
                    move || draft.saved(&sent),
                );
            }
            Err(e) => editing.problem.set(Some(ApiError::invalid(
                "filter_rules",
                format!("is not JSON: {e}"),
            ))),
        }
    };
    view! {
        <section class="panel" data-testid="trigger-panel">
            <h2>"Start trigger"</h2>
            <label class="field">
                <span>"What starts the workflow"</span>
                <select
                    data-testid="trigger-type"
                    prop:value=move || current_type().unwrap_or_default()
                    prop:disabled=move || editing.busy.get()
                    on:change=move |ev| {
                        let id = event_target_value(&ev);
                        if !id.is_empty() && Some(id.clone()) != current_type() {
                            draft.dirty.set(false);
                            editing.apply(Edit::SetTrigger { trigger_type_id: id });
                        }
                    }
                >
                    <option value="" disabled=true selected=move || current_type().is_none()>
                        "Choose a trigger…"
                    </option>
                    {types
                        .get_value()
                        .into_iter()
                        .map(|t| {
                            let id = t.id.clone();
                            view! {
                                <option value=t.id.clone() selected=move || current_type().as_deref() == Some(id.as_str())>
                                    {t.name.clone()}
                                </option>
                            }
                        })
                        .collect_view()}
                </select>
            </label>
            {move || chosen().map(|t| view! {
                <p class="muted small" data-testid="trigger-description">{t.description.clone()}</p>
                <DraftArea draft label="Filter rules (JSON)" rows=5 testid="filter-rules" class="mono" />
                <p class="muted small">{rule_names(&t)}</p>
                <button
                    type="button"
                    data-testid="save-filter-rules"
                    prop:disabled=move || editing.busy.get() || !draft.dirty.get()
                    on:click=save_rules
                >
                    "Save filter rules"
                </button>
            })}
        </section>
    }
}
