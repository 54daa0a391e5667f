//! Sliding windows of events per key — "5 in 15 minutes" means exactly
//! that, whatever the spacing (not a token bucket) — for the sign-in
//! throttle (`server::auth::throttle`) and the agent sessions' budgets
//! (`server::agent::budget`).
//!
//! Where they count depends on how many instances may share the limit:
//! - SQLite serves one instance, so windows live in this process's memory
//!   (a restart forgives) and the hot path writes nothing to the database.
//! - On PostgreSQL several instances serve one database, and a limit kept
//!   in each process's memory would allow the full amount on each. There
//!   the events are rows of `window_events` (`server::store::windows`),
//!   checked and counted in one transaction that locks its keys, so the
//!   limit holds across every instance.
//!
//! Both answer the same way: times are the injected clock's seconds, an
//! event counts when admitted, and a full window says how long until the
//! oldest event that must leave has left.

use crate::server::platform::db::{backend, Backend, Db};
use crate::server::store::windows as store;
use crate::server::ServerError;
use std::collections::{HashMap, VecDeque};
use std::sync::atomic::{AtomicI64, Ordering};
use std::sync::Mutex;

/// Most keys one set of in-memory windows remembers; past it, keys whose
/// events have all left their window are dropped first, then the stalest.
pub const MAX_TRACKED: usize = 100_000;

/// How often (seconds) windows in the database delete their expired rows,
/// in passing, on whichever instance counts next.
const PRUNE_EVERY_SECS: i64 = 60;

/// Events allowed under one key within a sliding window.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Limit {
    /// Events allowed in the window.
    pub attempts: usize,
    /// The window, seconds.
    pub window_secs: i64,
}

/// One thing an event counts against, with its limit.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Key {
    /// What is counted (`account:ana@example.com`, a session id…).
    pub name: String,
    /// How many, over how long.
    pub limit: Limit,
}

/// Whether an event was let in.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Admission {
    /// Counted.
    Admitted,
    /// Not counted: a key is full for this many more seconds.
    Full(u64),
}

/// A set of windows, in memory or in the database (see the module doc).
pub enum Windows {
    /// This process's own counts.
    Memory(Mutex<HashMap<String, Entry>>),
    /// Rows of `window_events`, their keys starting with `prefix`.
    Database {
        /// The shared database.
        db: Db,
        /// Keeps one set's keys apart from another's in the one table.
        prefix: &'static str,
        /// When this instance last deleted expired rows.
        pruned_at: AtomicI64,
    },
}

impl Default for Windows {
    fn default() -> Self {
        Self::Memory(Mutex::default())
    }
}

/// One key's recent events in memory: when each happened and the window
/// they count in.
#[derive(Default)]
pub struct Entry {
    window_secs: i64,
    times: VecDeque<i64>,
}

impl Entry {
    fn expire(&mut self, now: i64) {
        while self
            .times
            .front()
            .is_some_and(|t| now - *t >= self.window_secs)
        {
            self.times.pop_front();
        }
    }
}

/// How long until one more event fits under `limit`, given the times
/// (newest first) of the events still in its window; `None` if it fits.
fn wait_for(newest_first: &[i64], limit: Limit, now: i64) -> Option<u64> {
    let must_leave = newest_first.get(limit.attempts.checked_sub(1)?)?;
    Some(
        (limit.window_secs - (now - must_leave))
            .max(1)
            .unsigned_abs(),
    )
}

impl Windows {
    /// Windows for the instances on `db`: in memory on SQLite (one
    /// instance), in the database on PostgreSQL, under `prefix`.
    pub fn for_db(db: &Db, prefix: &'static str) -> Self {
        match backend(db) {
            Backend::Sqlite => Self::default(),
            Backend::Postgres => Self::in_database(db, prefix),
        }
    }

    /// Windows kept in `db` whatever its backend, keys under `prefix`.
    pub fn in_database(db: &Db, prefix: &'static str) -> Self {
        Self::Database {
            db: db.clone(),
            prefix,
            pruned_at: AtomicI64::new(i64::MIN),
        }
    }

