//! The state every handler and server function shares.

use crate::server::config::Config;
use axum::extract::FromRef;
use leptos::config::LeptosOptions;
use sqlx::SqlitePool;
use std::sync::Arc;

/// Cheap to clone: a pool handle and two `Arc`s.
#[derive(Clone)]
pub struct AppState {
    /// The SQLite pool; all persistence goes through it.
    pub db: SqlitePool,
    /// Settings read at start-up.
    pub config: Arc<Config>,
    /// What Leptos needs to render pages and find the browser bundle.
    pub leptos_options: LeptosOptions,
}

impl AppState {
    /// Wires a state from its parts; the Leptos options are derived from the
    /// configuration so there is a single source for addresses and paths.
    pub fn new(db: SqlitePool, config: Config) -> Self {
        let leptos_options = LeptosOptions::builder()
            .output_name("switchboard")
            .site_root(config.site_root.clone())
            .site_pkg_dir("pkg")
            .site_addr(config.addr)
            .build();
        Self {
            db,
            config: Arc::new(config),
            leptos_options,
        }
    }
}

impl FromRef<AppState> for LeptosOptions {
    fn from_ref(state: &AppState) -> Self {
        state.leptos_options.clone()
    }
}
