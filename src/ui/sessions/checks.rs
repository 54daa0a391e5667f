//! The visualiser's checks panel: each check the session has (or the demo
//! always shows) with its label from the bindings, an icon that does not
//! need an emoji font, and a pulse when it changes.

use crate::domain::agent_session::check_names;
use crate::domain::state_labels::StateLabels;
use crate::domain::workflow_state::WorkflowState;
use crate::ui::components::{Status, StatusIcon};
use leptos::prelude::*;
use std::collections::BTreeSet;

/// The checks, by label (the key stays in `data-check`, the description is
/// the tooltip and a line under the label); `pulsing` ones animate.
#[component]
pub fn ChecksPanel(
    ws: RwSignal<WorkflowState>,
    pulsing: RwSignal<BTreeSet<String>>,
    labels: StoredValue<StateLabels>,
) -> impl IntoView {
    view! {
        <section class="panel">
            <h2>"Checks"</h2>
            <ul class="checks" data-testid="checks">
                {move || {
                    ws.with(check_names)
                        .into_iter()
                        .map(|key| {
                            let value = ws.with(|w| w.checks.get(&key).copied());
                            let (class, status, words) = match value {
                                Some(true) => ("check-true", Status::Passed, "passed"),
                                Some(false) => ("check-false", Status::Failed, "failed"),
                                None => ("check-unknown", Status::Unknown, "not yet known"),
                            };
                            let pulse = pulsing.with(|p| p.contains(&key));
                            let (label, description) = labels
                                .with_value(|l| (l.check(&key), l.check_description(&key)));
                            let title = description.clone().unwrap_or_else(|| key.clone());
                            view! {
                                <li class=class class:pulse=pulse data-check=key.clone() title=title>
                                    <span class="mark">
                                        <StatusIcon status text=words />
                                    </span>
                                    <span class="check-text">
                                        <span class="check-label">{label}</span>
                                        {description.map(|d| view! { <span class="check-description">{d}</span> })}
                                    </span>
                                </li>
                            }
                        })
                        .collect_view()
                }}
            </ul>
        </section>
    }
}
