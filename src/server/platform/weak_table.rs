//! A process-wide table of things built from text (a compiled schema, a
//! compiled pattern) that many owners may hold at once: building is a pure
//! function of the text, so the second owner reuses what the first built.
//! Entries are weak, so the table never keeps alive what no owner holds,
//! and it forgets dead entries each time it has doubled since its last sweep.

use std::sync::{Arc, Mutex, MutexGuard, OnceLock, Weak};

/// Fewest entries before the first sweep.
const FIRST_SWEEP: usize = 4096;

/// Text → the thing built from it, while some owner holds it. The texts
/// (whole schemas) are hashed with foldhash: SipHash over a thousand
/// schemas' texts was a visible part of a registration.
pub struct WeakTable<T> {
    entries: foldhash::HashMap<Box<str>, Weak<T>>,
    sweep_at: usize,
}

impl<T> Default for WeakTable<T> {
    fn default() -> Self {
        Self {
            entries: foldhash::HashMap::default(),
            sweep_at: FIRST_SWEEP,
        }
    }
}

impl<T> WeakTable<T> {
    /// What was built from `text`, if some owner still holds it.
    pub fn get(&self, text: &str) -> Option<Arc<T>> {
        self.entries.get(text).and_then(Weak::upgrade)
    }

    /// Remembers `built` as built from `text`; sweeps when due.
    pub fn insert(&mut self, text: &str, built: &Arc<T>) {
        self.entries.insert(text.into(), Arc::downgrade(built));
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

    #[test]
    fn gives_back_what_an_owner_holds_and_forgets_what_none_does() {
        let mut table = WeakTable::default();
        let held = Arc::new(1);
        table.insert("a", &held);
        assert_eq!(table.get("a").as_deref(), Some(&1));
        drop(held);
        assert_eq!(table.get("a"), None);
    }

    #[test]
    fn sweeps_dead_entries_once_it_has_doubled() {
        let mut table = WeakTable::default();
        let kept = Arc::new(0);
        table.insert("kept", &kept);
        for i in 0..FIRST_SWEEP {
            table.insert(&i.to_string(), &Arc::new(i));
        }
        // The insert past the threshold swept every dead entry: left are
        // the one held here and the one its caller held while inserting.
        assert_eq!(table.len(), 2);
        assert_eq!(table.get("kept").as_deref(), Some(&0));
    }
}
