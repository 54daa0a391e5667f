//! The Switchboard server: reads its configuration, starts the application
//! (see `switchboard::startup`), prints the demo passwords of a new database
//! once, and serves until Ctrl-C or SIGTERM.

use switchboard::server::{config::Config, memory, telemetry, ServerError};
use switchboard::startup::Application;

#[tokio::main]
async fn main() {
    telemetry::init();
    memory::tune_allocator();
    if let Err(err) = run().await {
        eprintln!("switchboard: {err}");
        std::process::exit(1);
    }
}

async fn run() -> Result<(), ServerError> {
    let mut app = Application::build(Config::from_env()?).await?;
    if let Some(accounts) = app.take_seeded_accounts() {
        println!("{accounts}");
    }
    let addr = app.address();
    tracing::info!("Switchboard listening on http://{addr}");
    println!("Switchboard is serving at http://{addr}");
    app.run_until_stopped(shutdown_signal())
        .await
        .map_err(|e| ServerError::Config(format!("server stopped: {e}")))
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
