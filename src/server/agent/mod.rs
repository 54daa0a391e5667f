//! The agent-session engine: what a session may call now, enforcement of
//! every tool call, the built-in tools, and the push of each change to
//! watchers.
//!
//! Everything that decides or announces a session's tools lives here, so
//! listing, enforcement, refusal reasons and events share one computation
//! (`rules`) and one code path (`sessions`). Persistence is in
//! `server::store` (`agent_sessions`, `tool_calls`, `bank_accounts`,
//! `todos`).

pub mod budget;
pub mod builtins;
pub mod hub;
pub mod mcp;
pub mod plugins;
pub mod rules;
pub mod sessions;
pub mod todos;
