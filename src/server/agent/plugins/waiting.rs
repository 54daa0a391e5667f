//! Each session's plugin listeners and the calls relayed to them that are
//! waiting for an answer: the map of every session's relay
//! (`session_relay`, where the re-offer bookkeeping lives), the guard that
//! counts a plugin stream open, and the presence writer a cluster is told.
//!
//! A relayed call is kept until it is answered, given up on or its
//! session ends, so a plugin stream that connects while it waits (the
//! plugin reconnecting, with or without `Last-Event-ID`, or another of the
//! session's plugin streams) is offered it again, with its deadline,
//! before any live request. A call made while no stream is open waits for
//! the plugin when one listened less than
//! [`RECONNECT_GRACE_MS`](super::RECONNECT_GRACE_MS) ago.
//!
//! In a cluster (`across`) the calls waiting here also include those of
//! agents on other instances, offered to this instance's streams.

use super::offer::{Answer, Offer, Waiting};
use super::session_relay::Relay;
use crate::server::agent::hub::Frame;
use crate::server::platform::clock::Clock;
use axum::body::Bytes;
use std::collections::HashMap;
use std::sync::{Arc, Mutex, MutexGuard, OnceLock};
use tokio::sync::{broadcast, mpsc, oneshot};

/// Every session's relay (`session_relay::Relay`).
#[derive(Default)]
pub struct Relays {
    sessions: Mutex<HashMap<String, Relay>>,
    /// In a cluster, where a stream opening or closing is told, to be
    /// written for the other instances (`presence`).
    presence: OnceLock<mpsc::UnboundedSender<Changed>>,
}

/// A session whose plugin streams here opened or closed, for the
/// presence writer; `done` is told once it is written.
pub struct Changed {
    /// The session.
    pub session: String,
    /// Told when written.
    pub done: Option<oneshot::Sender<()>>,
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
            relay.close(now);
        }
        self.relays.changed(&self.session, None);
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
        self.listen_with(session, base, clock, Vec::new())
    }

    /// [`Self::listen`], first taking in `elsewhere`, calls of agents on
    /// other instances read from the database after [`Self::track`].
    pub fn listen_with(
        self: &Arc<Self>,
        session: &str,
        base: u64,
        clock: &Arc<Clock>,
        elsewhere: Vec<Waiting>,
    ) -> Listening {
        let now = clock.now_ms();
        let mut sessions = self.locked();
        let relay = sessions
            .entry(session.to_owned())
            .or_insert_with(|| Relay::new(base));
        relay.expire(now);
        for w in elsewhere {
            relay.take_in(w, now);
        }
        let (rx, first) = relay.open(now);
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

    /// Starts keeping `session`'s calls from other instances here (frame
    /// ids after `base` if new): from now on [`Self::offer`] takes them in.
    pub fn track(&self, session: &str, base: u64) {
        self.locked()
            .entry(session.to_owned())
            .or_insert_with(|| Relay::new(base));
    }

    /// Another instance's call `w` of `session`: kept and sent to the open
    /// streams here, unless this instance does not keep the session's
    /// calls, already has it, or knows it answered.
    pub fn offer(&self, session: &str, w: Waiting, now_ms: i64) {
        if let Some(relay) = self.locked().get_mut(session) {
            relay.expire(now_ms);
            let call_id = w.call_id;
            if relay.take_in(w, now_ms) {
                relay.broadcast_call(call_id, now_ms);
            }
        }
    }

    /// Registers `offer`, whose agent waits here, whether or not a stream
    /// is reachable here (in a cluster the database said one is, maybe
    /// elsewhere); [`Self::send_call`] sends it.
    pub fn wait(&self, session: &str, base: u64, offer: &Offer<'_>) -> oneshot::Receiver<Answer> {
        self.locked()
            .entry(session.to_owned())
            .or_insert_with(|| Relay::new(base))
            .wait(offer)
    }

    /// Sends call `call_id` of `session`, waiting here, to the session's
    /// open streams here ([`Self::wait`] once the others can answer it).
    pub fn send_call(&self, session: &str, call_id: i64, now_ms: i64) {
        if let Some(relay) = self.locked().get_mut(session) {
            relay.broadcast_call(call_id, now_ms);
        }
    }

    /// Call `call_id` of `session` was answered (anywhere): it is no longer
    /// offered here; its answer channel if its agent waits here.
    pub fn answered(&self, session: &str, call_id: i64) -> Option<oneshot::Sender<Answer>> {
        self.locked().get_mut(session)?.answered(call_id)
    }

    /// `session`'s open plugin streams here and when the last closed
    /// (`None`: nothing of it kept here).
    pub fn presence(&self, session: &str) -> Option<(usize, Option<i64>)> {
        self.locked().get(session).map(Relay::presence)
    }

    /// Sessions with plugin streams open here.
    pub fn listened(&self) -> Vec<String> {
        self.locked()
            .iter()
            .filter(|(_, r)| r.presence().0 > 0)
            .map(|(s, _)| s.clone())
            .collect()
    }

    /// Calls whose agents wait here: (session, call id).
    pub fn waiters(&self) -> Vec<(String, i64)> {
        self.locked()
            .iter()
            .flat_map(|(s, r)| r.waiters().map(move |id| (s.clone(), id)))
            .collect()
    }

    /// From now on, streams opening and closing are told to `writer`.
    pub fn tell_presence(&self, writer: mpsc::UnboundedSender<Changed>) {
        let _ = self.presence.set(writer);
    }

    /// Tells the presence writer, if any, that `session`'s streams here
    /// changed; `false` when there is none.
    pub fn changed(&self, session: &str, done: Option<oneshot::Sender<()>>) -> bool {
        let Some(writer) = self.presence.get() else {
            return false;
        };
        writer
            .send(Changed {
                session: session.to_owned(),
                done,
            })
            .is_ok()
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
        let rx = relay.wait(offer);
        relay.broadcast_call(offer.call_id, now_ms);
        Some(rx)
    }

    /// Sends event `name` (`json`) to `session`'s open plugin streams.
    pub fn notify(&self, session: &str, name: &str, json: &str) {
        if let Some(relay) = self.locked().get_mut(session) {
            relay.notify(name, json);
        }
    }

    /// Gives waiting call `call_id` of `session` its answer; `false` when
    /// no call of that session waits under that id (answered, given up
    /// on, another session's, or none).
    pub fn answer(&self, session: &str, call_id: i64, answer: Answer) -> bool {
        let waiting = self
            .locked()
            .get_mut(session)
            .and_then(|r| r.remove(call_id));
        waiting
            .and_then(|p| p.answer)
            .is_some_and(|tx| tx.send(answer).is_ok())
    }

    /// Stops waiting for call `call_id` of `session` (its deadline
    /// passed); `false` when it was no longer waiting here (answered just
    /// now: its answer is on its way).
    pub fn give_up(&self, session: &str, call_id: i64) -> bool {
        self.locked()
            .get_mut(session)
            .and_then(|relay| relay.remove(call_id))
            .is_some()
    }

    /// Forgets `session`: its streams end and its waiting calls get
    /// "the session ended".
    pub fn forget(&self, session: &str) {
        let relay = self.locked().remove(session);
        for tx in relay.into_iter().flat_map(Relay::end) {
            let _ = tx.send(Err("the session ended".into()));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::server::agent::plugins::RECONNECT_GRACE_MS;
    use serde_json::{json, Value};

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
