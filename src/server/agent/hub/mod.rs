//! Server push: one broadcast channel per live session, with a replay ring
//! so a client reconnecting with `Last-Event-ID` gets exactly what it missed.
//!
//! A new subscriber (no `Last-Event-ID`) gets a snapshot, preceded by the
//! kept `tool-availability-update`s, so an agent that starts listening late
//! still learns every plugin tool change it missed.
//!
//! Frames are encoded once, as the exact SSE bytes (and the same bytes
//! framed as an HTTP/1.1 chunk), and shared by every subscriber: a fan-out
//! to thousands of watchers costs one JSON encoding and no per-watcher
//! allocation. Each watcher of a session is a [`Sink`]; the publisher
//! writes to the watchers' sockets itself ([`sink`]).

mod channel;
mod frame;
pub mod sink;

pub use channel::REPLAY;
pub use frame::Frame;

use crate::domain::agent_session::SessionEvent;
use crate::domain::plugin::AVAILABILITY_EVENT;
use channel::{fan_out, locked, Channel, BUFFER};
use sink::Sink;
use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use tokio::sync::broadcast;

/// What a new subscriber starts from.
pub struct Subscription {
    /// Missed events to send first, in order.
    pub replay: Vec<Arc<Frame>>,
    /// The subscriber needs a full snapshot first (new, or too far behind).
    pub needs_snapshot: bool,
    /// With a snapshot: the kept events a late listener must still get
    /// before it (the plugin's `tool-availability-update`s), in order.
    pub history: Vec<Arc<Frame>>,
    /// The id the snapshot stands for (the newest event so far).
    pub snapshot_id: u64,
    /// Everything published from now on.
    pub sink: Arc<Sink>,
}

/// All session channels, plus one for the session list.
pub struct Hub {
    sessions: Mutex<HashMap<String, Channel>>,
    list: Mutex<broadcast::Sender<Arc<Frame>>>,
    list_ids: Mutex<u64>,
    workflows: Mutex<HashMap<String, broadcast::Sender<Arc<Frame>>>>,
    base: u64,
}

impl Default for Hub {
    /// A hub whose event ids start at 1 (tests); servers use
    /// [`Hub::starting_at`].
    fn default() -> Self {
        Self::starting_at(0)
    }
}

impl Hub {
    /// A hub whose event ids (per session, and for the list) start after
    /// `base`. A server passes its start time in milliseconds × 10⁶, so ids
    /// keep increasing across restarts and a `Last-Event-ID` from before one
    /// always gets a snapshot, never someone else's replay.
    pub fn starting_at(base: u64) -> Self {
        Self {
            sessions: Mutex::new(HashMap::new()),
            list: Mutex::new(broadcast::channel(BUFFER).0),
            list_ids: Mutex::new(base),
            workflows: Mutex::new(HashMap::new()),
            base,
        }
    }

    /// The id events start after.
    pub fn base(&self) -> u64 {
        self.base
    }
}

impl Hub {
    /// Publishes `event` on `session`'s stream; returns its id.
    pub fn publish(&self, session: &str, event: &SessionEvent) -> u64 {
        let json = serde_json::to_string(event).unwrap_or_default();
        self.publish_named(session, event.name(), &json)
    }

    /// Publishes `json` as event `name` on `session`'s stream (an event
    /// whose shape is not a [`SessionEvent`], such as the plugin's
    /// `tool-availability-update`); returns its id.
    pub fn publish_named(&self, session: &str, name: &str, json: &str) -> u64 {
        let mut sessions = locked(&self.sessions);
        let channel = sessions
            .entry(session.to_owned())
            .or_insert_with(|| Channel::new(self.base));
        channel.last_id += 1;
        let frame = Arc::new(Frame::new(channel.last_id, name, json));
        channel.keep(&frame);
        // No receivers is fine: nobody is listening.
        let _ = channel.tx.send(frame.clone());
        let id = channel.last_id;
        let few = fan_out(channel, &frame);
        drop(sessions);
        for sink in few {
            sink.offer(std::slice::from_ref(&frame));
        }
        id
    }

    /// Subscribes to `session`. With `last_seen`, replays what came after it
    /// if still kept; otherwise (or without it) asks for a snapshot first.
    /// Subscribing and collecting the replay happen under one lock, so no
    /// event is lost or sent twice between them.
    pub fn subscribe(&self, session: &str, last_seen: Option<u64>) -> Subscription {
        let mut sessions = locked(&self.sessions);
        let channel = sessions
            .entry(session.to_owned())
            .or_insert_with(|| Channel::new(self.base));
        let sink = Arc::new(Sink::new(channel.last_id));
        channel.add_sink(&sink);
        let oldest = channel.ring.front().map_or(channel.last_id + 1, |f| f.id);
        match last_seen {
            Some(seen) if seen >= oldest.saturating_sub(1) && seen <= channel.last_id => {
                Subscription {
                    replay: channel
                        .ring
                        .iter()
                        .filter(|f| f.id > seen)
                        .cloned()
                        .collect(),
                    needs_snapshot: false,
                    history: Vec::new(),
                    snapshot_id: channel.last_id,
                    sink,
                }
            }
            _ => Subscription {
                replay: Vec::new(),
                needs_snapshot: true,
                history: channel
                    .ring
                    .iter()
                    .filter(|f| f.name == AVAILABILITY_EVENT)
                    .cloned()
                    .collect(),
                snapshot_id: channel.last_id,
                sink,
            },
        }
    }

