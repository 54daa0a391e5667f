//! Live-session performance, measured end to end over loopback against the
//! real app (random port, throwaway SQLite database):
//!
//! - tool-call round trip: sequential allowed calls of a built-in tool over
//!   HTTP; median and p99;
//! - SSE fan-out: N subscribers on one session, one `workflow_update`; time
//!   from the tool call until each subscriber has the event (p50, p99, last),
//!   the server's CPU time for it, and the server's resident memory with
//!   them connected;
//! - the same fan-out through a plain `node:http` SSE relay
//!   (`benches/peers/sse_relay.mjs`), run right after under the same probe
//!   with the exact frame Switchboard sent, and the two side by side
//!   (Switchboard / Node ratios).
//!
//! "Has the event" is measured twice. *Arrived* is the kernel's receive
//! timestamp of the bytes on the subscriber's socket (`SO_TIMESTAMPNS`):
//! what a watcher on its own machine would see, whatever this process is
//! doing. *Read* is when this process's reader task got it: on a small
//! machine that also counts 10,000 reader wake-ups competing with the
//! server for the same cores.
//!
//! The server runs as its own process (the release binary), so its memory is
//! measured alone and each side has its own open-file limit. Run with
//! `make bench-sessions`; `FANOUT=1000,10000` chooses the subscriber counts.

mod common;

use common::{call_ok, cpu_time, open, past_snapshot, percentile, rss_kib, spawn};
use std::os::fd::AsRawFd;
use std::time::{Duration, Instant, SystemTime};
use tokio::io::Interest;
use tokio::net::TcpStream;

/// Asks the kernel to timestamp data arriving on `stream`.
fn timestamp_arrivals(stream: &TcpStream) {
    let on: libc::c_int = 1;
    // SAFETY: a valid socket and a c_int option of the right size.
    let rc = unsafe {
        libc::setsockopt(
            stream.as_raw_fd(),
            libc::SOL_SOCKET,
            libc::SO_TIMESTAMPNS,
            (&on as *const libc::c_int).cast(),
            std::mem::size_of::<libc::c_int>() as libc::socklen_t,
        )
    };
    assert_eq!(rc, 0, "SO_TIMESTAMPNS: {}", std::io::Error::last_os_error());
}

/// Reads what is there; returns the byte count and the kernel's arrival
/// time of the newest bytes read.
async fn read_timestamped(
    stream: &TcpStream,
    buf: &mut [u8],
) -> std::io::Result<(usize, Option<SystemTime>)> {
    loop {
        stream.readable().await?;
        let read = stream.try_io(Interest::READABLE, || {
            let mut iov = libc::iovec {
                iov_base: buf.as_mut_ptr().cast(),
                iov_len: buf.len(),
            };
            let mut control = [0u64; 16];
            // SAFETY: msghdr is plain data; every pointer set below outlives
            // the call.
            let mut msg: libc::msghdr = unsafe { std::mem::zeroed() };
            msg.msg_iov = &mut iov;
            msg.msg_iovlen = 1;
            msg.msg_control = control.as_mut_ptr().cast();
            msg.msg_controllen = std::mem::size_of_val(&control) as _;
            // SAFETY: as above; the fd is this stream's socket.
            let n = unsafe { libc::recvmsg(stream.as_raw_fd(), &mut msg, 0) };
            if n < 0 {
                return Err(std::io::Error::last_os_error());
            }
            let mut at = None;
            // SAFETY: walking the control messages the kernel just wrote.
            unsafe {
                let mut cmsg = libc::CMSG_FIRSTHDR(&msg);
                while !cmsg.is_null() {
                    if (*cmsg).cmsg_level == libc::SOL_SOCKET
                        && (*cmsg).cmsg_type == libc::SCM_TIMESTAMPNS
                    {
                        let ts = std::ptr::read_unaligned(
                            libc::CMSG_DATA(cmsg).cast::<libc::timespec>(),
                        );
                        at = Some(
                            SystemTime::UNIX_EPOCH
                                + Duration::new(ts.tv_sec as u64, ts.tv_nsec as u32),
                        );
                    }
                    cmsg = libc::CMSG_NXTHDR(&msg, cmsg);
                }
            }
            Ok((n as usize, at))
        });
        match read {
            Err(e) if e.kind() == std::io::ErrorKind::WouldBlock => continue,
            other => return other,
        }
    }
}

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
        call_ok(client, &url, &token, &body).await;
        times.push(started.elapsed());
    }
    times.sort();
    println!(
        "tool-call round trip (HTTP, allowed, built-in get_server_time), 2000 calls: median {:?}, p99 {:?}",
        percentile(&times, 0.5),
        percentile(&times, 0.99)
    );
}

