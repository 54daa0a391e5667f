//! One session's channel: its in-process listeners, its watchers (each a
//! [`Sink`]) split into shares written by their own tasks, and the replay
//! ring a reconnecting watcher is served from.

use super::frame::Frame;
use super::sink::Sink;
use crate::domain::limits::REPLAY_MAX_BYTES;
use std::collections::VecDeque;
use std::sync::{Arc, Mutex, Weak};
use tokio::sync::broadcast;

/// How many past events each session keeps for replay.
pub const REPLAY: usize = 512;
/// Per-subscriber buffer before a slow subscriber is told it lagged.
pub(super) const BUFFER: usize = 1024;
/// Up to this many watchers, a session's event is written to them from
/// the publishing thread; more are split between the runtime's workers.
const FAN_OUT_INLINE: usize = 64;

/// A live session's channel.
pub(super) struct Channel {
    /// In-process listeners ([`Hub::listen`]).
    pub(super) tx: broadcast::Sender<Arc<Frame>>,
    /// The event streams' watchers, each with its share number; a watcher
    /// that left is pruned on the next event.
    pub(super) sinks: Vec<(usize, Weak<Sink>)>,
    /// Where many watchers' writes are queued ([`fan_out`]).
    shares: Vec<Arc<Share>>,
    /// The share the next watcher joins.
    next_share: usize,
    pub(super) ring: VecDeque<Arc<Frame>>,
    /// Bytes of the frames in `ring` (their chunks), at most
    /// [`REPLAY_MAX_BYTES`].
    pub(super) ring_bytes: usize,
    /// The id of the last event delivered (0 while not positioned).
    pub(super) last_id: u64,
    /// Whether `last_id` is where the session's numbering stands. Always,
    /// when the hub numbers events itself; relayed, from the first event
    /// delivered or once the cluster read the number from the database.
    pub(super) positioned: bool,
}

impl Channel {
    /// A channel whose events are numbered after `base`, or, not
    /// `positioned`, one that takes its numbering from the first event.
    pub(super) fn new(base: u64, positioned: bool) -> Self {
        Self {
            tx: broadcast::channel(BUFFER).0,
            sinks: Vec::new(),
            shares: Vec::new(),
            next_share: 0,
            ring: VecDeque::with_capacity(REPLAY),
            ring_bytes: 0,
            last_id: if positioned { base } else { 0 },
            positioned,
        }
    }

    /// Delivers `frame` (the next event): kept for replay, sent to the
    /// in-process listeners and queued for the watchers; returns the few
    /// watchers the caller writes to itself once it let go of the hub.
    pub(super) fn push(&mut self, frame: &Arc<Frame>) -> Vec<Arc<Sink>> {
        self.last_id = frame.id;
        self.positioned = true;
        self.keep(frame);
        // No receivers is fine: nobody is listening.
        let _ = self.tx.send(frame.clone());
        fan_out(self, frame)
    }

    /// The watchers still there, with their shares (the others are
    /// forgotten).
    fn live_sinks(&mut self) -> Vec<(usize, Arc<Sink>)> {
        let mut live = Vec::with_capacity(self.sinks.len());
        self.sinks.retain(|(share, weak)| match weak.upgrade() {
            Some(sink) => {
                live.push((*share, sink));
                true
            }
            None => false,
        });
        live
    }

    /// Keeps `frame` for replay, evicting the oldest frames until the ring
    /// holds at most [`REPLAY`] frames and [`REPLAY_MAX_BYTES`] bytes (a
    /// frame larger than that on its own is not kept: a watcher that
    /// missed it gets a snapshot).
    pub(super) fn keep(&mut self, frame: &Arc<Frame>) {
        let size = frame.chunk.len();
        while self.ring.len() >= REPLAY
            || (!self.ring.is_empty() && self.ring_bytes + size > REPLAY_MAX_BYTES)
        {
            if let Some(old) = self.ring.pop_front() {
                self.ring_bytes -= old.chunk.len();
            }
        }
        if size <= REPLAY_MAX_BYTES {
            self.ring_bytes += size;
            self.ring.push_back(frame.clone());
        }
    }

    /// Adds a watcher, to the next share in turn.
    pub(super) fn add_sink(&mut self, sink: &Arc<Sink>) {
        self.sinks.push((self.next_share, Arc::downgrade(sink)));
        self.next_share = self.next_share.wrapping_add(1);
    }

