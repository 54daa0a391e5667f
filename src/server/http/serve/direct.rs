//! Writes the answer to an event-stream request straight to its socket.
//!
//! hyper keeps an 8 KiB read buffer and an 8 KiB header buffer for every
//! connection for as long as it is open, and a connection task sized for
//! any request; with 10,000 watchers of a session that was most of the
//! server's memory. A stream answered here holds its socket, its response
//! body (the hub's receiver and a keep-alive timer) and a few bytes of
//! state: each frame is written as it comes, from the hub's shared bytes,
//! with no copy.
//!
//! The response is HTTP/1.1 with `Connection: close`: chunked when its
//! length is not known (event streams), with `Content-Length` otherwise
//! (an error, or whatever a route answers to a client that asked for a
//! stream where there is none). The connection ends with the response, as
//! soon as the client closes its side, or once the client has sent more
//! than [`STREAM_CLIENT_BYTES_MAX`] after its request.

use crate::domain::limits::STREAM_CLIENT_BYTES_MAX;
use crate::server::agent::hub::sink::{Feed, Next};
use crate::server::http::rest::event_streams::KEEP_ALIVE;
use axum::body::{Body, HttpBody};
use axum::http::{header, response::Parts, HeaderValue, Response, StatusCode};
use futures_util::StreamExt;
use std::io::IoSlice;
use std::sync::Arc;
use std::time::Duration;
use tokio::io::AsyncWriteExt;
use tokio::net::TcpStream;

/// Longest one write may wait for a client that does not read: after it,
/// the client is gone as far as the server is concerned, and its stream's
/// slot is freed.
pub const STALLED_WRITE: Duration = Duration::from_secs(30);

/// How the body is delimited on the wire.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Framing {
    /// No body may be sent (1xx, 204, 304).
    Empty,
    /// Exactly this many bytes.
    Length(u64),
    /// `Transfer-Encoding: chunked`, ended by a zero-size chunk.
    Chunked,
}

/// The framing for a response with these parts and this body size hint.
pub fn framing(parts: &Parts, exact_size: Option<u64>) -> Framing {
    let status = parts.status;
    if status.is_informational()
        || status == StatusCode::NO_CONTENT
        || status == StatusCode::NOT_MODIFIED
    {
        return Framing::Empty;
    }
    parts
        .headers
        .get(header::CONTENT_LENGTH)
        .and_then(|v| v.to_str().ok()?.parse().ok())
        .or(exact_size)
        .map_or(Framing::Chunked, Framing::Length)
}

/// The status line and headers of a response sent with `framing`: the
/// route's headers, less hop-by-hop ones, plus `Date`, the framing header
/// and `Connection: close`.
pub fn head(parts: &Parts, framing: Framing) -> Vec<u8> {
    let mut out = Vec::with_capacity(256);
    out.extend_from_slice(b"HTTP/1.1 ");
    out.extend_from_slice(parts.status.as_str().as_bytes());
    out.push(b' ');
    out.extend_from_slice(
        parts
            .status
            .canonical_reason()
            .unwrap_or_default()
            .as_bytes(),
    );
    out.extend_from_slice(b"\r\n");
    let hop_by_hop = [
        header::CONNECTION,
        header::TRANSFER_ENCODING,
        header::CONTENT_LENGTH,
        header::HeaderName::from_static("keep-alive"),
    ];
    for (name, value) in &parts.headers {
        if !hop_by_hop.contains(name) {
            line(&mut out, name.as_str(), value);
        }
    }
    if !parts.headers.contains_key(header::DATE) {
        let now = httpdate::fmt_http_date(std::time::SystemTime::now());
        out.extend_from_slice(format!("date: {now}\r\n").as_bytes());
    }
    match framing {
        Framing::Empty => {}
        Framing::Length(n) => out.extend_from_slice(format!("content-length: {n}\r\n").as_bytes()),
        Framing::Chunked => out.extend_from_slice(b"transfer-encoding: chunked\r\n"),
    }
    out.extend_from_slice(b"connection: close\r\n\r\n");
    out
}

fn line(out: &mut Vec<u8>, name: &str, value: &HeaderValue) {
    out.extend_from_slice(name.as_bytes());
    out.extend_from_slice(b": ");
    out.extend_from_slice(value.as_bytes());
    out.extend_from_slice(b"\r\n");
}

