//! Opening the database — SQLite or PostgreSQL, chosen by the scheme of
//! `DATABASE_URL` — and bringing its schema up to date.
//!
//! SQLite is the embedded default so a fresh machine needs no database
//! server: WAL mode lets readers proceed while a writer commits, foreign keys
//! are on so the schema's `REFERENCES` are enforced, and a lock file keeps a
//! second instance off the same file (its in-process state would diverge).
//! PostgreSQL is for several instances behind a load balancer.
//!
//! A file database's write-ahead log is copied back into the database by a
//! task of its own ([`CHECKPOINT_EVERY`]), not by the commit that happens to
//! cross SQLite's 1,000-page mark: a registration storing a 1 MB set paid
//! for that checkpoint about every fourth time (6 % of a profile of large
//! registrations). Commits still checkpoint past
//! [`WAL_AUTOCHECKPOINT_PAGES`], should the task ever fall behind.
//!
//! The whole store goes through sqlx's `Any` driver, so one query text
//! serves both: `$1` placeholders (which sqlx's SQLite driver accepts too),
//! `RETURNING` for new ids, `ON CONFLICT` for upserts, 0/1 `BIGINT`s for
//! flags. Where the two really differ (a write transaction's start, a list
//! parameter) the store asks [`backend`].

use crate::server::ServerError;
use sqlx::any::{AnyConnectOptions, AnyPoolOptions};
use sqlx::{Any, Executor, Transaction};
use std::str::FromStr;
use std::sync::Arc;
use std::time::Duration;

/// The pool every store function takes.
pub type Db = sqlx::AnyPool;

/// One connection of it (inside a transaction: `&mut *tx`).
pub type Conn = sqlx::AnyConnection;

/// Which database a [`Db`] talks to.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Backend {
    /// One file, one instance.
    Sqlite,
    /// A server shared by several instances.
    Postgres,
}

impl Backend {
    /// The backend a `DATABASE_URL` names, or a message naming the setting
    /// and the schemes it takes.
    pub fn of_url(url: &str) -> Result<Self, String> {
        let scheme = url.split(':').next().unwrap_or_default();
        match scheme {
            "sqlite" => Ok(Self::Sqlite),
            "postgres" | "postgresql" => Ok(Self::Postgres),
            _ => Err(format!(
                "DATABASE_URL must start with sqlite: (the default, one instance) or \
                 postgres:// (several instances); {scheme:?} is neither"
            )),
        }
    }
}

/// How often a file database's write-ahead log is checkpointed (PASSIVE:
/// it waits for no reader or writer) by its own task.
pub const CHECKPOINT_EVERY: Duration = Duration::from_millis(500);

/// Pages of write-ahead log after which a commit checkpoints it itself
/// (SQLite's default, 1,000, is where it did before the task): 64 MiB of
/// 4 KiB pages, reached only if the task falls behind.
pub const WAL_AUTOCHECKPOINT_PAGES: u32 = 16_384;

/// Pool settings an operator may tune (`DATABASE_MAX_CONNECTIONS`,
/// `DATABASE_ACQUIRE_TIMEOUT_SECS`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PoolSettings {
    /// Connections per instance; `None` takes the backend's default.
    pub max_connections: Option<u32>,
    /// How long a request waits for a free connection before it fails.
    pub acquire_timeout: Duration,
}

impl Default for PoolSettings {
    fn default() -> Self {
        Self {
            max_connections: None,
            acquire_timeout: Duration::from_secs(30),
        }
    }
}

/// The backend `db` talks to.
pub fn backend(db: &Db) -> Backend {
    match db.connect_options().database_url.scheme() {
        "sqlite" => Backend::Sqlite,
        _ => Backend::Postgres,
    }
}

/// A database opened for this process: the pool, and on SQLite the lock
/// that keeps other instances off the file (held as long as this lives).
pub struct Opened {
    /// The pool.
    pub pool: Db,
    /// The SQLite instance lock (`None` on PostgreSQL or in memory).
    pub instance_lock: Option<Arc<std::fs::File>>,
}

/// Opens (creating if missing, with its folder) the database at `url` and
/// applies every pending migration of its backend.
pub async fn connect(url: &str) -> Result<Db, ServerError> {
    Ok(open(url, &PoolSettings::default()).await?.pool)
}

/// The database at `url` as a tool beside a running instance sees it (a
/// bench creating a key, say): no instance lock, no migrations.
pub async fn attach(url: &str) -> Result<Db, ServerError> {
    sqlx::any::install_default_drivers();
    Backend::of_url(url).map_err(ServerError::Config)?;
    Ok(AnyPoolOptions::new()
        .max_connections(2)
        .connect(url)
        .await?)
}

