//! The Ultravox bridge, driven by a scripted Ultravox: it reads a session's
//! call-config and then makes the call's tool traffic exactly as Ultravox
//! documents HTTP tools — each tool's dynamic parameters POSTed as the JSON
//! body to its `baseUrlPattern` with its static header parameters, a
//! `new-stage` answer replacing the tools with the new stage's — and sends
//! signed webhooks.

use crate::helpers::{spawn_app_with, TestApp};
use crate::sessions::{open_with, Session};
use serde_json::{json, Map, Value};
use switchboard::server::store::agent_sessions;
use switchboard::server::ultravox::signature::sign;

/// Where the scripted Ultravox is told Switchboard is: every tool URL must
/// start with it (built from `PUBLIC_ORIGIN`, never the request's host).
const ORIGIN: &str = "https://sb.example";
const SECRET: &str = "whsec-test";

async fn app() -> TestApp {
    spawn_app_with(&[
        ("PUBLIC_ORIGIN", ORIGIN),
        ("ULTRAVOX_WEBHOOK_SECRET", SECRET),
    ])
    .await
}

async fn vibe_session(app: &TestApp) -> Session {
    let key = app.api_key().await;
    open_with(app, &key, json!({"vibeId": "todos"})).await
}

/// `GET …/call-config?format=ultravox` with `token`: status and body.
async fn call_config(app: &TestApp, id: &str, token: &str) -> (u16, Value) {
    let res = app
        .client
        .get(app.url(&format!("/api/sessions/{id}/call-config?format=ultravox")))
        .bearer_auth(token)
        .send()
        .await
        .unwrap();
    (
        res.status().as_u16(),
        res.json().await.unwrap_or(Value::Null),
    )
}

/// What the scripted Ultravox got back from one HTTP tool.
struct Answer {
    status: u16,
    response_type: Option<String>,
    body: String,
}

/// A scripted Ultravox: the call's current tools, as the create-call body
/// (then each new stage) declared them.
struct ScriptedUltravox<'a> {
    app: &'a TestApp,
    tools: Vec<Value>,
}

impl<'a> ScriptedUltravox<'a> {
    fn new(app: &'a TestApp, config: &Value) -> Self {
        Self {
            app,
            tools: config["selectedTools"].as_array().unwrap().clone(),
        }
    }

    fn tool(&self, name: &str) -> Option<&Value> {
        self.tools
            .iter()
            .map(|t| &t["temporaryTool"])
            .find(|t| t["modelToolName"] == name)
    }

    fn names(&self) -> Vec<String> {
        self.tools
            .iter()
            .map(|t| {
                t["toolName"]
                    .as_str()
                    .or(t["temporaryTool"]["modelToolName"].as_str())
                    .unwrap()
                    .to_owned()
            })
            .collect()
    }

    /// The model calls `name` with `arguments`: Ultravox POSTs them to the
    /// tool's URL with its static parameters; a new stage replaces the tools.
    async fn invoke(&mut self, name: &str, arguments: Value) -> Answer {
        let tool = self
            .tool(name)
            .unwrap_or_else(|| panic!("{name} is not a tool of the call"))
            .clone();
        let url = tool["http"]["baseUrlPattern"]
            .as_str()
            .expect("an HTTP tool");
        assert_eq!(tool["http"]["httpMethod"], "POST");
        let answer = self.post(url, &tool["staticParameters"], arguments).await;
        if answer.response_type.as_deref() == Some("new-stage") {
            let stage: Value = serde_json::from_str(&answer.body).unwrap();
            self.tools = stage["selectedTools"].as_array().unwrap().clone();
        }
        answer
    }

    /// POSTs `arguments` to `url` (on the test server) with `statics`.
    async fn post(&self, url: &str, statics: &Value, arguments: Value) -> Answer {
        let path = url
            .strip_prefix(ORIGIN)
            .unwrap_or_else(|| panic!("{url} is not at PUBLIC_ORIGIN"));
        let mut req = self.app.client.post(self.app.url(path)).json(&arguments);
        for p in statics.as_array().unwrap() {
            assert_eq!(p["location"], "PARAMETER_LOCATION_HEADER");
            req = req.header(p["name"].as_str().unwrap(), p["value"].as_str().unwrap());
        }
        let res = req.send().await.unwrap();
        Answer {
            status: res.status().as_u16(),
            response_type: res
                .headers()
                .get("x-ultravox-response-type")
                .map(|v| v.to_str().unwrap().to_owned()),
            body: res.text().await.unwrap(),
        }
    }
}

