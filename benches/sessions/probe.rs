//! The watchers of `make bench-sessions`, connecting and reading as a
//! user's clients do: every stream opened at once (each a plain HTTP/1.1
//! `GET` on its own connection, `Accept: text/event-stream`, the token in
//! `Authorization`), one event caused, and its arrival timed at every
//! watcher. The same probe is pointed at Switchboard and at its peers.
//!
//! "Has the event" is measured twice. *Arrived* is the kernel's receive
//! timestamp of the bytes on the watcher's socket (`SO_TIMESTAMPNS`): what a
//! watcher on its own machine would see, whatever this process is doing.
//! *Read* is when this process's reader task got it: on a small machine
//! that also counts the readers' wake-ups competing with the server for the
//! same cores, as an outside probe on the same machine does.

use crate::common::{cpu_time, percentile, rss_kib};
use std::net::{Ipv4Addr, SocketAddr};
use std::os::fd::AsRawFd;
use std::time::{Duration, SystemTime};
use tokio::io::{AsyncReadExt, AsyncWriteExt, Interest};
use tokio::net::{TcpSocket, TcpStream};

/// Connections one loopback source address can hold to one server port
/// (the kernel's ephemeral range is 32768–60999): past it, watchers
/// connect from 127.0.0.2, 127.0.0.3, … as many client machines would.
const PER_SOURCE_ADDRESS: usize = 25_000;

/// Raises this process's open-file limit (which the servers it starts
/// inherit) as far as it may go towards `wanted`; returns the limit now in
/// force.
pub fn raise_open_files(wanted: u64) -> u64 {
    let mut limit = libc::rlimit {
        rlim_cur: 0,
        rlim_max: 0,
    };
    // SAFETY: plain syscalls on this process with a valid struct.
    unsafe {
        libc::getrlimit(libc::RLIMIT_NOFILE, &mut limit);
        let raised = libc::rlimit {
            rlim_cur: wanted.max(limit.rlim_cur),
            rlim_max: wanted.max(limit.rlim_max),
        };
        if libc::setrlimit(libc::RLIMIT_NOFILE, &raised) != 0 {
            // Without CAP_SYS_RESOURCE the hard limit cannot rise: take it.
            limit.rlim_cur = limit.rlim_max;
            libc::setrlimit(libc::RLIMIT_NOFILE, &limit);
        }
        libc::getrlimit(libc::RLIMIT_NOFILE, &mut limit);
    }
    limit.rlim_cur
}

/// Turns on socket option `name` (at `level`) of socket `fd`.
fn switch_on(fd: std::os::fd::RawFd, level: libc::c_int, name: libc::c_int, what: &str) {
    let on: libc::c_int = 1;
    // SAFETY: a valid socket and a c_int option of the right size.
    let rc = unsafe {
        libc::setsockopt(
            fd,
            level,
            name,
            (&on as *const libc::c_int).cast(),
            std::mem::size_of::<libc::c_int>() as libc::socklen_t,
        )
    };
    assert_eq!(rc, 0, "{what}: {}", std::io::Error::last_os_error());
}

/// Asks the kernel to timestamp data arriving on `stream`.
fn timestamp_arrivals(stream: &TcpStream) {
    switch_on(
        stream.as_raw_fd(),
        libc::SOL_SOCKET,
        libc::SO_TIMESTAMPNS,
        "SO_TIMESTAMPNS",
    );
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
            Ok((n as usize, arrival(&msg)))
        });
        match read {
            Err(e) if e.kind() == std::io::ErrorKind::WouldBlock => continue,
            other => return other,
        }
    }
}

/// The `SCM_TIMESTAMPNS` control message of a `recvmsg`, if there is one.
fn arrival(msg: &libc::msghdr) -> Option<SystemTime> {
    let mut at = None;
    // SAFETY: walking the control messages the kernel just wrote.
    unsafe {
        let mut cmsg = libc::CMSG_FIRSTHDR(msg);
        while !cmsg.is_null() {
            if (*cmsg).cmsg_level == libc::SOL_SOCKET && (*cmsg).cmsg_type == libc::SCM_TIMESTAMPNS
            {
                let ts = std::ptr::read_unaligned(libc::CMSG_DATA(cmsg).cast::<libc::timespec>());
                at = Some(
                    SystemTime::UNIX_EPOCH + Duration::new(ts.tv_sec as u64, ts.tv_nsec as u32),
                );
            }
            cmsg = libc::CMSG_NXTHDR(msg, cmsg);
        }
    }
    at
}

