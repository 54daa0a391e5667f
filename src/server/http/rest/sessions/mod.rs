//! The session API agent backends drive, and the event streams watchers
//! subscribe to.
//!
//! A session's own calls authenticate with its session token
//! (`Authorization: Bearer st_…`, or `?token=` where a browser's
//! `EventSource` cannot set headers), or for what a plugin may do with its
//! plugin token (`pt_…`); every route asks `sessions::admit` which of them
//! may do what, through its `extract::Session<Act>` argument. People and
//! API keys list and watch only the sessions `domain::ownership` lets them
//! see (`extract::Viewing`, `extract::Watching`, one door:
//! `sessions::watchable`); another teacher's session is 404.

mod agent;
mod open;
mod read;
mod streams;

pub(crate) use crate::server::http::rest::event_streams::event_stream;
use crate::server::AppState;
use agent::{call, end, patch_state, report_result, report_turn};
use axum::routing::{get, patch, post};
use axum::Router;
use open::{open, plugin_token};
use read::{calls, list, tools};
use serde::Deserialize;
use streams::{events, list_events};

/// Session routes.
pub fn router() -> Router<AppState> {
    Router::new()
        .route("/api/sessions", post(open).get(list))
        .route("/api/sessions/events", get(list_events))
        .route(
            "/api/sessions/{id}/tools",
            get(tools).patch(super::plugins::patch_tools),
        )
        .route("/api/sessions/{id}/tool-calls", post(call))
        .route(
            "/api/sessions/{id}/tool-calls/{call_id}/result",
            post(report_result),
        )
        .route("/api/sessions/{id}/state", patch(patch_state))
        .route("/api/sessions/{id}/turns", post(report_turn))
        .route("/api/sessions/{id}/end", post(end))
        .route("/api/sessions/{id}/plugin-token", post(plugin_token))
        .route("/api/sessions/{id}/events", get(events))
        .route("/api/sessions/{id}/calls", get(calls))
}

/// `?format=`, and for paging calls `?before=` and `?limit=` (an event
/// stream's `?token=` is read by [`StreamToken`]).
#[derive(Debug, Deserialize, Default)]
pub struct SessionQuery {
    format: Option<String>,
    before: Option<i64>,
    limit: Option<usize>,
}
