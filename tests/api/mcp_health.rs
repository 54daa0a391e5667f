//! What admins watch of connected MCP servers: each server's call count,
//! median call time and tool count, and `GET /api/mcp-servers/events`,
//! which sends the whole list at once and again after each change (a
//! server added or removed, its status, a call), a few frames a second at
//! most — against the in-process upstream of `mcp_servers`.

use crate::helpers::{spawn_app, TestApp, ADMIN, TEACHER};
use crate::mcp_servers::{add_server, connected, get_server, start_upstream, wait_for};
use crate::sessions::call;
use serde_json::{json, Value};
use std::time::Duration;
use switchboard::domain::api_key::Scope;
use switchboard::domain::limits::MCP_SERVERS_FRAME_GAP_MS;

/// An open `GET /api/mcp-servers/events`, read frame by frame.
struct Frames {
    res: reqwest::Response,
    buffer: String,
}

impl Frames {
    async fn open(app: &TestApp, key: &str) -> Self {
        let res = app
            .client
            .get(app.url("/api/mcp-servers/events"))
            .bearer_auth(key)
            .send()
            .await
            .unwrap();
        assert_eq!(res.status(), 200);
        assert_eq!(res.headers()["content-type"], "text/event-stream");
        Frames {
            res,
            buffer: String::new(),
        }
    }

    /// The next `servers` frame's data, if one comes within `within`.
    async fn next(&mut self, within: Duration) -> Option<Value> {
        let deadline = tokio::time::Instant::now() + within;
        loop {
            if let Some(end) = self.buffer.find("\n\n") {
                let block: String = self.buffer.drain(..end + 2).collect();
                if !block.contains("event: servers\n") {
                    continue;
                }
                let data = block.lines().find_map(|l| l.strip_prefix("data: "))?;
                return Some(serde_json::from_str(data).unwrap());
            }
            match tokio::time::timeout_at(deadline, self.res.chunk()).await {
                Ok(Ok(Some(chunk))) => self.buffer.push_str(&String::from_utf8_lossy(&chunk)),
                _ => return None,
            }
        }
    }

    /// The first frame for which `done` holds (within 10 s).
    async fn until(&mut self, what: &str, done: impl Fn(&Value) -> bool) -> Value {
        let mut last = Value::Null;
        while let Some(frame) = self.next(Duration::from_secs(10)).await {
            if done(&frame) {
                return frame;
            }
            last = frame;
        }
        panic!("no frame came with {what}; the last was {last}");
    }
}

/// Server `name` in a frame.
fn server<'a>(frame: &'a Value, name: &str) -> Option<&'a Value> {
    frame["servers"]
        .as_array()
        .unwrap()
        .iter()
        .find(|s| s["name"] == name)
}

#[tokio::test]
async fn the_stream_sends_the_list_at_once_then_after_a_call_and_after_a_server_is_added_or_removed(
) {
    let (app, _up, key, id, s) = connected().await;
    let mut frames = Frames::open(&app, &key).await;
    let first = frames.next(Duration::from_secs(5)).await.unwrap();
    let test = server(&first, "test").unwrap();
    assert_eq!(test["status"], "connected", "{first}");
    assert_eq!(test["toolCount"], 3, "{first}");
    assert_eq!(test["calls"], 0, "{first}");
    assert!(test["medianCallMs"].is_null(), "{first}");
    assert!(!first.to_string().contains("s3cret"), "never the headers");

    let (status, reply) = call(&app, &s, "test__echo", json!({"message": "hi"})).await;
    assert_eq!(
        (status, reply["allowed"].clone()),
        (200, json!(true)),
        "{reply}"
    );
    let after_call = frames
        .until("the call", |f| {
            server(f, "test").is_some_and(|t| t["calls"] == 1)
        })
        .await;
    let median = server(&after_call, "test").unwrap()["medianCallMs"].as_f64();
    assert!(median.is_some_and(|m| m >= 0.0), "{after_call}");
    // The REST view has the same figures.
    let view = get_server(&app, &key, id).await;
    assert_eq!(
        (view["calls"].clone(), view["toolCount"].clone()),
        (json!(1), json!(3))
    );
    assert_eq!(view["medianCallMs"].as_f64(), median, "{view}");

    let other = start_upstream().await;
    let (status, body) = add_server(&app, &key, json!({"name": "other", "url": other.url})).await;
    assert_eq!(status, 201, "{body}");
    // Added, connected and imported: one frame or more (changes close
    // together are sent together).
    frames
        .until("other connected", |f| {
            server(f, "other").is_some_and(|o| o["status"] == "connected" && o["toolCount"] == 3)
        })
        .await;

    let res = app
        .client
        .delete(app.url(&format!("/api/mcp-servers/{}", body["id"])))
        .bearer_auth(&key)
        .send()
        .await
        .unwrap();
    assert_eq!(res.status(), 204);
    let gone = frames
        .until("other removed", |f| server(f, "other").is_none())
        .await;
    assert_eq!(server(&gone, "test").unwrap()["calls"], 1, "{gone}");
}

