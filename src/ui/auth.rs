//! Who is signed in, shared by every component through context. ("Auth",
//! not "session": sessions are the agent sessions of `ui::sessions`.)

use crate::api::auth::{current_user, Login, Logout};
use crate::domain::user::{Role, UserView};
use crate::ui::components::{fetched, Fetched, Loaded};
use leptos::prelude::*;

/// The signed-in user and the actions that change it. Provided by
/// [`provide_auth`], so the header, guards and pages never fetch the user
/// separately.
#[derive(Clone, Copy)]
pub struct Auth {
    /// The current user, refetched whenever `login` or `logout` completes.
    pub user: Fetched<Option<UserView>>,
    /// Signs in.
    pub login: ServerAction<Login>,
    /// Signs out.
    pub logout: ServerAction<Logout>,
}

/// Provides [`Auth`] to what is rendered below. `App` calls it on the
/// server, and each island that reads who is signed in (a guard, an admin-
/// only button), first thing: in the browser an island has no
/// parent to inherit it from (its user comes with the page, the resource's
/// value serialised by the server, so no request is made).
pub fn provide_auth() {
    let login = ServerAction::<Login>::new();
    let logout = ServerAction::<Logout>::new();
    let user = fetched(
        move || (login.version().get(), logout.version().get()),
        |_| current_user(),
    );
    provide_context(Auth {
        user,
        login,
        logout,
    });
}

/// Leaves for `path` with a full page load: pages are rendered by the
/// server, islands only make parts of them interactive.
pub fn go_to(path: &str) {
    let _ = window().location().set_href(path);
}

/// The sign-in state from context; `App` and every island provide it.
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
