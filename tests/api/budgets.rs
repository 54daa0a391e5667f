//! What one session may pile up over many requests (issue #33): its own
//! checks, its calls and results per minute and in all, the playground
//! sessions a teacher may open, and identity checks per account.

use crate::helpers::{spawn_app, spawn_app_with, TestApp, TEACHER};
use crate::sessions::{call, idv, open, Session};
use serde_json::{json, Value};

async fn patch_state(app: &TestApp, s: &Session, body: Value) -> (u16, Value) {
    let res = app
        .client
        .patch(app.url(&format!("/api/sessions/{}/state", s.id)))
        .bearer_auth(&s.token)
        .json(&body)
        .send()
        .await
        .unwrap();
    (
        res.status().as_u16(),
        res.json().await.unwrap_or(Value::Null),
    )
}

/// 32 new check names, numbered from `from`.
fn checks(from: usize) -> Value {
    let map: serde_json::Map<String, Value> = (from..from + 32)
        .map(|i| (format!("attacker_check_{i:04}"), json!(true)))
        .collect();
    json!({ "checks": map })
}

async fn stored_state(app: &TestApp, s: &Session) -> Value {
    let raw: String = sqlx::query_scalar("SELECT state FROM agent_sessions WHERE id = $1")
        .bind(&s.id)
        .fetch_one(&app.state.db)
        .await
        .unwrap();
    serde_json::from_str(&raw).unwrap()
}

async fn recorded_calls(app: &TestApp, s: &Session) -> i64 {
    sqlx::query_scalar("SELECT COUNT(*) FROM tool_calls WHERE session_id = $1")
        .bind(&s.id)
        .fetch_one(&app.state.db)
        .await
        .unwrap()
}

#[tokio::test]
async fn patches_adding_new_checks_stop_at_the_cap_with_nothing_stored() {
    let app = spawn_app().await;
    let key = app.api_key().await;
    let s = open(&app, &key, "idv").await;
    let mut refused_at = None;
    for round in 0..400 {
        let (status, body) = patch_state(&app, &s, checks(round * 32)).await;
        if status != 200 {
            assert_eq!(status, 422, "{body}");
            assert_eq!(body["Invalid"]["field"], "checks");
            let rule = body["Invalid"]["rule"].as_str().unwrap();
            assert!(rule.contains("at most 64"), "{rule}");
            refused_at = Some(round);
            break;
        }
    }
    assert_eq!(refused_at, Some(2), "64 own checks fit, 96 do not");
    let state = stored_state(&app, &s).await;
    assert_eq!(state["checks"].as_object().unwrap().len(), 64);
    // Declared checks are never counted against the cap, and the backend's
    // own checks may still change value.
    let (status, body) = patch_state(
        &app,
        &s,
        json!({"checks": {"identity_verified": true, "attacker_check_0000": false}}),
    )
    .await;
    assert_eq!(status, 200, "{body}");
    assert_eq!(body["state"]["checks"]["attacker_check_0000"], false);
    let listed = app
        .client
        .get(app.url("/api/sessions"))
        .bearer_auth(&key)
        .send()
        .await
        .unwrap()
        .text()
        .await
        .unwrap();
    assert!(
        listed.len() < 20_000,
        "the list stays small: {}",
        listed.len()
    );
}

#[tokio::test]
async fn calls_past_the_writes_per_minute_are_429_until_the_window_moves() {
    let app = spawn_app_with(&[("SESSION_WRITES_PER_MINUTE", "5")]).await;
    let key = app.api_key().await;
    let s = open(&app, &key, "idv").await;
    for _ in 0..5 {
        assert_eq!(call(&app, &s, "get_server_time", json!({})).await.0, 200);
    }
    let res = app
        .client
        .post(app.url(&format!("/api/sessions/{}/tool-calls", s.id)))
        .bearer_auth(&s.token)
        .json(&json!({"name": "get_server_time", "arguments": {}}))
        .send()
        .await
        .unwrap();
    assert_eq!(res.status(), 429);
    let wait: u64 = res.headers()["retry-after"]
        .to_str()
        .unwrap()
        .parse()
        .unwrap();
    assert!((1..=60).contains(&wait), "{wait}");
    let body: Value = res.json().await.unwrap();
    assert!(
        body["RateLimited"]["limit"]
            .as_str()
            .unwrap()
            .contains("5 calls, results, state changes and turns per minute"),
        "{body}"
    );
    assert_eq!(
        recorded_calls(&app, &s).await,
        5,
        "the refused call is not stored"
    );
    // State changes count too; another session has its own window.
    assert_eq!(
        patch_state(&app, &s, json!({"checks": {"x": true}}))
            .await
            .0,
        429
    );
    let other = open(&app, &key, "idv").await;
    assert_eq!(
        call(&app, &other, "get_server_time", json!({})).await.0,
        200
    );
    app.state.clock.advance(61);
    assert_eq!(call(&app, &s, "get_server_time", json!({})).await.0, 200);
}

