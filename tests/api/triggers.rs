//! Start triggers: each trigger type opens sessions that keep what started
//! them — a manual start (admin or key), a webhook filtered in and out, a
//! chat message, an inbound call answered with its call configuration, and
//! a schedule fired once per due time on the injected clock.

use crate::helpers::{spawn_app, spawn_app_with, TestApp, ADMIN, TEACHER};
use reqwest::Client;
use serde_json::{json, Value};
use switchboard::domain::api_key::Scope;
use switchboard::domain::limits::LOGIN_PAIR_ATTEMPTS;
use switchboard::server::triggers::schedule::fire_due;
use switchboard::server::workflows::scripted_model::{parse, spawn as spawn_model};

/// Sets workflow idv's start trigger to `kind` with `rules`, as an API key.
/// Workflow idv's definition, read with `key`.
async fn definition(app: &TestApp, key: &str) -> Value {
    app.client
        .get(app.url("/api/workflows/idv/definition"))
        .bearer_auth(key)
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap()
}

async fn set_trigger(app: &TestApp, kind: &str, rules: Value) {
    let key = app.api_key_with(&[Scope::WorkflowsWrite]).await;
    let edit = |version: i64, body: Value| {
        app.client
            .post(app.url("/api/workflows/idv/edits"))
            .bearer_auth(&key)
            .header("If-Match", format!("\"{version}\""))
            .json(&body)
            .send()
    };
    let read = definition(app, &key).await;
    let version = read["version"].as_i64().unwrap();
    let res = edit(
        version,
        json!({"edit": "set_trigger", "trigger_type_id": kind}),
    )
    .await
    .unwrap();
    assert_eq!(res.status(), 200);
    let set: Value = res.json().await.unwrap();
    let uuid = set["definition"]["trigger"]["uuid"].clone();
    let res = edit(
        version + 1,
        json!({"edit": "update_trigger_settings", "trigger_uuid": uuid, "filter_rules": rules}),
    )
    .await
    .unwrap();
    assert_eq!(res.status(), 200, "{}", res.text().await.unwrap());
}

/// A new hook secret for idv, made by the signed-in admin from the page.
async fn hook_secret(app: &TestApp, admin: &Client) -> String {
    let res = admin
        .post(app.url("/api/workflows/idv/hook-secret"))
        .header("Origin", &app.address)
        .send()
        .await
        .unwrap();
    assert_eq!(res.status(), 201);
    let body: Value = res.json().await.unwrap();
    assert!(body["url"].as_str().unwrap().ends_with(&format!(
        "/api/hooks/idv/{}",
        body["secret"].as_str().unwrap()
    )));
    body["secret"].as_str().unwrap().to_owned()
}

async fn post(app: &TestApp, path: &str, body: Value) -> (u16, Value) {
    let res = app
        .client
        .post(app.url(path))
        .json(&body)
        .send()
        .await
        .unwrap();
    (
        res.status().as_u16(),
        res.json().await.unwrap_or(Value::Null),
    )
}

/// `startedBy` of session `id` in `GET /api/sessions` (an admin's key:
/// a start trigger's session is nobody's but the admins').
async fn started_by(app: &TestApp, id: &str) -> Value {
    let key = app.key_by(ADMIN.0, &[Scope::Sessions]).await;
    let list: Value = app
        .client
        .get(app.url("/api/sessions"))
        .bearer_auth(&key)
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    let item = list
        .as_array()
        .unwrap()
        .iter()
        .find(|s| s["id"] == id)
        .expect("listed");
    item["startedBy"].clone()
}

/// Every session's `started_by` JSON (read in Rust: one query text for
/// both databases).
async fn started_by_all(app: &TestApp) -> Vec<Value> {
    let rows: Vec<String> =
        sqlx::query_scalar("SELECT started_by FROM agent_sessions WHERE started_by IS NOT NULL")
            .fetch_all(&app.state.db)
            .await
            .unwrap();
    rows.iter()
        .map(|r| serde_json::from_str(r).unwrap())
        .collect()
}

async fn count_started_by(app: &TestApp, trigger: &str) -> i64 {
    started_by_all(app)
        .await
        .iter()
        .filter(|s| s["trigger"] == trigger)
        .count() as i64
}

