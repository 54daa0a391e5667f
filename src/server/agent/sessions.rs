//! Live agent sessions: opening them, enforcing the rules on every tool call,
//! running the built-in tools, recording every call, and pushing each change
//! to watchers.

use crate::domain::agent_session::own_checks_problem;
use crate::domain::agent_session::{
    CallOutcome, CallResponse, CallResult, CallStatus, SessionEvent, SessionSnapshot,
    SessionSummary, StatePatch, ToolCallRecord, TurnUpdate,
};
use crate::domain::catalogue::WORKFLOW_SWITCH_TOOL;
use crate::domain::effect::{apply_effects, missing_checks};
use crate::domain::ids::ToolId;
use crate::domain::lesson::config::ToolConfig;
use crate::domain::lesson::nudge::{evaluate, Nudge, Speaker};
use crate::domain::limits::{
    bytes_in_words, excerpt, CALLS_PAGE_MAX, SNAPSHOT_CALLS, SNAPSHOT_VALUE_MAX_BYTES,
    TOOL_ARGUMENTS_MAX_BYTES, TOOL_NAME_MAX_CHARS, TOOL_RESULT_MAX_BYTES,
};
use crate::domain::plugin::union;
use crate::domain::session_access::{
    permits, Act, Credential, PLUGIN_TOKEN_PREFIX, SESSION_TOKEN_PREFIX,
};
use crate::domain::vibe::{find_agent, AgentView, HANG_UP_TOOL};
use crate::domain::workflow_state::AgentContext;
use crate::domain::workflow_state::WorkflowState;
use crate::error::ApiError;
use crate::server::agent::rules::Rules;
use crate::server::agent::{budget, builtins, plugins};
use crate::server::auth::{random_token, token_hash};
use crate::server::db::now;
use crate::server::store::agent_sessions::{self as rows, LessonFields, NewSession, SessionRow};
use crate::server::store::lessons;
use crate::server::store::tool_calls::{self, NewCall};
use crate::server::{AppState, ServerError};
use serde_json::{json, Value};
use std::sync::Arc;
use std::time::Instant;

/// Loads a session.
pub async fn get(state: &AppState, id: &str) -> Result<SessionRow, ServerError> {
    rows::find(&state.db, id)
        .await?
        .ok_or_else(|| ApiError::NotFound(format!("Session {id}")).into())
}

/// A request on a session, let in by [`admit`]: the session and which of
/// its credentials came with it.
#[derive(Debug, Clone)]
pub struct Admitted {
    /// The session.
    pub row: SessionRow,
    /// The session token or the plugin token.
    pub credential: Credential,
}

impl Admitted {
    /// Whether this request's credential may also do `act` (a check that
    /// needs what the request is about, such as whether a call was relayed
    /// to the plugin): 403 naming what is needed otherwise.
    pub fn may(&self, act: Act) -> Result<(), ServerError> {
        permits(self.credential, act).map_err(|needed| {
            ApiError::Forbidden {
                needed: needed.into(),
            }
            .into()
        })
    }
}

/// The door-keeper of every session route: finds the session `token`
/// belongs to (a session token, or a plugin token by its `pt_` prefix) and
/// lets the request do `act` only if that credential may
/// (`domain::session_access`). 401 without a token or for an unknown one,
/// 403 for another session's token or for a credential without the right.
pub async fn admit(
    state: &AppState,
    id: &str,
    token: Option<&str>,
    act: Act,
) -> Result<Admitted, ServerError> {
    let token = token.ok_or(ApiError::Unauthenticated)?;
    let hash = token_hash(token);
    let (row, credential) = if token.starts_with(PLUGIN_TOKEN_PREFIX) {
        let row = rows::find_by_plugin_token_hash(&state.db, &hash).await?;
        (row, Credential::Plugin)
    } else {
        let row = rows::find_by_token_hash(&state.db, &hash).await?;
        (row, Credential::Session)
    };
    let row = row.ok_or(ApiError::Unauthenticated)?;
    if row.id != id {
        return Err(ApiError::Forbidden {
            needed: "this session's token".into(),
        }
        .into());
    }
    let admitted = Admitted { row, credential };
    admitted.may(act)?;
    Ok(admitted)
}

