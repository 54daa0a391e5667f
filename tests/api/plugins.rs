//! Plugin tools per session: registration (each tool alone), patches,
//! metadata, the limits, isolation between sessions, the relay to a
//! scripted plugin and back, and late listeners.

use crate::helpers::{spawn_app, spawn_app_with, TestApp};
use crate::sessions::{call, open, Session};
use serde_json::{json, Value};
use std::time::Duration;

fn tool(name: &str) -> Value {
    json!({
        "name": name,
        "description": format!("{name}: a CODAP action."),
        "parameters": {"type": "object", "properties": {"rows": {"type": "integer", "minimum": 0}}, "required": ["rows"]}
    })
}

fn registration(tools: Vec<Value>) -> Value {
    json!({
        "pluginType": "codap",
        "pluginVersion": "2.1.0",
        "capabilities": [{"type": "data_analysis", "level": "basic", "resources": ["tables"], "permissions": ["read"]}],
        "availableTools": tools,
        "environment": {"version": "3.0", "features": ["tables"], "limitations": [], "contextInfo": {"dataContexts": ["Mammals"]}}
    })
}

async fn send(
    app: &TestApp,
    s: &Session,
    method: reqwest::Method,
    path: &str,
    body: Option<Value>,
) -> (u16, Value, reqwest::header::HeaderMap) {
    let mut req = app
        .client
        .request(method, app.url(&format!("/api/sessions/{}/{path}", s.id)))
        .bearer_auth(&s.token);
    if let Some(body) = body {
        req = req.json(&body);
    }
    let res = req.send().await.unwrap();
    let status = res.status().as_u16();
    let headers = res.headers().clone();
    (status, res.json().await.unwrap_or(Value::Null), headers)
}

async fn register(app: &TestApp, s: &Session, body: Value) -> (u16, Value) {
    let (status, body, _) = send(app, s, reqwest::Method::POST, "register-tools", Some(body)).await;
    (status, body)
}

async fn available(app: &TestApp, s: &Session, format: &str) -> Value {
    let (status, body, _) = send(
        app,
        s,
        reqwest::Method::GET,
        &format!("tools?format={format}"),
        None,
    )
    .await;
    assert_eq!(status, 200);
    body
}

#[tokio::test]
async fn a_registration_keeps_the_good_tools_and_names_each_bad_one() {
    let app = spawn_app().await;
    let key = app.api_key().await;
    let s = open(&app, &key, "idv").await;
    let bad_schema = json!({"name": "badSchema", "description": "x", "parameters": {"type": "object", "properties": {"a": {"type": "no-such-type"}}}});
    let (status, body) = register(
        &app,
        &s,
        registration(vec![
            tool("createTable"),
            json!({"name": "bad name", "description": "x"}),
            tool("get_server_time"),
            bad_schema,
            json!({"name": "noDescription", "description": ""}),
            tool("addRow"),
        ]),
    )
    .await;
    assert_eq!(status, 201, "{body}");
    assert_eq!(body["success"], true);
    assert_eq!(body["registeredTools"], json!(["createTable", "addRow"]));
    let failed: Vec<(String, String, bool)> = body["failedTools"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| {
            (
                f["toolName"].as_str().unwrap().to_owned(),
                f["error"].as_str().unwrap().to_owned(),
                f["recoverable"].as_bool().unwrap(),
            )
        })
        .collect();
    assert_eq!(failed.len(), 4, "{failed:?}");
    assert_eq!(failed[0].0, "bad name");
    assert!(failed[0].1.starts_with("name: tool id"), "{}", failed[0].1);
    assert_eq!(
        (failed[1].0.as_str(), failed[1].2),
        ("get_server_time", false)
    );
    assert!(failed[1].1.contains("is a catalogue tool"));
    assert_eq!(failed[2].0, "badSchema");
    assert!(failed[2].1.starts_with("parameters: "), "{}", failed[2].1);
    assert_eq!(failed[3].1, "description: is required");
    assert_eq!(body["sessionConfiguration"]["toolCount"], 2);
    assert_eq!(
        body["sessionConfiguration"]["environment"]["version"],
        "3.0"
    );

    // In the session's tools, in every format, after the workflow's own.
    let listed = available(&app, &s, "openai").await;
    let names: Vec<&str> = listed["available"]
        .as_array()
        .unwrap()
        .iter()
        .map(|v| v.as_str().unwrap())
        .collect();
    assert_eq!(&names[names.len() - 2..], ["createTable", "addRow"]);
    assert!(listed["tools"]
        .to_string()
        .contains("createTable: a CODAP action."));
    for format in ["gemini", "anthropic", "ultravox"] {
        assert!(
            available(&app, &s, format).await["tools"]
                .to_string()
                .contains("addRow"),
            "{format}"
        );
    }

    // A second registration replaces the set and says what changed.
    let mut changed = tool("addRow");
    changed["description"] = json!("Adds rows.");
    let (status, body) = register(&app, &s, registration(vec![changed, tool("createGraph")])).await;
    assert_eq!(status, 201);
    assert_eq!(body["added"], json!(["createGraph"]));
    assert_eq!(body["removed"], json!(["createTable"]));
    assert_eq!(body["modified"], json!(["addRow"]));
}