#[tokio::test]
async fn a_webhook_opens_a_session_for_its_event_types_and_lets_others_pass() {
    let app = spawn_app().await;
    set_trigger(&app, "webhook", json!({"eventTypes": ["order.created"]})).await;
    let admin = app.signed_in(ADMIN).await;
    let secret = hook_secret(&app, &admin).await;
    let hook = format!("/api/hooks/idv/{secret}");

    let (status, body) = post(&app, &hook, json!({"type": "order.created", "id": 7})).await;
    assert_eq!(status, 202, "{body}");
    let id = body["sessionId"].as_str().unwrap();
    assert_eq!(
        started_by(&app, id).await,
        json!({"trigger": "webhook", "summary": "event order.created"})
    );
    // `event` is read when there is no `type`.
    assert_eq!(
        post(&app, &hook, json!({"event": "order.created"})).await.0,
        202
    );

    let (status, _) = post(&app, &hook, json!({"type": "order.cancelled"})).await;
    assert_eq!(status, 204);
    assert_eq!(count_started_by(&app, "webhook").await, 2);

    // Bodies: not an object, a non-string type, too large.
    let (status, body) = post(&app, &hook, json!([1])).await;
    assert_eq!(
        (status, body["Invalid"]["field"].clone()),
        (422, json!("body"))
    );
    let (status, body) = post(&app, &hook, json!({"type": 3})).await;
    assert_eq!(
        (status, body["Invalid"]["field"].clone()),
        (422, json!("type"))
    );
    let big = json!({"type": "order.created", "pad": "x".repeat(70 * 1024)});
    let (status, body) = post(&app, &hook, big).await;
    assert_eq!(
        (status, body["TooLarge"]["field"].clone()),
        (413, json!("body"))
    );

    // A rotated secret replaces the old one at once.
    let fresh = hook_secret(&app, &admin).await;
    assert_eq!(
        post(&app, &hook, json!({"type": "order.created"})).await.0,
        404
    );
    let path = format!("/api/hooks/idv/{fresh}");
    assert_eq!(
        post(&app, &path, json!({"type": "order.created"})).await.0,
        202
    );
}

#[tokio::test]
async fn wrong_hook_secrets_get_404_and_are_throttled_like_passwords() {
    let app = spawn_app().await;
    set_trigger(&app, "webhook", json!({})).await;
    let admin = app.signed_in(ADMIN).await;
    let secret = hook_secret(&app, &admin).await;

    // Another workflow's trigger is not a webhook: 404 even with the secret.
    assert_eq!(
        post(
            &app,
            &format!("/api/hooks/banking-master/{secret}"),
            json!({})
        )
        .await
        .0,
        404
    );
    // Only an admin rotates the secret, from the app's pages.
    let teacher = app.signed_in(TEACHER).await;
    let res = teacher
        .post(app.url("/api/workflows/idv/hook-secret"))
        .header("Origin", &app.address)
        .send()
        .await
        .unwrap();
    assert_eq!(res.status(), 403);
    let res = admin
        .post(app.url("/api/workflows/idv/hook-secret"))
        .header("Origin", "https://evil.example")
        .send()
        .await
        .unwrap();
    assert_eq!(res.status(), 403);

    for _ in 0..LOGIN_PAIR_ATTEMPTS {
        assert_eq!(
            post(&app, "/api/hooks/idv/wh_guess", json!({})).await.0,
            404
        );
    }
    // The guesser's address is now locked out of this workflow's hooks,
    // even with the right secret, for a while.
    let (status, body) = post(&app, &format!("/api/hooks/idv/{secret}"), json!({})).await;
    assert_eq!(status, 429, "{body}");
    assert!(
        body["TooManyAttempts"]["retry_after_secs"]
            .as_u64()
            .unwrap()
            > 0
    );
    app.state.clock.advance(15 * 60);
    assert_eq!(
        post(&app, &format!("/api/hooks/idv/{secret}"), json!({}))
            .await
            .0,
        202
    );
}

