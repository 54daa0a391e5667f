//! Several instances on PostgreSQL against one on SQLite, in one run
//! (`make bench-cluster`, which starts a throwaway PostgreSQL and passes
//! its admin URL as `BENCH_POSTGRES_URL`):
//!
//! - SSE fan-out: `FANOUT` watchers (default 2,000) of one session, split
//!   evenly over two instances on one PostgreSQL database, against all of
//!   them on one instance on SQLite; one allowed tool call made on the
//!   first instance; the time until each watcher has the resulting event
//!   (p50, p99, last), and each instance's resident memory with its
//!   watchers connected;
//! - tool calls per second through HAProxy (`deploy/haproxy.cfg`) in front
//!   of the two instances, 16 clients for `CALLS_SECONDS` (default 10),
//!   beside the same clients straight at the one SQLite instance.
//!
//! The servers are the release binary, each in a process of its own. What
//! is timed is the arrival as this process reads it: the two set-ups are
//! measured the same way in the same run, so the ratio is what counts.

// Only some of the shared helpers are used here.
#[allow(dead_code)]
mod common;

use common::{call_ok, free_port, key_in, open, past_snapshot, percentile, rss_kib, server_binary};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};
use tokio::io::AsyncReadExt;
use tokio::net::TcpStream;

/// The release server on `database`, serving on its own port once it
/// answers `/healthz`.
async fn instance(database: &str) -> (Child, String) {
    let port = free_port();
    let mut child = Command::new(server_binary())
        .env("DATABASE_URL", database)
        .env("PORT", port.to_string())
        .env("RUST_LOG", "error")
        .env("SWITCHBOARD_DEMO_LESSONS", "0")
        .env("SESSION_WRITES_PER_MINUTE", "1000000")
        .env("SESSION_CALLS_MAX", "10000000")
        .env("MAX_STREAMS_PER_SESSION", "1000000")
        .stdout(Stdio::null())
        .spawn()
        .expect("server binary");
    let base = format!("127.0.0.1:{port}");
    for _ in 0..400 {
        if let Ok(res) = reqwest::get(format!("http://{base}/healthz")).await {
            if res.status().is_success() {
                return (child, base);
            }
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    let _ = child.kill();
    let _ = child.wait();
    panic!("instance on {database} did not start");
}

/// A watcher of session `id` on `base`, past its snapshot.
async fn watcher(base: String, id: String, token: String) -> TcpStream {
    let mut stream = TcpStream::connect(&base).await.unwrap();
    let request = format!(
        "GET /api/sessions/{id}/events HTTP/1.1\r\nHost: {base}\r\nAccept: text/event-stream\r\nAuthorization: Bearer {token}\r\n\r\n"
    );
    past_snapshot(&mut stream, &request).await;
    stream
}

/// Connects `watchers` to the session split evenly over `bases`, makes one
/// tool call on the first, and returns when each watcher had its event.
async fn fan_out(name: &str, bases: &[(String, u32)], key: &str, watchers: usize) -> Vec<Duration> {
    let client = reqwest::Client::new();
    let (id, token) = open(&client, &bases[0].0, key, "idv").await.unwrap();
    let before: Vec<u64> = bases.iter().map(|(_, pid)| rss_kib(*pid)).collect();
    let mut connecting = tokio::task::JoinSet::new();
    let mut streams = Vec::with_capacity(watchers);
    for n in 0..watchers {
        let base = bases[n % bases.len()].0.clone();
        connecting.spawn(watcher(base, id.clone(), token.clone()));
        if connecting.len() >= 256 {
            streams.push(connecting.join_next().await.unwrap().unwrap());
        }
    }
    while let Some(stream) = connecting.join_next().await {
        streams.push(stream.unwrap());
    }
    let rss: Vec<String> = bases
        .iter()
        .zip(&before)
        .map(|((_, pid), was)| {
            let now = rss_kib(*pid);
            format!("{} MiB (+{})", now / 1024, now.saturating_sub(*was) / 1024)
        })
        .collect();
    let mut waiting = tokio::task::JoinSet::new();
    for mut stream in streams {
        waiting.spawn(async move {
            let mut seen = Vec::new();
            let mut buf = [0u8; 4096];
            loop {
                let n = stream.read(&mut buf).await.unwrap();
                assert!(n > 0, "stream closed before the event");
                seen.extend_from_slice(&buf[..n]);
                if String::from_utf8_lossy(&seen).contains("identity_verified") {
                    return (Instant::now(), stream);
                }
            }
        });
    }
    tokio::time::sleep(Duration::from_millis(300 + watchers as u64 / 10)).await;
    let started = Instant::now();
    let res = client
        .post(format!(
            "http://{}/api/sessions/{id}/tool-calls",
            bases[0].0
        ))
        .bearer_auth(&token)
        .json(
            &serde_json::json!({"name": "perform_idv_check", "arguments": {
            "accountNumber": "12345678", "sortCode": "12-34-56", "dateOfBirth": "1985-04-12"}}),
        )
        .send()
        .await
        .unwrap();
    assert!(res.status().is_success(), "the call: {}", res.status());
    let mut arrived = Vec::with_capacity(watchers);
    let mut open_streams = Vec::with_capacity(watchers);
    while let Some(done) = waiting.join_next().await {
        let (at, stream) = done.unwrap();
        arrived.push(at.duration_since(started));
        open_streams.push(stream);
    }
    drop(open_streams);
    arrived.sort();
    println!(
        "fan-out, {name}: {} watchers got it: p50 {:.1?}, p99 {:.1?}, last {:.1?}; RSS per instance with them connected: {}",
        arrived.len(),
        percentile(&arrived, 0.5),
        percentile(&arrived, 0.99),
        arrived.last().unwrap(),
        rss.join(", ")
    );
    arrived
}

/// Allowed tool calls per second through `base` from 16 clients, each on a
/// session of its own, for `seconds`.
async fn calls_per_second(name: &str, base: &str, key: &str, seconds: u64) -> f64 {
    let client = reqwest::Client::new();
    let until = Instant::now() + Duration::from_secs(seconds);
    let mut clients = tokio::task::JoinSet::new();
    for _ in 0..16 {
        let (client, base, key) = (client.clone(), base.to_owned(), key.to_owned());
        clients.spawn(async move {
            let (id, token) = open(&client, &base, &key, "idv").await.unwrap();
            let url = format!("http://{base}/api/sessions/{id}/tool-calls");
            let body = serde_json::json!({"name": "get_server_time", "arguments": {}});
            let mut done = 0u64;
            while Instant::now() < until {
                call_ok(&client, &url, &token, &body).await;
                done += 1;
            }
            done
        });
    }
    let mut total = 0;
    while let Some(done) = clients.join_next().await {
        total += done.unwrap();
    }
    let rate = total as f64 / seconds as f64;
    println!("tool calls, {name}: {rate:.0}/s (16 clients, {seconds} s)");
    rate
}

/// HAProxy with `deploy/haproxy.cfg` in front of `instances`.
fn load_balancer(instances: &[(String, u32)]) -> (Child, String) {
    let bind = format!("127.0.0.1:{}", free_port());
    let child = Command::new("haproxy")
        .args([
            "-f",
            concat!(env!("CARGO_MANIFEST_DIR"), "/deploy/haproxy.cfg"),
        ])
        .env("SB_BIND", &bind)
        .env("SB_APP1", &instances[0].0)
        .env("SB_APP2", &instances[1].0)
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .expect("haproxy (make bench-cluster installs it)");
    (child, bind)
}

fn main() {
    let Ok(admin) = std::env::var("BENCH_POSTGRES_URL") else {
        eprintln!("bench-cluster needs BENCH_POSTGRES_URL (run it with `make bench-cluster`)");
        std::process::exit(2);
    };
    let watchers: usize = std::env::var("FANOUT")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(2_000);
    let seconds: u64 = std::env::var("CALLS_SECONDS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(10);
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .unwrap();
    runtime.block_on(async {
        use sqlx::Connection;
        let mut conn = sqlx::PgConnection::connect(&admin).await.unwrap();
        sqlx::Executor::execute(&mut conn, "DROP DATABASE IF EXISTS bench_cluster")
            .await
            .unwrap();
        sqlx::Executor::execute(&mut conn, "CREATE DATABASE bench_cluster")
            .await
            .unwrap();
        let pg = format!("{}/bench_cluster", admin.rsplit_once('/').unwrap().0);
        let dir = tempfile::tempdir().unwrap();
        let sqlite = format!("sqlite://{}/bench.db", dir.path().display());

        let (mut one, one_base) = instance(&sqlite).await;
        let (mut a, a_base) = instance(&pg).await;
        let (mut b, b_base) = instance(&pg).await;
        let one_key = key_in(&sqlite).await;
        let pg_key = key_in(&pg).await;
        let single = [(one_base.clone(), one.id())];
        let pair = [(a_base.clone(), a.id()), (b_base.clone(), b.id())];

        let sqlite_times = fan_out("one instance on SQLite", &single, &one_key, watchers).await;
        let pg_times = fan_out("two instances on PostgreSQL", &pair, &pg_key, watchers).await;
        let ratio = |p: f64| {
            percentile(&pg_times, p).as_secs_f64() / percentile(&sqlite_times, p).as_secs_f64()
        };
        println!(
            "fan-out, two on PostgreSQL / one on SQLite: p50 {:.2}x, p99 {:.2}x (added p99 {:.1?})",
            ratio(0.5),
            ratio(0.99),
            percentile(&pg_times, 0.99).saturating_sub(percentile(&sqlite_times, 0.99))
        );

        let (mut lb, lb_base) = load_balancer(&pair);
        tokio::time::sleep(Duration::from_millis(500)).await;
        let direct = calls_per_second(
            "one instance on SQLite, direct",
            &one_base,
            &one_key,
            seconds,
        )
        .await;
        let balanced = calls_per_second(
            "two instances on PostgreSQL through HAProxy",
            &lb_base,
            &pg_key,
            seconds,
        )
        .await;
        println!("tool calls, cluster / single: {:.2}x", balanced / direct);
        for child in [&mut lb, &mut one, &mut a, &mut b] {
            let _ = child.kill();
            let _ = child.wait();
        }
    });
}
