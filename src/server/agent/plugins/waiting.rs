//! Each session's plugin listeners and the calls relayed to them that are
//! waiting for an answer.
//!
//! A relayed call is kept until it is answered, given up on or its
//! session ends, so a plugin stream that connects while it waits (the
//! plugin reconnecting, with or without `Last-Event-ID`, or another of the
//! session's plugin streams) is offered it again, with its deadline,
//! before any live request. Frame ids keep increasing per session across
//! re-offers and live requests (they start after the hub's base, so also
//! across restarts), and a call made while no stream is open waits for the
//! plugin when one listened less than [`RECONNECT_GRACE_MS`] ago.

use crate::server::agent::hub::Frame;
use crate::server::platform::clock::Clock;
use axum::body::Bytes;
use serde_json::{json, Value};
use std::collections::{BTreeMap, HashMap};
use std::sync::{Arc, Mutex, MutexGuard};
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

/// What a relayed call's waiter gets: the plugin's result or its error.
pub type Answer = Result<Value, String>;

/// A call relayed to a plugin, waiting for its answer.
struct Pending {
    tool: String,
    arguments: Value,
    /// When the agent stops waiting, on the injected clock (Unix ms).
    deadline_ms: i64,
    answer: oneshot::Sender<Answer>,
}

/// One session's relay: its listeners, the last frame id sent to them,
/// its waiting calls (by call id, so re-offers come in call order), how
/// many plugin streams are open and when the last one closed.
struct Relay {
    sender: broadcast::Sender<Arc<Frame>>,
    last_id: u64,
    pending: BTreeMap<i64, Pending>,
    open_streams: usize,
    closed_at_ms: Option<i64>,
}

impl Relay {
    fn new(base: u64) -> Self {
        Self {
            sender: broadcast::channel(RELAY_BUFFER).0,
            last_id: base,
            pending: BTreeMap::new(),
            open_streams: 0,
            closed_at_ms: None,
        }
    }

    /// The next frame: `json` as event `name` with the next id.
    fn frame(&mut self, name: &str, json: &str) -> Arc<Frame> {
        self.last_id += 1;
        Arc::new(Frame::new(self.last_id, name, json))
    }

    /// Whether a call now would reach a plugin: one is listening, or one
    /// stopped less than [`RECONNECT_GRACE_MS`] ago.
    fn reachable(&self, now_ms: i64) -> bool {
        self.open_streams > 0
            || self
                .closed_at_ms
                .is_some_and(|t| now_ms - t < RECONNECT_GRACE_MS)
    }
}

/// A relayed call as the plugin is told of it.
pub struct Offer<'a> {
    /// The recorded call's id.
    pub call_id: i64,
    /// The plugin tool called.
    pub tool: &'a str,
    /// Its arguments, as checked against the tool's schema.
    pub arguments: &'a Value,
    /// When the agent stops waiting (Unix ms on the injected clock).
    pub deadline_ms: i64,
}

impl Offer<'_> {
    /// `tool-call-request`'s data: `{"callId","name","arguments",
    /// "deadline" (RFC 3339, UTC),"timeoutMs" (left at `now_ms`)}`.
    fn json(&self, now_ms: i64) -> String {
        let deadline = jiff::Timestamp::from_millisecond(self.deadline_ms)
            .map(|t| t.to_string())
            .unwrap_or_default();
        json!({
            "callId": self.call_id.to_string(),
            "name": self.tool,
            "arguments": self.arguments,
            "deadline": deadline,
            "timeoutMs": (self.deadline_ms - now_ms).max(0),
        })
        .to_string()
    }
}

/// The `tool-call-request` event's name.
pub const CALL_EVENT: &str = "tool-call-request";

/// Every session's [`Relay`].
#[derive(Default)]
pub struct Relays {
    sessions: Mutex<HashMap<String, Relay>>,
}

