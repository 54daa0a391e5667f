//! Server functions: the typed calls the browser makes to the server.
//!
//! Each function is thin — check who is asking, touch the store, apply domain
//! rules — so the interesting logic stays testable in `domain` and `server`.
//! They live under `/rpc/…`, leaving `/api/…` to the JSON API that agent
//! backends use.

pub mod accounts;
pub mod auth;
pub mod bindings;
pub mod keys;
pub mod lessons;
pub mod mcp_servers;
pub mod playground;
pub mod sessions;
pub mod student_data;
pub mod students;
pub mod vibes;
pub mod workflows;
