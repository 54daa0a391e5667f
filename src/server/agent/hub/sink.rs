//! One watcher of a session: where the hub puts the session's events for
//! it, in order, and, once the watcher's connection is attached, the
//! socket the publisher writes them to itself.
//!
//! Why the publisher writes: with a channel, the publisher wakes every
//! watcher's task and each task then writes its copy, so a fan-out to
//! 10,000 watchers was 10,000 task wake-ups on top of 10,000 writes. Here
//! the publisher (a few tasks, one per core) writes each watcher's event
//! with one non-blocking `send` of the event's shared bytes, already framed
//! as an HTTP/1.1 chunk. A watcher's own task is woken only when that
//! cannot be done at once: its socket is full, it is busy writing
//! something else (its snapshot, a keep-alive), or it has no socket of its
//! own because hyper serves it (then it reads the queue as a body).

use super::frame::Frame;
use crate::server::http::streams::StreamPermit;
use axum::body::Bytes;
use std::collections::VecDeque;
use std::io::IoSlice;
use std::sync::{Arc, Mutex, MutexGuard};
use tokio::net::TcpStream;
use tokio::sync::Notify;

/// Events a watcher may fall behind by before its stream is ended (it
/// reconnects with `Last-Event-ID` and gets a replay or a snapshot).
pub const BACKLOG: usize = 1024;

/// Most events the publisher writes to one watcher in one `writev`.
const WRITE_AT_ONCE: usize = 16;

/// One watcher's queue, socket and progress.
pub struct Sink {
    state: Mutex<SinkState>,
    notify: Notify,
}

/// What the publisher and the watcher's own task share.
struct SinkState {
    /// The watcher's socket, once its stream is written on it directly.
    socket: Option<Arc<TcpStream>>,
    /// The watcher's task is writing (or has not started): the publisher
    /// queues instead.
    busy: bool,
    /// The id of the last event written (or handed to the body).
    delivered: u64,
    /// `delivered` is known; a watcher of a relayed session whose
    /// numbering was not known yet takes it from its first event.
    anchored: bool,
    /// An event the publisher began writing and the socket did not take
    /// whole: the task sends the rest, from this offset, before anything.
    partial: Option<(Arc<Frame>, usize)>,
    /// Events not written yet, by id.
    pending: VecDeque<Arc<Frame>>,
    /// The watcher fell more than [`BACKLOG`] events behind.
    lagged: bool,
    /// The session's channel closed after this event: the stream ends once
    /// it has been delivered.
    closed_after: Option<u64>,
}

impl SinkState {
    /// Writes the run of consecutive events at the front of `rest` (as
    /// many as one `writev` takes) if the socket is attached, idle and
    /// caught up, and returns what is left; `None` when it could not write.
    /// A socket that takes part of an event leaves the rest to the task.
    fn write_now<'f>(&mut self, rest: &'f [Arc<Frame>]) -> Option<&'f [Arc<Frame>]> {
        let writable_now = !self.busy
            && self.partial.is_none()
            && self.pending.is_empty()
            && self.delivered + 1 == rest[0].id;
        let socket = self.socket.as_ref().filter(|_| writable_now)?;
        let run = rest
            .iter()
            .take(WRITE_AT_ONCE)
            .enumerate()
            .take_while(|(i, f)| f.id == rest[0].id + *i as u64)
            .count();
        let mut slices = [IoSlice::new(&[]); WRITE_AT_ONCE];
        for (slice, frame) in slices.iter_mut().zip(&rest[..run]) {
            *slice = IoSlice::new(&frame.chunk);
        }
        // Borrowing the socket from the state for the write, then updating
        // the state: no reference count touched per watcher.
        let Ok(mut written) = socket.try_write_vectored(&slices[..run]) else {
            return Some(rest);
        };
        let mut left = rest;
        for frame in &rest[..run] {
            if written == 0 {
                break;
            }
            self.delivered = frame.id;
            if written < frame.chunk.len() {
                // The socket is full: the task sends the rest.
                self.partial = Some((frame.clone(), written));
                self.busy = true;
                written = 0;
            } else {
                written -= frame.chunk.len();
            }
            left = &left[1..];
        }
        Some(left)
    }

    /// Queues `frames` in id order (a frame already queued is not added
    /// twice); past [`BACKLOG`] the watcher is marked lagged.
    fn queue(&mut self, frames: &[Arc<Frame>]) {
        for frame in frames {
            if self.pending.len() >= BACKLOG {
                self.lagged = true;
                break;
            }
            let at = self.pending.partition_point(|f| f.id < frame.id);
            if self.pending.get(at).is_none_or(|f| f.id != frame.id) {
                self.pending.insert(at, frame.clone());
            }
        }
    }
}

