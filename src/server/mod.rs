//! Everything that only exists on the server, grouped by concern:
//!
//! - [`http`]: the edges — router, accept loop, REST handlers, extractors
//!   that say who is calling, the assets and stream caps;
//! - [`auth`]: passwords, sign-in sessions, the page guard, the throttle;
//! - [`agent`]: live agent sessions, from open to end (the engine);
//! - [`catalogue`]: changing the tool catalogue and the bindings;
//! - [`workflows`]: workflow definitions, the workflow-editing chat, its
//!   MCP server, the model client and the scripted model;
//! - [`lessons`]: what a teacher sees of a lesson's runs;
//! - [`mcp_servers`]: connected upstream MCP servers, whose tools join the
//!   catalogue and whose calls are forwarded to them;
//! - [`vibes`]: saving agents and vibes, and their manifests as files;
//! - [`triggers`]: start triggers that open sessions by themselves (webhooks,
//!   calls, chat messages, the scheduler);
//! - [`ultravox`]: Ultravox calls: their create-call body, the HTTP tools
//!   Ultravox calls, and its signed webhooks;
//! - [`retention`]: the daily sweep purging sessions older than
//!   `DATA_RETENTION_DAYS`; [`student_data`]: a student's rights — who may
//!   see a student's data, deleting it all, exporting it as JSON;
//! - [`cluster`]: several instances on one PostgreSQL database — session
//!   events, replays, list and rules changes relayed between them, jobs run
//!   once;
//! - [`store`]: all SQL; [`seed`]: the demo data;
//! - [`platform`]: configuration, the database, the shared state, clock,
//!   allocator, logging and token counts.
//!
//! This is the one `#[cfg(feature = "ssr")]` module; nothing in here is
//! compiled into the browser bundle. `docs/architecture.md` draws the map.

pub mod accounts;
pub mod agent;
pub mod auth;
pub mod catalogue;
pub mod cluster;
pub mod error;
pub mod http;
pub mod lessons;
pub mod mcp_servers;
pub mod platform;
pub mod retention;
pub mod seed;
pub mod store;
pub mod student_data;
pub mod students;
pub mod triggers;
pub mod ultravox;
pub mod vibes;
pub mod workflows;

pub use error::ServerError;
pub use http::serve::serve;
pub use platform::state::AppState;