/// Issues session `row` a new plugin token, replacing the one it had;
/// 409 once the session has ended.
pub async fn issue_plugin_token(state: &AppState, row: &SessionRow) -> Result<String, ServerError> {
    if row.ended_at.is_some() {
        return Err(ApiError::Conflict(format!("Session {} has ended.", row.id)).into());
    }
    let token = new_plugin_token();
    rows::set_plugin_token(&state.db, &row.id, &token_hash(&token), state.clock.now()).await?;
    Ok(token)
}

fn new_plugin_token() -> String {
    format!("{PLUGIN_TOKEN_PREFIX}{}", random_token())
}

/// A session just opened: its id and both credentials.
#[derive(Debug, Clone)]
pub struct Opened {
    /// The session's id.
    pub id: String,
    /// The session token (`st_…`), for the agent backend.
    pub token: String,
    /// The plugin token (`pt_…`), for a plugin of the session.
    pub plugin_token: String,
}

/// Opens a session in `workflow`; returns its id and credentials. With
/// `runs_builtins` off, Switchboard executes only the session tools and the
/// backend executes (and reports the result of) every other allowed call.
pub async fn open(
    state: &AppState,
    workflow: &str,
    api_key: Option<i64>,
    runs_builtins: bool,
) -> Result<Opened, ServerError> {
    if !state.rules().has_workflow(workflow) {
        return Err(ApiError::invalid(
            "workflowId",
            format!(
                "unknown workflow \"{}\"; valid workflow ids: {}",
                excerpt(workflow),
                state.rules().workflow_ids().join(", ")
            ),
        )
        .into());
    }
    let mut ws = WorkflowState::start(workflow);
    ws.workflow_step = state.rules().first_step(workflow);
    // A new session has no plugin yet.
    let tools = tools_under(&state.rules(), None, &ws).join(",");
    start(state, ws, api_key, runs_builtins, &tools, None).await
}

/// Stores a new session starting in `ws`, announces it to its (future)
/// watchers and the session list, and returns its id and credentials.
async fn start(
    state: &AppState,
    ws: WorkflowState,
    api_key: Option<i64>,
    runs_builtins: bool,
    tools: &str,
    lesson: Option<LessonFields<'_>>,
) -> Result<Opened, ServerError> {
    let id = format!("s{}", &random_token()[..15]).to_lowercase();
    let token = format!("{SESSION_TOKEN_PREFIX}{}", random_token());
    let plugin_token = new_plugin_token();
    let t = state.clock.now();
    rows::insert(
        &state.db,
        &NewSession {
            id: &id,
            token_hash: &token_hash(&token),
            plugin_token_hash: &token_hash(&plugin_token),
            api_key,
            state: &ws,
            runs_builtins,
            tools_seen: tools,
            lesson,
            at: t,
        },
    )
    .await?;
    state
        .hub
        .publish(&id, &SessionEvent::WorkflowUpdate(ws.update()));
    state
        .hub
        .publish_list(&json!({"type": "opened", "session": summary_of(&id, &ws, t, t, false, lesson.and_then(|l| l.student))}));
    Ok(Opened {
        id,
        token,
        plugin_token,
    })
}

/// The tools session `session` may call now: a tutor session's lesson
/// tools (`lesson_tools`, fixed when it opened), else the tools of its
/// current workflow or agent under the rules in force; then its plugin's
/// active tools. The one answer that listing, enforcement, `toolsChanged`
/// and watchers all use.
pub fn tools_now(
    state: &AppState,
    session: &str,
    lesson_tools: Option<&str>,
    ws: &WorkflowState,
) -> Vec<String> {
    with_plugin(
        state,
        session,
        tools_under(&state.rules(), lesson_tools, ws),
    )
}