/// Sends `response` on `socket` and closes it; returns early (dropping
/// the body, so a stream frees its slot at once) when the client closes
/// its side, a write fails or stalls for [`STALLED_WRITE`], or the body
/// fails (then the response is left unterminated, so the client sees it
/// was cut short).
pub async fn respond(mut socket: TcpStream, response: Response<Body>) {
    let (parts, body) = response.into_parts();
    let framing = framing(&parts, HttpBody::size_hint(&body).exact());
    let head = head(&parts, framing);
    // Nothing of the head is needed once it is encoded: a stream's task
    // keeps only the socket and the body.
    drop(parts);
    if send(&socket, &mut [IoSlice::new(&head)]).await.is_err() {
        return;
    }
    drop(head);
    let mut left = match framing {
        Framing::Empty => return close(&mut socket).await,
        Framing::Length(n) => n,
        Framing::Chunked => u64::MAX,
    };
    let mut body = body.into_data_stream();
    let mut received = 0;
    while left > 0 {
        // Writes happen outside the `select!`: while the body has nothing
        // to send, the socket is only read, to notice the client leave.
        let next = tokio::select! {
            next = body.next() => next,
            gone = client_left(&socket, &mut received) => if gone { return } else { continue },
        };
        let data = match next {
            None => break,
            Some(Ok(data)) => data,
            Some(Err(e)) => {
                tracing::debug!(error = %e, "response body failed; connection cut");
                return;
            }
        };
        let sent = match framing {
            Framing::Chunked if data.is_empty() => Ok(()),
            Framing::Chunked => send_chunk(&socket, &data).await,
            _ => {
                let take = data.len().min(usize::try_from(left).unwrap_or(usize::MAX));
                left -= take as u64;
                send(&socket, &mut [IoSlice::new(&data[..take])]).await
            }
        };
        if sent.is_err() {
            return;
        }
    }
    if framing == Framing::Chunked
        && send(&socket, &mut [IoSlice::new(LAST_CHUNK)])
            .await
            .is_err()
    {
        return;
    }
    close(&mut socket).await;
}

/// Writes a session's event stream on its own socket: the head, the
/// feed's first events, then whatever the watcher's [`Sink`] has. Once the
/// first events are out the socket is attached to the sink, and from then
/// on the publisher writes each event itself while this task waits; it
/// wakes only to finish what the publisher could not send at once, for a
/// keep-alive, or to notice the client leave.
pub async fn respond_feed(tcp: TcpStream, response: Response<Body>, feed: Feed) {
    let (parts, body) = response.into_parts();
    // The body would read the same feed; it is never polled.
    drop(body);
    let head = head(&parts, Framing::Chunked);
    drop(parts);
    let socket = Arc::new(tcp);
    if send(&socket, &mut [IoSlice::new(&head)]).await.is_err() {
        return;
    }
    drop(head);
    let Feed {
        first,
        sink,
        permit,
    } = feed;
    let mut closed = crate::server::http::streams::closed(permit.as_ref());
    for bytes in first.iter().filter(|b| !b.is_empty()) {
        if send_chunk(&socket, bytes).await.is_err() {
            return;
        }
    }
    drop(first);
    sink.attach(socket.clone());
    let mut tick = tokio::time::interval_at(tokio::time::Instant::now() + KEEP_ALIVE, KEEP_ALIVE);
    let mut received = 0;
    loop {
        let sent = match sink.next() {
            Next::Frame(frame, offset) => {
                send(&socket, &mut [IoSlice::new(&frame.chunk[offset..])]).await
            }
            Next::Lagged => return,
            Next::Closed => {
                let _ = send(&socket, &mut [IoSlice::new(LAST_CHUNK)]).await;
                return;
            }
            Next::Wait => tokio::select! {
                () = sink.notified() => Ok(()),
                // Its key was closed (a disabled account): the stream ends
                // cleanly if nothing is half-written, else it is cut.
                () = &mut closed => {
                    if sink.claim() {
                        let _ = send(&socket, &mut [IoSlice::new(LAST_CHUNK)]).await;
                    }
                    return;
                },
                _ = tick.tick() => if sink.claim() {
                    send(&socket, &mut [IoSlice::new(KEEP_ALIVE_CHUNK)]).await
                } else {
                    Ok(())
                },
                gone = client_left(&socket, &mut received) => if gone { return } else { Ok(()) },
            },
        };
        if sent.is_err() {
            return;
        }
    }
}

/// The keep-alive comment (`rest::event_streams::KEEP_ALIVE_COMMENT`) as a chunk.
const KEEP_ALIVE_CHUNK: &[u8] = b"3\r\n:\n\n\r\n";

