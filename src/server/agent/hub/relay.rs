//! The hub's side of several instances (`server::cluster`): what it hands
//! over instead of delivering ([`Outgoing`], through a [`Relay`]), and
//! how what comes back, numbered by the database, reaches this instance's
//! watchers (`deliver…`), each event once and in order ([`order::admit`]).
//!
//! A relayed hub keeps a channel only for sessions watched or listened to
//! here; events of other sessions are not kept (a watcher arriving later
//! positions its channel from the database, and a `Last-Event-ID` older
//! than the ring is replayed from there).

use super::channel::locked;
use super::{Frame, Hub, ListChange};
use crate::server::cluster::order::{self, Admit};
use std::sync::Arc;

/// What a relayed hub hands over instead of delivering it.
#[derive(Debug)]
pub enum Outgoing {
    /// An event on a session's stream.
    Event {
        /// The session.
        session: String,
        /// The SSE `event:` name.
        name: String,
        /// The event's JSON.
        json: String,
    },
    /// The session ended: close its channels after its events.
    Close {
        /// The session.
        session: String,
    },
    /// A change to the session list.
    List(ListChange),
    /// A workflow definition's change, for its settings pages.
    Workflow {
        /// The workflow.
        id: String,
        /// The SSE `event:` name.
        name: String,
        /// The event's JSON.
        json: String,
    },
}

/// Takes what a hub publishes and brings it to every instance's hub
/// (`server::cluster::outbox`). Called from sync code, so it must not
/// block: it queues.
pub trait Relay: Send + Sync {
    /// Queues `out`, after everything queued before it for the same
    /// session or workflow.
    fn send(&self, out: Outgoing);
}

/// What became of a relayed event handed to [`Hub::deliver`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Delivery {
    /// Delivered to the channel's watchers.
    Delivered,
    /// Nobody here watches the session: not kept.
    NoChannel,
    /// Already delivered: dropped.
    Duplicate,
    /// Events after `after` are missing: read them first.
    Gap {
        /// The last event delivered.
        after: u64,
    },
}

impl Hub {
    /// From now on, what is published goes to `relay`; false if a relay
    /// was set already.
    pub fn relay_through(&self, relay: Arc<dyn Relay>) -> bool {
        self.relay.set(relay).is_ok()
    }

    /// What [`Hub::deliver`] would do with event `id` of `session`, without
    /// doing it (`None`: no channel here).
    pub fn admits(&self, session: &str, id: u64) -> Option<Admit> {
        let sessions = locked(&self.sessions);
        let channel = sessions.get(session)?;
        Some(order::admit(
            channel.positioned.then_some(channel.last_id),
            id,
        ))
    }

    /// Delivers relayed event `id` (its number from the database) of
    /// `session` to the watchers here, if it is the next one.
    pub fn deliver(&self, session: &str, id: u64, name: &str, json: &str) -> Delivery {
        let mut sessions = locked(&self.sessions);
        let Some(channel) = sessions.get_mut(session) else {
            return Delivery::NoChannel;
        };
        match order::admit(channel.positioned.then_some(channel.last_id), id) {
            Admit::Duplicate => return Delivery::Duplicate,
            Admit::Gap { after } => return Delivery::Gap { after },
            Admit::Next => {}
        }
        let frame = Arc::new(Frame::new(id, name, json));
        let few = channel.push(&frame);
        drop(sessions);
        for sink in few {
            sink.offer(std::slice::from_ref(&frame));
        }
        Delivery::Delivered
    }

    /// Makes sure `session` has a channel here (not positioned if new), so
    /// no event is skipped while its position is read from the database.
    pub fn open_channel(&self, session: &str) {
        let mut sessions = locked(&self.sessions);
        self.channel(&mut sessions, session);
    }

    /// Where `session`'s numbering stands, read from the database (the
    /// newest event stored): taken by a channel that does not know yet.
    pub fn position(&self, session: &str, last: u64) {
        let mut sessions = locked(&self.sessions);
        let channel = self.channel(&mut sessions, session);
        if !channel.positioned {
            channel.last_id = last;
            channel.positioned = true;
        }
    }

    /// The last event delivered on `session` here, if its channel is
    /// positioned.
    pub fn last_id(&self, session: &str) -> Option<u64> {
        let sessions = locked(&self.sessions);
        sessions
            .get(session)
            .filter(|c| c.positioned)
            .map(|c| c.last_id)
    }