#[tokio::test]
async fn patches_add_remove_modify_and_disable_without_removing() {
    let app = spawn_app().await;
    let key = app.api_key().await;
    let s = open(&app, &key, "idv").await;
    let (status, body, _) = send(
        &app,
        &s,
        reqwest::Method::PATCH,
        "tools",
        Some(json!({"add": [tool("a")]})),
    )
    .await;
    assert_eq!(status, 404, "patching before registering: {body}");
    register(
        &app,
        &s,
        registration(vec![tool("createTable"), tool("addRow")]),
    )
    .await;
    let (status, body, _) = send(
        &app,
        &s,
        reqwest::Method::PATCH,
        "tools",
        Some(json!({"add": [tool("createGraph")], "remove": ["createTable", "ghost"], "modify": [{"name": "addRow", "status": "disabled"}]})),
    )
    .await;
    assert_eq!(status, 200, "{body}");
    assert_eq!(body["added"], json!(["createGraph"]));
    assert_eq!(body["removed"], json!(["createTable"]));
    assert_eq!(body["modified"], json!(["addRow"]));
    assert_eq!(body["failedTools"][0]["toolName"], "ghost");
    let names = available(&app, &s, "gemini").await["available"].clone();
    assert!(names.as_array().unwrap().contains(&json!("createGraph")));
    assert!(
        !names.as_array().unwrap().contains(&json!("addRow")),
        "disabled is not offered"
    );
    let (status, reply) = call(&app, &s, "addRow", json!({"rows": 1})).await;
    assert_eq!(status, 200);
    assert_eq!(reply["allowed"], false);
    assert!(
        reply["reason"]
            .as_str()
            .unwrap()
            .starts_with("`addRow` is disabled by plugin `codap`"),
        "{reply}"
    );
    let (_, meta, _) = send(&app, &s, reqwest::Method::GET, "metadata", None).await;
    let statuses: Vec<(String, String)> = meta["tools"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| {
            (
                t["name"].as_str().unwrap().to_owned(),
                t["status"].as_str().unwrap().to_owned(),
            )
        })
        .collect();
    assert_eq!(
        statuses,
        [
            ("addRow".into(), "disabled".into()),
            ("createGraph".into(), "active".into())
        ]
    );
}

#[tokio::test]
async fn the_limits_refuse_whole_requests() {
    let app = spawn_app_with(&[
        ("PLUGIN_TOOLS_MAX", "3"),
        ("PLUGIN_UPDATES_PER_MINUTE", "4"),
    ])
    .await;
    let key = app.api_key().await;
    let s = open(&app, &key, "idv").await;
    let four: Vec<Value> = (0..4).map(|i| tool(&format!("t{i}"))).collect();
    let (status, body) = register(&app, &s, registration(four)).await;
    assert_eq!(status, 422, "{body}");
    assert_eq!(body["Invalid"]["field"], "availableTools");
    assert!(
        body["Invalid"]["rule"]
            .as_str()
            .unwrap()
            .contains("at most 3 plugin tools"),
        "{body}"
    );
    let (_, meta, _) = send(&app, &s, reqwest::Method::GET, "metadata", None).await;
    assert_eq!(meta["toolCount"], 0, "nothing registered");
    for _ in 0..3 {
        assert_eq!(
            register(&app, &s, registration(vec![tool("a")])).await.0,
            201
        );
    }
    let (status, _, headers) = send(
        &app,
        &s,
        reqwest::Method::POST,
        "register-tools",
        Some(registration(vec![tool("a")])),
    )
    .await;
    assert_eq!(status, 429);
    let wait: u64 = headers["retry-after"].to_str().unwrap().parse().unwrap();
    assert!((1..=60).contains(&wait), "{wait}");
    // Another session has its own window.
    let other = open(&app, &key, "idv").await;
    assert_eq!(
        register(&app, &other, registration(vec![tool("a")]))
            .await
            .0,
        201
    );
}