#[tokio::test]
async fn a_session_that_has_recorded_its_calls_is_refused_for_good() {
    let app = spawn_app_with(&[("SESSION_CALLS_MAX", "3")]).await;
    let key = app.api_key().await;
    let s = open(&app, &key, "idv").await;
    for _ in 0..3 {
        assert_eq!(call(&app, &s, "get_server_time", json!({})).await.0, 200);
    }
    let (status, body) = call(&app, &s, "get_server_time", json!({})).await;
    assert_eq!(status, 429);
    assert_eq!(
        body,
        json!({"BudgetSpent": {"limit": "3 tool calls per session"}})
    );
    app.state.clock.advance(3_600);
    assert_eq!(call(&app, &s, "get_server_time", json!({})).await.0, 429);
    assert_eq!(recorded_calls(&app, &s).await, 3);
    // The budget is the session's: a new one starts afresh.
    let fresh = open(&app, &key, "idv").await;
    assert_eq!(
        call(&app, &fresh, "get_server_time", json!({})).await.0,
        200
    );
}

#[tokio::test]
async fn arguments_and_results_count_against_the_bytes_a_session_may_store() {
    let app = spawn_app_with(&[("SESSION_STORED_MAX_BYTES", "1500")]).await;
    let key = app.api_key().await;
    let s = open(&app, &key, "idv").await;
    let padded = json!({"accountNumber": "1".repeat(900), "sortCode": "12-34-56", "dateOfBirth": "1985-04-12"});
    let (status, _) = call(&app, &s, "perform_idv_check", padded.clone()).await;
    assert_eq!(status, 200);
    let (status, body) = call(&app, &s, "perform_idv_check", padded).await;
    assert_eq!(status, 429, "{body}");
    assert_eq!(
        body["BudgetSpent"]["limit"],
        "1500 bytes of call arguments and results per session"
    );
    assert_eq!(recorded_calls(&app, &s).await, 1);
}

#[tokio::test]
async fn failed_identity_checks_lock_the_account_across_sessions() {
    let app = spawn_app().await;
    let key = app.api_key().await;
    let wrong =
        json!({"accountNumber": "12345678", "sortCode": "12-34-56", "dateOfBirth": "1999-01-01"});
    // Each session locks itself after 5 failures; the account locks after
    // 10 in an hour, whichever sessions made them.
    for _ in 0..2 {
        let s = open(&app, &key, "idv").await;
        for _ in 0..5 {
            let (status, body) = call(&app, &s, "perform_idv_check", wrong.clone()).await;
            assert_eq!((status, body["allowed"].clone()), (200, json!(true)));
            assert_eq!(body["result"]["verified"], false);
        }
    }
    let s = open(&app, &key, "idv").await;
    let (status, body) = call(&app, &s, "perform_idv_check", idv()).await;
    assert_eq!((status, body["allowed"].clone()), (200, json!(false)));
    let reason = body["reason"].as_str().unwrap();
    assert!(
        reason.contains("identity checks for account 12345678 are locked after 10 failed attempts"),
        "{reason}"
    );
    // Another account is not locked, and an hour later this one is free.
    let other =
        json!({"accountNumber": "87654321", "sortCode": "65-43-21", "dateOfBirth": "1990-01-01"});
    let (_, body) = call(&app, &s, "perform_idv_check", other).await;
    assert_eq!(body["allowed"], true, "{body}");
    app.state.clock.advance(3_600);
    let (_, body) = call(&app, &s, "perform_idv_check", idv()).await;
    assert_eq!(body["result"]["verified"], true, "{body}");
}

#[tokio::test]
async fn a_teacher_may_open_only_so_many_playground_sessions_an_hour() {
    let app = spawn_app().await;
    app.login(TEACHER).await;
    let limit = switchboard::domain::limits::PLAYGROUND_SESSIONS_PER_HOUR;
    for _ in 0..limit {
        let res = app
            .rpc("open_playground_session", &[("workflow_id", "idv")])
            .await;
        assert_eq!(res.status(), 200);
    }
    let res = app
        .rpc("open_playground_session", &[("workflow_id", "idv")])
        .await;
    assert_eq!(res.status(), 429);
    assert!(res.headers().contains_key("retry-after"));
    let agent_sessions = || async {
        sqlx::query_scalar::<_, i64>("SELECT COUNT(*) FROM agent_sessions")
            .fetch_one(&app.state.db)
            .await
            .unwrap()
    };
    let sessions_before = agent_sessions().await;
    assert_eq!(
        sessions_before, limit as i64,
        "the refused one was not opened"
    );
    app.state.clock.advance(3_601);
    let res = app
        .rpc("open_playground_session", &[("workflow_id", "idv")])
        .await;
    assert_eq!(res.status(), 200);
    assert_eq!(agent_sessions().await, sessions_before + 1);
}

#[tokio::test]
async fn an_ended_session_frees_its_write_window() {
    let app = spawn_app().await;
    let key = app.api_key().await;
    let s = open(&app, &key, "idv").await;
    call(&app, &s, "get_server_time", json!({})).await;
    let now = app.state.clock.now();
    assert_eq!(app.state.budgets.sessions_tracked(now).await.unwrap(), 1);
    let res = app
        .client
        .post(app.url(&format!("/api/sessions/{}/end", s.id)))
        .bearer_auth(&s.token)
        .send()
        .await
        .unwrap();
    assert!(res.status().is_success(), "{}", res.status());
    let now = app.state.clock.now();
    assert_eq!(app.state.budgets.sessions_tracked(now).await.unwrap(), 0);
}