    /// Forgets an ended session's channel and replay ring: its subscribers
    /// get what was already published (the `ended` event), then their
    /// stream ends.
    pub fn close(&self, session: &str) {
        let channel = locked(&self.sessions).remove(session);
        if let Some(channel) = channel {
            channel.close();
        }
    }

    /// Every event published on `session` from now on, for a listener in
    /// this process (the MCP server's tool-change notices).
    pub fn listen(&self, session: &str) -> broadcast::Receiver<Arc<Frame>> {
        locked(&self.sessions)
            .entry(session.to_owned())
            .or_insert_with(|| Channel::new(self.base))
            .tx
            .subscribe()
    }

    /// How many sessions have a live channel (ended ones never do).
    pub fn live_sessions(&self) -> usize {
        locked(&self.sessions).len()
    }

    /// Ends every open stream, so a graceful shutdown is not held up
    /// forever by watchers (their browsers reconnect to the next server).
    pub fn close_all(&self) {
        let channels: Vec<Channel> = locked(&self.sessions).drain().map(|(_, c)| c).collect();
        for channel in channels {
            channel.close();
        }
        locked(&self.workflows).clear();
        *locked(&self.list) = broadcast::channel(BUFFER).0;
    }

    /// Publishes a session-list change (`opened`, `ended`, `workflow`).
    pub fn publish_list(&self, change: &serde_json::Value) {
        let mut ids = locked(&self.list_ids);
        *ids += 1;
        let name = change
            .get("type")
            .and_then(serde_json::Value::as_str)
            .unwrap_or("message");
        let _ = locked(&self.list).send(Arc::new(Frame::new(*ids, name, &change.to_string())));
    }

    /// Publishes `json` as event `name` to the open settings pages of
    /// workflow `id` (`workflow_changed`). Kept apart from session
    /// channels: nothing is replayed (a page that reconnects reads the
    /// definition again) and no session count includes them.
    pub fn publish_workflow(&self, id: &str, name: &str, json: &str) {
        let mut ids = locked(&self.list_ids);
        *ids += 1;
        if let Some(tx) = locked(&self.workflows).get(id) {
            let _ = tx.send(Arc::new(Frame::new(*ids, name, json)));
        }
    }

    /// Subscribes to workflow `id`'s changes.
    pub fn subscribe_workflow(&self, id: &str) -> broadcast::Receiver<Arc<Frame>> {
        let mut workflows = locked(&self.workflows);
        workflows.retain(|_, tx| tx.receiver_count() > 0);
        workflows
            .entry(id.to_owned())
            .or_insert_with(|| broadcast::channel(BUFFER).0)
            .subscribe()
    }