/// The declarations of `available` (a [`tools_now`] answer) for session
/// `session`: catalogue tools from the rules, plugin tools from its plugin.
pub fn declarations(
    state: &AppState,
    session: &str,
    available: &[String],
) -> Vec<crate::domain::declaration::FunctionDeclaration> {
    let rules = state.rules();
    let plugin = state.plugins.get(session);
    available
        .iter()
        .filter_map(|name| {
            let from_plugin = plugin
                .as_ref()
                .and_then(|p| p.set.tool(name))
                .map(|t| t.definition.declaration());
            from_plugin.or_else(|| rules.tool(name).map(|t| t.declaration()))
        })
        .collect()
}

/// `base` and then `session`'s active plugin tools.
fn with_plugin(state: &AppState, session: &str, base: Vec<String>) -> Vec<String> {
    match state.plugins.get(session) {
        Some(loaded) => union(base, Some(&loaded.set)),
        None => base,
    }
}

/// [`tools_now`] under `rules` (the rules in force, or the ones just
/// replaced when telling sessions what changed).
fn tools_under(rules: &Rules, lesson_tools: Option<&str>, ws: &WorkflowState) -> Vec<String> {
    match (lesson_tools, &ws.agent) {
        (Some(tools), _) => tools
            .split(',')
            .filter(|t| !t.is_empty())
            .map(str::to_owned)
            .collect(),
        (None, Some(ctx)) => rules.agent_tools(ctx),
        (None, None) => rules.available_at(&ws.current_workflow, ws.workflow_step.as_deref()),
    }
}

/// Opens a session in vibe `vibe` talking to `agent` (default: the vibe's
/// default agent); its tools are the vibe's core tools and the agent's,
/// through the same checks as any session.
pub async fn open_vibe(
    state: &AppState,
    vibe: &str,
    agent: Option<&str>,
    api_key: Option<i64>,
) -> Result<Opened, ServerError> {
    let rules = state.rules();
    let Some(v) = rules.vibe(vibe) else {
        let ids: Vec<&str> = rules.vibes().iter().map(|v| v.id.as_str()).collect();
        return Err(ApiError::invalid(
            "vibeId",
            format!(
                "unknown vibe \"{}\"; vibes: {}",
                excerpt(vibe),
                ids.join(", ")
            ),
        )
        .into());
    };
    let agent = match agent {
        None => v.default_agent.to_string(),
        Some(wanted) => {
            let agents = rules.agents_of(v);
            match find_agent(&agents, wanted) {
                Some(a) => a.id.to_string(),
                None => {
                    return Err(ApiError::invalid(
                        "agentId",
                        format!(
                            "agent \"{}\" is not in vibe \"{vibe}\"; agents: {}",
                            excerpt(wanted),
                            v.agents
                                .iter()
                                .map(|a| a.as_str())
                                .collect::<Vec<_>>()
                                .join(", ")
                        ),
                    )
                    .into())
                }
            }
        }
    };
    let mut ws = WorkflowState::start(&format!("vibe-{vibe}"));
    ws.agent = Some(AgentContext {
        vibe: vibe.to_owned(),
        agent,
    });
    // A new session has no plugin yet.
    let tools = tools_under(&state.rules(), None, &ws).join(",");
    start(state, ws, api_key, true, &tools, None).await
}

/// Who `ws`'s session is talking to, for watchers (a vibe session only).
pub fn agent_view(state: &AppState, ws: &WorkflowState) -> Option<AgentView> {
    let ctx = ws.agent.as_ref()?;
    let rules = state.rules();
    Some(AgentView::of(
        rules.vibe(&ctx.vibe)?,
        rules.agent(&ctx.agent)?,
    ))
}

/// A tutor session's tools and whose session it is.
pub struct LessonRun<'a> {
    /// The lesson.
    pub lesson_id: i64,
    /// Its enabled tutor tools, as the prompt declares them.
    pub tools: Vec<String>,
    /// Who it is for.
    pub student: Option<&'a str>,
    /// How long it should run (the lesson's duration).
    pub planned_minutes: Option<u32>,
}

