//! The first request head on a new connection, read before hyper sees the
//! connection, to tell an event-stream request (which the server answers on
//! the bare socket, see [`super::direct`]) from everything else (which goes
//! to hyper, these bytes first).
//!
//! Only a request that is plainly an event stream is taken: a complete
//! HTTP/1.1 `GET` head that asks for `text/event-stream`, has no body, no
//! upgrade and nothing after it. Anything unusual, malformed or too large
//! goes to hyper, which answers it as it always has (400, 431, …).

use axum::http::{HeaderName, HeaderValue, Method, Request, Uri, Version};
use std::time::Duration;
use tokio::io::AsyncReadExt;
use tokio::net::TcpStream;

/// Bytes read while looking for the first request head. An event-stream
/// request (a path, a cookie or token, a few headers) fits many times over;
/// a larger head goes to hyper, whose own limit is higher.
pub const HEAD_BUFFER: usize = 8192;

/// Most header lines an event-stream request may have; more go to hyper.
const MAX_HEADERS: usize = 64;

/// Request headers that mean a body, an upgrade or an interim response: a
/// request with any of them is hyper's.
const NOT_A_PLAIN_GET: [&str; 4] = ["content-length", "transfer-encoding", "upgrade", "expect"];

/// What the first bytes of a connection are.
#[derive(Debug)]
pub enum FirstRequest {
    /// A plain `GET` asking for an event stream, answered on the socket.
    EventStream(Box<Request<()>>),
    /// Anything else: served by hyper, these bytes first.
    Hyper,
}

/// Classifies `buf`, the bytes received so far on a new connection;
/// `None` while they are not a complete head yet and there is room for
/// more.
pub fn classify(buf: &[u8]) -> Option<FirstRequest> {
    let mut headers = [httparse::EMPTY_HEADER; MAX_HEADERS];
    let mut parsed = httparse::Request::new(&mut headers);
    Some(match parsed.parse(buf) {
        Ok(httparse::Status::Complete(len)) if len == buf.len() => event_stream(&parsed)
            .map_or(FirstRequest::Hyper, |r| {
                FirstRequest::EventStream(Box::new(r))
            }),
        Ok(httparse::Status::Partial) if buf.len() < HEAD_BUFFER => return None,
        _ => FirstRequest::Hyper,
    })
}

/// `parsed` as a request, if it is a plain event-stream `GET`.
fn event_stream(parsed: &httparse::Request<'_, '_>) -> Option<Request<()>> {
    if parsed.method? != "GET" || parsed.version? != 1 {
        return None;
    }
    let path = parsed.path?;
    if !path.starts_with('/') {
        return None;
    }
    let mut asks_for_stream = false;
    let mut request = Request::new(());
    for header in parsed.headers.iter() {
        if NOT_A_PLAIN_GET
            .iter()
            .any(|name| header.name.eq_ignore_ascii_case(name))
        {
            return None;
        }
        let name = HeaderName::from_bytes(header.name.as_bytes()).ok()?;
        let value = HeaderValue::from_bytes(header.value).ok()?;
        if name == axum::http::header::ACCEPT {
            asks_for_stream |= accepts_event_stream(&value);
        }
        request.headers_mut().append(name, value);
    }
    if !asks_for_stream {
        return None;
    }
    *request.method_mut() = Method::GET;
    *request.uri_mut() = path.parse::<Uri>().ok()?;
    *request.version_mut() = Version::HTTP_11;
    Some(request)
}

/// Whether an `Accept` value names `text/event-stream` (as `EventSource`
/// and MCP clients send it).
fn accepts_event_stream(value: &HeaderValue) -> bool {
    value.to_str().is_ok_and(|v| {
        v.split(',').any(|item| {
            item.split(';')
                .next()
                .is_some_and(|media| media.trim().eq_ignore_ascii_case("text/event-stream"))
        })
    })
}

