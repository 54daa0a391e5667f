//! One step: its place (moved up or down), name and type, its system
//! prompt, and — for a custom_agent step — its tools, ticked from the
//! catalogue. Each change is one edit, sent at once (the prompt on Save).

use crate::domain::ids::ToolId;
use crate::domain::workflow_def::{Edit, StepType};
use crate::ui::components::tool_checks::{set_tool, ToolChecks};
use crate::ui::components::{Draft, DraftArea};
use crate::ui::workflows::Editing;
use leptos::prelude::*;

/// `order` with the step `uuid` moved `by` places (−1 up, +1 down);
/// `None` when it cannot move that way.
pub fn moved(order: &[String], uuid: &str, by: isize) -> Option<Vec<String>> {
    let at = order.iter().position(|u| u == uuid)?;
    let to = at.checked_add_signed(by).filter(|to| *to < order.len())?;
    let mut next = order.to_vec();
    next.swap(at, to);
    Some(next)
}

/// One step's card.
#[component]
pub fn StepCard(uuid: String, order: Memo<Vec<String>>, editing: Editing) -> impl IntoView {
    let page = editing.page;
    let step = {
        let uuid = uuid.clone();
        Memo::new(move |_| {
            page.with(|p| p.definition.steps.iter().find(|s| s.uuid == uuid).cloned())
        })
    };
    let place = {
        let uuid = uuid.clone();
        Memo::new(move |_| order.with(|o| o.iter().position(|u| *u == uuid).unwrap_or(0)))
    };
    let shift = {
        let uuid = uuid.clone();
        move |by: isize| {
            if let Some(next) = moved(&order.get_untracked(), &uuid, by) {
                editing.apply(Edit::ReorderSteps {
                    ordered_step_uuids: next,
                });
            }
        }
    };
    let draft = Draft::following(move || {
        step.with(|s| {
            s.as_ref()
                .map(|s| s.system_prompt.clone())
                .unwrap_or_default()
        })
    });
    let save_prompt = {
        let uuid = uuid.clone();
        move |_| {
            let sent = draft.sending();
            editing.apply_then(
                Edit::UpdateSystemPrompt {
                    step_uuid: uuid.clone(),
                    system_prompt: sent.clone(),
                },
                move || draft.saved(&sent),
            );
        }
    };
    let remove = {
        let uuid = uuid.clone();
        move |_| {
            editing.apply(Edit::RemoveStep {
                step_uuid: uuid.clone(),
            })
        }
    };
    let is_agent = move || {
        step.with(|s| {
            s.as_ref()
                .is_some_and(|s| s.step_type == StepType::CustomAgent)
        })
    };
    let tools = page.with_untracked(|p| p.tools.clone());
    let ticked = move |id: &str| {
        step.with(|s| {
            s.as_ref()
                .is_some_and(|s| s.tools.iter().any(|t| t.as_str() == id))
        })
    };
    let toggle = {
        let uuid = StoredValue::new(uuid.clone());
        move |tool: ToolId, on: bool| {
            let mut list =
                step.with_untracked(|s| s.as_ref().map(|s| s.tools.clone()).unwrap_or_default());
            set_tool(&mut list, tool, on);
            editing.apply(Edit::UpdateStepTools {
                step_uuid: uuid.get_value(),
                enabled_tools: list.iter().map(ToString::to_string).collect(),
            });
        }
    };
    // Tools an API key gave that the bindings no longer allow: on the
    // step, but not in force (see `Step::bound_only`).
    let lapsed = move || {
        let bound = page.with(|p| p.bound_tools.clone());
        step.with(|s| {
            s.as_ref().map_or_else(Vec::new, |s| {
                s.tools
                    .iter()
                    .filter(|t| s.lapsed(t.as_str(), |x| bound.iter().any(|b| b == x)))
                    .map(ToString::to_string)
                    .collect::<Vec<_>>()
            })
        })
    };
    let up = {
        let shift = shift.clone();
        move |_: leptos::ev::MouseEvent| shift(-1)
    };
    let down = move |_: leptos::ev::MouseEvent| shift(1);
    view! {
        <li
            class="panel workflow-step"
            data-testid="workflow-step"
            data-uuid=uuid.clone()
            data-name=move || step.with(|s| s.as_ref().map(|s| s.name.clone()))
        >
            <div class="step-head">
                <span class="step-place">{move || place.get() + 1}"."</span>
                <strong data-testid="step-name">{move || step.with(|s| s.as_ref().map(|s| s.name.clone()))}</strong>
                <span class="badge" data-testid="step-type">
                    {move || step.with(|s| s.as_ref().map(|s| s.step_type.as_str()))}
                </span>
                <span class="step-actions">
                    <button
                        type="button"
                        class="small"
                        data-testid="step-up"
                        title="Move up"
                        aria-label="Move up"
                        prop:disabled=move || place.get() == 0 || editing.busy.get()
                        on:click=up
                    >
                        "↑"
                    </button>
                    <button
                        type="button"
                        class="small"
                        data-testid="step-down"
                        title="Move down"
                        aria-label="Move down"
                        prop:disabled=move || { place.get() + 1 >= order.with(Vec::len) || editing.busy.get() }
                        on:click=down
                    >
                        "↓"
                    </button>
                    <button
                        type="button"
                        class="small danger"
                        data-testid="step-remove"
                        prop:disabled=move || editing.busy.get()
                        on:click=remove
                    >
                        "Remove"
                    </button>
                </span>
            </div>
            <DraftArea draft label="System prompt" rows=3 testid="step-prompt" />
            <button
                type="button"
                class="small"
                data-testid="save-step-prompt"
                prop:disabled=move || !draft.dirty.get() || editing.busy.get()
                on:click=save_prompt
            >
                "Save prompt"
            </button>
            {move || if is_agent() {
                view! {
                    <ToolChecks tools=tools.clone() legend="Tools in this step" prefix="step-tool" ticked toggle />
                    {lapsed_notice(lapsed())}
                }.into_any()
            } else {
                view! { <p class="muted small">"A custom_llm step has no tools; use a custom_agent step for tools."</p> }.into_any()
            }}
        </li>
    }
}

/// The words under a step's tools for those not in force, if any.
fn lapsed_notice(lapsed: Vec<String>) -> Option<impl IntoView> {
    (!lapsed.is_empty()).then(|| {
        let names = lapsed
            .iter()
            .map(|t| format!("`{t}`"))
            .collect::<Vec<_>>()
            .join(", ");
        let them = if lapsed.len() == 1 { "it" } else { "them" };
        view! {
            <p class="notice small" role="status" data-testid="step-lapsed">
                {format!(
                    "Not in force: {names}. An API key gave {them} and the bindings no longer allow {them} in this workflow. Untick to take {them} off, then tick to give {them} yourself, or bind {them} on the bindings page."
                )}
            </p>
        }
    })
}

#[cfg(test)]
mod tests {
    use super::moved;

    #[test]
    fn a_step_moves_one_place_within_the_list() {
        let order: Vec<String> = ["a", "b", "c"].map(String::from).to_vec();
        assert_eq!(moved(&order, "b", -1).unwrap(), ["b", "a", "c"]);
        assert_eq!(moved(&order, "b", 1).unwrap(), ["a", "c", "b"]);
        assert_eq!(moved(&order, "a", -1), None);
        assert_eq!(moved(&order, "c", 1), None);
        assert_eq!(moved(&order, "z", 1), None);
    }
}