/// Opens a tutor session for a lesson: its workflow is `lesson-{id}` and
/// its tools are the lesson's, through the same checks as any session.
pub async fn open_lesson(
    state: &AppState,
    run: LessonRun<'_>,
    api_key: Option<i64>,
) -> Result<Opened, ServerError> {
    let ws = WorkflowState::start(&format!("lesson-{}", run.lesson_id));
    let tools = run.tools.join(",");
    let lesson = LessonFields {
        lesson_id: run.lesson_id,
        tools: &tools,
        student: run.student,
        planned_minutes: run.planned_minutes,
    };
    start(state, ws, api_key, true, &tools, Some(lesson)).await
}

/// Records that `row`'s backend has been told `tools` (it fetched them),
/// so its next call does not report them as changed; no write when it
/// already knew them.
pub async fn tools_told(
    state: &AppState,
    row: &SessionRow,
    tools: &[String],
) -> Result<(), ServerError> {
    let told = tools.join(",");
    if row.tools_seen.as_deref() == Some(told.as_str()) {
        return Ok(());
    }
    rows::set_tools_seen(&state.db, &row.id, &told).await
}

fn summary_of(
    id: &str,
    ws: &WorkflowState,
    created_at: i64,
    last_activity: i64,
    ended: bool,
    student: Option<&str>,
) -> SessionSummary {
    SessionSummary {
        id: id.to_owned(),
        state: ws.clone(),
        last_activity,
        created_at,
        ended,
        student: student.map(str::to_owned),
    }
}

/// Open sessions first, then recently ended ones.
pub async fn list(state: &AppState) -> Result<Vec<SessionSummary>, ServerError> {
    rows::recent(&state.db)
        .await?
        .into_iter()
        .map(|r| {
            Ok(summary_of(
                &r.id,
                &r.workflow_state()?,
                r.created_at,
                r.last_activity,
                r.ended_at.is_some(),
                r.student.as_deref(),
            ))
        })
        .collect()
}

/// One page of a session's calls older than `before` (all of each call,
/// unlike a snapshot's excerpts), oldest first; at most [`CALLS_PAGE_MAX`].
pub async fn calls_page(
    state: &AppState,
    id: &str,
    before: Option<i64>,
    limit: usize,
) -> Result<Vec<ToolCallRecord>, ServerError> {
    tool_calls::page(&state.db, id, before, limit.clamp(1, CALLS_PAGE_MAX)).await
}

/// Everything a new watcher needs: the state, the tools now, and the last
/// [`SNAPSHOT_CALLS`] calls with large values cut to excerpts, so a session
/// with thousands of calls still costs a new watcher a few hundred KB.
pub async fn snapshot(state: &AppState, id: &str) -> Result<SessionSnapshot, ServerError> {
    snapshot_of(state, get(state, id).await?).await
}

/// [`snapshot`] of a row already read.
pub async fn snapshot_of(
    state: &AppState,
    row: SessionRow,
) -> Result<SessionSnapshot, ServerError> {
    let ws = row.workflow_state()?;
    Ok(SessionSnapshot {
        started_at: row.created_at,
        ended_at: row.ended_at,
        planned_minutes: row.timing().planned_minutes,
        turns: row.turn_log()?,
        agent: agent_view(state, &ws),
        tools: tools_now(state, &row.id, row.lesson_tools.as_deref(), &ws),
        plugin: state.plugins.get(&row.id).map(|l| l.current()),
        state: ws,
        calls: tool_calls::page(&state.db, &row.id, None, SNAPSHOT_CALLS)
            .await?
            .into_iter()
            .map(|c| c.bounded(SNAPSHOT_VALUE_MAX_BYTES))
            .collect(),
        ended: row.ended_at.is_some(),
        session_id: row.id,
    })
}

