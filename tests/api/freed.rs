//! Ended sessions are freed: their streams close after `ended`, the hub and
//! the lock map forget them, and watch snapshots stay small however many
//! calls a session made.

use crate::helpers::{spawn_app, TestApp};
use crate::sessions::{call, open, read_events, subscribe, Session};
use serde_json::{json, Value};
use std::time::Duration;

/// Ends `s` as its agent does; asserts 204.
pub async fn end(app: &TestApp, s: &Session) {
    let res = app
        .client
        .post(app.url(&format!("/api/sessions/{}/end", s.id)))
        .bearer_auth(&s.token)
        .send()
        .await
        .unwrap();
    assert_eq!(res.status(), 204);
}

/// Waits until the response body ends; false if it is still open after 2 s.
pub async fn ends(mut res: reqwest::Response) -> bool {
    let deadline = tokio::time::Instant::now() + Duration::from_secs(2);
    loop {
        match tokio::time::timeout_at(deadline, res.chunk()).await {
            Ok(Ok(Some(_))) => continue,
            Ok(_) => return true,
            Err(_) => return false,
        }
    }
}

#[tokio::test]
async fn ending_a_session_sends_ended_then_closes_its_stream() {
    let app = spawn_app().await;
    let key = app.api_key().await;
    let s = open(&app, &key, "idv").await;
    call(&app, &s, "get_server_time", json!({})).await;
    let res = subscribe(&app, &s, Some(app.state.hub.base() + 2)).await;
    end(&app, &s).await;
    let mut res = res;
    let mut text = String::new();
    let deadline = tokio::time::Instant::now() + Duration::from_secs(2);
    while let Ok(Ok(Some(chunk))) = tokio::time::timeout_at(deadline, res.chunk()).await {
        text.push_str(&String::from_utf8_lossy(&chunk));
    }
    assert!(text.contains("\"type\":\"ended\""), "{text}");
    assert!(
        tokio::time::Instant::now() < deadline,
        "the stream stayed open"
    );
    assert_eq!(app.state.hub.live_sessions(), 0);
    assert_eq!(app.state.session_locks(), 0);
}

#[tokio::test]
async fn many_sessions_opened_watched_and_ended_leave_nothing_live() {
    let app = spawn_app().await;
    let key = app.api_key().await;
    for n in 0..200 {
        let s = open(&app, &key, "idv").await;
        call(&app, &s, "get_server_time", json!({})).await;
        if n % 20 == 0 {
            let res = subscribe(&app, &s, None).await;
            end(&app, &s).await;
            assert!(ends(res).await);
        } else {
            end(&app, &s).await;
        }
        // Calls on an ended session are refused and leave no lock behind.
        assert_eq!(call(&app, &s, "get_server_time", json!({})).await.0, 409);
    }
    assert_eq!(app.state.hub.live_sessions(), 0);
    assert_eq!(app.state.session_locks(), 0);
}

#[tokio::test]
async fn watching_an_ended_session_gives_its_final_snapshot_and_ends() {
    let app = spawn_app().await;
    let key = app.api_key().await;
    let s = open(&app, &key, "idv").await;
    end(&app, &s).await;
    let events = read_events(subscribe(&app, &s, None).await, 2).await;
    assert_eq!(events.len(), 1);
    assert_eq!(events[0].1["type"], "snapshot");
    assert_eq!(events[0].1["data"]["ended"], true);
    // Why it ended, as its `ended` event said.
    assert_eq!(events[0].1["data"]["endReason"], "ended by agent");
    assert!(ends(subscribe(&app, &s, Some(app.state.hub.base() + 1)).await).await);
    assert_eq!(app.state.hub.live_sessions(), 0);
}

/// Records `count` calls for `s` straight in the database, each with about
/// `arg_bytes` of arguments.
async fn fill_calls(app: &TestApp, s: &Session, count: usize, arg_bytes: usize) {
    let arguments = json!({"note": "n".repeat(arg_bytes)}).to_string();
    let mut tx = app.state.db.begin().await.unwrap();
    for n in 0..count {
        sqlx::query(
            "INSERT INTO tool_calls (session_id, at_ms, workflow, tool, arguments, outcome, result, reason, duration_us)
             VALUES ($1, $2, 'idv', 'manage_recent_interactions', $3, 'allowed', '{\"ok\":true}', NULL, 5)",
        )
        .bind(&s.id)
        .bind(n as i64)
        .bind(&arguments)
        .execute(&mut *tx)
        .await
        .unwrap();
    }
    tx.commit().await.unwrap();
}

#[tokio::test]
async fn a_new_watcher_of_a_session_with_10000_calls_gets_under_1_mb_before_live_events() {
    let app = spawn_app().await;
    let key = app.api_key().await;
    let s = open(&app, &key, "idv").await;
    fill_calls(&app, &s, 10_000, 5_000).await;
    let mut res = subscribe(&app, &s, None).await;
    let mut text = String::new();
    while !text.contains("\n\n") {
        let chunk = tokio::time::timeout(Duration::from_secs(5), res.chunk())
            .await
            .unwrap()
            .unwrap()
            .unwrap();
        text.push_str(&String::from_utf8_lossy(&chunk));
    }
    assert!(text.len() < 1_000_000, "{} bytes", text.len());
    let data = text.lines().find_map(|l| l.strip_prefix("data: ")).unwrap();
    let snapshot: Value = serde_json::from_str(data).unwrap();
    let calls = snapshot["data"]["calls"].as_array().unwrap();
    assert_eq!(calls.len(), 50);
    assert!(calls.iter().all(|c| c["truncated"] == true));
    assert!(calls[0]["arguments"].as_str().unwrap().ends_with('…'));
}

#[tokio::test]
async fn older_calls_are_paged_in_full_oldest_first() {
    let app = spawn_app().await;
    let key = app.api_key().await;
    let s = open(&app, &key, "idv").await;
    fill_calls(&app, &s, 250, 3_000).await;
    let page = |before: Option<i64>| {
        let mut url = format!("/api/sessions/{}/calls?limit=100", s.id);
        if let Some(b) = before {
            url.push_str(&format!("&before={b}"));
        }
        app.client.get(app.url(&url)).bearer_auth(&s.token).send()
    };
    let mut seen = Vec::new();
    let mut before = None;
    loop {
        let body: Value = page(before).await.unwrap().json().await.unwrap();
        let calls = body["calls"].as_array().unwrap();
        assert!(calls
            .iter()
            .all(|c| c.get("truncated").is_none() && c["arguments"].is_object()));
        let ids: Vec<i64> = calls.iter().map(|c| c["id"].as_i64().unwrap()).collect();
        assert!(ids.windows(2).all(|w| w[0] < w[1]));
        seen.splice(0..0, ids);
        match body["before"].as_i64() {
            Some(next) => before = Some(next),
            None => break,
        }
    }
    assert_eq!(seen.len(), 250);
    let other = open(&app, &key, "idv").await;
    let res = app
        .client
        .get(app.url(&format!("/api/sessions/{}/calls", s.id)))
        .bearer_auth(&other.token)
        .send()
        .await
        .unwrap();
    assert_eq!(res.status(), 403);
}
