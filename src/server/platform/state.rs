//! The state every handler and server function shares.

use crate::domain::limits::MCP_SESSIONS_PER_CREDENTIAL;
use crate::server::agent::budget::Budgets;
use crate::server::agent::hub::Hub;
use crate::server::agent::rules::Rules;
use crate::server::auth::throttle::LoginThrottle;
use crate::server::http::mcp_sessions::McpSessions;
use crate::server::http::streams::StreamCounter;
use crate::server::platform::config::Config;
use crate::server::platform::db::Db;
use crate::server::platform::locks::{self, Guard, Locks};
use crate::server::ServerError;
use axum::extract::FromRef;
use leptos::config::LeptosOptions;
use std::sync::Arc;
use std::sync::RwLock;

/// Cheap to clone: a pool handle and `Arc`s.
#[derive(Clone)]
pub struct AppState {
    /// The database pool (SQLite or PostgreSQL); all persistence goes
    /// through it.
    pub db: Db,
    /// On SQLite, the lock that keeps a second instance off the file, held
    /// as long as any clone of the state lives.
    pub instance_lock: Option<Arc<std::fs::File>>,
    /// Settings read at start-up.
    pub config: Arc<Config>,
    /// What Leptos needs to render pages and serve the site root's files
    /// (each bundle's scripts are in `assets`).
    pub leptos_options: LeptosOptions,
    /// What pages link: the stylesheet and each browser bundle's scripts
    /// (from the site's hash files).
    pub assets: Arc<crate::server::http::assets::SiteAssets>,
    /// Server push to session watchers.
    pub hub: Arc<Hub>,
    /// This instance's part in a cluster of instances on one PostgreSQL
    /// database (`server::cluster`); `None` on SQLite.
    pub cluster: Option<Arc<crate::server::cluster::Cluster>>,
    /// Open event streams per session and per user, and MCP sessions per
    /// credential, for the caps (leased across instances in a cluster).
    pub streams: Arc<StreamCounter>,
    /// Recent sign-in attempts per account and address, per account and
    /// per address (counted as they start).
    pub login_throttle: Arc<LoginThrottle>,
    /// Permits for password hashing, one per core: a flood of sign-ins
    /// queues here instead of running hundreds of hashes (each tens of MB)
    /// at once.
    pub hashing: Arc<tokio::sync::Semaphore>,
    /// The time lessons run on (tests move it forward).
    pub clock: Arc<crate::server::platform::clock::Clock>,
    /// Cancelled when the server starts shutting down (ends MCP streams).
    pub shutdown: tokio_util::sync::CancellationToken,
    /// Each session's plugin tools, update windows and relayed calls.
    pub plugins: Arc<crate::server::agent::plugins::PluginRegistry>,
    /// Sessions' write windows and the counts across sessions (playground
    /// sessions per user, failed identity checks per account).
    pub budgets: Arc<Budgets>,
    /// The MCP sessions of `/api/sessions/{id}/mcp`, each owned by the
    /// agent session whose token opened it (capped, closed when it ends).
    pub session_mcp: Arc<McpSessions>,
    /// The MCP sessions of `/mcp`, each owned by the API key or admin
    /// that opened it (capped).
    pub workflow_mcp: Arc<McpSessions>,
    /// Connected MCP servers: which catalogue tools came from which, and
    /// the live connections calls are forwarded on.
    pub mcp_servers: Arc<crate::server::mcp_servers::Registry>,
    /// Held through a retention sweep, so the daily task and an admin's
    /// "sweep now" never run at once (`server::retention`).
    pub retention_lock: Arc<tokio::sync::Mutex<()>>,
    rules: Arc<RwLock<Arc<Rules>>>,
    /// Held across a reload's read and swap, so two reloads (a bindings
    /// save and an MCP server's import, say) cannot finish out of order and
    /// leave the older rules in force.
    rules_reload: Arc<tokio::sync::Mutex<()>>,
    /// Each session's call lock, held across instances on PostgreSQL.
    session_locks: Arc<Locks>,
    /// The locks of edits that build on the last (`manifests`: agents and
    /// vibes; `workflows`), held across instances on PostgreSQL.
    edit_locks: Arc<Locks>,
}

