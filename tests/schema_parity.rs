//! The two migration histories describe one schema: SQLite's
//! (`migrations/sqlite/`, or `migrations/` before the split) and
//! PostgreSQL's (`migrations/postgres/`) are each applied to an empty
//! database, and every table must come out the same — its columns in
//! order with their types and NOT NULL, its primary key, its unique keys,
//! its foreign keys with their ON DELETE rules, its named indexes (unique,
//! partial) and its triggers. A migration added to one folder and not the
//! other fails here, not on an operator's server.
//!
//! CHECK constraints and column defaults are not compared: each database
//! keeps them as its own SQL text, and comparing that would be comparing
//! spelling.
//!
//! PostgreSQL comes from `TEST_POSTGRES_URL`, an admin URL
//! (`postgres://postgres@127.0.0.1:55432/postgres`; `make test-postgres`
//! starts one): the test makes a database of its own there and drops it.
//! Without the setting it says it is skipped and passes.

use sqlx::migrate::Migrator;
use sqlx::postgres::{PgConnectOptions, PgPoolOptions};
use sqlx::sqlite::{SqliteConnectOptions, SqlitePoolOptions};
use sqlx::{Connection, Executor, PgConnection, PgPool, SqlitePool};
use std::collections::{BTreeMap, BTreeSet};
use std::fmt::Write as _;
use std::path::{Path, PathBuf};
use std::str::FromStr;

/// One database's tables, by name.
type Schema = BTreeMap<String, Table>;

/// What the two databases must agree on for one table.
#[derive(Debug, Default, PartialEq)]
struct Table {
    /// In declaration order: name, type (in PostgreSQL's words), NOT NULL.
    columns: Vec<(String, String, bool)>,
    primary_key: Vec<String>,
    /// Column lists of every unique key: constraints and unique indexes.
    unique: BTreeSet<Vec<String>>,
    foreign_keys: BTreeSet<ForeignKey>,
    /// Indexes created by name (not those backing a constraint).
    indexes: BTreeSet<Index>,
    triggers: BTreeSet<String>,
}

#[derive(Debug, PartialEq, Eq, PartialOrd, Ord)]
struct ForeignKey {
    columns: Vec<String>,
    table: String,
    references: Vec<String>,
    /// `CASCADE`, `SET NULL`, `NO ACTION`, …
    on_delete: String,
}

#[derive(Debug, PartialEq, Eq, PartialOrd, Ord)]
struct Index {
    name: String,
    columns: Vec<String>,
    unique: bool,
    partial: bool,
}

#[tokio::test]
async fn the_sqlite_and_postgres_migrations_give_the_same_schema() {
    let Ok(admin_url) = std::env::var("TEST_POSTGRES_URL") else {
        eprintln!(
            "schema parity: skipped, TEST_POSTGRES_URL is not set (make test-postgres sets it)"
        );
        return;
    };
    let dir = tempfile::tempdir().expect("temp dir");
    let sqlite = sqlite_schema(&dir.path().join("parity.db")).await;

    let scratch = ScratchDatabase::create(&admin_url).await;
    let pool = scratch.pool().await;
    Migrator::new(root().join("migrations/postgres"))
        .await
        .expect("read migrations/postgres")
        .run(&pool)
        .await
        .expect("apply migrations/postgres");
    let postgres = pg_schema(&pool).await;
    let drift = differences(&sqlite, &postgres);

    // The comparison must see a real drift, or an empty report means nothing.
    pool.execute("ALTER TABLE users RENAME COLUMN display_name TO shown_name")
        .await
        .expect("rename a column");
    let renamed = differences(&sqlite, &pg_schema(&pool).await);
    pool.close().await;
    scratch.drop().await;

    assert!(
        drift.is_empty(),
        "migrations/postgres and the SQLite migrations disagree:\n{drift}"
    );
    assert!(
        renamed.contains("users") && renamed.contains("display_name"),
        "a renamed column went unnoticed: {renamed:?}"
    );
}

/// The crate's folder, where `migrations/` is.
fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

/// `migrations/sqlite` once the histories are split, `migrations` before.
fn sqlite_migrations() -> PathBuf {
    let split = root().join("migrations/sqlite");
    if split.is_dir() {
        split
    } else {
        root().join("migrations")
    }
}