#[tokio::test]
async fn the_default_limits_are_a_thousand_tools_and_ten_updates_a_minute() {
    let app = spawn_app().await;
    let key = app.api_key().await;
    let s = open(&app, &key, "idv").await;
    let many: Vec<Value> = (0..1001).map(|i| tool(&format!("t{i}"))).collect();
    let (status, body) = register(&app, &s, registration(many.clone())).await;
    assert_eq!(status, 422);
    assert!(body["Invalid"]["rule"]
        .as_str()
        .unwrap()
        .contains("at most 1000 plugin tools (this would make 1001)"));
    let (status, body) = register(&app, &s, registration(many[..1000].to_vec())).await;
    assert_eq!(status, 201);
    assert_eq!(body["sessionConfiguration"]["toolCount"], 1000);
    for _ in 0..8 {
        assert_eq!(
            register(&app, &s, registration(vec![tool("a")])).await.0,
            201
        );
    }
    // 1 refused + 1 + 8 = 10 in the window: the 11th is refused.
    assert_eq!(
        register(&app, &s, registration(vec![tool("a")])).await.0,
        429
    );
}

#[tokio::test]
async fn metadata_has_its_headers_and_answers_304_when_unchanged() {
    let app = spawn_app().await;
    let key = app.api_key().await;
    let s = open(&app, &key, "idv").await;
    let (status, meta, headers) = send(&app, &s, reqwest::Method::GET, "metadata", None).await;
    assert_eq!(status, 200);
    assert_eq!(headers["api-version"], "2.0.0");
    assert_eq!(headers["session-id"], s.id.as_str());
    assert_eq!(meta["pluginType"], Value::Null);
    assert!(
        meta["availableTools"]
            .as_array()
            .unwrap()
            .contains(&json!("perform_idv_check")),
        "default metadata: {meta}"
    );
    tokio::time::sleep(Duration::from_millis(1100)).await;
    register(&app, &s, registration(vec![tool("createTable")])).await;
    let (_, meta, headers) = send(&app, &s, reqwest::Method::GET, "metadata", None).await;
    assert_eq!(meta["pluginType"], "codap");
    assert_eq!(meta["tools"][0]["name"], "createTable");
    assert_eq!(meta["tools"][0]["usageCount"], 0);
    assert!(meta["supportedOperations"].as_array().unwrap().len() >= 4);
    let last_modified = headers["last-modified"].to_str().unwrap().to_owned();
    let res = app
        .client
        .get(app.url(&format!("/api/sessions/{}/metadata", s.id)))
        .bearer_auth(&s.token)
        .header("If-Modified-Since", &last_modified)
        .send()
        .await
        .unwrap();
    assert_eq!(res.status(), 304);
    let res = app
        .client
        .get(app.url(&format!("/api/sessions/{}/metadata", s.id)))
        .bearer_auth(&s.token)
        .header("If-Modified-Since", "Mon, 01 Jan 2001 00:00:00 GMT")
        .send()
        .await
        .unwrap();
    assert_eq!(res.status(), 200);
}

#[tokio::test]
async fn other_sessions_neither_see_nor_call_a_sessions_plugin_tools() {
    let app = spawn_app().await;
    let key = app.api_key().await;
    let (a, b) = (open(&app, &key, "idv").await, open(&app, &key, "idv").await);
    register(&app, &a, registration(vec![tool("createGraph")])).await;
    let listed = available(&app, &b, "openai").await;
    assert!(!listed.to_string().contains("createGraph"));
    let (status, reply) = call(&app, &b, "createGraph", json!({"rows": 1})).await;
    assert_eq!(status, 200);
    assert_eq!(reply["allowed"], false);
    assert!(
        reply["reason"]
            .as_str()
            .unwrap()
            .starts_with("`createGraph` is not available in this session"),
        "{reply}"
    );
    // B's token cannot act on A's plugin.
    let res = app
        .client
        .post(app.url(&format!("/api/sessions/{}/register-tools", a.id)))
        .bearer_auth(&b.token)
        .json(&registration(vec![tool("x")]))
        .send()
        .await
        .unwrap();
    assert_eq!(res.status(), 403);
    let res = app
        .client
        .post(app.url("/api/sessions/no-such-session/register-tools"))
        .bearer_auth(&a.token)
        .json(&registration(vec![tool("x")]))
        .send()
        .await
        .unwrap();
    assert_eq!(res.status(), 404);
    let body: Value = res.json().await.unwrap();
    assert_eq!(body["error"], "session_not_found");
    assert!(body["message"]
        .as_str()
        .unwrap()
        .contains("no-such-session"));
}

/// A plugin's answer `{"result": 1}` to call `call_id` of `s`: its status.
async fn late_result(app: &TestApp, s: &Session, call_id: i64) -> u16 {
    let path = format!("tool-results/{call_id}");
    send(
        app,
        s,
        reqwest::Method::POST,
        &path,
        Some(json!({"result": 1})),
    )
    .await
    .0
}

