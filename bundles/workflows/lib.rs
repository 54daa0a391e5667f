//! The browser bundle of the workflow pages and the plugin playground
//! (`/workflows`, `/workflows/{id}`, `/playground`): the library built with
//! `pages-workflows`, so it carries those pages' islands and nothing of the
//! others. `scripts/bundle.sh` publishes it as `pkg/workflows.HASH.wasm`;
//! `app::bundle_for` says which pages load it.

// Linking the library exports its entry point and islands to the browser.
pub use switchboard::hydrate;
