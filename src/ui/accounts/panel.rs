//! The admins' accounts panel on the start page: who has access, how many
//! sign-ins each has open, and setting a password (an admin's own, with the
//! current one, or a teacher's) without touching environment variables.

use crate::api::auth::{list_accounts, SetPassword};
use crate::domain::user::{AccountSummary, Role, PASSWORD_MIN_CHARS};
use crate::ui::components::{fetched, Loaded};
use crate::ui::current;
use leptos::prelude::*;

/// Every account and its open sign-ins, and the password form (admins
/// only; the server checks too). Setting a password ends that account's
/// other sign-ins, so the list is refetched after each change.
#[island]
pub fn AccountsPanel(me: i64) -> impl IntoView {
    let set = ServerAction::<SetPassword>::new();
    let (changes, result) = (set.version(), set.value());
    let accounts = fetched(move || changes.try_get(), |_| list_accounts());
    view! {
        <section class="panel" data-testid="accounts-panel">
            <div class="split">
                <h2>"Accounts"</h2>
                <a href="/accounts" class="button ghost small">
                    "Manage accounts"
                </a>
            </div>
            <Loaded resource=accounts loading="Loading accounts…" let:list>
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
                        <For each={
                            let list = list.clone();
                            move || list.clone()
                        } key=|a| a.user.id let:a>
                            <tr>
                                <td>{a.user.display_name}</td>
                                <td>{a.user.email.to_string()}</td>
                                <td>{a.user.role.to_string()}</td>
                                <td>{a.open_sessions}</td>
                            </tr>
                        </For>
                    </tbody>
                </table>
                <PasswordForm accounts=list set me />
            </Loaded>
            {move || {
                current(&result)
                    .map(|r| match r {
                        Ok(()) => {
                            view! {
                                <p class="ok" role="status" data-testid="password-status">
                                    "Password set. That account's other sign-ins have ended."
                                </p>
                            }
                                .into_any()
                        }
                        Err(e) => {
                            view! {
                                <p class="error" role="alert" data-testid="password-status">
                                    {e.to_string()}
                                </p>
                            }
                                .into_any()
                        }
                    })
            }}
        </section>
    }
}

/// Choose an account the admin may change (their own, or a teacher), give
/// the new password, and for their own account the current one.
#[component]
fn PasswordForm(
    accounts: Vec<AccountSummary>,
    set: ServerAction<SetPassword>,
    me: i64,
) -> impl IntoView {
    let me = Some(me);
    let choices: Vec<_> = accounts
        .into_iter()
        .filter(|a| Some(a.user.id) == me || a.user.role == Role::Teacher)
        .collect();
    view! {
        <ActionForm action=set attr:class="inline-form password-form">
            <select name="account_id" aria-label="Account">
                {choices
                    .into_iter()
                    .map(|a| {
                        let own = Some(a.user.id) == me;
                        let label = if own {
                            format!("{} (you)", a.user.email)
                        } else {
                            a.user.email.to_string()
                        };
                        view! { <option value=a.user.id.to_string()>{label}</option> }
                    })
                    .collect_view()}
            </select>
            <input
                type="password"
                name="new_password"
                aria-label="New password"
                placeholder=format!("New password ({PASSWORD_MIN_CHARS}+ characters)")
                autocomplete="new-password"
                required
                minlength=PASSWORD_MIN_CHARS.to_string()
            />
            <input
                type="password"
                name="current_password"
                aria-label="Your current password"
                placeholder="Your current password (for your own account)"
                autocomplete="current-password"
            />
            <button type="submit" class="button">
                "Set password"
            </button>
        </ActionForm>
    }
}