/// Arguments for `tool` that its schema accepts: a word for each required
/// string parameter.
fn valid_arguments(tool: &Value) -> Value {
    let mut args = Map::new();
    for p in tool["dynamicParameters"].as_array().unwrap() {
        if p["required"] == true {
            let value = match p["schema"]["type"].as_str() {
                Some("integer") | Some("number") => json!(1),
                Some("boolean") => json!(true),
                Some("array") => json!([]),
                _ => json!("milk"),
            };
            args.insert(p["name"].as_str().unwrap().to_owned(), value);
        }
    }
    Value::Object(args)
}

async fn is_ended(app: &TestApp, id: &str) -> bool {
    agent_sessions::find(&app.state.db, id)
        .await
        .unwrap()
        .unwrap()
        .ended_at
        .is_some()
}

async fn recorded_calls(app: &TestApp, s: &Session) -> Vec<Value> {
    let page: Value = app
        .client
        .get(app.url(&format!("/api/sessions/{}/calls", s.id)))
        .bearer_auth(&s.token)
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    page["calls"].as_array().cloned().unwrap_or_default()
}

#[tokio::test]
async fn a_call_config_declares_switchboards_tools_as_http_tools_at_the_public_origin() {
    let app = app().await;
    let s = vibe_session(&app).await;
    let (status, config) = call_config(&app, &s.id, &s.token).await;
    assert_eq!(status, 200, "{config}");
    assert!(config["systemPrompt"]
        .as_str()
        .unwrap()
        .starts_with("You are Hominio"));
    assert_eq!(config["voice"], "Mark");
    assert_eq!(
        config["metadata"],
        json!({"sessionId": s.id, "vibeId": "todos", "agentId": "Hominio"})
    );
    let uv = ScriptedUltravox::new(&app, &config);
    assert_eq!(uv.names(), ["hangUp", "switchAgent"]);
    for name in ["hangUp", "switchAgent"] {
        let tool = uv.tool(name).unwrap();
        assert_eq!(
            tool["http"]["baseUrlPattern"],
            format!("{ORIGIN}/api/sessions/{}/ultravox/tools/{name}", s.id)
        );
        assert_eq!(
            tool["staticParameters"],
            json!([{"name": "Authorization", "location": "PARAMETER_LOCATION_HEADER", "value": format!("Bearer {}", s.token)}])
        );
    }

    // Only the session token reads it; only ultravox is a format.
    let (status, _) = call_config(&app, &s.id, "st_wrong").await;
    assert_eq!(status, 401);
    let res = app
        .client
        .get(app.url(&format!("/api/sessions/{}/call-config?format=gemini", s.id)))
        .bearer_auth(&s.token)
        .send()
        .await
        .unwrap();
    assert_eq!(res.status(), 422);

    // Without PUBLIC_ORIGIN there is no URL to give Ultravox: 503 naming it.
    let bare = spawn_app_with(&[]).await;
    let s = vibe_session(&bare).await;
    let (status, body) = call_config(&bare, &s.id, &s.token).await;
    assert_eq!(status, 503);
    assert!(body.to_string().contains("PUBLIC_ORIGIN"), "{body}");
}