/// A scripted plugin: reads `tool-call-request`s from its stream and
/// answers each with `answer(name, arguments)`.
async fn scripted_plugin(
    app: &TestApp,
    s: &Session,
    answer: impl Fn(&str, &Value) -> Option<Value> + Send + 'static,
) -> tokio::task::JoinHandle<()> {
    let res = app
        .client
        .get(app.url(&format!("/api/sessions/{}/plugin-events", s.id)))
        .bearer_auth(&s.token)
        .send()
        .await
        .unwrap();
    assert_eq!(res.status(), 200);
    let (client, base, id, token) = (
        app.client.clone(),
        app.url(""),
        s.id.clone(),
        s.token.clone(),
    );
    tokio::spawn(async move {
        let mut res = res;
        let mut buffer = String::new();
        while let Ok(Some(chunk)) = res.chunk().await {
            buffer.push_str(&String::from_utf8_lossy(&chunk));
            while let Some(end) = buffer.find("\n\n") {
                let frame: String = buffer.drain(..end + 2).collect();
                let Some(data) = frame.lines().find_map(|l| l.strip_prefix("data: ")) else {
                    continue;
                };
                assert!(frame.contains("event: tool-call-request"), "{frame}");
                let request: Value = serde_json::from_str(data).unwrap();
                let Some(body) = answer(request["name"].as_str().unwrap(), &request["arguments"])
                else {
                    continue;
                };
                let call_id = request["callId"].as_str().unwrap();
                client
                    .post(format!("{base}/api/sessions/{id}/tool-results/{call_id}"))
                    .bearer_auth(&token)
                    .json(&body)
                    .send()
                    .await
                    .unwrap();
            }
        }
    })
}

#[tokio::test]
async fn a_call_is_relayed_to_the_plugin_and_its_answer_returned() {
    let app = spawn_app().await;
    let key = app.api_key().await;
    let s = open(&app, &key, "idv").await;
    register(
        &app,
        &s,
        registration(vec![tool("addRow"), tool("failing")]),
    )
    .await;

    // Not connected: refused at once.
    let (_, reply) = call(&app, &s, "addRow", json!({"rows": 2})).await;
    assert_eq!(reply["allowed"], false);
    assert_eq!(
        reply["reason"],
        "plugin `codap` is not connected; its tools cannot run now"
    );

    let plugin = scripted_plugin(&app, &s, |name, args| {
        Some(match name {
            "addRow" => json!({"result": {"rowsAdded": args["rows"], "total": 7}}),
            _ => json!({"error": "no table yet"}),
        })
    })
    .await;
    let (status, reply) = call(&app, &s, "addRow", json!({"rows": 2})).await;
    assert_eq!(status, 200, "{reply}");
    assert_eq!(reply["allowed"], true);
    assert_eq!(reply["result"], json!({"rowsAdded": 2, "total": 7}));
    let call_id = reply["callId"].as_i64().unwrap();

    let (_, reply) = call(&app, &s, "failing", json!({"rows": 0})).await;
    assert_eq!(reply["allowed"], false);
    assert_eq!(reply["status"], "failed");
    assert!(reply["reason"].as_str().unwrap().contains("no table yet"));

    // Schema-checked before it reaches the plugin.
    let (_, reply) = call(&app, &s, "addRow", json!({"rows": -1})).await;
    assert_eq!(reply["allowed"], false);
    assert!(
        reply["reason"]
            .as_str()
            .unwrap()
            .starts_with("invalid arguments for `addRow`: field `rows`"),
        "{reply}"
    );

    // Recorded, with its duration; counted; a second answer is refused.
    let (_, page, _) = send(&app, &s, reqwest::Method::GET, "calls", None).await;
    let recorded = page["calls"]
        .as_array()
        .unwrap()
        .iter()
        .find(|c| c["id"] == call_id)
        .unwrap()
        .clone();
    assert_eq!(recorded["result"], json!({"rowsAdded": 2, "total": 7}));
    assert!(recorded["durationUs"].as_i64().unwrap() > 0);
    let (_, meta, _) = send(&app, &s, reqwest::Method::GET, "metadata", None).await;
    assert_eq!(meta["tools"][0]["usageCount"], 1);
    let status = late_result(&app, &s, call_id).await;
    assert_eq!(status, 409);
    let status = late_result(&app, &s, 999999).await;
    assert_eq!(status, 404);
    let other = open(&app, &key, "idv").await;
    let status = late_result(&app, &other, call_id).await;
    assert_eq!(status, 404, "another session's call");
    plugin.abort();
}

