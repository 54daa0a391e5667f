//! Several instances on one PostgreSQL database (`server::cluster`): two
//! apps (`spawn_app` and its `peer`) serving one database, each with its
//! own hub, rules and listener.
//!
//! Needs `TEST_POSTGRES_URL` (`make test-postgres` sets it); without it
//! each test prints a note and passes (on SQLite there is one instance).

use crate::freed::end;
use crate::helpers::{json_of, two_instances, TestApp, ADMIN};
use crate::sessions::{call, idv, open, Session};
use crate::watch::Watch;
use serde_json::json;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::Duration;
use switchboard::server::cluster::{self, Job};

/// Two instances on one new PostgreSQL database, or `None` (and a note)
/// without `TEST_POSTGRES_URL`.
async fn two() -> Option<(TestApp, TestApp)> {
    two_instances(module_path!(), &[]).await
}

/// Which of the two instances watches.
enum On {
    A,
    B,
}

/// Two instances (A, B), a session opened in `idv` on A, and a watcher of
/// it on `on` that has read its snapshot: (A, B, the session, the
/// watcher); `None` (and a note) without `TEST_POSTGRES_URL`.
async fn watched_session(on: On) -> Option<(TestApp, TestApp, Session, Watch)> {
    let (a, b) = two().await?;
    let key = a.api_key().await;
    let s = open(&a, &key, "idv").await;
    let watcher = Watch::snapshot(if matches!(on, On::A) { &a } else { &b }, &s).await;
    Some((a, b, s, watcher))
}

