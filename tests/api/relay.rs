//! Calls relayed to a plugin survive its stream reconnecting: each carries
//! its deadline, a call made while the stream is closed waits for the
//! plugin to come back (within the grace) and is offered on the new
//! stream with frame ids that keep increasing; past its deadline the
//! agent reads a timeout and a late answer is 409; answered twice, 409.

use crate::helpers::{spawn_app, spawn_app_with, TestApp};
use crate::plugin_tokens::open_both;
use crate::sessions::{call, Session};
use serde_json::{json, Value};
use std::time::Duration;

/// A session opened in `idv` with plugin tool `addNote` registered by its
/// plugin: (the agent, the plugin).
pub async fn session_with_tool(app: &TestApp) -> (Session, Session) {
    let key = app.api_key().await;
    let (agent, plugin) = open_both(app, &key, json!({"workflowId": "idv"})).await;
    let res = app
        .client
        .post(app.url(&format!("/api/sessions/{}/register-tools", plugin.id)))
        .bearer_auth(&plugin.token)
        .json(&json!({
            "pluginType": "custom",
            "pluginVersion": "1.0",
            "availableTools": [{
                "name": "addNote",
                "description": "Adds a note to the table.",
                "parameters": {"type": "object", "properties": {"text": {"type": "string"}}, "required": ["text"]}
            }]
        }))
        .send()
        .await
        .unwrap();
    assert_eq!(res.status(), 201);
    (agent, plugin)
}

/// One SSE frame: its id, event name and JSON data.
#[derive(Debug)]
pub struct Frame {
    pub id: u64,
    pub event: String,
    pub data: Value,
}

/// A plugin's open `plugin-events` stream.
pub struct PluginStream {
    res: reqwest::Response,
    buffer: String,
}

impl PluginStream {
    /// Opens the stream as `plugin`, sending `Last-Event-ID` when given.
    pub async fn open(app: &TestApp, plugin: &Session, last_event_id: Option<u64>) -> Self {
        let mut req = app
            .client
            .get(app.url(&format!("/api/sessions/{}/plugin-events", plugin.id)))
            .bearer_auth(&plugin.token)
            .header("accept", "text/event-stream");
        if let Some(id) = last_event_id {
            req = req.header("last-event-id", id.to_string());
        }
        let res = req.send().await.unwrap();
        assert_eq!(res.status(), 200);
        Self {
            res,
            buffer: String::new(),
        }
    }

    /// The next event within `wait` (keep-alive comments skipped).
    pub async fn next(&mut self, wait: Duration) -> Option<Frame> {
        let until = tokio::time::Instant::now() + wait;
        loop {
            if let Some(end) = self.buffer.find("\n\n") {
                let text: String = self.buffer.drain(..end + 2).collect();
                let field = |name: &str| {
                    text.lines()
                        .find_map(|l| l.strip_prefix(name).map(str::to_owned))
                };
                let Some(data) = field("data: ") else {
                    continue;
                };
                return Some(Frame {
                    id: field("id: ").unwrap().parse().unwrap(),
                    event: field("event: ").unwrap(),
                    data: serde_json::from_str(&data).unwrap(),
                });
            }
            let chunk = tokio::time::timeout_at(until, self.res.chunk())
                .await
                .ok()?;
            let chunk = chunk.unwrap()?;
            self.buffer.push_str(&String::from_utf8_lossy(&chunk));
        }
    }

    /// The next `tool-call-request` (within 5 s).
    pub async fn request(&mut self) -> Frame {
        let frame = self.next(Duration::from_secs(5)).await.expect("a request");
        assert_eq!(frame.event, "tool-call-request", "{frame:?}");
        frame
    }
}

/// The plugin's answer `body` to call `call_id`: its status.
pub async fn answer(app: &TestApp, plugin: &Session, call_id: &str, body: Value) -> u16 {
    app.client
        .post(app.url(&format!(
            "/api/sessions/{}/tool-results/{call_id}",
            plugin.id
        )))
        .bearer_auth(&plugin.token)
        .json(&body)
        .send()
        .await
        .unwrap()
        .status()
        .as_u16()
}

/// The agent calls `addNote` in the background; its reply comes later.
pub fn agent_calls(app: &TestApp, agent: &Session, text: &str) -> tokio::task::JoinHandle<Value> {
    let request = app
        .client
        .post(app.url(&format!("/api/sessions/{}/tool-calls", agent.id)))
        .bearer_auth(&agent.token)
        .json(&json!({"name": "addNote", "arguments": {"text": text}}));
    tokio::spawn(async move {
        let res = request.send().await.unwrap();
        assert_eq!(res.status(), 200);
        res.json().await.unwrap()
    })
}

