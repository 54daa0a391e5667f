//! Who is signed in, shared by every component through context. ("Auth",
//! not "session": sessions are the agent sessions of `ui::sessions`.)

use crate::api::auth::{Login, Logout};
use crate::domain::user::{Role, UserView};
use crate::ui::components::{Fetched, Loaded};
use leptos::prelude::*;

/// The signed-in user and the actions that change it. Provided once by `App`
/// so the header, guards and pages never fetch the user separately.
#[derive(Clone, Copy)]
pub struct Auth {
    /// The current user, refetched whenever `login` or `logout` completes.
    pub user: Fetched<Option<UserView>>,
    /// Signs in.
    pub login: ServerAction<Login>,
    /// Signs out.
    pub logout: ServerAction<Logout>,
}

/// Set by a page while it holds unsaved edits, so in-app navigation can ask
/// before leaving (the browser's own `beforeunload` covers reloads and tabs).
#[derive(Clone, Copy)]
pub struct UnsavedChanges(pub RwSignal<bool>);

/// Asks before an in-app link click discards unsaved edits; cancels the
/// navigation (the router skips default-prevented clicks) if the user says no.
pub fn confirm_leave(ev: &leptos::ev::MouseEvent) {
    let unsaved = use_context::<UnsavedChanges>().is_some_and(|u| u.0.get_untracked());
    if unsaved
        && !window()
            .confirm_with_message("You have unsaved changes. Leave this page and lose them?")
            .unwrap_or(true)
    {
        ev.prevent_default();
    }
}

/// The sign-in state from context; `App` always provides it.
pub fn use_auth() -> Auth {
    expect_context::<Auth>()
}

/// Whether an admin is signed in, read untracked: for a part of a page only
/// admins get (a button, a form), inside a role guard that re-renders the
/// page when the user changes. The server decides again on every call.
pub fn signed_in_admin() -> bool {
    use_auth()
        .user
        .get_untracked()
        .and_then(|r| r.ok())
        .flatten()
        .is_some_and(|u| u.role == Role::Admin)
}

/// Sets the HTTP status of a server-rendered page (no-op in the browser), so
/// a forbidden or missing page is also a 403 or 404 to scripts and crawlers.
pub fn set_page_status(code: u16) {
    #[cfg(feature = "ssr")]
    if let (Some(response), Ok(status)) = (
        use_context::<leptos_axum::ResponseOptions>(),
        axum::http::StatusCode::from_u16(code),
    ) {
        response.set_status(status);
    }
    #[cfg(not(feature = "ssr"))]
    let _ = code;
}

/// Shows `children` only to users whose role satisfies `role`; others get an
/// explanation (and a 403 status when rendered on the server).
#[component]
pub fn RequireRole(role: Role, children: ChildrenFn) -> impl IntoView {
    let auth = use_auth();
    let children = StoredValue::new(children);
    view! {
        <Loaded resource=auth.user loading="Loading…" let:user>
            {match user {
                Some(user) if user.role.satisfies(role) => children.read_value()().into_any(),
                Some(_) => {
                    set_page_status(403);
                    view! {
                        <section class="panel notice" data-testid="forbidden">
                            <h1>"Not available to your account"</h1>
                            <p>
                                "This area needs the " <strong>{role.to_string()}</strong>
                                " role. Ask an administrator if you need access."
                            </p>
                        </section>
                    }
                        .into_any()
                }
                None => {
                    set_page_status(401);
                    view! { <p>"Please " <a href="/login">"sign in"</a> " to continue."</p> }
                        .into_any()
                }
            }}
        </Loaded>
    }
}
