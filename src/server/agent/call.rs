//! One tool call, step by step: bounds, the session's call lock, the
//! budget, `decide` (pure, in `domain::decide`) on what the server
//! gathered, the executor for built-ins, recording, and the events that
//! tell watchers; an allowed plugin tool's call is then relayed.

use super::access::{admit_write, get};
use super::end::end_locked;
use super::execute::{self, Ctx, Declined, Kind};
use super::listing::{agent_view, tools_now, withheld_under};
use super::watch::publish_list_change;
use crate::domain::agent_session::{
    CallOutcome, CallResponse, CallStatus, SessionEvent, ToolCallRecord,
};
use crate::domain::decide::{decide, Ask, Place, PluginTool, Refusal};
use crate::domain::effect::apply_effects;
use crate::domain::ids::ToolId;
use crate::domain::lesson::outcome::{StudentChange, TutorOutcome};
use crate::domain::limits::{
    bytes_in_words, excerpt, TOOL_ARGUMENTS_MAX_BYTES, TOOL_NAME_MAX_CHARS,
};
use crate::domain::session_checks::record_outcome;
use crate::domain::vibe::HANG_UP_TOOL;
use crate::domain::workflow_state::WorkflowState;
use crate::error::ApiError;
use crate::server::agent::{budget, plugins};
use crate::server::store::agent_sessions::SessionRow;
use crate::server::store::tool_calls::{self, NewCall};
use crate::server::{AppState, ServerError};
use serde_json::Value;
use std::sync::Arc;
use std::time::Instant;

/// Why `tool` may not run now, if it may not: gathers what
/// [`decide`] needs (the rules in force, the session's place, the tools
/// withheld from it, its plugin's tool of that name and whether the
/// plugin is `connected`) and asks it. `available` is [`tools_now`] for
/// the session before the call.
#[allow(clippy::too_many_arguments)]
fn refusal(
    state: &AppState,
    row: &SessionRow,
    ws: &WorkflowState,
    available: &[String],
    tool: &str,
    arguments: &Value,
    plugin: Option<&(Arc<plugins::Loaded>, bool)>,
    connected: bool,
) -> Option<Refusal> {
    let check_plugin = |arguments: &Value| match plugin {
        Some((loaded, _)) => loaded.check_arguments(tool, arguments),
        None => Ok(()),
    };
    let plugin_tool = plugin.and_then(|(loaded, _)| {
        Some(PluginTool {
            plugin: loaded.set.plugin_type.as_str(),
            status: loaded.set.tool(tool)?.status,
            connected,
            check_arguments: &check_plugin,
        })
    });
    let rules = state.rules();
    let withheld = withheld_under(&rules, row.lesson_tools.as_deref(), ws);
    let ask = Ask {
        tool,
        arguments,
        available,
        withheld: &withheld,
        place: place_of(row, ws),
        state: ws,
        plugin: plugin_tool,
    };
    decide(&ask, &*rules)
}

/// Where session `row` (in state `ws`) is, for refusals.
fn place_of(row: &SessionRow, ws: &WorkflowState) -> Place {
    match (row.lesson_id, &ws.agent) {
        (Some(lesson), _) => Place::Lesson(lesson),
        (None, Some(ctx)) => Place::Agent(ctx.agent.clone()),
        (None, None) => Place::Workflow(ws.current_workflow.clone()),
    }
}

/// Refuses, before any lookup and without recording anything, a tool name
/// that is not a catalogue id (422 naming `name`) and arguments over
/// [`TOOL_ARGUMENTS_MAX_BYTES`] (413 naming `arguments`).
pub(crate) fn check_call_size(tool: &str, arguments: &Value) -> Result<(), ApiError> {
    if tool.chars().count() > TOOL_NAME_MAX_CHARS {
        return Err(ApiError::invalid(
            "name",
            format!(
                "must be at most {TOOL_NAME_MAX_CHARS} characters (got \"{}\")",
                excerpt(tool)
            ),
        ));
    }
    ToolId::parse(tool).map_err(|e| ApiError::invalid("name", e.rule))?;
    if arguments.to_string().len() > TOOL_ARGUMENTS_MAX_BYTES {
        return Err(ApiError::TooLarge {
            field: "arguments".into(),
            limit: bytes_in_words(TOOL_ARGUMENTS_MAX_BYTES),
        });
    }
    Ok(())
}

