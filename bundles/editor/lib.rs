//! The browser bundle of the lesson editor (`/lessons/{id}`): the library
//! built with `pages-editor`, so it carries the editor's island and nothing
//! of the other pages. `scripts/bundle.sh` publishes it as
//! `pkg/editor.HASH.wasm`; `app::bundle_for` says which pages load it.

// Linking the library exports its entry point and islands to the browser.
pub use switchboard::hydrate;