/// Ends a session (idempotent): records it, tells watchers (`ended`), then
/// closes its stream and its MCP sessions and frees its broadcast ring and
/// call lock; only the database record stays. Waits for a call in progress to finish first.
pub async fn end(state: &AppState, id: &str, reason: &str) -> Result<(), ServerError> {
    let lock = state.session_lock(id);
    let _guard = lock.lock().await;
    end_locked(state, id, reason).await
}

/// [`end`] for a caller that already holds the session's call lock.
async fn end_locked(state: &AppState, id: &str, reason: &str) -> Result<(), ServerError> {
    if rows::end(&state.db, id, reason).await? {
        state.hub.publish(
            id,
            &SessionEvent::Ended {
                reason: reason.to_owned(),
            },
        );
        state.hub.publish_list(&json!({"type": "ended", "id": id}));
    }
    state.hub.close(id);
    state.plugins.forget(id);
    state.budgets.forget_session(id);
    state
        .session_mcp
        .close_owner(&crate::server::mcp_sessions::session_owner(id));
    state.forget_session_lock(id);
    Ok(())
}

/// Ends every open session opened with API key `key_id` (it was revoked).
pub async fn end_opened_by_key(
    state: &AppState,
    key_id: i64,
    reason: &str,
) -> Result<(), ServerError> {
    for id in rows::open_for_key(&state.db, key_id).await? {
        end(state, &id, reason).await?;
    }
    Ok(())
}

/// Ends sessions idle longer than the configured time.
pub async fn expire_idle(state: &AppState) -> Result<usize, ServerError> {
    let cutoff = now() - state.config.session_idle.as_secs() as i64;
    let ids = rows::idle_since(&state.db, cutoff).await?;
    for id in &ids {
        end(state, id, "idle timeout").await?;
    }
    Ok(ids.len())
}

/// Re-announces the available tools of every open session whose set changed
/// after new bindings; no session is restarted.
pub async fn announce_tools(state: &AppState, before: &Rules) -> Result<(), ServerError> {
    for row in rows::open(&state.db).await? {
        let ws = row.workflow_state()?;
        let now_tools = tools_now(state, &row.id, row.lesson_tools.as_deref(), &ws);
        let then = with_plugin(
            state,
            &row.id,
            tools_under(before, row.lesson_tools.as_deref(), &ws),
        );
        if now_tools != then {
            state
                .hub
                .publish(&row.id, &SessionEvent::ToolsChanged { tools: now_tools });
        }
    }
    Ok(())
}

/// Why `tool` may not run now, if it may not: not in the catalogue, not
/// available in the workflow, an unknown workflow to switch to, bad
/// arguments, or a required check not passed.
/// `available` is [`tools_now`] for the session before the call.
fn refusal(
    state: &AppState,
    row: &SessionRow,
    ws: &WorkflowState,
    available: &[String],
    tool: &str,
    arguments: &Value,
    plugin: Option<&(Arc<plugins::Loaded>, bool)>,
) -> Option<String> {
    if let Some((loaded, active)) = plugin {
        let kind = loaded.set.plugin_type.as_str();
        if !active {
            let status = loaded
                .set
                .tool(tool)
                .map_or("inactive", |t| t.status.as_str());
            return Some(format!(
                "`{tool}` is {status} by plugin `{kind}`; available: {}",
                available.join(", ")
            ));
        }
        if let Err(problem) = loaded.check_arguments(tool, arguments) {
            return Some(format!("invalid arguments for `{tool}`: {problem}"));
        }
        if !state.plugins.connected(&row.id) {
            return Some(format!(
                "plugin `{kind}` is not connected; its tools cannot run now"
            ));
        }
        return None;
    }
    let rules = state.rules();
    let Some(entry) = rules.tool(tool) else {
        return Some(format!(
            "`{tool}` is not available in this session; available: {}",
            available.join(", ")
        ));
    };
    if !available.iter().any(|t| t == tool) {
        let place = match (row.lesson_id, &ws.agent) {
            (Some(lesson), _) => format!("enabled in lesson {lesson}"),
            (None, Some(ctx)) => format!("available to agent `{}`", ctx.agent),
            (None, None) => format!("available in workflow `{}`", ws.current_workflow),
        };
        return Some(format!(
            "`{tool}` is not {place}; available: {}",
            available.join(", ")
        ));
    }
    if tool == WORKFLOW_SWITCH_TOOL {
        let target = arguments.get("workflowId").and_then(Value::as_str);
        if !target.is_some_and(|t| rules.has_workflow(t)) {
            return Some(format!(
                "there is no workflow `{}`; valid workflow ids: {}",
                excerpt(target.unwrap_or_default()),
                rules.workflow_ids().join(", ")
            ));
        }
    }
    if let Err(problem) = rules.check_arguments(tool, arguments) {
        return Some(format!("invalid arguments for `{tool}`: {problem}"));
    }
    let missing = missing_checks(&entry.requires, ws);
    if let Some(check) = missing.first() {
        let setters = rules.setters_of(check);
        return Some(format!(
            "`{tool}` needs check `{check}`, which this session has not passed{}",
            if setters.is_empty() {
                String::new()
            } else {
                format!("; call `{}` first", setters.join("` or `"))
            }
        ));
    }
    None
}

