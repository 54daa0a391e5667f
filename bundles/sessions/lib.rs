//! The browser bundle of the live sessions and their visualiser
//! (`/sessions`, `/sessions/{id}`): the library built with `pages-sessions`,
//! so it carries those pages' islands and nothing of the others.
//! `scripts/bundle.sh` publishes it as `pkg/sessions.HASH.wasm`;
//! `app::bundle_for` says which pages load it.

// Linking the library exports its entry point and islands to the browser.
pub use switchboard::hydrate;