impl AppState {
    /// Wires a state from its parts; the Leptos options are derived from the
    /// configuration so there is a single source for addresses and paths.
    pub fn new(db: Db, config: Config) -> Self {
        let leptos_options = LeptosOptions::builder()
            .output_name("switchboard")
            .site_root(config.site_root.clone())
            .site_pkg_dir("pkg")
            .site_addr(config.addr)
            .build();
        // Each page's hydration scripts use its bundle's options instead.
        let assets =
            crate::server::http::assets::SiteAssets::read(&leptos_options, &config.site_root);
        // On PostgreSQL these count and lock in the database, for every
        // instance; on SQLite in this process.
        let login_throttle = Arc::new(LoginThrottle::for_db(&db));
        let budgets = Arc::new(Budgets::for_db(&db));
        let lock_pool = locks::lock_pool(&db);
        let session_locks = Arc::new(Locks::new("session", lock_pool.clone()));
        let edit_locks = Arc::new(Locks::new("edit", lock_pool));
        // Stream caps and MCP sessions per credential, counted (and in a
        // cluster leased) in one counter.
        let streams = Arc::new(StreamCounter::default());
        let mcp_idle = config.mcp_session_idle;
        let mcp_sessions = |endpoint| {
            Arc::new(McpSessions::new(
                endpoint,
                streams.clone(),
                MCP_SESSIONS_PER_CREDENTIAL,
                mcp_idle,
            ))
        };
        Self {
            db,
            instance_lock: None,
            config: Arc::new(config),
            leptos_options,
            assets: Arc::new(assets),
            hub: Arc::new(Hub::starting_at(event_id_base())),
            cluster: None,
            login_throttle,
            streams: streams.clone(),
            hashing: Arc::new(tokio::sync::Semaphore::new(
                std::thread::available_parallelism().map_or(2, usize::from),
            )),
            clock: Arc::default(),
            shutdown: tokio_util::sync::CancellationToken::new(),
            plugins: Arc::default(),
            budgets,
            session_mcp: mcp_sessions("session"),
            workflow_mcp: mcp_sessions("workflow"),
            mcp_servers: Arc::default(),
            retention_lock: Arc::default(),
            rules: Arc::new(RwLock::new(Arc::new(Rules::empty()))),
            rules_reload: Arc::default(),
            session_locks,
            edit_locks,
        }
    }

    /// The rules in force right now (cheap: one `Arc` clone).
    pub fn rules(&self) -> Arc<Rules> {
        self.rules.read().unwrap_or_else(|p| p.into_inner()).clone()
    }

    /// Rebuilds the rules from the database and returns the previous ones;
    /// in a cluster, every other instance is told to reload too.
    pub async fn reload_rules(&self) -> Result<Arc<Rules>, ServerError> {
        let before = self.load_rules().await?;
        if let Some(cluster) = &self.cluster {
            cluster.rules_changed().await;
        }
        Ok(before)
    }

    /// [`AppState::reload_rules`] on this instance only (what an instance
    /// told of another's change does).
    pub async fn load_rules(&self) -> Result<Arc<Rules>, ServerError> {
        let _one_at_a_time = self.rules_reload.lock().await;
        let fresh = Arc::new(Rules::load(&self.db).await?);
        let mut slot = self.rules.write().unwrap_or_else(|p| p.into_inner());
        Ok(std::mem::replace(&mut *slot, fresh))
    }

    /// Drops an ended session's lock so the map does not grow forever.
    pub fn forget_session_lock(&self, session: &str) {
        self.session_locks.forget(session);
    }

    /// How many sessions hold a call lock (ended ones never do).
    pub fn session_locks(&self) -> usize {
        self.session_locks.len()
    }

    /// Waits for the lock that serialises calls, results and state changes
    /// on one session, across every instance (`platform::locks`), and
    /// holds it until the guard drops.
    pub async fn lock_session(&self, session: &str) -> Result<Guard, ServerError> {
        self.session_locks.lock(session).await
    }

    /// Waits for the lock that serialises saves of agents and vibes (their
    /// rules span objects), across every instance.
    pub async fn lock_manifests(&self) -> Result<Guard, ServerError> {
        self.edit_locks.lock("manifests").await
    }

    /// Waits for the lock that serialises edits of workflow definitions
    /// (each builds on the last), across every instance.
    pub async fn lock_workflows(&self) -> Result<Guard, ServerError> {
        self.edit_locks.lock("workflows").await
    }
}

/// Where this server's event ids start: its start time in Unix
/// milliseconds × 10⁶ (room for a million events per session before the
/// next millisecond's start), so ids never repeat across restarts.
fn event_id_base() -> u64 {
    let ms = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_millis() as u64);
    ms.saturating_mul(1_000_000)
}

impl FromRef<AppState> for LeptosOptions {
    fn from_ref(state: &AppState) -> Self {
        state.leptos_options.clone()
    }
}
