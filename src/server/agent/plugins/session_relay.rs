//! One session's relay: the calls waiting for its plugin, the frame ids
//! sent to its plugin streams, and what a stream that connects is offered
//! again. Kept apart from `waiting::Relays` (every session's relay, the
//! stream guards and the presence writer) so the re-offer bookkeeping, where
//! exactly-once and increasing ids are decided, reads as one piece.
//!
//! A relayed call is kept until it is answered, given up on or its session
//! ends. Frame ids keep increasing across re-offers and live requests (they
//! start after the hub's base, so also across restarts). Calls of agents on
//! other instances have no answer channel here, leave when answered
//! anywhere (and are not taken back in by a late read: `done`), and expire
//! at their deadline.

use super::offer::{Answer, Offer, Waiting, CALL_EVENT};
use crate::server::agent::hub::Frame;
use axum::body::Bytes;
use serde_json::Value;
use std::collections::{BTreeMap, HashMap};
use std::sync::Arc;
use tokio::sync::{broadcast, oneshot};

/// How long after a session's last plugin stream closed a call still
/// waits for the plugin to come back (until the call's own deadline)
/// rather than being refused at once as "not connected". A plugin's
/// client reconnects within a few seconds (the JavaScript client backs
/// off to at most 10 s); a plugin gone longer than this is taken to be
/// gone, and the agent hears so at once instead of after a timeout.
pub const RECONNECT_GRACE_MS: i64 = 30_000;

/// Most frames a plugin listener may fall behind by (it then reconnects
/// and is offered the calls still waiting).
const RELAY_BUFFER: usize = 256;

/// A call relayed to a plugin, waiting for its answer.
pub(super) struct Pending {
    tool: String,
    arguments: Value,
    /// When the agent stops waiting, on the injected clock (Unix ms).
    deadline_ms: i64,
    /// Where its answer goes; `None` for a call whose agent waits on
    /// another instance.
    pub(super) answer: Option<oneshot::Sender<Answer>>,
}

impl Pending {
    fn offer(&self, call_id: i64) -> Offer<'_> {
        Offer {
            call_id,
            tool: &self.tool,
            arguments: &self.arguments,
            deadline_ms: self.deadline_ms,
        }
    }
}

/// One session's relay: its listeners, the last frame id sent to them,
/// its waiting calls (by call id, so re-offers come in call order), how
/// many plugin streams are open and when the last one closed.
pub(super) struct Relay {
    sender: broadcast::Sender<Arc<Frame>>,
    last_id: u64,
    pending: BTreeMap<i64, Pending>,
    /// Calls answered or given up on elsewhere, by id, with their
    /// deadline: a read of the database that raced the answer does not
    /// offer them again.
    done: HashMap<i64, i64>,
    open_streams: usize,
    closed_at_ms: Option<i64>,
}

impl Relay {
    pub(super) fn new(base: u64) -> Self {
        Self {
            sender: broadcast::channel(RELAY_BUFFER).0,
            last_id: base,
            pending: BTreeMap::new(),
            done: HashMap::new(),
            open_streams: 0,
            closed_at_ms: None,
        }
    }

    /// Forgets other instances' calls and answers past their deadline.
    pub(super) fn expire(&mut self, now_ms: i64) {
        self.pending
            .retain(|_, p| p.answer.is_some() || p.deadline_ms > now_ms);
        self.done.retain(|_, deadline| *deadline > now_ms);
    }

    /// Takes in another instance's call `w` (unless known, done or past
    /// its deadline); whether it is new here.
    pub(super) fn take_in(&mut self, w: Waiting, now_ms: i64) -> bool {
        if w.deadline_ms <= now_ms
            || self.done.contains_key(&w.call_id)
            || self.pending.contains_key(&w.call_id)
        {
            return false;
        }
        let call_id = w.call_id;
        self.pending.insert(
            call_id,
            Pending {
                tool: w.tool,
                arguments: w.arguments,
                deadline_ms: w.deadline_ms,
                answer: None,
            },
        );
        true
    }

