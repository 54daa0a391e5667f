//! Switchboard decides which tools an LLM agent may use in which context,
//! builds the prompt and declarations it gets, enforces those rules on every
//! tool call and shows live sessions as they change.
//!
//! One crate compiles twice: with `ssr` into the server binary, with
//! `hydrate` into the browser bundle. `domain`, `api` and `ui` are shared;
//! `server` exists only in the server build.

// Leptos view types nest deeply; the editor's exceed the default limit.
#![recursion_limit = "512"]

pub mod api;
pub mod app;
pub mod domain;
#[cfg(feature = "ssr")]
pub mod server;
pub mod ui;

/// Browser entry point: attaches the client to the server-rendered page.
#[cfg(feature = "hydrate")]
#[wasm_bindgen::prelude::wasm_bindgen]
pub fn hydrate() {
    console_error_panic_hook::set_once();
    leptos::mount::hydrate_body(app::App);
}
