//! Live-session performance, measured end to end over loopback against the
//! real app (random port, throwaway SQLite database):
//!
//! - tool-call round trip: sequential allowed calls of a built-in tool over
//!   HTTP; median and p99;
//! - SSE fan-out: N watchers of one session opening their streams at once,
//!   as users' clients do (`sessions/probe.rs`), one `workflow_update`; the
//!   time from the tool call until each watcher has the event (p50, p99,
//!   last), the server's CPU time for it, and what connecting the watchers
//!   added to the server's resident memory (`VmRSS`, a fresh server each
//!   round);
//! - the same fan-out through two peers, each a fresh process timed by the
//!   same probe with the exact frame Switchboard sent: a plain `node:http`
//!   relay (`benches/peers/sse_relay.mjs`) and a minimal tokio relay
//!   written for the bench, the near-limit (`benches/peers/tokio_relay.rs`);
//!   then Switchboard's figures over each peer's.
//!
//! The servers run as their own processes (the release binary), so their
//! memory is measured alone. Run with `make bench-sessions`;
//! `FANOUT=1000,10000` chooses the watcher counts, `WATCHER_NICE=0,19` the
//! watchers' priorities, `PEERS=node,tokio` the peers.

// Only some of the shared helpers are used here.
#[allow(dead_code)]
mod common;
#[path = "sessions/probe.rs"]
mod probe;
#[path = "peers/tokio_relay.rs"]
mod tokio_relay;

use common::{open, percentile, spawn, spawn_with};
use probe::{fan_out, FanOut, Target, Watchers};
use std::net::SocketAddr;
use std::time::{Duration, Instant};

/// Set on the bench binary started again as the tokio peer.
const PEER_ENV: &str = "SWITCHBOARD_BENCH_PEER";

