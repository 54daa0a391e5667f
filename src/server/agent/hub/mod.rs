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
//!
//! With several instances (`server::cluster`), the hub hands what is
//! published to a [`Relay`] instead, and every instance's hub gets it back,
//! numbered by the database, through [`relay`]'s `deliver…` methods.

mod channel;
mod frame;
pub mod relay;
pub mod sink;

pub use channel::REPLAY;
pub use frame::Frame;
pub use relay::{Outgoing, Relay};

use crate::domain::agent_session::SessionEvent;
use crate::domain::ownership::SessionOwners;
use crate::domain::plugin::AVAILABILITY_EVENT;
use channel::{locked, Channel, BUFFER};
use sink::Sink;
use std::collections::HashMap;
use std::sync::{Arc, Mutex, OnceLock};
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

/// A change to the session list, as published: which session, whose it
/// is, and the event. Each watcher of the list gets only the changes about
/// sessions it may see, numbered for it alone (`server::http::rest::
/// event_streams::list_stream`), so neither a frame nor a gap in the ids
/// tells one teacher about another's session.
#[derive(Debug)]
pub struct ListChange {
    /// The session it is about.
    pub session: String,
    /// Whose the session is, when the hub knows (it learns at opening);
    /// `None` for a session opened before this process started, which a
    /// watcher's stream looks up.
    pub owners: Option<SessionOwners>,
    /// The SSE `event:` name (`opened`, `updated`, `ended`).
    pub name: String,
    /// The event's JSON.
    pub json: String,
}

/// All session channels, plus one for the session list.
pub struct Hub {
    sessions: Mutex<HashMap<String, Channel>>,
    list: Mutex<broadcast::Sender<Arc<ListChange>>>,
    /// Whose each open session is, for the list's watchers.
    owners: Mutex<HashMap<String, SessionOwners>>,
    list_ids: Mutex<u64>,
    workflows: Mutex<HashMap<String, broadcast::Sender<Arc<Frame>>>>,
    base: u64,
    /// Where publishing goes with several instances; unset, the hub
    /// delivers itself.
    relay: OnceLock<Arc<dyn Relay>>,
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
            owners: Mutex::new(HashMap::new()),
            list_ids: Mutex::new(base),
            workflows: Mutex::new(HashMap::new()),
            base,
            relay: OnceLock::new(),
        }
    }

    /// The id events start after.
    pub fn base(&self) -> u64 {
        self.base
    }
}

impl Hub {
    /// Publishes `event` on `session`'s stream. Alone, the hub numbers and
    /// delivers it at once; with several instances it is relayed and
    /// delivered (to this instance's watchers too) once the database has
    /// numbered it. Nothing waits for that: callers need no id.
    pub fn publish(&self, session: &str, event: &SessionEvent) {
        let json = serde_json::to_string(event).unwrap_or_default();
        self.publish_named(session, event.name(), &json);
    }

    /// Publishes `events` on `session`'s stream, in order, as one
    /// delivery: a watcher the publisher writes to itself gets them in one
    /// write, so a page applies a call's events (the call, the state it
    /// changed, its new agent and tools) in one go instead of drawing
    /// between them. With several instances they are relayed one by one,
    /// in the same order.
    pub fn publish_all(&self, session: &str, events: &[SessionEvent]) {
        let encoded: Vec<(&str, String)> = events
            .iter()
            .map(|e| (e.name(), serde_json::to_string(e).unwrap_or_default()))
            .collect();
        let named: Vec<(&str, &str)> = encoded.iter().map(|(n, j)| (*n, j.as_str())).collect();
        self.publish_frames(session, &named);
    }

    /// Publishes `json` as event `name` on `session`'s stream (an event
    /// whose shape is not a [`SessionEvent`], such as the plugin's
    /// `tool-availability-update`).
    pub fn publish_named(&self, session: &str, name: &str, json: &str) {
        self.publish_frames(session, &[(name, json)]);
    }

