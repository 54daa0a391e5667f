//! Plugin tools at run time: each session's plugin set (an overlay on the
//! rules, never part of them, so one session's tools never reach another
//! or re-announce anything elsewhere), its checked schemas, the limits on
//! changing it, and the relay that carries an agent's call of a plugin
//! tool to the plugin and its answer back.
//!
//! A change is planned by `domain::plugin` (each tool checked alone), the
//! schemas checked off the async threads (`checked`: compiled then, or by
//! their first call), then stored and swapped in
//! under the session's call lock, so a call is always checked against one
//! whole set. Watchers and the agent get `tool-availability-update` (and
//! `tools_changed` when the available list changed) on the session stream.
//!
//! Pieces: the registry here; `change` (registrations and patches),
//! `relay` (calls to the plugin and its answers), `waiting` (the plugin
//! listeners and the calls waiting for them), `session_relay` (one
//! session's waiting calls and frame ids, offered again to a stream that
//! connects), `offer` (a call as the plugin is told of it), `presence`
//! (whether a plugin is connected), `across` (all of it across instances
//! on PostgreSQL) and `notice` (what instances tell each other),
//! `metadata`, `checked` (a tool's schema, checked, compiled when needed),
//! `shared` (checked schemas shared by sessions holding the same text)
//! and `text_key` (a schema as a key by its text).

mod across;
mod change;
mod checked;
mod metadata;
mod notice;
mod offer;
mod presence;
mod relay;
mod session_relay;
mod shared;
mod text_key;
mod waiting;

pub use across::{Heard, CHANNEL as RELAY_CHANNEL};
pub use change::{change, Change, ChangeAnswer};
pub use metadata::{metadata, API_VERSION};
pub use offer::CALL_EVENT;
pub use presence::{connected, stopped, HEARTBEAT};
pub use relay::{answer, relay};
pub use session_relay::RECONNECT_GRACE_MS;
pub use waiting::{ListenGuard, Listening, Relays};

use crate::domain::plugin::{PluginSet, Schema};
use crate::server::store::plugins as store;
use crate::server::{AppState, ServerError};
use checked::CheckedSchema;
use serde_json::Value;
use std::collections::HashMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, OnceLock, RwLock};
use tokio::sync::mpsc;

/// One session's plugin as in force: the set, a checked schema per tool,
/// and live use counts (the set's own counts are as of its last change).
pub struct Loaded {
    /// What the plugin registered.
    pub set: PluginSet,
    schemas: HashMap<String, Arc<CheckedSchema>>,
    usage: HashMap<String, AtomicU64>,
}

impl Loaded {
    fn new(set: PluginSet, schemas: HashMap<String, Arc<CheckedSchema>>) -> Self {
        let usage = set
            .tools
            .iter()
            .map(|t| (t.definition.name.clone(), AtomicU64::new(t.usage_count)))
            .collect();
        Self {
            set,
            schemas,
            usage,
        }
    }

    /// The set with its tools' use counts as of now.
    pub fn current(&self) -> PluginSet {
        let mut set = self.set.clone();
        for tool in &mut set.tools {
            if let Some(n) = self.usage.get(&tool.definition.name) {
                tool.usage_count = n.load(Ordering::Relaxed);
            }
        }
        set
    }

    /// The schemas (as JSON text) this set has checked, so a change
    /// checks only new ones.
    pub fn checked_schemas(&self) -> foldhash::HashSet<&str> {
        self.set
            .tools
            .iter()
            .filter(|t| self.schemas.contains_key(&t.definition.name))
            .map(|t| t.definition.parameters.json())
            .collect()
    }

    /// Checks `arguments` against plugin tool `tool`'s schema (compiling
    /// it, if no call has yet).
    pub fn check_arguments(&self, tool: &str, arguments: &Value) -> Result<(), String> {
        match self.schemas.get(tool) {
            Some(v) => v.check_arguments(arguments),
            None => Ok(()),
        }
    }
}

/// Every session's plugin overlay, plugin listeners and calls waiting for
/// an answer (the update window is one of `budget::Budgets`).
#[derive(Default)]
pub struct PluginRegistry {
    sets: RwLock<HashMap<String, Arc<Loaded>>>,
    relays: Arc<Relays>,
    /// In a cluster, where the listener queues what it hears on
    /// [`RELAY_CHANNEL`] (`across`).
    heard: OnceLock<mpsc::UnboundedSender<Heard>>,
}

impl PluginRegistry {
    /// `session`'s plugin, if it registered one.
    pub fn get(&self, session: &str) -> Option<Arc<Loaded>> {
        self.sets
            .read()
            .unwrap_or_else(|p| p.into_inner())
            .get(session)
            .cloned()
    }

    /// Sessions with a plugin here.
    fn sessions(&self) -> Vec<String> {
        self.sets
            .read()
            .unwrap_or_else(|p| p.into_inner())
            .keys()
            .cloned()
            .collect()
    }

    fn put(&self, session: &str, loaded: Arc<Loaded>) {
        self.sets
            .write()
            .unwrap_or_else(|p| p.into_inner())
            .insert(session.to_owned(), loaded);
    }

    /// Forgets an ended session: its set and listeners (their
    /// streams end); calls still waiting get "session ended".
    pub fn forget(&self, session: &str) {
        self.sets
            .write()
            .unwrap_or_else(|p| p.into_inner())
            .remove(session);
        self.relays.forget(session);
    }

