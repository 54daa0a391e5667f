//! Several instances on one PostgreSQL database acting as one server
//! (`docs/architecture.md`, "Several instances"):
//!
//! - session events: a relayed hub's publishing is queued
//!   ([`outbox`]), numbered per session by the database as it is stored
//!   in `session_events` and announced with `NOTIFY` (the frame itself
//!   when it fits, [`payload`]); every instance's [`listener`] delivers it
//!   to its own hub with that number, once and in order ([`order`]),
//!   reading what it missed from the table;
//! - `Last-Event-ID` against any instance ([`subscribe`]): what the local
//!   ring does not reach is replayed from the table;
//! - the session list and workflow pages: the same channel;
//! - the rules: a change notifies a second channel, and every other
//!   instance reloads;
//! - periodic jobs run on one instance at a time ([`once`], an advisory
//!   lock).
//!
//! On SQLite there is no `Cluster` (`AppState::cluster` is `None`): the
//! hub delivers itself and [`once`] just runs the job.

pub mod listener;
pub mod order;
pub mod outbox;
pub mod payload;

use crate::domain::limits::REPLAY_MAX_BYTES;
use crate::domain::plugin::AVAILABILITY_EVENT;
use crate::server::agent::hub::{Frame, Hub, Subscription, REPLAY};
use crate::server::store::cluster as store;
use crate::server::{AppState, ServerError};
use axum::extract::{Request, State};
use axum::middleware::Next;
use axum::response::Response;
use sqlx::postgres::{PgListener, PgPoolOptions};
use sqlx::PgPool;
use std::future::Future;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Arc;
use std::time::Instant;
use tokio::sync::Notify;

/// The `NOTIFY` channel of session events, session-list and workflow
/// changes.
pub const EVENTS_CHANNEL: &str = "switchboard_events";

/// The `NOTIFY` channel of rules changes; the payload is the sending
/// instance's id, so it does not reload twice.
pub const RULES_CHANNEL: &str = "switchboard_rules";

/// How long stored events and frames are kept for receivers and replays
/// (a watcher reconnecting after longer gets a snapshot): an hour.
pub const KEEP_SECS: i64 = 3_600;

/// Connections of the cluster's own pool: one per outbox lane, and a few
/// for reading gaps and replays and holding job locks.
const POOL_CONNECTIONS: u32 = outbox::LANES as u32 + 4;

/// This instance's part in a cluster.
pub struct Cluster {
    db: PgPool,
    /// Where this instance's hub publishes.
    outbox: Arc<outbox::Outbox>,
    url: String,
    /// Random per process: this instance's rules notifications carry it.
    instance: String,
    health: Health,
    /// Another instance changed the rules: reload (coalesced).
    rules_wanted: Notify,
    /// The listener connected while joining, for [`start`]'s task: events
    /// are heard from the start, before the server serves.
    first_listener: std::sync::Mutex<Option<PgListener>>,
}

/// Whether `url` selects PostgreSQL (and so a cluster).
pub fn is_postgres(url: &str) -> bool {
    url.starts_with("postgres://") || url.starts_with("postgresql://")
}

/// Joins the cluster on `url` when it is a PostgreSQL URL (`None`
/// otherwise): from now on `hub`'s publishing is relayed. The database's
/// tables must be migrated already. Listening starts with [`start`].
pub async fn connect(url: &str, hub: &Hub) -> Result<Option<Arc<Cluster>>, ServerError> {
    if !is_postgres(url) {
        return Ok(None);
    }
    let db = PgPoolOptions::new()
        .max_connections(POOL_CONNECTIONS)
        .connect(url)
        .await?;
    let instance = format!("{:016x}", rand::random::<u64>());
    let listener = listener::connect(url, &instance).await?;
    let outbox = Arc::new(outbox::Outbox::start(&db, hub.base()));
    hub.relay_through(outbox.clone());
    let cluster = Cluster {
        db,
        outbox,
        url: url.to_owned(),
        instance,
        health: Health::default(),
        rules_wanted: Notify::new(),
        first_listener: std::sync::Mutex::new(Some(listener)),
    };
    cluster.health.up();
    Ok(Some(Arc::new(cluster)))
}

/// Starts listening (and reloading the rules when told to); returns the
/// tasks, for the caller to stop. Nothing on SQLite.
pub fn start(state: &AppState) -> Vec<tokio::task::JoinHandle<()>> {
    let Some(cluster) = state.cluster.clone() else {
        return Vec::new();
    };
    let reloader = {
        let (state, cluster) = (state.clone(), cluster.clone());
        tokio::spawn(async move {
            loop {
                cluster.rules_wanted.notified().await;
                if let Err(e) = state.load_rules().await {
                    tracing::error!(error = %e, "reloading rules changed elsewhere failed");
                }
            }
        })
    };
    vec![
        tokio::spawn(listener::run(state.clone(), cluster)),
        reloader,
    ]
}