/// Connects, sends `request` and reads until the snapshot arrived; returns
/// the stream.
async fn subscriber(base: String, request: String) -> TcpStream {
    let mut stream = TcpStream::connect(&base).await.unwrap();
    timestamp_arrivals(&stream);
    past_snapshot(&mut stream, &request).await;
    stream
}

/// Where the subscribers run: their own runtime, at a chosen niceness.
struct Watchers {
    runtime: tokio::runtime::Runtime,
    nice: i32,
}

impl Watchers {
    /// Two threads, like the machine's cores; each lowers its own
    /// scheduling priority to `nice` as it starts (on Linux a thread's
    /// niceness is its own).
    fn new(nice: i32) -> Self {
        let runtime = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(2)
            .enable_all()
            .on_thread_start(move || {
                // SAFETY: plain syscall on the calling thread.
                unsafe { libc::setpriority(libc::PRIO_PROCESS, 0, nice) };
            })
            .build()
            .unwrap();
        Self { runtime, nice }
    }
}

/// A server the probe fans out through: Switchboard, or the Node relay.
struct Target {
    /// Its name in the report.
    name: &'static str,
    /// `host:port`.
    base: String,
    /// Its process, for CPU time and memory.
    pid: u32,
    /// The HTTP request that subscribes (sent as it is by every subscriber).
    request: String,
}

/// What one fan-out measured.
struct FanOut {
    arrived: Vec<Duration>,
    read: Vec<Duration>,
    cpu: Duration,
    rss_connected_kib: u64,
    rss_added_kib: u64,
    /// The event's SSE frame as the subscribers got it.
    frame: Vec<u8>,
}

impl FanOut {
    fn p99(&self) -> Duration {
        percentile(&self.arrived, 0.99)
    }
}

/// The SSE frame (`id: …` to its blank line) that carries `marker`.
fn frame_with(seen: &[u8], marker: &str) -> Vec<u8> {
    let text = String::from_utf8_lossy(seen);
    let at = text.find(marker).expect("marker in the stream");
    let start = text[..at].rfind("id: ").expect("the frame's id line");
    let end = at + text[at..].find("\n\n").expect("the frame's end") + 2;
    text[start..end].as_bytes().to_vec()
}

