//! What the agent's backend sends while a session runs: tool calls, the
//! results of the calls it ran itself, state patches, turns, and the end.

use crate::domain::agent_session::StatePatch;
use crate::domain::declaration::ultravox::with_credential;
use crate::domain::lesson::nudge::{Speaker, TURN_TEXT_MAX_BYTES};
use crate::domain::limits::bytes_in_words;
use crate::error::ApiError;
use crate::server::agent::sessions;
use crate::server::http::extract::{
    BearerToken, CallId, CallTool, ChangeState, End, JsonBody, ReportResult, ReportTurn, Session,
};
use crate::server::{AppState, ServerError};
use axum::extract::State;
use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use axum::Json;
use serde::Deserialize;
use serde_json::{json, Value};

/// `{"name", "arguments"}`; any other key is refused (422 naming it), so a
/// misspelt `arguments` (or Gemini's `args` forwarded as it came) is never
/// run as a call with no arguments.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct CallRequest {
    name: String,
    #[serde(default)]
    arguments: Value,
}

/// `POST /api/sessions/{id}/tool-calls`: the agent calls a tool. A
/// `switchAgent` answer's HTTP tools get this request's credential (the
/// record keeps a placeholder).
pub(super) async fn call(
    State(state): State<AppState>,
    session: Session<CallTool>,
    BearerToken(token): BearerToken,
    JsonBody(body): JsonBody<CallRequest>,
) -> Result<Response, ServerError> {
    let row = session.into_inner().row;
    if body.name.trim().is_empty() {
        return Err(ApiError::invalid("name", "is required").into());
    }
    let arguments = if body.arguments.is_null() {
        json!({})
    } else {
        body.arguments
    };
    let mut response = sessions::call(&state, row, &body.name, arguments).await?;
    if let (Some(result), Some(token)) = (response.result.as_mut(), token.as_deref()) {
        with_credential(result, token);
    }
    Ok(Json(response).into_response())
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct ResultReport {
    ok: bool,
    #[serde(default)]
    result: Value,
}

/// `POST /api/sessions/{id}/tool-calls/{callId}/result`: the backend that
/// executed an allowed call reports how it went.
pub(super) async fn report_result(
    State(state): State<AppState>,
    session: Session<ReportResult>,
    CallId(call_id): CallId,
    JsonBody(body): JsonBody<ResultReport>,
) -> Result<Response, ServerError> {
    let row = session.into_inner().row;
    let (reported, ws) = sessions::complete(&state, row, call_id, body.ok, body.result).await?;
    Ok(Json(json!({
        "callId": reported.call_id,
        "status": reported.status,
        "state": ws,
    }))
    .into_response())
}

/// `PATCH /api/sessions/{id}/state`: `{"activeStep"?, "checks"?}`.
pub(super) async fn patch_state(
    State(state): State<AppState>,
    session: Session<ChangeState>,
    JsonBody(body): JsonBody<StatePatch>,
) -> Result<Response, ServerError> {
    let row = session.into_inner().row;
    let ws = sessions::patch_state(&state, row, &body).await?;
    Ok(Json(json!({"state": ws})).into_response())
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct TurnReport {
    role: String,
    #[serde(default)]
    text: Option<String>,
}

/// `POST /api/sessions/{id}/turns` `{"role":"student"|"tutor","text"?}`:
/// the backend reports a turn and gets the nudges due now.
pub(super) async fn report_turn(
    State(state): State<AppState>,
    session: Session<ReportTurn>,
    JsonBody(body): JsonBody<TurnReport>,
) -> Result<Response, ServerError> {
    let row = session.into_inner().row;
    let speaker = Speaker::parse(&body.role)
        .ok_or_else(|| ApiError::invalid("role", "must be \"student\" or \"tutor\""))?;
    if body
        .text
        .as_ref()
        .is_some_and(|t| t.len() > TURN_TEXT_MAX_BYTES)
    {
        return Err(ApiError::TooLarge {
            field: "text".into(),
            limit: bytes_in_words(TURN_TEXT_MAX_BYTES),
        }
        .into());
    }
    let answer = sessions::turn(&state, row, speaker, body.text.as_deref()).await?;
    Ok(Json(answer).into_response())
}

pub(super) async fn end(
    State(state): State<AppState>,
    session: Session<End>,
) -> Result<StatusCode, ServerError> {
    sessions::end(&state, &session.row.id, "ended by agent").await?;
    Ok(StatusCode::NO_CONTENT)
}
