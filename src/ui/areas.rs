//! The live-sessions area, which its own issue fills in.

use crate::domain::user::Role;
use crate::ui::session::RequireRole;
use leptos::prelude::*;

/// Live agent sessions and their workflow state.
#[component]
pub fn SessionsPage() -> impl IntoView {
    view! {
        <RequireRole role=Role::Teacher>
            <section class="page-head">
                <h1>"Live sessions"</h1>
                <p class="muted">
                    "Every open agent session, its current workflow and step, updated as it changes."
                </p>
            </section>
        </RequireRole>
    }
}
