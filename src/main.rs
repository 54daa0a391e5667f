//! The Switchboard server: reads its configuration, opens (and if new, seeds)
//! the database, and serves the app until Ctrl-C or SIGTERM.

use switchboard::server::{config::Config, db, seed, store, telemetry, AppState};

#[tokio::main]
async fn main() {
    telemetry::init();
    switchboard::server::memory::tune_allocator();
    if let Err(err) = run().await {
        eprintln!("switchboard: {err}");
        std::process::exit(1);
    }
}

async fn run() -> Result<(), switchboard::server::ServerError> {
    let config = Config::from_env()?;
    let pool = db::connect(&config.database_url).await?;
    let state = AppState::new(pool, config);
    switchboard::server::bindings::seed_catalogue(&state.db).await?;
    let bindings_file = std::env::var("SWITCHBOARD_BINDINGS_FILE")
        .ok()
        .filter(|f| !f.is_empty());
    switchboard::server::bindings::seed_bindings(&state.db, bindings_file.as_deref()).await?;
    if let Some(accounts) = seed::seed_demo_accounts(&state).await? {
        seed::seed_demo_lessons(&state).await?;
        println!("{accounts}");
    }
    tokio::task::spawn_blocking(switchboard::server::tokens::warm_up);
    state.reload_rules().await?;
    let sweeper = state.clone();
    tokio::spawn(async move {
        let mut tick = tokio::time::interval(std::time::Duration::from_secs(30));
        loop {
            tick.tick().await;
            if let Err(e) = switchboard::server::agent::sessions::expire_idle(&sweeper).await {
                tracing::error!(error = %e, "expiring idle sessions failed");
            }
        }
    });
    let purged = store::auth_sessions::purge_expired(&state.db).await?;
    tracing::debug!(purged, "expired sign-in sessions removed");

    let addr = state.config.addr;
    let listener = tokio::net::TcpListener::bind(addr).await.map_err(|e| {
        switchboard::server::ServerError::Config(format!("cannot listen on {addr}: {e}"))
    })?;
    tracing::info!("Switchboard listening on http://{addr}");
    println!("Switchboard is serving at http://{addr}");
    switchboard::server::serve(listener, state, shutdown_signal())
        .await
        .map_err(|e| switchboard::server::ServerError::Config(format!("server stopped: {e}")))
}

/// Resolves on Ctrl-C or SIGTERM, so in-flight requests can finish.
async fn shutdown_signal() {
    let ctrl_c = async {
        let _ = tokio::signal::ctrl_c().await;
    };
    let terminate = async {
        match tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate()) {
            Ok(mut sig) => {
                sig.recv().await;
            }
            Err(_) => std::future::pending::<()>().await,
        }
    };
    tokio::select! {
        () = ctrl_c => {},
        () = terminate => {},
    }
}
