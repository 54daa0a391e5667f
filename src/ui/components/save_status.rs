//! `<SaveStatus>`: the line under a save button saying how the last save
//! went, the same for every editor.

use crate::error::ApiError;
use leptos::prelude::*;

/// The outcome of the last save: what to tell the user, or why it failed;
/// `None` before any save and after a discard.
pub type SaveMessage = RwSignal<Option<Result<String, ApiError>>>;

/// "Saved…" as a status, a failure as an alert. A conflict or a stale
/// version (someone else saved first) links to `reload`, a full page load of the newer version,
/// since saving again would fail the same way.
#[component]
pub fn SaveStatus(
    /// The outcome to show.
    message: SaveMessage,
    /// The `data-testid` of the line (tests and scripts find it by this).
    testid: &'static str,
    /// The page to reload after a conflict.
    #[prop(into)]
    reload: String,
) -> impl IntoView {
    move || {
        message.get().map(|m| match m {
            Ok(text) => {
                view! { <p class="ok" role="status" data-testid=testid>{text}</p> }.into_any()
            }
            Err(ApiError::Conflict(text) | ApiError::PreconditionFailed(text)) => view! {
                <p class="error" role="alert" data-testid=testid>
                    {text}
                    " "
                    <a href=reload.clone() rel="external">
                        "Reload"
                    </a>
                </p>
            }
            .into_any(),
            Err(e) => {
                view! { <p class="error" role="alert" data-testid=testid>{e.to_string()}</p> }
                    .into_any()
            }
        })
    }
}
