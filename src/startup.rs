//! The one start-up path: configuration → database (with migrations) →
//! demo data → rules → router → listener, then serving until shutdown.
//!
//! `main` and the HTTP tests (`tests/api`) both start the app through
//! [`Application::build`], so a test runs exactly what production runs: the
//! same seeding, the same rules, the same middleware.
//!
//! This is the composition root, the only module that sees every layer: it
//! mounts the UI's pages (`crate::app`) next to the server's own routes,
//! which keeps `server` free of imports from the layers above it.

use crate::app::{bundle_for, shell, App};
use crate::domain::assets::Bundle;
use crate::server::platform::config::Config;
use crate::server::seed::SeededAccounts;
use crate::server::{
    agent, catalogue::bindings, cluster, http::router, platform::db, platform::tokens, seed, store,
    AppState, ServerError,
};
use axum::http::request::Parts;
use axum::Router;
use leptos::prelude::{provide_context, use_context};
use leptos_axum::{
    file_and_error_handler_with_context, generate_route_list, AxumRouteListing, LeptosRoutes,
};
use std::future::Future;
use std::net::SocketAddr;
use std::sync::{Arc, OnceLock};
use std::time::Duration;
use tokio::net::TcpListener;

/// How often sessions idle past `SESSION_IDLE_MINUTES` are ended and
/// expired sign-ins deleted.
const SWEEP_EVERY: Duration = Duration::from_secs(30);

/// A started application: database ready, demo data seeded, rules loaded and
/// the listener bound (so its address is known before it serves).
pub struct Application {
    state: AppState,
    listener: TcpListener,
    seeded: Option<SeededAccounts>,
}

impl Application {
    /// Opens (and migrates) the database, seeds a new one, loads the rules in
    /// force and binds `config.addr` (port 0 picks a free port).
    pub async fn build(config: Config) -> Result<Self, ServerError> {
        let opened = db::open(&config.database_url, &config.database_pool).await?;
        let mut state = AppState::new(opened.pool, config);
        state.instance_lock = opened.instance_lock;
        // On PostgreSQL, the instances share events, rules and jobs.
        state.cluster = cluster::connect(&state.config.database_url, &state.hub).await?;
        let seeded = seed_new_database(&state).await?;
        state.reload_rules().await?;
        crate::server::mcp_servers::load(&state).await?;
        agent::sessions::expire_idle(&state).await?;
        let plugins = agent::plugins::load(&state).await?;
        tracing::debug!(plugins, "open sessions' plugin tools loaded");
        let purged = store::auth_sessions::purge_expired(&state.db).await?;
        tracing::debug!(purged, "expired sign-in sessions removed");
        // The BPE table takes a moment to load: do it before the first
        // preview asks, off the async threads.
        tokio::task::spawn_blocking(tokens::warm_up);
        let addr = state.config.addr;
        let listener = TcpListener::bind(addr)
            .await
            .map_err(|e| ServerError::Config(format!("cannot listen on {addr}: {e}")))?;
        Ok(Self {
            state,
            listener,
            seeded,
        })
    }

    /// The address it listens on.
    pub fn address(&self) -> SocketAddr {
        self.listener.local_addr().unwrap_or(self.state.config.addr)
    }

    /// The shared state (tests reach the database through it).
    pub fn state(&self) -> &AppState {
        &self.state
    }

    /// The demo accounts created by this start, if the database was new, for
    /// printing once; `None` the second time it is asked.
    pub fn take_seeded_accounts(&mut self) -> Option<SeededAccounts> {
        self.seeded.take()
    }