    /// Counts one event at `now` under every key, or, if any key is full,
    /// counts nothing and says how long until the fullest frees a slot.
    pub async fn admit(&self, keys: &[Key], now: i64) -> Result<Admission, ServerError> {
        match self {
            Self::Memory(map) => Ok(admit_memory(&mut locked(map), keys, now)),
            Self::Database { db, prefix, .. } => {
                self.prune_now_and_then(now).await?;
                let names: Vec<String> =
                    keys.iter().map(|k| format!("{prefix}{}", k.name)).collect();
                let refs: Vec<&str> = names.iter().map(String::as_str).collect();
                let mut tx = store::begin_locked(db, &refs).await?;
                let mut wait = None;
                for (key, name) in keys.iter().zip(&refs) {
                    let since = now - key.limit.window_secs;
                    let newest = store::newest(&mut tx, name, since, key.limit.attempts).await?;
                    wait = wait.max(wait_for(&newest, key.limit, now));
                }
                if let Some(wait) = wait {
                    return Ok(Admission::Full(wait));
                }
                for (key, name) in keys.iter().zip(&refs) {
                    store::insert(&mut tx, name, now, now + key.limit.window_secs).await?;
                }
                tx.commit().await?;
                Ok(Admission::Admitted)
            }
        }
    }

    /// How long until an event under `keys` would be let in, if it would
    /// not be now; counts nothing.
    pub async fn wait(&self, keys: &[Key], now: i64) -> Result<Option<u64>, ServerError> {
        let mut wait = None;
        for key in keys {
            let newest = self.newest(key, now, key.limit.attempts).await?;
            wait = wait.max(wait_for(&newest, key.limit, now));
        }
        Ok(wait)
    }

    /// How many events `key` had in its window at `now` (at most its limit
    /// in memory, which never needs more).
    pub async fn count(&self, key: &Key, now: i64) -> Result<usize, ServerError> {
        match self {
            Self::Memory(_) => Ok(self.newest(key, now, key.limit.attempts).await?.len()),
            Self::Database { db, prefix, .. } => {
                store::count(
                    db,
                    &format!("{prefix}{}", key.name),
                    now - key.limit.window_secs,
                )
                .await
            }
        }
    }

    /// Counts one event of `key` at `now`, whatever the count.
    pub async fn note(&self, key: &Key, now: i64) -> Result<(), ServerError> {
        match self {
            Self::Memory(map) => {
                push(&mut locked(map), key, now);
                Ok(())
            }
            Self::Database { db, prefix, .. } => {
                self.prune_now_and_then(now).await?;
                let mut conn = db.acquire().await?;
                let name = format!("{prefix}{}", key.name);
                store::insert(&mut conn, &name, now, now + key.limit.window_secs).await
            }
        }
    }

    /// Forgets every event of key `name`.
    pub async fn forget(&self, name: &str) -> Result<(), ServerError> {
        match self {
            Self::Memory(map) => {
                locked(map).remove(name);
                Ok(())
            }
            Self::Database { db, prefix, .. } => {
                store::delete_key(db, &format!("{prefix}{name}")).await
            }
        }
    }

    /// Forgets one event of key `name` counted at `at`.
    pub async fn forget_one(&self, name: &str, at: i64) -> Result<(), ServerError> {
        match self {
            Self::Memory(map) => {
                let mut map = locked(map);
                if let Some(entry) = map.get_mut(name) {
                    if let Some(i) = entry.times.iter().rposition(|t| *t == at) {
                        entry.times.remove(i);
                    }
                    if entry.times.is_empty() {
                        map.remove(name);
                    }
                }
                Ok(())
            }
            Self::Database { db, prefix, .. } => {
                store::delete_one(db, &format!("{prefix}{name}"), at).await
            }
        }
    }

    /// Forgets the keys whose events have all left their window (the
    /// database's rows are pruned in passing instead).
    pub fn prune(&self, now: i64) {
        if let Self::Memory(map) = self {
            locked(map).retain(|_, entry| {
                entry.expire(now);
                !entry.times.is_empty()
            });
        }
    }

    /// How many keys have events in their window at `now`.
    pub async fn tracked(&self, now: i64) -> Result<usize, ServerError> {
        match self {
            Self::Memory(map) => Ok(locked(map).len()),
            Self::Database { db, prefix, .. } => store::keys_under(db, prefix, now).await,
        }
    }

