//! A process-wide table of things built from text (a compiled schema, a
//! compiled pattern) that many owners may hold at once: building is a pure
//! function of the text, so the second owner reuses what the first built.
//! Entries are weak, so the table never keeps alive what no owner holds,
//! and it forgets dead entries each time it has doubled since its last sweep.
//!
//! The table keeps no text of its own: an entry is the text's hash and a
//! weak pointer to what was built, which holds the text ([`Keyed`]). A
//! lookup hashes the text once and compares it with the entry's; a
//! registration of a thousand schemas used to copy every schema's text
//! into the table, and the table hashed all its texts again each time it
//! grew (25 ms at 16,000 entries, on the request's way, lock held).

use std::hash::BuildHasher;
use std::sync::{Arc, Mutex, MutexGuard, OnceLock, Weak};

/// Fewest entries before the first sweep.
const FIRST_SWEEP: usize = 4096;

/// What a table's entries are built from: the text they are found by.
pub trait Keyed {
    /// The text this was built from.
    fn key(&self) -> &str;
}

/// Text → the thing built from it, while some owner holds it. The texts
/// (whole schemas) are hashed with foldhash: SipHash over a thousand
/// schemas' texts was a visible part of a registration. Two texts with
/// one hash share a slot, the later replacing the earlier: the table is
/// a cache, so that costs a rebuild, never a wrong answer (a lookup
/// compares the texts).
pub struct WeakTable<T> {
    hasher: foldhash::fast::RandomState,
    entries: foldhash::HashMap<u64, Weak<T>>,
    sweep_at: usize,
}

impl<T> Default for WeakTable<T> {
    fn default() -> Self {
        Self {
            hasher: foldhash::fast::RandomState::default(),
            entries: foldhash::HashMap::default(),
            sweep_at: FIRST_SWEEP,
        }
    }
}

impl<T: Keyed> WeakTable<T> {
    /// What was built from `text`, if some owner still holds it.
    pub fn get(&self, text: &str) -> Option<Arc<T>> {
        self.entries
            .get(&self.hasher.hash_one(text))
            .and_then(Weak::upgrade)
            .filter(|built| built.key() == text)
    }

    /// Remembers `built` as built from its text; sweeps when due.
    pub fn insert(&mut self, built: &Arc<T>) {
        let hash = self.hasher.hash_one(built.key());
        self.entries.insert(hash, Arc::downgrade(built));
        if self.entries.len() > self.sweep_at {
            self.entries.retain(|_, w| w.strong_count() > 0);
            self.sweep_at = (2 * self.entries.len()).max(FIRST_SWEEP);
        }
    }

    /// How many entries the table keeps (live or not yet swept).
    #[cfg(test)]
    fn len(&self) -> usize {
        self.entries.len()
    }
}

/// A process-wide [`WeakTable`] behind a lock, made on first use: a
/// `static` of this type is all its user declares.
pub struct Shared<T>(OnceLock<Mutex<WeakTable<T>>>);

impl<T> Default for Shared<T> {
    fn default() -> Self {
        Self::new()
    }
}

impl<T> Shared<T> {
    /// An empty table, for a `static`.
    pub const fn new() -> Self {
        Self(OnceLock::new())
    }

    /// The table, locked. A panic while another thread held it leaves it
    /// usable: every entry is written whole.
    pub fn lock(&self) -> MutexGuard<'_, WeakTable<T>> {
        self.0
            .get_or_init(Default::default)
            .lock()
            .unwrap_or_else(|p| p.into_inner())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A thing built from its text.
    #[derive(Debug, PartialEq)]
    struct Built(String);

    impl Keyed for Built {
        fn key(&self) -> &str {
            &self.0
        }
    }

    fn built(text: &str) -> Arc<Built> {
        Arc::new(Built(text.to_owned()))
    }

    #[test]
    fn gives_back_what_an_owner_holds_and_forgets_what_none_does() {
        let mut table = WeakTable::default();
        let held = built("a");
        table.insert(&held);
        assert_eq!(table.get("a").as_deref(), Some(&Built("a".into())));
        assert_eq!(table.get("b"), None);
        drop(held);
        assert_eq!(table.get("a"), None);
    }

    #[test]
    fn sweeps_dead_entries_once_it_has_doubled() {
        let mut table = WeakTable::default();
        let kept = built("kept");
        table.insert(&kept);
        for i in 0..FIRST_SWEEP {
            table.insert(&built(&i.to_string()));
        }
        // The insert past the threshold swept every dead entry: left are
        // the one held here and the one its caller held while inserting.
        assert_eq!(table.len(), 2);
        assert_eq!(table.get("kept").as_deref(), Some(&Built("kept".into())));
    }

    #[test]
    fn a_text_sharing_a_slot_with_another_is_never_taken_for_it() {
        let mut table = WeakTable::default();
        let (a, b) = (built("a"), built("b"));
        table.insert(&a);
        // Another text put in `a`'s slot, as a hash collision would.
        let slot = table.hasher.hash_one("a");
        table.entries.insert(slot, Arc::downgrade(&b));
        assert_eq!(table.get("a"), None);
        assert_eq!(table.get("b"), None);
        table.insert(&b);
        assert_eq!(table.get("b").as_deref(), Some(&Built("b".into())));
    }
}
