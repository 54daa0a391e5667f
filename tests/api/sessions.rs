use crate::helpers::{spawn_app, TestApp, ADMIN};
use serde_json::{json, Value};
use std::time::Duration;

pub struct Session {
    pub id: String,
    pub token: String,
}

pub async fn open(app: &TestApp, key: &str, workflow: &str) -> Session {
    open_with(app, key, json!({"workflowId": workflow})).await
}

/// Opens a session with request body `body`; asserts 201.
pub async fn open_with(app: &TestApp, key: &str, body: Value) -> Session {
    let res = app
        .client
        .post(app.url("/api/sessions"))
        .bearer_auth(key)
        .json(&body)
        .send()
        .await
        .unwrap();
    assert_eq!(res.status(), 201);
    let body: Value = res.json().await.unwrap();
    Session {
        id: body["sessionId"].as_str().unwrap().to_owned(),
        token: body["sessionToken"].as_str().unwrap().to_owned(),
    }
}

pub async fn call(app: &TestApp, s: &Session, name: &str, arguments: Value) -> (u16, Value) {
    let res = app
        .client
        .post(app.url(&format!("/api/sessions/{}/tool-calls", s.id)))
        .bearer_auth(&s.token)
        .json(&json!({"name": name, "arguments": arguments}))
        .send()
        .await
        .unwrap();
    (
        res.status().as_u16(),
        res.json().await.unwrap_or(Value::Null),
    )
}

/// `GET /api/sessions/{id}/tools?format=…` as the session's backend.
pub async fn tools_body(app: &TestApp, s: &Session, format: &str) -> Value {
    app.client
        .get(app.url(&format!("/api/sessions/{}/tools?format={format}", s.id)))
        .bearer_auth(&s.token)
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap()
}

async fn tools(app: &TestApp, s: &Session) -> Vec<String> {
    tools_body(app, s, "openai").await["available"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t.as_str().unwrap().to_owned())
        .collect()
}

pub fn idv() -> Value {
    json!({"accountNumber": "12345678", "sortCode": "12-34-56", "dateOfBirth": "1985-04-12"})
}

#[tokio::test]
async fn calls_are_allowed_or_refused_by_the_rules_in_force() {
    let app = spawn_app().await;
    let key = app.api_key().await;
    let s = open(&app, &key, "idv").await;
    assert_eq!(
        tools(&app, &s).await,
        [
            "get_server_time",
            "start_workflow",
            "end_session",
            "perform_idv_check",
            "lookup_account"
        ]
    );

    let (status, body) = call(
        &app,
        &s,
        "check_balance",
        json!({"accountNumber": "12345678"}),
    )
    .await;
    assert_eq!(status, 200);
    assert_eq!(body["allowed"], false);
    assert_eq!(body["status"], "refused", "nothing ran: {body}");
    assert_eq!(
        body["reason"],
        "`check_balance` is not available in workflow `idv`; available: get_server_time, start_workflow, end_session, perform_idv_check, lookup_account"
    );

    let (_, body) = call(
        &app,
        &s,
        "perform_idv_check",
        json!({"accountNumber": "12345678", "sortCode": "123456", "dateOfBirth": "1985-04-12"}),
    )
    .await;
    assert_eq!(body["allowed"], false);
    assert!(
        body["reason"]
            .as_str()
            .unwrap()
            .contains("field `sortCode`"),
        "{body}"
    );

    let (_, body) = call(&app, &s, "perform_idv_check", idv()).await;
    assert_eq!(body["allowed"], true);
    assert_eq!(body["state"]["checks"]["identity_verified"], true);

    let (_, body) = call(
        &app,
        &s,
        "start_workflow",
        json!({"workflowId": "banking-master"}),
    )
    .await;
    assert_eq!(body["allowed"], true);
    assert!(body["result"]["message"]
        .as_str()
        .unwrap()
        .contains("check_balance"));
    assert!(tools(&app, &s).await.contains(&"check_balance".to_owned()));

    let (_, body) = call(
        &app,
        &s,
        "check_balance",
        json!({"accountNumber": "12345678"}),
    )
    .await;
    assert_eq!(body["allowed"], true, "{body}");
    assert_eq!(body["result"]["balance"], "£2543.99");

    let (_, body) = call(&app, &s, "mark_for_review", json!({})).await;
    assert_eq!(
        body["allowed"], false,
        "tutor tools are not bound in banking workflows"
    );

    let recorded: i64 = sqlx::query_scalar("SELECT COUNT(*) FROM tool_calls WHERE session_id = $1")
        .bind(&s.id)
        .fetch_one(&app.state.db)
        .await
        .unwrap();
    assert_eq!(recorded, 6);
}

