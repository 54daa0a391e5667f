//! The two session credentials: the session token (`st_…`) keeps every
//! right it had; the plugin token (`pt_…`) may register and change tools,
//! read metadata, listen and answer the calls relayed to it, and nothing
//! else (403 naming the session token).

use crate::helpers::{spawn_app, TestApp};
use crate::sessions::{call, idv, read_events, subscribe, Session};
use serde_json::{json, Value};

/// A session opened with `body`: as its backend (session token) and as its
/// plugin (plugin token).
pub async fn open_both(app: &TestApp, key: &str, body: Value) -> (Session, Session) {
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
    let id = body["sessionId"].as_str().unwrap().to_owned();
    let token = body["sessionToken"].as_str().unwrap().to_owned();
    let plugin_token = body["pluginToken"].as_str().unwrap().to_owned();
    assert!(token.starts_with("st_") && plugin_token.starts_with("pt_"));
    (
        Session {
            id: id.clone(),
            token,
        },
        Session {
            id,
            token: plugin_token,
        },
    )
}

async fn request(
    app: &TestApp,
    s: &Session,
    method: reqwest::Method,
    path: &str,
    body: Option<Value>,
) -> (u16, Value) {
    let mut req = app
        .client
        .request(method, app.url(&format!("/api/sessions/{}/{path}", s.id)))
        .bearer_auth(&s.token);
    if let Some(body) = body {
        req = req.json(&body);
    }
    let res = req.send().await.unwrap();
    let status = res.status().as_u16();
    (status, res.json().await.unwrap_or(Value::Null))
}

fn assert_needs_the_session_token(status: u16, body: &Value, what: &str) {
    assert_eq!(status, 403, "{what}: {body}");
    let needed = body["Forbidden"]["needed"].as_str().unwrap_or_default();
    assert!(needed.starts_with("session token (st_…)"), "{what}: {body}");
}

fn registration(names: &[&str]) -> Value {
    let tools: Vec<Value> = names
        .iter()
        .map(|n| json!({"name": n, "description": format!("{n}: a plugin action."),
                        "parameters": {"type": "object", "properties": {"rows": {"type": "integer"}}}}))
        .collect();
    json!({"pluginType": "codap", "pluginVersion": "1", "availableTools": tools})
}

#[tokio::test]
async fn a_plugin_token_cannot_change_state_call_tools_end_or_act_as_the_backend() {
    let app = spawn_app().await;
    let key = app.api_key().await;
    let (backend, plugin) = open_both(&app, &key, json!({"workflowId": "idv"})).await;
    let patch = json!({"activeStep": "identity_verified", "checks": {"identity_verified": true}});
    let (status, body) = request(
        &app,
        &plugin,
        reqwest::Method::PATCH,
        "state",
        Some(patch.clone()),
    )
    .await;
    assert_needs_the_session_token(status, &body, "PATCH state");
    let refused = [
        (
            reqwest::Method::POST,
            "tool-calls",
            Some(json!({"name": "get_server_time"})),
        ),
        (reqwest::Method::GET, "tools?format=openai", None),
        (
            reqwest::Method::POST,
            "turns",
            Some(json!({"role": "student"})),
        ),
        (reqwest::Method::POST, "plugin-token", None),
        (reqwest::Method::POST, "end", None),
    ];
    for (method, path, body) in refused {
        let (status, answer) = request(&app, &plugin, method, path, body).await;
        assert_needs_the_session_token(status, &answer, path);
    }
    // MCP acts as the agent too.
    let res = app
        .client
        .post(app.url(&format!("/api/sessions/{}/mcp", plugin.id)))
        .bearer_auth(&plugin.token)
        .header("accept", "application/json, text/event-stream")
        .json(&json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {}}))
        .send()
        .await
        .unwrap();
    assert_eq!(res.status(), 403);

    // Nothing changed: the session is open, its checks unset, no call made.
    let (status, tools) = request(&app, &backend, reqwest::Method::GET, "tools", None).await;
    assert_eq!(status, 200);
    assert_eq!(tools["state"]["checks"], json!({}), "{tools}");
    assert_ne!(
        tools["state"]["currentStep"], "identity_verified",
        "{tools}"
    );
    let (_, calls) = request(&app, &backend, reqwest::Method::GET, "calls", None).await;
    assert_eq!(calls["calls"], json!([]));
    // The session token keeps every right.
    let (status, _) = request(&app, &backend, reqwest::Method::PATCH, "state", Some(patch)).await;
    assert_eq!(status, 200);
    let (status, reply) = call(&app, &backend, "get_server_time", json!({})).await;
    assert_eq!((status, reply["allowed"].clone()), (200, json!(true)));
}

#[tokio::test]
async fn a_plugin_token_cannot_report_the_result_of_a_call_not_relayed_to_it() {
    let app = spawn_app().await;
    let key = app.api_key().await;
    let (backend, plugin) = open_both(
        &app,
        &key,
        json!({"workflowId": "idv", "runBuiltins": false}),
    )
    .await;
    let (_, awaiting) = call(&app, &backend, "perform_idv_check", idv()).await;
    assert_eq!(awaiting["status"], "awaiting", "{awaiting}");
    let call_id = awaiting["callId"].as_i64().unwrap();
    let verified = json!({"ok": true, "result": {"verified": true}});
    let (status, body) = request(
        &app,
        &plugin,
        reqwest::Method::POST,
        &format!("tool-calls/{call_id}/result"),
        Some(verified.clone()),
    )
    .await;
    assert_needs_the_session_token(status, &body, "the backend's result");
    let (status, body) = request(
        &app,
        &plugin,
        reqwest::Method::POST,
        &format!("tool-results/{call_id}"),
        Some(json!({"result": {"verified": true}})),
    )
    .await;
    assert_needs_the_session_token(status, &body, "a plugin answer to the backend's call");
    // Still the backend's to report.
    let (status, body) = request(
        &app,
        &backend,
        reqwest::Method::POST,
        &format!("tool-calls/{call_id}/result"),
        Some(verified),
    )
    .await;
    assert_eq!(status, 200, "{body}");
    assert_eq!(body["state"]["checks"]["identity_verified"], true);
}

