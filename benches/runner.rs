//! The agent runner against the release server on loopback (issue #35),
//! with the scripted model served by this process: the server-side cost
//! of one runner step excluding the model's time — target ≤ 2 ms median —
//! for both kinds of step (a model step: the session's listing, its
//! OpenAI declarations and the model call; a tool step: the session's one
//! call path with a built-in, recorded and announced), the model's own
//! round trip measured alone in the same run and subtracted; and a
//! workflow started by its webhook: from the hook's request to the
//! `opened` event at a watcher of the session list — target p95 ≤ 20 ms.
//! Prints medians, p95s and p99s.

// Shared with the other server benches; this one uses only part of it.
#[allow(dead_code)]
mod common;

use common::{open, percentile, spawn_with};
use serde_json::{json, Value};
use std::time::{Duration, Instant};
use switchboard::server::workflows::scripted_model::{parse, spawn};

const ROUNDS: usize = 300;
const WARM_UP: usize = 30;
const SCRIPT: &str = r#"{"fallback": "ok", "conversations": [
  {"when": "bench runner turn", "replies": [
    {"tool_calls": [{"name": "get_server_time", "arguments": {}}]},
    {"content": "It is late."}
  ]}
]}"#;

fn summary(label: &str, mut times: Vec<Duration>) -> Duration {
    times.sort();
    let median = percentile(&times, 0.5);
    println!(
        "{label}: median {median:?}, p99 {:?} ({} runs)",
        percentile(&times, 0.99),
        times.len()
    );
    median
}

/// One runner step with the session token; the answer and its time.
async fn step(
    client: &reqwest::Client,
    url: &str,
    token: &str,
    messages: &Value,
) -> (Value, Duration) {
    let started = Instant::now();
    let res = client
        .post(url)
        .bearer_auth(token)
        .json(&json!({"messages": messages}))
        .send()
        .await
        .unwrap();
    assert_eq!(res.status(), 200);
    let answer: Value = res.json().await.unwrap();
    (answer, started.elapsed())
}

/// Model steps and tool steps, `ROUNDS` each after a warm-up, and the
/// model alone for the request a model step sends.
async fn runner_steps(client: &reqwest::Client, base: &str, key: &str, model: &str) {
    let (id, token) = open(client, base, key, "idv").await.unwrap();
    let url = format!("http://{base}/api/sessions/{id}/agent/step");
    let ask = json!([{"role": "user", "content": "bench runner turn"}]);
    let (first, _) = step(client, &url, &token, &ask).await;
    let with_call = first["messages"].clone();
    assert_eq!(
        with_call[1]["tool_calls"][0]["function"]["name"],
        "get_server_time"
    );
    let (mut model_steps, mut tool_steps) = (Vec::new(), Vec::new());
    for i in 0..ROUNDS + WARM_UP {
        let (_, took) = step(client, &url, &token, &ask).await;
        let (answer, tool_took) = step(client, &url, &token, &with_call).await;
        assert_eq!(answer["messages"][2]["role"], "tool");
        if i >= WARM_UP {
            model_steps.push(took);
            tool_steps.push(tool_took);
        }
    }
    let sent: Value = reqwest::get(format!("{model}/requests"))
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    let request = sent.as_array().unwrap().last().unwrap().clone();
    let mut alone = Vec::new();
    for i in 0..ROUNDS + WARM_UP {
        let started = Instant::now();
        let res = client
            .post(format!("{model}/chat/completions"))
            .json(&request)
            .send()
            .await
            .unwrap();
        assert_eq!(res.status(), 200);
        let _: Value = res.json().await.unwrap();
        if i >= WARM_UP {
            alone.push(started.elapsed());
        }
    }
    let model_step = summary(
        "runner step calling the model (HTTP, loopback)",
        model_steps,
    );
    let model_alone = summary("  the scripted model alone, same request", alone);
    println!(
        "  => model step excluding model time: {:?} (target <= 2 ms)",
        model_step.saturating_sub(model_alone)
    );
    summary(
        "runner step running a tool (get_server_time through the call path; no model call) (target <= 2 ms)",
        tool_steps,
    );
}

const ADMIN_PASSWORD: &str = "bench-admin-pass";

/// Signs the admin in on a cookie client.
async fn admin(base: &str) -> reqwest::Client {
    let client = reqwest::Client::builder()
        .cookie_store(true)
        .build()
        .unwrap();
    let res = client
        .post(format!("http://{base}/rpc/login"))
        .header("Origin", format!("http://{base}"))
        .form(&[("email", "admin@example.com"), ("password", ADMIN_PASSWORD)])
        .send()
        .await
        .unwrap();
    assert_eq!(res.status(), 200);
    client
}