/// Watcher `index` connects to `server`, sends `request` and reads until
/// the response head has come (the stream is open, as a client sees it);
/// returns the stream and what it read so far.
async fn subscriber(
    server: SocketAddr,
    index: usize,
    request: String,
) -> Result<(TcpStream, Vec<u8>), String> {
    let started = std::time::Instant::now();
    let failed = |what: String| format!("{what} after {:.1?}", started.elapsed());
    let source = Ipv4Addr::new(127, 0, 0, 1 + (index / PER_SOURCE_ADDRESS) as u8);
    let socket = TcpSocket::new_v4().unwrap();
    // The port is chosen at `connect`, per destination, as for a socket
    // that is not bound first (else every bound socket takes a port of its
    // own from the whole range).
    switch_on(
        socket.as_raw_fd(),
        libc::IPPROTO_IP,
        libc::IP_BIND_ADDRESS_NO_PORT,
        "IP_BIND_ADDRESS_NO_PORT",
    );
    socket.bind(SocketAddr::new(source.into(), 0)).unwrap();
    let mut stream = socket
        .connect(server)
        .await
        .map_err(|e| failed(format!("connect: {e}")))?;
    timestamp_arrivals(&stream);
    stream
        .write_all(request.as_bytes())
        .await
        .map_err(|e| failed(format!("request: {e}")))?;
    let mut seen = Vec::new();
    let mut buf = [0u8; 4096];
    while !seen.windows(4).any(|w| w == b"\r\n\r\n") {
        let n = stream
            .read(&mut buf)
            .await
            .map_err(|e| failed(format!("head: {e}")))?;
        if n == 0 {
            return Err(failed("closed before the response head".into()));
        }
        seen.extend_from_slice(&buf[..n]);
    }
    if !seen.starts_with(b"HTTP/1.1 200") {
        return Err(failed(format!(
            "answered {}",
            String::from_utf8_lossy(&seen).lines().next().unwrap_or("")
        )));
    }
    Ok((stream, seen))
}

/// Where the watchers run: their own runtime, at a chosen niceness.
pub struct Watchers {
    runtime: tokio::runtime::Runtime,
    /// Their scheduling priority.
    pub nice: i32,
}

