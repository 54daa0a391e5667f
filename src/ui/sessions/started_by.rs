//! The session page's "Started by" line: which start trigger opened the
//! session and what set it off (a webhook's event, a caller's number), so
//! a watcher sees why a session exists. Nothing for sessions an agent
//! backend opened itself.

use crate::domain::session_origin::StartedBy;
use leptos::prelude::*;

/// "Started by: webhook — event order.created".
#[component]
pub fn StartedByLine(started_by: Option<StartedBy>) -> impl IntoView {
    started_by.map(|s| {
        view! {
            <p class="muted small" data-testid="started-by" data-trigger=s.trigger.clone()>
                {format!("Started by: {} — {}", s.trigger, s.summary)}
            </p>
        }
    })
}
