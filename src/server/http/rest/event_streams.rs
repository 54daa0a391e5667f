//! Event-stream responses (`text/event-stream`): a session's events
//! through its watcher's [`Sink`], the session list's changes filtered for
//! its watcher ([`list_stream`]), and the plain broadcast streams (a
//! workflow's changes, a plugin's tools).
//!
//! Both send a keep-alive comment every [`KEEP_ALIVE`]. A session stream
//! also carries its [`Feed`] in the response's extensions: when the
//! request came on its own connection, the server writes it straight to
//! the socket (`server::http::serve::direct`) and the body is never read; when
//! hyper serves it, the body reads the same feed.

use crate::domain::ownership::Viewer;
use crate::server::agent::hub::sink::{Feed, FeedSlot, Next, Sink};
use crate::server::agent::hub::{Frame, ListChange};
use crate::server::agent::sessions;
use crate::server::http::streams::{self, StreamPermit};
use crate::server::AppState;
use axum::body::{Body, Bytes};
use axum::http::header;
use axum::response::{IntoResponse, Response};
use futures_util::future::BoxFuture;
use futures_util::stream::{self, StreamExt};
use std::convert::Infallible;
use std::sync::Arc;
use std::time::Duration;
use tokio::sync::broadcast;

/// Sent every [`KEEP_ALIVE`] so proxies and browsers keep an idle stream.
pub const KEEP_ALIVE_COMMENT: &[u8] = b":\n\n";
/// How often an idle stream gets [`KEEP_ALIVE_COMMENT`].
pub const KEEP_ALIVE: Duration = Duration::from_secs(15);

/// What a live stream carries between polls.
struct Live {
    rx: broadcast::Receiver<Arc<Frame>>,
    after: u64,
    tick: tokio::time::Interval,
    /// What the stream holds while open (its slot under the caps, a
    /// plugin listener's count), freed when the stream is dropped.
    _held: Box<dyn Send + Sync>,
}

/// An SSE response: `first` (snapshot and replay), then every live frame
/// after id `after`, with a keep-alive comment every 15 s. Frames are the
/// hub's pre-encoded bytes, so sending one to a watcher copies nothing.
/// The stream ends if the watcher lags behind the channel (it reconnects
/// with `Last-Event-ID` and gets a replay or a snapshot).
///
/// Without `rx` the response ends after `first` (an ended session).
pub(crate) fn event_stream(
    first: Vec<Bytes>,
    rx: Option<broadcast::Receiver<Arc<Frame>>>,
    after: u64,
    permit: Option<StreamPermit>,
) -> Response {
    let closed = streams::closed(permit.as_ref());
    event_stream_until(first, rx, after, Box::new(permit), closed)
}

/// [`event_stream`] holding `held` for as long as the stream is open,
/// ending when `closed` resolves.
pub(crate) fn event_stream_holding(
    first: Vec<Bytes>,
    rx: Option<broadcast::Receiver<Arc<Frame>>>,
    after: u64,
    held: Box<dyn Send + Sync>,
    closed: BoxFuture<'static, ()>,
) -> Response {
    event_stream_until(first, rx, after, held, closed)
}

/// [`event_stream_holding`] that ends when `closed` resolves (its permit's
/// key was closed: a disabled account's streams).
fn event_stream_until(
    first: Vec<Bytes>,
    rx: Option<broadcast::Receiver<Arc<Frame>>>,
    after: u64,
    held: Box<dyn Send + Sync>,
    closed: BoxFuture<'static, ()>,
) -> Response {
    let start = tokio::time::Instant::now() + KEEP_ALIVE;
    let live = rx.map(|rx| Live {
        rx,
        after,
        tick: tokio::time::interval_at(start, KEEP_ALIVE),
        _held: held,
    });
    let live = stream::unfold(live, |live| async move {
        let mut live = live?;
        loop {
            tokio::select! {
                biased;
                frame = live.rx.recv() => match frame {
                    Ok(frame) if frame.id <= live.after => continue,
                    Ok(frame) => return Some((Ok(frame.sse.clone()), Some(live))),
                    Err(_) => return None,
                },
                _ = live.tick.tick() => {
                    return Some((Ok(Bytes::from_static(KEEP_ALIVE_COMMENT)), Some(live)));
                }
            }
        }
    });
    let body = stream::iter(first.into_iter().map(Ok::<_, Infallible>))
        .chain(live)
        .take_until(closed);
    (
        [
            (header::CONTENT_TYPE, "text/event-stream"),
            (header::CACHE_CONTROL, "no-cache"),
        ],
        Body::from_stream(body),
    )
        .into_response()
}