/// The zero-size chunk that ends a chunked body.
const LAST_CHUNK: &[u8] = b"0\r\n\r\n";

/// Waits until the client sends something or closes its side; `true` if
/// it closed it, the connection failed, or the client has now sent more
/// than [`STREAM_CLIENT_BYTES_MAX`] after its request (`received` counts
/// them): an `EventSource` sends nothing, and a client that keeps writing
/// would otherwise keep this task reading. What it sends is discarded.
async fn client_left(socket: &TcpStream, received: &mut usize) -> bool {
    let mut scratch = [0u8; 256];
    match socket
        .readable()
        .await
        .and_then(|()| socket.try_read(&mut scratch))
    {
        Ok(0) => true,
        Ok(n) => {
            *received += n;
            let over = *received > STREAM_CLIENT_BYTES_MAX;
            if over {
                tracing::info!(
                    bytes = *received,
                    "event-stream client kept sending; connection closed"
                );
            }
            over
        }
        Err(e) => e.kind() != std::io::ErrorKind::WouldBlock,
    }
}

/// Sends every byte of `slices` in order, in as few `writev`s as the
/// socket allows, on a socket that may be shared with the publisher (which
/// writes only while this task waits); fails on a write error, or no
/// progress for [`STALLED_WRITE`].
async fn send(socket: &TcpStream, mut slices: &mut [IoSlice<'_>]) -> std::io::Result<()> {
    while !slices.is_empty() {
        tokio::time::timeout(STALLED_WRITE, socket.writable())
            .await
            .map_err(|_| std::io::Error::from(std::io::ErrorKind::TimedOut))??;
        match socket.try_write_vectored(slices) {
            Ok(0) => return Err(std::io::ErrorKind::WriteZero.into()),
            Ok(n) => IoSlice::advance_slices(&mut slices, n),
            Err(e) if e.kind() == std::io::ErrorKind::WouldBlock => {}
            Err(e) => return Err(e),
        }
    }
    Ok(())
}

/// Sends one chunk: its size in hex, the data, CRLF; one `writev` when
/// the socket takes it all, which it does for an event.
async fn send_chunk(socket: &TcpStream, data: &[u8]) -> std::io::Result<()> {
    let mut size = [0u8; CHUNK_SIZE_LINE];
    let size = chunk_size_line(data.len(), &mut size);
    send(
        socket,
        &mut [
            IoSlice::new(size),
            IoSlice::new(data),
            IoSlice::new(b"\r\n"),
        ],
    )
    .await
}

/// Room for a `usize` in hex and CRLF.
const CHUNK_SIZE_LINE: usize = 2 * std::mem::size_of::<usize>() + 2;

/// `len` in lowercase hex followed by CRLF, written at the end of `buf`.
fn chunk_size_line(mut len: usize, buf: &mut [u8; CHUNK_SIZE_LINE]) -> &[u8] {
    let mut start = CHUNK_SIZE_LINE - 2;
    buf[start..].copy_from_slice(b"\r\n");
    loop {
        start -= 1;
        buf[start] = b"0123456789abcdef"[len & 0xf];
        len >>= 4;
        if len == 0 {
            return &buf[start..];
        }
    }
}

/// Flushes and closes the write side, so the client sees the end.
async fn close(socket: &mut TcpStream) {
    let _ = tokio::time::timeout(STALLED_WRITE, socket.shutdown()).await;
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::server::http::rest::event_streams::KEEP_ALIVE_COMMENT;
    use tokio::io::AsyncReadExt;

    fn parts(status: u16, headers: &[(&str, &str)]) -> Parts {
        let mut builder = Response::builder().status(status);
        for (k, v) in headers {
            builder = builder.header(*k, *v);
        }
        builder.body(()).unwrap().into_parts().0
    }

    #[test]
    fn the_keep_alive_chunk_is_the_comment_framed() {
        let mut size = [0u8; CHUNK_SIZE_LINE];
        let framed = [
            chunk_size_line(KEEP_ALIVE_COMMENT.len(), &mut size),
            KEEP_ALIVE_COMMENT,
            b"\r\n",
        ]
        .concat();
        assert_eq!(framed, KEEP_ALIVE_CHUNK);
    }

    #[test]
    fn chunk_sizes_are_lowercase_hex() {
        let mut buf = [0u8; CHUNK_SIZE_LINE];
        assert_eq!(chunk_size_line(0, &mut buf), b"0\r\n");
        assert_eq!(chunk_size_line(255, &mut buf), b"ff\r\n");
        assert_eq!(chunk_size_line(0x1a2b, &mut buf), b"1a2b\r\n");
        let max = format!("{:x}\r\n", usize::MAX);
        assert_eq!(chunk_size_line(usize::MAX, &mut buf), max.as_bytes());
    }

    #[test]
    fn framing_follows_status_length_and_hint() {
        assert_eq!(framing(&parts(204, &[]), Some(0)), Framing::Empty);
        assert_eq!(framing(&parts(304, &[]), None), Framing::Empty);
        assert_eq!(
            framing(&parts(200, &[("content-length", "12")]), None),
            Framing::Length(12)
        );
        assert_eq!(framing(&parts(401, &[]), Some(40)), Framing::Length(40));
        assert_eq!(framing(&parts(200, &[]), None), Framing::Chunked);
    }

    #[test]
    fn the_head_drops_hop_by_hop_headers_and_says_close() {
        let p = parts(
            200,
            &[
                ("content-type", "text/event-stream"),
                ("connection", "keep-alive"),
                ("transfer-encoding", "gzip"),
                ("date", "Wed, 25 Nov 2026 10:00:00 GMT"),
            ],
        );
        let head = String::from_utf8(head(&p, Framing::Chunked)).unwrap();
        assert_eq!(
            head,
            "HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\n\
             date: Wed, 25 Nov 2026 10:00:00 GMT\r\ntransfer-encoding: chunked\r\n\
             connection: close\r\n\r\n"
        );
    }

    /// Both ends of a loopback connection: the server's, the client's.
    async fn pair() -> (TcpStream, TcpStream) {
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let client = TcpStream::connect(listener.local_addr().unwrap());
        let (client, accepted) = tokio::join!(client, listener.accept());
        (accepted.unwrap().0, client.unwrap())
    }

    async fn sent(response: Response<Body>) -> String {
        let (server, mut client) = pair().await;
        let serving = tokio::spawn(respond(server, response));
        let mut out = String::new();
        client.read_to_string(&mut out).await.unwrap();
        serving.await.unwrap();
        out
    }

    #[tokio::test]
    async fn a_stream_is_sent_in_chunks_and_terminated() {
        let frames = futures_util::stream::iter(
            ["id: 1\n\n", "", "data: x\n\n"].map(Ok::<_, std::convert::Infallible>),
        );
        let response = Response::builder()
            .header("content-type", "text/event-stream")
            .body(Body::from_stream(frames))
            .unwrap();
        let out = sent(response).await;
        let body = out.split_once("\r\n\r\n").unwrap().1;
        assert_eq!(body, "7\r\nid: 1\n\n\r\n9\r\ndata: x\n\n\r\n0\r\n\r\n");
        assert!(out.contains("transfer-encoding: chunked\r\n"), "{out}");
    }

    #[tokio::test]
    async fn a_known_length_is_sent_as_is_and_never_exceeded() {
        let out = sent(
            Response::builder()
                .status(401)
                .body(Body::from("{\"error\":\"who\"}"))
                .unwrap(),
        )
        .await;
        assert!(out.starts_with("HTTP/1.1 401 Unauthorized\r\n"), "{out}");
        assert!(out.ends_with("content-length: 15\r\nconnection: close\r\n\r\n{\"error\":\"who\"}"));
        let lying = Response::builder()
            .header("content-length", "3")
            .body(Body::from("abcdef"))
            .unwrap();
        assert!(sent(lying).await.ends_with("\r\n\r\nabc"));
    }

    #[tokio::test]
    async fn a_client_that_leaves_ends_the_stream_and_drops_its_body() {
        let (server, client) = pair().await;
        let (tx, rx) =
            tokio::sync::mpsc::channel::<Result<axum::body::Bytes, std::convert::Infallible>>(1);
        let body = Body::from_stream(tokio_stream_of(rx));
        let serving = tokio::spawn(respond(server, Response::new(body)));
        drop(client);
        tokio::time::timeout(Duration::from_secs(5), serving)
            .await
            .expect("ended")
            .unwrap();
        assert!(tx.is_closed(), "the body was dropped");
    }

    fn tokio_stream_of<T: Send + 'static>(
        rx: tokio::sync::mpsc::Receiver<T>,
    ) -> impl futures_util::Stream<Item = T> + Send + 'static {
        futures_util::stream::unfold(rx, |mut rx| async move { rx.recv().await.map(|v| (v, rx)) })
    }
}