fn consecutive_after(first: u64, events: &[(u64, String, String)]) -> bool {
    events
        .iter()
        .enumerate()
        .all(|(i, (id, _, _))| *id == first + 1 + i as u64)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn calls_on_one_instance_reach_watchers_on_both_in_one_order_exactly_once() {
    let Some((a, _b, s, mut on_b)) = watched_session(On::B).await else {
        return;
    };
    let mut on_a = Watch::snapshot(&a, &s).await;
    let calls = (0..20).map(|_| call(&a, &s, "get_server_time", json!({})));
    for (status, _) in futures_util::future::join_all(calls).await {
        assert_eq!(status, 200);
    }
    let (status, _) = call(&a, &s, "perform_idv_check", idv()).await;
    assert_eq!(status, 200);
    let done = |w: &Watch| {
        w.live()
            .iter()
            .any(|(_, _, d)| d.contains("perform_idv_check"))
    };
    on_a.until(done).await;
    on_b.until(done).await;
    // The idv call's state change follows it.
    let one_more = |w: &Watch| {
        w.live()
            .last()
            .is_some_and(|(_, n, _)| n == "workflow_update")
    };
    on_a.until(one_more).await;
    on_b.until(one_more).await;
    let (live_a, live_b) = (on_a.live(), on_b.live());
    assert!(live_b.len() >= 22, "{live_b:?}");
    assert!(
        consecutive_after(on_b.snapshot_id(), &live_b),
        "consecutive, none twice: {live_b:?}"
    );
    // Both instances' watchers see the same events with the same ids.
    let common = live_a.len().min(live_b.len());
    assert_eq!(live_a[..common], live_b[..common]);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn last_event_id_from_one_instance_is_replayed_by_the_other() {
    let Some((a, b, s, on_a)) = watched_session(On::A).await else {
        return;
    };
    let seen = on_a.snapshot_id();
    drop(on_a);
    let (status, _) = call(&a, &s, "perform_idv_check", idv()).await;
    assert_eq!(status, 200);
    // The watcher's connection now lands on B, which never had this
    // session's channel.
    let mut on_b = Watch::session(&b, &s, Some(seen)).await;
    on_b.until(|w| w.events().len() >= 2).await;
    assert!(!on_b.text.contains("\"snapshot\""), "{}", on_b.text);
    let ids: Vec<u64> = on_b.events().iter().map(|e| e.0).collect();
    assert_eq!(ids, [seen + 1, seen + 2]);
    let (status, _) = call(&a, &s, "get_server_time", json!({})).await;
    assert_eq!(status, 200);
    on_b.until(|w| w.events().len() >= 3).await;
    let ids: Vec<u64> = on_b.events().iter().map(|e| e.0).collect();
    assert_eq!(ids, [seen + 1, seen + 2, seen + 3]);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_event_of_20_kb_crosses_to_the_other_instance_whole() {
    let Some((a, _b, s, mut on_b)) = watched_session(On::B).await else {
        return;
    };
    let big = json!({"blob": "x".repeat(20 * 1024)}).to_string();
    a.state.hub.publish_named(&s.id, "big", &big);
    let (status, _) = call(&a, &s, "get_server_time", json!({})).await;
    assert_eq!(status, 200);
    on_b.until(|w| w.live().len() >= 2).await;
    let live = on_b.live();
    assert_eq!(
        (live[0].1.as_str(), live[0].2.as_str()),
        ("big", big.as_str())
    );
    assert_eq!(live[1].1, "tool_call");
    assert!(consecutive_after(on_b.snapshot_id(), &live));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_session_list_on_one_instance_hears_of_sessions_opened_on_the_other() {
    let Some((a, b)) = two().await else {
        return;
    };
    let admin = b.signed_in(ADMIN).await;
    let mut list = Watch::open(&b, &admin, "/api/sessions/events", None).await;
    let key = a.api_key().await;
    let s = open(&a, &key, "idv").await;
    list.until(|w| w.text.contains(&s.id)).await;
    let opened = list.events();
    assert_eq!(opened[0].1, "opened");
    end(&a, &s).await;
    list.until(|w| w.events().iter().any(|e| e.1 == "ended"))
        .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_session_ended_on_one_instance_ends_its_streams_on_the_other() {
    let Some((a, b, s, mut on_b)) = watched_session(On::B).await else {
        return;
    };
    end(&a, &s).await;
    on_b.until(|w| w.live().iter().any(|e| e.1 == "ended"))
        .await;
    assert!(on_b.ends().await, "B's stream ended after `ended`");
    let deadline = tokio::time::Instant::now() + Duration::from_secs(2);
    while a.state.hub.live_sessions() + b.state.hub.live_sessions() > 0 {
        assert!(tokio::time::Instant::now() < deadline, "channels kept");
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_bindings_change_on_one_instance_is_in_force_on_the_other_within_a_second() {
    let Some((a, b)) = two().await else {
        return;
    };
    assert!(!b
        .state
        .rules()
        .bound_at("idv", None)
        .contains(&"check_balance".to_owned()));
    let admin = a.signed_in(ADMIN).await;
    let mut doc =
        serde_json::to_value(switchboard::domain::bindings::ToolBindings::demo()).unwrap();
    doc["workflows"]["idv"]
        .as_array_mut()
        .unwrap()
        .push(json!("check_balance"));
    let before_a = a.state.rules();
    assert_eq!(a.save_bindings(&admin, 1, &doc).await.status(), 200);
    let deadline = tokio::time::Instant::now() + Duration::from_secs(1);
    while !b
        .state
        .rules()
        .bound_at("idv", None)
        .contains(&"check_balance".to_owned())
    {
        assert!(
            tokio::time::Instant::now() < deadline,
            "not in force on B after 1 s"
        );
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    // A reloaded itself once; its own notification did not reload it again.
    let after_a = a.state.rules();
    assert!(!Arc::ptr_eq(&before_a, &after_a));
    tokio::time::sleep(Duration::from_millis(300)).await;
    assert!(Arc::ptr_eq(&after_a, &a.state.rules()), "A reloaded twice");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_periodic_job_runs_on_one_instance_at_a_time() {
    let Some((a, b)) = two().await else {
        return;
    };
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
    assert!(cluster::once(&b.state, Job::Scheduler, async {})
        .await
        .unwrap()
        .is_some());
    assert!(cluster::once(&b.state, Job::IdleSweep, async {})
        .await
        .unwrap()
        .is_some());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_listener_whose_connection_was_cut_reads_what_it_missed() {
    let Some((a, b, s, mut on_b)) = watched_session(On::B).await else {
        return;
    };
    let last = on_b.snapshot_id();
    // Two events stored while B's listener was away (no notification
    // reaches it), then its connection is cut.
    let pg = sqlx::PgPool::connect(a.database_url()).await.unwrap();
    for (seq, n) in [(last + 1, 1), (last + 2, 2)] {
        sqlx::query("INSERT INTO session_events VALUES ($1, $2, 'missed', $3, 0)")
            .bind(&s.id)
            .bind(seq as i64)
            .bind(format!("{{\"n\":{n}}}"))
            .execute(&pg)
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
    .fetch_all(&pg)
    .await
    .unwrap();
    assert_eq!(cut, [true], "B's listener connection was found and cut");
    on_b.until(|w| w.live().len() >= 2).await;
    let missed: Vec<(u64, String)> = on_b.live().into_iter().map(|e| (e.0, e.2)).collect();
    assert_eq!(
        missed,
        [
            (last + 1, "{\"n\":1}".to_owned()),
            (last + 2, "{\"n\":2}".to_owned())
        ]
    );
    // It hears new events again, and says so.
    let (status, _) = call(&a, &s, "get_server_time", json!({})).await;
    assert_eq!(status, 200);
    on_b.until(|w| w.live().len() >= 3).await;
    assert_eq!(on_b.live()[2].0, last + 3);
    let health = json_of(b.client.get(b.url("/healthz"))).await;
    assert_eq!(health["events"]["listening"], true, "{health}");
    assert!(
        health["events"]["lastNotificationAgeMs"].is_u64(),
        "{health}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn stored_events_are_pruned_except_an_open_sessions_newest() {
    let Some((a, _b)) = two().await else {
        return;
    };
    let key = a.api_key().await;
    let open_one = open(&a, &key, "idv").await;
    let purged = open(&a, &key, "idv").await;
    let (status, _) = call(&a, &open_one, "get_server_time", json!({})).await;
    assert_eq!(status, 200);
    let pg = sqlx::PgPool::connect(a.database_url()).await.unwrap();
    // Everything stored so far is two hours old; one session is gone.
    sqlx::query("UPDATE session_events SET created_at = created_at - 7200")
        .execute(&pg)
        .await
        .unwrap();
    sqlx::query("DELETE FROM agent_sessions WHERE id = $1")
        .bind(&purged.id)
        .execute(&pg)
        .await
        .unwrap();
    let newest: i64 =
        sqlx::query_scalar("SELECT MAX(seq) FROM session_events WHERE session_id = $1")
            .bind(&open_one.id)
            .fetch_one(&pg)
            .await
            .unwrap();
    assert!(cluster::prune(&a.state).await.unwrap() >= 2);
    let left: Vec<(String, i64)> = sqlx::query_as("SELECT session_id, seq FROM session_events")
        .fetch_all(&pg)
        .await
        .unwrap();
    assert_eq!(left, [(open_one.id.clone(), newest)]);
    // Its numbering goes on from there.
    let (status, _) = call(&a, &open_one, "get_server_time", json!({})).await;
    assert_eq!(status, 200);
    let next: i64 = sqlx::query_scalar("SELECT MAX(seq) FROM session_events WHERE session_id = $1")
        .bind(&open_one.id)
        .fetch_one(&pg)
        .await
        .unwrap();
    assert_eq!(next, newest + 1);
}