/// Checks and, if allowed, runs one tool call; records it and pushes the
/// changes. Calls on one session are serialised, so state never races. An
/// allowed call of one of the session's plugin tools is then carried to
/// the plugin and its answer returned (the call lock is not held while
/// waiting for it).
pub async fn call(
    state: &AppState,
    row: SessionRow,
    tool: &str,
    arguments: Value,
) -> Result<CallResponse, ServerError> {
    check_call_size(tool, &arguments)?;
    let Some((loaded, _)) = plugins::plugin_of(state, &row.id, tool) else {
        return call_locked(state, row, tool, arguments).await;
    };
    let kind = loaded.set.plugin_type.as_str();
    drop(loaded);
    let response = call_locked(state, row.clone(), tool, arguments.clone()).await?;
    if response.allowed && response.status == CallStatus::Awaiting {
        return plugins::relay(state, row, tool, &arguments, response, kind).await;
    }
    Ok(response)
}

/// [`call`] up to recording it, under the session's call lock: enter,
/// decide and execute, record, announce, and end the session when the
/// call ended it.
async fn call_locked(
    state: &AppState,
    row: SessionRow,
    tool: &str,
    arguments: Value,
) -> Result<CallResponse, ServerError> {
    let _guard = state.lock_session(&row.id).await?;
    let started = Instant::now();
    let row = enter(state, &row.id, &arguments).await?;
    let before = row.workflow_state()?;
    let available = tools_now(state, &row.id, row.lesson_tools.as_deref(), &before);
    let mut ws = before.clone();
    let done = decide_and_run(state, &row, &mut ws, &available, tool, &arguments).await?;
    // Only a workflow, step or agent switch changes what this session may
    // call.
    let switched = ws.current_workflow != before.current_workflow
        || ws.agent != before.agent
        || ws.workflow_step != before.workflow_step;
    let tools = if switched {
        tools_now(state, &row.id, row.lesson_tools.as_deref(), &ws)
    } else {
        available
    };
    let told = tools.join(",");
    let tools_changed = row.tools_seen.as_deref() != Some(told.as_str());
    let call = Made {
        tool,
        arguments,
        done,
        duration_us: started.elapsed().as_micros() as i64,
        at_ms: at_ms(),
    };
    let call_id = record(state, &row, &before, &ws, &call, &told).await?;
    announce(
        state,
        &row,
        &before,
        &ws,
        &call,
        call_id,
        switched.then(|| tools.clone()),
    );
    let allowed = call.done.outcome == CallOutcome::Allowed;
    if (tool == "end_session" || tool == HANG_UP_TOOL) && allowed {
        end_locked(state, &row.id, "ended by agent").await?;
    }
    Ok(CallResponse {
        allowed,
        status: call.done.status,
        result: call.done.result,
        reason: call.done.reason,
        state: ws,
        call_id,
        tools_changed,
        tools: tools_changed.then_some(tools),
    })
}

/// Re-reads session `id` under its call lock (another call may have
/// changed its state) and lets the call in: 409 once ended, the session's
/// byte budget and its write window.
async fn enter(state: &AppState, id: &str, arguments: &Value) -> Result<SessionRow, ServerError> {
    let row = get(state, id).await?;
    if row.ended_at.is_some() {
        state.forget_session_lock(&row.id);
        return Err(ApiError::Conflict(format!("Session {} has ended.", row.id)).into());
    }
    budget::check_call(
        &row,
        &state.config.session_budget,
        tool_calls::stored_bytes(arguments, None) as usize,
    )?;
    admit_write(state, &row.id).await?;
    Ok(row)
}

/// What became of a call: refused, run here, or awaiting the backend's
/// (or plugin's) result; and what a built-in changed besides the state.
struct Done {
    outcome: CallOutcome,
    result: Option<Value>,
    reason: Option<String>,
    status: CallStatus,
    verified: Option<String>,
    tutor_outcome: Option<TutorOutcome>,
    student_change: Option<StudentChange>,
}

/// A call as made: the tool, its arguments, what became of it, how long
/// that took and when it was made (Unix milliseconds).
struct Made<'a> {
    tool: &'a str,
    arguments: Value,
    done: Done,
    duration_us: i64,
    at_ms: i64,
}

