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
//! - a credential that ended (a key revoked, an account disabled or given
//!   another role): every instance ends its streams
//!   (`accounts::cutoff`);
//! - periodic jobs run on one instance at a time ([`once`], an advisory
//!   lock).
//!
//! On SQLite there is no `Cluster` (`AppState::cluster` is `None`): the
//! hub delivers itself and [`once`] just runs the job.

mod health;
mod jobs;
pub mod listener;
pub mod order;
pub mod outbox;
pub mod payload;
mod replay;

pub use jobs::{once, prune, Job};
pub use replay::subscribe;

use crate::server::agent::hub::Hub;
use crate::server::store::cluster as store;
use crate::server::{AppState, ServerError};
use axum::extract::{Request, State};
use axum::middleware::Next;
use axum::response::Response;
use health::Health;
use sqlx::postgres::{PgListener, PgPoolOptions};
use sqlx::PgPool;
use std::sync::Arc;
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

    /// Tells every other instance to end what `holder` (`user:<id>`,
    /// `key:<id>`) holds open there (`accounts::cutoff`); a failure is
    /// logged, and an instance that missed it checks again when its
    /// listener reconnects.
    pub async fn cut_off(&self, holder: &str) {
        if let Err(e) = store::notify(&self.db, EVENTS_CHANNEL, &payload::cut_off(holder)).await {
            tracing::error!(error = %e, "telling other instances to end a credential's streams failed");
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
        self.health.connected()
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