    /// Keeps `offer`, whose agent waits here, until it is answered or
    /// given up on; the receiver gets its answer.
    pub(super) fn wait(&mut self, offer: &Offer<'_>) -> oneshot::Receiver<Answer> {
        let (tx, rx) = oneshot::channel();
        self.pending.insert(
            offer.call_id,
            Pending {
                tool: offer.tool.to_owned(),
                arguments: offer.arguments.clone(),
                deadline_ms: offer.deadline_ms,
                answer: Some(tx),
            },
        );
        rx
    }

    /// Counts a new stream open and subscribes it; with it, every call
    /// still waiting and not past its deadline, as frames, oldest first
    /// (in one step under the caller's lock, so a call relayed meanwhile
    /// reaches it exactly once).
    pub(super) fn open(&mut self, now_ms: i64) -> (broadcast::Receiver<Arc<Frame>>, Vec<Bytes>) {
        self.open_streams += 1;
        let rx = self.sender.subscribe();
        let offers: Vec<String> = self
            .pending
            .iter()
            .filter(|(_, p)| p.deadline_ms > now_ms)
            .map(|(id, p)| p.offer(*id).json(now_ms))
            .collect();
        let first = offers
            .iter()
            .map(|json| self.frame(CALL_EVENT, json).sse.clone())
            .collect();
        (rx, first)
    }

    /// A stream closed; when it was the last, the time is noted for the
    /// reconnect grace.
    pub(super) fn close(&mut self, now_ms: i64) {
        self.open_streams = self.open_streams.saturating_sub(1);
        if self.open_streams == 0 {
            self.closed_at_ms = Some(now_ms);
        }
    }

    /// Sends call `call_id` (waiting here) to the open streams.
    pub(super) fn broadcast_call(&mut self, call_id: i64, now_ms: i64) {
        if self.open_streams == 0 {
            return;
        }
        let Some(p) = self.pending.get(&call_id) else {
            return;
        };
        let json = p.offer(call_id).json(now_ms);
        let frame = self.frame(CALL_EVENT, &json);
        // A stream that went away unnoticed misses it: the call stays
        // waiting and is offered again when the plugin reconnects.
        let _ = self.sender.send(frame);
    }

    /// Sends event `name` (`json`) to the open streams, if any.
    pub(super) fn notify(&mut self, name: &str, json: &str) {
        if self.open_streams > 0 {
            let frame = self.frame(name, json);
            let _ = self.sender.send(frame);
        }
    }

    /// The next frame: `json` as event `name` with the next id.
    fn frame(&mut self, name: &str, json: &str) -> Arc<Frame> {
        self.last_id += 1;
        Arc::new(Frame::new(self.last_id, name, json))
    }

    /// Stops keeping call `call_id`: the call, if it was waiting here.
    pub(super) fn remove(&mut self, call_id: i64) -> Option<Pending> {
        self.pending.remove(&call_id)
    }

    /// Call `call_id` was answered (anywhere): no longer offered, nor
    /// taken back in before its deadline; its answer channel if its agent
    /// waits here.
    pub(super) fn answered(&mut self, call_id: i64) -> Option<oneshot::Sender<Answer>> {
        let pending = self.pending.remove(&call_id)?;
        self.done.insert(call_id, pending.deadline_ms);
        pending.answer
    }

    /// The ids of the calls whose agents wait here.
    pub(super) fn waiters(&self) -> impl Iterator<Item = i64> + '_ {
        self.pending
            .iter()
            .filter(|(_, p)| p.answer.is_some())
            .map(|(id, _)| *id)
    }

    /// The session ends: the answer channels of the calls whose agents
    /// wait here.
    pub(super) fn end(self) -> impl Iterator<Item = oneshot::Sender<Answer>> {
        self.pending.into_values().filter_map(|p| p.answer)
    }

    /// Open streams here and when the last closed.
    pub(super) fn presence(&self) -> (usize, Option<i64>) {
        (self.open_streams, self.closed_at_ms)
    }

    /// Whether a call now would reach a plugin: one is listening, or one
    /// stopped less than [`RECONNECT_GRACE_MS`] ago.
    pub(super) fn reachable(&self, now_ms: i64) -> bool {
        self.open_streams > 0
            || self
                .closed_at_ms
                .is_some_and(|t| now_ms - t < RECONNECT_GRACE_MS)
    }
}
