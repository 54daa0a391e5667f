//! What admins watch of the connected servers: each forwarded call's time
//! (the last `MCP_CALL_TIMES_KEPT` per server and a count, for the median
//! the list shows), and the list itself pushed to the watching pages
//! (`GET /api/mcp-servers/events`) whenever it changes.
//!
//! Whatever changes what the list shows — a status, an import, a server
//! added or removed, a finished call — calls `Registry::touch`. One task,
//! [`announce`], then reads the list and sends it as one frame shared by
//! every watcher, and waits [`MCP_SERVERS_FRAME_GAP_MS`] before the next:
//! a burst of calls sends a few frames a second, the last with every
//! change in it. Nothing is replayed: a page that connects (or reconnects)
//! gets the whole list first ([`subscribe`]).

use super::{list, Registry};
use crate::domain::limits::MCP_SERVERS_FRAME_GAP_MS;
use crate::domain::mcp_server_view::{ServerList, SERVERS_EVENT};
use crate::server::agent::hub::Frame;
use crate::server::{AppState, ServerError};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::time::Duration;
use tokio::sync::broadcast;

/// Frames the channel holds for a watcher that is behind: each is the
/// whole list, so a watcher that falls further behind reconnects and
/// loses nothing.
const BUFFER: usize = 16;

/// The next frame's id (ids only grow; nothing is replayed by them).
static FRAME_IDS: AtomicU64 = AtomicU64::new(0);

impl Registry {
    /// Records that a call forwarded to server `id` took `elapsed`, and
    /// tells the watching pages.
    pub fn record_call(&self, id: i64, elapsed: Duration) {
        if let Ok(mut times) = self.times.lock() {
            let micros = u64::try_from(elapsed.as_micros()).unwrap_or(u64::MAX);
            times.entry(id).or_default().record(micros);
        }
        self.touch();
    }

    /// The watching pages' channel, opened on first use.
    fn receiver(&self) -> Option<broadcast::Receiver<Arc<Frame>>> {
        let mut frames = self.frames.lock().ok()?;
        Some(
            frames
                .get_or_insert_with(|| broadcast::channel(BUFFER).0)
                .subscribe(),
        )
    }

    /// Sends `frame` to the watching pages.
    fn publish(&self, frame: Frame) {
        if let Ok(frames) = self.frames.lock() {
            if let Some(tx) = frames.as_ref() {
                let _ = tx.send(Arc::new(frame));
            }
        }
    }

    /// Whether any page is watching.
    fn watched(&self) -> bool {
        self.frames
            .lock()
            .ok()
            .and_then(|f| f.as_ref().map(|tx| tx.receiver_count() > 0))
            .unwrap_or(false)
    }

    /// Ends every watcher's stream (shutdown).
    fn close(&self) {
        if let Ok(mut frames) = self.frames.lock() {
            frames.take();
        }
    }
}

/// The list as one frame of the event stream.
async fn frame(state: &AppState) -> Result<Frame, ServerError> {
    let body = ServerList {
        servers: list(state).await?,
    };
    let json = serde_json::to_string(&body).unwrap_or_default();
    let id = FRAME_IDS.fetch_add(1, Ordering::Relaxed) + 1;
    Ok(Frame::new(id, SERVERS_EVENT, &json))
}

/// A watcher's start: the list as it is now (its first frame), and every
/// later one.
pub async fn subscribe(
    state: &AppState,
) -> Result<(Frame, Option<broadcast::Receiver<Arc<Frame>>>), ServerError> {
    // Subscribed first, so a change made while the list is read is sent.
    let rx = state.mcp_servers.receiver();
    Ok((frame(state).await?, rx))
}

/// Runs until shutdown: after each change, sends the list to the
/// watching pages (if any), at most once per [`MCP_SERVERS_FRAME_GAP_MS`].
/// At shutdown their streams end.
pub async fn announce(state: AppState) {
    let registry = state.mcp_servers.clone();
    let gap = Duration::from_millis(MCP_SERVERS_FRAME_GAP_MS);
    loop {
        tokio::select! {
            () = registry.views_changed.notified() => {}
            () = state.shutdown.cancelled() => break,
        }
        if registry.watched() {
            match frame(&state).await {
                Ok(frame) => registry.publish(frame),
                Err(e) => tracing::warn!(error = %e, "could not read the MCP servers"),
            }
        }
        tokio::select! {
            () = tokio::time::sleep(gap) => {}
            () = state.shutdown.cancelled() => break,
        }
    }
    registry.close();
}
