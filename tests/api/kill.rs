//! One instance of a PostgreSQL cluster killed with `kill -9` mid-run: its
//! watcher reconnects to another instance with `Last-Event-ID` and misses
//! nothing, and no acknowledged write is lost. The killed instance is the
//! real server binary in a process of its own; the survivor is the test's
//! in-process app on the same database. With a stream cap of one per
//! session, the dead instance's share of it does not keep the watcher out.

use crate::helpers::{on_postgres, spawn_app_with, TestApp};
use crate::sessions::{open, Session};
use serde_json::{json, Value};
use std::process::{Child, Command, Stdio};
use std::time::Duration;

/// Both instances' `MAX_STREAMS_PER_SESSION`.
const STREAM_CAP: &str = "1";

/// The server binary on `app`'s database as a second instance, serving on
/// a port of its own once `/healthz` answers.
async fn second_process(app: &TestApp) -> (Child, String) {
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let mut child = Command::new(env!("CARGO_BIN_EXE_switchboard"))
        .env("DATABASE_URL", app.database_url())
        .env("PORT", port.to_string())
        .env("SWITCHBOARD_DEMO_LESSONS", "0")
        .env("MAX_STREAMS_PER_SESSION", STREAM_CAP)
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .expect("the server binary starts");
    let base = format!("http://127.0.0.1:{port}");
    for _ in 0..200 {
        if let Ok(res) = reqwest::get(format!("{base}/healthz")).await {
            if res.status() == 200 {
                return (child, base);
            }
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    let _ = child.kill();
    let _ = child.wait();
    panic!("the second instance did not become healthy");
}

/// One tool call through `base`; `Some(call id)` when it was acknowledged.
async fn call_on(client: &reqwest::Client, base: &str, s: &Session) -> Option<i64> {
    let res = client
        .post(format!("{base}/api/sessions/{}/tool-calls", s.id))
        .bearer_auth(&s.token)
        .json(&json!({"name": "get_server_time", "arguments": {}}))
        .timeout(Duration::from_secs(10))
        .send()
        .await
        .ok()?;
    if res.status() != 200 {
        return None;
    }
    let body: Value = res.json().await.ok()?;
    body["callId"].as_i64()
}

/// Reads SSE frames (id, event name, data) from `res` until `stop` says so
/// or the stream ends (the instance died).
async fn read_frames(
    mut res: reqwest::Response,
    seen: &mut Vec<(u64, String, Value)>,
    stop: impl Fn(&[(u64, String, Value)]) -> bool,
) {
    let mut buffer = String::new();
    while !stop(seen) {
        let next = tokio::time::timeout(Duration::from_secs(10), res.chunk()).await;
        let Ok(Ok(Some(chunk))) = next else { return };
        buffer.push_str(&String::from_utf8_lossy(&chunk));
        while let Some(end) = buffer.find("\n\n") {
            let block: String = buffer.drain(..end + 2).collect();
            let (mut id, mut name, mut data) = (0, String::from("message"), String::new());
            for line in block.lines() {
                if let Some(v) = line.strip_prefix("id:") {
                    id = v.trim().parse().unwrap_or(0);
                } else if let Some(v) = line.strip_prefix("event:") {
                    name = v.trim().to_owned();
                } else if let Some(v) = line.strip_prefix("data:") {
                    data.push_str(v.trim_start());
                }
            }
            if let (true, Ok(value)) = (id > 0, serde_json::from_str(&data)) {
                seen.push((id, name, value));
            }
        }
    }
}

fn watch(
    client: &reqwest::Client,
    base: &str,
    s: &Session,
    last: Option<u64>,
) -> reqwest::RequestBuilder {
    let req = client
        .get(format!("{base}/api/sessions/{}/events", s.id))
        .bearer_auth(&s.token)
        .header("Accept", "text/event-stream");
    match last {
        Some(id) => req.header("Last-Event-ID", id.to_string()),
        None => req,
    }
}

fn tool_calls(seen: &[(u64, String, Value)]) -> Vec<i64> {
    seen.iter()
        .filter(|(_, _, v)| v["type"] == "tool_call")
        .filter_map(|(_, _, v)| v["data"]["id"].as_i64())
        .collect()
}

#[tokio::test]
async fn a_killed_instances_watcher_resumes_on_another_and_no_acknowledged_call_is_lost() {
    if on_postgres().is_none() {
        eprintln!("skipped: needs TEST_POSTGRES_URL (several instances run on PostgreSQL)");
        return;
    }
    // One stream per session, held by the doomed instance until it dies:
    // the survivor lets the watcher back in at once, not once the dead
    // instance's lease would have aged out.
    let survivor = spawn_app_with(&[("MAX_STREAMS_PER_SESSION", STREAM_CAP)]).await;
    let key = survivor.api_key().await;
    let s = open(&survivor, &key, "idv").await;
    let (mut doomed, doomed_base) = second_process(&survivor).await;
    let client = reqwest::Client::new();

    // The watcher listens on the instance that will die.
    let res = watch(&client, &doomed_base, &s, None).send().await.unwrap();
    assert_eq!(res.status(), 200);
    let watcher = tokio::spawn(async move {
        let mut seen = Vec::new();
        read_frames(res, &mut seen, |_| false).await;
        seen
    });

    // Calls alternate between the two instances; the doomed one is killed
    // (SIGKILL: no shutdown, no goodbye) in the middle of the run.
    let mut acknowledged = Vec::new();
    for n in 0..40 {
        if n == 20 {
            doomed.kill().expect("kill -9");
            doomed.wait().unwrap();
        }
        let base = if n % 2 == 0 {
            &doomed_base
        } else {
            &survivor.address
        };
        if let Some(id) = call_on(&client, base, &s).await {
            acknowledged.push(id);
        }
    }
    assert!(
        acknowledged.len() >= 30,
        "calls on the survivor must succeed: {acknowledged:?}"
    );

    // The watcher's stream ended with its instance; it resumes on the
    // survivor from the last id it saw.
    let mut seen = watcher.await.unwrap();
    let last = seen.iter().map(|(id, _, _)| *id).max();
    assert!(last.is_some(), "the watcher saw events before the kill");
    let res = watch(&client, &survivor.address, &s, last)
        .send()
        .await
        .unwrap();
    assert_eq!(res.status(), 200);
    let wanted = acknowledged.clone();
    read_frames(res, &mut seen, |seen| {
        let calls = tool_calls(seen);
        wanted.iter().all(|id| calls.contains(id))
    })
    .await;

    // Nothing missed, nothing twice: ids strictly increase with no gap.
    let ids: Vec<u64> = seen.iter().map(|(id, _, _)| *id).collect();
    for pair in ids.windows(2) {
        assert_eq!(pair[1], pair[0] + 1, "a gap or a repeat in {ids:?}");
    }
    let calls = tool_calls(&seen);
    for id in &acknowledged {
        assert!(
            calls.contains(id),
            "acknowledged call {id} never reached the watcher"
        );
    }
    // And every acknowledged call is stored (read back through the survivor).
    let stored = survivor
        .get_json(&key, &format!("/api/sessions/{}/calls", s.id))
        .await;
    let stored_ids: Vec<i64> = stored["calls"]
        .as_array()
        .expect("a list of calls")
        .iter()
        .filter_map(|c| c["id"].as_i64())
        .collect();
    for id in &acknowledged {
        assert!(
            stored_ids.contains(id),
            "acknowledged call {id} is not stored"
        );
    }
}
