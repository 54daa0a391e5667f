//! Completing a call the backend (or the plugin) executed: its result is
//! taken once, the tool's effects applied, and watchers told.

use super::access::{admit_write, get};
use super::watch::publish_state_change;
use crate::domain::agent_session::{CallOutcome, CallResult, CallStatus, SessionEvent};
use crate::domain::effect::apply_effects;
use crate::domain::limits::{
    bytes_in_words, excerpt, SNAPSHOT_VALUE_MAX_BYTES, TOOL_RESULT_MAX_BYTES,
};
use crate::domain::workflow_state::WorkflowState;
use crate::error::ApiError;
use crate::server::agent::budget;
use crate::server::store::agent_sessions::SessionRow;
use crate::server::store::tool_calls;
use crate::server::{AppState, ServerError};
use serde_json::Value;

/// Takes a backend's result for call `call_id`, which it executed: applies
/// the tool's effects to the session (when `ok`), records both together and
/// tells watchers. A result is taken once: again → 409; a refused call or
/// one Switchboard ran has none to take → 409; another session's call or
/// an unknown one → 404.
pub async fn complete(
    state: &AppState,
    row: SessionRow,
    call_id: i64,
    ok: bool,
    result: Value,
) -> Result<(CallResult, WorkflowState), ServerError> {
    complete_after(state, row, call_id, ok, result, None).await
}

/// [`complete`] for a call Switchboard waited `waited_us` on (a plugin's
/// answer): that time is added to the recorded duration, and watchers get
/// the whole.
pub async fn complete_after(
    state: &AppState,
    row: SessionRow,
    call_id: i64,
    ok: bool,
    result: Value,
    waited_us: Option<i64>,
) -> Result<(CallResult, WorkflowState), ServerError> {
    if result.to_string().len() > TOOL_RESULT_MAX_BYTES {
        return Err(ApiError::TooLarge {
            field: "result".into(),
            limit: bytes_in_words(TOOL_RESULT_MAX_BYTES),
        }
        .into());
    }
    let _guard = state.lock_session(&row.id).await?;
    let row = get(state, &row.id).await?;
    row.still_open()?;
    budget::check_bytes(&row, &state.config.session_budget, result.to_string().len())?;
    admit_write(state, &row.id).await?;
    let call = awaiting(state, &row, call_id).await?;
    let before = row.workflow_state()?;
    let mut ws = before.clone();
    if ok {
        if let Some(entry) = state.rules().tool(&call.tool) {
            apply_effects(&entry.effects, &result, &mut ws);
        }
    }
    let status = if ok {
        CallStatus::Done
    } else {
        CallStatus::Failed
    };
    let waited = waited_us.unwrap_or(0);
    let Some(duration_us) =
        tool_calls::complete(&state.db, &row.id, call_id, status, &result, &ws, waited).await?
    else {
        return Err(ApiError::Conflict(format!("Call {call_id} already has its result.")).into());
    };
    let reported = CallResult {
        call_id,
        status,
        result,
        truncated: false,
        duration_us: waited_us.map(|_| duration_us),
    };
    let mut event = reported.clone();
    if event.result.to_string().len() > SNAPSHOT_VALUE_MAX_BYTES {
        event.result = Value::String(excerpt(&event.result.to_string()));
        event.truncated = true;
    }
    state.hub.publish(&row.id, &SessionEvent::ToolResult(event));
    publish_state_change(state, &row, &before, &ws);
    Ok((reported, ws))
}

/// Call `call_id` of session `row`, which must await its result: 404 for
/// another session's call or an unknown one, 409 for a refused call or
/// one that has its result.
async fn awaiting(
    state: &AppState,
    row: &SessionRow,
    call_id: i64,
) -> Result<tool_calls::CallToComplete, ServerError> {
    let call = tool_calls::find(&state.db, &row.id, call_id)
        .await?
        .ok_or_else(|| ApiError::NotFound(format!("Call {call_id} of session {}", row.id)))?;
    if call.outcome == CallOutcome::Refused {
        return Err(ApiError::Conflict(format!(
            "Call {call_id} was refused; it has no result to report."
        ))
        .into());
    }
    if call.status != CallStatus::Awaiting {
        return Err(ApiError::Conflict(format!("Call {call_id} already has its result.")).into());
    }
    Ok(call)
}
