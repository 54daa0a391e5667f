//! A plugin schema as a map key by its JSON text, for the maps a change
//! builds of the schemas it checks (`change`): found by the text, but
//! holding the schema itself rather than a copy of the text.

use crate::domain::plugin::Schema;

/// A schema as a key by its JSON text, found by the text (`&str`): the
/// key is the schema itself (two reference counts), not a copy of its
/// text, which for a thousand-tool registration was a megabyte copied.
/// (Clippy's `mutable_key_type` sees the schema's `OnceLock`s, which cache
/// its tree and shape; its hash and equality read only the text, which
/// never changes.)
#[derive(Clone)]
pub(super) struct TextKey(pub(super) Schema);

impl std::hash::Hash for TextKey {
    fn hash<H: std::hash::Hasher>(&self, state: &mut H) {
        self.0.json().hash(state);
    }
}

impl PartialEq for TextKey {
    fn eq(&self, other: &Self) -> bool {
        self.0.json() == other.0.json()
    }
}

impl Eq for TextKey {}

impl std::borrow::Borrow<str> for TextKey {
    fn borrow(&self) -> &str {
        self.0.json()
    }
}