#[tokio::test]
async fn banking_tools_refuse_until_identity_is_verified() {
    let app = spawn_app().await;
    let key = app.api_key().await;
    let s = open(&app, &key, "banking-master").await;
    let (_, body) = call(
        &app,
        &s,
        "check_balance",
        json!({"accountNumber": "12345678"}),
    )
    .await;
    assert_eq!(body["allowed"], false);
    let reason = body["reason"].as_str().unwrap();
    assert!(
        reason.contains("needs check `identity_verified`")
            && reason.contains("call `perform_idv_check` first"),
        "{reason}"
    );
}

#[tokio::test]
async fn a_session_token_cannot_touch_another_session() {
    let app = spawn_app().await;
    let key = app.api_key().await;
    let a = open(&app, &key, "idv").await;
    let b = open(&app, &key, "idv").await;
    let res = app
        .client
        .post(app.url(&format!("/api/sessions/{}/tool-calls", b.id)))
        .bearer_auth(&a.token)
        .json(&json!({"name": "perform_idv_check", "arguments": idv()}))
        .send()
        .await
        .unwrap();
    assert_eq!(res.status(), 403);
    for path in ["tools", "events"] {
        let res = app
            .client
            .get(app.url(&format!("/api/sessions/{}/{path}", b.id)))
            .bearer_auth(&a.token)
            .send()
            .await
            .unwrap();
        assert_eq!(res.status(), 403, "{path}");
    }
    let res = app
        .client
        .post(app.url(&format!("/api/sessions/{}/end", b.id)))
        .bearer_auth(&a.token)
        .send()
        .await
        .unwrap();
    assert_eq!(res.status(), 403);
    let calls: i64 = sqlx::query_scalar("SELECT COUNT(*) FROM tool_calls")
        .fetch_one(&app.state.db)
        .await
        .unwrap();
    assert_eq!(calls, 0);
    let state: String = sqlx::query_scalar("SELECT state FROM agent_sessions WHERE id = $1")
        .bind(&b.id)
        .fetch_one(&app.state.db)
        .await
        .unwrap();
    assert!(!state.contains("identity_verified"));
}

/// Reads SSE events (id, parsed data) from a streaming response until
/// `count` arrived or two seconds passed.
pub async fn read_events(res: reqwest::Response, count: usize) -> Vec<(u64, Value)> {
    let mut out = Vec::new();
    let mut buffer = String::new();
    let mut res = res;
    let deadline = tokio::time::Instant::now() + Duration::from_secs(2);
    while out.len() < count {
        let chunk = match tokio::time::timeout_at(deadline, res.chunk()).await {
            Ok(Ok(Some(chunk))) => chunk,
            _ => break,
        };
        buffer.push_str(&String::from_utf8_lossy(&chunk));
        while let Some(end) = buffer.find("\n\n") {
            let block: String = buffer.drain(..end + 2).collect();
            let mut id = 0;
            let mut data = String::new();
            for line in block.lines() {
                if let Some(v) = line.strip_prefix("id:") {
                    id = v.trim().parse().unwrap_or(0);
                } else if let Some(v) = line.strip_prefix("data:") {
                    data.push_str(v.trim_start());
                }
            }
            if !data.is_empty() {
                out.push((id, serde_json::from_str(&data).unwrap()));
            }
        }
    }
    out
}

pub async fn subscribe(app: &TestApp, s: &Session, last: Option<u64>) -> reqwest::Response {
    let mut req = app
        .client
        .get(app.url(&format!("/api/sessions/{}/events?token={}", s.id, s.token)));
    if let Some(last) = last {
        req = req.header("Last-Event-ID", last.to_string());
    }
    let res = req.send().await.unwrap();
    assert_eq!(res.status(), 200);
    assert_eq!(res.headers()["content-type"], "text/event-stream");
    res
}