    /// Ends every watcher's stream once it has the events so far.
    pub(super) fn close(mut self) {
        for (_, sink) in self.live_sinks() {
            sink.close(self.last_id);
        }
    }
}

/// One share of a session's watchers, written to by one task at a time,
/// event after event: a watcher always gets its events from the same
/// share, so in order, and events published while the share is still
/// writing the previous one go out together, one `writev` per watcher.
#[derive(Default)]
struct Share {
    queue: Mutex<ShareQueue>,
}

/// Events, in order, and the watchers to write them to.
type Batch = (Vec<Arc<Frame>>, Vec<Arc<Sink>>);

#[derive(Default)]
struct ShareQueue {
    /// Events to write, oldest first, with the share's watchers when they
    /// were published.
    batches: VecDeque<Batch>,
    /// A task is writing this share.
    running: bool,
}

/// How many watchers a share writes to between looks at its queue, so an
/// event published during a fan-out (a call's `workflow_update` right
/// after its `tool_call`) joins it for the watchers not written yet.
const LOOK_AGAIN_EVERY: usize = 64;

impl Share {
    /// Queues `frame` for `sinks`; starts a writer task unless one runs.
    fn push(
        self: &Arc<Self>,
        runtime: &tokio::runtime::Handle,
        frame: Arc<Frame>,
        sinks: Vec<Arc<Sink>>,
    ) {
        let mut queue = locked(&self.queue);
        queue.batches.push_back((vec![frame], sinks));
        if !queue.running {
            queue.running = true;
            let share = self.clone();
            runtime.spawn(async move { share.write() });
        }
    }

    /// Everything queued, as one batch: the events in order, and the
    /// newest list of watchers (one that joined later already has the
    /// older events, its snapshot stands for them; one that left is gone).
    /// `None` when the queue is empty; then, if `last`, the task stops.
    fn take(&self, last: bool) -> Option<Batch> {
        let mut queue = locked(&self.queue);
        if queue.batches.is_empty() {
            if last {
                queue.running = false;
            }
            return None;
        }
        let mut frames = Vec::new();
        let mut sinks = Vec::new();
        for (batch, batch_sinks) in queue.batches.drain(..) {
            frames.extend(batch);
            sinks = batch_sinks;
        }
        Some((frames, sinks))
    }

    /// Writes everything queued until nothing is left. Events queued while
    /// it writes are added for the watchers still to come, and queued
    /// again for everyone (those who have them skip them).
    fn write(&self) {
        while let Some((mut frames, sinks)) = self.take(true) {
            for (i, sink) in sinks.iter().enumerate() {
                if i > 0 && i % LOOK_AGAIN_EVERY == 0 {
                    if let Some((newer, newer_sinks)) = self.take(false) {
                        frames.extend(newer.iter().cloned());
                        locked(&self.queue).batches.push_front((newer, newer_sinks));
                    }
                }
                sink.offer(&frames);
            }
        }
    }
}

/// Writes `frame` to every one of the channel's watchers: for many,
/// queued in one share per worker thread, each written by its own task,
/// so the publisher (a tool call being answered) does not wait for
/// thousands of writes and every core shares them; a few are returned, for
/// the publisher to write itself once it has let go of the hub.
pub(super) fn fan_out(channel: &mut Channel, frame: &Arc<Frame>) -> Vec<Arc<Sink>> {
    let sinks = channel.live_sinks();
    let runtime = tokio::runtime::Handle::try_current().ok();
    let Some(runtime) = runtime.filter(|_| sinks.len() > FAN_OUT_INLINE) else {
        return sinks.into_iter().map(|(_, sink)| sink).collect();
    };
    let shares = runtime.metrics().num_workers().max(1);
    if channel.shares.len() != shares {
        channel.shares = (0..shares).map(|_| Arc::default()).collect();
    }
    let mut parts: Vec<Vec<Arc<Sink>>> = vec![Vec::with_capacity(sinks.len() / shares + 1); shares];
    for (share, sink) in sinks {
        parts[share % shares].push(sink);
    }
    for (share, part) in channel.shares.iter().zip(parts) {
        share.push(&runtime, frame.clone(), part);
    }
    Vec::new()
}

/// The guarded value, even after a panic elsewhere poisoned the lock.
pub(super) fn locked<T>(mutex: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    mutex.lock().unwrap_or_else(|p| p.into_inner())
}
