//! The admin's "End session" on the visualiser: for a call that must stop
//! now (an agent looping, a test left running). It asks in place first;
//! once ended, the agent's calls are refused and every watcher is told.

use crate::api::sessions::AdminEndSession;
use crate::ui::auth::signed_in_admin;
use crate::ui::current;
use leptos::prelude::*;

/// "End session", then "End this session? Yes, end it / Cancel", for admins
/// while the session is open; nothing for anyone else (the server checks
/// the role again). `ended` is set at once on success, before the stream's
/// `ended` event arrives.
#[component]
pub fn EndSessionButton(session_id: String, ended: RwSignal<bool>) -> impl IntoView {
    if !signed_in_admin() {
        return ().into_any();
    }
    let end = ServerAction::<AdminEndSession>::new();
    let (result, pending) = (end.value(), end.pending());
    let confirming = RwSignal::new(false);
    Effect::new(move |_| {
        if let Some(Ok(())) = current(&result) {
            ended.set(true);
        }
    });
    let id = StoredValue::new(session_id);
    view! {
        <Show when=move || !ended.get()>
            <Show
                when=move || confirming.get()
                fallback=move || {
                    view! {
                        <button
                            type="button"
                            class="button small danger"
                            data-testid="end-session"
                            on:click=move |_| confirming.set(true)
                        >
                            "End session"
                        </button>
                    }
                }
            >
                <span class="confirm" role="alertdialog" data-testid="end-session-confirm">
                    "End this session? Its agent's calls are refused from then on. "
                    <button
                        type="button"
                        class="button small danger-solid"
                        disabled=move || pending.try_get().unwrap_or(true)
                        on:click=move |_| {
                            end.dispatch(AdminEndSession { id: id.get_value() });
                            confirming.set(false);
                        }
                    >
                        "Yes, end it"
                    </button>
                    <button type="button" class="button ghost small" on:click=move |_| confirming.set(false)>
                        "Cancel"
                    </button>
                </span>
            </Show>
        </Show>
        {move || {
            current(&result)
                .and_then(Result::err)
                .map(|e| view! { <span class="error small" role="alert">{e.to_string()}</span> })
        }}
    }
    .into_any()
}
