//! Named locks that hold across every instance on one database.
//!
//! Some work reads, decides and writes back, and two runs at once would
//! lose one's change or pass a cap both checked: a session's tool call,
//! result, state patch, plugin change, turn or end (each reads the
//! session's state JSON, turn log and stored totals and writes them back
//! whole); a save of agents and vibes (their rules span objects); an edit
//! of a workflow (each builds on the last). Such work runs under a lock.
//!
//! On SQLite (one instance) an in-process mutex per name does that and
//! nothing more. On PostgreSQL several instances may do the same work at
//! once, so the holder of the mutex also takes the name's advisory lock in
//! the database (`server::store::locks`), in a transaction kept open until
//! the guard is dropped: dropping it rolls the transaction back and frees
//! the lock, and an instance that dies frees it with its connection. The
//! mutex is taken first, so each instance waits on the database with at
//! most one connection per name. Those connections come from a pool of
//! their own, so work holding locks can never take every connection the
//! queries inside it need.

use crate::server::platform::db::{backend, Backend, Db};
use crate::server::store::locks as store;
use crate::server::ServerError;
use sqlx::any::AnyPoolOptions;
use sqlx::{Any, Transaction};
use std::collections::HashMap;
use std::sync::{Arc, Mutex};

/// One family of named locks (`session`, `edit`), each name a mutex here
/// and, on PostgreSQL, an advisory lock in the database.
pub struct Locks {
    /// Keeps one family's names apart from another's in the database.
    family: &'static str,
    local: Mutex<HashMap<String, Arc<tokio::sync::Mutex<()>>>>,
    /// On PostgreSQL, the pool the database locks are held on.
    shared: Option<Db>,
}

/// A lock, held until dropped.
pub struct Guard {
    // Declared first, so dropped first: the database lock is released
    // before the next waiter of this instance gets the mutex.
    _held: Option<Transaction<'static, Any>>,
    _local: tokio::sync::OwnedMutexGuard<()>,
}

/// The pool database locks are held on, for the instances on `db`: `None`
/// on SQLite; on PostgreSQL a lazily connected pool as large as `db`'s
/// (connections open only while locks are held, and close when idle).
pub fn lock_pool(db: &Db) -> Option<Db> {
    (backend(db) == Backend::Postgres).then(|| {
        AnyPoolOptions::new()
            .max_connections(db.options().get_max_connections())
            .acquire_timeout(db.options().get_acquire_timeout())
            .connect_lazy_with((*db.connect_options()).clone())
    })
}

impl Locks {
    /// The `family` of locks, held in the database too when `shared` is a
    /// pool ([`lock_pool`]).
    pub fn new(family: &'static str, shared: Option<Db>) -> Self {
        Self {
            family,
            local: Mutex::default(),
            shared,
        }
    }

    /// Waits for the lock `name` and holds it until the guard drops.
    pub async fn lock(&self, name: &str) -> Result<Guard, ServerError> {
        let mutex = self.map().entry(name.to_owned()).or_default().clone();
        let local = mutex.lock_owned().await;
        let held = match &self.shared {
            None => None,
            Some(pool) => {
                let mut tx = pool.begin().await?;
                store::lock(&mut tx, &format!("{}:{name}", self.family)).await?;
                Some(tx)
            }
        };
        Ok(Guard {
            _held: held,
            _local: local,
        })
    }

    /// Drops `name`'s mutex (an ended session's) so the map does not grow
    /// forever.
    pub fn forget(&self, name: &str) {
        self.map().remove(name);
    }

    /// How many names have a mutex here.
    pub fn len(&self) -> usize {
        self.map().len()
    }

    /// Whether no name has a mutex here.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    fn map(&self) -> std::sync::MutexGuard<'_, HashMap<String, Arc<tokio::sync::Mutex<()>>>> {
        self.local.lock().unwrap_or_else(|p| p.into_inner())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;

    #[tokio::test]
    async fn one_holder_per_name_at_a_time_and_other_names_are_not_held_up() {
        let locks = Arc::new(Locks::new("test", None));
        let first = locks.lock("a").await.unwrap();
        let waiting = tokio::spawn({
            let locks = locks.clone();
            async move { locks.lock("a").await.map(|_| ()) }
        });
        tokio::time::timeout(Duration::from_secs(1), locks.lock("b"))
            .await
            .expect("another name is free")
            .unwrap();
        tokio::time::sleep(Duration::from_millis(20)).await;
        assert!(!waiting.is_finished(), "the second caller waits");
        drop(first);
        tokio::time::timeout(Duration::from_secs(1), waiting)
            .await
            .expect("released on drop")
            .unwrap()
            .unwrap();
        locks.forget("a");
        locks.forget("b");
        assert!(locks.is_empty());
    }
}