#[tokio::test]
async fn a_new_subscriber_gets_a_snapshot_then_live_events() {
    let app = spawn_app().await;
    let key = app.api_key().await;
    let s = open(&app, &key, "idv").await;
    let res = subscribe(&app, &s, None).await;
    call(&app, &s, "perform_idv_check", idv()).await;
    let events = read_events(res, 3).await;
    let kinds: Vec<&str> = events
        .iter()
        .map(|(_, e)| e["type"].as_str().unwrap())
        .collect();
    assert_eq!(kinds, ["snapshot", "tool_call", "workflow_update"]);
    assert_eq!(events[0].1["data"]["state"]["currentWorkflow"], "idv");
    assert_eq!(
        events[2].1["data"],
        json!({"workflowId": "idv", "activeStep": "identity_verified", "checks": {"identity_verified": true}})
    );
    assert!(events[1].0 < events[2].0);
}

#[tokio::test]
async fn a_reconnect_with_last_event_id_gets_exactly_the_missed_events_in_order() {
    let app = spawn_app().await;
    let key = app.api_key().await;
    let s = open(&app, &key, "idv").await;
    // Event 1 is the opening workflow_update.
    call(
        &app,
        &s,
        "check_balance",
        json!({"accountNumber": "12345678"}),
    )
    .await; // 2: refused tool_call
    call(&app, &s, "perform_idv_check", idv()).await; // 3: tool_call, 4: workflow_update
    call(
        &app,
        &s,
        "start_workflow",
        json!({"workflowId": "banking-master"}),
    )
    .await; // 5, 6, 7: tools_changed
            // Ids count from this server's base, so they grow across restarts.
    let base = app.state.hub.base();
    let events = read_events(subscribe(&app, &s, Some(base + 2)).await, 5).await;
    let ids: Vec<u64> = events.iter().map(|(id, _)| *id - base).collect();
    assert_eq!(ids, [3, 4, 5, 6, 7]);
    let kinds: Vec<&str> = events
        .iter()
        .map(|(_, e)| e["type"].as_str().unwrap())
        .collect();
    assert_eq!(
        kinds,
        [
            "tool_call",
            "workflow_update",
            "tool_call",
            "workflow_update",
            "tools_changed"
        ]
    );
    assert_eq!(
        events[4].1["data"]["tools"][3],
        "manage_recent_interactions"
    );
    // Nothing more is waiting.
    assert!(read_events(subscribe(&app, &s, Some(base + 7)).await, 1)
        .await
        .is_empty());
}

#[tokio::test]
async fn an_admin_bindings_save_reaches_open_sessions_at_once() {
    let app = spawn_app().await;
    let key = app.api_key().await;
    let s = open(&app, &key, "disputes").await;
    assert!(!tools(&app, &s).await.contains(&"check_balance".to_owned()));
    let res = subscribe(&app, &s, Some(app.state.hub.base() + 1)).await;

    let admin = app.signed_in(ADMIN).await;
    let matrix: Value = app
        .rpc_with(&admin, "bindings_matrix", &[])
        .await
        .json()
        .await
        .unwrap();
    let mut doc = matrix["current"]["bindings"].clone();
    doc["workflows"]["disputes"]
        .as_array_mut()
        .unwrap()
        .push(json!("check_balance"));
    let saved = app.save_bindings(&admin, 1, &doc).await;
    assert_eq!(saved.status(), 200);

    let events = read_events(res, 1).await;
    assert_eq!(events.len(), 1);
    assert_eq!(events[0].1["type"], "tools_changed");
    assert!(events[0].1["data"]["tools"]
        .as_array()
        .unwrap()
        .contains(&json!("check_balance")));
    assert!(tools(&app, &s).await.contains(&"check_balance".to_owned()));
}