    /// Subscribes to session-list changes.
    pub fn subscribe_list(&self) -> broadcast::Receiver<Arc<Frame>> {
        locked(&self.list).subscribe()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::domain::limits::REPLAY_MAX_BYTES;

    fn ended(n: usize) -> SessionEvent {
        SessionEvent::Ended {
            reason: n.to_string(),
        }
    }

    #[test]
    fn a_reconnect_gets_exactly_the_missed_events_in_order() {
        let hub = Hub::default();
        for n in 1..=5 {
            hub.publish("s", &ended(n));
        }
        let sub = hub.subscribe("s", Some(2));
        assert!(!sub.needs_snapshot);
        assert_eq!(
            sub.replay.iter().map(|f| f.id).collect::<Vec<_>>(),
            [3, 4, 5]
        );
        let sub = hub.subscribe("s", Some(5));
        assert!(sub.replay.is_empty() && !sub.needs_snapshot);
    }

    #[test]
    fn too_old_or_new_subscribers_get_a_snapshot_first() {
        let hub = Hub::default();
        for n in 0..REPLAY + 10 {
            hub.publish("s", &ended(n));
        }
        let sub = hub.subscribe("s", Some(3));
        assert!(sub.needs_snapshot);
        assert_eq!(sub.snapshot_id, (REPLAY + 10) as u64);
        assert!(hub.subscribe("s", None).needs_snapshot);
        assert!(hub.subscribe("s", Some(10_000)).needs_snapshot);
    }

    #[test]
    fn large_frames_evict_older_ones_so_the_ring_stays_under_its_bytes() {
        let hub = Hub::default();
        let big = "x".repeat(REPLAY_MAX_BYTES / 4);
        for _ in 0..10 {
            hub.publish_named("s", "ended", &format!("\"{big}\""));
        }
        let sessions = locked(&hub.sessions);
        let channel = &sessions["s"];
        let held: usize = channel.ring.iter().map(|f| f.chunk.len()).sum();
        assert_eq!(held, channel.ring_bytes);
        assert!(held <= REPLAY_MAX_BYTES, "{held}");
        assert!(channel.ring.len() < 4, "older frames were evicted");
        assert_eq!(channel.ring.back().map(|f| f.id), Some(10));
        drop(sessions);
        let sub = hub.subscribe("s", Some(2));
        assert!(sub.needs_snapshot, "what was evicted is not replayed");
    }

    #[test]
    fn a_frame_larger_than_the_ring_is_not_kept_and_asks_for_a_snapshot() {
        let hub = Hub::default();
        hub.publish("s", &ended(1));
        let huge = "x".repeat(REPLAY_MAX_BYTES + 1);
        hub.publish_named("s", "ended", &format!("\"{huge}\""));
        let sub = hub.subscribe("s", Some(1));
        assert!(sub.needs_snapshot);
        assert_eq!(locked(&hub.sessions)["s"].ring_bytes, 0);
    }

    #[test]
    fn ids_from_before_a_restart_get_a_snapshot() {
        let before = Hub::starting_at(1_000_000);
        for n in 1..=5 {
            before.publish("s", &ended(n));
        }
        let after = Hub::starting_at(2_000_000);
        after.publish("s", &ended(1));
        let sub = after.subscribe("s", Some(1_000_005));
        assert!(sub.needs_snapshot);
        assert_eq!(sub.snapshot_id, 2_000_001);
        assert!(!after.subscribe("s", Some(2_000_000)).needs_snapshot);
    }

    #[test]
    fn frames_are_complete_sse_events() {
        let hub = Hub::default();
        hub.publish("s", &ended(1));
        let frame = &hub.subscribe("s", Some(0)).replay[0];
        assert_eq!(
            std::str::from_utf8(&frame.sse).unwrap(),
            "id: 1\nevent: ended\ndata: {\"type\":\"ended\",\"data\":{\"reason\":\"1\"}}\n\n"
        );
    }

    /// The ids `sink` hands out now.
    fn next_ids(sink: &Sink) -> Vec<u64> {
        let mut out = Vec::new();
        while let sink::Next::Frame(f, _) = sink.next() {
            out.push(f.id);
        }
        out
    }

    #[test]
    fn closing_a_session_delivers_what_was_sent_then_ends_its_stream() {
        let hub = Hub::default();
        let sub = hub.subscribe("s", None);
        let mut listener = hub.listen("s");
        hub.publish("s", &ended(1));
        hub.close("s");
        assert_eq!(hub.live_sessions(), 0);
        assert_eq!(next_ids(&sub.sink), [1]);
        assert!(matches!(sub.sink.next(), sink::Next::Closed));
        assert_eq!(listener.try_recv().unwrap().id, 1);
        assert!(listener.try_recv().is_err());
    }

    #[tokio::test]
    async fn closing_all_ends_every_stream() {
        let hub = Hub::default();
        let session = hub.subscribe("s", None);
        let mut list = hub.subscribe_list();
        hub.close_all();
        assert!(matches!(session.sink.next(), sink::Next::Closed));
        assert!(list.recv().await.is_err());
    }

    #[test]
    fn live_events_follow_the_replay_without_gaps() {
        let hub = Hub::default();
        hub.publish("s", &ended(1));
        let sub = hub.subscribe("s", Some(0));
        hub.publish("s", &ended(2));
        assert_eq!(sub.replay.len(), 1);
        assert_eq!(next_ids(&sub.sink), [2]);
    }

    #[test]
    fn a_watcher_that_left_is_forgotten_on_the_next_event() {
        let hub = Hub::default();
        let kept = hub.subscribe("s", None);
        drop(hub.subscribe("s", None));
        hub.publish("s", &ended(1));
        let sessions = locked(&hub.sessions);
        assert_eq!(sessions["s"].sinks.len(), 1);
        drop(sessions);
        assert_eq!(next_ids(&kept.sink), [1]);
    }

    #[test]
    fn a_frame_is_one_chunk_around_its_event() {
        let frame = Frame::new(7, "e", "{}");
        let sse = "id: 7\nevent: e\ndata: {}\n\n";
        assert_eq!(&frame.sse[..], sse.as_bytes());
        assert_eq!(
            &frame.chunk[..],
            format!("{:x}\r\n{sse}\r\n", sse.len()).as_bytes()
        );
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn many_watchers_get_every_event_in_order_from_the_workers() {
        let hub = Hub::default();
        let subs: Vec<_> = (0..500).map(|_| hub.subscribe("s", None)).collect();
        for n in 1..=3 {
            hub.publish("s", &ended(n));
        }
        for sub in &subs {
            let mut got = Vec::new();
            while got.len() < 3 {
                match sub.sink.next() {
                    sink::Next::Frame(f, _) => got.push(f.id),
                    _ => {
                        tokio::time::timeout(std::time::Duration::from_secs(5), sub.sink.notified())
                            .await
                            .expect("woken")
                    }
                }
            }
            assert_eq!(got, [1, 2, 3]);
        }
    }
}