#[tokio::test]
async fn a_plugin_that_does_not_answer_in_time_gets_a_readable_refusal() {
    let app = spawn_app_with(&[("PLUGIN_CALL_TIMEOUT_SECONDS", "1")]).await;
    let key = app.api_key().await;
    let s = open(&app, &key, "idv").await;
    register(&app, &s, registration(vec![tool("slow")])).await;
    let plugin = scripted_plugin(&app, &s, |_, _| None).await;
    let (_, reply) = call(&app, &s, "slow", json!({"rows": 1})).await;
    assert_eq!(reply["allowed"], false);
    assert_eq!(reply["reason"], "plugin `codap` did not answer within 1 s");
    let call_id = reply["callId"].as_i64().unwrap();
    let status = late_result(&app, &s, call_id).await;
    assert_eq!(status, 409, "too late");
    plugin.abort();
}

#[tokio::test]
async fn a_late_listener_gets_the_availability_updates_it_missed() {
    let app = spawn_app().await;
    let key = app.api_key().await;
    let s = open(&app, &key, "idv").await;
    register(&app, &s, registration(vec![tool("createTable")])).await;
    send(
        &app,
        &s,
        reqwest::Method::PATCH,
        "tools",
        Some(json!({"add": [tool("createGraph")]})),
    )
    .await;
    // The agent starts listening only now.
    let res = app
        .client
        .get(app.url(&format!("/api/sessions/{}/events", s.id)))
        .bearer_auth(&s.token)
        .send()
        .await
        .unwrap();
    assert_eq!(res.status(), 200);
    let mut res = res;
    let mut text = String::new();
    let deadline = tokio::time::Instant::now() + Duration::from_secs(5);
    while !(text.contains("tools-updated") && text.contains("event: snapshot")) {
        let chunk = tokio::time::timeout_at(deadline, res.chunk())
            .await
            .expect("events in time")
            .unwrap()
            .unwrap();
        text.push_str(&String::from_utf8_lossy(&chunk));
    }
    let frames: Vec<&str> = text.split("\n\n").filter(|f| !f.is_empty()).collect();
    let names: Vec<&str> = frames
        .iter()
        .filter_map(|f| f.lines().find_map(|l| l.strip_prefix("event: ")))
        .collect();
    assert_eq!(
        &names[..3],
        [
            "tool-availability-update",
            "tool-availability-update",
            "snapshot"
        ],
        "{text}"
    );
    let data = |f: &str| -> Value {
        serde_json::from_str(f.lines().find_map(|l| l.strip_prefix("data: ")).unwrap()).unwrap()
    };
    let first = data(frames[0]);
    assert_eq!(first["type"], "tools-registered");
    assert_eq!(first["reason"], "plugin-registration");
    assert_eq!(first["added"][0]["name"], "createTable");
    let second = data(frames[1]);
    assert_eq!(second["type"], "tools-updated");
    assert_eq!(second["added"][0]["name"], "createGraph");
    let snapshot = data(frames[2]);
    let tools = snapshot["data"]["plugin"]["tools"].as_array().unwrap();
    assert_eq!(tools.len(), 2, "the snapshot has the plugin tools too");
    assert!(snapshot["data"]["tools"]
        .as_array()
        .unwrap()
        .contains(&json!("createGraph")));
}

#[tokio::test]
async fn plugin_tools_survive_a_restart() {
    let app = spawn_app().await;
    let key = app.api_key().await;
    let s = open(&app, &key, "idv").await;
    let three = || registration(vec![tool("createTable"), tool("addRow"), tool("dropRow")]);
    register(&app, &s, three()).await;
    let plugin = scripted_plugin(&app, &s, |_, _| Some(json!({"result": "ok"}))).await;
    for name in ["addRow", "addRow", "dropRow"] {
        let (_, reply) = call(&app, &s, name, json!({"rows": 1})).await;
        assert_eq!(reply["status"], "done", "{reply}");
    }
    plugin.abort();
    // dropRow leaves and comes back: its count went with it.
    register(
        &app,
        &s,
        registration(vec![tool("createTable"), tool("addRow")]),
    )
    .await;
    register(&app, &s, three()).await;
    let app = app.restart().await;
    let (_, reply) = call(&app, &s, "createTable", json!({"rows": "many"})).await;
    assert!(
        reply["reason"]
            .as_str()
            .unwrap()
            .starts_with("invalid arguments for `createTable`"),
        "the schema is compiled again: {reply}"
    );
    assert!(available(&app, &s, "gemini").await["available"]
        .as_array()
        .unwrap()
        .contains(&json!("createTable")));
    let (_, meta, _) = send(&app, &s, reqwest::Method::GET, "metadata", None).await;
    let uses: Vec<(String, u64)> = meta["tools"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| {
            (
                t["name"].as_str().unwrap().to_owned(),
                t["usageCount"].as_u64().unwrap(),
            )
        })
        .collect();
    assert_eq!(
        uses,
        [
            ("createTable".into(), 0),
            ("addRow".into(), 2),
            ("dropRow".into(), 0)
        ],
        "in order, with the counts kept"
    );
    assert_eq!(meta["tools"][1]["parameters"], tool("addRow")["parameters"]);
}