impl Cluster {
    /// Tells every other instance to reload its rules; a failure is
    /// logged (the change itself is stored).
    pub async fn rules_changed(&self) {
        if let Err(e) = store::notify(&self.db, RULES_CHANNEL, &self.instance).await {
            tracing::error!(error = %e, "telling other instances of new rules failed");
        }
    }

    /// The event channel's state, for the health check.
    pub fn health(&self) -> serde_json::Value {
        self.health.report()
    }

    /// This instance's id among the cluster's (random per process; its
    /// listener's connection is `switchboard-listener-<id>`).
    pub fn instance(&self) -> &str {
        &self.instance
    }

    /// Whether the listener is connected.
    pub fn listening(&self) -> bool {
        self.health.connected.load(Ordering::Relaxed)
    }

    /// The listener [`connect`] made, once.
    fn take_first_listener(&self) -> Option<PgListener> {
        self.first_listener
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .take()
    }
}

/// Middleware: a request's answer waits until the events it published
/// are stored and notified (`outbox`), so a client that got its answer
/// finds them on any instance, and they survive this one dying. Nothing to
/// wait for on SQLite, or for a request that published nothing.
pub async fn stored_before_answer(
    State(state): State<AppState>,
    req: Request,
    next: Next,
) -> Response {
    let Some(cluster) = state.cluster.clone() else {
        return next.run(req).await;
    };
    let published = Arc::new(std::sync::Mutex::new(Vec::new()));
    let response = outbox::PUBLISHED
        .scope(published.clone(), next.run(req))
        .await;
    let marks = std::mem::take(&mut *published.lock().unwrap_or_else(|p| p.into_inner()));
    cluster.outbox.stored(&marks).await;
    response
}

/// Subscribes to `session` on this instance: [`Hub::subscribe`], with the
/// channel positioned from the database first when it does not know where
/// the session's numbering stands, and a `Last-Event-ID` older than the
/// local ring (or newer than what reached this instance yet) served from
/// `session_events`.
pub async fn subscribe(
    state: &AppState,
    session: &str,
    last_seen: Option<u64>,
) -> Result<Subscription, ServerError> {
    let hub = &state.hub;
    let Some(cluster) = &state.cluster else {
        return Ok(hub.subscribe(session, last_seen));
    };
    let here = hub.last_id(session);
    if here.is_none() || last_seen > here {
        hub.open_channel(session);
        let stored = store::last_seq(&cluster.db, session).await?;
        if let Some(stored) = stored.and_then(|s| u64::try_from(s).ok()) {
            hub.position(session, stored);
            // Events up to it are stored; deliver what has not come yet.
            let last = hub.last_id(session).unwrap_or(stored);
            if last < stored {
                listener::fill(hub, cluster, session, last, Some(stored)).await?;
            }
        }
    }
    let mut sub = hub.subscribe(session, last_seen);
    if let Some(seen) = last_seen.filter(|&seen| sub.needs_snapshot && seen < sub.snapshot_id) {
        if let Some(replay) = replay(cluster, session, seen, sub.snapshot_id).await? {
            sub.replay = replay;
            sub.history.clear();
            sub.needs_snapshot = false;
        }
    }
    if sub.needs_snapshot && sub.snapshot_id > 0 {
        sub.history = history(cluster, session, sub.snapshot_id).await?;
    }
    Ok(sub)
}

/// The kept events a late listener gets before its snapshot (the plugin's
/// availability updates, as `Hub::subscribe` keeps them from its ring), up
/// to `upto`, from the table: this instance's ring may have begun after
/// them.
async fn history(
    cluster: &Cluster,
    session: &str,
    upto: u64,
) -> Result<Vec<Arc<Frame>>, ServerError> {
    let upto = i64::try_from(upto).unwrap_or(i64::MAX);
    let rows = store::named_upto(
        &cluster.db,
        session,
        AVAILABILITY_EVENT,
        upto,
        REPLAY as i64,
    )
    .await?;
    Ok(rows
        .iter()
        .map(|r| Arc::new(Frame::new(r.seq as u64, &r.name, &r.json)))
        .collect())
}

