//! The agent runner: a configured model (`SWITCHBOARD_LLM_*`) drives a
//! session, one action per request — ask the model, run one of its tool
//! calls, or stop the turn at its step limit (`workflow_chat::next_action`,
//! the rule the workflow chat uses too).
//!
//! The model gets exactly what a backend gets from `GET …/tools?format=
//! openai`: the session's `Listing` (its system prompt, a workflow step's
//! included, and its tools), read afresh for every model call, so a
//! bindings save, `switchAgent`, a step change or a plugin's tools reach
//! the next answer. Every tool call goes through the session's one call
//! path (`call::call`: enforcement, built-ins, plugin relay); a refusal,
//! an error and a result still awaited are tool messages the model reads
//! (`domain::agent_runner`). Model failures become the assistant's words,
//! never a 500. In a tutor session the runner reports the turns as a
//! backend would (the student's message, the tutor's answer), so the
//! lesson's nudges fire, reach the model and show to watchers. Who may ask for a step is `access::may_drive`'s answer.

use super::access::{admit_write, get};
use super::call::call;
use super::listing::{tools_told, Listing};
use super::turns::turn;
use crate::domain::agent_runner::{
    call_answer, call_error, nudge_note, pending, stop_message, StepRequest, StepResponse,
};
use crate::domain::agent_session::{CallResponse, CallStatus};
use crate::domain::declaration::DeclarationFormat;
use crate::domain::lesson::nudge::{Speaker, TURN_TEXT_MAX_BYTES};
use crate::domain::limits::excerpt;
use crate::domain::workflow_chat::{
    check_messages, is_complete, next_action, Action, ChatMessage, ChatRole, ToolCall,
};
use crate::error::ApiError;
use crate::server::store::agent_sessions::SessionRow;
use crate::server::store::tool_calls;
use crate::server::workflows::llm::configured;
use crate::server::{AppState, ServerError};
use serde_json::Value;
use std::time::Duration;

/// How often a wait for a backend's result reads the call again when no
/// event woke it.
const RECHECK: Duration = Duration::from_millis(250);

/// Does the next action of `request` in session `row`: 422 naming the
/// field for a history that does not hold together, 409 once the session
/// has ended, 503 (saying what to set) without a model.
pub async fn step(
    state: &AppState,
    row: SessionRow,
    request: StepRequest,
) -> Result<StepResponse, ServerError> {
    check_messages(&request.messages).map_err(|p| ApiError::invalid(p.field, p.message))?;
    row.still_open()?;
    let limit = state.config.agent_step_limit;
    let action =
        next_action(&request.messages, limit).map_err(|p| ApiError::invalid(p.field, p.message))?;
    let added = match action {
        Action::StopTurn => stop_message(limit),
        Action::CallModel => {
            // A model call counts in the session's write window, like a
            // tool call, so no one can spin a model without bound.
            admit_write(state, &row.id).await?;
            let note = student_turn(state, &row, &request.messages).await?;
            let answer = ask_model(state, &row, &request.messages, note).await?;
            if is_complete(&answer) && row.lesson_id.is_some() {
                let said = cut(&answer.content);
                turn(
                    state,
                    get(state, &row.id).await?,
                    Speaker::Tutor,
                    Some(said),
                )
                .await?;
            }
            answer
        }
        Action::RunTool(tool_call) => {
            let tool_call = tool_call.clone();
            let answer = run_tool(state, &row, &tool_call).await?;
            ChatMessage::tool_result(&tool_call.id, answer)
        }
    };
    let state_now = get(state, &row.id).await?.workflow_state()?;
    let is_complete = is_complete(&added);
    let mut messages = request.messages;
    messages.push(added);
    Ok(StepResponse {
        messages,
        is_complete,
        state: state_now,
    })
}

/// Runs whole turns: steps until the turn is complete (the assistant's
/// answer, or the stop at the step limit). For doors that answer a
/// message at once, such as a workflow's `chat_message` trigger.
pub async fn run_turn(
    state: &AppState,
    row: SessionRow,
    messages: Vec<ChatMessage>,
) -> Result<StepResponse, ServerError> {
    let mut request = StepRequest { messages };
    loop {
        let row = get(state, &row.id).await?;
        let answer = step(state, row, request).await?;
        if answer.is_complete {
            return Ok(answer);
        }
        request = StepRequest {
            messages: answer.messages,
        };
    }
}

/// In a tutor session, the student's new message is a turn: it is
/// counted as a backend reporting turns would, so watchers see it and the
/// lesson's triggers fire; the nudges they give, in words for the model.
/// Nothing for other sessions, or when the turn was already counted (a
/// model step after tool results).
async fn student_turn(
    state: &AppState,
    row: &SessionRow,
    history: &[ChatMessage],
) -> Result<Option<String>, ServerError> {
    let Some(said) = history.last().filter(|m| m.role == ChatRole::User) else {
        return Ok(None);
    };
    if row.lesson_id.is_none() {
        return Ok(None);
    }
    let answer = turn(
        state,
        row.clone(),
        Speaker::Student,
        Some(cut(&said.content)),
    )
    .await?;
    Ok(nudge_note(&answer.nudges))
}