#[tokio::test]
async fn a_call_whose_agent_stops_waiting_is_still_closed() {
    let app = spawn_app_with(&[("PLUGIN_CALL_TIMEOUT_SECONDS", "1")]).await;
    let key = app.api_key().await;
    let s = open(&app, &key, "idv").await;
    register(&app, &s, registration(vec![tool("slow")])).await;
    let plugin = scripted_plugin(&app, &s, |_, _| None).await;
    // The agent gives up after 200 ms (its connection goes away).
    let gave_up = app
        .client
        .post(app.url(&format!("/api/sessions/{}/tool-calls", s.id)))
        .bearer_auth(&s.token)
        .timeout(Duration::from_millis(200))
        .json(&json!({"name": "slow", "arguments": {"rows": 1}}))
        .send()
        .await;
    assert!(gave_up.is_err());
    tokio::time::sleep(Duration::from_millis(1500)).await;
    let (_, page, _) = send(&app, &s, reqwest::Method::GET, "calls", None).await;
    let call = page["calls"].as_array().unwrap().last().unwrap().clone();
    assert_eq!(call["status"], "failed", "{call}");
    assert_eq!(
        call["result"]["error"],
        "plugin `codap` did not answer within 1 s"
    );
    let status = late_result(&app, &s, call["id"].as_i64().unwrap()).await;
    assert_eq!(status, 409);
    plugin.abort();
}

#[tokio::test]
async fn a_registration_that_is_not_json_or_of_the_wrong_shape_is_refused_naming_why() {
    let app = spawn_app().await;
    let key = app.api_key().await;
    let s = open(&app, &key, "idv").await;
    let url = app.url(&format!("/api/sessions/{}/register-tools", s.id));
    let post = |content_type: &'static str, body: &'static str| {
        app.client
            .post(&url)
            .bearer_auth(&s.token)
            .header("content-type", content_type)
            .body(body)
            .send()
    };
    let res = post("text/plain", "{}").await.unwrap();
    assert_eq!(res.status(), 400);
    let res = post("application/json", "{\"pluginType\": ").await.unwrap();
    assert_eq!(res.status(), 400);
    let res = post(
        "application/json; charset=utf-8",
        r#"{"pluginType": "codap", "pluginVersion": "1", "availableTools": [{"name": 7}]}"#,
    )
    .await
    .unwrap();
    assert_eq!(res.status(), 422);
    let body: Value = res.json().await.unwrap();
    assert_eq!(body["Invalid"]["field"], "availableTools[0].name", "{body}");
    // Nothing was registered by any of them.
    let (status, metadata, _) = send(&app, &s, reqwest::Method::GET, "metadata", None).await;
    assert_eq!(status, 200);
    assert_eq!(metadata["toolCount"], 0, "{metadata}");
}

/// A tool whose schema carries `bytes` bytes of description.
fn sized_tool(name: &str, bytes: usize) -> Value {
    json!({
        "name": name,
        "description": format!("{name}: a CODAP action with a long schema."),
        "parameters": {"type": "object", "description": "x".repeat(bytes), "properties": {}}
    })
}

/// A tool of about 16 KB (its schema is at the 16 KiB limit's edge), like
/// the 240 of the oversized registration the budget was made for.
fn big_tool(name: &str) -> Value {
    sized_tool(name, 16_000)
}

const BUDGET: usize = 1024 * 1024;

async fn patch(app: &TestApp, s: &Session, body: Value) -> (u16, Value) {
    let (status, body, _) = send(app, s, reqwest::Method::PATCH, "tools", Some(body)).await;
    (status, body)
}

fn assert_over_budget(status: u16, body: &Value) {
    assert_eq!(status, 422, "{body}");
    assert_eq!(body["Invalid"]["field"], "tools", "{body}");
    let rule = body["Invalid"]["rule"].as_str().unwrap();
    assert!(
        rule.contains("at most 1 MiB") && rule.contains("nothing was registered"),
        "{rule}"
    );
}