/// Counts one write of `session` in its per-minute window (429 past
/// `SESSION_WRITES_PER_MINUTE`, nothing counted or stored).
fn admit_write(state: &AppState, session: &str) -> Result<(), ApiError> {
    state.budgets.admit_write(
        session,
        state.clock.now(),
        state.config.session_budget.writes_per_minute,
    )
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

/// [`call`] up to recording it, under the session's call lock.
async fn call_locked(
    state: &AppState,
    row: SessionRow,
    tool: &str,
    arguments: Value,
) -> Result<CallResponse, ServerError> {
    let lock = state.session_lock(&row.id);
    let _guard = lock.lock().await;
    let started = Instant::now();
    // Re-read under the lock: another call may have changed the state.
    let row = get(state, &row.id).await?;
    if row.ended_at.is_some() {
        state.forget_session_lock(&row.id);
        return Err(ApiError::Conflict(format!("Session {} has ended.", row.id)).into());
    }
    budget::check_call(
        &row,
        &state.config.session_budget,
        tool_calls::stored_bytes(&arguments, None) as usize,
    )?;
    admit_write(state, &row.id)?;
    let mut ws = row.workflow_state()?;
    let before = ws.clone();
    let available = tools_now(state, &row.id, row.lesson_tools.as_deref(), &ws);
    let plugin = plugins::plugin_of(state, &row.id, tool);
    let mut verified = row.verified_account.clone();
    let mut tutor_outcome = None;
    let (outcome, result, reason, status) = match refusal(
        state,
        &row,
        &ws,
        &available,
        tool,
        &arguments,
        plugin.as_ref(),
    ) {
        Some(reason) => (CallOutcome::Refused, None, Some(reason), CallStatus::Done),
        None if builtins::executes(
            tool,
            row.runs_builtins,
            row.lesson_tools.is_some(),
            ws.agent.is_some(),
        ) =>
        {
            match builtins::run(state, &row, &mut ws, &mut verified, tool, &arguments).await? {
                Ok(ran) => {
                    if let Some(entry) = state.rules().tool(tool) {
                        apply_effects(&entry.effects, &ran.result, &mut ws);
                    }
                    tutor_outcome = ran.outcome;
                    (
                        CallOutcome::Allowed,
                        Some(ran.result),
                        None,
                        CallStatus::Done,
                    )
                }
                Err(reason) => (CallOutcome::Refused, None, Some(reason), CallStatus::Done),
            }
        }
        None => (CallOutcome::Allowed, None, None, CallStatus::Awaiting),
    };
    // Only a workflow, step or agent switch changes what this session may
    // call.
    let switched = ws.current_workflow != before.current_workflow
        || ws.agent != before.agent
        || ws.workflow_step != before.workflow_step;
    let tools = if !switched {
        available
    } else {
        tools_now(state, &row.id, row.lesson_tools.as_deref(), &ws)
    };
    let told = tools.join(",");
    let tools_changed = row.tools_seen.as_deref() != Some(told.as_str());
    let duration_us = started.elapsed().as_micros() as i64;
    let at_ms = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_millis() as i64);
    let call_id = tool_calls::record(
        &state.db,
        &NewCall {
            session_id: &row.id,
            at_ms,
            workflow: &before.current_workflow,
            tool,
            arguments: &arguments,
            outcome,
            result: result.as_ref(),
            reason: reason.as_deref(),
            duration_us,
            state: &ws,
            verified_account: verified.as_deref(),
            status,
            tools_seen: &told,
            tutor_outcome: tutor_outcome.as_ref(),
        },
    )
    .await?;

    let record = ToolCallRecord {
        id: call_id,
        at_ms,
        tool: tool.to_owned(),
        arguments,
        outcome,
        result: result.clone(),
        reason: reason.clone(),
        duration_us,
        workflow: before.current_workflow.clone(),
        truncated: false,
        status,
    };
    state.hub.publish(&row.id, &SessionEvent::ToolCall(record));
    publish_state_change(state, &row, &before, &ws);
    if ws.agent != before.agent {
        if let Some(view) = agent_view(state, &ws) {
            state
                .hub
                .publish(&row.id, &SessionEvent::AgentChanged(view));
        }
    }
    if switched {
        state.hub.publish(
            &row.id,
            &SessionEvent::ToolsChanged {
                tools: tools.clone(),
            },
        );
    }
    if (tool == "end_session" || tool == HANG_UP_TOOL) && outcome == CallOutcome::Allowed {
        end_locked(state, &row.id, "ended by agent").await?;
    }
    Ok(CallResponse {
        allowed: outcome == CallOutcome::Allowed,
        status,
        result,
        reason,
        state: ws,
        call_id,
        tools_changed,
        tools: tools_changed.then_some(tools),
    })
}

