//! Pure domain types shared by the server and the browser.
//!
//! Everything here is plain data plus the rules about it: no I/O, no clocks,
//! no `cfg` gates. Compiling the same definitions for both targets is what lets
//! a hydrated component and a server function agree on a value's shape and
//! validity without a second, drifting copy.

pub mod account;
pub mod actor;
pub mod agent_runner;
pub mod agent_session;
pub mod api_key;
pub mod assets;
pub mod bindings;
pub mod bindings_file;
pub mod catalogue;
pub mod catalogue_history;
pub mod cors;
pub mod decide;
pub mod declaration;
pub mod effect;
pub mod error;
pub mod ids;
pub mod join_code;
pub mod lesson;
pub mod limits;
pub mod mcp_server;
pub mod mcp_server_view;
pub mod mcp_stdio;
pub mod net;
pub mod ownership;
pub mod pages;
pub mod plugin;
pub mod retention;
pub mod review_queue;
pub mod session_access;
pub mod session_checks;
pub mod session_origin;
pub mod start_trigger;
pub mod state_labels;
pub mod student;
pub mod student_view;
pub mod time;
pub mod todos;
pub mod user;
pub mod vibe;
pub mod workflow_chat;
pub mod workflow_def;
pub mod workflow_state;

#[cfg(test)]
mod import_graph;