    /// Serves until `shutdown` resolves, sweeping idle sessions and expired
    /// sign-ins every [`SWEEP_EVERY`] and running the start triggers'
    /// scheduler and the daily retention sweep meanwhile; then ends the event streams
    /// and lets in-flight requests finish, for at most
    /// `SHUTDOWN_GRACE_SECONDS` (after that, open connections are dropped).
    pub async fn run_until_stopped(
        self,
        shutdown: impl Future<Output = ()> + Send + 'static,
    ) -> std::io::Result<()> {
        // Plugin calls relayed between instances (PostgreSQL), ready
        // before the listener hears of them.
        let relaying = agent::plugins::start(&self.state);
        // Other instances' events, list and rules changes (PostgreSQL).
        let mut listening = cluster::start(&self.state);
        // Stream caps across the instances (PostgreSQL): slots leased in
        // the database, given back when the server stops.
        if let Some(cluster) = &self.state.cluster {
            listening.push(self.state.streams.lease_from(
                self.state.db.clone(),
                cluster.instance().to_owned(),
                self.state.shutdown.clone(),
            ));
        }
        let sweeper = tokio::spawn(sweep(self.state.clone()));
        // Workflows whose start trigger is a schedule open their sessions
        // from here (`triggers::schedule`: at most once per due time).
        let scheduler = tokio::spawn(crate::server::triggers::schedule::run(self.state.clone()));
        // Connected MCP servers are kept connected from here
        // (`mcp_servers::client`: back-off, `tools/list_changed`).
        let upstreams = tokio::spawn(crate::server::mcp_servers::client::supervise(
            self.state.clone(),
        ));
        // …and their admins' pages told of every change
        // (`mcp_servers::health`).
        let health = tokio::spawn(crate::server::mcp_servers::health::announce(
            self.state.clone(),
        ));
        // Sessions past DATA_RETENTION_DAYS are purged from here, daily
        // (`retention`: the last sweep is kept, so restarts do not skip it).
        let retention = tokio::spawn(crate::server::retention::run(self.state.clone()));
        let hub = self.state.hub.clone();
        let state = self.state.clone();
        let grace = self.state.config.shutdown_grace;
        let (stopping, stopped) = tokio::sync::oneshot::channel::<()>();
        let stop_streams = self.state.shutdown.clone();
        let shutdown = async move {
            shutdown.await;
            stop_streams.cancel();
            let _ = stopping.send(());
        };
        let header_read_timeout = self.state.config.header_read_timeout;
        let served = crate::server::serve(
            self.listener,
            app(self.state),
            hub,
            header_read_timeout,
            shutdown,
        );
        // After the signal, open requests get `grace` to finish; then the
        // remaining connections are dropped so a stop never hangs.
        let deadline = async move {
            match stopped.await {
                Ok(()) => tokio::time::sleep(grace).await,
                Err(_) => std::future::pending().await,
            }
        };
        let result = tokio::select! {
            result = served => result,
            () = deadline => {
                tracing::warn!(?grace, "shutdown grace period over; dropping open connections");
                Ok(())
            }
        };
        sweeper.abort();
        scheduler.abort();
        upstreams.abort();
        health.abort();
        retention.abort();
        listening.iter().for_each(|task| task.abort());
        relaying.iter().for_each(|task| task.abort());
        // Its plugin streams are closed: other instances count the
        // reconnect grace from now.
        agent::plugins::stopped(&state).await;
        result
    }
}

/// Gives a new database its catalogue, first bindings (the configured file
/// or the demo default), demo accounts and, unless switched off, the demo
/// lessons, and an older one's todo tools their current contracts. Returns
/// the accounts it created; does nothing on a database that already has
/// them.
async fn seed_new_database(state: &AppState) -> Result<Option<SeededAccounts>, ServerError> {
    bindings::seed_catalogue(&state.db).await?;
    crate::server::catalogue::seed_missing(
        &state.db,
        &crate::domain::actor::Actor::system("Workflow steps"),
        vec![seed::catalogue::step_tool()],
    )
    .await?;
    bindings::seed_bindings(&state.db, state.config.bindings_file.as_deref()).await?;
    if !crate::server::vibes::manifests::seed_from_dir(state).await? {
        crate::server::vibes::seed_demo(state).await?;
    }
    seed::todo_contracts::upgrade(&state.db).await?;
    let accounts = seed::seed_demo_accounts(state).await?;
    if accounts.is_some() && state.config.demo_lessons {
        seed::seed_demo_lessons(state).await?;
    }
    Ok(accounts)
}