    /// Numbers and delivers `events` (name, JSON) on `session`'s stream,
    /// or hands them to the relay when several instances share it.
    fn publish_frames(&self, session: &str, events: &[(&str, &str)]) {
        if let Some(relay) = self.relay.get() {
            for (name, json) in events {
                relay.send(Outgoing::Event {
                    session: session.to_owned(),
                    name: (*name).to_owned(),
                    json: (*json).to_owned(),
                });
            }
            return;
        }
        let mut sessions = locked(&self.sessions);
        let channel = self.channel(&mut sessions, session);
        let mut frames = Vec::with_capacity(events.len());
        // Every push returns the same few watchers: the lock is held.
        let mut few = Vec::new();
        for (name, json) in events {
            let frame = Arc::new(Frame::new(channel.last_id + 1, name, json));
            few = channel.push(&frame);
            frames.push(frame);
        }
        drop(sessions);
        for sink in few {
            sink.offer(&frames);
        }
    }

    /// `session`'s channel, made if missing: numbered from the base when
    /// the hub numbers events itself, not positioned yet when relayed
    /// (`relay::Hub::position`).
    fn channel<'a>(
        &self,
        sessions: &'a mut HashMap<String, Channel>,
        session: &str,
    ) -> &'a mut Channel {
        let relayed = self.relay.get().is_some();
        sessions
            .entry(session.to_owned())
            .or_insert_with(|| Channel::new(self.base, !relayed))
    }

    /// Subscribes to `session`. With `last_seen`, replays what came after it
    /// if still kept; otherwise (or without it) asks for a snapshot first.
    /// Subscribing and collecting the replay happen under one lock, so no
    /// event is lost or sent twice between them.
    pub fn subscribe(&self, session: &str, last_seen: Option<u64>) -> Subscription {
        let mut sessions = locked(&self.sessions);
        let channel = self.channel(&mut sessions, session);
        let sink = Arc::new(if channel.positioned {
            Sink::new(channel.last_id)
        } else {
            Sink::unanchored()
        });
        channel.add_sink(&sink);
        let oldest = channel.ring.front().map_or(channel.last_id + 1, |f| f.id);
        match last_seen {
            Some(seen)
                if channel.positioned
                    && seen >= oldest.saturating_sub(1)
                    && seen <= channel.last_id =>
            {
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
        if let Some(relay) = self.relay.get() {
            relay.send(Outgoing::Close {
                session: session.to_owned(),
            });
            return;
        }
        self.close_here(session);
    }

    /// [`Hub::close`] on this instance only.
    pub fn close_here(&self, session: &str) {
        locked(&self.owners).remove(session);
        let channel = locked(&self.sessions).remove(session);
        if let Some(channel) = channel {
            channel.close();
        }
    }

    /// Every event published on `session` from now on, for a listener in
    /// this process (the MCP server's tool-change notices).
    pub fn listen(&self, session: &str) -> broadcast::Receiver<Arc<Frame>> {
        let mut sessions = locked(&self.sessions);
        self.channel(&mut sessions, session).tx.subscribe()
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

    /// Notes whose open session `session` is, for the list's watchers
    /// (forgotten when it closes).
    pub fn know_owners(&self, session: &str, owners: SessionOwners) {
        locked(&self.owners).insert(session.to_owned(), owners);
    }

    /// Publishes a change of session `session` to the list (`opened`,
    /// `updated`, `ended`), with whose it is if known.
    pub fn publish_list(&self, session: &str, change: &serde_json::Value) {
        let name = change
            .get("type")
            .and_then(serde_json::Value::as_str)
            .unwrap_or("message");
        let owners = locked(&self.owners).get(session).copied();
        let change = ListChange {
            session: session.to_owned(),
            owners,
            name: name.to_owned(),
            json: change.to_string(),
        };
        match self.relay.get() {
            Some(relay) => relay.send(Outgoing::List(change)),
            None => self.deliver_list(change),
        }
    }

    /// Publishes `json` as event `name` to the open settings pages of
    /// workflow `id` (`workflow_changed`). Kept apart from session
    /// channels: nothing is replayed (a page that reconnects reads the
    /// definition again) and no session count includes them.
    pub fn publish_workflow(&self, id: &str, name: &str, json: &str) {
        match self.relay.get() {
            Some(relay) => relay.send(Outgoing::Workflow {
                id: id.to_owned(),
                name: name.to_owned(),
                json: json.to_owned(),
            }),
            None => self.deliver_workflow(id, name, json),
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

    /// Subscribes to session-list changes (every session's: the watcher's
    /// stream filters them).
    pub fn subscribe_list(&self) -> broadcast::Receiver<Arc<ListChange>> {
        locked(&self.list).subscribe()
    }
}

#[cfg(test)]
mod tests;
