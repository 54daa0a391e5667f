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
        // One allocation of the final size and one copy of `json` (which
        // may be a whole tool set, ~1 MB): formatting it into a string that
        // grows and then copying that string doubled the work.
        let head = format!("id: {id}\nevent: {name}\ndata: ");
        let sse_len = head.len() + json.len() + 2;
        let size = format!("{sse_len:x}\r\n");
        let mut chunk = Vec::with_capacity(size.len() + sse_len + 2);
        chunk.extend_from_slice(size.as_bytes());
        chunk.extend_from_slice(head.as_bytes());
        chunk.extend_from_slice(json.as_bytes());
        chunk.extend_from_slice(b"\n\n\r\n");
        let chunk = Bytes::from(chunk);
        Self {
            id,
            name: name.to_owned(),
            sse: chunk.slice(size.len()..size.len() + sse_len),
            chunk,
        }
    }
}
