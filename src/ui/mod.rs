//! Pages and components, rendered on the server. Each page's interactive
//! part is an `#[island]`, the only code the browser bundle carries; the
//! route table, the page frame and the sign-in guards stay on the server.
//!
//! The pages come in groups, each behind a `pages-*` feature: the server
//! compiles them all, and each browser bundle one group, so a page's bundle
//! holds its own group's islands and nothing else (`app::bundle_for`).
//! What several groups use (`auth`, `components`) is always compiled.

pub mod auth;
pub mod components;
pub mod layout;

#[cfg(feature = "pages-start")]
pub mod accounts;
#[cfg(feature = "pages-start")]
pub mod home;
#[cfg(any(feature = "pages-start", feature = "pages-editor"))]
pub mod lessons;
#[cfg(feature = "pages-start")]
pub mod login;
#[cfg(feature = "pages-start")]
pub mod students;

// The visualiser is also shown beside the try-it chats of the admin and
// workflows groups; trying a lesson is a page of this group
// (`/lessons/{id}/try`), so the editor's bundle goes without it.
#[cfg(any(
    feature = "pages-sessions",
    feature = "pages-admin",
    feature = "pages-workflows"
))]
pub mod sessions;

#[cfg(feature = "pages-admin")]
pub mod agents;
#[cfg(feature = "pages-admin")]
pub mod bindings;
#[cfg(feature = "pages-admin")]
pub mod mcp_servers;

#[cfg(feature = "pages-workflows")]
pub mod playground;
#[cfg(feature = "pages-workflows")]
pub mod workflows;

use leptos::prelude::{Get, ReadUntracked};

/// The value of a page's resource or action result, for a view closure or
/// effect; `None` (show nothing) once the page that owned it is gone.
///
/// Leptos re-runs an effect a microtask after its source changes. When a
/// server response and the page's teardown land in the same tick (data
/// arriving just as the user signs out or moves on), the re-run reads a
/// resource that was disposed in between, and `.get()` would panic, which
/// kills the whole client. Its output is discarded anyway, so nothing is
/// the right answer.
pub fn current<T>(source: &impl Get<Value = Option<T>>) -> Option<T> {
    source.try_get().flatten()
}

/// The route parameter `name` of the page being rendered ("" if absent),
/// read once on the server: a page passes it to its island as a prop,
/// since islands have no router in the browser.
pub fn route_param(name: &str) -> String {
    leptos_router::hooks::use_params_map()
        .read_untracked()
        .get(name)
        .unwrap_or_default()
}