    /// The newest `n` of `key`'s events in its window at `now`, newest
    /// first.
    async fn newest(&self, key: &Key, now: i64, n: usize) -> Result<Vec<i64>, ServerError> {
        match self {
            Self::Memory(map) => Ok(locked(map).get_mut(&key.name).map_or_else(Vec::new, |e| {
                e.expire(now);
                e.times.iter().rev().take(n).copied().collect()
            })),
            Self::Database { db, prefix, .. } => {
                let since = now - key.limit.window_secs;
                let mut conn = db.acquire().await?;
                store::newest(&mut conn, &format!("{prefix}{}", key.name), since, n).await
            }
        }
    }

    /// Deletes expired rows if this instance has not for a while.
    async fn prune_now_and_then(&self, now: i64) -> Result<(), ServerError> {
        let Self::Database { db, pruned_at, .. } = self else {
            return Ok(());
        };
        let last = pruned_at.load(Ordering::Relaxed);
        if now.saturating_sub(last) < PRUNE_EVERY_SECS
            || pruned_at
                .compare_exchange(last, now, Ordering::Relaxed, Ordering::Relaxed)
                .is_err()
        {
            return Ok(());
        }
        store::prune(db, now).await?;
        Ok(())
    }
}

fn locked(
    map: &Mutex<HashMap<String, Entry>>,
) -> std::sync::MutexGuard<'_, HashMap<String, Entry>> {
    map.lock().unwrap_or_else(|p| p.into_inner())
}

/// [`Windows::admit`] in memory: the check and the count are one step
/// under one lock.
fn admit_memory(map: &mut HashMap<String, Entry>, keys: &[Key], now: i64) -> Admission {
    let wait = keys
        .iter()
        .filter_map(|key| {
            let entry = map.get_mut(&key.name)?;
            entry.expire(now);
            let newest: Vec<i64> = entry.times.iter().rev().copied().collect();
            wait_for(&newest, key.limit, now)
        })
        .max();
    if let Some(wait) = wait {
        return Admission::Full(wait);
    }
    make_room(map, keys.len(), now);
    for key in keys {
        push(map, key, now);
    }
    Admission::Admitted
}

/// Counts `now` under `key`, keeping no more times than its limit needs.
fn push(map: &mut HashMap<String, Entry>, key: &Key, now: i64) {
    if !map.contains_key(&key.name) {
        make_room(map, 1, now);
    }
    let entry = map.entry(key.name.clone()).or_default();
    entry.window_secs = key.limit.window_secs;
    entry.expire(now);
    entry.times.push_back(now);
    while entry.times.len() > key.limit.attempts.max(1) {
        entry.times.pop_front();
    }
}

