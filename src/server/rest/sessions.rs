//! The session API agent backends drive, and the event streams watchers
//! subscribe to.
//!
//! A session's own calls authenticate with its session token
//! (`Authorization: Bearer st_…`, or `?token=` where a browser's
//! `EventSource` cannot set headers); signed-in users may watch any session.

use crate::api::ApiError;
use crate::domain::declaration::{export, DeclarationFormat};
use crate::domain::session::SessionEvent;
use crate::domain::user::FieldError;
use crate::server::auth::AuthUser;
use crate::server::hub::Frame;
use crate::server::rest::ApiKey;
use crate::server::{sessions, AppState, ServerError};
use axum::extract::rejection::JsonRejection;
use axum::extract::{Path, Query, State};
use axum::http::{header, HeaderMap, StatusCode};
use axum::response::sse::{Event, KeepAlive, Sse};
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post};
use axum::{Extension, Json, Router};
use futures_util::stream::{self, Stream, StreamExt};
use serde::Deserialize;
use serde_json::{json, Value};
use std::convert::Infallible;
use std::sync::Arc;
use std::time::Duration;

/// Session routes.
pub fn router() -> Router<AppState> {
    Router::new()
        .route("/api/sessions", post(open).get(list))
        .route("/api/sessions/events", get(list_events))
        .route("/api/sessions/{id}/tools", get(tools))
        .route("/api/sessions/{id}/tool-calls", post(call))
        .route("/api/sessions/{id}/end", post(end))
        .route("/api/sessions/{id}/events", get(events))
}

/// `?token=` and `?format=`.
#[derive(Debug, Deserialize, Default)]
pub struct SessionQuery {
    token: Option<String>,
    format: Option<String>,
}

fn bearer(headers: &HeaderMap) -> Option<&str> {
    headers
        .get(header::AUTHORIZATION)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.strip_prefix("Bearer "))
        .map(str::trim)
}

fn token<'a>(headers: &'a HeaderMap, query: &'a SessionQuery) -> Option<&'a str> {
    bearer(headers)
        .or(query.token.as_deref())
        .filter(|t| !t.is_empty())
}

fn invalid(field: &str, rule: impl Into<String>) -> ServerError {
    ApiError::Invalid(FieldError::new(field, rule)).into()
}

#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase")]
struct OpenRequest {
    workflow_id: String,
}

async fn open(
    key: ApiKey,
    State(state): State<AppState>,
    body: Result<Json<OpenRequest>, JsonRejection>,
) -> Result<Response, ServerError> {
    let Json(body) = body.map_err(|e| invalid("body", e.body_text()))?;
    let (id, token) = sessions::open(&state, &body.workflow_id, Some(key.id)).await?;
    Ok((
        StatusCode::CREATED,
        Json(json!({"sessionId": id, "sessionToken": token})),
    )
        .into_response())
}

async fn list(
    user: Option<Extension<AuthUser>>,
    key: Option<ApiKey>,
    State(state): State<AppState>,
) -> Result<Response, ServerError> {
    if user.is_none() && key.is_none() {
        return Err(ApiError::Unauthenticated.into());
    }
    Ok(Json(sessions::list(&state).await?).into_response())
}

async fn tools(
    State(state): State<AppState>,
    Path(id): Path<String>,
    Query(query): Query<SessionQuery>,
    headers: HeaderMap,
) -> Result<Response, ServerError> {
    let row = sessions::authorize(&state, &id, token(&headers, &query)).await?;
    let format = DeclarationFormat::parse(query.format.as_deref().unwrap_or("gemini"))?;
    let ws = row.workflow_state()?;
    let rules = state.rules();
    let available = rules.available(&ws.current_workflow);
    Ok(Json(json!({
        "workflow": ws.current_workflow,
        "available": available,
        "tools": export(&rules.declarations(&available), format),
        "state": ws,
    }))
    .into_response())
}

#[derive(Debug, Deserialize)]
struct CallRequest {
    name: String,
    #[serde(default)]
    arguments: Value,
}

async fn call(
    State(state): State<AppState>,
    Path(id): Path<String>,
    Query(query): Query<SessionQuery>,
    headers: HeaderMap,
    body: Result<Json<CallRequest>, JsonRejection>,
) -> Result<Response, ServerError> {
    let row = sessions::authorize(&state, &id, token(&headers, &query)).await?;
    let Json(body) = body.map_err(|e| invalid("body", e.body_text()))?;
    if body.name.trim().is_empty() {
        return Err(invalid("name", "is required"));
    }
    let arguments = if body.arguments.is_null() {
        json!({})
    } else {
        body.arguments
    };
    Ok(Json(sessions::call(&state, row, &body.name, arguments).await?).into_response())
}

async fn end(
    State(state): State<AppState>,
    Path(id): Path<String>,
    Query(query): Query<SessionQuery>,
    headers: HeaderMap,
) -> Result<StatusCode, ServerError> {
    sessions::authorize(&state, &id, token(&headers, &query)).await?;
    sessions::end(&state, &id, "ended by agent").await?;
    Ok(StatusCode::NO_CONTENT)
}

fn frame_event(frame: &Frame) -> Event {
    Event::default()
        .id(frame.id.to_string())
        .data(frame.json.clone())
}

/// Turns a broadcast receiver into an SSE stream that ends if the
/// subscriber lags (it then reconnects with `Last-Event-ID`).
fn live(
    rx: tokio::sync::broadcast::Receiver<Arc<Frame>>,
    after: u64,
) -> impl Stream<Item = Result<Event, Infallible>> {
    stream::unfold(rx, move |mut rx| async move {
        loop {
            match rx.recv().await {
                Ok(frame) if frame.id <= after => continue,
                Ok(frame) => return Some((Ok(frame_event(&frame)), rx)),
                Err(_) => return None,
            }
        }
    })
}

async fn events(
    State(state): State<AppState>,
    Path(id): Path<String>,
    Query(query): Query<SessionQuery>,
    user: Option<Extension<AuthUser>>,
    headers: HeaderMap,
) -> Result<Response, ServerError> {
    if user.is_none() {
        sessions::authorize(&state, &id, token(&headers, &query)).await?;
    } else {
        sessions::get(&state, &id).await?;
    }
    let last_seen = headers
        .get("last-event-id")
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.trim().parse::<u64>().ok());
    let sub = state.hub.subscribe(&id, last_seen);
    let mut first: Vec<Result<Event, Infallible>> = Vec::new();
    if sub.needs_snapshot {
        let snapshot = sessions::snapshot(&state, &id).await?;
        let json = serde_json::to_string(&SessionEvent::Snapshot(snapshot)).unwrap_or_default();
        first.push(Ok(Event::default()
            .id(sub.snapshot_id.to_string())
            .data(json)));
    }
    let last_replayed = sub.replay.last().map_or(sub.snapshot_id, |f| f.id);
    first.extend(sub.replay.iter().map(|f| Ok(frame_event(f))));
    let stream = stream::iter(first).chain(live(sub.live, last_replayed));
    Ok(Sse::new(stream)
        .keep_alive(KeepAlive::new().interval(Duration::from_secs(15)))
        .into_response())
}

async fn list_events(
    user: Option<Extension<AuthUser>>,
    State(state): State<AppState>,
) -> Result<Response, ServerError> {
    if user.is_none() {
        return Err(ApiError::Unauthenticated.into());
    }
    let rx = state.hub.subscribe_list();
    Ok(Sse::new(live(rx, 0))
        .keep_alive(KeepAlive::new().interval(Duration::from_secs(15)))
        .into_response())
}
