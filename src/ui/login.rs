//! The sign-in page.

use crate::ui::auth::use_auth;
use leptos::prelude::*;
use leptos_router::hooks::use_query_map;

/// E-mail and password form. It posts to the `login` server function, so it
/// works as a plain HTML form before (or without) hydration; once hydrated,
/// errors show in place and the password can be revealed.
#[component]
pub fn LoginPage() -> impl IntoView {
    let query = use_query_map();
    let next = query.with_untracked(|q| q.get("next").unwrap_or_default());
    // Set by a one-time password link once the password is set.
    let password_set = query.with_untracked(|q| q.get("reset").is_some());
    view! { <LoginIsland next password_set /> }
}

/// The form, hydrated on its own; `next` is where a sign-in leads, and
/// `password_set` says a password link was just used.
#[island]
fn LoginIsland(next: String, password_set: bool) -> impl IntoView {
    crate::ui::auth::provide_auth();
    let auth = use_auth();
    let (reveal, set_reveal) = signal(false);
    let pending = auth.login.pending();
    let error = move || auth.login.value().get().and_then(Result::err);
    view! {
        <main class="auth-page">
            <section class="auth-card">
                <div class="brand big">
                    <span class="brand-mark" aria-hidden="true">"⇄"</span>
                    "Switchboard"
                </div>
                <p class="tagline">
                    "Which tools your agents may use, where, and what they are told."
                </p>
                {password_set
                    .then(|| {
                        view! {
                            <p class="ok" role="status" data-testid="password-set">
                                "Your password is set: sign in with it."
                            </p>
                        }
                    })}
                <ActionForm action=auth.login>
                    <input type="hidden" name="next" value=next />
                    <div class="field">
                        <label for="email">"E-mail"</label>
                        <input
                            id="email"
                            type="email"
                            name="email"
                            autocomplete="username"
                            required
                            placeholder="you@example.com"
                        />
                    </div>
                    <div class="field">
                        <label for="password">"Password"</label>
                        <span class="password-row">
                            <input
                                id="password"
                                type=move || if reveal.get() { "text" } else { "password" }
                                name="password"
                                autocomplete="current-password"
                                required
                            />
                            <button
                                type="button"
                                class="button ghost small"
                                data-testid="reveal-password"
                                aria-pressed=move || reveal.get().to_string()
                                on:click=move |_| set_reveal.update(|r| *r = !*r)
                            >
                                {move || if reveal.get() { "Hide" } else { "Show" }}
                            </button>
                        </span>
                    </div>
                    {move || {
                        error()
                            .map(|e| {
                                view! {
                                    <p class="error" role="alert" data-testid="login-error">
                                        {e.to_string()}
                                    </p>
                                }
                            })
                    }}
                    <button type="submit" class="button primary wide" disabled=pending>
                        {move || if pending.get() { "Signing in…" } else { "Sign in" }}
                    </button>
                </ActionForm>
            </section>
        </main>
    }
}
