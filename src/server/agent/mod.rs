//! The agent-session engine, cut along what happens to a session:
//!
//! - `open`: a session starts (workflow, vibe or lesson) with its
//!   credentials; `access` lets each request in (`admit`); `join` lets
//!   more plugins in with one-use join codes.
//! - `listing`: what it may call now, and the one `Listing` of its tools,
//!   prompt and state that REST, MCP and the console render.
//! - `call`: a tool call, through `domain::decide` (pure, a typed
//!   `Refusal`) and `execute` (one table of built-in tool families keyed
//!   by tool id), recorded and announced; `plugins` relays a plugin
//!   tool's call.
//! - `complete`: a backend's (or plugin's) result of a call it executed;
//!   `patch` and `turns`: what a backend reports besides calls.
//! - `end`: a session ends; `watch`: what watchers read (list, snapshot,
//!   pages of calls) and the state-change events; `hub`: the push to them.
//!
//! - `runner`: a configured model drives the session through the same
//!   listing and call path, one action per request.
//!
//! `sessions` re-exports the steps for the doors; `rules` is the compiled
//! rules in force; `budget` the per-session bounds. Persistence is in
//! `server::store` (`agent_sessions`, `tool_calls`, `bank_accounts`,
//! `todos`).

mod access;
pub mod budget;
mod call;
mod complete;
mod end;
pub mod execute;
pub mod hub;
mod join;
pub mod listing;
pub mod mcp;
mod open;
mod patch;
pub mod plugins;
pub mod rules;
pub mod runner;
pub mod sessions;
mod turns;
mod watch;
