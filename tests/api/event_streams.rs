//! Event streams asked for on a new connection, as `EventSource` and agent
//! backends open them, are answered on the bare socket (`server::http::serve`):
//! a complete HTTP/1.1 response with chunked events, the same middleware
//! and refusals as any route, a freed slot the moment the watcher hangs
//! up, and a terminated body when the stream ends. Everything else on such
//! a connection, and every other connection, is still hyper's.

use crate::freed::end;
use crate::helpers::{spawn_app, TestApp, TEACHER};
use crate::sessions::{call, idv, open, Session};
use std::time::Duration;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;

/// Sends `head` on a new connection.
async fn send(app: &TestApp, head: &str) -> Conn {
    let mut tcp = TcpStream::connect(app.address.trim_start_matches("http://"))
        .await
        .unwrap();
    tcp.write_all(head.as_bytes()).await.unwrap();
    Conn {
        tcp,
        raw: Vec::new(),
        closed: false,
    }
}

/// `GET path` asking for an event stream, as `EventSource` does.
fn stream_request(path: &str) -> String {
    format!("GET {path} HTTP/1.1\r\nHost: x\r\nAccept: text/event-stream\r\nCache-Control: no-cache\r\n\r\n")
}

fn events_path(s: &Session) -> String {
    format!("/api/sessions/{}/events?token={}", s.id, s.token)
}

/// A response read off the wire: its head, and its body as decoded so far.
struct Wire {
    head: String,
    body: Vec<u8>,
    /// The zero-size chunk (or the `Content-Length`) ended the body.
    complete: bool,
    raw: Vec<u8>,
}

impl Wire {
    fn header(&self, name: &str) -> Option<&str> {
        self.head.lines().find_map(|line| {
            let (k, v) = line.split_once(':')?;
            k.eq_ignore_ascii_case(name).then(|| v.trim())
        })
    }

    fn text(&self) -> String {
        String::from_utf8_lossy(&self.body).into_owned()
    }

    /// Decodes what has arrived: the head, then the body by its framing.
    fn decode(raw: Vec<u8>) -> Option<Wire> {
        let end = raw.windows(4).position(|w| w == b"\r\n\r\n")?;
        let head = String::from_utf8(raw[..end].to_vec()).unwrap();
        let mut wire = Wire {
            head,
            body: Vec::new(),
            complete: false,
            raw: raw.clone(),
        };
        let mut rest = &raw[end + 4..];
        if let Some(len) = wire.header("content-length") {
            let len: usize = len.parse().unwrap();
            wire.body = rest[..len.min(rest.len())].to_vec();
            wire.complete = rest.len() >= len;
            return Some(wire);
        }
        assert_eq!(
            wire.header("transfer-encoding"),
            Some("chunked"),
            "{}",
            wire.head
        );
        while let Some(line_end) = rest.windows(2).position(|w| w == b"\r\n") {
            let size = usize::from_str_radix(std::str::from_utf8(&rest[..line_end]).unwrap(), 16)
                .expect("a hex chunk size");
            let data = &rest[line_end + 2..];
            if data.len() < size + 2 {
                break;
            }
            if size == 0 {
                wire.complete = true;
                break;
            }
            assert_eq!(
                &data[size..size + 2],
                b"\r\n",
                "chunk {size} ends with CRLF"
            );
            wire.body.extend_from_slice(&data[..size]);
            rest = &data[size + 2..];
        }
        Some(wire)
    }
}

/// A connection and everything read from it so far.
struct Conn {
    tcp: TcpStream,
    raw: Vec<u8>,
    closed: bool,
}

impl Conn {
    /// Reads until the body holds `until` (or the server closes, or 3 s
    /// pass); returns the whole response so far.
    async fn read_until(&mut self, until: &str) -> Wire {
        let mut buf = [0u8; 4096];
        let deadline = tokio::time::Instant::now() + Duration::from_secs(3);
        while !self.closed {
            if let Some(wire) = Wire::decode(self.raw.clone()) {
                if !until.is_empty() && wire.text().contains(until) {
                    return wire;
                }
            }
            match tokio::time::timeout_at(deadline, self.tcp.read(&mut buf)).await {
                Ok(Ok(0)) | Ok(Err(_)) => self.closed = true,
                Ok(Ok(n)) => self.raw.extend_from_slice(&buf[..n]),
                Err(_) => break,
            }
        }
        Wire::decode(self.raw.clone()).expect("a response head")
    }
}