#[tokio::test]
async fn changes_that_each_fit_a_body_but_together_pass_the_budget_are_refused_whole() {
    let app = spawn_app().await;
    let key = app.api_key().await;
    let s = open(&app, &key, "idv").await;
    let batch = |from: usize, n: usize| -> Vec<Value> {
        (from..from + n)
            .map(|i| sized_tool(&format!("t{i}"), 8_000))
            .collect()
    };
    // The oversized registration of the report: 240 tools of 16 KB, 3.8 MB
    // in a body under the registration's 4 MiB.
    let all: Vec<Value> = (0..240).map(|i| big_tool(&format!("t{i}"))).collect();
    let (status, body) = register(&app, &s, registration(all)).await;
    assert_over_budget(status, &body);
    let (_, meta, _) = send(&app, &s, reqwest::Method::GET, "metadata", None).await;
    assert_eq!(meta["toolCount"], 0, "nothing registered");

    // Tools of about 8 KB: 30 + 30 + 40 (820 KB) fit, 40 more do not.
    assert_eq!(register(&app, &s, registration(batch(0, 30))).await.0, 201);
    assert_eq!(patch(&app, &s, json!({"add": batch(30, 30)})).await.0, 200);
    assert_eq!(patch(&app, &s, json!({"add": batch(60, 40)})).await.0, 200);
    let (_, before, _) = send(&app, &s, reqwest::Method::GET, "metadata", None).await;
    assert_eq!(before["toolCount"], 100);
    let (status, body) = patch(&app, &s, json!({"add": batch(100, 40)})).await;
    assert_over_budget(status, &body);
    // Growing kept tools counts too (60 schemas to 16 KB: +480 KB)…
    let grown: Vec<Value> = (0..60)
        .map(|i| json!({"name": format!("t{i}"), "parameters": big_tool("x")["parameters"]}))
        .collect();
    let (status, body) = patch(&app, &s, json!({"modify": grown})).await;
    assert_over_budget(status, &body);
    // …and a registration is measured whole (70 × 16 KB).
    let seventy: Vec<Value> = (0..70).map(|i| big_tool(&format!("t{i}"))).collect();
    let (status, body) = register(&app, &s, registration(seventy)).await;
    assert_over_budget(status, &body);
    let (_, after, _) = send(&app, &s, reqwest::Method::GET, "metadata", None).await;
    assert_eq!(after["tools"], before["tools"], "nothing changed");
    // A change that stays inside the budget still goes through.
    let (status, body) = patch(&app, &s, json!({"remove": ["t0"], "add": [tool("small")]})).await;
    assert_eq!(status, 200, "{body}");
}

#[tokio::test]
async fn a_sessions_metadata_and_snapshot_stay_under_the_budget() {
    // Enough updates a minute to fill the set one tool at a time.
    let app = spawn_app_with(&[("PLUGIN_UPDATES_PER_MINUTE", "100")]).await;
    let key = app.api_key().await;
    let s = open(&app, &key, "idv").await;
    // Fill the set to the budget, 16 tools per change, until it refuses.
    let (mut next, mut changes) = (0, 0);
    loop {
        let tools: Vec<Value> = (next..next + 16)
            .map(|i| big_tool(&format!("t{i}")))
            .collect();
        let (status, body) = if next == 0 {
            register(&app, &s, registration(tools)).await
        } else {
            patch(&app, &s, json!({"add": tools})).await
        };
        if status == 422 {
            assert_over_budget(status, &body);
            break;
        }
        assert!(status == 200 || status == 201, "{status} {body}");
        next += 16;
        changes += 1;
        assert!(next < 100, "the budget never refused");
    }
    // Single tools until the last byte of room is gone.
    loop {
        let (status, body) = patch(&app, &s, json!({"add": [big_tool(&format!("t{next}"))]})).await;
        if status == 422 {
            assert_over_budget(status, &body);
            break;
        }
        assert_eq!(status, 200, "{body}");
        next += 1;
        changes += 1;
    }
    let res = app
        .client
        .get(app.url(&format!("/api/sessions/{}/metadata", s.id)))
        .bearer_auth(&s.token)
        .send()
        .await
        .unwrap();
    let text = res.text().await.unwrap();
    assert!(text.len() > BUDGET - 20_000, "nearly full: {}", text.len());
    assert!(text.len() < BUDGET, "metadata is {} bytes", text.len());

    // A late listener's snapshot carries the whole set, within the budget.
    let res = app
        .client
        .get(app.url(&format!("/api/sessions/{}/events", s.id)))
        .bearer_auth(&s.token)
        .send()
        .await
        .unwrap();
    // The updates kept for late listeners, then the snapshot.
    let events = crate::sessions::read_events(res, changes + 1).await;
    let snapshot = events
        .iter()
        .map(|(_, e)| e)
        .find(|e| e["type"] == "snapshot")
        .expect("a snapshot");
    let plugin_tools = &snapshot["data"]["plugin"]["tools"];
    assert_eq!(plugin_tools.as_array().unwrap().len(), next);
    assert!(plugin_tools.to_string().len() < BUDGET);
}

