//! The form that makes an account: e-mail, name, role, and a first
//! password or none (then a one-time link is shown, or mailed).

use crate::api::accounts::CreateAccount;
use crate::domain::account::ACCOUNT_NAME_MAX_CHARS;
use crate::domain::user::{EMAIL_MAX_LEN, PASSWORD_MAX_CHARS, PASSWORD_MIN_CHARS};
use crate::ui::accounts::link::LinkNotice;
use crate::ui::current;
use leptos::prelude::*;

/// The form and what its last submission gave.
#[component]
pub fn NewAccountForm(action: ServerAction<CreateAccount>) -> impl IntoView {
    let result = action.value();
    view! {
        <section class="panel" data-testid="new-account">
            <h2>"New account"</h2>
            <ActionForm action attr:class="inline-form">
                <input
                    type="email"
                    name="email"
                    aria-label="E-mail"
                    placeholder="E-mail"
                    required
                    maxlength=EMAIL_MAX_LEN.to_string()
                />
                <input
                    type="text"
                    name="name"
                    aria-label="Name"
                    placeholder="Name"
                    required
                    maxlength=ACCOUNT_NAME_MAX_CHARS.to_string()
                />
                <select name="role" aria-label="Role">
                    <option value="teacher" selected>
                        "teacher"
                    </option>
                    <option value="admin">"admin"</option>
                </select>
                <input
                    type="password"
                    name="password"
                    aria-label="First password"
                    placeholder=format!("Password ({PASSWORD_MIN_CHARS}+), or empty for a link")
                    autocomplete="new-password"
                    minlength=PASSWORD_MIN_CHARS.to_string()
                    maxlength=PASSWORD_MAX_CHARS.to_string()
                />
                <button type="submit" class="button">
                    "Create account"
                </button>
            </ActionForm>
            {move || {
                current(&result)
                    .map(|r| match r {
                        Ok(created) => {
                            view! {
                                <p class="ok" role="status" data-testid="account-created">
                                    {format!("Account {} created.", created.account.email)}
                                </p>
                                {created.reset.map(|link| view! { <LinkNotice link /> })}
                            }
                                .into_any()
                        }
                        Err(e) => {
                            view! {
                                <p class="error" role="alert" data-testid="account-error">
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