/// [`connect`] with pool settings, keeping SQLite's instance lock.
pub async fn open(url: &str, settings: &PoolSettings) -> Result<Opened, ServerError> {
    sqlx::any::install_default_drivers();
    match Backend::of_url(url).map_err(ServerError::Config)? {
        Backend::Sqlite => open_sqlite(url, settings).await,
        Backend::Postgres => open_postgres(url, settings).await,
    }
}

async fn open_sqlite(url: &str, settings: &PoolSettings) -> Result<Opened, ServerError> {
    let parsed = sqlx::sqlite::SqliteConnectOptions::from_str(url).map_err(|e| {
        ServerError::Config(format!("DATABASE_URL {url:?} is not a SQLite URL: {e}"))
    })?;
    let file = parsed.get_filename().to_path_buf();
    let in_memory = url.contains(":memory:") || file.as_os_str().is_empty();
    let instance_lock = if in_memory {
        None
    } else {
        create_folder(&file)?;
        Some(lock_instance(&file)?)
    };
    let url = if in_memory || url.contains('?') {
        url.to_owned()
    } else {
        format!("{url}?mode=rwc")
    };
    let options = AnyConnectOptions::from_str(&url)?;
    let pool = AnyPoolOptions::new()
        .max_connections(
            settings
                .max_connections
                .unwrap_or(if in_memory { 1 } else { 8 }),
        )
        .acquire_timeout(settings.acquire_timeout)
        .after_connect(|conn, _| {
            Box::pin(async move {
                conn.execute(
                    format!(
                        "PRAGMA journal_mode = WAL; PRAGMA synchronous = NORMAL; \
                         PRAGMA foreign_keys = ON; PRAGMA busy_timeout = 5000; \
                         PRAGMA wal_autocheckpoint = {WAL_AUTOCHECKPOINT_PAGES};"
                    )
                    .as_str(),
                )
                .await?;
                Ok(())
            })
        })
        .connect_with(options)
        .await?;
    sqlx::migrate!("./migrations/sqlite").run(&pool).await?;
    if let Some(lock) = &instance_lock {
        checkpoint_in_background(pool.clone(), Arc::downgrade(lock));
    }
    Ok(Opened {
        pool,
        instance_lock,
    })
}

/// Checkpoints `pool`'s write-ahead log every [`CHECKPOINT_EVERY`] until
/// the instance that opened it lets go of its lock (`held`), so the task
/// never outlives the pool's last user.
fn checkpoint_in_background(pool: Db, held: std::sync::Weak<std::fs::File>) {
    tokio::spawn(async move {
        let mut tick = tokio::time::interval(CHECKPOINT_EVERY);
        tick.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
        loop {
            tick.tick().await;
            if held.strong_count() == 0 || pool.is_closed() {
                break;
            }
            if let Err(e) = sqlx::query("PRAGMA wal_checkpoint(PASSIVE)")
                .execute(&pool)
                .await
            {
                tracing::warn!(error = %e, "checkpointing the write-ahead log failed");
            }
        }
    });
}

async fn open_postgres(url: &str, settings: &PoolSettings) -> Result<Opened, ServerError> {
    let options = AnyConnectOptions::from_str(url)
        .map_err(|e| ServerError::Config(format!("DATABASE_URL is not a PostgreSQL URL: {e}")))?;
    let pool = AnyPoolOptions::new()
        .max_connections(settings.max_connections.unwrap_or(16))
        .acquire_timeout(settings.acquire_timeout)
        .connect_with(options)
        .await?;
    sqlx::migrate!("./migrations/postgres").run(&pool).await?;
    Ok(Opened {
        pool,
        instance_lock: None,
    })
}

fn create_folder(file: &std::path::Path) -> Result<(), ServerError> {
    match file.parent() {
        Some(parent) if !parent.as_os_str().is_empty() => {
            std::fs::create_dir_all(parent).map_err(|e| {
                ServerError::Config(format!(
                    "cannot create database folder {}: {e}",
                    parent.display()
                ))
            })
        }
        _ => Ok(()),
    }
}

/// The SQLite files this process holds the instance lock of: opening one
/// again in the same process (a restart inside the HTTP tests) shares the
/// lock instead of refusing itself.
static HELD: std::sync::Mutex<Vec<(std::path::PathBuf, std::sync::Weak<std::fs::File>)>> =
    std::sync::Mutex::new(Vec::new());