#[tokio::test]
async fn a_change_event_carries_only_the_change() {
    let app = spawn_app().await;
    let key = app.api_key().await;
    let s = open(&app, &key, "idv").await;
    let thirty: Vec<Value> = (0..30).map(|i| tool(&format!("tool{i}"))).collect();
    register(&app, &s, registration(thirty)).await;
    let watcher = crate::sessions::subscribe(&app, &s, None).await;
    let (status, body) = patch(
        &app,
        &s,
        json!({"add": [tool("createGraph")], "remove": ["tool3"],
               "modify": [{"name": "tool7", "status": "disabled"},
                          {"name": "tool8", "description": "Changed."}]}),
    )
    .await;
    assert_eq!(status, 200, "{body}");
    let mut modified: Vec<&str> = body["modified"]
        .as_array()
        .unwrap()
        .iter()
        .map(|v| v.as_str().unwrap())
        .collect();
    modified.sort();
    assert_eq!(modified, ["tool7", "tool8"]);
    let events = crate::sessions::read_events(watcher, 3).await;
    let update = events
        .iter()
        .map(|(_, e)| e)
        .find(|e| e["type"] == "tools-updated")
        .expect("a tool-availability-update");
    assert_eq!(update["added"].as_array().unwrap().len(), 1);
    assert_eq!(update["added"][0]["name"], "createGraph");
    assert_eq!(update["removed"], json!(["tool3"]));
    assert_eq!(update["modified"].as_array().unwrap().len(), 1);
    assert_eq!(update["modified"][0]["description"], "Changed.");
    assert_eq!(
        update["statusChanged"],
        json!([{"name": "tool7", "status": "disabled"}])
    );
    assert_eq!(update["toolCount"], 30);
    assert_eq!(update["reason"], "plugin-update");
    assert!(update.get("tools").is_none(), "{update}");
    let text = update.to_string();
    for unchanged in ["\"tool0\"", "\"tool29\"", "tool12"] {
        assert!(!text.contains(unchanged), "{unchanged} in {text}");
    }
}

#[tokio::test]
async fn a_schema_holding_a_number_no_tree_can_hold_fails_alone_saying_why() {
    let app = spawn_app().await;
    let key = app.api_key().await;
    let s = open(&app, &key, "idv").await;
    let big = json!({"name": "bigNumber", "description": "x", "parameters": {"type": "object", "properties": {"n": {"type": "number", "maximum": 123_456_789}}}});
    // JSON may write a number no `f64` holds; `serde_json::Value` cannot.
    let text = registration(vec![big, tool("addRow")])
        .to_string()
        .replace("123456789", "1e400");
    let res = app
        .client
        .post(app.url(&format!("/api/sessions/{}/register-tools", s.id)))
        .bearer_auth(&s.token)
        .header("content-type", "application/json")
        .body(text)
        .send()
        .await
        .unwrap();
    assert_eq!(res.status(), 201);
    let body: Value = res.json().await.unwrap();
    assert_eq!(body["registeredTools"], json!(["addRow"]));
    assert_eq!(body["failedTools"][0]["toolName"], "bigNumber");
    let error = body["failedTools"][0]["error"].as_str().unwrap();
    assert!(
        error.starts_with("parameters: number out of range"),
        "{error}"
    );
}

#[tokio::test]
async fn a_tools_pattern_refuses_calls_that_miss_it_and_a_bad_pattern_fails_its_tool_alone() {
    let app = spawn_app().await;
    let key = app.api_key().await;
    let s = open(&app, &key, "idv").await;
    let with_pattern = |name: &str, pattern: &str| {
        json!({"name": name, "description": "x", "parameters": {"type": "object",
            "properties": {"attribute": {"type": "string", "pattern": pattern}}, "required": ["attribute"]}})
    };
    let attribute = "^[A-Za-z_][A-Za-z0-9_ ]*$";
    let (status, body) = register(
        &app,
        &s,
        registration(vec![
            with_pattern("filterRows", attribute),
            with_pattern("sortRows", attribute),
            with_pattern("unclosed", "(ab"),
            with_pattern("lookBehind", "(?<=a)b"),
        ]),
    )
    .await;
    assert_eq!(status, 201, "{body}");
    assert_eq!(body["registeredTools"], json!(["filterRows", "sortRows"]));
    for (i, (name, pattern)) in [("unclosed", "(ab"), ("lookBehind", "(?<=a)b")]
        .into_iter()
        .enumerate()
    {
        assert_eq!(body["failedTools"][i]["toolName"], name);
        let error = body["failedTools"][i]["error"].as_str().unwrap();
        assert!(error.contains(pattern), "{error}");
    }
    // Both tools share one compiled pattern; each refuses what misses it.
    for name in ["filterRows", "sortRows"] {
        let (status, reply) = call(&app, &s, name, json!({"attribute": "9 lives"})).await;
        assert_eq!(status, 200);
        assert_eq!(reply["allowed"], false, "{reply}");
        let reason = reply["reason"].as_str().unwrap();
        assert!(
            reason.contains(&format!(
                "field `attribute`: \"9 lives\" does not match \"{attribute}\""
            )),
            "{reason}"
        );
    }
}
