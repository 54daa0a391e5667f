//! `/profile`: the signed-in account's name, e-mail and role, and changing
//! its own password (the current one is asked for; its other sign-ins
//! end).

use crate::api::accounts::ChangeOwnPassword;
use crate::domain::user::{PASSWORD_MAX_CHARS, PASSWORD_MIN_CHARS};
use crate::ui::auth::use_auth;
use crate::ui::components::Loaded;
use crate::ui::current;
use leptos::prelude::*;

/// Who is signed in (read with the page) and the password form.
#[component]
pub fn ProfilePage() -> impl IntoView {
    let auth = use_auth();
    view! {
        <Loaded resource=auth.user loading="Loading…" let:user>
            {user
                .map(|u| {
                    view! {
                        <section class="page-head">
                            <h1>"Profile"</h1>
                        </section>
                        <section class="panel" data-testid="profile">
                            <dl class="facts">
                                <dt>"Name"</dt>
                                <dd data-testid="profile-name">{u.display_name}</dd>
                                <dt>"E-mail"</dt>
                                <dd data-testid="profile-email">{u.email.to_string()}</dd>
                                <dt>"Role"</dt>
                                <dd>{u.role.to_string()}</dd>
                            </dl>
                        </section>
                        <OwnPassword />
                    }
                })}
        </Loaded>
    }
}

/// The form: current password, new password; says what happened.
#[island]
fn OwnPassword() -> impl IntoView {
    let change = ServerAction::<ChangeOwnPassword>::new();
    let result = change.value();
    view! {
        <section class="panel" data-testid="own-password">
            <h2>"Change your password"</h2>
            <ActionForm action=change attr:class="inline-form">
                <input
                    type="password"
                    name="current_password"
                    aria-label="Current password"
                    placeholder="Current password"
                    autocomplete="current-password"
                    required
                />
                <input
                    type="password"
                    name="new_password"
                    aria-label="New password"
                    placeholder=format!("New password ({PASSWORD_MIN_CHARS}+ characters)")
                    autocomplete="new-password"
                    required
                    minlength=PASSWORD_MIN_CHARS.to_string()
                    maxlength=PASSWORD_MAX_CHARS.to_string()
                />
                <button type="submit" class="button">
                    "Change password"
                </button>
            </ActionForm>
            {move || {
                current(&result)
                    .map(|r| match r {
                        Ok(()) => {
                            view! {
                                <p class="ok" role="status" data-testid="own-password-status">
                                    "Password changed. Your other sign-ins have ended."
                                </p>
                            }
                                .into_any()
                        }
                        Err(e) => {
                            view! {
                                <p class="error" role="alert" data-testid="own-password-status">
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