    /// Each session's plugin listeners and the calls waiting for them.
    pub fn relays(&self) -> &Arc<Relays> {
        &self.relays
    }
}

/// Starts relaying plugin calls across instances (PostgreSQL): the task
/// handling what the listener hears on [`RELAY_CHANNEL`] and the one
/// writing this instance's plugin streams; returns them, for the caller to
/// stop. Nothing on SQLite.
pub fn start(state: &AppState) -> Vec<tokio::task::JoinHandle<()>> {
    let Some(cluster) = &state.cluster else {
        return Vec::new();
    };
    let (heard, queue) = mpsc::unbounded_channel();
    let _ = state.plugins.heard.set(heard);
    let (changed, writes) = mpsc::unbounded_channel();
    state.plugins.relays.tell_presence(changed);
    vec![
        tokio::spawn(across::handle_all(state.clone(), queue)),
        tokio::spawn(presence::write(
            state.clone(),
            cluster.instance().to_owned(),
            writes,
        )),
    ]
}

/// The cluster's listener heard `payload` on [`RELAY_CHANNEL`]: queued
/// for [`start`]'s task, so the listener goes on at once.
pub fn heard(state: &AppState, payload: &str) {
    if let Some(queue) = state.plugins.heard.get() {
        let _ = queue.send(Heard::Notice(payload.to_owned()));
    }
}

/// The cluster's listener reconnected: what it missed is read again.
pub fn heard_again(state: &AppState) {
    if let Some(queue) = state.plugins.heard.get() {
        let _ = queue.send(Heard::Recover);
    }
}

/// Opens a plugin stream of `session` here: the calls waiting for its
/// plugin (on every instance, in a cluster) first, then new ones.
pub async fn listen(state: &AppState, session: &str) -> Result<Listening, ServerError> {
    if state.cluster.is_some() {
        return across::listen(state, session).await;
    }
    Ok(state
        .plugins
        .relays
        .listen(session, state.hub.base(), &state.clock))
}

/// `session` ended: in a cluster, its relayed calls and stream counts go
/// and every instance forgets its plugin (`PluginRegistry::forget` here).
pub async fn session_ended(state: &AppState, session: &str) {
    across::session_ended(state, session).await;
}

/// Loads every open session's plugin at start-up, checking its schemas.
pub async fn load(state: &AppState) -> Result<usize, ServerError> {
    let all = store::open_sessions(&state.db).await?;
    let count = all.len();
    for (session, set) in all {
        let schemas: Vec<(String, Schema)> = set
            .tools
            .iter()
            .map(|t| (t.definition.name.clone(), t.definition.parameters.clone()))
            .collect();
        let checked = check_all(schemas).await?;
        let schemas = checked
            .into_iter()
            .filter_map(|(name, v)| v.ok().map(|v| (name, v)))
            .collect();
        state
            .plugins
            .put(&session, Arc::new(Loaded::new(set, schemas)));
    }
    Ok(count)
}

/// Checked schemas, each with the key it came with (a tool's name, a
/// schema's text).
type Checked<K> = Vec<(K, Result<Arc<CheckedSchema>, String>)>;

/// Checks schemas off the async threads (`CheckedSchema::check`: compiling
/// those that must be), split over the machine's cores; each result keeps
/// the key it came with. A schema some session already holds checked (the
/// same text) is not checked again (`shared`). The parts run on tokio's
/// blocking pool, whose threads are kept: starting threads for each
/// registration cost their stacks' page faults every time. Each part also
/// reads its schemas' shapes, which the registration's plan checks next on
/// one thread (kept with each schema), and enters what it checked in the
/// process's table itself: a thousand schemas' texts hashed and copied
/// there were a millisecond of the request's own thread.
pub(crate) async fn check_all<K: Send + 'static>(
    schemas: Vec<(K, Schema)>,
) -> Result<Checked<K>, ServerError> {
    fn check<K>(chunk: Vec<(K, Schema)>) -> Checked<K> {
        let checked: Checked<K> = chunk
            .into_iter()
            .map(|(key, schema)| {
                // Its error, if any, is the plan's to report.
                let _ = schema.shape();
                (key, CheckedSchema::check(schema).map(Arc::new))
            })
            .collect();
        shared::remember(checked.iter().filter_map(|(_, v)| v.as_ref().ok()));
        checked
    }
    let (known, missing) = shared::split(schemas);
    let cores = std::thread::available_parallelism().map_or(1, usize::from);
    let parts = if missing.len() < 64 { 1 } else { cores };
    let size = missing.len().div_ceil(parts).max(1);
    let mut rest = missing;
    let mut tasks = Vec::with_capacity(parts);
    while !rest.is_empty() {
        let tail = rest.split_off(size.min(rest.len()));
        let chunk = std::mem::replace(&mut rest, tail);
        tasks.push(tokio::task::spawn_blocking(move || check(chunk)));
    }
    let mut out: Checked<K> = known.into_iter().map(|(k, v)| (k, Ok(v))).collect();
    for task in tasks {
        out.extend(task.await?);
    }
    Ok(out)
}

/// Whether `tool` is one of `session`'s plugin tools, and the plugin's type.
pub fn plugin_of(state: &AppState, session: &str, tool: &str) -> Option<(Arc<Loaded>, bool)> {
    let loaded = state.plugins.get(session)?;
    let active = loaded.set.tool(tool)?.status == crate::domain::plugin::ToolStatus::Active;
    Some((loaded, active))
}
