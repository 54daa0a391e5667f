//! `Server-Timing` on every API answer, so "server time" is something a
//! client can read rather than guess from its round trip: the time from
//! the request's head being read to the answer's head being ready, body
//! reading and the handler's work included, the network and the answer's
//! body on its way out not. Event streams go without: their head comes
//! at once and what matters is each event's arrival.

use axum::extract::Request;
use axum::http::{header, HeaderValue};
use axum::middleware::Next;
use axum::response::Response;
use std::time::Instant;

/// The metric's name in the header (`Server-Timing: app;dur=12.34`).
pub const METRIC: &str = "app";

/// Middleware: times the rest of the stack for `/api/…` requests and adds
/// `Server-Timing: app;dur=<milliseconds>` to their answers (not to event
/// streams).
pub async fn server_timing(req: Request, next: Next) -> Response {
    if !req.uri().path().starts_with("/api/") {
        return next.run(req).await;
    }
    let started = Instant::now();
    let mut response = next.run(req).await;
    let ms = started.elapsed().as_secs_f64() * 1000.0;
    let is_stream = response
        .headers()
        .get(header::CONTENT_TYPE)
        .is_some_and(|v| v.as_bytes().starts_with(b"text/event-stream"));
    if is_stream {
        return response;
    }
    if let Ok(value) = HeaderValue::from_str(&format!("{METRIC};dur={ms:.2}")) {
        response.headers_mut().append("server-timing", value);
    }
    response
}
