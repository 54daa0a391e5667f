//! Calls relayed to a plugin: the allowed call goes to the plugin's
//! `plugin-events` stream with its deadline (and again to any plugin
//! stream that connects while it waits), the agent's request waits (not
//! holding the session's call lock) for the answer on `tool-results` or
//! the deadline, and the outcome is recorded like a backend's result.

use crate::domain::agent_session::{CallResponse, CallStatus};
use crate::domain::limits::excerpt;
use crate::domain::session_access::Act;
use crate::error::ApiError;
use crate::server::agent::access::Admitted;
use crate::server::agent::complete;
use crate::server::agent::plugins::across;
use crate::server::agent::plugins::offer::Offer;
use crate::server::store::agent_sessions::SessionRow;
use crate::server::store::plugins as store;
use crate::server::{AppState, ServerError};
use serde_json::{json, Value};
use std::sync::atomic::Ordering;
use std::time::Instant;

/// Carries allowed call `response.call_id` of plugin tool `tool` to the
/// plugin and waits for its answer (the session's call lock is not held
/// meanwhile); records and returns the outcome.
///
/// The wait runs as its own task: if the agent's request goes away (it
/// disconnects), the call is still answered or timed out and recorded, so
/// it never stays awaiting and the plugin's late answer gets 409.
pub async fn relay(
    state: &AppState,
    row: SessionRow,
    tool: &str,
    arguments: &Value,
    response: CallResponse,
    plugin_type: &str,
) -> Result<CallResponse, ServerError> {
    let (state, tool, arguments, plugin_type) = (
        state.clone(),
        tool.to_owned(),
        arguments.clone(),
        plugin_type.to_owned(),
    );
    tokio::spawn(async move {
        wait_and_record(&state, row, &tool, &arguments, response, &plugin_type).await
    })
    .await?
}

async fn wait_and_record(
    state: &AppState,
    row: SessionRow,
    tool: &str,
    arguments: &Value,
    mut response: CallResponse,
    plugin_type: &str,
) -> Result<CallResponse, ServerError> {
    let started = Instant::now();
    let call_id = response.call_id;
    let answer = relayed_answer(state, &row.id, call_id, tool, arguments, plugin_type).await;
    let duration_us = started.elapsed().as_micros() as i64;
    let (ok, result) = match &answer {
        Ok(v) => (true, v.clone()),
        Err(reason) => (false, json!({"error": reason})),
    };
    let (reported, ws) =
        complete::complete_after(state, row.clone(), call_id, ok, result, Some(duration_us))
            .await?;
    if ok {
        if let Some(loaded) = state.plugins.get(&row.id) {
            if let Some(n) = loaded.usage.get(tool) {
                n.fetch_add(1, Ordering::Relaxed);
            }
        }
        store::count_use(&state.db, &row.id, tool).await?;
    }
    response.state = ws;
    match answer {
        Ok(_) => {
            response.status = CallStatus::Done;
            response.result = Some(reported.result);
        }
        Err(reason) => {
            response.allowed = false;
            response.status = CallStatus::Failed;
            response.reason = Some(reason);
        }
    }
    Ok(response)
}

/// Relays the call to the session's plugin and waits, at most the plugin
/// call timeout, for its answer; `Err` is the reason the agent reads (not
/// connected, the plugin's error, gone away, no answer in time).
///
/// The call's deadline is now plus the timeout on the injected clock; the
/// plugin is told it with the call, and a stream that connects meanwhile
/// is offered the call again (`waiting`). The wait itself is timed by
/// tokio, so a test moving the clock changes what is offered, not when the
/// agent hears. In a cluster the call reaches the plugin's streams on
/// every instance and its answer comes from any (`across`).
async fn relayed_answer(
    state: &AppState,
    session: &str,
    call_id: i64,
    tool: &str,
    arguments: &Value,
    plugin_type: &str,
) -> Result<Value, String> {
    let timeout = state.config.plugin_call_timeout;
    let now = state.clock.now_ms();
    let offer = Offer {
        call_id,
        tool,
        arguments,
        deadline_ms: now + timeout.as_millis() as i64,
    };
    let relays = state.plugins.relays();
    let waiting = match &state.cluster {
        None => Ok(relays.relay(session, &offer, now)),
        Some(_) => across::relay(state, session, &offer, now).await,
    };
    let mut rx = match waiting {
        Ok(Some(rx)) => rx,
        Ok(None) => {
            return Err(format!(
                "plugin `{plugin_type}` is not connected; its tools cannot run now"
            ))
        }
        Err(e) => {
            tracing::error!(error = %e, session, call_id, "relaying a plugin call failed");
            return Err(format!(
                "plugin `{plugin_type}` could not be reached (the server's database failed)"
            ));
        }
    };
    let answer = match tokio::time::timeout(timeout, &mut rx).await {
        Ok(Ok(answer)) => Ok(answer),
        waited => {
            // Its time is up, or its channel closed: in a cluster the
            // answer may be in the database all the same.
            let late = match &state.cluster {
                Some(_) => across::give_up(state, session, call_id, rx).await,
                None => {
                    relays.give_up(session, call_id);
                    None
                }
            };
            late.ok_or(if waited.is_ok() {
                NoAnswer::Gone
            } else {
                NoAnswer::Late
            })
        }
    };
    match answer {
        Ok(answer) => answer.map_err(|e| {
            format!(
                "plugin `{plugin_type}` answered with an error: {}",
                excerpt(&e)
            )
        }),
        Err(NoAnswer::Gone) => Err(format!("plugin `{plugin_type}` went away before answering")),
        Err(NoAnswer::Late) => Err(format!(
            "plugin `{plugin_type}` did not answer within {} s",
            timeout.as_secs()
        )),
    }
}

/// Why a relayed call has no answer.
enum NoAnswer {
    /// Its channel closed (its plugin or session went away).
    Gone,
    /// Its deadline passed.
    Late,
}

/// `POST /api/sessions/{id}/tool-results/{callId}`: the plugin's answer to
/// a relayed call. 404 for a call of another session or none; for a call
/// that is not a plugin tool's (never relayed), 403 to a plugin token; 409
/// once answered (or given up on).
pub async fn answer(
    state: &AppState,
    admitted: &Admitted,
    call_id: i64,
    answer: Result<Value, String>,
) -> Result<(), ServerError> {
    let row = &admitted.row;
    let taken = match &state.cluster {
        None => state.plugins.relays().answer(&row.id, call_id, answer),
        Some(_) => across::answer(state, &row.id, call_id, &answer).await?,
    };
    if taken {
        return Ok(());
    }
    match crate::server::store::tool_calls::find(&state.db, &row.id, call_id).await? {
        None => Err(ApiError::NotFound(format!("Call {call_id} of session {}", row.id)).into()),
        Some(call) => {
            let relayed = state
                .plugins
                .get(&row.id)
                .is_some_and(|l| l.set.tool(&call.tool).is_some());
            admitted.may(Act::AnswerCall { relayed })?;
            Err(ApiError::Conflict(format!(
            "Call {call_id} is not waiting for a plugin's answer (answered, timed out, or not a plugin tool's call)."
        ))
        .into())
        }
    }
}