#[tokio::test]
async fn an_admin_and_a_key_start_a_workflow_by_hand() {
    let app = spawn_app().await;
    let admin = app.signed_in(ADMIN).await;
    let res = admin
        .post(app.url("/api/workflows/idv/start"))
        .header("Origin", &app.address)
        .send()
        .await
        .unwrap();
    assert_eq!(res.status(), 201);
    let body: Value = res.json().await.unwrap();
    let id = body["sessionId"].as_str().unwrap();
    assert!(body["sessionToken"].as_str().unwrap().starts_with("st_"));
    assert!(body["pluginToken"].as_str().unwrap().starts_with("pt_"));
    let by = started_by(&app, id).await;
    assert_eq!(by["trigger"], "manual");
    let opened_by: Option<i64> =
        sqlx::query_scalar("SELECT opened_by FROM agent_sessions WHERE id = $1")
            .bind(id)
            .fetch_one(&app.state.db)
            .await
            .unwrap();
    assert!(opened_by.is_some());

    // An admin trying the workflow: a trial; an unknown option is 422.
    let res = admin
        .post(app.url("/api/workflows/idv/start"))
        .header("Origin", &app.address)
        .json(&json!({"trial": true}))
        .send()
        .await
        .unwrap();
    assert_eq!(res.status(), 201);
    let tried: Value = res.json().await.unwrap();
    let trial: i64 = sqlx::query_scalar("SELECT trial FROM agent_sessions WHERE id = $1")
        .bind(tried["sessionId"].as_str().unwrap())
        .fetch_one(&app.state.db)
        .await
        .unwrap();
    assert_eq!(trial, 1);
    let res = admin
        .post(app.url("/api/workflows/idv/start"))
        .header("Origin", &app.address)
        .json(&json!({"trail": true}))
        .send()
        .await
        .unwrap();
    assert_eq!(res.status(), 422);
    let body: Value = res.json().await.unwrap();
    assert_eq!(body["Invalid"]["field"], "body", "{body}");
    // A body that is not JSON, or not sent as JSON, is 400 as anywhere.
    for (content_type, text) in [("application/json", "{trial"), ("text/plain", "{}")] {
        let res = admin
            .post(app.url("/api/workflows/idv/start"))
            .header("Origin", &app.address)
            .header("Content-Type", content_type)
            .body(text)
            .send()
            .await
            .unwrap();
        assert_eq!(res.status(), 400, "{content_type} {text}");
        let body: Value = res.json().await.unwrap();
        assert!(body["BadRequest"].is_string(), "{body}");
    }

    // The cookie authenticates it: another site may not.
    let res = admin
        .post(app.url("/api/workflows/idv/start"))
        .header("Origin", "https://evil.example")
        .send()
        .await
        .unwrap();
    assert_eq!(res.status(), 403);
    let teacher = app.signed_in(TEACHER).await;
    let res = teacher
        .post(app.url("/api/workflows/idv/start"))
        .header("Origin", &app.address)
        .send()
        .await
        .unwrap();
    assert_eq!(res.status(), 403);
    assert_eq!(
        post(&app, "/api/workflows/idv/start", json!({})).await.0,
        401
    );

    // An API key with `sessions`; another scope is refused naming it.
    let key = app.api_key_with(&[Scope::Sessions]).await;
    let start = |key: String, workflow: &str| {
        app.client
            .post(app.url(&format!("/api/workflows/{workflow}/start")))
            .bearer_auth(key)
            .send()
    };
    let res = start(key.clone(), "idv").await.unwrap();
    assert_eq!(res.status(), 201);
    let body: Value = res.json().await.unwrap();
    let by = started_by(&app, body["sessionId"].as_str().unwrap()).await;
    assert_eq!(
        by,
        json!({"trigger": "manual", "summary": "by API key “test backend”"})
    );
    let other = app.api_key_with(&[Scope::BindingsRead]).await;
    assert_eq!(start(other, "idv").await.unwrap().status(), 403);
    assert_eq!(start(key, "nope").await.unwrap().status(), 404);
}

/// The scripted model's turn for a refund message: one tool call, then
/// the answer.
const CHAT_SCRIPT: &str = r#"{
  "fallback": "I can only follow the test script.",
  "conversations": [
    {"when": "refund", "replies": [
      {"tool_calls": [{"name": "get_server_time", "arguments": {}}]},
      {"content": "Let us sort out your refund."}
    ]}
  ]
}"#;