/// Tables only PostgreSQL has, on purpose: what several instances relay
/// to each other (`migrations/postgres/0002_cluster.sql`, `server::cluster`;
/// `0004_plugin_relay.sql`, calls relayed to plugins on other instances;
/// `0005_stream_leases.sql`, each instance's share of the stream caps);
/// on SQLite one instance serves and relays nothing.
const POSTGRES_ONLY: &[&str] = &[
    "session_events",
    "cluster_frames",
    "plugin_relay_calls",
    "plugin_streams",
    "stream_leases",
];

/// Every difference, one line each, grouped by table; empty when none.
fn differences(sqlite: &Schema, postgres: &Schema) -> String {
    let mut out = String::new();
    let names: BTreeSet<&String> = sqlite.keys().chain(postgres.keys()).collect();
    for name in names {
        match (sqlite.get(name), postgres.get(name)) {
            (None, Some(_)) if POSTGRES_ONLY.contains(&name.as_str()) => {}
            (Some(_), None) => writeln!(out, "{name}: only on SQLite").unwrap(),
            (None, Some(_)) => writeln!(out, "{name}: only on PostgreSQL").unwrap(),
            (Some(s), Some(p)) => table_differences(name, s, p, &mut out),
            (None, None) => unreachable!("a name from one of the two"),
        }
    }
    out
}

fn table_differences(name: &str, s: &Table, p: &Table, out: &mut String) {
    let mut field = |what: &str, s: &dyn std::fmt::Debug, p: &dyn std::fmt::Debug| {
        let (s, p) = (format!("{s:?}"), format!("{p:?}"));
        if s != p {
            writeln!(
                out,
                "{name}: {what}\n    SQLite:     {s}\n    PostgreSQL: {p}"
            )
            .unwrap();
        }
    };
    field("columns", &s.columns, &p.columns);
    field("primary key", &s.primary_key, &p.primary_key);
    field("unique keys", &s.unique, &p.unique);
    field("foreign keys", &s.foreign_keys, &p.foreign_keys);
    field("indexes", &s.indexes, &p.indexes);
    field("triggers", &s.triggers, &p.triggers);
}

/// PostgreSQL's name for a SQLite declared type, so a column declared
/// INTEGER on one side and TEXT on the other is a difference.
fn pg_type_of(sqlite_type: &str) -> String {
    match sqlite_type.to_ascii_uppercase().as_str() {
        "INTEGER" => "bigint".into(),
        "REAL" => "double precision".into(),
        "BLOB" => "bytea".into(),
        "TEXT" => "text".into(),
        other => format!("unmapped SQLite type {other}"),
    }
}

/// Applies the SQLite migrations to a new file and reads its schema.
async fn sqlite_schema(file: &Path) -> Schema {
    let options = SqliteConnectOptions::new()
        .filename(file)
        .create_if_missing(true);
    let pool = SqlitePoolOptions::new()
        .max_connections(1)
        .connect_with(options)
        .await
        .expect("open SQLite");
    Migrator::new(sqlite_migrations())
        .await
        .expect("read the SQLite migrations")
        .run(&pool)
        .await
        .expect("apply the SQLite migrations");
    let tables: Vec<String> = sqlx::query_scalar(
        "SELECT name FROM sqlite_master WHERE type = 'table'
         AND name NOT LIKE 'sqlite\\_%' ESCAPE '\\' AND name NOT LIKE '\\_sqlx%' ESCAPE '\\'",
    )
    .fetch_all(&pool)
    .await
    .expect("list SQLite tables");
    let mut schema = Schema::new();
    for name in tables {
        let table = sqlite_table(&pool, &name).await;
        schema.insert(name, table);
    }
    pool.close().await;
    schema
}

async fn sqlite_table(pool: &SqlitePool, name: &str) -> Table {
    let columns: Vec<(String, String, i64, i64)> = sqlx::query_as(
        "SELECT name, type, \"notnull\", pk FROM pragma_table_info(?1) ORDER BY cid",
    )
    .bind(name)
    .fetch_all(pool)
    .await
    .expect("SQLite columns");
    let mut primary: Vec<(i64, String)> = columns
        .iter()
        .filter(|c| c.3 > 0)
        .map(|c| (c.3, c.0.clone()))
        .collect();
    primary.sort();
    let mut table = Table {
        // A primary key column is NOT NULL on PostgreSQL whatever it says;
        // on SQLite a rowid key is too, and a TEXT key should be.
        columns: columns
            .iter()
            .map(|(n, ty, not_null, pk)| (n.clone(), pg_type_of(ty), *not_null == 1 || *pk > 0))
            .collect(),
        primary_key: primary.into_iter().map(|(_, n)| n).collect(),
        ..Table::default()
    };
    sqlite_indexes(pool, name, &mut table).await;
    table.foreign_keys = sqlite_foreign_keys(pool, name).await;
    table.triggers = sqlx::query_scalar(
        "SELECT name FROM sqlite_master WHERE type = 'trigger' AND tbl_name = ?1",
    )
    .bind(name)
    .fetch_all(pool)
    .await
    .expect("SQLite triggers")
    .into_iter()
    .collect();
    table
}