/// `session`'s events after `seen` up to `upto` from the table, if they
/// are all there and within what a ring would hold; `None` means a
/// snapshot.
async fn replay(
    cluster: &Cluster,
    session: &str,
    seen: u64,
    upto: u64,
) -> Result<Option<Vec<Arc<Frame>>>, ServerError> {
    let to_i64 = |n: u64| i64::try_from(n).unwrap_or(i64::MAX);
    let limit = REPLAY as i64 + 1;
    let rows = store::events_after(
        &cluster.db,
        session,
        to_i64(seen),
        Some(to_i64(upto)),
        limit,
    )
    .await?;
    let seqs = rows
        .iter()
        .map(|r| u64::try_from(r.seq).unwrap_or_default());
    let bytes: usize = rows.iter().map(|r| r.json.len() + r.name.len()).sum();
    if rows.len() > REPLAY || bytes > REPLAY_MAX_BYTES || !order::complete(seen, upto, seqs) {
        return Ok(None);
    }
    Ok(Some(
        rows.iter()
            .map(|r| Arc::new(Frame::new(r.seq as u64, &r.name, &r.json)))
            .collect(),
    ))
}

/// A periodic job that runs on one instance at a time.
#[derive(Debug, Clone, Copy)]
pub enum Job {
    /// Ending idle sessions, deleting expired sign-ins and join codes
    /// (`startup::sweep`).
    IdleSweep,
    /// Opening sessions for due schedules (`triggers::schedule`).
    Scheduler,
    /// The daily retention sweep (`retention`).
    Retention,
}

impl Job {
    /// Its advisory lock key: "SWBD" and the job's number, so it does not
    /// collide with another application's locks on the same database.
    fn key(self) -> i64 {
        const PREFIX: i64 = 0x5357_4244 << 16;
        PREFIX
            | match self {
                Job::IdleSweep => 1,
                Job::Scheduler => 2,
                Job::Retention => 3,
            }
    }
}

/// Runs `work` unless another instance is running `job` right now (then
/// `None`): a transaction-scoped advisory lock, held until `work` is done
/// and released however it ends. On SQLite, always runs it.
pub async fn once<T>(
    state: &AppState,
    job: Job,
    work: impl Future<Output = T>,
) -> Result<Option<T>, ServerError> {
    let Some(cluster) = &state.cluster else {
        return Ok(Some(work.await));
    };
    let mut tx = cluster.db.begin().await?;
    if !store::try_lock(&mut tx, job.key()).await? {
        tracing::debug!(?job, "running on another instance; skipped here");
        return Ok(None);
    }
    let out = work.await;
    tx.commit().await?;
    Ok(Some(out))
}

/// Deletes stored events and frames older than [`KEEP_SECS`] (each open
/// session's newest event stays); nothing on SQLite.
pub async fn prune(state: &AppState) -> Result<u64, ServerError> {
    match &state.cluster {
        Some(cluster) => Ok(store::prune(&cluster.db, KEEP_SECS).await?),
        None => Ok(0),
    }
}

/// The listener's connection and the last notification it got.
struct Health {
    connected: AtomicBool,
    /// How many times the listener connected.
    connections: AtomicU64,
    started: Instant,
    /// Milliseconds after `started` of the last notification, plus one
    /// (0: none yet).
    heard: AtomicU64,
}

impl Default for Health {
    fn default() -> Self {
        Self {
            connected: AtomicBool::new(false),
            connections: AtomicU64::new(0),
            started: Instant::now(),
            heard: AtomicU64::new(0),
        }
    }
}

impl Health {
    /// The listener connected.
    fn up(&self) {
        self.connected.store(true, Ordering::Relaxed);
        self.connections.fetch_add(1, Ordering::Relaxed);
    }

    /// Whether the listener connected more than once: what was notified
    /// in between is to be read from the tables.
    fn reconnected(&self) -> bool {
        self.connections.load(Ordering::Relaxed) > 1
    }

    fn down(&self) {
        self.connected.store(false, Ordering::Relaxed);
    }

    fn heard(&self) {
        let ms = self.started.elapsed().as_millis() as u64;
        self.heard.store(ms + 1, Ordering::Relaxed);
    }

    /// `{"listening": …, "lastNotificationAgeMs": … | null}`.
    fn report(&self) -> serde_json::Value {
        let heard = self.heard.load(Ordering::Relaxed);
        let age = (heard > 0)
            .then(|| (self.started.elapsed().as_millis() as u64).saturating_sub(heard - 1));
        serde_json::json!({
            "listening": self.connected.load(Ordering::Relaxed),
            "lastNotificationAgeMs": age,
        })
    }
}
