//! The HTTP edge: the accept loop and router every request enters by, the
//! REST handlers, the extractors that say who is calling (and with what
//! body), the server-function context, the browser bundles as files, the
//! JavaScript plugin client, the caps on open event streams and MCP
//! sessions, CORS for the token-authenticated API, and the `Server-Timing`
//! every API answer carries.

pub mod assets;
pub mod clients;
pub mod cors;
pub mod ctx;
pub mod extract;
pub mod mcp_requests;
pub mod mcp_sessions;
pub mod rest;
pub mod router;
pub mod rpc_bodies;
pub mod serve;
pub mod streams;
pub mod timing;