    /// Every positioned channel here with its last event: what a listener
    /// that lost its connection reads the table after.
    pub fn positions(&self) -> Vec<(String, u64)> {
        locked(&self.sessions)
            .iter()
            .filter(|(_, c)| c.positioned)
            .map(|(id, c)| (id.clone(), c.last_id))
            .collect()
    }

    /// Every session with a channel here.
    pub fn channel_ids(&self) -> Vec<String> {
        locked(&self.sessions).keys().cloned().collect()
    }

    /// Sends a session-list change to this instance's watchers of the list.
    pub fn deliver_list(&self, change: ListChange) {
        let _ = locked(&self.list).send(Arc::new(change));
    }

    /// Sends a workflow's change to this instance's open settings pages of
    /// it, numbered here.
    pub fn deliver_workflow(&self, id: &str, name: &str, json: &str) {
        let mut ids = locked(&self.list_ids);
        *ids += 1;
        if let Some(tx) = locked(&self.workflows).get(id) {
            let _ = tx.send(Arc::new(Frame::new(*ids, name, json)));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::server::agent::hub::sink::Next;
    use std::sync::Mutex;

    /// Keeps what a hub hands over.
    #[derive(Default)]
    struct Kept(Mutex<Vec<String>>);

    impl Relay for Kept {
        fn send(&self, out: Outgoing) {
            self.0.lock().unwrap().push(format!("{out:?}"));
        }
    }

    fn relayed() -> (Hub, Arc<Kept>) {
        let hub = Hub::starting_at(5_000);
        let kept = Arc::new(Kept::default());
        assert!(hub.relay_through(kept.clone()));
        (hub, kept)
    }

    fn ids(sink: &super::super::sink::Sink) -> Vec<u64> {
        let mut out = Vec::new();
        while let Next::Frame(f, _) = sink.next() {
            out.push(f.id);
        }
        out
    }

    #[test]
    fn a_relayed_hub_hands_over_instead_of_delivering() {
        let (hub, kept) = relayed();
        let sub = hub.subscribe("s", None);
        hub.publish_named("s", "e", "{}");
        hub.publish_list("s", &serde_json::json!({"type": "opened"}));
        hub.publish_workflow("w", "workflow_changed", "{}");
        hub.close("s");
        assert_eq!(kept.0.lock().unwrap().len(), 4);
        assert!(
            ids(&sub.sink).is_empty(),
            "nothing delivered before it comes back"
        );
        assert_eq!(hub.live_sessions(), 1, "closed when the close comes back");
    }

    #[test]
    fn relayed_events_reach_watchers_with_their_own_numbers_once_in_order() {
        let (hub, _) = relayed();
        assert_eq!(hub.deliver("s", 7, "e", "{}"), Delivery::NoChannel);
        hub.open_channel("s");
        hub.position("s", 41);
        let sub = hub.subscribe("s", None);
        assert_eq!(sub.snapshot_id, 41);
        assert_eq!(hub.deliver("s", 42, "e", "{}"), Delivery::Delivered);
        assert_eq!(hub.deliver("s", 42, "e", "{}"), Delivery::Duplicate);
        assert_eq!(hub.deliver("s", 44, "e", "{}"), Delivery::Gap { after: 42 });
        assert_eq!(hub.deliver("s", 43, "e", "{}"), Delivery::Delivered);
        assert_eq!(hub.deliver("s", 44, "e", "{}"), Delivery::Delivered);
        assert_eq!(ids(&sub.sink), [42, 43, 44]);
        assert_eq!(hub.positions(), [("s".to_owned(), 44)]);
    }

    #[test]
    fn a_channel_positioned_by_an_event_keeps_it_over_an_older_reading() {
        let (hub, _) = relayed();
        hub.open_channel("s");
        assert_eq!(hub.last_id("s"), None);
        assert_eq!(hub.deliver("s", 12, "e", "{}"), Delivery::Delivered);
        hub.position("s", 11);
        assert_eq!(hub.last_id("s"), Some(12));
    }

    #[test]
    fn a_watcher_before_any_event_gets_a_snapshot_then_the_first_event() {
        let (hub, _) = relayed();
        let sub = hub.subscribe("s", Some(0));
        assert!(sub.needs_snapshot);
        hub.deliver("s", 9_001, "e", "{}");
        assert_eq!(ids(&sub.sink), [9_001]);
        hub.close_here("s");
        assert!(matches!(sub.sink.next(), Next::Closed));
    }
}
