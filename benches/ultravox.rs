//! The Ultravox bridge's cost: the same tool called the way Ultravox calls
//! an HTTP tool (`POST /api/sessions/{id}/ultravox/tools/{tool}`, its
//! dynamic parameters as the body, the static `Authorization` header from
//! the call-config) and as a backend calls it (`POST …/tool-calls`),
//! interleaved on one session of the release server over loopback, 2,000
//! of each after 200 warm-ups: both medians and p99s, and the Ultravox
//! door's overhead (difference of the medians). Target from issue #36:
//! ≤ 0.5 ms median overhead.

// Shared with the other server benches; this one uses only part of it.
#[allow(dead_code)]
mod common;

use common::{percentile, spawn_with};
use serde_json::{json, Map, Value};
use std::time::{Duration, Instant};

/// Where the bench tells the server it is reachable; URLs in the
/// call-config start with it and are sent to the local address instead.
const ORIGIN: &str = "https://sb.example";
/// A tool that reads and changes nothing, so every call costs the same.
const TOOL: &str = "filterTodos";
const WARM_UP: usize = 200;
const ROUNDS: usize = 2000;

/// Arguments the tool's schema accepts: a word for each required string.
fn arguments(tool: &Value) -> Value {
    let mut args = Map::new();
    for p in tool["dynamicParameters"].as_array().unwrap() {
        if p["required"] == true {
            args.insert(p["name"].as_str().unwrap().to_owned(), json!("milk"));
        }
    }
    Value::Object(args)
}

/// Median and p99 of `times`, sorted in place.
fn summary(times: &mut [Duration]) -> (Duration, Duration) {
    times.sort();
    (percentile(times, 0.5), percentile(times, 0.99))
}

async fn overhead() {
    let (base, key, mut child, _dir) = spawn_with(&[("PUBLIC_ORIGIN", ORIGIN)]).await;
    let client = reqwest::Client::new();
    let opened: Value = client
        .post(format!("http://{base}/api/sessions"))
        .bearer_auth(&key)
        .json(&json!({"vibeId": "todos", "agentId": "Oliver"}))
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    let id = opened["sessionId"].as_str().unwrap().to_owned();
    let token = opened["sessionToken"].as_str().unwrap().to_owned();
    let config: Value = client
        .get(format!(
            "http://{base}/api/sessions/{id}/call-config?format=ultravox"
        ))
        .bearer_auth(&token)
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    let tool = config["selectedTools"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| &t["temporaryTool"])
        .find(|t| t["modelToolName"] == TOOL)
        .expect("the tool is in the call-config")
        .clone();
    let args = arguments(&tool);
    let url = tool["http"]["baseUrlPattern"].as_str().unwrap().replacen(
        ORIGIN,
        &format!("http://{base}"),
        1,
    );
    let statics = tool["staticParameters"].as_array().unwrap().clone();
    let plain_url = format!("http://{base}/api/sessions/{id}/tool-calls");
    let plain_body = json!({"name": TOOL, "arguments": args});

    let mut plain = Vec::with_capacity(ROUNDS);
    let mut ultravox = Vec::with_capacity(ROUNDS);
    for i in 0..WARM_UP + ROUNDS {
        let started = Instant::now();
        let res = client
            .post(&plain_url)
            .bearer_auth(&token)
            .json(&plain_body)
            .send()
            .await
            .unwrap();
        assert!(res.status().is_success());
        let answer: Value = res.json().await.unwrap();
        assert_eq!(answer["allowed"], true, "{answer}");
        let plain_time = started.elapsed();

        let started = Instant::now();
        let mut req = client.post(&url).json(&args);
        for p in &statics {
            req = req.header(p["name"].as_str().unwrap(), p["value"].as_str().unwrap());
        }
        let res = req.send().await.unwrap();
        assert!(res.status().is_success());
        let text = res.text().await.unwrap();
        assert!(!text.starts_with("Refused"), "{text}");
        let ultravox_time = started.elapsed();
        if i >= WARM_UP {
            plain.push(plain_time);
            ultravox.push(ultravox_time);
        }
    }
    let (plain_median, plain_p99) = summary(&mut plain);
    let (uv_median, uv_p99) = summary(&mut ultravox);
    println!(
        "{TOOL} over HTTP on loopback, {ROUNDS} calls each, interleaved:\n  \
         POST …/tool-calls:            median {plain_median:?}, p99 {plain_p99:?}\n  \
         POST …/ultravox/tools/{TOOL}: median {uv_median:?}, p99 {uv_p99:?}\n  \
         Ultravox door overhead (median difference): {:?} (target ≤ 500 µs)",
        uv_median.saturating_sub(plain_median)
    );
    let _ = child.kill();
}

fn main() {
    tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .unwrap()
        .block_on(overhead());
}
