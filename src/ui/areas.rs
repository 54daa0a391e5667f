//! The three work areas. Each page states its purpose and who it is for;
//! the lesson, binding and session issues fill in their tools.

use crate::domain::user::Role;
use crate::ui::session::RequireRole;
use leptos::prelude::*;

/// Teachers' lessons and their tool configuration.
#[component]
pub fn LessonsPage() -> impl IntoView {
    view! {
        <RequireRole role=Role::Teacher>
            <section class="page-head">
                <h1>"Lessons"</h1>
                <p class="muted">
                    "Each lesson keeps its conversation prompt, its tool configuration and the system's trigger templates apart; the tutor's prompt is assembled from them at run time."
                </p>
            </section>
        </RequireRole>
    }
}

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
