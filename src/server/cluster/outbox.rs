//! Where a relayed hub's publishing goes (`hub::Relay`): queues, each
//! written to the database by one task in order, so a session's events
//! are numbered in the order they were published here while sessions on
//! different queues do not wait for each other.
//!
//! `publish` stays callable from sync code (it only queues); the event
//! reaches watchers, here too, once the database has numbered it and the
//! notification has come back (`cluster::listener`). A request's answer
//! waits until what it published is stored ([`Outbox::stored`], through
//! `cluster::stored_before_answer`): an acknowledged write's events are in
//! the database, for a watcher that reconnects anywhere, even if this
//! instance dies right after.

use super::payload::{self, ListFrame};
use super::EVENTS_CHANNEL;
use crate::server::agent::hub::{Outgoing, Relay};
use crate::server::store::cluster as store;
use sqlx::PgPool;
use std::hash::{Hash, Hasher};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;
use tokio::sync::{mpsc, watch};

tokio::task_local! {
    /// What the request being handled queued: (lane, its number there).
    pub(super) static PUBLISHED: Arc<Mutex<Vec<(usize, u64)>>>;
}

/// How many queues write at once: a session (and a workflow) always uses
/// the same one, so its order holds; more queues let more sessions be
/// written in parallel, each holding a connection while it writes.
pub const LANES: usize = 8;

/// How often a write that found its number taken (another instance
/// published on the same session at that moment) tries the next one;
/// each conflict means the other committed, so this is only a guard.
const CONFLICT_RETRIES: u32 = 100;

/// How often a write that failed otherwise (the database unreachable) is
/// tried again, waiting twice as long each time from [`FIRST_BACKOFF`]
/// (about 3 s in all); after that the event is dropped and logged, and
/// the watchers get a snapshot when they reconnect.
const FAILURE_RETRIES: u32 = 6;

/// The first wait after a failed write.
const FIRST_BACKOFF: Duration = Duration::from_millis(50);

/// The queues, each drained by its own task.
pub struct Outbox {
    lanes: Vec<Lane>,
}

/// One queue: what goes in, numbered, and how far its writer got.
struct Lane {
    tx: mpsc::UnboundedSender<(u64, Outgoing)>,
    /// How many were queued.
    queued: AtomicU64,
    /// How many were written (or given up on).
    written: watch::Receiver<u64>,
}

impl Outbox {
    /// Starts [`LANES`] writers on `db`; a session's first event is
    /// numbered after `base` (the hub's), so ids keep increasing across
    /// restarts.
    pub fn start(db: &PgPool, base: u64) -> Self {
        let base = i64::try_from(base).unwrap_or(i64::MAX / 2);
        let lanes = (0..LANES)
            .map(|_| {
                let (tx, rx) = mpsc::unbounded_channel();
                let (done, written) = watch::channel(0);
                tokio::spawn(drain(db.clone(), base, rx, done));
                Lane {
                    tx,
                    queued: AtomicU64::new(0),
                    written,
                }
            })
            .collect();
        Self { lanes }
    }

    /// Waits until everything in `marks` (lane, number) is written.
    pub async fn stored(&self, marks: &[(usize, u64)]) {
        for (lane, number) in marks {
            let mut written = self.lanes[*lane].written.clone();
            // An error means the writer is gone (the runtime is ending).
            let _ = written.wait_for(|done| done >= number).await;
        }
    }
}

impl Relay for Outbox {
    fn send(&self, out: Outgoing) {
        let key = match &out {
            Outgoing::Event { session, .. } | Outgoing::Close { session } => session,
            Outgoing::List(change) => &change.session,
            Outgoing::Workflow { id, .. } => id,
        };
        let mut hasher = std::collections::hash_map::DefaultHasher::new();
        key.hash(&mut hasher);
        let at = (hasher.finish() % self.lanes.len() as u64) as usize;
        let lane = &self.lanes[at];
        let number = lane.queued.fetch_add(1, Ordering::Relaxed) + 1;
        // Closed only when the runtime is going away.
        let _ = lane.tx.send((number, out));
        let _ = PUBLISHED.try_with(|published| {
            published
                .lock()
                .unwrap_or_else(|p| p.into_inner())
                .push((at, number));
        });
    }
}

/// Writes what comes on `rx`, in order, until the outbox is dropped,
/// telling `done` how far it got.
async fn drain(
    db: PgPool,
    base: i64,
    mut rx: mpsc::UnboundedReceiver<(u64, Outgoing)>,
    done: watch::Sender<u64>,
) {
    while let Some((number, out)) = rx.recv().await {
        write_retrying(&db, base, &out).await;
        done.send_replace(number);
    }
}

/// [`write`], again after a conflict or a failure, until it is written
/// or the retries are spent.
async fn write_retrying(db: &PgPool, base: i64, out: &Outgoing) {
    let (mut conflicts, mut failures) = (0, 0);
    let mut backoff = FIRST_BACKOFF;
    loop {
        let Err(err) = write(db, base, out).await else {
            return;
        };
        if store::is_conflict(&err) && conflicts < CONFLICT_RETRIES {
            conflicts += 1;
            continue;
        }
        if failures >= FAILURE_RETRIES {
            tracing::error!(error = %err, ?out, "a relayed event could not be stored; dropped");
            return;
        }
        tracing::warn!(error = %err, "storing a relayed event failed; trying again");
        failures += 1;
        tokio::time::sleep(backoff).await;
        backoff *= 2;
    }
}

/// Stores and notifies `out` (one statement, so one round trip).
async fn write(db: &PgPool, base: i64, out: &Outgoing) -> Result<(), sqlx::Error> {
    match out {
        Outgoing::Event {
            session,
            name,
            json,
        } => {
            let (head, tail) = payload::event_parts(session, name, json);
            store::append_event(db, session, name, json, base, EVENTS_CHANNEL, &head, &tail)
                .await?;
        }
        Outgoing::Close { session } => {
            store::notify(db, EVENTS_CHANNEL, &payload::close(session)).await?;
        }
        Outgoing::List(change) => {
            let frame = ListFrame {
                session: change.session.clone(),
                owners: change.owners,
                name: change.name.clone(),
                json: change.json.clone(),
            };
            match payload::list(&frame) {
                Some(text) => store::notify(db, EVENTS_CHANNEL, &text).await?,
                None => {
                    let owners = payload::owners_text(frame.owners);
                    store::store_frame(
                        db,
                        EVENTS_CHANNEL,
                        payload::LIST_STORED,
                        "list",
                        &frame.session,
                        &owners,
                        &frame.name,
                        &frame.json,
                    )
                    .await?;
                }
            }
        }
        Outgoing::Workflow { id, name, json } => match payload::workflow(id, name, json) {
            Some(text) => store::notify(db, EVENTS_CHANNEL, &text).await?,
            None => {
                store::store_frame(
                    db,
                    EVENTS_CHANNEL,
                    payload::WORKFLOW_STORED,
                    "workflow",
                    id,
                    "-",
                    name,
                    json,
                )
                .await?;
            }
        },
    }
    Ok(())
}
