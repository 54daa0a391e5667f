//! The plugin API: an app embedding an agent registers its tools for one
//! session, changes them, reads the session's metadata, listens for the
//! agent's calls of its tools and answers them. Every route takes the
//! session's plugin token (`pt_…`, plugin rights only) or its session
//! token; `sessions::admit` decides what each may do, through each
//! handler's `extract::PluginSession<Act>` argument.
//!
//! An unknown or ended session is 404 `{"error":"session_not_found",
//! "message":…}`; other errors are the API's usual JSON.

use crate::domain::plugin::{Patch, Registration, REGISTRATION_MAX_BYTES};
use crate::error::ApiError;
use crate::server::agent::plugins::{self, Change, API_VERSION};
use crate::server::http::extract::{
    plugin_not_found, AnswerRelayedCall, CallId, ChangePluginTools, JsonBody, ListenForCalls,
    PluginSession, QueryParams, ReadMetadata,
};
use crate::server::http::rest::event_streams::event_stream_holding;
use crate::server::http::rest::sessions::SessionQuery;
use crate::server::{AppState, ServerError};
use axum::extract::{DefaultBodyLimit, State};
use axum::http::{header, HeaderMap, HeaderValue, StatusCode};
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post};
use axum::{Json, Router};
use futures_util::FutureExt;
use serde::{Deserialize, Serialize};
use serde_json::Value;

/// Plugin routes (the `PATCH …/tools` beside the listing is in `sessions`).
pub fn router() -> Router<AppState> {
    Router::new()
        .route(
            "/api/sessions/{id}/register-tools",
            post(register).layer(DefaultBodyLimit::max(REGISTRATION_MAX_BYTES)),
        )
        .route("/api/sessions/{id}/metadata", get(metadata))
        .route("/api/sessions/{id}/plugin-events", get(plugin_events))
        .route("/api/sessions/{id}/tool-results", post(tool_result_in_body))
        .route(
            "/api/sessions/{id}/tool-results/{call_id}",
            post(tool_result),
        )
}

/// Maps an engine error, turning "session gone" into the plugin 404.
fn answer<T: serde::Serialize>(
    id: &str,
    status: StatusCode,
    result: Result<T, ServerError>,
) -> Response {
    match result {
        Ok(body) => (status, Json(body)).into_response(),
        Err(ServerError::Api(ApiError::NotFound(what))) if what.starts_with("Session ") => {
            plugin_not_found(id)
        }
        Err(e) => e.into_response(),
    }
}

/// `POST /api/sessions/{id}/register-tools`: 201 with what registered and
/// what failed.
async fn register(
    State(state): State<AppState>,
    session: PluginSession<ChangePluginTools>,
    JsonBody(body): JsonBody<Registration, REGISTRATION_MAX_BYTES>,
) -> Response {
    let row = session.into_inner().row;
    let id = row.id.clone();
    let changed = plugins::change(&state, &row, Change::Register(body)).await;
    answer(&id, StatusCode::CREATED, changed)
}

/// `PATCH /api/sessions/{id}/tools`: add, remove and modify tools.
pub async fn patch_tools(
    State(state): State<AppState>,
    session: PluginSession<ChangePluginTools>,
    JsonBody(body): JsonBody<Patch, REGISTRATION_MAX_BYTES>,
) -> Response {
    let row = session.into_inner().row;
    let id = row.id.clone();
    let changed = plugins::change(&state, &row, Change::Patch(body)).await;
    answer(&id, StatusCode::OK, changed)
}

/// `GET /api/sessions/{id}/metadata`, with `API-Version`, `Session-ID` and
/// `Last-Modified`; 304 for an `If-Modified-Since` at or after it.
async fn metadata(
    State(state): State<AppState>,
    session: PluginSession<ReadMetadata>,
    headers: HeaderMap,
) -> Response {
    let row = session.into_inner().row;
    let (body, modified_ms) = match plugins::metadata(&state, &row) {
        Ok(found) => found,
        Err(e) => return e.into_response(),
    };
    let modified =
        std::time::UNIX_EPOCH + std::time::Duration::from_millis(modified_ms.max(0) as u64);
    let last_modified = httpdate::fmt_http_date(modified);
    let since = headers
        .get(header::IF_MODIFIED_SINCE)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| httpdate::parse_http_date(v).ok());
    // HTTP dates have whole seconds: compare at that precision.
    let modified_secs = modified_ms.max(0) / 1000;
    let not_modified = since.is_some_and(|s| {
        s.duration_since(std::time::UNIX_EPOCH)
            .is_ok_and(|d| d.as_secs() as i64 >= modified_secs)
    });
    let mut response = if not_modified {
        StatusCode::NOT_MODIFIED.into_response()
    } else {
        Json(body).into_response()
    };
    let h = response.headers_mut();
    h.insert("api-version", HeaderValue::from_static(API_VERSION));
    if let Ok(v) = HeaderValue::from_str(&row.id) {
        h.insert("session-id", v);
    }
    if let Ok(v) = HeaderValue::from_str(&last_modified) {
        h.insert(header::LAST_MODIFIED, v);
    }
    response
}

