//! What the benches that drive the real server share (`sessions`, `soak`,
//! `cluster` and others): starting the release binary as its own process on
//! a random loopback port over a throwaway SQLite database, an API key
//! written beside it, opening sessions through the API, subscribing to a
//! session's events over a raw socket, and reading the server's memory and
//! CPU time from `/proc`.
//!
//! The server runs as a separate process so its memory is measured alone and
//! each side has its own open-file limit.

use std::time::Duration;
use switchboard::server::{platform::db, store};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;

/// Resident memory of process `pid`, KiB (`VmRSS` in `/proc/PID/status`);
/// 0 if the process is gone.
pub fn rss_kib(pid: u32) -> u64 {
    std::fs::read_to_string(format!("/proc/{pid}/status"))
        .ok()
        .and_then(|s| {
            s.lines()
                .find(|l| l.starts_with("VmRSS:"))
                .and_then(|l| l.split_whitespace().nth(1)?.parse().ok())
        })
        .unwrap_or(0)
}

/// User + system CPU time of process `pid` so far.
pub fn cpu_time(pid: u32) -> Duration {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).unwrap_or_default();
    // Fields after the command name (which may contain spaces).
    let rest = stat.rsplit_once(')').map_or("", |(_, r)| r);
    let fields: Vec<u64> = rest
        .split_whitespace()
        .map(|f| f.parse().unwrap_or(0))
        .collect();
    // utime and stime are fields 14 and 15 of the line; clock ticks of 10 ms.
    let ticks = fields.get(11).unwrap_or(&0) + fields.get(12).unwrap_or(&0);
    Duration::from_millis(ticks * 10)
}

/// The value at fraction `p` (0–1) of `sorted`, nearest rank.
pub fn percentile(sorted: &[Duration], p: f64) -> Duration {
    sorted[((sorted.len() as f64 - 1.0) * p).round() as usize]
}

/// Starts the server binary on a free port over a new database; returns its
/// address, an API key (every scope, so also `sessions`), the child process
/// and the folder to keep alive.
///
/// `BENCH_WRAPPER="heaptrack"` (or `perf record -g`) runs the server under
/// a profiler. The server logs errors only, to this process's stderr.
// Each bench compiles this module on its own; the soak uses `spawn_with`.
#[allow(dead_code)]
pub async fn spawn() -> (String, String, std::process::Child, tempfile::TempDir) {
    spawn_with(&[]).await
}

/// [`spawn`] with more environment settings for the server.
pub async fn spawn_with(
    settings: &[(&str, &str)],
) -> (String, String, std::process::Child, tempfile::TempDir) {
    // An MCP client made here (rmcp's reqwest 0.13) needs a rustls provider.
    switchboard::server::mcp_servers::tls::install_default_provider();
    let dir = tempfile::tempdir().unwrap();
    let url = format!("sqlite://{}/bench.db", dir.path().display());
    let port = free_port();
    let wrapper = std::env::var("BENCH_WRAPPER").unwrap_or_default();
    let mut words = wrapper.split_whitespace();
    let mut command = match words.next() {
        Some(program) => {
            let mut c = std::process::Command::new(program);
            c.args(words).arg(server_binary());
            c
        }
        None => std::process::Command::new(server_binary()),
    };
    // Benches measure speed, not a session's budget: thousands of calls on
    // one session in seconds are what a round-trip bench is.
    let child = command
        .env("SESSION_WRITES_PER_MINUTE", "1000000")
        .env("SESSION_CALLS_MAX", "10000000")
        .env("WORKFLOW_STARTS_PER_MINUTE", "1000000")
        .envs(settings.iter().copied())
        .env("DATABASE_URL", &url)
        .env("PORT", port.to_string())
        .env("RUST_LOG", "error")
        .stdout(std::process::Stdio::null())
        .spawn()
        .expect("server binary");
    let address = format!("127.0.0.1:{port}");
    for _ in 0..200 {
        if TcpStream::connect(&address).await.is_ok() {
            break;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    let key = key_in(&url).await;
    (address, key, child, dir)
}

/// A free loopback port.
pub fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port()
}

/// An API key with every scope, written to `database` beside the running
/// server (on SQLite it holds the file's instance lock; attaching is
/// allowed).
pub async fn key_in(database: &str) -> String {
    let pool = db::attach(database).await.unwrap();
    store::api_keys::create(
        &pool,
        "bench",
        &switchboard::domain::api_key::Scope::ALL,
        None,
    )
    .await
    .unwrap()
    .0
}

/// One tool call `body` to `url` (a session's `tool-calls`) as session
/// `token`, which must be allowed; its answer is read whole, so the
/// connection serves the next call.
// Only the benches that time built-in calls use it (`sessions`, `cluster`).
#[allow(dead_code)]
pub async fn call_ok(client: &reqwest::Client, url: &str, token: &str, body: &serde_json::Value) {
    let res = client
        .post(url)
        .bearer_auth(token)
        .json(body)
        .send()
        .await
        .unwrap();
    assert!(res.status().is_success(), "{}", res.status());
    res.bytes().await.unwrap();
}

/// Sends `request` (an event-stream `GET`, as raw HTTP/1.1) on `stream` and
/// reads until the session's snapshot has come: from then on what arrives
/// is live events, which the caller times.
// Only the benches that fan out use it (`sessions`, `cluster`).
#[allow(dead_code)]
pub async fn past_snapshot(stream: &mut TcpStream, request: &str) {
    stream.write_all(request.as_bytes()).await.unwrap();
    let mut seen = Vec::new();
    let mut buf = [0u8; 4096];
    while !String::from_utf8_lossy(&seen).contains("\"snapshot\"") {
        let n = stream.read(&mut buf).await.unwrap();
        assert!(n > 0, "stream closed before the snapshot");
        seen.extend_from_slice(&buf[..n]);
    }
}

/// The server binary cargo built for this bench: the release profile's
/// (`cargo bench` builds with `bench`, which inherits `release`).
pub fn server_binary() -> &'static str {
    env!("CARGO_BIN_EXE_switchboard")
}

/// Opens a session in `workflow` with API `key`; its id and session token,
/// or what went wrong (status and body, or the connection error).
pub async fn open(
    client: &reqwest::Client,
    base: &str,
    key: &str,
    workflow: &str,
) -> Result<(String, String), String> {
    let res = client
        .post(format!("http://{base}/api/sessions"))
        .bearer_auth(key)
        .json(&serde_json::json!({"workflowId": workflow}))
        .send()
        .await
        .map_err(|e| format!("open: {e}"))?;
    let status = res.status();
    let body: serde_json::Value = res.json().await.map_err(|e| format!("open: {e}"))?;
    match (
        status.is_success(),
        body["sessionId"].as_str(),
        body["sessionToken"].as_str(),
    ) {
        (true, Some(id), Some(token)) => Ok((id.to_owned(), token.to_owned())),
        _ => Err(format!("open: {status} {body}")),
    }
}