/// `text` cut to what a reported turn may hold, at a character boundary.
fn cut(text: &str) -> &str {
    let mut end = text.len().min(TURN_TEXT_MAX_BYTES);
    while !text.is_char_boundary(end) {
        end -= 1;
    }
    &text[..end]
}

/// The model's next message, given the session's listing now (and
/// `note`, the lesson's nudges, after the history); a model that cannot
/// be reached or answers unusably is the assistant's words.
async fn ask_model(
    state: &AppState,
    row: &SessionRow,
    history: &[ChatMessage],
    note: Option<String>,
) -> Result<ChatMessage, ServerError> {
    let model = configured(&state.config.llm)?;
    let listing = Listing::of(state, row).await?;
    tools_told(state, row, &listing.available).await?;
    let told = listing.rest(DeclarationFormat::OpenAi);
    let tools = told
        .pointer("/tools/tools")
        .and_then(Value::as_array)
        .cloned()
        .unwrap_or_default();
    Ok(model
        .next_message(listing.system_prompt(), history, note.as_deref(), &tools)
        .await)
}

/// Runs `tool_call` through the session's call path and says what came
/// of it; a call the backend executes is waited for (the configured
/// result wait) before the model is told it is pending.
async fn run_tool(
    state: &AppState,
    row: &SessionRow,
    tool_call: &ToolCall,
) -> Result<String, ServerError> {
    let name = tool_call.function.name.as_str();
    let arguments = match serde_json::from_str::<Value>(&tool_call.function.arguments) {
        Ok(Value::Object(map)) => Value::Object(map),
        _ => {
            return Ok(call_error(
                &excerpt(name),
                "its arguments are not a JSON object; send them as one",
            ))
        }
    };
    let row = get(state, &row.id).await?;
    match call_and_wait(state, row, name, arguments).await {
        Ok(Waited::Answered(response)) => Ok(call_answer(name, &response)),
        Ok(Waited::Pending(call_id)) => Ok(pending(name, call_id)),
        Err(ServerError::Api(e)) => Ok(call_error(&excerpt(name), &e.to_string())),
        Err(other) => Err(other),
    }
}

/// What came of a call an agent's own door made ([`call_and_wait`]).
pub enum Waited {
    /// Refused, done, failed, or reported by the backend in time.
    Answered(Box<CallResponse>),
    /// Allowed and handed to the backend, whose result is not in yet:
    /// the call's id.
    Pending(i64),
}

/// Calls `name` in session `row` through the one call path and, for a
/// call the session's backend executes, waits up to the configured result
/// wait for its report: the doors where the agent is not the backend (the
/// agent runner, Ultravox's HTTP tools) answer the model with the result
/// rather than "pending" whenever they can.
pub async fn call_and_wait(
    state: &AppState,
    row: SessionRow,
    name: &str,
    arguments: Value,
) -> Result<Waited, ServerError> {
    let session = row.id.clone();
    let mut response = call(state, row, name, arguments).await?;
    if response.allowed && response.status == CallStatus::Awaiting {
        match wait_for_result(state, &session, response.call_id).await? {
            Some((status, result)) => {
                response.status = status;
                response.result = result;
            }
            None => return Ok(Waited::Pending(response.call_id)),
        }
    }
    Ok(Waited::Answered(Box::new(response)))
}

/// Waits up to the configured result wait for call `call_id` of session
/// `session` to be reported: its status and result, or `None` if it is
/// still awaited.
async fn wait_for_result(
    state: &AppState,
    session: &str,
    call_id: i64,
) -> Result<Option<(CallStatus, Option<Value>)>, ServerError> {
    let deadline = tokio::time::Instant::now() + state.config.agent_result_wait;
    let mut events = state.hub.listen(session);
    loop {
        match tool_calls::reported(&state.db, session, call_id).await? {
            Some((CallStatus::Awaiting, _)) => {}
            Some(done) => return Ok(Some(done)),
            None => return Ok(None),
        }
        // Any event may be the report: read the call again after one,
        // and at least every `RECHECK` (a closed stream — the session
        // ended — is read again at that pace).
        tokio::select! {
            _ = tokio::time::sleep_until(deadline) => return Ok(None),
            got = events.recv() => {
                if matches!(got, Err(tokio::sync::broadcast::error::RecvError::Closed)) {
                    tokio::time::sleep(RECHECK).await;
                }
            }
            _ = tokio::time::sleep(RECHECK) => {}
        }
    }
}