impl Watchers {
    /// Two threads, like the machine's cores; each lowers its own
    /// scheduling priority to `nice` as it starts (on Linux a thread's
    /// niceness is its own).
    pub fn new(nice: i32) -> Self {
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

/// A server the probe fans out through: Switchboard or a peer.
pub struct Target {
    /// Its name in the report.
    pub name: &'static str,
    /// Where it listens.
    pub address: SocketAddr,
    /// Its process, for CPU time and memory.
    pub pid: u32,
    /// The HTTP request that subscribes (sent as it is by every watcher).
    pub request: String,
}

/// What one fan-out measured.
pub struct FanOut {
    pub arrived: Vec<Duration>,
    pub read: Vec<Duration>,
    pub cpu: Duration,
    /// The server's resident memory with the watchers connected, KiB.
    pub rss_connected_kib: u64,
    /// What connecting them added to it, KiB.
    pub rss_added_kib: u64,
    /// How long opening every stream took.
    pub connecting: Duration,
    /// The event's SSE frame as the watchers got it.
    pub frame: Vec<u8>,
}

/// The SSE frame (`id: …` to its blank line) that carries `marker`.
fn frame_with(seen: &[u8], marker: &str) -> Vec<u8> {
    let text = String::from_utf8_lossy(seen);
    let at = text.find(marker).expect("marker in the stream");
    let start = text[..at].rfind("id: ").expect("the frame's id line");
    let end = at + text[at..].find("\n\n").expect("the frame's end") + 2;
    text[start..end].as_bytes().to_vec()
}

/// Opens `count` streams on `target` all at once, calls `trigger` once
/// they are all open, and times when each has the frame carrying `marker`.
pub async fn fan_out<F: std::future::Future<Output = ()>>(
    target: &Target,
    count: usize,
    watchers: &Watchers,
    marker: &'static str,
    trigger: impl FnOnce() -> F,
) -> FanOut {
    let on = watchers.runtime.handle();
    let rss_before = settled_rss_kib(target.pid).await;
    let connect_started = std::time::Instant::now();
    let mut connecting = tokio::task::JoinSet::new();
    for index in 0..count {
        connecting.spawn_on(
            subscriber(target.address, index, target.request.clone()),
            on,
        );
    }
    let mut streams = Vec::with_capacity(count);
    let mut failures = Vec::new();
    while let Some(stream) = connecting.join_next().await {
        match stream.unwrap() {
            Ok(stream) => streams.push(stream),
            Err(e) => failures.push(e),
        }
    }
    let connecting = connect_started.elapsed();
    if let Some(first) = failures.first() {
        println!(
            "{}: {} of {count} watchers could not open their stream (first: {first})",
            target.name,
            failures.len()
        );
    }
    // What the server holds for its watchers once they are all open (the
    // first events are written by then: they follow the head at once).
    tokio::time::sleep(Duration::from_millis(300)).await;
    let rss_connected = rss_kib(target.pid);
    let hold = std::env::var("BENCH_HOLD")
        .ok()
        .and_then(|s| s.parse::<u64>().ok());
    if let Some(hold) = hold {
        println!(
            "holding {count} watchers of {} for {hold} s (pid {})",
            target.name, target.pid
        );
        tokio::time::sleep(Duration::from_secs(hold)).await;
    }
    let mut waiting = tokio::task::JoinSet::new();
    for (stream, seen) in streams {
        waiting.spawn_on(wait_for(stream, seen, marker), on);
    }
    // Let every reader park on its socket first, so the clock measures
    // the server's fan-out, not this process starting 10,000 tasks.
    tokio::time::sleep(Duration::from_millis(200 + count as u64 / 10)).await;
    let cpu_before = cpu_time(target.pid);
    let started = SystemTime::now();
    trigger().await;
    let mut arrived = Vec::with_capacity(count);
    let mut read = Vec::with_capacity(count);
    let mut open = Vec::with_capacity(count);
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
    let fan_out = FanOut {
        arrived,
        read,
        cpu,
        rss_connected_kib: rss_connected,
        rss_added_kib: rss_connected.saturating_sub(rss_before),
        connecting,
        frame,
    };
    report(target.name, watchers.nice, &fan_out);
    fan_out
}

/// Resident memory of `pid` once it has stopped changing (within 256 KiB
/// over half a second, or after 10 s): a server just started may still be
/// loading what it loads in the background (the tokenizer, ~30 MiB), which
/// is no watcher's cost.
async fn settled_rss_kib(pid: u32) -> u64 {
    let mut last = rss_kib(pid);
    for _ in 0..20 {
        tokio::time::sleep(Duration::from_millis(500)).await;
        let now = rss_kib(pid);
        if now.abs_diff(last) < 256 {
            return now;
        }
        last = now;
    }
    last
}

/// Reads `stream` (which has shown `seen` so far) until `marker` has come;
/// when it arrived and when it was read.
async fn wait_for(
    stream: TcpStream,
    mut seen: Vec<u8>,
    marker: &'static str,
) -> (SystemTime, SystemTime, TcpStream, Vec<u8>) {
    let mut buf = [0u8; 4096];
    // Only what comes after the stream's first events counts.
    let mut from = seen.len();
    loop {
        let (n, arrived) = read_timestamped(&stream, &mut buf).await.unwrap();
        assert!(n > 0, "stream closed before the update");
        seen.extend_from_slice(&buf[..n]);
        let tail = &seen[from.saturating_sub(marker.len())..];
        if String::from_utf8_lossy(tail).contains(marker) {
            let read = SystemTime::now();
            return (arrived.unwrap_or(read), read, stream, seen);
        }
        from = seen.len();
    }
}

/// One line per fan-out.
fn report(name: &str, nice: i32, f: &FanOut) {
    println!(
        "SSE fan-out, {name} to {} watchers at nice {nice} (opened in {:.1?}): arrived p50 {:.1?}, p99 {:.1?}, last {:.1?}; read p50 {:.1?}, p99 {:.1?}; server CPU {:?}; server RSS {} MiB connected (+{} MiB)",
        f.arrived.len(),
        f.connecting,
        percentile(&f.arrived, 0.5),
        percentile(&f.arrived, 0.99),
        f.arrived.last().unwrap(),
        percentile(&f.read, 0.5),
        percentile(&f.read, 0.99),
        f.cpu,
        f.rss_connected_kib / 1024,
        f.rss_added_kib / 1024
    );
}
