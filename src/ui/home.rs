//! The start page: where to go next, and for admins who has access.

use crate::api::auth::list_accounts;
use crate::domain::user::Role;
use crate::ui::session::use_session;
use leptos::prelude::*;

/// Greets the user and links to each area they can use.
#[component]
pub fn HomePage() -> impl IntoView {
    let session = use_session();
    let user = move || session.user.get().and_then(|r| r.ok()).flatten();
    view! {
        <Transition fallback=|| view! { <p class="muted">"Loading…"</p> }>
            {move || {
                user()
                    .map(|u| {
                        let is_admin = u.role == Role::Admin;
                        view! {
                            <section class="hero">
                                <h1 data-testid="welcome">{format!("Welcome, {}", u.display_name)}</h1>
                                <p class="muted">
                                    {format!("Signed in as {} · {}", u.email, u.role)}
                                </p>
                            </section>
                            <section class="cards">
                                <a class="card" href="/lessons">
                                    <h2>"Lessons"</h2>
                                    <p>
                                        "Choose the tools each lesson uses, when they fire, and see the exact prompt and token cost the tutor gets."
                                    </p>
                                </a>
                                {is_admin
                                    .then(|| {
                                        view! {
                                            <a class="card" href="/bindings">
                                                <h2>"Tool bindings"</h2>
                                                <p>
                                                    "Decide which tools are global and which belong to each workflow."
                                                </p>
                                            </a>
                                        }
                                    })}
                                <a class="card" href="/sessions">
                                    <h2>"Live sessions"</h2>
                                    <p>
                                        "Watch agent sessions move through workflows, checks and tool calls as they happen."
                                    </p>
                                </a>
                            </section>
                            {is_admin.then(|| view! { <AccountsPanel /> })}
                        }
                    })
            }}
        </Transition>
    }
}

/// Every account and its open sign-ins (admins only; the server checks too).
#[component]
fn AccountsPanel() -> impl IntoView {
    let accounts = Resource::new(|| (), |_| list_accounts());
    view! {
        <section class="panel">
            <h2>"Accounts"</h2>
            <Transition fallback=|| view! { <p class="muted">"Loading accounts…"</p> }>
                {move || {
                    accounts
                        .get()
                        .map(|result| match result {
                            Ok(list) => {
                                view! {
                                    <table class="table" data-testid="accounts">
                                        <thead>
                                            <tr>
                                                <th>"Name"</th>
                                                <th>"E-mail"</th>
                                                <th>"Role"</th>
                                                <th>"Open sign-ins"</th>
                                            </tr>
                                        </thead>
                                        <tbody>
                                            {list
                                                .into_iter()
                                                .map(|a| {
                                                    view! {
                                                        <tr>
                                                            <td>{a.user.display_name}</td>
                                                            <td>{a.user.email.to_string()}</td>
                                                            <td>{a.user.role.to_string()}</td>
                                                            <td>{a.open_sessions}</td>
                                                        </tr>
                                                    }
                                                })
                                                .collect_view()}
                                        </tbody>
                                    </table>
                                }
                                    .into_any()
                            }
                            Err(e) => view! { <p class="error">{e.to_string()}</p> }.into_any(),
                        })
                }}
            </Transition>
        </section>
    }
}
