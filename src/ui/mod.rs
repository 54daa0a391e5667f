//! Pages and components, rendered on the server. Each page's interactive
//! part is an `#[island]`, the only code the browser bundle carries; the
//! route table, the page frame and the sign-in guards stay on the server.

pub mod accounts;
pub mod agents;
pub mod auth;
pub mod bindings;
pub mod components;
pub mod home;
pub mod layout;
pub mod lessons;
pub mod login;
pub mod playground;
pub mod sessions;
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
