//! "Join code for a plugin" on a session's page: makes a one-use code
//! (`api::sessions::issue_join_code`) that a person types into a plugin
//! (a CODAP plugin, the playground), which exchanges it for a plugin token
//! of this session; the session token never leaves the server.

use crate::api::sessions::IssueJoinCode;
use crate::domain::limits::JOIN_CODE_LIFETIME_SECS;
use crate::ui::current;
use leptos::prelude::*;

/// The button, then the code it made and when it expires; shown while the
/// session is open, to whom the server said may make codes (`allowed`).
#[component]
pub fn JoinCodeButton(session_id: String, ended: RwSignal<bool>, allowed: bool) -> impl IntoView {
    if !allowed {
        return ().into_any();
    }
    let issue = ServerAction::<IssueJoinCode>::new();
    let (result, pending) = (issue.value(), issue.pending());
    let id = StoredValue::new(session_id);
    view! {
        <Show when=move || !ended.get()>
            <section class="panel" data-testid="join-code-panel">
                <h2>"Plugins"</h2>
                <button
                    type="button"
                    class="button small"
                    data-testid="join-code-button"
                    disabled=move || pending.try_get().unwrap_or(true)
                    on:click=move |_| {
                        issue.dispatch(IssueJoinCode { id: id.get_value() });
                    }
                >
                    "Join code for a plugin"
                </button>
                {move || match current(&result) {
                    Some(Ok(made)) => {
                        let until = made.expires_at.get(11..16).unwrap_or_default().to_owned();
                        view! {
                            <p>
                                <code class="join-code" data-testid="join-code">{made.code}</code>
                                <span class="muted small">
                                    {format!(" works once, for {} minutes (until ", JOIN_CODE_LIFETIME_SECS / 60)}
                                    <time datetime=made.expires_at>{until} " UTC"</time>
                                    ")"
                                </span>
                            </p>
                        }
                        .into_any()
                    }
                    Some(Err(e)) => view! { <p class="error small" role="alert">{e.to_string()}</p> }.into_any(),
                    None => ().into_any(),
                }}
            </section>
        </Show>
    }
    .into_any()
}
