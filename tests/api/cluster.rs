//! Several instances on one PostgreSQL database (`server::cluster`).
//!
//! Needs `TEST_POSTGRES_URL` (a server where the test may create and drop
//! databases, e.g. `postgres://postgres@127.0.0.1:55432/postgres`); without
//! it each test prints a note and passes. Each test gets a database of its
//! own, dropped at its end.
//!
//! The instances here are the relaying parts of the app (hub, cluster,
//! listener, rules, job locks) on one PostgreSQL database, each with its
//! own SQLite file for the rest of the state.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::Duration;
use switchboard::server::agent::hub::sink::{Next, Sink};
use switchboard::server::cluster::{self, Job};
use switchboard::server::platform::{config::Config, db};
use switchboard::server::AppState;
use tempfile::TempDir;
use tokio::task::JoinHandle;

/// A throwaway PostgreSQL database, dropped (with its connections) when
/// this goes, even after a failed assertion.
struct Database {
    admin_url: String,
    name: String,
    url: String,
}

impl Database {
    /// A new database with the cluster's tables, or `None` (and a note)
    /// without `TEST_POSTGRES_URL`.
    async fn new() -> Option<Self> {
        let Ok(admin_url) = std::env::var("TEST_POSTGRES_URL") else {
            eprintln!("TEST_POSTGRES_URL is not set: cluster test skipped");
            return None;
        };
        let name = format!("sb_cluster_{:016x}", rand::random::<u64>());
        let admin = sqlx::PgPool::connect(&admin_url).await.expect("admin");
        sqlx::query(&format!("CREATE DATABASE {name}"))
            .execute(&admin)
            .await
            .expect("create database");
        admin.close().await;
        let url = with_database(&admin_url, &name);
        let db = sqlx::PgPool::connect(&url).await.expect("test database");
        // What the cluster's queries read of the app's own schema.
        sqlx::raw_sql("CREATE TABLE agent_sessions (id TEXT PRIMARY KEY, ended_at BIGINT)")
            .execute(&db)
            .await
            .expect("sessions table");
        sqlx::raw_sql(include_str!("../../migrations/postgres/0002_cluster.sql"))
            .execute(&db)
            .await
            .expect("cluster tables");
        db.close().await;
        Some(Self {
            admin_url,
            name,
            url,
        })
    }

    /// A connection pool on it, for looking and tampering.
    async fn pool(&self) -> sqlx::PgPool {
        sqlx::PgPool::connect(&self.url).await.expect("pool")
    }
}

impl Drop for Database {
    fn drop(&mut self) {
        let (url, name) = (self.admin_url.clone(), self.name.clone());
        let _ = std::thread::spawn(move || {
            let runtime = tokio::runtime::Builder::new_current_thread()
                .enable_all()
                .build()
                .expect("runtime");
            runtime.block_on(async move {
                if let Ok(admin) = sqlx::PgPool::connect(&url).await {
                    let drop = format!("DROP DATABASE IF EXISTS {name} WITH (FORCE)");
                    let _ = sqlx::query(&drop).execute(&admin).await;
                }
            });
        })
        .join();
    }
}

/// `url` naming database `name` instead of its own.
fn with_database(url: &str, name: &str) -> String {
    let (base, query) = url
        .split_once('?')
        .map_or((url, None), |(b, q)| (b, Some(q)));
    let at = base.rfind('/').expect("a database in the URL");
    let mut out = format!("{}/{name}", &base[..at]);
    if let Some(query) = query {
        out.push('?');
        out.push_str(query);
    }
    out
}

/// One instance: its state (relaying through the database) and its
/// listener's tasks.
struct Instance {
    state: AppState,
    tasks: Vec<JoinHandle<()>>,
    _dir: TempDir,
}

impl Drop for Instance {
    fn drop(&mut self) {
        self.tasks.iter().for_each(JoinHandle::abort);
    }
}