/// The deadline and time left a request carries are the call timeout's.
pub fn assert_deadline(request: &Value, timeout_ms: i64) {
    let left = request["timeoutMs"].as_i64().unwrap();
    assert!(left > 0 && left <= timeout_ms, "{request}");
    let deadline: jiff::Timestamp = request["deadline"].as_str().unwrap().parse().unwrap();
    let from_now = deadline.as_millisecond() - jiff::Timestamp::now().as_millisecond();
    assert!((from_now - left).abs() < 2_000, "{request}");
    assert!(request["deadline"].as_str().unwrap().ends_with('Z'));
}

#[tokio::test]
async fn calls_made_around_a_reconnect_are_offered_again_and_answered() {
    let app = spawn_app().await;
    let (agent, plugin) = session_with_tool(&app).await;
    let mut stream = PluginStream::open(&app, &plugin, None).await;
    let first = agent_calls(&app, &agent, "one");
    let offered = stream.request().await;
    assert_eq!(offered.data["name"], "addNote");
    assert_eq!(offered.data["arguments"], json!({"text": "one"}));
    assert_deadline(&offered.data, 10_000);

    // The stream drops before the plugin answers; a second call comes
    // while it is away, and waits instead of being refused.
    drop(stream);
    let second = agent_calls(&app, &agent, "two");
    tokio::time::sleep(Duration::from_millis(300)).await;
    assert!(!second.is_finished(), "the call waits for the plugin");

    let mut stream = PluginStream::open(&app, &plugin, Some(offered.id)).await;
    let again = stream.request().await;
    let then = stream.request().await;
    assert_eq!(again.data["callId"], offered.data["callId"], "oldest first");
    assert_eq!(then.data["arguments"], json!({"text": "two"}));
    assert!(
        offered.id < again.id && again.id < then.id,
        "ids keep increasing"
    );
    assert_deadline(&then.data, 10_000);

    let one = again.data["callId"].as_str().unwrap();
    let two = then.data["callId"].as_str().unwrap();
    assert_eq!(
        answer(&app, &plugin, two, json!({"result": {"notes": 2}})).await,
        200
    );
    assert_eq!(
        answer(&app, &plugin, one, json!({"result": {"notes": 1}})).await,
        200
    );
    let (first, second) = (first.await.unwrap(), second.await.unwrap());
    assert_eq!(first["allowed"], true, "{first}");
    assert_eq!(first["result"], json!({"notes": 1}));
    assert_eq!(second["result"], json!({"notes": 2}));

    // Answered twice: the second is refused; nothing is offered again.
    assert_eq!(answer(&app, &plugin, one, json!({"result": 3})).await, 409);
    let mut fresh = PluginStream::open(&app, &plugin, None).await;
    assert!(fresh.next(Duration::from_millis(300)).await.is_none());
}

#[tokio::test]
async fn another_stream_of_the_session_is_offered_a_waiting_call() {
    let app = spawn_app().await;
    let (agent, plugin) = session_with_tool(&app).await;
    let mut one = PluginStream::open(&app, &plugin, None).await;
    let call = agent_calls(&app, &agent, "shared");
    let offered = one.request().await;
    let mut two = PluginStream::open(&app, &plugin, None).await;
    let also = two.request().await;
    assert_eq!(also.data["callId"], offered.data["callId"]);
    assert!(also.id > offered.id);
    let id = also.data["callId"].as_str().unwrap();
    assert_eq!(
        answer(&app, &plugin, id, json!({"error": "no table"})).await,
        200
    );
    let reply = call.await.unwrap();
    assert_eq!(reply["allowed"], false);
    assert!(reply["reason"].as_str().unwrap().contains("no table"));
    assert_eq!(answer(&app, &plugin, id, json!({"result": 1})).await, 409);
}

#[tokio::test]
async fn a_call_nobody_answers_times_out_readably_and_its_late_answer_is_409() {
    let app = spawn_app_with(&[("PLUGIN_CALL_TIMEOUT_SECONDS", "1")]).await;
    let (agent, plugin) = session_with_tool(&app).await;
    drop(PluginStream::open(&app, &plugin, None).await);
    // The stream is closed: the call waits for a reconnect until its
    // deadline, then the agent reads why.
    let reply = agent_calls(&app, &agent, "late").await.unwrap();
    assert_eq!(reply["allowed"], false, "{reply}");
    assert_eq!(reply["reason"], "plugin `custom` did not answer within 1 s");
    let call_id = reply["callId"].as_i64().unwrap().to_string();
    // Past its deadline it is offered to no one, and an answer is late.
    let mut stream = PluginStream::open(&app, &plugin, None).await;
    assert!(stream.next(Duration::from_millis(300)).await.is_none());
    assert_eq!(
        answer(&app, &plugin, &call_id, json!({"result": 1})).await,
        409
    );
}

