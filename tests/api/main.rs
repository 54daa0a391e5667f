//! Black-box HTTP tests: each test serves the real application on a random
//! port with its own throwaway SQLite database and talks to it over HTTP.

mod agents_ui;
mod assets;
mod auth;
mod backends;
mod bindings;
mod bindings_file;
mod budgets;
mod catalogue;
mod connections;
mod end_session;
mod event_streams;
mod freed;
mod hardening;
mod health;
mod helpers;
mod labels;
mod lesson_sessions;
mod lessons;
mod limits;
mod listing;
mod mcp;
mod pages;
mod passwords;
mod plugin_tokens;
mod plugins;
mod runner;
mod scopes;
mod sessions;
mod throttle;
mod todos;
mod triggers;
mod vibes;
mod visualiser;
mod workflow_chat;
mod workflows;