async fn instance(db: &Database) -> Instance {
    let dir = tempfile::tempdir().expect("temp dir");
    let sqlite = format!("sqlite://{}/switchboard.db", dir.path().display());
    let config = Config::from_lookup(|key| match key {
        "PORT" => Some("0".into()),
        "DATABASE_URL" => Some(sqlite.clone()),
        _ => None,
    })
    .expect("config");
    let pool = db::connect(&sqlite).await.expect("sqlite");
    let mut state = AppState::new(pool, config);
    state.cluster = cluster::connect(&db.url, &state.hub)
        .await
        .expect("cluster");
    assert!(state.cluster.is_some(), "a PostgreSQL URL makes a cluster");
    state.load_rules().await.expect("rules");
    let tasks = cluster::start(&state);
    Instance {
        state,
        tasks,
        _dir: dir,
    }
}

/// The next `n` events `sink` gets (id, JSON), waiting up to 5 s.
async fn take(sink: &Sink, n: usize) -> Vec<(u64, String)> {
    let mut got = Vec::new();
    while got.len() < n {
        match sink.next() {
            Next::Frame(frame, _) => {
                let text = std::str::from_utf8(&frame.sse).unwrap().to_owned();
                let data = text
                    .lines()
                    .find_map(|l| l.strip_prefix("data: "))
                    .unwrap_or_default()
                    .to_owned();
                got.push((frame.id, data));
            }
            Next::Wait => {
                tokio::time::timeout(Duration::from_secs(5), sink.notified())
                    .await
                    .unwrap_or_else(|_| panic!("only {} of {n} events came: {got:?}", got.len()));
            }
            Next::Closed | Next::Lagged => panic!("stream ended after {got:?}"),
        }
    }
    got
}

/// Nothing more comes to `sink` for a moment.
async fn nothing_more(sink: &Sink) {
    tokio::time::sleep(Duration::from_millis(300)).await;
    assert!(matches!(sink.next(), Next::Wait), "an event came twice");
}

