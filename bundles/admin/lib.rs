//! The browser bundle of the admins' agents and bindings pages (`/agents`,
//! `/bindings`): the library built with `pages-admin`, so it carries those
//! pages' islands and nothing of the others. `scripts/bundle.sh` publishes
//! it as `pkg/admin.HASH.wasm`; `app::bundle_for` says which pages load it.

// Linking the library exports its entry point and islands to the browser.
pub use switchboard::hydrate;
