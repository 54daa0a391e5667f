//! Asking before unsaved edits are lost. Every page is rendered by the
//! server and every link is a page load, so one browser `beforeunload`
//! handler covers all the ways of leaving: a link, the nav bar, a reload,
//! closing the tab.

/// Makes leaving the page ask first while `dirty()` is true; the guard is
/// lifted when the island that set it goes away.
pub fn guard_unsaved(dirty: impl Fn() -> bool + Copy + Send + Sync + 'static) {
    #[cfg(feature = "hydrate")]
    {
        use leptos::prelude::{on_cleanup, window_event_listener};
        let handle = window_event_listener(leptos::ev::beforeunload, move |ev| {
            if dirty() {
                ev.prevent_default();
                ev.set_return_value("You have unsaved changes.");
            }
        });
        on_cleanup(move || handle.remove());
    }
    #[cfg(not(feature = "hydrate"))]
    let _ = dirty;
}
