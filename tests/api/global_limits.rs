//! Two instances on one PostgreSQL database (issue #39): a session's calls
//! and state changes made through both at once lose nothing and keep its
//! caps (the session's call lock is held in the database), and the sign-in
//! throttle and a session's writes per minute count across both (their
//! windows are rows of the database). Each test needs `TEST_POSTGRES_URL`
//! and says it is skipped without it: SQLite serves one instance.

use crate::helpers::{new_client, retry_after, two_instances, TestApp, ADMIN};
use crate::sessions::{open, Session};
use futures_util::future::join_all;
use serde_json::{json, Value};
use switchboard::domain::limits::LOGIN_PAIR_ATTEMPTS;

/// A request of session `s`'s backend to `app`.
async fn request(
    app: &TestApp,
    s: &Session,
    method: &str,
    path: &str,
    body: &Value,
) -> reqwest::Response {
    let url = app.url(&format!("/api/sessions/{}/{path}", s.id));
    let req = match method {
        "PATCH" => app.client.patch(url),
        _ => app.client.post(url),
    };
    req.bearer_auth(&s.token).json(body).send().await.unwrap()
}

/// [`request`]: its status and body.
async fn send(app: &TestApp, s: &Session, method: &str, path: &str, body: Value) -> (u16, Value) {
    let res = request(app, s, method, path, &body).await;
    (
        res.status().as_u16(),
        res.json().await.unwrap_or(Value::Null),
    )
}

/// The session's stored state, calls recorded and `calls_stored` total.
async fn stored(app: &TestApp, s: &Session) -> (Value, i64, i64) {
    let (state, total): (String, i64) =
        sqlx::query_as("SELECT state, calls_stored FROM agent_sessions WHERE id = $1")
            .bind(&s.id)
            .fetch_one(&app.state.db)
            .await
            .unwrap();
    let calls: i64 = sqlx::query_scalar("SELECT COUNT(*) FROM tool_calls WHERE session_id = $1")
        .bind(&s.id)
        .fetch_one(&app.state.db)
        .await
        .unwrap();
    (serde_json::from_str(&state).unwrap(), calls, total)
}

#[tokio::test]
async fn a_sessions_calls_and_state_changes_through_two_instances_at_once_all_land() {
    let test = "a_sessions_calls_and_state_changes_through_two_instances_at_once_all_land";
    let Some((a, b)) = two_instances(test, &[("SESSION_WRITES_PER_MINUTE", "10000")]).await else {
        return;
    };
    let key = a.api_key().await;
    let s = open(&a, &key, "idv").await;
    const EACH: usize = 40;
    // Each patch adds a check of its own; each call re-writes the state it
    // read. Alternately through either instance, all at once.
    let patches = (0..EACH).map(|i| {
        let app = if i % 2 == 0 { &a } else { &b };
        let body = json!({"checks": {format!("own_{i:02}"): true}});
        send(app, &s, "PATCH", "state", body)
    });
    let calls = (0..EACH).map(|i| {
        let app = if i % 2 == 0 { &b } else { &a };
        let body = json!({"name": "get_server_time", "arguments": {}});
        send(app, &s, "POST", "tool-calls", body)
    });
    let (patched, called) = tokio::join!(join_all(patches), join_all(calls));
    for (status, body) in patched.iter().chain(&called) {
        assert_eq!(*status, 200, "{body}");
    }
    let (state, calls, total) = stored(&a, &s).await;
    let checks = state["checks"].as_object().unwrap();
    let lost: Vec<String> = (0..EACH)
        .map(|i| format!("own_{i:02}"))
        .filter(|c| checks.get(c) != Some(&json!(true)))
        .collect();
    assert!(
        lost.is_empty(),
        "checks lost to a concurrent write: {lost:?}"
    );
    assert_eq!((calls, total), (EACH as i64, EACH as i64));
}