/// Unique keys and named indexes: `origin` is `pk` for a primary key's
/// index, `u` for a UNIQUE constraint, `c` for CREATE [UNIQUE] INDEX.
async fn sqlite_indexes(pool: &SqlitePool, name: &str, table: &mut Table) {
    let indexes: Vec<(String, i64, String, i64)> =
        sqlx::query_as("SELECT name, \"unique\", origin, partial FROM pragma_index_list(?1)")
            .bind(name)
            .fetch_all(pool)
            .await
            .expect("SQLite indexes");
    for (index, unique, origin, partial) in indexes {
        if origin == "pk" {
            continue;
        }
        let columns: Vec<String> =
            sqlx::query_scalar("SELECT name FROM pragma_index_info(?1) ORDER BY seqno")
                .bind(&index)
                .fetch_all(pool)
                .await
                .expect("SQLite index columns");
        if unique == 1 {
            table.unique.insert(columns.clone());
        }
        if origin == "c" {
            table.indexes.insert(Index {
                name: index,
                columns,
                unique: unique == 1,
                partial: partial == 1,
            });
        }
    }
}

async fn sqlite_foreign_keys(pool: &SqlitePool, name: &str) -> BTreeSet<ForeignKey> {
    let rows: Vec<(i64, String, String, Option<String>, String)> = sqlx::query_as(
        "SELECT id, \"table\", \"from\", \"to\", on_delete
         FROM pragma_foreign_key_list(?1) ORDER BY id, seq",
    )
    .bind(name)
    .fetch_all(pool)
    .await
    .expect("SQLite foreign keys");
    let mut keys: BTreeMap<i64, ForeignKey> = BTreeMap::new();
    for (id, parent, from, to, on_delete) in rows {
        let key = keys.entry(id).or_insert_with(|| ForeignKey {
            columns: Vec::new(),
            table: parent,
            references: Vec::new(),
            on_delete,
        });
        key.columns.push(from);
        // Every key here names its columns; one that did not would point
        // at the parent's primary key, which this makes visible.
        key.references
            .push(to.unwrap_or_else(|| "(primary key)".into()));
    }
    keys.into_values().collect()
}

/// A database of this test's own on the admin URL's server.
struct ScratchDatabase {
    admin: PgConnectOptions,
    name: String,
}

impl ScratchDatabase {
    async fn create(admin_url: &str) -> Self {
        let admin = PgConnectOptions::from_str(admin_url)
            .expect("TEST_POSTGRES_URL must be a postgres:// URL");
        let nanos = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .expect("clock after 1970")
            .subsec_nanos();
        let name = format!("schema_parity_{}_{nanos}", std::process::id());
        let mut conn = PgConnection::connect_with(&admin)
            .await
            .expect("connect to TEST_POSTGRES_URL");
        conn.execute(format!("CREATE DATABASE {name}").as_str())
            .await
            .expect("create the scratch database");
        conn.close().await.ok();
        Self { admin, name }
    }

    async fn pool(&self) -> PgPool {
        PgPoolOptions::new()
            .max_connections(1)
            .connect_with(self.admin.clone().database(&self.name))
            .await
            .expect("connect to the scratch database")
    }

    /// Drops it, or says why not: the server is thrown away after the
    /// suite, so a failed drop (PostgreSQL checkpoints first, which can
    /// fail on a full disk) is a note, not a failed comparison.
    async fn drop(self) {
        let dropped = async {
            let mut conn = PgConnection::connect_with(&self.admin).await?;
            conn.execute(format!("DROP DATABASE IF EXISTS {} WITH (FORCE)", self.name).as_str())
                .await?;
            conn.close().await
        };
        if let Err(e) = dropped.await {
            eprintln!(
                "note: the scratch database {} was not dropped: {e}",
                self.name
            );
        }
    }
}

async fn pg_schema(pool: &PgPool) -> Schema {
    let tables: Vec<String> = sqlx::query_scalar(
        "SELECT table_name::text FROM information_schema.tables
         WHERE table_schema = 'public' AND table_type = 'BASE TABLE'
           AND table_name NOT LIKE '\\_sqlx%'",
    )
    .fetch_all(pool)
    .await
    .expect("list PostgreSQL tables");
    let mut schema = Schema::new();
    for name in tables {
        let table = pg_table(pool, &name).await;
        schema.insert(name, table);
    }
    schema
}

