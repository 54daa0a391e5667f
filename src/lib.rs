//! Switchboard decides which tools an LLM agent may use in which context,
//! builds the prompt and declarations it gets, enforces those rules on every
//! tool call and shows live sessions as they change.
//!
//! One crate compiles for two targets: with `ssr` into the server binary,
//! with `hydrate` into the browser bundles, one build per group of pages
//! (`pages-*` features; the packages in `bundles/` link each). `domain`,
//! `error`, `api` and `ui` are shared; `server`, `startup` and `app` (the
//! route table and page shell) exist only in the server build.
//!
//! Layers import one way: `ui → api → server → domain` on the server,
//! `ui → api (client stubs) → domain` in the browser. `error` may be used by
//! every layer; `startup` is the composition root that wires them together.
//! See `docs/architecture.md`.

// Leptos view types nest deeply; the editor's exceed the default limit.
#![recursion_limit = "512"]

pub mod api;
#[cfg(feature = "ssr")]
pub mod app;
pub mod domain;
pub mod error;
#[cfg(feature = "ssr")]
pub mod server;
#[cfg(feature = "ssr")]
pub mod startup;
pub mod ui;

/// URL prefix of every server function (`/rpc/…`), leaving `/api/…` to the
/// JSON API that agent backends use. The server's origin check and error
/// relabelling key on it, so it lives above the layers.
pub const RPC_PREFIX: &str = "/rpc";

/// Browser entry point, called by Leptos' island script: starts the
/// reactive runtime, then the script hydrates each of the page's islands.
#[cfg(feature = "hydrate")]
#[wasm_bindgen::prelude::wasm_bindgen]
pub fn hydrate() {
    console_error_panic_hook::set_once();
    leptos::mount::hydrate_islands();
    // Leptos' island script hydrates the page's islands right after this
    // returns, each within the same task; a timer fires after all of them.
    // End-to-end tests wait for the mark before clicking.
    gloo_timers::callback::Timeout::new(0, || {
        if let Some(body) = leptos::prelude::document().body() {
            let _ = body.set_attribute("data-hydrated", "true");
        }
    })
    .forget();
}