/// What a watcher's task does next.
pub enum Next {
    /// Write this event's chunk from this offset.
    Frame(Arc<Frame>, usize),
    /// Everything is written; wait for [`Sink::notified`].
    Wait,
    /// The session ended and everything was written: end the stream.
    Closed,
    /// The watcher fell too far behind: cut the stream.
    Lagged,
}

impl Sink {
    /// A watcher that has everything up to event `delivered` (its snapshot
    /// or replay stands for those).
    pub fn new(delivered: u64) -> Self {
        Self::at(delivered, true)
    }

    /// A watcher of a session with no event yet whose numbering is not
    /// known here (several instances): the first event it gets is the
    /// first it needs.
    pub fn unanchored() -> Self {
        Self::at(0, false)
    }

    fn at(delivered: u64, anchored: bool) -> Self {
        Self {
            state: Mutex::new(SinkState {
                socket: None,
                busy: true,
                delivered,
                anchored,
                partial: None,
                pending: VecDeque::new(),
                lagged: false,
                closed_after: None,
            }),
            notify: Notify::new(),
        }
    }

    fn locked(&self) -> MutexGuard<'_, SinkState> {
        self.state.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Hands `frames` (in id order) to this watcher: written to its socket
    /// at once, in one `writev`, if it is attached, idle and caught up;
    /// queued, and its task woken, otherwise.
    pub fn offer(&self, frames: &[Arc<Frame>]) {
        let mut state = self.locked();
        if let Some(first) = frames.first().filter(|_| !state.anchored) {
            state.anchored = true;
            state.delivered = first.id.saturating_sub(1);
        }
        let mut rest = frames;
        while rest.first().is_some_and(|f| f.id <= state.delivered) {
            rest = &rest[1..];
        }
        if rest.is_empty() {
            return;
        }
        if let Some(left) = state.write_now(rest) {
            if left.is_empty() && state.partial.is_none() {
                if state.closed_after.is_some() {
                    self.notify.notify_one();
                }
                return;
            }
            rest = left;
        }
        state.queue(rest);
        drop(state);
        self.notify.notify_one();
    }

    /// The session's channel closed after event `last`: once everything
    /// up to it is delivered, the stream ends.
    pub fn close(&self, last: u64) {
        self.locked().closed_after = Some(last);
        self.notify.notify_one();
    }

    /// From now on the publisher may write to `socket` itself.
    pub fn attach(&self, socket: Arc<TcpStream>) {
        self.locked().socket = Some(socket);
    }

    /// What the task writes next. Returning [`Next::Frame`] makes the task
    /// the writer until it asks again; returning [`Next::Wait`] hands
    /// writing back to the publisher.
    pub fn next(&self) -> Next {
        let mut state = self.locked();
        if state.lagged {
            return Next::Lagged;
        }
        if let Some((frame, offset)) = state.partial.take() {
            state.busy = true;
            return Next::Frame(frame, offset);
        }
        while let Some(front) = state.pending.front() {
            if front.id <= state.delivered {
                state.pending.pop_front();
                continue;
            }
            if front.id != state.delivered + 1 {
                // The one before it is still on its way from a publisher.
                break;
            }
            let frame = state.pending.pop_front().expect("front exists");
            state.delivered = frame.id;
            state.busy = true;
            return Next::Frame(frame, 0);
        }
        // An unanchored watcher never got an event: nothing is owed.
        if state
            .closed_after
            .is_some_and(|last| !state.anchored || state.delivered >= last)
        {
            return Next::Closed;
        }
        state.busy = false;
        Next::Wait
    }

    /// Makes the task the writer (for a keep-alive) if nothing is being
    /// written; false if the publisher or a partial event is in the way
    /// (then there is something to send anyway).
    pub fn claim(&self) -> bool {
        let mut state = self.locked();
        if state.busy || state.partial.is_some() {
            return false;
        }
        state.busy = true;
        true
    }