fn consecutive(got: &[(u64, String)]) -> bool {
    got.windows(2).all(|w| w[1].0 == w[0].0 + 1)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn events_published_on_two_instances_reach_watchers_on_both_in_one_order_once() {
    let Some(db) = Database::new().await else {
        return;
    };
    let (a, b) = (instance(&db).await, instance(&db).await);
    let on_a = cluster::subscribe(&a.state, "s", None).await.unwrap();
    let on_b = cluster::subscribe(&b.state, "s", None).await.unwrap();
    assert!(on_b.needs_snapshot);
    let publish = |state: AppState, who: &'static str| async move {
        for n in 0..25 {
            state
                .hub
                .publish_named("s", "e", &format!("{{\"{who}\":{n}}}"));
            tokio::task::yield_now().await;
        }
    };
    tokio::join!(publish(a.state.clone(), "a"), publish(b.state.clone(), "b"));
    let (got_a, got_b) = (take(&on_a.sink, 50).await, take(&on_b.sink, 50).await);
    assert_eq!(got_a, got_b, "one order on both instances");
    assert!(consecutive(&got_a), "gap-free numbers: {got_a:?}");
    for who in ["a", "b"] {
        let mine: Vec<String> = got_a
            .iter()
            .filter(|(_, d)| d.contains(&format!("\"{who}\"")))
            .map(|(_, d)| d.clone())
            .collect();
        let sent: Vec<String> = (0..25).map(|n| format!("{{\"{who}\":{n}}}")).collect();
        assert_eq!(
            mine, sent,
            "each instance's events in the order it published them"
        );
    }
    nothing_more(&on_a.sink).await;
    nothing_more(&on_b.sink).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn last_event_id_is_replayed_from_the_database_on_another_instance() {
    let Some(db) = Database::new().await else {
        return;
    };
    let (a, b) = (instance(&db).await, instance(&db).await);
    let on_a = cluster::subscribe(&a.state, "s", None).await.unwrap();
    for n in 1..=5 {
        a.state
            .hub
            .publish_named("s", "e", &format!("{{\"n\":{n}}}"));
    }
    let seen = take(&on_a.sink, 5).await;
    // A watcher of A reconnects to B, which never had this session.
    let on_b = cluster::subscribe(&b.state, "s", Some(seen[1].0))
        .await
        .unwrap();
    assert!(!on_b.needs_snapshot, "replayed, not a snapshot");
    let replayed: Vec<u64> = on_b.replay.iter().map(|f| f.id).collect();
    assert_eq!(replayed, [seen[2].0, seen[3].0, seen[4].0]);
    a.state.hub.publish_named("s", "e", "{\"n\":6}");
    let live = take(&on_b.sink, 1).await;
    assert_eq!(live, [(seen[4].0 + 1, "{\"n\":6}".to_owned())]);
    nothing_more(&on_b.sink).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn frames_too_large_for_a_notification_cross_through_the_tables() {
    let Some(db) = Database::new().await else {
        return;
    };
    let (a, b) = (instance(&db).await, instance(&db).await);
    let on_b = cluster::subscribe(&b.state, "s", None).await.unwrap();
    let mut list = b.state.hub.subscribe_list();
    let mut workflow = b.state.hub.subscribe_workflow("w");
    let big = format!("{{\"blob\":\"{}\"}}", "x".repeat(20 * 1024));
    a.state.hub.publish_named("s", "e", "{\"small\":1}");
    a.state.hub.publish_named("s", "e", &big);
    a.state.hub.publish_named("s", "e", "{\"small\":2}");
    let got = take(&on_b.sink, 3).await;
    assert_eq!(got[1].1, big);
    assert!(consecutive(&got));
    let change = serde_json::json!({"type": "updated", "blob": "y".repeat(20 * 1024)});
    a.state
        .hub
        .publish_list("s", &serde_json::json!({"type": "opened"}));
    a.state.hub.publish_list("s", &change);
    a.state.hub.publish_workflow("w", "workflow_changed", &big);
    let wait = Duration::from_secs(5);
    let first = tokio::time::timeout(wait, list.recv())
        .await
        .unwrap()
        .unwrap();
    let second = tokio::time::timeout(wait, list.recv())
        .await
        .unwrap()
        .unwrap();
    assert_eq!(
        (first.name.as_str(), second.name.as_str()),
        ("opened", "updated")
    );
    assert_eq!(second.json, change.to_string());
    let frame = tokio::time::timeout(wait, workflow.recv())
        .await
        .unwrap()
        .unwrap();
    assert!(std::str::from_utf8(&frame.sse).unwrap().contains(&big));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_rules_change_on_one_instance_reloads_the_others_within_a_second() {
    let Some(db) = Database::new().await else {
        return;
    };
    let (a, b) = (instance(&db).await, instance(&db).await);
    let before_b = b.state.rules();
    let before_a = a.state.rules();
    a.state.reload_rules().await.unwrap();
    let deadline = tokio::time::Instant::now() + Duration::from_secs(1);
    while Arc::ptr_eq(&before_b, &b.state.rules()) {
        assert!(
            tokio::time::Instant::now() < deadline,
            "B did not reload in 1 s"
        );
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    // A reloaded once, by itself: its own notification is not for it.
    let after_a = a.state.rules();
    assert!(!Arc::ptr_eq(&before_a, &after_a));
    tokio::time::sleep(Duration::from_millis(300)).await;
    assert!(Arc::ptr_eq(&after_a, &a.state.rules()), "A reloaded again");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_periodic_job_runs_on_one_instance_at_a_time() {
    let Some(db) = Database::new().await else {
        return;
    };
    let (a, b) = (instance(&db).await, instance(&db).await);
    let runs = Arc::new(AtomicUsize::new(0));
    let job = |runs: Arc<AtomicUsize>| async move {
        runs.fetch_add(1, Ordering::SeqCst);
        tokio::time::sleep(Duration::from_millis(300)).await;
    };
    let (on_a, on_b) = tokio::join!(
        cluster::once(&a.state, Job::IdleSweep, job(runs.clone())),
        cluster::once(&b.state, Job::IdleSweep, job(runs.clone())),
    );
    assert_eq!(runs.load(Ordering::SeqCst), 1, "the sweep ran once");
    assert!(on_a.unwrap().is_some() != on_b.unwrap().is_some());
    // Another job is not held up, and the lock is free again afterwards.
    let other = cluster::once(&b.state, Job::Scheduler, async {}).await;
    assert!(other.unwrap().is_some());
    let again = cluster::once(&b.state, Job::IdleSweep, async {}).await;
    assert!(again.unwrap().is_some());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_listener_that_reconnects_reads_what_it_missed() {
    let Some(db) = Database::new().await else {
        return;
    };
    let (a, b) = (instance(&db).await, instance(&db).await);
    let on_b = cluster::subscribe(&b.state, "s", None).await.unwrap();
    a.state.hub.publish_named("s", "e", "{\"n\":1}");
    let first = take(&on_b.sink, 1).await[0].0;
    // Two events stored while B's listener was away (no notification
    // reaches it), then its connection is cut.
    let pool = db.pool().await;
    sqlx::query("INSERT INTO agent_sessions VALUES ('s', NULL)")
        .execute(&pool)
        .await
        .unwrap();
    for (seq, n) in [(first + 1, 2), (first + 2, 3)] {
        sqlx::query("INSERT INTO session_events VALUES ('s', $1, 'e', $2, 0)")
            .bind(seq as i64)
            .bind(format!("{{\"n\":{n}}}"))
            .execute(&pool)
            .await
            .unwrap();
    }
    let listener = format!(
        "switchboard-listener-{}",
        b.state.cluster.as_ref().unwrap().instance()
    );
    let cut: Vec<bool> = sqlx::query_scalar(
        "SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE application_name = $1",
    )
    .bind(&listener)
    .fetch_all(&pool)
    .await
    .unwrap();
    assert_eq!(cut, [true], "B's listener connection was found and cut");
    let got = take(&on_b.sink, 2).await;
    assert_eq!(
        got,
        [
            (first + 1, "{\"n\":2}".to_owned()),
            (first + 2, "{\"n\":3}".to_owned())
        ]
    );
    // And it hears new events again.
    a.state.hub.publish_named("s", "e", "{\"n\":4}");
    assert_eq!(take(&on_b.sink, 1).await[0].0, first + 3);
    let health = b.state.cluster.as_ref().unwrap().health();
    assert_eq!(health["listening"], true);
    assert!(health["lastNotificationAgeMs"].is_u64());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_ended_session_closes_its_watchers_on_every_instance_after_its_last_event() {
    let Some(db) = Database::new().await else {
        return;
    };
    let (a, b) = (instance(&db).await, instance(&db).await);
    let on_a = cluster::subscribe(&a.state, "s", None).await.unwrap();
    let on_b = cluster::subscribe(&b.state, "s", None).await.unwrap();
    a.state.hub.publish_named("s", "ended", "{}");
    a.state.hub.close("s");
    for sink in [&on_a.sink, &on_b.sink] {
        assert_eq!(take(sink, 1).await[0].1, "{}");
        let deadline = tokio::time::Instant::now() + Duration::from_secs(5);
        while !matches!(sink.next(), Next::Closed) {
            assert!(tokio::time::Instant::now() < deadline, "stream not closed");
            tokio::time::sleep(Duration::from_millis(10)).await;
        }
    }
    assert_eq!(a.state.hub.live_sessions(), 0);
    assert_eq!(b.state.hub.live_sessions(), 0);
}
