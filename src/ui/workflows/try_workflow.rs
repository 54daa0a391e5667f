//! "Try this workflow" under a workflow's settings: the admin starts it by
//! hand (`POST /api/workflows/{id}/start`, a trial session) and plays the
//! caller in a chat with the workflow's agent, while the visualiser beside
//! the chat lights the step the call is on and shows each tool call
//! (`ui::sessions::try_it`).

use crate::ui::sessions::try_it::TryIt;
use leptos::prelude::*;

/// The trial panel of workflow `workflow_id`.
#[component]
pub fn TryWorkflow(workflow_id: String) -> impl IntoView {
    // Started by hand as a trial: listed as one, apart from real calls.
    let body = Callback::new(|()| serde_json::json!({"trial": true}));
    view! {
        <TryIt
            title="Try this workflow"
            intro="Play the caller: the workflow starts as a trial, its agent answers, and the visualiser beside the chat lights the current step and shows every tool call."
            open_url=format!("/api/workflows/{workflow_id}/start")
            body
            label="Message as the caller"
            hint="Say what a caller would, e.g. “Hi, I'd like to check my balance.”"
        />
    }
}