#[tokio::test]
async fn a_sessions_call_cap_holds_with_calls_through_two_instances_at_once() {
    let test = "a_sessions_call_cap_holds_with_calls_through_two_instances_at_once";
    let settings = [
        ("SESSION_WRITES_PER_MINUTE", "10000"),
        ("SESSION_CALLS_MAX", "20"),
    ];
    let Some((a, b)) = two_instances(test, &settings).await else {
        return;
    };
    let key = a.api_key().await;
    let s = open(&a, &key, "idv").await;
    let calls = (0..60).map(|i| {
        let app = if i % 2 == 0 { &a } else { &b };
        let body = json!({"name": "get_server_time", "arguments": {}});
        send(app, &s, "POST", "tool-calls", body)
    });
    let answers = join_all(calls).await;
    let allowed = answers.iter().filter(|(status, _)| *status == 200).count();
    assert!(answers
        .iter()
        .all(|(status, _)| [200, 429].contains(status)));
    let (_, calls, total) = stored(&a, &s).await;
    assert_eq!((allowed, calls, total), (20, 20, 20), "the cap is 20 calls");
}

/// A wrong sign-in as the admin from this machine, to `app`.
async fn wrong_password(app: &TestApp) -> reqwest::Response {
    app.rpc_with(
        &new_client(),
        "login",
        &[("email", ADMIN.0), ("password", "wrong")],
    )
    .await
}

#[tokio::test]
async fn sign_in_attempts_alternating_between_instances_are_throttled_at_one_instances_count() {
    let test =
        "sign_in_attempts_alternating_between_instances_are_throttled_at_one_instances_count";
    let Some((a, b)) = two_instances(test, &[]).await else {
        return;
    };
    for n in 0..LOGIN_PAIR_ATTEMPTS {
        let app = if n % 2 == 0 { &a } else { &b };
        assert_eq!(wrong_password(app).await.status(), 401, "attempt {n}");
    }
    for app in [&a, &b] {
        let res = wrong_password(app).await;
        assert_eq!(res.status(), 429, "both instances count every attempt");
        let wait = retry_after(&res);
        assert!((840..=900).contains(&wait), "{wait}");
        let body: Value = res.json().await.unwrap();
        assert_eq!(body, json!({"TooManyAttempts": {"retry_after_secs": wait}}));
    }
}

#[tokio::test]
async fn a_sessions_writes_alternating_between_instances_hit_the_per_minute_cap_at_its_count() {
    let test =
        "a_sessions_writes_alternating_between_instances_hit_the_per_minute_cap_at_its_count";
    let Some((a, b)) = two_instances(test, &[("SESSION_WRITES_PER_MINUTE", "6")]).await else {
        return;
    };
    let key = a.api_key().await;
    let s = open(&a, &key, "idv").await;
    let call = json!({"name": "get_server_time", "arguments": {}});
    for n in 0..6 {
        let app = if n % 2 == 0 { &a } else { &b };
        let (status, body) = send(app, &s, "POST", "tool-calls", call.clone()).await;
        assert_eq!(status, 200, "write {n}: {body}");
    }
    for app in [&a, &b] {
        let res = request(app, &s, "POST", "tool-calls", &call).await;
        assert_eq!(
            res.status(),
            429,
            "the seventh write in a minute, on either"
        );
        let wait = retry_after(&res);
        assert!((1..=60).contains(&wait), "{wait}");
        let body: Value = res.json().await.unwrap();
        let limit = body["RateLimited"]["limit"].as_str().unwrap_or_default();
        assert!(
            limit.contains("6 calls, results, state changes and turns per minute per session"),
            "{body}"
        );
    }
}

#[tokio::test]
async fn workflow_edits_on_one_version_through_two_instances_at_once_make_one_version() {
    let test = "workflow_edits_on_one_version_through_two_instances_at_once_make_one_version";
    let Some((a, b)) = two_instances(test, &[]).await else {
        return;
    };
    let key = a.api_key().await;
    let edits = (0..12).map(|i| {
        let app = if i % 2 == 0 { &a } else { &b };
        let key = &key;
        async move {
            app.client
                .post(app.url("/api/workflows/idv/edits"))
                .bearer_auth(key)
                .header("If-Match", "\"0\"")
                .json(&json!({"edit": "add_step", "step_type": "custom_agent", "name": format!("Step {i}")}))
                .send()
                .await
                .unwrap()
                .status()
                .as_u16()
        }
    });
    let mut statuses = join_all(edits).await;
    statuses.sort_unstable();
    let mut expected = vec![412; 11];
    expected.insert(0, 200);
    assert_eq!(
        statuses, expected,
        "one edit on version 0 wins, the rest are stale"
    );
    let body = b.get_json(&key, "/api/workflows/idv/definition").await;
    assert_eq!(body["version"], 1);
    assert_eq!(body["definition"]["steps"].as_array().unwrap().len(), 1);
}
