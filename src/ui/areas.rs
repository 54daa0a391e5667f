//! The binding and session areas, which their own issues fill in.

use crate::domain::user::Role;
use crate::ui::session::RequireRole;
use leptos::prelude::*;

/// The admin's matrix of which tools are global and which per workflow.
#[component]
pub fn BindingsPage() -> impl IntoView {
    view! {
        <RequireRole role=Role::Admin>
            <section class="page-head">
                <h1>"Tool bindings"</h1>
                <p class="muted">
                    "Global tools are available in every workflow; the rest only in the workflows they are bound to."
                </p>
            </section>
        </RequireRole>
    }
}

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