#[tokio::test]
async fn a_chat_message_opens_a_session_and_the_agent_answers_it() {
    let model = spawn_model(parse(CHAT_SCRIPT).unwrap()).await.unwrap();
    let app = spawn_app_with(&[
        ("SWITCHBOARD_LLM_BASE_URL", model.as_str()),
        ("SWITCHBOARD_LLM_API_KEY", "test-key"),
        ("SWITCHBOARD_LLM_MODEL", "scripted"),
    ])
    .await;
    let key = app.api_key_with(&[Scope::Sessions]).await;
    let send = |body: Value| {
        app.client
            .post(app.url("/api/workflows/idv/messages"))
            .bearer_auth(&key)
            .json(&body)
            .send()
    };
    // Not a chat workflow yet.
    let res = send(json!({"text": "refund please"})).await.unwrap();
    assert_eq!(res.status(), 409);

    set_trigger(
        &app,
        "chat_message",
        json!({"channels": ["sms"], "keywords": ["REFUND"]}),
    )
    .await;
    let res = send(json!({"text": "I need a refund", "channel": "sms"}))
        .await
        .unwrap();
    assert_eq!(res.status(), 201);
    let body: Value = res.json().await.unwrap();
    assert!(body["sessionToken"].as_str().unwrap().starts_with("st_"));
    // The runner's whole turn: the message, the tool call, its result, the answer.
    let messages = body["messages"].as_array().unwrap();
    assert_eq!(messages.len(), 4, "{messages:?}");
    assert_eq!(messages[0]["content"], "I need a refund");
    assert_eq!(messages[2]["role"], "tool");
    assert_eq!(messages[3]["content"], "Let us sort out your refund.");
    let id = body["sessionId"].as_str().unwrap();
    let by = started_by(&app, id).await;
    assert_eq!(by["trigger"], "chat_message");
    assert_eq!(by["summary"], "sms message “I need a refund”");
    let calls: i64 = sqlx::query_scalar("SELECT COUNT(*) FROM tool_calls WHERE session_id = $1")
        .bind(id)
        .fetch_one(&app.state.db)
        .await
        .unwrap();
    assert_eq!(calls, 1);

    assert_eq!(
        send(json!({"text": "refund", "channel": "web"}))
            .await
            .unwrap()
            .status(),
        204
    );
    assert_eq!(
        send(json!({"text": "hello", "channel": "sms"}))
            .await
            .unwrap()
            .status(),
        204
    );
    let res = send(json!({"text": "refund", "channel": "fax"}))
        .await
        .unwrap();
    assert_eq!(res.status(), 422);
    let res = send(json!({"text": "  "})).await.unwrap();
    assert_eq!(res.status(), 422);
    assert_eq!(count_started_by(&app, "chat_message").await, 1);
}

#[tokio::test]
async fn without_a_model_a_chat_message_opens_nothing() {
    let app = spawn_app().await;
    set_trigger(&app, "chat_message", json!({})).await;
    let key = app.api_key_with(&[Scope::Sessions]).await;
    let res = app
        .client
        .post(app.url("/api/workflows/idv/messages"))
        .bearer_auth(&key)
        .json(&json!({"text": "hello"}))
        .send()
        .await
        .unwrap();
    assert_eq!(res.status(), 503);
    assert_eq!(count_started_by(&app, "chat_message").await, 0);
}

#[tokio::test]
async fn an_inbound_call_answers_with_the_sessions_call_configuration() {
    let app = spawn_app().await;
    set_trigger(
        &app,
        "inbound_call",
        json!({"calledNumbers": ["+441234567890"]}),
    )
    .await;
    let admin = app.signed_in(ADMIN).await;
    let secret = hook_secret(&app, &admin).await;
    let hook = format!("/api/hooks/idv/{secret}/inbound-call");

    let (status, body) = post(
        &app,
        &hook,
        json!({"from": "+447700900123", "to": "+441234567890", "platform": "ultravox"}),
    )
    .await;
    assert_eq!(status, 201, "{body}");
    assert_eq!(body["platform"], "ultravox");
    let id = body["sessionId"].as_str().unwrap();
    let config = &body["callConfig"];
    assert!(!config["selectedTools"].as_array().unwrap().is_empty());
    assert_eq!(config["metadata"]["sessionId"], id);
    // The platform calls tools with the session token.
    let res = app
        .client
        .get(app.url(&format!("/api/sessions/{id}/tools")))
        .bearer_auth(body["sessionToken"].as_str().unwrap())
        .send()
        .await
        .unwrap();
    assert_eq!(res.status(), 200);
    assert_eq!(
        started_by(&app, id).await["summary"],
        "call from +447700900123 to +441234567890"
    );

    // Another shape on request; another number called is left out.
    let (status, body) = post(
        &app,
        &hook,
        json!({"from": "+447700900123", "to": "+441234567890", "platform": "openai"}),
    )
    .await;
    assert_eq!(status, 201);
    assert!(body["callConfig"]["tools"]["tools"].is_array());
    let (status, _) = post(&app, &hook, json!({"from": "+4477", "to": "+449999999999"})).await;
    assert_eq!(status, 204);
    let (status, body) = post(&app, &hook, json!({"from": "+4477", "to": ""})).await;
    assert_eq!(
        (status, body["Invalid"]["field"].clone()),
        (422, json!("to"))
    );
    let (status, body) = post(&app, &hook, json!({"from": "+1\n2", "to": "+441234567890"})).await;
    assert_eq!(
        (status, body["Invalid"]["field"].clone()),
        (422, json!("from"))
    );
    // The webhook URL of an inbound-call workflow is not a hook.
    assert_eq!(
        post(&app, &format!("/api/hooks/idv/{secret}"), json!({}))
            .await
            .0,
        404
    );
}

