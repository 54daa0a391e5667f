//! The visualiser's steps panel: the current workflow's steps in order,
//! the one the session is in lit, so a watcher sees where in the workflow
//! the agent is. Shown only for a workflow that has steps.

use crate::domain::workflow_def::Step;
use crate::domain::workflow_state::WorkflowState;
use leptos::prelude::*;
use std::collections::BTreeMap;

/// The panel.
#[component]
pub fn WorkflowSteps(
    /// The session's state (its workflow and workflow step).
    ws: RwSignal<WorkflowState>,
    /// Each workflow's steps.
    steps: StoredValue<BTreeMap<String, Vec<Step>>>,
) -> impl IntoView {
    let current = move || {
        ws.with(|w| {
            let list = steps.with_value(|all| all.get(&w.current_workflow).cloned());
            list.map(|list| (list, w.workflow_step.clone()))
        })
    };
    move || {
        current().map(|(list, at)| {
            view! {
                <section class="panel" data-testid="workflow-steps-panel">
                    <h2>"Workflow steps"</h2>
                    <ol class="vis-steps">
                        {list
                            .into_iter()
                            .map(|step| {
                                let lit = at.as_deref() == Some(step.uuid.as_str());
                                view! {
                                    <li
                                        class=if lit { "vis-step current" } else { "vis-step" }
                                        data-testid="vis-step"
                                        data-current=lit.to_string()
                                        aria-current=lit.then_some("step")
                                    >
                                        <span>{step.name.clone()}</span>
                                        " "
                                        <span class="muted small">{step.step_type.as_str()}</span>
                                    </li>
                                }
                            })
                            .collect_view()}
                    </ol>
                </section>
            }
        })
    }
}