async fn round_trip(client: &reqwest::Client, base: &str, key: &str) {
    let (id, token) = open(client, base, key, "idv").await.unwrap();
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

/// Fans one `workflow_update` out through a fresh Switchboard: a session
/// opened for the round, its watchers on `/api/sessions/{id}/events` with
/// the session token in `Authorization`, the event caused by an allowed
/// tool call.
async fn switchboard_fan_out(count: usize, watchers: &Watchers) -> FanOut {
    // Every watcher is let in, whatever the default cap on one session's
    // streams.
    let cap = count.to_string();
    let (base, key, mut child, _dir) = spawn_with(&[("MAX_STREAMS_PER_SESSION", &cap)]).await;
    let client = reqwest::Client::new();
    let (id, token) = open(&client, &base, &key, "idv").await.unwrap();
    let target = Target {
        name: "Switchboard",
        address: base.parse().unwrap(),
        pid: child.id(),
        request: format!("GET /api/sessions/{id}/events HTTP/1.1\r\nHost: {base}\r\nAccept: text/event-stream\r\nAuthorization: Bearer {token}\r\n\r\n"),
    };
    let result = fan_out(&target, count, watchers, "\"workflow_update\"", || async {
        let res = client
            .post(format!("http://{base}/api/sessions/{id}/tool-calls"))
            .bearer_auth(&token)
            .json(&serde_json::json!({"name": "perform_idv_check", "arguments": {"accountNumber": "12345678", "sortCode": "12-34-56", "dateOfBirth": "1985-04-12"}}))
            .send()
            .await
            .unwrap();
        assert!(res.status().is_success());
    })
    .await;
    let _ = child.kill();
    let _ = child.wait();
    result
}

/// A peer relay: its own process, which prints `{"port": N}` when ready.
struct Peer {
    name: &'static str,
    child: std::process::Child,
    address: SocketAddr,
}

impl Peer {
    /// Starts peer `name` (`node` or `tokio`); `None` (and why, printed)
    /// if it cannot run here.
    fn start(name: &str) -> Option<Self> {
        use std::io::BufRead;
        let (label, mut command) = match name {
            "node" => {
                let script = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
                    .join("benches/peers/sse_relay.mjs");
                let mut c = std::process::Command::new("node");
                c.arg(script);
                ("Node relay", c)
            }
            "tokio" => {
                let mut c = std::process::Command::new(std::env::current_exe().unwrap());
                c.env(PEER_ENV, "tokio");
                ("tokio relay", c)
            }
            other => {
                println!("unknown peer {other}: not run");
                return None;
            }
        };
        let mut child = match command.stdout(std::process::Stdio::piped()).spawn() {
            Ok(child) => child,
            Err(e) => {
                println!("{label} not run ({e})");
                return None;
            }
        };
        let mut line = String::new();
        std::io::BufReader::new(child.stdout.take().unwrap())
            .read_line(&mut line)
            .unwrap();
        let ready: serde_json::Value = serde_json::from_str(&line).expect("the peer's port");
        Some(Self {
            name: label,
            address: format!("127.0.0.1:{}", ready["port"]).parse().unwrap(),
            child,
        })
    }
}

impl Drop for Peer {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// Fans `frame` (Switchboard's own bytes for the event) out through a
/// fresh `peer` under the same probe.
async fn peer_fan_out(
    peer: &str,
    frame: Vec<u8>,
    count: usize,
    watchers: &Watchers,
) -> Option<FanOut> {
    let peer = Peer::start(peer)?;
    let address = peer.address;
    let target = Target {
        name: peer.name,
        address,
        pid: peer.child.id(),
        request: format!(
            "GET /events HTTP/1.1\r\nHost: {address}\r\nAccept: text/event-stream\r\nAuthorization: Bearer st_0000000000000000\r\n\r\n"
        ),
    };
    let client = reqwest::Client::new();
    Some(
        fan_out(&target, count, watchers, "\"workflow_update\"", || async {
            let res = client
                .post(format!("http://{address}/publish"))
                .body(frame)
                .send()
                .await
                .unwrap();
            assert!(res.status().is_success());
        })
        .await,
    )
}

/// Switchboard's figures over a peer's, measured one after the other in
/// this run.
fn compare(count: usize, nice: i32, ours: &FanOut, name: &str, peer: &FanOut) {
    let ratio = |a: Duration, b: Duration| a.as_secs_f64() / b.as_secs_f64().max(1e-9);
    println!(
        "  {count} at nice {nice}, Switchboard / {name}: arrived p50 {:.2}x, p99 {:.2}x; read p50 {:.2}x, p99 {:.2}x; CPU {:.2}x; RSS added {:.2}x ({} / {} MiB)",
        ratio(percentile(&ours.arrived, 0.5), percentile(&peer.arrived, 0.5)),
        ratio(percentile(&ours.arrived, 0.99), percentile(&peer.arrived, 0.99)),
        ratio(percentile(&ours.read, 0.5), percentile(&peer.read, 0.5)),
        ratio(percentile(&ours.read, 0.99), percentile(&peer.read, 0.99)),
        ratio(ours.cpu, peer.cpu),
        ours.rss_added_kib as f64 / peer.rss_added_kib.max(1) as f64,
        ours.rss_added_kib / 1024,
        peer.rss_added_kib / 1024,
    );
}

fn main() {
    if std::env::var(PEER_ENV).as_deref() == Ok("tokio") {
        return tokio_relay::run();
    }
    let counts: Vec<usize> = std::env::var("FANOUT")
        .unwrap_or_else(|_| "1000,10000".into())
        .split(',')
        .filter_map(|n| n.trim().parse().ok())
        .collect();
    // Each watcher is a socket here and one in the server; a margin for
    // the rest.
    let wanted = 2 * counts.iter().max().copied().unwrap_or(0) as u64 + 1024;
    let limit = probe::raise_open_files(wanted);
    // The watchers share this machine's cores with the server. At nice 0
    // they compete with it for them, as an outside probe on the same
    // machine does; at nice 19 they yield, closer to watchers on their own
    // machines (arrival times are the kernel's either way).
    let levels = std::env::var("WATCHER_NICE").unwrap_or_else(|_| "0,19".into());
    let levels: Vec<Watchers> = levels
        .split(',')
        .filter_map(|n| n.trim().parse().ok())
        .map(Watchers::new)
        .collect();
    let peers = std::env::var("PEERS").unwrap_or_else(|_| "node,tokio".into());
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .unwrap();
    runtime.block_on(async {
        {
            let (base, key, mut child, _dir) = spawn().await;
            round_trip(&reqwest::Client::new(), &base, &key).await;
            let _ = child.kill();
        }
        for &count in &counts {
            // This process holds every watcher's socket; so does the server.
            if count as u64 + 512 > limit {
                println!(
                    "SSE fan-out to {count} watchers not run: it needs {} open files in this process and in the server, and the limit here is {limit} (raising it needs CAP_SYS_RESOURCE)",
                    count + 512
                );
                continue;
            }
            for watchers in &levels {
                let ours = switchboard_fan_out(count, watchers).await;
                for peer in peers.split(',').map(str::trim).filter(|p| !p.is_empty()) {
                    let frame = ours.frame.clone();
                    if let Some(theirs) = peer_fan_out(peer, frame, count, watchers).await {
                        compare(count, watchers.nice, &ours, peer, &theirs);
                    }
                }
            }
        }
    });
}
