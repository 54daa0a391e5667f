//! The frame around every signed-in page: header, navigation, sign-out.

use crate::domain::user::Role;
use crate::ui::auth::{set_page_status, use_auth};
use leptos::prelude::*;
use leptos_router::components::{Outlet, A};

/// Header with the app name, the areas (Tool bindings, Agents, Workflows,
/// MCP servers and Accounts only for admins), the signed-in user with
/// their role (a link to their profile), and sign-out. The areas wrap to
/// a second line rather than hide when the window is narrow.
#[component]
pub fn Layout() -> impl IntoView {
    let auth = use_auth();
    let user = move || auth.user.get().and_then(|r| r.ok()).flatten();
    view! {
        <header class="topbar">
            <a class="brand" href="/">
                <span class="brand-mark" aria-hidden="true">"⇄"</span>
                "Switchboard"
            </a>
            <Transition fallback=|| ()>
                <nav class="mainnav" aria-label="Main">
                    <A href="/lessons">
                        "Lessons"
                    </A>
                    <A href="/students">
                        "Students"
                    </A>
                    {move || {
                        user()
                            .filter(|u| u.role == Role::Admin)
                            .map(|_| {
                                view! {
                                    <A href="/bindings">
                                        "Tool bindings"
                                    </A>
                                    <A href="/agents">
                                        "Agents"
                                    </A>
                                    <A href="/workflows">
                                        "Workflows"
                                    </A>
                                    <A href="/mcp-servers">
                                        "MCP servers"
                                    </A>
                                    <A href="/accounts">
                                        "Accounts"
                                    </A>
                                }
                            })
                    }}
                    <A href="/sessions">
                        "Live sessions"
                    </A>
                    <A href="/playground">
                        "Playground"
                    </A>
                </nav>
                <div class="userbox">
                    {move || {
                        user()
                            .map(|u| {
                                view! {
                                    <a
                                        class="user"
                                        href="/profile"
                                        title="Your profile and password"
                                        data-testid="current-user"
                                    >
                                        <span class="user-name">{u.display_name.clone()}</span>
                                        <span class=format!(
                                            "role role-{}",
                                            u.role,
                                        )>{u.role.to_string()}</span>
                                    </a>
                                }
                            })
                    }}
                    <ActionForm action=auth.logout>
                        <button type="submit" class="button ghost small">
                            "Sign out"
                        </button>
                    </ActionForm>
                </div>
            </Transition>
        </header>
        <main class="content">
            <Outlet />
        </main>
    }
}

/// What an unknown URL shows (with a 404 status on the server).
#[component]
pub fn NotFound() -> impl IntoView {
    set_page_status(404);
    view! {
        <main class="auth-page">
            <section class="auth-card">
                <h1>"Page not found"</h1>
                <p class="muted">"There is nothing at this address."</p>
                <a class="button" href="/">
                    "Go to the start page"
                </a>
            </section>
        </main>
    }
}
