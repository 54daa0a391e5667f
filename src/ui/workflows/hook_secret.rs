//! The hook secret of a workflow started by a webhook or an inbound call:
//! whether it has one (and since when), and a button that makes a new one
//! (`POST /api/workflows/{id}/hook-secret`), replacing the old at once.
//! The new URL is shown this once — only its hash is kept — so the admin
//! copies it into the sending platform now.

use crate::ui::components::LocalTime;
use crate::ui::workflows::Editing;
use leptos::prelude::*;

/// Trigger types whose requests name the hook secret in their URL.
const HOOK_TRIGGERS: [&str; 2] = ["webhook", "inbound_call"];

/// The hook panel, shown while the trigger is a webhook or an inbound call.
#[component]
pub fn HookSecretPanel(editing: Editing) -> impl IntoView {
    let page = editing.page;
    let kind = Memo::new(move |_| {
        page.with(|p| {
            p.definition
                .trigger
                .as_ref()
                .map(|t| t.trigger_type_id.clone())
        })
    });
    let shown = move || {
        kind.get()
            .is_some_and(|k| HOOK_TRIGGERS.contains(&k.as_str()))
    };
    let fresh = RwSignal::new(None::<String>);
    let failure = RwSignal::new(None::<String>);
    let busy = RwSignal::new(false);
    let rotate = move |_| {
        busy.set(true);
        failure.set(None);
        #[cfg(feature = "hydrate")]
        leptos::task::spawn_local(async move {
            let id = page.with_untracked(|p| p.id.clone());
            let url = format!("/api/workflows/{id}/hook-secret");
            let answer = crate::ui::components::http::send("POST", &url, None, None).await;
            let _ = busy.try_set(false);
            match answer {
                Ok(body) => {
                    // Relative without PUBLIC_ORIGIN: this page's origin
                    // is the best guess of the address platforms reach.
                    let url = body["url"].as_str().unwrap_or_default();
                    let origin = web_sys::window()
                        .and_then(|w| w.location().origin().ok())
                        .filter(|_| url.starts_with('/'))
                        .unwrap_or_default();
                    let _ = fresh.try_set(Some(format!("{origin}{url}")));
                    editing.refresh();
                }
                Err(words) => {
                    let _ = failure.try_set(Some(words));
                }
            }
        });
    };
    let path = move |suffix: &str| {
        let k = kind.get().unwrap_or_default();
        format!(
            "POST …/api/hooks/{}/{{secret}}{}",
            page.with(|p| p.id.clone()),
            if k == "inbound_call" { suffix } else { "" }
        )
    };
    view! {
        <Show when=shown>
            <section class="panel" data-testid="hook-panel">
                <h2>"Hook URL"</h2>
                <p class="muted small"><code>{move || path("/inbound-call")}</code></p>
                {move || match page.with(|p| p.hook_secret_at) {
                    Some(at) => view! {
                        <p class="small" data-testid="hook-secret-state">
                            "A secret is set (made " <LocalTime ms=at * 1000 /> "). Only its hash is kept."
                        </p>
                    }.into_any(),
                    None => view! {
                        <p class="small" data-testid="hook-secret-state">"No secret yet: make one to use the URL."</p>
                    }.into_any(),
                }}
                {move || fresh.get().map(|url| view! {
                    <p class="small">"Copy this URL now; it is not shown again:"</p>
                    <p><code data-testid="hook-url">{url}</code></p>
                })}
                {move || failure.get().map(|words| view! {
                    <p class="error small" role="alert">{words}</p>
                })}
                <button
                    type="button"
                    data-testid="rotate-hook-secret"
                    prop:disabled=move || busy.get()
                    on:click=rotate
                >
                    {move || if page.with(|p| p.hook_secret_at.is_some()) { "Replace the secret" } else { "Make a secret" }}
                </button>
            </section>
        </Show>
    }
}