/// Connects `subscribers` to `target`, calls `trigger` once they all wait,
/// and times when each has the frame carrying `marker`.
async fn fan_out<F: std::future::Future<Output = ()>>(
    target: &Target,
    subscribers: usize,
    watchers: &Watchers,
    marker: &'static str,
    trigger: impl FnOnce() -> F,
) -> FanOut {
    let on = watchers.runtime.handle();
    let rss_before = rss_kib(target.pid);
    let mut connecting = tokio::task::JoinSet::new();
    let mut streams: Vec<TcpStream> = Vec::with_capacity(subscribers);
    for _ in 0..subscribers {
        connecting.spawn_on(subscriber(target.base.clone(), target.request.clone()), on);
        // Keep the accept queue from overflowing on a 2-core machine.
        if connecting.len() >= 256 {
            streams.push(connecting.join_next().await.unwrap().unwrap());
        }
    }
    while let Some(stream) = connecting.join_next().await {
        streams.push(stream.unwrap());
    }
    let rss_connected = rss_kib(target.pid);
    let hold = std::env::var("BENCH_HOLD")
        .ok()
        .and_then(|s| s.parse::<u64>().ok());
    if let Some(hold) = hold {
        println!(
            "holding {subscribers} subscribers of {} for {hold} s (pid {})",
            target.name, target.pid
        );
        tokio::time::sleep(Duration::from_secs(hold)).await;
    }

    let mut waiting = tokio::task::JoinSet::new();
    for stream in streams {
        waiting.spawn_on(
            async move {
                let mut seen = Vec::new();
                let mut buf = [0u8; 4096];
                loop {
                    let (n, arrived) = read_timestamped(&stream, &mut buf).await.unwrap();
                    assert!(n > 0, "stream closed before the update");
                    seen.extend_from_slice(&buf[..n]);
                    if String::from_utf8_lossy(&seen).contains(marker) {
                        let read = SystemTime::now();
                        return (arrived.unwrap_or(read), read, stream, seen);
                    }
                }
            },
            on,
        );
    }
    // Let every reader park on its socket first, so the clock measures
    // the server's fan-out, not this process starting 10,000 tasks.
    tokio::time::sleep(Duration::from_millis(200 + subscribers as u64 / 10)).await;
    let cpu_before = cpu_time(target.pid);
    let started = SystemTime::now();
    trigger().await;
    let mut arrived = Vec::with_capacity(subscribers);
    let mut read = Vec::with_capacity(subscribers);
    let mut open = Vec::with_capacity(subscribers);
    let mut frame = Vec::new();
    while let Some(done) = waiting.join_next().await {
        let (at, got, stream, seen) = done.unwrap();
        arrived.push(at.duration_since(started).unwrap_or_default());
        read.push(got.duration_since(started).unwrap_or_default());
        open.push(stream);
        if frame.is_empty() {
            frame = frame_with(&seen, marker);
        }
    }
    let cpu = cpu_time(target.pid).saturating_sub(cpu_before);
    // Closing 10,000 sockets is not part of the fan-out (nor of a profile).
    if let Some(hold) = hold {
        tokio::time::sleep(Duration::from_secs(hold)).await;
    }
    drop(open);
    arrived.sort();
    read.sort();
    println!(
        "SSE fan-out, {} to {subscribers} subscribers at nice {} ({} received it): arrived p50 {:.1?}, p99 {:.1?}, last {:.1?}; read p50 {:.1?}, p99 {:.1?}; server CPU {:?}; server RSS {} MiB connected (+{} MiB)",
        target.name,
        watchers.nice,
        arrived.len(),
        percentile(&arrived, 0.5),
        percentile(&arrived, 0.99),
        arrived.last().unwrap(),
        percentile(&read, 0.5),
        percentile(&read, 0.99),
        cpu,
        rss_connected / 1024,
        rss_connected.saturating_sub(rss_before) / 1024
    );
    FanOut {
        arrived,
        read,
        cpu,
        rss_connected_kib: rss_connected,
        rss_added_kib: rss_connected.saturating_sub(rss_before),
        frame,
    }
}

/// Fans one `workflow_update` out through Switchboard: a session opened
/// for the round, its subscribers on `/api/sessions/{id}/events`, the event
/// caused by an allowed tool call.
async fn switchboard_fan_out(
    client: &reqwest::Client,
    base: &str,
    key: &str,
    pid: u32,
    subscribers: usize,
    watchers: &Watchers,
) -> FanOut {
    let (id, token) = open(client, base, key, "idv").await.unwrap();
    let target = Target {
        name: "Switchboard",
        base: base.to_owned(),
        pid,
        request: format!("GET /api/sessions/{id}/events?token={token} HTTP/1.1\r\nHost: {base}\r\nAccept: text/event-stream\r\n\r\n"),
    };
    fan_out(&target, subscribers, watchers, "\"workflow_update\"", || async {
        let res = client
            .post(format!("http://{base}/api/sessions/{id}/tool-calls"))
            .bearer_auth(&token)
            .json(&serde_json::json!({"name": "perform_idv_check", "arguments": {"accountNumber": "12345678", "sortCode": "12-34-56", "dateOfBirth": "1985-04-12"}}))
            .send()
            .await
            .unwrap();
        assert!(res.status().is_success());
    })
    .await
}

/// The Node relay (`benches/peers/sse_relay.mjs`) as its own process.
struct NodeRelay {
    child: std::process::Child,
    base: String,
}