#[tokio::test]
async fn a_call_past_its_deadline_on_the_clock_is_not_offered() {
    let app = spawn_app_with(&[("PLUGIN_CALL_TIMEOUT_SECONDS", "2")]).await;
    let (agent, plugin) = session_with_tool(&app).await;
    drop(PluginStream::open(&app, &plugin, None).await);
    let call = agent_calls(&app, &agent, "stale");
    tokio::time::sleep(Duration::from_millis(200)).await;
    app.state.clock.advance(3);
    let mut stream = PluginStream::open(&app, &plugin, None).await;
    assert!(stream.next(Duration::from_millis(300)).await.is_none());
    let reply = call.await.unwrap();
    assert_eq!(reply["reason"], "plugin `custom` did not answer within 2 s");
}

#[tokio::test]
async fn a_plugin_gone_past_the_grace_is_refused_at_once() {
    let app = spawn_app().await;
    let (agent, plugin) = session_with_tool(&app).await;
    drop(PluginStream::open(&app, &plugin, None).await);
    // Give the server a moment to see the stream go.
    tokio::time::sleep(Duration::from_millis(200)).await;
    let grace = switchboard::server::agent::plugins::RECONNECT_GRACE_MS / 1000;
    app.state.clock.advance(grace + 1);
    let started = std::time::Instant::now();
    let (_, reply) = call(&app, &agent, "addNote", json!({"text": "x"})).await;
    assert_eq!(
        reply["reason"],
        "plugin `custom` is not connected; its tools cannot run now"
    );
    assert!(started.elapsed() < Duration::from_secs(2));
}

/// The plugin disables `addNote` through `app`; `stream` (on any
/// instance) hears it as a `tool-availability-update` within 5 s.
pub async fn disabling_is_heard(app: &TestApp, plugin: &Session, stream: &mut PluginStream) {
    let res = app
        .client
        .patch(app.url(&format!("/api/sessions/{}/tools", plugin.id)))
        .bearer_auth(&plugin.token)
        .json(&json!({"modify": [{"name": "addNote", "status": "disabled"}]}))
        .send()
        .await
        .unwrap();
    assert_eq!(res.status(), 200);
    let update = stream.next(Duration::from_secs(5)).await.unwrap();
    assert_eq!(update.event, "tool-availability-update");
    assert_eq!(
        update.data["statusChanged"],
        json!([{"name": "addNote", "status": "disabled"}])
    );
}

#[tokio::test]
async fn the_plugin_stream_also_carries_its_availability_updates() {
    let app = spawn_app().await;
    let (_, plugin) = session_with_tool(&app).await;
    let mut stream = PluginStream::open(&app, &plugin, None).await;
    disabling_is_heard(&app, &plugin, &mut stream).await;
}

/// The plugin's answer `body` at the session's one answer address (the
/// call's id in the body): its status and JSON.
async fn answer_in_body(app: &TestApp, plugin: &Session, body: Value) -> (u16, Value) {
    let res = app
        .client
        .post(app.url(&format!("/api/sessions/{}/tool-results", plugin.id)))
        .bearer_auth(&plugin.token)
        .json(&body)
        .send()
        .await
        .unwrap();
    crate::helpers::status_and_json(res).await
}

#[tokio::test]
async fn an_answer_with_the_call_id_in_its_body_is_the_same_answer() {
    let app = spawn_app().await;
    let (agent, plugin) = session_with_tool(&app).await;
    let mut stream = PluginStream::open(&app, &plugin, None).await;
    let call = agent_calls(&app, &agent, "one");
    let offered = stream.request().await;
    let id = offered.data["callId"].as_str().unwrap().to_owned();

    // Broken bodies name what is wrong and answer nothing.
    let (status, body) = answer_in_body(&app, &plugin, json!({"result": 1})).await;
    assert_eq!(status, 422, "{body}");
    let (status, body) = answer_in_body(&app, &plugin, json!({"callId": "x", "result": 1})).await;
    assert_eq!(status, 422, "{body}");
    assert!(body.to_string().contains("callId"), "{body}");
    let (status, _) = answer_in_body(&app, &plugin, json!({"callId": id})).await;
    assert_eq!(status, 422);
    assert!(!call.is_finished());

    let (status, body) =
        answer_in_body(&app, &plugin, json!({"callId": id, "result": {"notes": 1}})).await;
    assert_eq!(status, 200, "{body}");
    assert_eq!(body["callId"], id.as_str());
    let reply = call.await.unwrap();
    assert_eq!(reply["result"], json!({"notes": 1}), "{reply}");
    // Answered twice (either form): 409; the session's token is not a
    // plugin's, and another session's call is not found.
    let (status, _) = answer_in_body(&app, &plugin, json!({"callId": id, "result": 2})).await;
    assert_eq!(status, 409);
    assert_eq!(answer(&app, &plugin, &id, json!({"result": 2})).await, 409);
    let (status, _) =
        answer_in_body(&app, &plugin, json!({"callId": "999999", "error": "no"})).await;
    assert_eq!(status, 404);
}
