//! Logging set-up: `tracing` to stdout, filtered by `RUST_LOG`.

use tracing_subscriber::EnvFilter;

/// Installs the global subscriber. Defaults to `info` for Switchboard and
/// request traces, `warn` for dependencies.
pub fn init() {
    let filter = EnvFilter::try_from_default_env()
        .unwrap_or_else(|_| EnvFilter::new("switchboard=info,tower_http=info,warn"));
    tracing_subscriber::fmt()
        .with_env_filter(filter)
        .with_target(false)
        .init();
}
