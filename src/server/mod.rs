//! Everything that only exists on the server: configuration, the database,
//! authentication, the HTTP router.
//!
//! This is the one `#[cfg(feature = "ssr")]` module; nothing in here is
//! compiled into the browser bundle.

pub mod agent;
pub mod assets;
pub mod auth;
pub mod bindings;
pub mod catalogue;
pub mod clock;
pub mod config;
pub mod ctx;
pub mod db;
pub mod error;
pub mod extract;
pub mod lesson_runs;
pub mod llm;
pub mod manifests;
pub mod mcp_sessions;
pub mod memory;
pub mod rest;
pub mod router;
pub mod scripted_model;
pub mod seed;
pub mod serve;
pub mod state;
pub mod store;
pub mod streams;
pub mod telemetry;
pub mod throttle;
pub mod tokens;
pub mod vibes;
pub mod workflow_chat;
pub mod workflow_mcp;
pub mod workflows;

pub use error::ServerError;
pub use serve::serve;
pub use state::AppState;