#[tokio::test]
async fn a_plugin_token_registers_tools_listens_and_answers_its_relayed_calls() {
    let app = spawn_app().await;
    let key = app.api_key().await;
    let (backend, plugin) = open_both(&app, &key, json!({"workflowId": "idv"})).await;
    let (status, body) = request(
        &app,
        &plugin,
        reqwest::Method::POST,
        "register-tools",
        Some(registration(&["addRow", "dropRow"])),
    )
    .await;
    assert_eq!(status, 201, "{body}");
    let (status, body) = request(
        &app,
        &plugin,
        reqwest::Method::PATCH,
        "tools",
        Some(json!({"remove": ["dropRow"]})),
    )
    .await;
    assert_eq!(status, 200, "{body}");
    let (status, meta) = request(&app, &plugin, reqwest::Method::GET, "metadata", None).await;
    assert_eq!((status, meta["toolCount"].clone()), (200, json!(1)));

    // It listens to the session's events (here with `?token=`): the two
    // changes kept for late listeners, then the snapshot…
    let watching = subscribe(&app, &plugin, None).await;
    let events = read_events(watching, 3).await;
    let kinds: Vec<&Value> = events.iter().map(|(_, e)| &e["type"]).collect();
    assert_eq!(kinds, ["tools-registered", "tools-removed", "snapshot"]);
    assert_eq!(events[2].1["data"]["plugin"]["tools"][0]["name"], "addRow");

    // …and to the calls relayed to it, and answers them.
    let mut relayed = app
        .client
        .get(app.url(&format!(
            "/api/sessions/{}/plugin-events?token={}",
            plugin.id, plugin.token
        )))
        .send()
        .await
        .unwrap();
    assert_eq!(relayed.status(), 200);
    let (client, url) = (app.client.clone(), app.url(""));
    let (id, token) = (plugin.id.clone(), plugin.token.clone());
    let answering = tokio::spawn(async move {
        let mut text = String::new();
        while !text.contains("\n\n") {
            let chunk = relayed.chunk().await.unwrap().unwrap();
            text.push_str(&String::from_utf8_lossy(&chunk));
        }
        let data = text.lines().find_map(|l| l.strip_prefix("data: ")).unwrap();
        let request: Value = serde_json::from_str(data).unwrap();
        let call_id = request["callId"].as_str().unwrap().to_owned();
        let res = client
            .post(format!("{url}/api/sessions/{id}/tool-results/{call_id}"))
            .bearer_auth(&token)
            .json(&json!({"result": {"rowsAdded": request["arguments"]["rows"]}}))
            .send()
            .await
            .unwrap();
        (res.status().as_u16(), call_id)
    });
    let (status, reply) = call(&app, &backend, "addRow", json!({"rows": 3})).await;
    assert_eq!(status, 200);
    assert_eq!(reply["result"], json!({"rowsAdded": 3}), "{reply}");
    let (answered, call_id) = answering.await.unwrap();
    assert_eq!(answered, 200);
    // Answering it again is the usual conflict, not a refusal.
    let (status, _) = request(
        &app,
        &plugin,
        reqwest::Method::POST,
        &format!("tool-results/{call_id}"),
        Some(json!({"result": 1})),
    )
    .await;
    assert_eq!(status, 409);
}

#[tokio::test]
async fn the_backend_issues_a_new_plugin_token_and_the_old_one_stops_working() {
    let app = spawn_app().await;
    let key = app.api_key().await;
    let (backend, plugin) = open_both(&app, &key, json!({"workflowId": "idv"})).await;
    let (_, other_plugin) = open_both(&app, &key, json!({"workflowId": "idv"})).await;
    let (status, body) = request(&app, &backend, reqwest::Method::POST, "plugin-token", None).await;
    assert_eq!(status, 201, "{body}");
    let fresh = body["pluginToken"].as_str().unwrap().to_owned();
    assert!(fresh.starts_with("pt_") && fresh != plugin.token);
    let (status, _) = request(&app, &plugin, reqwest::Method::GET, "metadata", None).await;
    assert_eq!(status, 401, "the old plugin token is gone");
    let renewed = Session {
        id: backend.id.clone(),
        token: fresh,
    };
    let (status, _) = request(&app, &renewed, reqwest::Method::GET, "metadata", None).await;
    assert_eq!(status, 200);
    // Another session's plugin token is refused like its session token.
    let foreign = Session {
        id: backend.id.clone(),
        token: other_plugin.token,
    };
    let (status, _) = request(&app, &foreign, reqwest::Method::GET, "metadata", None).await;
    assert_eq!(status, 403);
    // An ended session gets no new plugin token.
    request(&app, &backend, reqwest::Method::POST, "end", None).await;
    let (status, _) = request(&app, &backend, reqwest::Method::POST, "plugin-token", None).await;
    assert_eq!(status, 409);
}
