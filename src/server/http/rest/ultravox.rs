//! The Ultravox doors: a session's create-call body
//! (`GET /api/sessions/{id}/call-config?format=ultravox`), the HTTP tools
//! Ultravox calls in it (`POST /api/sessions/{id}/ultravox/tools/{tool}`,
//! let in by the static `Authorization` header the call-config put on each
//! tool, through the one door-keeper), and its signed webhook
//! (`POST /api/ultravox/webhook`). The work is in `server::ultravox`.

use crate::domain::declaration::ultravox::{HttpTarget, RESPONSE_TYPE_HEADER};
use crate::domain::limits::{excerpt, ULTRAVOX_WEBHOOK_BODY_MAX_BYTES};
use crate::error::ApiError;
use crate::server::agent::listing::Listing;
use crate::server::agent::sessions;
use crate::server::http::extract::{
    BearerToken, BytesBody, CallTool, QueryParams, ReadTools, Session,
};
use crate::server::ultravox::signature::{verify, SIGNATURE_HEADER, TIMESTAMP_HEADER};
use crate::server::ultravox::{self, ToolAnswer};
use crate::server::{AppState, ServerError};
use axum::extract::{DefaultBodyLimit, Path, State};
use axum::http::{header, HeaderMap, HeaderValue, StatusCode};
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post};
use axum::{Json, Router};
use serde::{Deserialize, Serialize};
use serde_json::Value;

/// Ultravox routes.
pub fn router() -> Router<AppState> {
    Router::new()
        .route("/api/sessions/{id}/call-config", get(call_config))
        .route("/api/sessions/{id}/ultravox/tools/{tool}", post(tool_call))
        .route(
            "/api/ultravox/webhook",
            post(webhook).layer(DefaultBodyLimit::max(ULTRAVOX_WEBHOOK_BODY_MAX_BYTES)),
        )
}

/// `?format=` (only `ultravox`, the default).
#[derive(Debug, Deserialize)]
struct FormatQuery {
    format: Option<String>,
}

/// `GET /api/sessions/{id}/call-config?format=ultravox` (session token):
/// the body of Ultravox's create-call request for this session, every
/// tool Switchboard runs or relays an HTTP tool at `PUBLIC_ORIGIN` (503
/// naming the setting without it), 409 once the session has ended.
async fn call_config(
    State(state): State<AppState>,
    session: Session<ReadTools>,
    BearerToken(token): BearerToken,
    QueryParams(query): QueryParams<FormatQuery>,
) -> Result<Response, ServerError> {
    if query.format.as_deref().unwrap_or("ultravox") != "ultravox" {
        return Err(ApiError::invalid("format", "must be ultravox").into());
    }
    let origin = ultravox::public_origin(&state)?;
    let row = session.into_inner().row;
    row.still_open()?;
    let listing = Listing::of(&state, &row).await?;
    sessions::tools_told(&state, &row, &listing.available).await?;
    let target = HttpTarget {
        origin,
        session: &row.id,
        token: token.as_deref().unwrap_or_default(),
    };
    let body = ultravox::session_config(&state.rules(), &row, &listing, Some(&target));
    Ok(Json(body).into_response())
}

/// `POST /api/sessions/{id}/ultravox/tools/{tool}`: Ultravox calls tool
/// `{tool}` with its dynamic parameters as the JSON body (an empty body is
/// `{}`). 200 with the result, or with `Refused by Switchboard: …` for the
/// model to read; `switchAgent` answers the new stage
/// (`X-Ultravox-Response-Type: new-stage`), `hangUp` `hang-up` (and the
/// session has ended).
async fn tool_call(
    State(state): State<AppState>,
    session: Session<CallTool>,
    BearerToken(token): BearerToken,
    Path((_, tool)): Path<(String, String)>,
    BytesBody(body): BytesBody<{ crate::domain::limits::API_BODY_MAX_BYTES }>,
) -> Result<Response, ServerError> {
    let row = session.into_inner().row;
    let arguments = match arguments(&body) {
        Some(arguments) => arguments,
        None => {
            return Ok(reply(ToolAnswer::refused(
                "the arguments are not a JSON object; send the tool's parameters as one",
            )))
        }
    };
    let token = token.unwrap_or_default();
    Ok(reply(
        ultravox::call_tool(&state, row, &token, &tool, arguments).await?,
    ))
}

/// A call's arguments from its body: a JSON object, or `{}` for none.
fn arguments(body: &[u8]) -> Option<Value> {
    if body.iter().all(u8::is_ascii_whitespace) {
        return Some(Value::Object(Default::default()));
    }
    match serde_json::from_slice(body) {
        Ok(Value::Object(map)) => Some(Value::Object(map)),
        _ => None,
    }
}

/// `answer` as an HTTP response: 200, JSON or text, with its response
/// type header.
fn reply(answer: ToolAnswer) -> Response {
    let kind = if answer.json {
        "application/json"
    } else {
        "text/plain; charset=utf-8"
    };
    let mut response =
        (StatusCode::OK, [(header::CONTENT_TYPE, kind)], answer.body).into_response();
    if let Some(response_type) = answer.response_type {
        response.headers_mut().insert(
            RESPONSE_TYPE_HEADER,
            HeaderValue::from_static(response_type),
        );
    }
    response
}

/// A webhook refused for its signature or timestamp.
#[derive(Serialize)]
struct WebhookRefused {
    error: &'static str,
    message: String,
}

/// `POST /api/ultravox/webhook`: an Ultravox webhook, signed with
/// `ULTRAVOX_WEBHOOK_SECRET` (503 naming it when unset; 401 for a bad
/// signature or a timestamp over a minute away). `call.ended` ends the
/// session its call's `metadata.sessionId` names; every event is then
/// acknowledged with 204, a call Switchboard does not know included, so
/// Ultravox does not retry it.
async fn webhook(
    State(state): State<AppState>,
    headers: HeaderMap,
    BytesBody(body): BytesBody<ULTRAVOX_WEBHOOK_BODY_MAX_BYTES>,
) -> Result<Response, ServerError> {
    let secret = state
        .config
        .ultravox_webhook_secret
        .as_deref()
        .ok_or_else(|| {
            ApiError::Unavailable(
                "Set ULTRAVOX_WEBHOOK_SECRET to the webhook's secret to receive Ultravox webhooks."
                    .into(),
            )
        })?;
    let header_text = |name: &str| headers.get(name).and_then(|v| v.to_str().ok());
    let checked = verify(
        secret,
        &body,
        header_text(TIMESTAMP_HEADER),
        header_text(SIGNATURE_HEADER),
        state.clock.now(),
    );
    if let Err(refusal) = checked {
        tracing::info!(%refusal, "Ultravox webhook refused");
        let refused = WebhookRefused {
            error: "invalid_signature",
            message: refusal.to_string(),
        };
        return Ok((StatusCode::UNAUTHORIZED, Json(refused)).into_response());
    }
    let event: Value = serde_json::from_slice(&body)
        .map_err(|e| ApiError::BadRequest(excerpt(&format!("not JSON: {e}"))))?;
    if event.get("event").and_then(Value::as_str) == Some("call.ended") {
        let ended = ultravox::call_ended(&state, &event).await?;
        tracing::info!(
            session = ?ultravox::session_of(&event).map(excerpt),
            ended,
            "Ultravox call ended"
        );
    }
    Ok(StatusCode::NO_CONTENT.into_response())
}