/// Tells watchers (the session's and the list's) when `ws` differs from
/// `before`.
fn publish_state_change(
    state: &AppState,
    row: &SessionRow,
    before: &WorkflowState,
    ws: &WorkflowState,
) {
    if ws != before {
        state
            .hub
            .publish(&row.id, &SessionEvent::WorkflowUpdate(ws.update()));
        state.hub.publish_list(&json!({"type": "updated", "session": summary_of(&row.id, ws, row.created_at, now(), false, row.student.as_deref())}));
    }
}

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
    let lock = state.session_lock(&row.id);
    let _guard = lock.lock().await;
    let row = get(state, &row.id).await?;
    if row.ended_at.is_some() {
        return Err(ApiError::Conflict(format!("Session {} has ended.", row.id)).into());
    }
    budget::check_bytes(&row, &state.config.session_budget, result.to_string().len())?;
    admit_write(state, &row.id)?;
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

/// A backend that tracks the conversation itself sets the session's step
/// and checks; watchers get the same `workflow_update` as for any change.
pub async fn patch_state(
    state: &AppState,
    row: SessionRow,
    patch: &StatePatch,
) -> Result<WorkflowState, ServerError> {
    let change = patch.change().map_err(ApiError::Invalid)?;
    let lock = state.session_lock(&row.id);
    let _guard = lock.lock().await;
    let row = get(state, &row.id).await?;
    if row.ended_at.is_some() {
        return Err(ApiError::Conflict(format!("Session {} has ended.", row.id)).into());
    }
    let before = row.workflow_state()?;
    let mut ws = before.clone();
    change.apply(&mut ws);
    let rules = state.rules();
    if let Some(problem) = own_checks_problem(&before, &ws, |c| rules.declares_check(c)) {
        return Err(ApiError::Invalid(problem).into());
    }
    if let Some(step) = &patch.workflow_step {
        let steps: Vec<String> = rules
            .definition(&ws.current_workflow)
            .map(|d| d.steps.iter().map(|s| s.uuid.clone()).collect())
            .unwrap_or_default();
        if !steps.contains(step) {
            return Err(ApiError::invalid(
                "workflowStep",
                format!(
                    "is not a step of workflow `{}`; its steps: {}",
                    ws.current_workflow,
                    if steps.is_empty() {
                        "none".to_owned()
                    } else {
                        steps.join(", ")
                    }
                ),
            )
            .into());
        }
        ws.workflow_step = Some(step.clone());
    }
    if ws != before {
        admit_write(state, &row.id)?;
        let tools_before = tools_now(state, &row.id, row.lesson_tools.as_deref(), &before);
        rows::set_state(&state.db, &row.id, &ws).await?;
        publish_state_change(state, &row, &before, &ws);
        let tools = tools_now(state, &row.id, row.lesson_tools.as_deref(), &ws);
        if tools != tools_before {
            state
                .hub
                .publish(&row.id, &SessionEvent::ToolsChanged { tools });
        }
    }
    Ok(ws)
}