#[tokio::test]
async fn ended_sessions_refuse_calls_and_bad_requests_name_the_field() {
    let app = spawn_app().await;
    let key = app.api_key().await;
    let res = app
        .client
        .post(app.url("/api/sessions"))
        .bearer_auth(&key)
        .json(&json!({"workflowId": "atlantis"}))
        .send()
        .await
        .unwrap();
    assert_eq!(res.status(), 422);
    assert!(res.text().await.unwrap().contains("workflowId"));
    let res = app
        .client
        .post(app.url("/api/sessions"))
        .json(&json!({"workflowId": "idv"}))
        .send()
        .await
        .unwrap();
    assert_eq!(res.status(), 401);

    let s = open(&app, &key, "idv").await;
    let res = app
        .client
        .post(app.url(&format!("/api/sessions/{}/end", s.id)))
        .bearer_auth(&s.token)
        .send()
        .await
        .unwrap();
    assert_eq!(res.status(), 204);
    let (status, _) = call(&app, &s, "get_server_time", json!({})).await;
    assert_eq!(status, 409);
}

#[tokio::test]
async fn a_last_event_id_from_before_a_restart_gets_a_snapshot() {
    let app = spawn_app().await;
    let key = app.api_key().await;
    let s = open(&app, &key, "idv").await;
    call(&app, &s, "get_server_time", json!({})).await;
    let old_last = app.state.hub.base() + 2;
    let restarted = app.restart().await;
    assert!(restarted.state.hub.base() > old_last);
    let res = restarted
        .client
        .get(restarted.url(&format!("/api/sessions/{}/events?token={}", s.id, s.token)))
        .header("Last-Event-ID", old_last.to_string())
        .send()
        .await
        .unwrap();
    if crate::helpers::on_postgres().is_some() {
        // On PostgreSQL the ids are the database's and outlive a restart:
        // the watcher resumes where it was, no snapshot (cluster.rs has
        // the replay across instances).
        let (status, _) = call(&app, &s, "get_server_time", json!({})).await;
        assert_eq!(status, 200);
        let events = read_events(res, 1).await;
        assert_eq!(
            (events[0].0, &events[0].1["type"]),
            (old_last + 1, &json!("tool_call"))
        );
        return;
    }
    let events = read_events(res, 1).await;
    assert_eq!(events[0].1["type"], "snapshot");
    assert!(events[0].0 > old_last);
}

#[tokio::test]
async fn idle_sessions_expire_and_watchers_are_told() {
    let app = spawn_app().await;
    let key = app.api_key().await;
    let idle = open(&app, &key, "idv").await;
    let active = open(&app, &key, "idv").await;
    sqlx::query("UPDATE agent_sessions SET last_activity = last_activity - 3600 WHERE id = $1")
        .bind(&idle.id)
        .execute(&app.state.db)
        .await
        .unwrap();
    let res = subscribe(&app, &idle, Some(app.state.hub.base() + 1)).await;
    let expired = switchboard::server::agent::sessions::expire_idle(&app.state)
        .await
        .unwrap();
    assert_eq!(expired, 1);
    let events = read_events(res, 1).await;
    assert_eq!(
        events[0].1,
        json!({"type": "ended", "data": {"reason": "idle timeout"}})
    );
    let (status, _) = call(&app, &idle, "get_server_time", json!({})).await;
    assert_eq!(status, 409);
    let (status, body) = call(&app, &active, "get_server_time", json!({})).await;
    assert_eq!((status, body["allowed"].clone()), (200, json!(true)));
}

#[tokio::test]
async fn shutting_down_ends_open_event_streams() {
    let app = spawn_app().await;
    let key = app.api_key().await;
    let s = open(&app, &key, "idv").await;
    let mut res = subscribe(&app, &s, None).await;
    assert!(read_first_chunk(&mut res).await);
    app.shut_down().await;
    // The stream ends cleanly instead of holding the shutdown forever.
    let rest = tokio::time::timeout(Duration::from_secs(2), res.chunk())
        .await
        .expect("stream ended");
    assert!(matches!(rest, Ok(None)), "{rest:?}");
}

/// Waits for the snapshot frame; true if it came.
async fn read_first_chunk(res: &mut reqwest::Response) -> bool {
    let chunk = tokio::time::timeout(Duration::from_secs(2), res.chunk()).await;
    matches!(chunk, Ok(Ok(Some(c))) if String::from_utf8_lossy(&c).contains("\"snapshot\""))
}