#[tokio::test]
async fn a_new_connection_asking_for_a_stream_gets_chunked_events_then_live_ones() {
    let app = spawn_app().await;
    let key = app.api_key().await;
    let s = open(&app, &key, "idv").await;
    let mut tcp = send(&app, &stream_request(&events_path(&s))).await;
    let first = tcp.read_until("\"snapshot\"").await;
    assert!(
        first.head.starts_with("HTTP/1.1 200 OK\r\n"),
        "{}",
        first.head
    );
    assert_eq!(first.header("content-type"), Some("text/event-stream"));
    assert_eq!(first.header("cache-control"), Some("no-cache"));
    assert_eq!(first.header("connection"), Some("close"));
    // The same middleware as every route.
    assert_eq!(first.header("x-content-type-options"), Some("nosniff"));
    assert!(first.header("date").is_some());
    assert_eq!(first.header("content-encoding"), None);

    let (status, _) = call(&app, &s, "perform_idv_check", idv()).await;
    assert_eq!(status, 200);
    let live = tcp.read_until("\"workflow_update\"").await;
    assert!(!tcp.closed && !live.complete, "the stream stays open");
    let text = live.text();
    let names: Vec<&str> = text
        .lines()
        .filter_map(|l| l.strip_prefix("event: "))
        .collect();
    assert_eq!(names, ["snapshot", "tool_call", "workflow_update"]);
}

