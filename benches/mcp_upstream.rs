//! A forwarded call's overhead (issue #37): the same upstream `echo` tool
//! called directly with an MCP client, and through Switchboard.
//!
//! The upstream is an rmcp Streamable HTTP server with one `echo` tool,
//! served by this process on its own thread and runtime, on a free
//! loopback port. The release server is started as the other benches start
//! it; the upstream is added with `POST /api/mcp-servers`, its
//! `bench__echo` bound to the `idv` workflow, and a session opened there.
//! After a warm-up, each round times, in an order that rotates from round
//! to round:
//!
//! - (a) direct: an rmcp client connected to the upstream calls `echo`;
//! - (b) the gateway door: an rmcp client connected to the session's own
//!   MCP endpoint calls `bench__echo`;
//! - (c) REST: `POST /api/sessions/{id}/tool-calls` of `bench__echo`;
//! - (d) REST and (e) the gateway door calling the built-in
//!   `get_server_time` on the same session: the call path with nothing
//!   forwarded, to tell each door's own cost from the forwarding's.
//!
//! It prints each one's median and p99 and the median of the per-round
//! differences b − a and c − a (target: ≤ 1 ms). Both MCP clients speak
//! protocol 2025-06-18, as Switchboard's own upstream client does.

// Shared with the other server benches; this one uses only part of it.
#[allow(dead_code)]
mod common;

use common::{percentile, spawn_with};
use rmcp::model::{
    CallToolRequestParams, CallToolResponse, CallToolResult, ClientConfig, ContentBlock,
    ListToolsResult, PaginatedRequestParams, ProtocolVersion, ServerCapabilities, ServerConfig,
    Tool,
};
use rmcp::service::{RequestContext, RunningService};
use rmcp::transport::streamable_http_client::StreamableHttpClientTransportConfig;
use rmcp::transport::streamable_http_server::session::local::LocalSessionManager;
use rmcp::transport::streamable_http_server::{StreamableHttpServerConfig, StreamableHttpService};
use rmcp::transport::StreamableHttpClientTransport;
use rmcp::{ErrorData as McpError, RoleClient, RoleServer, ServerHandler, ServiceExt};
use serde_json::{json, Map, Value};
use std::sync::Arc;
use std::time::{Duration, Instant};

/// The upstream's name in Switchboard: its tool is `bench__echo`.
const SERVER: &str = "bench";
/// Rounds timed; `ROUNDS=…` overrides.
const ROUNDS: usize = 2000;
/// Rounds run first and not timed.
const WARM_UP: usize = 200;

/// The upstream: one `echo` tool that answers its message back.
#[derive(Clone)]
struct Echo;

impl ServerHandler for Echo {
    fn get_info(&self) -> ServerConfig {
        ServerConfig::new(ServerCapabilities::builder().enable_tools().build())
    }