#[tokio::test]
async fn a_schedule_fires_once_per_due_time_on_the_injected_clock() {
    let app = spawn_app().await;
    set_trigger(
        &app,
        "schedule",
        json!({"cron": "0 * * * *", "timezone": "Europe/London"}),
    )
    .await;
    // First sight: the schedule is armed from now, nothing fires.
    fire_due(&app.state).await.unwrap();
    assert_eq!(count_started_by(&app, "schedule").await, 0);

    // An hour later one due time has passed: fired once, however many
    // look for it at once.
    app.state.clock.advance(3600);
    let (a, b) = tokio::join!(fire_due(&app.state), fire_due(&app.state));
    a.unwrap();
    b.unwrap();
    fire_due(&app.state).await.unwrap();
    assert_eq!(count_started_by(&app, "schedule").await, 1);
    let summary = started_by_all(&app)
        .await
        .into_iter()
        .find(|s| s["trigger"] == "schedule")
        .and_then(|s| s["summary"].as_str().map(str::to_owned))
        .expect("a scheduled session's summary");
    assert!(
        summary.starts_with("`0 * * * *` (Europe/London) due "),
        "{summary}"
    );

    // A restarted server (its clock at the same time) does not fire it again.
    let again = app.restart().await;
    again.state.clock.advance(3600);
    fire_due(&again.state).await.unwrap();
    assert_eq!(count_started_by(&app, "schedule").await, 1);

    // The next hour is the next due time.
    app.state.clock.advance(3600);
    fire_due(&app.state).await.unwrap();
    assert_eq!(count_started_by(&app, "schedule").await, 2);
}

#[tokio::test]
async fn a_schedule_that_cannot_run_is_refused_when_saved() {
    let app = spawn_app().await;
    set_trigger(&app, "schedule", json!({"cron": "0 9 * * 1-5"})).await;
    let key = app.api_key_with(&[Scope::WorkflowsWrite]).await;
    let read = definition(&app, &key).await;
    let version = read["version"].as_i64().unwrap();
    let uuid = read["definition"]["trigger"]["uuid"].clone();
    for (rules, words) in [
        (json!({"cron": "61 * * * *"}), "cron `61 * * * *`"),
        (
            json!({"cron": "0 9 * * *", "timezone": "Mars/Olympus"}),
            "timezone `Mars/Olympus`",
        ),
    ] {
        let res = app
            .client
            .post(app.url("/api/workflows/idv/edits"))
            .bearer_auth(&key)
            .header("If-Match", format!("\"{version}\""))
            .json(&json!({"edit": "update_trigger_settings", "trigger_uuid": uuid, "filter_rules": rules}))
            .send()
            .await
            .unwrap();
        assert_eq!(res.status(), 422);
        let body: Value = res.json().await.unwrap();
        assert_eq!(body["Invalid"]["field"], "filter_rules");
        assert!(
            body["Invalid"]["rule"].as_str().unwrap().contains(words),
            "{body}"
        );
    }
}

#[tokio::test]
async fn a_workflows_starts_are_bounded_per_minute() {
    let app = spawn_app_with(&[("WORKFLOW_STARTS_PER_MINUTE", "2")]).await;
    set_trigger(&app, "webhook", json!({})).await;
    let admin = app.signed_in(ADMIN).await;
    let secret = hook_secret(&app, &admin).await;
    let hook = format!("/api/hooks/idv/{secret}");
    assert_eq!(post(&app, &hook, json!({"type": "a"})).await.0, 202);
    assert_eq!(post(&app, &hook, json!({"type": "b"})).await.0, 202);
    let (status, body) = post(&app, &hook, json!({"type": "c"})).await;
    assert_eq!(status, 429, "{body}");
    assert_eq!(count_started_by(&app, "webhook").await, 2, "nothing opened");
    app.state.clock.advance(61);
    assert_eq!(post(&app, &hook, json!({"type": "d"})).await.0, 202);
}