#[tokio::test]
async fn a_watcher_that_hangs_up_frees_its_slot_at_once() {
    let app = spawn_app().await;
    let key = app.api_key().await;
    let s = open(&app, &key, "idv").await;
    let slot = format!("session:{}", s.id);
    let mut tcp = send(&app, &stream_request(&events_path(&s))).await;
    tcp.read_until("\"snapshot\"").await;
    assert_eq!(app.state.streams.open(&slot), 1);
    drop(tcp);
    let deadline = tokio::time::Instant::now() + Duration::from_secs(2);
    while app.state.streams.open(&slot) > 0 {
        assert!(
            tokio::time::Instant::now() < deadline,
            "slot still held 2 s after the watcher left"
        );
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}

#[tokio::test]
async fn refusals_and_other_routes_are_complete_responses_then_the_connection_closes() {
    let app = spawn_app().await;
    let key = app.api_key().await;
    let s = open(&app, &key, "idv").await;

    let wrong = format!("/api/sessions/{}/events?token=not-the-token", s.id);
    let mut tcp = send(&app, &stream_request(&wrong)).await;
    let refused = tcp.read_until("").await;
    assert!(
        refused.head.starts_with("HTTP/1.1 401 "),
        "{}",
        refused.head
    );
    assert!(
        refused.complete && tcp.closed,
        "{:?}",
        String::from_utf8_lossy(&refused.raw)
    );
    assert_eq!(refused.header("content-type"), Some("application/json"));
    assert_eq!(refused.text(), r#""Unauthenticated""#);

    let mut tcp = send(&app, &stream_request("/healthz")).await;
    let health = tcp.read_until("").await;
    assert!(
        health.head.starts_with("HTTP/1.1 200 OK"),
        "{}",
        health.head
    );
    assert!(health.complete && tcp.closed);
    let health: serde_json::Value = serde_json::from_str(&health.text()).unwrap();
    assert_eq!(health["status"], "ok");

    let mut tcp = send(&app, &stream_request("/no/such/route")).await;
    let missing = tcp.read_until("").await;
    assert!(
        missing.head.starts_with("HTTP/1.1 404 "),
        "{}",
        missing.head
    );
    assert!(missing.complete && tcp.closed);
}

#[tokio::test]
async fn the_stream_of_a_session_that_ends_is_terminated() {
    let app = spawn_app().await;
    let key = app.api_key().await;
    let s = open(&app, &key, "idv").await;
    let mut tcp = send(&app, &stream_request(&events_path(&s))).await;
    tcp.read_until("\"snapshot\"").await;
    end(&app, &s).await;
    let wire = tcp.read_until("no such text").await;
    assert!(wire.text().contains("event: ended"), "{}", wire.text());
    assert!(wire.complete, "ended by the zero-size chunk");
    assert!(tcp.closed);
}

#[tokio::test]
async fn shutting_down_ends_streams_served_on_the_socket() {
    let app = spawn_app().await;
    let key = app.api_key().await;
    let s = open(&app, &key, "idv").await;
    let mut tcp = send(&app, &stream_request(&events_path(&s))).await;
    tcp.read_until("\"snapshot\"").await;
    app.shut_down().await;
    let wire = tcp.read_until("no such text").await;
    assert!(wire.complete && tcp.closed);
}

#[tokio::test]
async fn other_first_requests_still_get_hyper_keep_alive_and_pipelining() {
    let app = spawn_app().await;
    // Two requests in one write: hyper gets the bytes already read, both
    // are answered on the one connection.
    let mut tcp = send(
        &app,
        "GET /healthz HTTP/1.1\r\nHost: x\r\n\r\nGET /healthz HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n",
    )
    .await;
    let mut all = String::new();
    tokio::time::timeout(Duration::from_secs(3), tcp.tcp.read_to_string(&mut all))
        .await
        .expect("closed after the second answer")
        .unwrap();
    assert_eq!(all.matches("HTTP/1.1 200 OK").count(), 2, "{all}");
    assert!(!all.contains("connection: close\r\ntransfer-encoding"));

    // A stream asked for with a body, or by HTTP/1.0, is hyper's to answer.
    let mut tcp = send(
        &app,
        "GET /healthz HTTP/1.0\r\nAccept: text/event-stream\r\n\r\n",
    )
    .await;
    let mut old = String::new();
    tcp.tcp.read_to_string(&mut old).await.unwrap();
    assert!(old.starts_with("HTTP/1.0 200 OK"), "{old}");
}

/// The `id:` of every event in `text`, in order.
fn event_ids(text: &str) -> Vec<u64> {
    text.lines()
        .filter_map(|l| l.strip_prefix("id: "))
        .map(|id| id.parse().unwrap())
        .collect()
}

#[tokio::test]
async fn events_published_back_to_back_arrive_once_each_in_order() {
    let app = spawn_app().await;
    let key = app.api_key().await;
    let s = open(&app, &key, "idv").await;
    let mut tcp = send(&app, &stream_request(&events_path(&s))).await;
    let first = tcp.read_until("\"snapshot\"").await;
    let snapshot_id = event_ids(&first.text())[0];
    let calls = (0..20).map(|_| call(&app, &s, "get_server_time", serde_json::json!({})));
    for (status, _) in futures_util::future::join_all(calls).await {
        assert_eq!(status, 200);
    }
    let (status, _) = call(&app, &s, "perform_idv_check", idv()).await;
    assert_eq!(status, 200);
    let wire = tcp.read_until("\"workflow_update\"").await;
    let ids = event_ids(&wire.text());
    let expected: Vec<u64> = (snapshot_id..snapshot_id + ids.len() as u64).collect();
    assert_eq!(ids, expected, "consecutive, none twice");
    assert!(ids.len() >= 22, "{ids:?}");
}

#[tokio::test]
async fn a_watcher_reconnecting_with_last_event_id_gets_exactly_what_it_missed() {
    let app = spawn_app().await;
    let key = app.api_key().await;
    let s = open(&app, &key, "idv").await;
    let mut tcp = send(&app, &stream_request(&events_path(&s))).await;
    let first = tcp.read_until("\"snapshot\"").await;
    let seen = event_ids(&first.text())[0];
    drop(tcp);
    let (status, _) = call(&app, &s, "perform_idv_check", idv()).await;
    assert_eq!(status, 200);
    let head = format!(
        "GET {} HTTP/1.1\r\nHost: x\r\nAccept: text/event-stream\r\nLast-Event-ID: {seen}\r\n\r\n",
        events_path(&s)
    );
    let mut tcp = send(&app, &head).await;
    let replay = tcp.read_until("\"workflow_update\"").await;
    let text = replay.text();
    assert!(!text.contains("\"snapshot\""), "{text}");
    assert_eq!(event_ids(&text), [seen + 1, seen + 2]);
    // And live events follow on the same stream.
    let (status, _) = call(&app, &s, "get_server_time", serde_json::json!({})).await;
    assert_eq!(status, 200);
    let live = tcp.read_until("get_server_time").await;
    assert_eq!(event_ids(&live.text()), [seen + 1, seen + 2, seen + 3]);
}

#[tokio::test]
async fn the_session_list_stream_is_served_on_the_socket_too_and_stays_live() {
    let app = spawn_app().await;
    let res = app
        .rpc("login", &[("email", TEACHER.0), ("password", TEACHER.1)])
        .await;
    assert_eq!(res.status(), 200);
    let cookie = res.headers()["set-cookie"].to_str().unwrap();
    let cookie = cookie.split(';').next().unwrap();
    let head = format!(
        "GET /api/sessions/events HTTP/1.1\r\nHost: x\r\nAccept: text/event-stream\r\nCookie: {cookie}\r\n\r\n"
    );
    let mut tcp = send(&app, &head).await;
    // Nothing is sent before the first event, so open a session to get one.
    let key = app.api_key().await;
    let s = open(&app, &key, "idv").await;
    let first = tcp.read_until(&s.id).await;
    assert!(
        first.head.starts_with("HTTP/1.1 200 OK\r\n"),
        "{}",
        first.head
    );
    assert_eq!(first.header("transfer-encoding"), Some("chunked"));
    assert_eq!(first.header("connection"), Some("close"));
    assert!(!tcp.closed && !first.complete, "the stream stays open");

    let other = open(&app, &key, "idv").await;
    let live = tcp.read_until(&other.id).await;
    assert!(!tcp.closed && !live.complete, "still open after two events");

    // Without a sign-in the same request is refused, complete, and closed.
    let anonymous = head.replace(&format!("Cookie: {cookie}\r\n"), "");
    let mut tcp = send(&app, &anonymous).await;
    let refused = tcp.read_until("").await;
    assert!(
        refused.head.starts_with("HTTP/1.1 401 "),
        "{}",
        refused.head
    );
    assert!(refused.complete && tcp.closed);
}

/// Writes to `conn` in 256-byte pieces until the server closes the
/// connection or `within` passes; the bytes written, if it closed.
async fn written_until_closed(conn: &mut Conn, within: Duration) -> Option<usize> {
    let deadline = tokio::time::Instant::now() + within;
    let mut written = 0;
    let mut buf = [0u8; 4096];
    while tokio::time::Instant::now() < deadline {
        if conn.tcp.write_all(&[b'x'; 256]).await.is_err() {
            return Some(written);
        }
        written += 256;
        match tokio::time::timeout(Duration::from_millis(20), conn.tcp.read(&mut buf)).await {
            Ok(Ok(0)) | Ok(Err(_)) => return Some(written),
            Ok(Ok(_)) | Err(_) => {}
        }
    }
    None
}

#[tokio::test]
async fn a_stream_client_that_keeps_sending_is_dropped() {
    use switchboard::domain::limits::STREAM_CLIENT_BYTES_MAX;
    let app = spawn_app().await;
    let key = app.api_key().await;
    let s = open(&app, &key, "idv").await;
    // A session's stream (written from its feed) and a plugin's (a body).
    for path in [
        events_path(&s),
        format!("/api/sessions/{}/plugin-events?token={}", s.id, s.token),
    ] {
        let mut tcp = send(&app, &stream_request(&path)).await;
        let opened = tcp.read_until("").await;
        assert!(
            opened.head.starts_with("HTTP/1.1 200 OK\r\n"),
            "{}",
            opened.head
        );
        let written = written_until_closed(&mut tcp, Duration::from_secs(5))
            .await
            .unwrap_or_else(|| panic!("{path}: still open after 5 s of writing"));
        assert!(
            written >= STREAM_CLIENT_BYTES_MAX,
            "{path}: closed after {written} bytes, before the limit"
        );
    }
    // Its slots are free again: the session has no watcher left.
    let deadline = tokio::time::Instant::now() + Duration::from_secs(2);
    while app.state.streams.open(&format!("session:{}", s.id)) > 0 {
        assert!(tokio::time::Instant::now() < deadline, "slots not freed");
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}
