//! "Start now": opens a session in the workflow at once, as its `manual`
//! start (`POST /api/workflows/{id}/start`, the signed-in admin), then
//! takes the admin to the new session's page to watch it. The link is
//! also shown, in case the browser stays.

use leptos::prelude::*;

/// The Start button of `/workflows/{id}`.
#[component]
pub fn StartButton(
    /// The workflow to start.
    workflow_id: String,
) -> impl IntoView {
    let busy = RwSignal::new(false);
    let started = RwSignal::new(None::<String>);
    let failure = RwSignal::new(None::<String>);
    let url = StoredValue::new(format!("/api/workflows/{workflow_id}/start"));
    let start = move |_| {
        busy.set(true);
        failure.set(None);
        #[cfg(feature = "hydrate")]
        leptos::task::spawn_local(async move {
            let answer =
                crate::ui::components::http::send("POST", &url.get_value(), None, None).await;
            let _ = busy.try_set(false);
            match answer.map(|v| v["sessionId"].as_str().map(str::to_owned)) {
                Ok(Some(id)) => {
                    let path = format!("/sessions/{id}");
                    let _ = started.try_set(Some(path.clone()));
                    if let Some(window) = web_sys::window() {
                        let _ = window.location().set_href(&path);
                    }
                }
                Ok(None) => {
                    let _ = failure.try_set(Some("the server named no session".into()));
                }
                Err(words) => {
                    let _ = failure.try_set(Some(words));
                }
            }
        });
        #[cfg(not(feature = "hydrate"))]
        let _ = url;
    };
    view! {
        <span class="start-now">
            <button
                type="button"
                data-testid="start-workflow"
                title="Open a session in this workflow now, started by you"
                prop:disabled=move || busy.get()
                on:click=start
            >
                {move || if busy.get() { "Starting…" } else { "Start now" }}
            </button>
            {move || started.get().map(|path| {
                let text = path.clone();
                view! { <a href=path class="small" data-testid="started-session">{text}</a> }
            })}
            {move || failure.get().map(|words| view! {
                <span class="error small" role="alert" data-testid="start-problem">{words}</span>
            })}
        </span>
    }
}