/// What the session list's stream carries between changes.
struct ListLive {
    state: AppState,
    viewer: Viewer,
    rx: broadcast::Receiver<Arc<ListChange>>,
    /// The id of the last frame this watcher got (its own count).
    sent: u64,
    tick: tokio::time::Interval,
    /// Resolves when the permit's key is closed (a disabled account):
    /// the stream ends.
    closed: BoxFuture<'static, ()>,
    _permit: StreamPermit,
}

impl ListLive {
    /// The next change `viewer` may see, as a frame numbered for this
    /// watcher, or a keep-alive; `None` ends the stream (the channel
    /// closed, the watcher lagged, or the database failed: it reconnects).
    async fn next(&mut self) -> Option<Bytes> {
        loop {
            tokio::select! {
                biased;
                change = self.rx.recv() => {
                    let change = change.ok()?;
                    let seen = sessions::sees(&self.state, &change.session, self.viewer, change.owners)
                        .await
                        .ok()?;
                    if seen {
                        self.sent += 1;
                        return Some(Frame::new(self.sent, &change.name, &change.json).sse);
                    }
                }
                _ = self.tick.tick() => return Some(Bytes::from_static(KEEP_ALIVE_COMMENT)),
                () = &mut self.closed => return None,
            }
        }
    }
}

/// The session list's stream for `viewer`: every change of a session it
/// may see (`domain::ownership`), numbered 1, 2, … for this watcher alone,
/// so a change it may not see leaves no frame and no gap; a keep-alive
/// every [`KEEP_ALIVE`]. Nothing is replayed (a page reconnecting reads
/// the list again).
pub(crate) fn list_stream(
    state: AppState,
    viewer: Viewer,
    rx: broadcast::Receiver<Arc<ListChange>>,
    permit: StreamPermit,
) -> Response {
    let start = tokio::time::Instant::now() + KEEP_ALIVE;
    let live = ListLive {
        state,
        viewer,
        rx,
        sent: 0,
        tick: tokio::time::interval_at(start, KEEP_ALIVE),
        closed: permit.closed(),
        _permit: permit,
    };
    let body = stream::unfold(live, |mut live| async move {
        let bytes = live.next().await?;
        Some((Ok::<_, Infallible>(bytes), live))
    });
    (
        [
            (header::CONTENT_TYPE, "text/event-stream"),
            (header::CACHE_CONTROL, "no-cache"),
        ],
        Body::from_stream(body),
    )
        .into_response()
}

/// A session's stream: `first` (kept events, snapshot, replay), then every
/// event `sink` gets, until the session ends or the watcher falls too far
/// behind. `permit` is the stream's slot under the caps.
pub(crate) fn session_stream(first: Vec<Bytes>, sink: Arc<Sink>, permit: StreamPermit) -> Response {
    let slot = FeedSlot::new(Feed {
        first,
        sink,
        permit: Some(permit),
    });
    let body = stream::unfold((slot.clone(), None), |(slot, live)| async move {
        let mut live = match live {
            Some(live) => live,
            // Taken already: the response is being written on its socket.
            None => BodyFeed::new(slot.take()?),
        };
        let bytes = live.next().await?;
        Some((Ok::<_, Infallible>(bytes), (slot, Some(live))))
    });
    let mut response = (
        [
            (header::CONTENT_TYPE, "text/event-stream"),
            (header::CACHE_CONTROL, "no-cache"),
        ],
        Body::from_stream(body),
    )
        .into_response();
    response.extensions_mut().insert(slot);
    response
}

/// A session stream read as a response body (served by hyper).
struct BodyFeed {
    first: std::vec::IntoIter<Bytes>,
    sink: Arc<Sink>,
    tick: tokio::time::Interval,
    /// Resolves when the permit's key is closed: the body ends.
    closed: BoxFuture<'static, ()>,
    _permit: Option<StreamPermit>,
}

impl BodyFeed {
    fn new(feed: Feed) -> Self {
        let start = tokio::time::Instant::now() + KEEP_ALIVE;
        Self {
            first: feed.first.into_iter(),
            sink: feed.sink,
            tick: tokio::time::interval_at(start, KEEP_ALIVE),
            closed: streams::closed(feed.permit.as_ref()),
            _permit: feed.permit,
        }
    }

    /// The next bytes to send; `None` ends the body.
    async fn next(&mut self) -> Option<Bytes> {
        if let Some(first) = self.first.next() {
            return Some(first);
        }
        loop {
            match self.sink.next() {
                // Nothing is written to a socket here, so never a part.
                Next::Frame(frame, _) => return Some(frame.sse.clone()),
                Next::Closed | Next::Lagged => return None,
                Next::Wait => tokio::select! {
                    biased;
                    () = self.sink.notified() => {}
                    () = &mut self.closed => return None,
                    _ = self.tick.tick() => return Some(Bytes::from_static(KEEP_ALIVE_COMMENT)),
                },
            }
        }
    }
}
