//! The lesson editor's unsaved-changes guard, as on the bindings page:
//! closing or reloading the tab asks through the browser's `beforeunload`,
//! and in-app links (the nav bar, "← Lessons") ask through
//! `UnsavedChanges` / `confirm_leave`.

use crate::ui::auth::UnsavedChanges;
use leptos::prelude::*;

/// Makes leaving the page ask first while `dirty()` is true; the guard is
/// lifted when the editor goes away.
pub fn guard_unsaved(dirty: impl Fn() -> bool + Copy + Send + Sync + 'static) {
    #[cfg(feature = "hydrate")]
    {
        let handle = window_event_listener(leptos::ev::beforeunload, move |ev| {
            if dirty() {
                ev.prevent_default();
                ev.set_return_value("You have unsaved lesson changes.");
            }
        });
        on_cleanup(move || handle.remove());
    }
    if let Some(unsaved) = use_context::<UnsavedChanges>() {
        Effect::new(move |_| unsaved.0.set(dirty()));
        on_cleanup(move || unsaved.0.set(false));
    }
}