    async fn list_tools(
        &self,
        _request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListToolsResult, McpError> {
        let Value::Object(schema) = json!({
            "type": "object",
            "properties": {"message": {"type": "string"}},
            "required": ["message"]
        }) else {
            unreachable!()
        };
        let echo = Tool::new("echo", "Echoes the message back.", Arc::new(schema));
        Ok(ListToolsResult::with_all_items(vec![echo]))
    }

    async fn call_tool(
        &self,
        request: CallToolRequestParams,
        _context: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, McpError> {
        let message = request
            .arguments
            .as_ref()
            .and_then(|a| a.get("message"))
            .and_then(Value::as_str)
            .unwrap_or_default();
        let text = format!("Echo: {message}");
        Ok(CallToolResult::success(vec![ContentBlock::text(text)]).into())
    }
}

/// Serves [`Echo`] on its own thread and runtime (as a separate server
/// would be); its URL.
fn start_upstream() -> String {
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    listener.set_nonblocking(true).unwrap();
    let url = format!("http://{}/mcp", listener.local_addr().unwrap());
    std::thread::spawn(move || {
        let runtime = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .unwrap();
        runtime.block_on(async move {
            let service = StreamableHttpService::new(
                || Ok(Echo),
                Arc::new(LocalSessionManager::default()),
                StreamableHttpServerConfig::default(),
            );
            let router = axum::Router::new().nest_service("/mcp", service);
            let listener = tokio::net::TcpListener::from_std(listener).unwrap();
            axum::serve(listener, router).await.unwrap();
        });
    });
    url
}

/// An rmcp client at `url` (with `token` as its bearer, if any), speaking
/// protocol 2025-06-18 like Switchboard's upstream client.
async fn mcp_client(url: String, token: Option<&str>) -> RunningService<RoleClient, ClientConfig> {
    let mut config = StreamableHttpClientTransportConfig::with_uri(url);
    if let Some(token) = token {
        config = config.auth_header(token.to_owned());
    }
    let transport = StreamableHttpClientTransport::from_config(config);
    ClientConfig::default()
        .with_protocol_version(ProtocolVersion::V_2025_06_18)
        .serve(transport)
        .await
        .expect("MCP initialize")
}

/// `POST` `body` to `url` with `key`; the answer, which must be a success.
async fn post(client: &reqwest::Client, url: String, key: &str, body: &Value) -> Value {
    let res = client
        .post(url)
        .bearer_auth(key)
        .json(body)
        .send()
        .await
        .unwrap();
    let status = res.status();
    let answer: Value = res.json().await.unwrap_or(Value::Null);
    assert!(status.is_success(), "{status} {answer}");
    answer
}

/// Adds the upstream at `url` and waits until its `echo` is imported.
async fn add_upstream(client: &reqwest::Client, base: &str, key: &str, url: &str) {
    let added = post(
        client,
        format!("http://{base}/api/mcp-servers"),
        key,
        &json!({"name": SERVER, "url": url}),
    )
    .await;
    let id = added["id"].as_i64().unwrap();
    for _ in 0..200 {
        let server: Value = client
            .get(format!("http://{base}/api/mcp-servers/{id}"))
            .bearer_auth(key)
            .send()
            .await
            .unwrap()
            .json()
            .await
            .unwrap();
        if server["status"] == "connected"
            && server["tools"].as_array().is_some_and(|t| !t.is_empty())
        {
            return;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    panic!("the upstream never connected");
}

/// Binds `tool` to workflow `workflow` (`GET` then `PUT /api/bindings`).
async fn bind(client: &reqwest::Client, base: &str, key: &str, workflow: &str, tool: &str) {
    let url = format!("http://{base}/api/bindings");
    let res = client.get(&url).bearer_auth(key).send().await.unwrap();
    let etag = res.headers()["etag"].to_str().unwrap().to_owned();
    let mut doc: Value = res.json().await.unwrap();
    doc["workflows"][workflow]
        .as_array_mut()
        .unwrap()
        .push(json!(tool));
    let res = client
        .put(&url)
        .bearer_auth(key)
        .header("If-Match", etag)
        .json(&doc)
        .send()
        .await
        .unwrap();
    assert_eq!(res.status(), 200, "{}", res.text().await.unwrap());
}

/// `echo`'s arguments.
fn message() -> Map<String, Value> {
    let mut args = Map::new();
    args.insert("message".into(), json!("hi"));
    args
}

/// Calls `tool` over MCP and checks it answered with `expected` in its text.
async fn mcp_call(
    client: &RunningService<RoleClient, ClientConfig>,
    tool: &str,
    args: Map<String, Value>,
    expected: &str,
) -> Duration {
    let started = Instant::now();
    let res = client
        .call_tool(CallToolRequestParams::new(tool.to_owned()).with_arguments(args))
        .await
        .unwrap();
    let took = started.elapsed();
    assert_eq!(res.is_error, Some(false), "{res:?}");
    let text = res.content.iter().find_map(ContentBlock::as_text);
    assert!(text.is_some_and(|t| t.text.contains(expected)), "{res:?}");
    took
}

/// Calls `name` with `args` through `POST …/tool-calls`; it must be allowed.
async fn rest_call(client: &reqwest::Client, url: &str, token: &str, body: &Value) -> Duration {
    let started = Instant::now();
    let res = client
        .post(url)
        .bearer_auth(token)
        .json(body)
        .send()
        .await
        .unwrap();
    let answer: Value = res.json().await.unwrap();
    let took = started.elapsed();
    assert_eq!(answer["allowed"], true, "{answer}");
    took
}

/// Prints `label`'s median and p99 (sorting `times`); the median.
fn summary(label: &str, times: &mut [Duration]) -> Duration {
    times.sort();
    let median = percentile(times, 0.5);
    println!(
        "  {label:<44} median {:>7.3} ms, p99 {:>7.3} ms",
        ms(median),
        ms(percentile(times, 0.99))
    );
    median
}

fn ms(d: Duration) -> f64 {
    d.as_secs_f64() * 1e3
}

/// The median of the per-round differences `x[i] − y[i]`, ms.
fn paired_median(x: &[Duration], y: &[Duration]) -> f64 {
    let mut diffs: Vec<f64> = x.iter().zip(y).map(|(a, b)| ms(*a) - ms(*b)).collect();
    diffs.sort_by(f64::total_cmp);
    diffs[diffs.len() / 2]
}

async fn overhead() {
    let rounds = std::env::var("ROUNDS")
        .ok()
        .and_then(|r| r.parse().ok())
        .unwrap_or(ROUNDS);
    let upstream = start_upstream();
    let (base, key, child, _dir) = spawn_with(&[]).await;
    let http = reqwest::Client::new();
    add_upstream(&http, &base, &key, &upstream).await;
    let tool = format!("{SERVER}__echo");
    bind(&http, &base, &key, "idv", &tool).await;
    let (id, token) = common::open(&http, &base, &key, "idv").await.unwrap();

    let direct = mcp_client(upstream, None).await;
    let door = mcp_client(format!("http://{base}/api/sessions/{id}/mcp"), Some(&token)).await;
    let calls = format!("http://{base}/api/sessions/{id}/tool-calls");
    let forwarded = json!({"name": tool, "arguments": {"message": "hi"}});
    let builtin = json!({"name": "get_server_time", "arguments": {}});

    // Times: direct, gateway door, REST forwarded, REST built-in, door
    // built-in.
    let mut t: [Vec<Duration>; 5] = Default::default();
    for round in 0..WARM_UP + rounds {
        let mut took = [Duration::ZERO; 5];
        for k in 0..5 {
            let which = (round + k) % 5;
            took[which] = match which {
                0 => mcp_call(&direct, "echo", message(), "Echo: hi").await,
                1 => mcp_call(&door, &tool, message(), "Echo: hi").await,
                2 => rest_call(&http, &calls, &token, &forwarded).await,
                3 => rest_call(&http, &calls, &token, &builtin).await,
                _ => mcp_call(&door, "get_server_time", Map::new(), "").await,
            };
        }
        if round >= WARM_UP {
            for (times, one) in t.iter_mut().zip(took) {
                times.push(one);
            }
        }
    }
    let b_a = paired_median(&t[1], &t[0]);
    let c_a = paired_median(&t[2], &t[0]);
    let c_d = paired_median(&t[2], &t[3]);
    let b_e = paired_median(&t[1], &t[4]);
    let e_d = paired_median(&t[4], &t[3]);
    println!("echo over loopback, {rounds} rounds after {WARM_UP} warm-ups, order rotating:");
    let a = summary("(a) direct, rmcp client → upstream", &mut t[0].clone());
    let b = summary(
        "(b) gateway door, rmcp client → session MCP",
        &mut t[1].clone(),
    );
    let c = summary("(c) REST POST …/tool-calls, forwarded", &mut t[2].clone());
    summary("(d) REST POST …/tool-calls, built-in", &mut t[3].clone());
    summary("(e) gateway door, built-in", &mut t[4].clone());
    println!(
        "  overhead, median of per-round differences: b − a {b_a:.3} ms, c − a {c_a:.3} ms \
         (target ≤ 1 ms: {});\n  \
         forwarding over a built-in on the same door: b − e {b_e:.3} ms, c − d {c_d:.3} ms\n  \
         the MCP door over REST, a built-in: e − d {e_d:.3} ms\n  \
         ratio of medians: b / a {:.2}×, c / a {:.2}×",
        if b_a <= 1.0 && c_a <= 1.0 {
            "met"
        } else {
            "not met"
        },
        ms(b) / ms(a),
        ms(c) / ms(a),
    );
    let _ = direct.cancel().await;
    let _ = door.cancel().await;
    stop(child);
}

/// Stops the server with SIGINT and waits, so that a `BENCH_WRAPPER`
/// profiler writes its data and takes the server down with it (a SIGKILL
/// would leave the server running); kills it after 10 s.
fn stop(mut child: std::process::Child) {
    // SAFETY: kill(2) on the id of a child this process started and has
    // not reaped.
    unsafe { libc::kill(child.id() as i32, libc::SIGINT) };
    for _ in 0..100 {
        if let Ok(Some(_)) = child.try_wait() {
            return;
        }
        std::thread::sleep(Duration::from_millis(100));
    }
    let _ = child.kill();
    let _ = child.wait();
}

fn main() {
    tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .unwrap()
        .block_on(overhead());
}