/// What a reported turn gets back.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
#[serde(rename_all = "camelCase")]
pub struct TurnAnswer {
    /// Turns the student has taken.
    pub student_turns: u32,
    /// Turns the tutor has taken.
    pub tutor_turns: u32,
    /// Seconds since the session opened.
    pub elapsed_seconds: i64,
    /// Seconds left of the planned length (negative once overdue), if the
    /// session has one.
    pub remaining_seconds: Option<i64>,
    /// Instructions for the model, from the triggers that fired now.
    pub nudges: Vec<Nudge>,
}

/// The tool settings whose triggers a tutor session evaluates: the lesson's
/// enabled tools that the session opened with (none for a workflow session
/// or a deleted lesson).
async fn trigger_tools(state: &AppState, row: &SessionRow) -> Result<Vec<ToolConfig>, ServerError> {
    let (Some(lesson_id), Some(tools)) = (row.lesson_id, row.lesson_tools.as_deref()) else {
        return Ok(Vec::new());
    };
    let lesson = match lessons::get_any(&state.db, lesson_id).await {
        Ok(lesson) => lesson,
        Err(ServerError::Api(ApiError::NotFound(_))) => return Ok(Vec::new()),
        Err(e) => return Err(e),
    };
    let session_tools: Vec<&str> = tools.split(',').collect();
    Ok(lesson
        .draft
        .tool_configuration
        .enabled_in_catalogue_order()
        .into_iter()
        .filter(|t| session_tools.contains(&t.tool_id.as_str()))
        .cloned()
        .collect())
}

/// Counts a turn the backend reports (`speaker` said `text`), evaluates
/// the session's triggers on the session's clock, keeps the turn log and
/// tells watchers; answers with the nudges that fired.
pub async fn turn(
    state: &AppState,
    row: SessionRow,
    speaker: Speaker,
    text: Option<&str>,
) -> Result<TurnAnswer, ServerError> {
    let lock = state.session_lock(&row.id);
    let _guard = lock.lock().await;
    let row = get(state, &row.id).await?;
    if row.ended_at.is_some() {
        return Err(ApiError::Conflict(format!("Session {} has ended.", row.id)).into());
    }
    admit_write(state, &row.id)?;
    let tools = trigger_tools(state, &row).await?;
    let mut log = row.turn_log()?;
    let now = state.clock.now();
    let timing = row.timing();
    let nudges = evaluate(&tools, &mut log, speaker, text, timing, now);
    rows::set_turns(&state.db, &row.id, &log).await?;
    state.hub.publish(
        &row.id,
        &SessionEvent::Turn(TurnUpdate {
            student: log.student,
            tutor: log.tutor,
            nudges: nudges.clone(),
        }),
    );
    Ok(TurnAnswer {
        student_turns: log.student,
        tutor_turns: log.tutor,
        elapsed_seconds: now - timing.started_at,
        remaining_seconds: timing.remaining(now),
        nudges,
    })
}