#[tokio::test]
async fn ultravox_calls_tools_switches_agents_and_hangs_up_through_switchboard() {
    let app = app().await;
    let s = vibe_session(&app).await;
    let (_, config) = call_config(&app, &s.id, &s.token).await;
    let mut uv = ScriptedUltravox::new(&app, &config);

    // A tool the current agent lacks (a stale stage would still name it)
    // is refused in words the model reads.
    let statics = uv.tool("switchAgent").unwrap()["staticParameters"].clone();
    let url = format!("{ORIGIN}/api/sessions/{}/ultravox/tools/createTodo", s.id);
    let refused = uv.post(&url, &statics, json!({"todoText": "milk"})).await;
    assert_eq!(refused.status, 200);
    assert!(
        refused.body.starts_with("Refused by Switchboard: "),
        "{}",
        refused.body
    );
    assert!(refused.body.contains("createTodo"), "{}", refused.body);

    // switchAgent answers the new stage: header, and the stage as the body,
    // whose tools still reach Switchboard with the session's credential.
    let switched = uv
        .invoke("switchAgent", json!({"agentName": "Oliver"}))
        .await;
    assert_eq!(switched.status, 200);
    assert_eq!(switched.response_type.as_deref(), Some("new-stage"));
    let stage: Value = serde_json::from_str(&switched.body).unwrap();
    assert!(stage["systemPrompt"]
        .as_str()
        .unwrap()
        .starts_with("You are Oliver"));
    assert_eq!(
        stage["toolResultText"],
        "I'm now switching you to Oliver..."
    );
    assert!(
        uv.names().contains(&"createTodo".to_owned()),
        "{:?}",
        uv.names()
    );
    let create = uv.tool("createTodo").unwrap().clone();
    assert_eq!(
        create["staticParameters"][0]["value"],
        format!("Bearer {}", s.token)
    );
    assert!(!switched.body.contains("{sessionToken}"));

    // A tool call allowed, with its result as JSON.
    let made = uv.invoke("createTodo", valid_arguments(&create)).await;
    assert_eq!(made.status, 200, "{}", made.body);
    assert_eq!(made.response_type, None);
    let result: Value = serde_json::from_str(&made.body).unwrap();
    assert_eq!(result["success"], true, "{result}");
    // A tool that runs and fails answers in its own words (seed 003's
    // `{success: false, error}`), not as a refusal.
    let missing = uv
        .invoke("toggleTodo", json!({"todoText": "no such todo anywhere"}))
        .await;
    assert_eq!(missing.status, 200, "{}", missing.body);
    let failed: Value = serde_json::from_str(&missing.body).unwrap();
    assert_eq!(failed["success"], false, "{failed}");
    assert!(
        failed["error"].as_str().is_some_and(|e| !e.is_empty()),
        "{failed}"
    );
    // Arguments the schema refuses: a refusal, not an error status.
    let bad = uv.invoke("createTodo", json!({})).await;
    assert_eq!(bad.status, 200);
    assert!(
        bad.body.starts_with("Refused by Switchboard: "),
        "{}",
        bad.body
    );

    // Every call is on the timeline as any call is; the stage kept there
    // has no credential in it.
    let calls = recorded_calls(&app, &s).await;
    let tools: Vec<&str> = calls.iter().map(|c| c["tool"].as_str().unwrap()).collect();
    for tool in ["createTodo", "switchAgent"] {
        assert!(tools.contains(&tool), "{tools:?}");
    }
    assert!(!serde_json::to_string(&calls).unwrap().contains(&s.token));

    // hangUp: Ultravox's hang-up, and the session has ended.
    let hung_up = uv.invoke("hangUp", json!({})).await;
    assert_eq!(hung_up.status, 200, "{}", hung_up.body);
    assert_eq!(hung_up.response_type.as_deref(), Some("hang-up"));
    assert!(is_ended(&app, &s.id).await);
    let after = uv.invoke("createTodo", valid_arguments(&create)).await;
    assert!(
        after.body.starts_with("Refused by Switchboard: "),
        "{}",
        after.body
    );
}

#[tokio::test]
async fn the_tool_endpoint_lets_in_only_the_sessions_own_token() {
    let app = app().await;
    let s = vibe_session(&app).await;
    let url = app.url(&format!(
        "/api/sessions/{}/ultravox/tools/switchAgent",
        s.id
    ));
    let res = app
        .client
        .post(&url)
        .json(&json!({"agentName": "Oliver"}))
        .send()
        .await
        .unwrap();
    assert_eq!(res.status(), 401);
    let other = vibe_session(&app).await;
    let res = app
        .client
        .post(&url)
        .bearer_auth(&other.token)
        .json(&json!({"agentName": "Oliver"}))
        .send()
        .await
        .unwrap();
    assert_eq!(res.status(), 403);
    // A body that is not an object is a refusal the model reads.
    let res = app
        .client
        .post(&url)
        .bearer_auth(&s.token)
        .body("[1]")
        .send()
        .await
        .unwrap();
    assert_eq!(res.status(), 200);
    assert!(res
        .text()
        .await
        .unwrap()
        .starts_with("Refused by Switchboard: "));
}