/// The instance lock of `file` for this process: the one it already holds,
/// or a new exclusive `flock` on `<file>.lock`, refused while another
/// process holds it.
fn lock_instance(file: &std::path::Path) -> Result<Arc<std::fs::File>, ServerError> {
    let key = std::path::absolute(file).unwrap_or_else(|_| file.to_path_buf());
    let mut held = HELD.lock().unwrap_or_else(|p| p.into_inner());
    held.retain(|(_, lock)| lock.strong_count() > 0);
    if let Some(lock) = held
        .iter()
        .find(|(path, _)| *path == key)
        .and_then(|(_, l)| l.upgrade())
    {
        return Ok(lock);
    }
    let lock = Arc::new(take_lock(file)?);
    held.push((key, Arc::downgrade(&lock)));
    Ok(lock)
}

/// Takes the exclusive lock `<file>.lock`, or explains why a second
/// instance may not share a SQLite file.
fn take_lock(file: &std::path::Path) -> Result<std::fs::File, ServerError> {
    let path = file.with_extension(match file.extension() {
        Some(ext) => format!("{}.lock", ext.to_string_lossy()),
        None => "lock".to_owned(),
    });
    let lock = std::fs::OpenOptions::new()
        .create(true)
        .truncate(false)
        .write(true)
        .open(&path)
        .map_err(|e| ServerError::Config(format!("cannot open {}: {e}", path.display())))?;
    match lock.try_lock() {
        Ok(()) => Ok(lock),
        Err(std::fs::TryLockError::WouldBlock) => Err(ServerError::Config(format!(
            "another Switchboard instance is already serving {} (it holds {}). SQLite serves \
             one instance; to run several, set DATABASE_URL to a postgres:// database.",
            file.display(),
            path.display()
        ))),
        Err(std::fs::TryLockError::Error(e)) => Err(ServerError::Config(format!(
            "cannot lock {}: {e}",
            path.display()
        ))),
    }
}

/// Starts a transaction that writes: SQLite's `BEGIN IMMEDIATE` (the write
/// lock first, so a read-then-write never fails with `SQLITE_BUSY_SNAPSHOT`);
/// on PostgreSQL a transaction that takes one transaction-scoped advisory
/// lock first, so these read-check-write transactions run one at a time
/// across every instance, as they do on SQLite.
pub async fn begin_write(db: &Db) -> Result<Transaction<'static, Any>, ServerError> {
    match backend(db) {
        Backend::Sqlite => Ok(db.begin_with("BEGIN IMMEDIATE").await?),
        Backend::Postgres => {
            let mut tx = db.begin().await?;
            sqlx::query("SELECT COUNT(*) FROM (SELECT pg_advisory_xact_lock($1)) AS l")
                .bind(WRITE_LOCK)
                .execute(&mut *tx)
                .await?;
            Ok(tx)
        }
    }
}

/// The advisory lock key [`begin_write`] serialises on (any fixed number no
/// other lock uses: "SB" "write" in ASCII).
const WRITE_LOCK: i64 = 0x0053_4277_7269_7465;

/// The backend a connection (or a transaction's) talks to.
pub fn backend_of(conn: &Conn) -> Backend {
    match conn.backend_name() {
        "SQLite" => Backend::Sqlite,
        _ => Backend::Postgres,
    }
}

/// The SQL listing the strings of the JSON array bound to parameter `n`,
/// one row each, for `IN (…)`: a list of any length is one parameter.
pub fn json_ids(backend: Backend, n: usize) -> String {
    match backend {
        Backend::Sqlite => format!("SELECT value FROM json_each(${n})"),
        Backend::Postgres => format!("SELECT jsonb_array_elements_text(${n}::jsonb)"),
    }
}

/// A yes/no column or expression, read from either database: the schema
/// keeps flags as 0/1 integers on both, but a comparison in a `SELECT`
/// list is an integer on SQLite and a boolean on PostgreSQL. Written as
/// 0/1. Row fields read it with `#[sqlx(try_from = "Flag")]`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Flag(pub bool);

impl From<Flag> for bool {
    fn from(flag: Flag) -> bool {
        flag.0
    }
}

impl sqlx::Type<Any> for Flag {
    fn type_info() -> sqlx::any::AnyTypeInfo {
        <i64 as sqlx::Type<Any>>::type_info()
    }

    fn compatible(ty: &sqlx::any::AnyTypeInfo) -> bool {
        <i64 as sqlx::Type<Any>>::compatible(ty) || <bool as sqlx::Type<Any>>::compatible(ty)
    }
}

impl<'r> sqlx::Decode<'r, Any> for Flag {
    fn decode(value: sqlx::any::AnyValueRef<'r>) -> Result<Self, sqlx::error::BoxDynError> {
        match <i64 as sqlx::Decode<Any>>::decode(value.clone()) {
            Ok(n) => Ok(Flag(n != 0)),
            Err(_) => <bool as sqlx::Decode<Any>>::decode(value).map(Flag),
        }
    }
}