/// The page routes, listed once per process.
///
/// Listing runs the app with resource loading switched off through a
/// process-wide flag in `leptos_server`; a page rendered anywhere in the
/// process while that flag is up waits forever on its data (leptos issue
/// #4773). Listing once, before any app serves, means no render can overlap
/// it, even when one process starts several apps (the HTTP tests do).
fn page_routes() -> Vec<AxumRouteListing> {
    static ROUTES: OnceLock<Vec<AxumRouteListing>> = OnceLock::new();
    ROUTES.get_or_init(|| generate_route_list(App)).clone()
}

/// What every page render gets besides Leptos' own context: the shared
/// state, and the nonce the security policy of this response names (it
/// replaces the one Leptos made up, so the hydration scripts carry it).
fn page_context(state: &AppState) {
    provide_context(state.clone());
    if let Some(nonce) = use_context::<Parts>().and_then(|parts| router::page_nonce(&parts)) {
        provide_context(nonce);
    }
}

/// The whole application: the server's routes and the UI's pages and server
/// functions, inside the middleware every request passes through.
pub fn app(state: AppState) -> Router {
    let page_state = state.clone();
    let fallback_state = state.clone();
    let assets = state.assets.clone();
    let fallback_assets = state.assets.clone();
    let pages = Router::new()
        .leptos_routes_with_context(
            &state,
            page_routes(),
            move || page_context(&page_state),
            move || {
                // The page's group's bundle: its islands and no others.
                let path = use_context::<Parts>().map(|parts| parts.uri.path().to_owned());
                let bundle = bundle_for(path.as_deref().unwrap_or("/"));
                shell(assets.scripts(bundle).clone(), &assets.stylesheet)
            },
        )
        .fallback(file_and_error_handler_with_context::<AppState, _>(
            move || page_context(&fallback_state),
            // A page that is not there has no islands; any bundle does.
            move |_| {
                let scripts = fallback_assets.scripts(Bundle::Start).clone();
                shell(scripts, &fallback_assets.stylesheet)
            },
        ));
    let mcp = Arc::new(crate::server::agent::mcp::service(
        state.clone(),
        state.shutdown.clone(),
    ));
    let workflow_mcp = Arc::new(crate::server::workflows::mcp::service(
        state.clone(),
        state.shutdown.clone(),
    ));
    let api = router::routes()
        .merge(crate::server::http::assets::router(&state.config.site_root))
        .merge(crate::server::http::rest::mcp::router(mcp))
        .merge(crate::server::http::rest::mcp::workflow_router(
            workflow_mcp,
        ));
    router::with_middleware(api.merge(pages), state)
}

/// Every period (`build` did the first sweep): ends sessions idle past
/// their limit, deletes expired sign-ins and join codes and forgets old
/// failed sign-ins (on one instance at a time, in a cluster). A failed
/// sweep is logged and retried next period.
async fn sweep(state: AppState) {
    let mut tick = tokio::time::interval_at(tokio::time::Instant::now() + SWEEP_EVERY, SWEEP_EVERY);
    loop {
        tick.tick().await;
        if let Err(e) = cluster::once(&state, cluster::Job::IdleSweep, sweep_once(&state)).await {
            tracing::error!(error = %e, "the idle sweep could not start");
        }
        state.login_throttle.prune(state.clock.now());
    }
}

/// One idle sweep; each part's failure is logged, the others still run.
async fn sweep_once(state: &AppState) {
    if let Err(e) = agent::sessions::expire_idle(state).await {
        tracing::error!(error = %e, "expiring idle sessions failed");
    }
    if let Err(e) = store::auth_sessions::purge_expired(&state.db).await {
        tracing::error!(error = %e, "purging expired sign-ins failed");
    }
    if let Err(e) = agent::sessions::purge_expired_join_codes(state).await {
        tracing::error!(error = %e, "purging expired join codes failed");
    }
    if let Err(e) = cluster::prune(state).await {
        tracing::error!(error = %e, "pruning relayed events failed");
    }
}