#[tokio::test]
async fn a_vibes_client_tools_and_call_settings_reach_the_call_config() {
    let app = app().await;
    let key = app.api_key().await;
    let res = app
        .client
        .get(app.url("/api/vibes/todos"))
        .bearer_auth(&key)
        .send()
        .await
        .unwrap();
    let etag = res.headers()["etag"].to_str().unwrap().to_owned();
    let mut vibe: Value = res.json().await.unwrap();
    vibe["clientTools"] = json!(["toggleTodo", "nope"]);
    let refused = app
        .client
        .put(app.url("/api/vibes/todos"))
        .bearer_auth(&key)
        .header("If-Match", &etag)
        .json(&vibe)
        .send()
        .await
        .unwrap();
    assert_eq!(refused.status(), 422);
    let body: Value = refused.json().await.unwrap();
    assert!(
        body.to_string().contains("vibes.todos.clientTools[1]"),
        "{body}"
    );

    vibe["clientTools"] = json!(["toggleTodo"]);
    vibe["callSettings"] = json!({"model": "fixie-ai/ultravox", "languageHint": "en", "temperature": 0.3, "maxDuration": "600s", "firstSpeaker": "FIRST_SPEAKER_AGENT"});
    let res = app
        .client
        .put(app.url("/api/vibes/todos"))
        .bearer_auth(&key)
        .header("If-Match", &etag)
        .json(&vibe)
        .send()
        .await
        .unwrap();
    assert_eq!(res.status(), 200, "{}", res.text().await.unwrap());

    let s = open_with(&app, &key, json!({"vibeId": "todos", "agentId": "Oliver"})).await;
    let (_, config) = call_config(&app, &s.id, &s.token).await;
    assert_eq!(config["model"], "fixie-ai/ultravox");
    assert_eq!(config["languageHint"], "en");
    assert_eq!(config["temperature"], 0.3);
    assert_eq!(config["maxDuration"], "600s");
    assert_eq!(config["firstSpeaker"], "FIRST_SPEAKER_AGENT");
    let uv = ScriptedUltravox::new(&app, &config);
    assert_eq!(uv.tool("toggleTodo").unwrap()["client"], json!({}));
    assert!(uv.tool("toggleTodo").unwrap().get("http").is_none());
    assert!(uv.tool("createTodo").unwrap()["http"].is_object());
    // The vibe's own config (no session yet) carries the settings too.
    let res = app
        .client
        .get(app.url("/api/vibes/todos/call-config?format=ultravox"))
        .bearer_auth(&key)
        .send()
        .await
        .unwrap();
    let vibe_config: Value = res.json().await.unwrap();
    assert_eq!(vibe_config["model"], "fixie-ai/ultravox");
}

/// POSTs an Ultravox webhook of `event` for `call`, signed with `secret`
/// at `sent` (Unix seconds).
async fn webhook(app: &TestApp, event: &str, call: Value, secret: &str, sent: i64) -> u16 {
    let body = json!({"event": event, "call": call}).to_string();
    let stamp = jiff::Timestamp::from_second(sent).unwrap().to_string();
    let signature = sign(secret, body.as_bytes(), &stamp);
    app.client
        .post(app.url("/api/ultravox/webhook"))
        .header("X-Ultravox-Webhook-Timestamp", &stamp)
        .header(
            "X-Ultravox-Webhook-Signature",
            format!("0badc0de,{signature}"),
        )
        .header("Content-Type", "application/json")
        .body(body)
        .send()
        .await
        .unwrap()
        .status()
        .as_u16()
}

#[tokio::test]
async fn a_signed_call_ended_webhook_ends_the_session_and_a_bad_or_stale_one_is_refused() {
    let app = app().await;
    let s = vibe_session(&app).await;
    let (_, config) = call_config(&app, &s.id, &s.token).await;
    // Ultravox echoes the call object, with the metadata it was created with.
    let call = json!({"callId": "3c90c3cc", "endReason": "hangup", "metadata": config["metadata"]});
    let now = app.state.clock.now();

    assert_eq!(
        webhook(&app, "call.ended", call.clone(), "not-the-secret", now).await,
        401
    );
    assert_eq!(
        webhook(&app, "call.ended", call.clone(), SECRET, now - 120).await,
        401
    );
    assert!(!is_ended(&app, &s.id).await);
    assert_eq!(
        webhook(&app, "call.started", call.clone(), SECRET, now).await,
        204
    );
    assert!(!is_ended(&app, &s.id).await);

    assert_eq!(
        webhook(&app, "call.ended", call.clone(), SECRET, now).await,
        204
    );
    assert!(is_ended(&app, &s.id).await);
    // Retried, or a call Switchboard never configured: acknowledged, so
    // Ultravox does not retry it.
    assert_eq!(webhook(&app, "call.ended", call, SECRET, now).await, 204);
    let stranger = json!({"callId": "x", "metadata": {"sessionId": "nope"}});
    assert_eq!(
        webhook(&app, "call.ended", stranger, SECRET, now).await,
        204
    );

    // Unsigned or without the setting.
    let res = app
        .client
        .post(app.url("/api/ultravox/webhook"))
        .body("{}")
        .send()
        .await
        .unwrap();
    assert_eq!(res.status(), 401);
    let bare = spawn_app_with(&[]).await;
    let res = bare
        .client
        .post(bare.url("/api/ultravox/webhook"))
        .body("{}")
        .send()
        .await
        .unwrap();
    assert_eq!(res.status(), 503);
    assert!(res
        .text()
        .await
        .unwrap()
        .contains("ULTRAVOX_WEBHOOK_SECRET"));
}
