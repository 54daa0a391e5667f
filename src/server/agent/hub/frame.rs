//! One event as sent: encoded once as the exact SSE bytes, and as the same
//! bytes framed as an HTTP/1.1 chunk, shared by every subscriber.

use axum::body::Bytes;

/// One event as sent: its id and its `text/event-stream` encoding.
#[derive(Debug)]
pub struct Frame {
    /// Increasing per session, starting at 1.
    pub id: u64,
    /// Its `event:` name.
    pub name: String,
    /// `id: …\nevent: …\ndata: …\n\n`, ready to write (cloning it is a refcount).
    pub sse: Bytes,
    /// The same bytes as one HTTP/1.1 chunk (`{size:x}\r\n…\r\n`), for a
    /// stream written on its socket; `sse` is a view into it.
    pub chunk: Bytes,
}

impl Frame {
    /// Encodes `json` as event `id` named `name` (the SSE `event:` field,
    /// for `EventSource.addEventListener(name, …)`). serde_json escapes
    /// newlines, so the JSON always fits on the single `data:` line.
    pub fn new(id: u64, name: &str, json: &str) -> Self {
        debug_assert!(!json.contains('\n') && !name.contains('\n'));
        let sse = format!("id: {id}\nevent: {name}\ndata: {json}\n\n");
        let size = format!("{:x}\r\n", sse.len());
        let mut chunk = Vec::with_capacity(size.len() + sse.len() + 2);
        chunk.extend_from_slice(size.as_bytes());
        chunk.extend_from_slice(sse.as_bytes());
        chunk.extend_from_slice(b"\r\n");
        let chunk = Bytes::from(chunk);
        Self {
            id,
            name: name.to_owned(),
            sse: chunk.slice(size.len()..size.len() + sse.len()),
            chunk,
        }
    }
}