impl NodeRelay {
    /// Starts it; `None` (and why, printed) if Node cannot run here.
    fn start() -> Option<Self> {
        use std::io::BufRead;
        let script =
            std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("benches/peers/sse_relay.mjs");
        let mut child = match std::process::Command::new("node")
            .arg(script)
            .stdout(std::process::Stdio::piped())
            .spawn()
        {
            Ok(child) => child,
            Err(e) => {
                println!("Node relay not run ({e})");
                return None;
            }
        };
        let mut line = String::new();
        std::io::BufReader::new(child.stdout.take().unwrap())
            .read_line(&mut line)
            .unwrap();
        let ready: serde_json::Value = serde_json::from_str(&line).expect("the relay's port");
        Some(Self {
            base: format!("127.0.0.1:{}", ready["port"]),
            child,
        })
    }
}

impl Drop for NodeRelay {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// Fans `frame` (Switchboard's own bytes for the event) out through the Node
/// relay under the same probe.
async fn node_fan_out(
    client: &reqwest::Client,
    relay: &NodeRelay,
    frame: Vec<u8>,
    subscribers: usize,
    watchers: &Watchers,
) -> FanOut {
    let base = &relay.base;
    let target = Target {
        name: "Node relay",
        base: base.clone(),
        pid: relay.child.id(),
        request: format!(
            "GET /events HTTP/1.1\r\nHost: {base}\r\nAccept: text/event-stream\r\n\r\n"
        ),
    };
    fan_out(
        &target,
        subscribers,
        watchers,
        "\"workflow_update\"",
        || async {
            let res = client
                .post(format!("http://{base}/publish"))
                .body(frame)
                .send()
                .await
                .unwrap();
            assert!(res.status().is_success());
        },
    )
    .await
}

/// Switchboard's figures over the Node relay's, measured one after the
/// other in this run (the target: p99 ≤ 0.5×, RSS ≤ 1×).
fn compare(subscribers: usize, nice: i32, ours: &FanOut, node: &FanOut) {
    let ratio = |a: Duration, b: Duration| a.as_secs_f64() / b.as_secs_f64().max(1e-9);
    println!(
        "  {subscribers} at nice {nice}, Switchboard / Node: arrived p50 {:.2}x, p99 {:.2}x; read p99 {:.2}x; CPU {:.2}x; RSS connected {:.2}x ({} / {} MiB), added {:.2}x",
        ratio(percentile(&ours.arrived, 0.5), percentile(&node.arrived, 0.5)),
        ratio(ours.p99(), node.p99()),
        ratio(percentile(&ours.read, 0.99), percentile(&node.read, 0.99)),
        ratio(ours.cpu, node.cpu),
        ours.rss_connected_kib as f64 / node.rss_connected_kib.max(1) as f64,
        ours.rss_connected_kib / 1024,
        node.rss_connected_kib / 1024,
        ours.rss_added_kib as f64 / node.rss_added_kib.max(1) as f64,
    );
}

fn main() {
    let counts = std::env::var("FANOUT").unwrap_or_else(|_| "1000,10000".into());
    // The subscribers share this machine's cores with the server. At nice 0
    // they compete with it for them; at nice 19 they yield, which is closer
    // to watchers on their own machines (arrival times are the kernel's
    // either way).
    let levels = std::env::var("WATCHER_NICE").unwrap_or_else(|_| "0,19".into());
    let levels: Vec<Watchers> = levels
        .split(',')
        .filter_map(|n| n.trim().parse().ok())
        .map(Watchers::new)
        .collect();
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .unwrap();
    runtime.block_on(async {
        let (base, key, mut child, _dir) = spawn().await;
        let client = reqwest::Client::new();
        round_trip(&client, &base, &key).await;
        let relay = NodeRelay::start();
        for n in counts.split(',').filter_map(|n| n.trim().parse().ok()) {
            for watchers in &levels {
                let ours = switchboard_fan_out(&client, &base, &key, child.id(), n, watchers).await;
                if let Some(relay) = &relay {
                    // Let the server finish closing the last round's sockets.
                    tokio::time::sleep(Duration::from_secs(1)).await;
                    let frame = ours.frame.clone();
                    let node = node_fan_out(&client, relay, frame, n, watchers).await;
                    compare(n, watchers.nice, &ours, &node);
                }
            }
        }
        let _ = child.kill();
    });
}