/// `conkey`/`indkey` attribute numbers as column names, in key order.
const COLUMN_NAMES: &str = "ARRAY(SELECT a.attname::text FROM unnest(KEYS) WITH ORDINALITY k(n, i)
     JOIN pg_attribute a ON a.attrelid = REL AND a.attnum = k.n ORDER BY k.i)";

fn column_names(keys: &str, relation: &str) -> String {
    COLUMN_NAMES.replace("KEYS", keys).replace("REL", relation)
}

async fn pg_table(pool: &PgPool, name: &str) -> Table {
    let columns: Vec<(String, String, String)> = sqlx::query_as(
        "SELECT column_name::text, data_type::text, is_nullable::text FROM information_schema.columns
         WHERE table_schema = 'public' AND table_name = $1 ORDER BY ordinal_position",
    )
    .bind(name)
    .fetch_all(pool)
    .await
    .expect("PostgreSQL columns");
    let primary_key: Option<Vec<String>> = sqlx::query_scalar(&format!(
        "SELECT {} FROM pg_constraint c WHERE c.conrelid = $1::regclass AND c.contype = 'p'",
        column_names("c.conkey", "c.conrelid")
    ))
    .bind(name)
    .fetch_optional(pool)
    .await
    .expect("PostgreSQL primary key");
    let mut table = Table {
        columns: columns
            .into_iter()
            // SQLite's implicit rowid, explicit on PostgreSQL where the
            // store orders by it (agent_sessions).
            .filter(|(n, _, _)| n != "rowid")
            .map(|(n, ty, nullable)| (n, ty, nullable == "NO"))
            .collect(),
        primary_key: primary_key.unwrap_or_default(),
        ..Table::default()
    };
    pg_indexes(pool, name, &mut table).await;
    table.foreign_keys = pg_foreign_keys(pool, name).await;
    table.triggers = sqlx::query_scalar(
        "SELECT tgname::text FROM pg_trigger WHERE tgrelid = $1::regclass AND NOT tgisinternal",
    )
    .bind(name)
    .fetch_all(pool)
    .await
    .expect("PostgreSQL triggers")
    .into_iter()
    .collect();
    table
}

/// Unique keys (constraints and unique indexes, not the primary key) and
/// the indexes that back no constraint.
async fn pg_indexes(pool: &PgPool, name: &str, table: &mut Table) {
    let rows: Vec<(String, Vec<String>, bool, bool, bool)> = sqlx::query_as(&format!(
        "SELECT ic.relname::text, {}, i.indisunique, i.indpred IS NOT NULL,
                EXISTS (SELECT 1 FROM pg_constraint c WHERE c.conindid = i.indexrelid)
         FROM pg_index i JOIN pg_class ic ON ic.oid = i.indexrelid
         WHERE i.indrelid = $1::regclass AND NOT i.indisprimary",
        column_names("i.indkey::int2[]", "i.indrelid")
    ))
    .bind(name)
    .fetch_all(pool)
    .await
    .expect("PostgreSQL indexes");
    for (index, columns, unique, partial, backs_constraint) in rows {
        if unique {
            table.unique.insert(columns.clone());
        }
        if !backs_constraint {
            table.indexes.insert(Index {
                name: index,
                columns,
                unique,
                partial,
            });
        }
    }
}

async fn pg_foreign_keys(pool: &PgPool, name: &str) -> BTreeSet<ForeignKey> {
    let rows: Vec<(Vec<String>, String, Vec<String>, String)> = sqlx::query_as(&format!(
        "SELECT {}, c.confrelid::regclass::text, {},
                CASE c.confdeltype WHEN 'c' THEN 'CASCADE' WHEN 'n' THEN 'SET NULL'
                     WHEN 'd' THEN 'SET DEFAULT' WHEN 'r' THEN 'RESTRICT' ELSE 'NO ACTION' END
         FROM pg_constraint c WHERE c.conrelid = $1::regclass AND c.contype = 'f'",
        column_names("c.conkey", "c.conrelid"),
        column_names("c.confkey", "c.confrelid")
    ))
    .bind(name)
    .fetch_all(pool)
    .await
    .expect("PostgreSQL foreign keys");
    rows.into_iter()
        .map(|(columns, table, references, on_delete)| ForeignKey {
            columns,
            table,
            references,
            on_delete,
        })
        .collect()
}