    /// Waits until there may be something for [`Sink::next`].
    pub async fn notified(&self) {
        self.notify.notified().await;
    }
}

/// A session stream's start and its watcher, taken by whichever writes the
/// response: the direct writer (`server::http::serve::direct`) or the body.
pub struct Feed {
    /// Sent first, as they are: kept events, the snapshot, the replay.
    pub first: Vec<Bytes>,
    /// Everything after.
    pub sink: Arc<Sink>,
    /// The stream's slot under the caps, freed with the feed.
    pub permit: Option<StreamPermit>,
}

/// Where a response keeps its [`Feed`] until its writer takes it (a
/// response extension, so it has to be `Clone`).
#[derive(Clone)]
pub struct FeedSlot(Arc<Mutex<Option<Feed>>>);

impl FeedSlot {
    /// A slot holding `feed`.
    pub fn new(feed: Feed) -> Self {
        Self(Arc::new(Mutex::new(Some(feed))))
    }

    /// The feed, for the first to ask.
    pub fn take(&self) -> Option<Feed> {
        self.0.lock().unwrap_or_else(|p| p.into_inner()).take()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn frame(id: u64) -> Arc<Frame> {
        Arc::new(Frame::new(id, "e", "{}"))
    }

    fn ids(sink: &Sink) -> Vec<u64> {
        let mut out = Vec::new();
        while let Next::Frame(f, _) = sink.next() {
            out.push(f.id);
        }
        out
    }

    #[test]
    fn events_come_out_in_order_whatever_order_they_were_offered_in() {
        let sink = Sink::new(4);
        for id in [7, 5, 3, 6, 5] {
            sink.offer(&[frame(id)]);
        }
        assert_eq!(ids(&sink), [5, 6, 7]);
        // A gap waits for the event still on its way.
        sink.offer(&[frame(9)]);
        assert!(matches!(sink.next(), Next::Wait));
        sink.offer(&[frame(8)]);
        assert_eq!(ids(&sink), [8, 9]);
    }

    #[test]
    fn a_batch_with_old_and_repeated_events_is_taken_once_in_order() {
        let sink = Sink::new(2);
        sink.offer(&[frame(1), frame(2), frame(3), frame(4)]);
        sink.offer(&[frame(4), frame(5)]);
        assert_eq!(ids(&sink), [3, 4, 5]);
    }

    #[test]
    fn an_unanchored_watcher_starts_at_its_first_event() {
        let sink = Sink::unanchored();
        sink.offer(&[frame(1_000_007)]);
        sink.offer(&[frame(1_000_008)]);
        assert_eq!(ids(&sink), [1_000_007, 1_000_008]);
        let closed = Sink::unanchored();
        closed.close(0);
        assert!(matches!(closed.next(), Next::Closed));
    }

    #[test]
    fn a_watcher_too_far_behind_is_cut() {
        let sink = Sink::new(0);
        for id in 1..=(BACKLOG as u64 + 1) {
            sink.offer(&[frame(id)]);
        }
        assert!(matches!(sink.next(), Next::Lagged));
    }

    #[test]
    fn a_closed_session_ends_after_its_last_event_is_delivered() {
        let sink = Sink::new(0);
        sink.close(2);
        sink.offer(&[frame(1)]);
        assert_eq!(ids(&sink), [1]);
        assert!(matches!(sink.next(), Next::Wait), "event 2 not here yet");
        sink.offer(&[frame(2)]);
        assert_eq!(ids(&sink), [2]);
        assert!(matches!(sink.next(), Next::Closed));
    }

    #[test]
    fn a_keep_alive_is_claimed_only_when_nothing_is_being_written() {
        let sink = Sink::new(0);
        assert!(!sink.claim(), "busy until the task first asks");
        assert!(matches!(sink.next(), Next::Wait));
        assert!(sink.claim());
        assert!(!sink.claim());
    }

    #[test]
    fn the_feed_goes_to_whoever_takes_it_first() {
        let slot = FeedSlot::new(Feed {
            first: Vec::new(),
            sink: Arc::new(Sink::new(0)),
            permit: None,
        });
        let other = slot.clone();
        assert!(slot.take().is_some());
        assert!(other.take().is_none());
    }
}