/// Reads the connection's first request head, for at most `timeout`.
/// Returns the bytes read and what they are; `None` if the client closed
/// the connection, failed, or did not finish a head in time (the
/// connection is then dropped, as hyper drops a head that is too slow).
pub async fn read(tcp: &mut TcpStream, timeout: Duration) -> Option<(Vec<u8>, FirstRequest)> {
    let mut buf = vec![0u8; HEAD_BUFFER];
    let mut filled = 0;
    let read = async {
        loop {
            let n = tcp.read(&mut buf[filled..]).await.ok()?;
            if n == 0 {
                return None;
            }
            filled += n;
            if let Some(decided) = classify(&buf[..filled]) {
                return Some(decided);
            }
        }
    };
    let decided = tokio::time::timeout(timeout, read).await.ok()??;
    buf.truncate(filled);
    Some((buf, decided))
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    const STREAM: &str = "GET /api/sessions/s1/events?token=t HTTP/1.1\r\nHost: x\r\nAccept: text/event-stream\r\nLast-Event-ID: 7\r\n\r\n";

    #[test]
    fn a_plain_event_stream_get_is_taken_with_its_headers() {
        let Some(FirstRequest::EventStream(request)) = classify(STREAM.as_bytes()) else {
            panic!("not taken");
        };
        assert_eq!(request.method(), Method::GET);
        assert_eq!(request.uri().path(), "/api/sessions/s1/events");
        assert_eq!(request.uri().query(), Some("token=t"));
        assert_eq!(request.headers()["last-event-id"], "7");
        assert_eq!(request.headers()["host"], "x");
    }

    #[test]
    fn accept_lists_with_parameters_and_any_case_count() {
        let head = "GET /mcp HTTP/1.1\r\nACCEPT: application/json, Text/Event-Stream;q=0.9\r\n\r\n";
        assert!(matches!(
            classify(head.as_bytes()),
            Some(FirstRequest::EventStream(_))
        ));
    }

    #[test]
    fn everything_else_is_hypers() {
        for head in [
            // Not asking for a stream.
            "GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n",
            "GET / HTTP/1.1\r\nAccept: text/event-streamer\r\n\r\n",
            // Not a plain GET.
            "POST /mcp HTTP/1.1\r\nAccept: text/event-stream\r\nContent-Length: 2\r\n\r\n{}",
            "HEAD /x HTTP/1.1\r\nAccept: text/event-stream\r\n\r\n",
            "GET /x HTTP/1.0\r\nAccept: text/event-stream\r\n\r\n",
            "GET /x HTTP/1.1\r\nAccept: text/event-stream\r\nTransfer-Encoding: chunked\r\n\r\n",
            "GET /x HTTP/1.1\r\nAccept: text/event-stream\r\nContent-Length: 0\r\n\r\n",
            "GET /x HTTP/1.1\r\nAccept: text/event-stream\r\nUpgrade: websocket\r\n\r\n",
            "GET /x HTTP/1.1\r\nAccept: text/event-stream\r\nExpect: 100-continue\r\n\r\n",
            "GET http://x/y HTTP/1.1\r\nAccept: text/event-stream\r\n\r\n",
            // A second request after the first.
            "GET /x HTTP/1.1\r\nAccept: text/event-stream\r\n\r\nGET / HTTP/1.1\r\n\r\n",
            // Malformed.
            "GET /x HTTP/1.1\r\nAccept text/event-stream\r\n\r\n",
            "\0GET /x HTTP/1.1\r\nAccept: text/event-stream\r\n\r\n",
        ] {
            assert!(
                matches!(classify(head.as_bytes()), Some(FirstRequest::Hyper)),
                "{head:?}"
            );
        }
    }

    #[test]
    fn an_unfinished_head_waits_until_the_buffer_is_full() {
        assert!(classify(&STREAM.as_bytes()[..30]).is_none());
        let mut long = b"GET /x HTTP/1.1\r\nX-Long: ".to_vec();
        long.resize(HEAD_BUFFER, b'a');
        assert!(matches!(classify(&long), Some(FirstRequest::Hyper)));
    }

    #[test]
    fn too_many_headers_go_to_hyper() {
        let mut head = String::from("GET /x HTTP/1.1\r\nAccept: text/event-stream\r\n");
        for i in 0..MAX_HEADERS {
            head.push_str(&format!("X-{i}: y\r\n"));
        }
        head.push_str("\r\n");
        assert!(matches!(
            classify(head.as_bytes()),
            Some(FirstRequest::Hyper)
        ));
    }

    proptest! {
        /// Whatever a client sends, classifying it never panics, and only a
        /// complete GET that asks for a stream is taken.
        #[test]
        fn any_bytes_are_classified(bytes in proptest::collection::vec(any::<u8>(), 0..600)) {
            if let Some(FirstRequest::EventStream(request)) = classify(&bytes) {
                prop_assert_eq!(request.method(), Method::GET);
                prop_assert!(bytes.ends_with(b"\r\n\r\n") || bytes.ends_with(b"\n\n"));
            }
        }

        /// Any prefix of a stream request waits for more; the whole is taken.
        #[test]
        fn prefixes_wait(cut in 0..STREAM.len()) {
            prop_assert!(classify(&STREAM.as_bytes()[..cut]).is_none());
        }
    }
}