/// Decides on the call and, when allowed and built in, runs it through
/// the executor, applying the tool's effects to `ws`.
async fn decide_and_run(
    state: &AppState,
    row: &SessionRow,
    ws: &mut WorkflowState,
    available: &[String],
    tool: &str,
    arguments: &Value,
) -> Result<Done, ServerError> {
    let mut done = Done {
        outcome: CallOutcome::Allowed,
        result: None,
        reason: None,
        status: CallStatus::Done,
        verified: row.verified_account.clone(),
        tutor_outcome: None,
        student_change: None,
    };
    let plugin = plugins::plugin_of(state, &row.id, tool);
    // In a cluster the plugin's stream may be on another instance.
    let connected = match &plugin {
        Some(_) => plugins::connected(state, &row.id).await?,
        None => false,
    };
    let refused = refusal(
        state,
        row,
        ws,
        available,
        tool,
        arguments,
        plugin.as_ref(),
        connected,
    );
    if let Some(refusal) = refused {
        done.outcome = CallOutcome::Refused;
        done.status = CallStatus::Refused;
        done.reason = Some(refusal.to_string());
        return Ok(done);
    }
    let kind = Kind::of(row, ws);
    if !execute::executes(state, tool, kind) {
        done.status = CallStatus::Awaiting;
        return Ok(done);
    }
    let cx = Ctx {
        state,
        row,
        ws,
        verified: &mut done.verified,
        tool,
        arguments,
    };
    match execute::run(cx, kind).await? {
        Ok(ran) => {
            if let Some(entry) = state.rules().tool(tool) {
                apply_effects(&entry.effects, &ran.result, ws);
            }
            // A completed task or mastered item is a check of the
            // session's, so watchers see it with the rest of its state.
            if let Some(outcome) = &ran.outcome {
                record_outcome(outcome, ws);
            }
            done.tutor_outcome = ran.outcome;
            done.student_change = ran.student;
            done.result = Some(ran.result);
        }
        Err(Declined::Refused(reason)) => {
            done.outcome = CallOutcome::Refused;
            done.status = CallStatus::Refused;
            done.reason = Some(reason);
        }
        // It ran and failed: allowed, `failed`, its answer the result (no
        // effects: nothing it promised happened).
        Err(Declined::Failed(answer)) => {
            done.status = CallStatus::Failed;
            done.result = Some(answer);
        }
    }
    Ok(done)
}

/// Stores the call (and the session's new state with it); its id.
async fn record(
    state: &AppState,
    row: &SessionRow,
    before: &WorkflowState,
    ws: &WorkflowState,
    call: &Made<'_>,
    told: &str,
) -> Result<i64, ServerError> {
    tool_calls::record(
        &state.db,
        &NewCall {
            session_id: &row.id,
            at_ms: call.at_ms,
            workflow: &before.current_workflow,
            tool: call.tool,
            arguments: &call.arguments,
            outcome: call.done.outcome,
            result: call.done.result.as_ref(),
            reason: call.done.reason.as_deref(),
            duration_us: call.duration_us,
            state: ws,
            verified_account: call.done.verified.as_deref(),
            status: call.done.status,
            tools_seen: told,
            tutor_outcome: call.done.tutor_outcome.as_ref(),
            student_change: row.student_id.zip(call.done.student_change),
            now: state.clock.now(),
        },
    )
    .await
}

/// Now, in Unix milliseconds.
fn at_ms() -> i64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_millis() as i64)
}

/// Tells watchers about call `call_id`: the call, the state change, a new
/// agent, and the new tools (`switched`: the list after a switch).
fn announce(
    state: &AppState,
    row: &SessionRow,
    before: &WorkflowState,
    ws: &WorkflowState,
    call: &Made<'_>,
    call_id: i64,
    switched: Option<Vec<String>>,
) {
    let record = ToolCallRecord {
        id: call_id,
        at_ms: call.at_ms,
        tool: call.tool.to_owned(),
        arguments: call.arguments.clone(),
        outcome: call.done.outcome,
        result: call.done.result.clone(),
        reason: call.done.reason.clone(),
        duration_us: call.duration_us,
        workflow: before.current_workflow.clone(),
        truncated: false,
        status: call.done.status,
    };
    let mut events = vec![SessionEvent::ToolCall(record)];
    if ws != before {
        events.push(SessionEvent::WorkflowUpdate(ws.update()));
    }
    if ws.agent != before.agent {
        events.extend(agent_view(state, ws).map(SessionEvent::AgentChanged));
    }
    if let Some(tools) = switched {
        events.push(SessionEvent::ToolsChanged { tools });
    }
    // One delivery, so a watching page draws the call and what it changed
    // together.
    state.hub.publish_all(&row.id, &events);
    publish_list_change(state, row, before, ws);
}
