//! The browser bundle of the sign-in page, the start page, the lesson list
//! and a lesson's runs (`/login`, `/`, `/lessons`, `/lessons/{id}/sessions`):
//! the library built with `pages-start`, so it carries those pages' islands
//! and nothing of the others. `scripts/bundle.sh` publishes it as
//! `pkg/start.HASH.wasm`; `app::bundle_for` says which pages load it.

// Linking the library exports its entry point and islands to the browser.
pub use switchboard::hydrate;