impl<'q> sqlx::Encode<'q, Any> for Flag {
    fn encode_by_ref(
        &self,
        buf: &mut <Any as sqlx::Database>::ArgumentBuffer<'q>,
    ) -> Result<sqlx::encode::IsNull, sqlx::error::BoxDynError> {
        <i64 as sqlx::Encode<Any>>::encode(i64::from(self.0), buf)
    }
}

/// Current time as Unix seconds, the unit every timestamp column uses.
pub fn now() -> i64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_secs() as i64)
        .unwrap_or_default()
}

/// An empty in-memory SQLite database on one connection, foreign keys on
/// and no migrations run (unit tests run the ones they need).
#[cfg(test)]
pub async fn memory() -> Db {
    sqlx::any::install_default_drivers();
    AnyPoolOptions::new()
        .max_connections(1)
        .after_connect(|conn, _| {
            Box::pin(async move {
                conn.execute("PRAGMA foreign_keys = ON").await?;
                Ok(())
            })
        })
        .connect("sqlite::memory:")
        .await
        .expect("an in-memory database")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_scheme_chooses_the_backend_and_anything_else_is_refused_by_name() {
        assert_eq!(Backend::of_url("sqlite://data/x.db"), Ok(Backend::Sqlite));
        assert_eq!(Backend::of_url("sqlite::memory:"), Ok(Backend::Sqlite));
        assert_eq!(Backend::of_url("postgres://sb@h/sb"), Ok(Backend::Postgres));
        assert_eq!(
            Backend::of_url("postgresql://sb@h/sb"),
            Ok(Backend::Postgres)
        );
        let err = Backend::of_url("mysql://x").unwrap_err();
        assert!(
            err.contains("DATABASE_URL") && err.contains("mysql"),
            "{err}"
        );
        assert!(Backend::of_url("data/x.db").is_err());
    }

    #[test]
    fn a_second_lock_on_one_sqlite_file_is_refused_and_names_the_way_out() {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("sb.db");
        let first = take_lock(&file).unwrap();
        let Err(ServerError::Config(why)) = take_lock(&file) else {
            panic!("a second lock was granted");
        };
        assert!(
            why.contains("postgres://") && why.contains("sb.db"),
            "{why}"
        );
        drop(first);
        take_lock(&file).unwrap();
    }

    /// The database file's size and its write-ahead log's.
    fn sizes(file: &std::path::Path) -> (u64, u64) {
        let size = |p: std::path::PathBuf| std::fs::metadata(p).map_or(0, |m| m.len());
        (
            size(file.to_path_buf()),
            size(file.with_extension("db-wal")),
        )
    }

    #[tokio::test]
    async fn the_log_is_checkpointed_by_its_own_task_not_by_a_commit() {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("sb.db");
        let url = format!("sqlite://{}", file.display());
        let opened = open(&url, &PoolSettings::default()).await.unwrap();
        tokio::time::sleep(CHECKPOINT_EVERY * 3).await;
        let big = "x".repeat(4 << 20);
        sqlx::query("CREATE TABLE big (t TEXT)")
            .execute(&opened.pool)
            .await
            .unwrap();
        sqlx::query("INSERT INTO big (t) VALUES ($1)")
            .bind(&big)
            .execute(&opened.pool)
            .await
            .unwrap();
        let (db, wal) = sizes(&file);
        assert!(
            wal > 4 << 20 && db < 4 << 20,
            "the commit (1,000+ pages) left its pages in the log: {db} / {wal}"
        );
        let started = std::time::Instant::now();
        while sizes(&file).0 < 4 << 20 {
            assert!(
                started.elapsed() < CHECKPOINT_EVERY * 20,
                "the task copies the log into the database"
            );
            tokio::time::sleep(CHECKPOINT_EVERY / 5).await;
        }
        let tasks = || {
            tokio::runtime::Handle::current()
                .metrics()
                .num_alive_tasks()
        };
        let with_instance = tasks();
        drop(opened);
        tokio::time::sleep(CHECKPOINT_EVERY * 3).await;
        assert!(
            tasks() < with_instance,
            "the task ends with the instance ({with_instance} tasks before, {} after)",
            tasks()
        );
    }

    #[test]
    fn one_process_opening_its_file_again_shares_its_lock() {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("sb.db");
        let first = lock_instance(&file).unwrap();
        let again = lock_instance(&file).unwrap();
        assert!(Arc::ptr_eq(&first, &again));
        drop((first, again));
        assert!(
            take_lock(&file).is_ok(),
            "the lock is released with its last holder"
        );
    }
}