#[tokio::test]
async fn a_burst_of_calls_sends_a_few_frames_a_second_not_one_per_call() {
    let (app, _up, key, id, s) = connected().await;
    let mut frames = Frames::open(&app, &key).await;
    frames.next(Duration::from_secs(5)).await.unwrap();
    let started = tokio::time::Instant::now();
    for i in 0..30 {
        let (status, _) = call(&app, &s, "test__echo", json!({"message": format!("{i}")})).await;
        assert_eq!(status, 200);
    }
    let took = started.elapsed();
    let mut seen = 0;
    let last = loop {
        let frame = frames.next(Duration::from_secs(5)).await.unwrap();
        seen += 1;
        if server(&frame, "test").unwrap()["calls"] == 30 {
            break frame;
        }
    };
    // One frame per gap while the calls went on, one after them, and one
    // for a change that straddled the start.
    let allowed = took.as_millis() as usize / MCP_SERVERS_FRAME_GAP_MS as usize + 2;
    assert!(seen <= allowed, "{seen} frames for 30 calls in {took:?}");
    assert!(seen < 30, "{seen} frames for 30 calls");
    assert_eq!(get_server(&app, &key, id).await["calls"], 30);
    assert!(server(&last, "test").unwrap()["medianCallMs"].is_number());
}

#[tokio::test]
async fn the_signed_in_admin_or_a_catalogue_write_key_may_follow_the_servers_and_no_one_else() {
    let app = spawn_app().await;
    let url = app.url("/api/mcp-servers/events");
    let status = |res: reqwest::Response| res.status().as_u16();
    assert_eq!(status(app.client.get(&url).send().await.unwrap()), 401);
    let other_key = app.api_key_with(&[Scope::BindingsRead]).await;
    let res = app
        .client
        .get(&url)
        .bearer_auth(other_key)
        .send()
        .await
        .unwrap();
    assert_eq!(res.status(), 403);
    assert!(res.text().await.unwrap().contains("catalogue:write"));
    let teacher = app.signed_in(TEACHER).await;
    assert_eq!(status(teacher.get(&url).send().await.unwrap()), 403);

    let admin = app.signed_in(ADMIN).await;
    let res = admin.get(&url).send().await.unwrap();
    assert_eq!(res.status(), 200);
    let mut frames = Frames {
        res,
        buffer: String::new(),
    };
    let first = frames.next(Duration::from_secs(5)).await.unwrap();
    assert_eq!(first, json!({"servers": []}));
    let key = app.api_key_with(&[Scope::CatalogueWrite]).await;
    let up = start_upstream().await;
    let (_, body) = add_server(&app, &key, json!({"name": "test", "url": up.url})).await;
    let id = body["id"].as_i64().unwrap();
    let added = frames
        .until("test added", |f| server(f, "test").is_some())
        .await;
    assert_eq!(server(&added, "test").unwrap()["calls"], 0);
    wait_for(&app, &key, id, |s| s["status"] == "connected").await;
}
