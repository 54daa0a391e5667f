//! Live-session performance, measured end to end over loopback against the
//! real app (random port, throwaway SQLite database):
//!
//! - tool-call round trip: sequential allowed calls of a built-in tool over
//!   HTTP; median and p99;
//! - SSE fan-out: N subscribers on one session, one `workflow_update`; time
//!   until each subscriber has it (p50, p99, last) and the server's resident
//!   memory with them connected.
//!
//! The server runs as its own process (the release binary), so its memory is
//! measured alone and each side has its own open-file limit. Run with
//! `make bench-sessions`; `FANOUT=1000,10000` chooses the subscriber counts.

use std::time::{Duration, Instant};
use switchboard::server::{db, store};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;

/// Resident memory of process `pid`, KiB.
fn rss_kib(pid: u32) -> u64 {
    std::fs::read_to_string(format!("/proc/{pid}/status"))
        .ok()
        .and_then(|s| {
            s.lines()
                .find(|l| l.starts_with("VmRSS:"))
                .and_then(|l| l.split_whitespace().nth(1)?.parse().ok())
        })
        .unwrap_or(0)
}

fn percentile(sorted: &[Duration], p: f64) -> Duration {
    sorted[((sorted.len() as f64 - 1.0) * p).round() as usize]
}

/// Starts the server binary on a free port over a new database; returns its
/// address, an API key, the child process and the folder to keep alive.
async fn spawn() -> (String, String, std::process::Child, tempfile::TempDir) {
    let dir = tempfile::tempdir().unwrap();
    let url = format!("sqlite://{}/bench.db", dir.path().display());
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let child = std::process::Command::new(env!("CARGO_BIN_EXE_switchboard"))
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
    let pool = db::connect(&url).await.unwrap();
    let key = store::api_keys::create(&pool, "bench", None)
        .await
        .unwrap()
        .0;
    (address, key, child, dir)
}

async fn open(client: &reqwest::Client, base: &str, key: &str, workflow: &str) -> (String, String) {
    let body: serde_json::Value = client
        .post(format!("http://{base}/api/sessions"))
        .bearer_auth(key)
        .json(&serde_json::json!({"workflowId": workflow}))
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    (
        body["sessionId"].as_str().unwrap().to_owned(),
        body["sessionToken"].as_str().unwrap().to_owned(),
    )
}

async fn round_trip(client: &reqwest::Client, base: &str, key: &str) {
    let (id, token) = open(client, base, key, "idv").await;
    let url = format!("http://{base}/api/sessions/{id}/tool-calls");
    let body = serde_json::json!({"name": "get_server_time", "arguments": {}});
    for _ in 0..200 {
        client
            .post(&url)
            .bearer_auth(&token)
            .json(&body)
            .send()
            .await
            .unwrap();
    }
    let mut times = Vec::with_capacity(2000);
    for _ in 0..2000 {
        let started = Instant::now();
        let res = client
            .post(&url)
            .bearer_auth(&token)
            .json(&body)
            .send()
            .await
            .unwrap();
        assert!(res.status().is_success());
        res.bytes().await.unwrap();
        times.push(started.elapsed());
    }
    times.sort();
    println!(
        "tool-call round trip (HTTP, allowed, built-in get_server_time), 2000 calls: median {:?}, p99 {:?}",
        percentile(&times, 0.5),
        percentile(&times, 0.99)
    );
}

/// Connects and reads until the snapshot arrived; returns the stream.
async fn subscriber(base: String, id: String, token: String) -> TcpStream {
    let mut stream = TcpStream::connect(&base).await.unwrap();
    let request = format!("GET /api/sessions/{id}/events?token={token} HTTP/1.1\r\nHost: {base}\r\nAccept: text/event-stream\r\n\r\n");
    stream.write_all(request.as_bytes()).await.unwrap();
    let mut seen = Vec::new();
    let mut buf = [0u8; 4096];
    while !String::from_utf8_lossy(&seen).contains("\"snapshot\"") {
        let n = stream.read(&mut buf).await.unwrap();
        assert!(n > 0, "stream closed before the snapshot");
        seen.extend_from_slice(&buf[..n]);
    }
    stream
}

async fn fan_out(client: &reqwest::Client, base: &str, key: &str, server: u32, subscribers: usize) {
    let (id, token) = open(client, base, key, "idv").await;
    let rss_before = rss_kib(server);
    let mut connecting = tokio::task::JoinSet::new();
    let mut streams: Vec<TcpStream> = Vec::with_capacity(subscribers);
    for _ in 0..subscribers {
        connecting.spawn(subscriber(base.to_owned(), id.clone(), token.clone()));
        // Keep the accept queue from overflowing on a 2-core machine.
        if connecting.len() >= 256 {
            streams.push(connecting.join_next().await.unwrap().unwrap());
        }
    }
    while let Some(stream) = connecting.join_next().await {
        streams.push(stream.unwrap());
    }
    let rss_connected = rss_kib(server);

    let started = Instant::now();
    let mut waiting = tokio::task::JoinSet::new();
    for mut stream in streams {
        waiting.spawn(async move {
            let mut seen = Vec::new();
            let mut buf = [0u8; 4096];
            loop {
                let n = stream.read(&mut buf).await.unwrap();
                seen.extend_from_slice(&buf[..n]);
                if String::from_utf8_lossy(&seen).contains("\"workflow_update\"") {
                    return started.elapsed();
                }
            }
        });
    }
    let res = client
        .post(format!("http://{base}/api/sessions/{id}/tool-calls"))
        .bearer_auth(&token)
        .json(&serde_json::json!({"name": "perform_idv_check", "arguments": {"accountNumber": "12345678", "sortCode": "12-34-56", "dateOfBirth": "1985-04-12"}}))
        .send()
        .await
        .unwrap();
    assert!(res.status().is_success());
    let mut times = Vec::with_capacity(subscribers);
    while let Some(t) = waiting.join_next().await {
        times.push(t.unwrap());
    }
    times.sort();
    println!(
        "SSE fan-out to {subscribers} subscribers ({} received it): p50 {:?}, p99 {:?}, last {:?}; server RSS {} MiB connected (+{} MiB)",
        times.len(),
        percentile(&times, 0.5),
        percentile(&times, 0.99),
        times.last().unwrap(),
        rss_connected / 1024,
        rss_connected.saturating_sub(rss_before) / 1024
    );
}

fn main() {
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .unwrap();
    runtime.block_on(async {
        let (base, key, mut child, _dir) = spawn().await;
        let client = reqwest::Client::new();
        round_trip(&client, &base, &key).await;
        let counts = std::env::var("FANOUT").unwrap_or_else(|_| "1000,10000".into());
        for n in counts.split(',').filter_map(|n| n.trim().parse().ok()) {
            fan_out(&client, &base, &key, child.id(), n).await;
        }
        let _ = child.kill();
    });
}
