//! The near-limit peer of Switchboard's session event stream for
//! `make bench-sessions`: a minimal tokio relay written for the bench, the
//! least a server can do to fan one event out. It runs as its own process
//! (the bench binary started again with `SWITCHBOARD_BENCH_PEER=tokio`), so
//! its memory is measured alone, and is timed by the same probe.
//!
//! `GET` (any path): answers a chunked `text/event-stream` head and a
//! `snapshot` frame, and keeps the socket. `POST /publish`: the body is one
//! SSE frame; it is framed once as an HTTP/1.1 chunk and that one buffer is
//! written to every kept socket, then `204`. No routing, no auth, no
//! replay, nothing per watcher but its socket.

use std::sync::{Arc, Mutex};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpListener, TcpStream};

/// The response head every watcher gets, and the frame the Node relay sends
/// first too.
const HEAD: &[u8] = b"HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\ncache-control: no-cache\r\ntransfer-encoding: chunked\r\n\r\n";
const SNAPSHOT: &[u8] = b"id: 0\nevent: snapshot\ndata: {\"type\":\"snapshot\",\"data\":{}}\n\n";

type Watchers = Arc<Mutex<Vec<Arc<TcpStream>>>>;

/// Serves until killed; prints `{"port": N}` once it listens.
pub fn run() {
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .unwrap();
    runtime.block_on(async {
        let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
        println!("{{\"port\": {}}}", listener.local_addr().unwrap().port());
        let watchers: Watchers = Arc::default();
        loop {
            let Ok((socket, _)) = listener.accept().await else {
                continue;
            };
            let _ = socket.set_nodelay(true);
            tokio::spawn(connection(socket, watchers.clone()));
        }
    });
}

/// One connection: its request head, then a kept stream or a publish.
async fn connection(mut socket: TcpStream, watchers: Watchers) {
    let mut buf = Vec::with_capacity(1024);
    let head_end = loop {
        if socket.read_buf(&mut buf).await.unwrap_or(0) == 0 {
            return;
        }
        if let Some(at) = buf.windows(4).position(|w| w == b"\r\n\r\n") {
            break at + 4;
        }
    };
    if buf.starts_with(b"GET ") {
        let first = chunk(SNAPSHOT);
        if socket.write_all(HEAD).await.is_ok() && socket.write_all(&first).await.is_ok() {
            watchers.lock().unwrap().push(Arc::new(socket));
        }
        return;
    }
    let text = String::from_utf8_lossy(&buf[..head_end]).to_ascii_lowercase();
    let length: usize = text
        .lines()
        .find_map(|l| l.strip_prefix("content-length:"))
        .and_then(|v| v.trim().parse().ok())
        .unwrap_or(0);
    while buf.len() < head_end + length {
        if socket.read_buf(&mut buf).await.unwrap_or(0) == 0 {
            return;
        }
    }
    let frame: Arc<[u8]> = chunk(&buf[head_end..head_end + length]).into();
    let all = watchers.lock().unwrap().clone();
    for watcher in all {
        // Most writes fit the socket's buffer at once; the rest finish on
        // a task of their own.
        match watcher.try_write(&frame) {
            Ok(n) if n == frame.len() => {}
            Ok(n) => {
                let frame = frame.clone();
                tokio::spawn(async move { finish(&watcher, &frame[n..]).await });
            }
            Err(_) => {
                let frame = frame.clone();
                tokio::spawn(async move { finish(&watcher, &frame).await });
            }
        }
    }
    let _ = socket
        .write_all(b"HTTP/1.1 204 No Content\r\nconnection: close\r\n\r\n")
        .await;
}

/// Writes what is left of a frame once the socket can take it.
async fn finish(socket: &TcpStream, mut rest: &[u8]) {
    while !rest.is_empty() {
        if socket.writable().await.is_err() {
            return;
        }
        match socket.try_write(rest) {
            Ok(n) => rest = &rest[n..],
            Err(e) if e.kind() == std::io::ErrorKind::WouldBlock => {}
            Err(_) => return,
        }
    }
}

/// `data` as one HTTP/1.1 chunk.
fn chunk(data: &[u8]) -> Vec<u8> {
    let mut out = format!("{:x}\r\n", data.len()).into_bytes();
    out.extend_from_slice(data);
    out.extend_from_slice(b"\r\n");
    out
}
