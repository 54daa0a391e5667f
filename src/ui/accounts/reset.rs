//! `/reset-password?token=…`: where a one-time password link leads. Open
//! to anyone holding the link; the password is set once, and the browser
//! is sent to sign in with it.

use crate::api::accounts::ResetPassword;
use crate::domain::user::{PASSWORD_MAX_CHARS, PASSWORD_MIN_CHARS};
use leptos::prelude::*;
use leptos_router::hooks::use_query_map;

/// Reads the link's token once and hands it to the form.
#[component]
pub fn ResetPasswordPage() -> impl IntoView {
    let token = use_query_map().with_untracked(|q| q.get("token").unwrap_or_default());
    view! { <ResetForm token /> }
}

/// The new-password form; it posts as a plain form before (or without)
/// hydration too.
#[island]
fn ResetForm(token: String) -> impl IntoView {
    let action = ServerAction::<ResetPassword>::new();
    let error = move || action.value().get().and_then(Result::err);
    view! {
        <main class="auth-page">
            <section class="auth-card" data-testid="reset-password">
                <h1>"Set your password"</h1>
                <p class="muted">
                    "Choose the password you will sign in with. This link works once."
                </p>
                <ActionForm action>
                    <input type="hidden" name="token" value=token />
                    <div class="field">
                        <label for="new_password">"New password"</label>
                        <input
                            id="new_password"
                            type="password"
                            name="new_password"
                            autocomplete="new-password"
                            required
                            minlength=PASSWORD_MIN_CHARS.to_string()
                            maxlength=PASSWORD_MAX_CHARS.to_string()
                        />
                    </div>
                    {move || {
                        error()
                            .map(|e| {
                                view! {
                                    <p class="error" role="alert" data-testid="reset-error">
                                        {e.to_string()}
                                    </p>
                                }
                            })
                    }}
                    <button type="submit" class="button primary wide">
                        "Set password"
                    </button>
                </ActionForm>
            </section>
        </main>
    }
}
