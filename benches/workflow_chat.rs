//! The workflow chat against the release server on loopback (issue #14),
//! with the scripted model served by this process: the server-side cost of
//! one chat step excluding model time — target ≤ 5 ms median — for both
//! kinds of step (a model step: MCP client, `tools/list`, the model call;
//! a tool step: MCP client, `tools/call`, a stored, announced edit), the
//! model's own round trip measured alone in the same run and subtracted;
//! and MCP `tools/list` at `/mcp` with rmcp's client — target ≤ 1 ms
//! median. Prints medians and p99s.

// Shared with the other server benches; this one uses only part of it.
#[allow(dead_code)]
mod common;

use common::{percentile, spawn_with};
use rmcp::transport::streamable_http_client::StreamableHttpClientTransportConfig;
use rmcp::transport::StreamableHttpClientTransport;
use rmcp::ServiceExt;
use serde_json::{json, Value};
use std::time::{Duration, Instant};
use switchboard::server::workflows::scripted_model::{parse, spawn, DEFAULT_SCRIPT};

const ADMIN_PASSWORD: &str = "bench-admin-pass";
const ROUNDS: usize = 200;

async fn scripted_model() -> String {
    spawn(parse(DEFAULT_SCRIPT).unwrap()).await.unwrap()
}

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

async fn step(client: &reqwest::Client, base: &str, messages: &Value) -> (Value, Duration) {
    let started = Instant::now();
    let res = client
        .post(format!("http://{base}/api/workflows/idv/chat/step"))
        .header("Origin", format!("http://{base}"))
        .json(&json!({"conversation_id": "bench", "messages": messages}))
        .send()
        .await
        .unwrap();
    assert_eq!(res.status(), 200);
    let answer: Value = res.json().await.unwrap();
    (answer, started.elapsed())
}

/// A model step and a tool step, `ROUNDS` each; the model's own round trip
/// for the same request, alone.
async fn chat_steps(client: &reqwest::Client, base: &str, model: &str) {
    let ask = json!([{"role": "user", "content": "Show me the workflow"}]);
    let (first, _) = step(client, base, &ask).await;
    let after_model = first["messages"].clone();
    let (mut model_steps, mut tool_steps) = (Vec::new(), Vec::new());
    for i in 0..ROUNDS + 20 {
        let (_, took) = step(client, base, &ask).await;
        let (answer, tool_took) = step(client, base, &after_model).await;
        assert_eq!(answer["messages"].as_array().unwrap().len(), 3);
        if i >= 20 {
            model_steps.push(took);
            tool_steps.push(tool_took);
        }
    }
    // What the model alone costs for the request a model step sends: the
    // request the server sent last, replayed to the model directly.
    let sent: Value = reqwest::get(format!("{model}/requests"))
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    let request = sent.as_array().unwrap().last().unwrap().clone();
    let mut alone = Vec::new();
    for i in 0..ROUNDS + 20 {
        let started = Instant::now();
        let res = client
            .post(format!("{model}/chat/completions"))
            .json(&request)
            .send()
            .await
            .unwrap();
        assert_eq!(res.status(), 200);
        let _: Value = res.json().await.unwrap();
        if i >= 20 {
            alone.push(started.elapsed());
        }
    }
    let model_step = summary("chat step calling the model (HTTP, loopback)", model_steps);
    let model_alone = summary("  the scripted model alone, same request", alone);
    println!(
        "  => model step excluding model time: {:?} (target <= 5 ms)",
        model_step.saturating_sub(model_alone)
    );
    summary(
        "chat step running a tool (get_workflow_details; no model call) (target <= 5 ms)",
        tool_steps,
    );
}

async fn mcp_tools_list(base: &str, key: &str) {
    let transport = StreamableHttpClientTransport::from_config(
        StreamableHttpClientTransportConfig::with_uri(format!("http://{base}/mcp"))
            .auth_header(key.to_owned()),
    );
    let client = ().serve(transport).await.expect("MCP client");
    let mut times = Vec::new();
    for i in 0..ROUNDS * 5 + 50 {
        let started = Instant::now();
        let tools = client.list_tools(None).await.unwrap();
        if i >= 50 {
            times.push(started.elapsed());
        }
        assert_eq!(tools.tools.len(), 11);
    }
    summary(
        "MCP tools/list at /mcp (rmcp client, HTTP, loopback) (target <= 1 ms)",
        times,
    );
    let _ = client.cancel().await;
}

fn main() {
    tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .unwrap()
        .block_on(async {
            let model = scripted_model().await;
            let (base, key, mut child, _dir) = spawn_with(&[
                ("SWITCHBOARD_ADMIN_PASSWORD", ADMIN_PASSWORD),
                ("SWITCHBOARD_LLM_BASE_URL", &model),
                ("SWITCHBOARD_LLM_API_KEY", "bench"),
                ("SWITCHBOARD_LLM_MODEL", "scripted"),
            ])
            .await;
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
            chat_steps(&client, &base, &model).await;
            mcp_tools_list(&base, &key).await;
            let _ = child.kill();
        });
}
