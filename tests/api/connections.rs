//! Connection-level limits: a client that trickles its request head, or
//! leaves a kept-alive connection idle, is cut off after
//! `HEADER_READ_TIMEOUT_SECONDS`; a quiet event stream is not.

use crate::helpers::{spawn_app_with, TestApp};
use crate::sessions::{call, idv, open, read_events, subscribe};
use std::time::{Duration, Instant};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;

async fn app_with_one_second_timeout() -> TestApp {
    spawn_app_with(&[("HEADER_READ_TIMEOUT_SECONDS", "1")]).await
}

async fn connect(app: &TestApp) -> TcpStream {
    TcpStream::connect(app.address.trim_start_matches("http://"))
        .await
        .unwrap()
}

/// Reads until the server closes the connection; returns what it sent and
/// how long that took. Panics if it is still open after 10 s.
async fn read_until_closed(tcp: &mut TcpStream) -> (String, Duration) {
    let started = Instant::now();
    let mut received = Vec::new();
    let mut buf = [0u8; 4096];
    loop {
        match tokio::time::timeout(Duration::from_secs(10), tcp.read(&mut buf)).await {
            Ok(Ok(0)) | Ok(Err(_)) => break,
            Ok(Ok(n)) => received.extend_from_slice(&buf[..n]),
            Err(_) => panic!("connection still open after 10 s"),
        }
    }
    (
        String::from_utf8_lossy(&received).into_owned(),
        started.elapsed(),
    )
}

#[tokio::test]
async fn a_request_head_trickled_past_the_timeout_is_cut_off() {
    let app = app_with_one_second_timeout().await;
    let (mut reader, mut writer) = connect(&app).await.into_split();
    writer
        .write_all(b"GET /healthz HTTP/1.1\r\nHost: x\r\n")
        .await
        .unwrap();
    // One more header line every 300 ms, never the blank line that ends
    // the head: each line arrives well within the timeout, the head never.
    let trickle = tokio::spawn(async move {
        for i in 0..30 {
            tokio::time::sleep(Duration::from_millis(300)).await;
            let line = format!("X-Slow-{i}: y\r\n");
            if writer.write_all(line.as_bytes()).await.is_err() {
                return i;
            }
        }
        30
    });
    let started = Instant::now();
    let mut received = Vec::new();
    let closed =
        tokio::time::timeout(Duration::from_secs(8), reader.read_to_end(&mut received)).await;
    assert!(closed.is_ok(), "connection still open after 8 s");
    let answer = String::from_utf8_lossy(&received);
    assert!(!answer.contains("200 OK"), "{answer}");
    assert!(
        started.elapsed() < Duration::from_secs(4),
        "cut off after {:?}",
        started.elapsed()
    );
    trickle.abort();
}

#[tokio::test]
async fn an_idle_kept_alive_connection_is_closed_but_a_prompt_one_is_served() {
    let app = app_with_one_second_timeout().await;
    let mut tcp = connect(&app).await;
    tcp.write_all(b"GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n")
        .await
        .unwrap();
    let (answer, idle) = read_until_closed(&mut tcp).await;
    assert!(answer.starts_with("HTTP/1.1 200 OK"), "{answer}");
    assert!(
        idle < Duration::from_secs(5),
        "closed after {idle:?} of idling"
    );
}

#[tokio::test]
async fn a_quiet_event_stream_outlives_the_timeout() {
    let app = app_with_one_second_timeout().await;
    let key = app.api_key().await;
    let s = open(&app, &key, "idv").await;
    let stream = subscribe(&app, &s, None).await;
    tokio::time::sleep(Duration::from_millis(2_500)).await;
    let (status, _) = call(&app, &s, "perform_idv_check", idv()).await;
    assert_eq!(status, 200);
    let events = read_events(stream, 3).await;
    let kinds: Vec<&str> = events
        .iter()
        .map(|(_, e)| e["type"].as_str().unwrap())
        .collect();
    assert_eq!(kinds, ["snapshot", "tool_call", "workflow_update"]);
}