/// `GET /api/sessions/{id}/plugin-events`: the plugin's stream of
/// `tool-call-request` events (token in the header or `?token=`), the
/// calls still waiting first, then new ones and the session's
/// `tool-availability-update`s. Every connection is offered every call
/// still waiting, so `Last-Event-ID` needs no replay of its own.
async fn plugin_events(
    State(state): State<AppState>,
    session: PluginSession<ListenForCalls>,
    QueryParams(_): QueryParams<SessionQuery>,
) -> Response {
    let row = session.into_inner().row;
    let limits = [(
        format!("session:{}", row.id),
        state.config.max_streams_per_session,
    )];
    let permit = match state.streams.acquire(&limits).await {
        Ok(p) => p,
        Err(e) => return e.into_response(),
    };
    let listening = match plugins::listen(&state, &row.id).await {
        Ok(listening) => listening,
        Err(e) => return e.into_response(),
    };
    let held = Box::new((permit, listening.guard));
    // It ends when the server stops, so the plugin reconnects to another
    // instance at once and the stop is not held up.
    let stopping = state.shutdown.clone().cancelled_owned().boxed();
    event_stream_holding(listening.first, Some(listening.rx), 0, held, stopping)
}

/// The plugin's answer: `{"result": …}` or `{"error": "…"}`.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct ToolResult {
    #[serde(default)]
    result: Option<Value>,
    #[serde(default)]
    error: Option<String>,
}

/// `POST /api/sessions/{id}/tool-results/{callId}`.
async fn tool_result(
    State(state): State<AppState>,
    session: PluginSession<AnswerRelayedCall>,
    CallId(call_id): CallId,
    JsonBody(body): JsonBody<ToolResult>,
) -> Response {
    answer_call(&state, session, call_id, body).await
}

/// The answer with the call's id in the body: `{"callId", "result"}` or
/// `{"callId", "error"}`.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
struct ToolResultWithId {
    /// The call answered, as the `tool-call-request` named it.
    call_id: String,
    #[serde(default)]
    result: Option<Value>,
    #[serde(default)]
    error: Option<String>,
}

/// `POST /api/sessions/{id}/tool-results` `{"callId", …}`: the same answer
/// at one address per session. A page on another origin sends each
/// answer with `Authorization`, so the browser asks first (a preflight);
/// it remembers the answer per URL, so here it asks once per session
/// instead of once per call (the JavaScript client answers this way).
async fn tool_result_in_body(
    State(state): State<AppState>,
    session: PluginSession<AnswerRelayedCall>,
    JsonBody(body): JsonBody<ToolResultWithId>,
) -> Response {
    let call_id = match crate::server::http::extract::path_id(&body.call_id, "callId") {
        Ok(id) => id,
        Err(e) => return e.into_response(),
    };
    let answer = ToolResult {
        result: body.result,
        error: body.error,
    };
    answer_call(&state, session, call_id, answer).await
}

/// Checks a plugin's answer to call `call_id` and hands it to the call
/// waiting for it.
async fn answer_call(
    state: &AppState,
    session: PluginSession<AnswerRelayedCall>,
    call_id: i64,
    body: ToolResult,
) -> Response {
    let admitted = session.into_inner();
    let id = admitted.row.id.clone();
    let outcome = match (body.result, body.error) {
        (Some(_), Some(_)) => {
            return ServerError::from(ApiError::invalid(
                "body",
                "send either result or error, not both",
            ))
            .into_response()
        }
        (None, None) => {
            return ServerError::from(ApiError::invalid("result", "is required (or error)"))
                .into_response()
        }
        (Some(result), None) => {
            if result.to_string().len() > crate::domain::limits::TOOL_RESULT_MAX_BYTES {
                return ServerError::from(ApiError::TooLarge {
                    field: "result".into(),
                    limit: crate::domain::limits::bytes_in_words(
                        crate::domain::limits::TOOL_RESULT_MAX_BYTES,
                    ),
                })
                .into_response();
            }
            Ok(result)
        }
        (None, Some(error)) => Err(error),
    };
    answer(
        &id,
        StatusCode::OK,
        plugins::answer(state, &admitted, call_id, outcome)
            .await
            .map(|()| Accepted {
                accepted: true,
                call_id: call_id.to_string(),
            }),
    )
}

/// What an accepted answer gets.
#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
struct Accepted {
    accepted: bool,
    call_id: String,
}