/// Gives workflow idv a webhook start trigger; its hook URL.
async fn webhook_url(base: &str, key: &str, admin: &reqwest::Client) -> String {
    let client = reqwest::Client::new();
    let read: Value = client
        .get(format!("http://{base}/api/workflows/idv/definition"))
        .bearer_auth(key)
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    let res = client
        .post(format!("http://{base}/api/workflows/idv/edits"))
        .bearer_auth(key)
        .header("If-Match", format!("\"{}\"", read["version"]))
        .json(&json!({"edit": "set_trigger", "trigger_type_id": "webhook"}))
        .send()
        .await
        .unwrap();
    assert_eq!(res.status(), 200);
    let res = admin
        .post(format!("http://{base}/api/workflows/idv/hook-secret"))
        .header("Origin", format!("http://{base}"))
        .send()
        .await
        .unwrap();
    assert_eq!(res.status(), 201);
    let secret: Value = res.json().await.unwrap();
    format!(
        "http://{base}/api/hooks/idv/{}",
        secret["secret"].as_str().unwrap()
    )
}

/// Reads the session list's event stream, sending each opened session's
/// id with the moment its event arrived.
async fn watch_openings(
    admin: reqwest::Client,
    base: String,
    seen: tokio::sync::mpsc::UnboundedSender<(String, Instant)>,
) {
    let mut res = admin
        .get(format!("http://{base}/api/sessions/events"))
        .header("Accept", "text/event-stream")
        .send()
        .await
        .unwrap();
    let mut text = String::new();
    while let Some(chunk) = res.chunk().await.unwrap() {
        let at = Instant::now();
        text.push_str(&String::from_utf8_lossy(&chunk));
        while let Some(end) = text.find("\n\n") {
            let frame: String = text.drain(..end + 2).collect();
            for data in frame.lines().filter_map(|l| l.strip_prefix("data:")) {
                let event: Value = serde_json::from_str(data.trim()).unwrap_or(Value::Null);
                if event["type"] == "opened" {
                    let id = event["session"]["id"].as_str().unwrap_or_default();
                    let _ = seen.send((id.to_owned(), at));
                }
            }
        }
    }
}

/// `ROUNDS` webhooks, each timed from its request to its session's
/// `opened` event at the list's watcher.
async fn webhook_to_watcher(base: &str, key: &str) {
    let admin = admin(base).await;
    let url = webhook_url(base, key, &admin).await;
    let (tx, mut seen) = tokio::sync::mpsc::unbounded_channel();
    let watcher = tokio::spawn(watch_openings(admin, base.to_owned(), tx));
    tokio::time::sleep(Duration::from_millis(200)).await;
    let client = reqwest::Client::new();
    let mut times = Vec::new();
    for i in 0..ROUNDS + WARM_UP {
        let started = Instant::now();
        let res = client
            .post(&url)
            .json(&json!({"type": "order.created", "order": i}))
            .send()
            .await
            .unwrap();
        assert_eq!(res.status(), 202);
        let body: Value = res.json().await.unwrap();
        let id = body["sessionId"].as_str().unwrap().to_owned();
        let arrived = loop {
            let (opened, at) = seen.recv().await.expect("the watcher's stream");
            if opened == id {
                break at;
            }
        };
        if i >= WARM_UP {
            times.push(arrived.saturating_duration_since(started));
        }
    }
    watcher.abort();
    times.sort();
    println!(
        "webhook received -> session open -> `opened` at a list watcher: median {:?}, p95 {:?} (target <= 20 ms), p99 {:?} ({} runs)",
        percentile(&times, 0.5),
        percentile(&times, 0.95),
        percentile(&times, 0.99),
        times.len()
    );
}

fn main() {
    tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .unwrap()
        .block_on(async {
            let model = spawn(parse(SCRIPT).unwrap()).await.unwrap();
            let (base, key, mut child, _dir) = spawn_with(&[
                ("SWITCHBOARD_ADMIN_PASSWORD", ADMIN_PASSWORD),
                ("SWITCHBOARD_LLM_BASE_URL", &model),
                ("SWITCHBOARD_LLM_API_KEY", "bench"),
                ("SWITCHBOARD_LLM_MODEL", "scripted"),
            ])
            .await;
            let client = reqwest::Client::new();
            runner_steps(&client, &base, &key, &model).await;
            webhook_to_watcher(&base, &key).await;
            let _ = child.kill();
        });
}