/// What a new plugin stream starts with: the live frames to come, the
/// waiting calls offered to it first, and the guard that counts it open.
pub struct Listening {
    /// Live frames (new requests, availability updates).
    pub rx: broadcast::Receiver<Arc<Frame>>,
    /// The calls still waiting, as frames, oldest first.
    pub first: Vec<Bytes>,
    /// Counts the stream as open until dropped.
    pub guard: ListenGuard,
}

/// Held by an open plugin stream; when the last of a session's closes,
/// the time is noted for the reconnect grace.
pub struct ListenGuard {
    relays: Arc<Relays>,
    clock: Arc<Clock>,
    session: String,
}

impl Drop for ListenGuard {
    fn drop(&mut self) {
        let now = self.clock.now_ms();
        if let Some(relay) = self.relays.locked().get_mut(&self.session) {
            relay.open_streams = relay.open_streams.saturating_sub(1);
            if relay.open_streams == 0 {
                relay.closed_at_ms = Some(now);
            }
        }
    }
}

impl Relays {
    fn locked(&self) -> MutexGuard<'_, HashMap<String, Relay>> {
        self.sessions.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Opens a plugin stream on `session` (frame ids after `base` for a
    /// session new here): subscribes it and offers it every call still
    /// waiting and not past its deadline, in one step, so a call relayed
    /// meanwhile reaches it exactly once.
    pub fn listen(self: &Arc<Self>, session: &str, base: u64, clock: &Arc<Clock>) -> Listening {
        let now = clock.now_ms();
        let mut sessions = self.locked();
        let relay = sessions
            .entry(session.to_owned())
            .or_insert_with(|| Relay::new(base));
        relay.open_streams += 1;
        let rx = relay.sender.subscribe();
        let offers: Vec<String> = relay
            .pending
            .iter()
            .filter(|(_, p)| p.deadline_ms > now)
            .map(|(id, p)| {
                let offer = Offer {
                    call_id: *id,
                    tool: &p.tool,
                    arguments: &p.arguments,
                    deadline_ms: p.deadline_ms,
                };
                offer.json(now)
            })
            .collect();
        let first = offers
            .iter()
            .map(|json| relay.frame(CALL_EVENT, json).sse.clone())
            .collect();
        Listening {
            rx,
            first,
            guard: ListenGuard {
                relays: self.clone(),
                clock: clock.clone(),
                session: session.to_owned(),
            },
        }
    }

    /// Whether a call of `session`'s plugin would reach it now.
    pub fn reachable(&self, session: &str, now_ms: i64) -> bool {
        self.locked()
            .get(session)
            .is_some_and(|r| r.reachable(now_ms))
    }

    /// Registers `offer` as waiting and sends it to the session's open
    /// plugin streams; `None` when no plugin is reachable (none listened,
    /// or the last left more than the grace ago).
    pub fn relay(
        &self,
        session: &str,
        offer: &Offer<'_>,
        now_ms: i64,
    ) -> Option<oneshot::Receiver<Answer>> {
        let mut sessions = self.locked();
        let relay = sessions.get_mut(session).filter(|r| r.reachable(now_ms))?;
        let (tx, rx) = oneshot::channel();
        relay.pending.insert(
            offer.call_id,
            Pending {
                tool: offer.tool.to_owned(),
                arguments: offer.arguments.clone(),
                deadline_ms: offer.deadline_ms,
                answer: tx,
            },
        );
        if relay.open_streams > 0 {
            let frame = relay.frame(CALL_EVENT, &offer.json(now_ms));
            // A stream that went away unnoticed misses it: the call stays
            // waiting and is offered again when the plugin reconnects.
            let _ = relay.sender.send(frame);
        }
        Some(rx)
    }

    /// Sends event `name` (`json`) to `session`'s open plugin streams.
    pub fn notify(&self, session: &str, name: &str, json: &str) {
        let mut sessions = self.locked();
        if let Some(relay) = sessions.get_mut(session).filter(|r| r.open_streams > 0) {
            let frame = relay.frame(name, json);
            let _ = relay.sender.send(frame);
        }
    }

    /// Gives waiting call `call_id` of `session` its answer; `false` when
    /// no call of that session waits under that id (answered, given up
    /// on, another session's, or none).
    pub fn answer(&self, session: &str, call_id: i64, answer: Answer) -> bool {
        let waiting = self
            .locked()
            .get_mut(session)
            .and_then(|r| r.pending.remove(&call_id));
        waiting.is_some_and(|p| p.answer.send(answer).is_ok())
    }

    /// Stops waiting for call `call_id` of `session` (its deadline passed).
    pub fn give_up(&self, session: &str, call_id: i64) {
        if let Some(relay) = self.locked().get_mut(session) {
            relay.pending.remove(&call_id);
        }
    }

    /// Forgets `session`: its streams end and its waiting calls get
    /// "the session ended".
    pub fn forget(&self, session: &str) {
        let relay = self.locked().remove(session);
        for (_, p) in relay.into_iter().flat_map(|r| r.pending) {
            let _ = p.answer.send(Err("the session ended".into()));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn offer<'a>(call_id: i64, arguments: &'a Value, deadline_ms: i64) -> Offer<'a> {
        Offer {
            call_id,
            tool: "addNote",
            arguments,
            deadline_ms,
        }
    }

    fn text(b: &Bytes) -> String {
        String::from_utf8_lossy(b).into_owned()
    }

    #[test]
    fn a_call_that_waits_is_offered_again_to_the_next_stream_with_higher_ids() {
        let relays = Arc::new(Relays::default());
        let clock = Arc::new(Clock::default());
        let args = json!({"text": "hi"});
        let now = clock.now_ms();
        let mut first = relays.listen("s", 100, &clock);
        let _rx = relays
            .relay("s", &offer(7, &args, now + 10_000), now)
            .unwrap();
        let live = first.rx.try_recv().unwrap();
        assert_eq!(live.id, 101);
        drop(first);
        let again = relays.listen("s", 100, &clock);
        assert_eq!(again.first.len(), 1);
        let frame = text(&again.first[0]);
        assert!(
            frame.starts_with("id: 102\nevent: tool-call-request\n"),
            "{frame}"
        );
        assert!(frame.contains("\"callId\":\"7\"") && frame.contains("\"deadline\":\""));
    }

    #[test]
    fn a_call_past_its_deadline_is_not_offered() {
        let relays = Arc::new(Relays::default());
        let clock = Arc::new(Clock::default());
        let args = json!({});
        let now = clock.now_ms();
        let stream = relays.listen("s", 0, &clock);
        let _rx = relays
            .relay("s", &offer(1, &args, now + 1_000), now)
            .unwrap();
        drop(stream);
        clock.advance(2);
        assert!(relays.listen("s", 0, &clock).first.is_empty());
    }

    #[test]
    fn a_plugin_gone_longer_than_the_grace_is_not_reachable() {
        let relays = Arc::new(Relays::default());
        let clock = Arc::new(Clock::default());
        let args = json!({});
        assert!(relays
            .relay("s", &offer(1, &args, i64::MAX), clock.now_ms())
            .is_none());
        drop(relays.listen("s", 0, &clock));
        assert!(relays.reachable("s", clock.now_ms()));
        clock.advance(RECONNECT_GRACE_MS / 1000);
        assert!(!relays.reachable("s", clock.now_ms()));
    }

    #[test]
    fn an_answer_is_taken_once_and_only_for_its_session() {
        let relays = Arc::new(Relays::default());
        let clock = Arc::new(Clock::default());
        let args = json!({});
        let _stream = relays.listen("s", 0, &clock);
        let mut rx = relays
            .relay("s", &offer(3, &args, i64::MAX), clock.now_ms())
            .unwrap();
        assert!(!relays.answer("other", 3, Ok(json!(1))));
        assert!(relays.answer("s", 3, Ok(json!(1))));
        assert!(!relays.answer("s", 3, Ok(json!(2))));
        assert_eq!(rx.try_recv().unwrap(), Ok(json!(1)));
    }
}