/// Keeps the map under [`MAX_TRACKED`] with room for `adding` keys:
/// expired keys go first, then the stalest.
fn make_room(map: &mut HashMap<String, Entry>, adding: usize, now: i64) {
    if map.len() + adding <= MAX_TRACKED {
        return;
    }
    map.retain(|_, entry| {
        entry.expire(now);
        !entry.times.is_empty()
    });
    while map.len() + adding > MAX_TRACKED {
        let Some(stalest) = map
            .iter()
            .min_by_key(|(_, entry)| entry.times.back().copied())
            .map(|(k, _)| k.clone())
        else {
            break;
        };
        map.remove(&stalest);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn key(name: &str, attempts: usize, window_secs: i64) -> Key {
        Key {
            name: name.into(),
            limit: Limit {
                attempts,
                window_secs,
            },
        }
    }

    async fn in_database() -> Windows {
        let db = crate::server::platform::db::memory().await;
        sqlx::migrate!("./migrations/sqlite")
            .run(&db)
            .await
            .unwrap();
        Windows::in_database(&db, "t:")
    }

    /// Every behaviour below, on both kinds of windows.
    async fn both() -> [Windows; 2] {
        [Windows::default(), in_database().await]
    }

    #[tokio::test]
    async fn a_window_admits_its_maximum_then_says_when_the_oldest_leaves() {
        for w in both().await {
            let k = [key("s", 3, 60)];
            for t in 0..3 {
                assert_eq!(w.admit(&k, 100 + t).await.unwrap(), Admission::Admitted);
            }
            assert_eq!(w.admit(&k, 110).await.unwrap(), Admission::Full(50));
            assert_eq!(
                w.count(&k[0], 110).await.unwrap(),
                3,
                "a refusal is not counted"
            );
            assert_eq!(w.wait(&k, 110).await.unwrap(), Some(50));
            assert_eq!(
                w.admit(&k, 160).await.unwrap(),
                Admission::Admitted,
                "the first left"
            );
        }
    }

    #[tokio::test]
    async fn a_full_key_refuses_the_event_under_every_key() {
        for w in both().await {
            let tight = key("tight", 1, 60);
            let loose = key("loose", 10, 60);
            assert_eq!(
                w.admit(&[tight.clone(), loose.clone()], 0).await.unwrap(),
                Admission::Admitted
            );
            assert_eq!(
                w.admit(&[tight, loose.clone()], 1).await.unwrap(),
                Admission::Full(59)
            );
            assert_eq!(w.count(&loose, 1).await.unwrap(), 1, "nothing counted");
        }
    }

    #[tokio::test]
    async fn keys_are_counted_apart_and_forgotten_whole_or_one_event_at_a_time() {
        for w in both().await {
            let (a, b) = (key("a", 2, 60), key("b", 1, 60));
            w.admit(std::slice::from_ref(&a), 0).await.unwrap();
            w.admit(std::slice::from_ref(&a), 1).await.unwrap();
            assert_eq!(
                w.admit(std::slice::from_ref(&b), 1).await.unwrap(),
                Admission::Admitted
            );
            assert!(matches!(
                w.admit(std::slice::from_ref(&a), 2).await.unwrap(),
                Admission::Full(_)
            ));
            w.forget_one("a", 1).await.unwrap();
            assert_eq!(w.count(&a, 2).await.unwrap(), 1);
            w.forget("a").await.unwrap();
            assert_eq!(w.count(&a, 2).await.unwrap(), 0);
            assert_eq!(w.count(&b, 2).await.unwrap(), 1);
        }
    }

    #[tokio::test]
    async fn noted_events_count_whatever_the_limit_and_expire_with_their_window() {
        for w in both().await {
            let k = key("idv", 2, 3_600);
            for _ in 0..3 {
                w.note(&k, 1_000).await.unwrap();
            }
            assert!(w.count(&k, 1_000).await.unwrap() >= 2);
            assert_eq!(w.count(&k, 4_600).await.unwrap(), 0);
        }
    }

    #[tokio::test]
    async fn expired_keys_are_pruned() {
        for w in both().await {
            w.admit(&[key("old", 1, 60)], 0).await.unwrap();
            w.admit(&[key("new", 1, 60)], 100).await.unwrap();
            // The database prunes itself as it counts.
            w.admit(&[key("newer", 1, 60)], 200).await.unwrap();
            w.prune(200);
            assert_eq!(
                w.tracked(200).await.unwrap(),
                1,
                "only `newer` is in its window"
            );
        }
    }

    #[tokio::test]
    async fn the_database_forgets_expired_rows_in_passing() {
        let w = in_database().await;
        let Windows::Database { db, .. } = &w else {
            unreachable!()
        };
        w.admit(&[key("x", 5, 60)], 0).await.unwrap();
        w.admit(&[key("y", 5, 60)], 100).await.unwrap();
        let rows: i64 = sqlx::query_scalar("SELECT COUNT(*) FROM window_events")
            .fetch_one(db)
            .await
            .unwrap();
        assert_eq!(rows, 1, "x's row left its window and was deleted");
    }

    #[test]
    fn a_full_memory_drops_keys_that_left_their_window_first() {
        let mut map = HashMap::new();
        push(&mut map, &key("old", 1, 60), 0);
        push(&mut map, &key("new", 1, 60), 100);
        make_room(&mut map, MAX_TRACKED - 1, 100);
        assert!(map.contains_key("new") && !map.contains_key("old"));
    }

    #[test]
    fn memory_keeps_no_more_times_than_a_limit_needs() {
        let mut map = HashMap::new();
        for t in 0..100 {
            push(&mut map, &key("k", 5, 3_600), t);
        }
        assert_eq!(map["k"].times.len(), 5);
    }
}
