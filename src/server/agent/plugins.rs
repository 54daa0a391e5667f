//! Plugin tools at run time: each session's plugin set (an overlay on the
//! rules, never part of them, so one session's tools never reach another
//! or re-announce anything elsewhere), its compiled schemas, the limits on
//! changing it, and the relay that carries an agent's call of a plugin
//! tool to the plugin and its answer back.
//!
//! A change is planned by `domain::plugin` (each tool checked alone), the
//! schemas compiled off the async threads, then stored and swapped in
//! under the session's call lock, so a call is always checked against one
//! whole set. Watchers and the agent get `tool-availability-update` (and
//! `tools_changed` when the available list changed) on the session stream.

use crate::domain::agent_session::{CallResponse, CallStatus, SessionEvent};
use crate::domain::limits::excerpt;
use crate::domain::plugin::{
    plan_patch, plan_registration, update_kind, AvailabilityUpdate, FailedTool, Limits, OverLimit,
    Patch, Plan, PluginSet, PluginTool, Registration, ToolDefinition, AVAILABILITY_EVENT,
    CONTEXT_MAX_BYTES, LIST_MAX_ITEMS, SHORT_TEXT_MAX_CHARS,
};
use crate::error::ApiError;
use crate::server::agent::hub::Frame;
use crate::server::agent::rules::{check_with, compile_schema};
use crate::server::agent::sessions;
use crate::server::store::agent_sessions::SessionRow;
use crate::server::store::plugins as store;
use crate::server::{AppState, ServerError};
use serde::Serialize;
use serde_json::{json, Value};
use std::collections::{HashMap, VecDeque};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, RwLock};
use std::time::{Duration, Instant};
use tokio::sync::{broadcast, oneshot};

/// The sliding window the update limit counts in.
pub const UPDATE_WINDOW: Duration = Duration::from_secs(60);
/// Most tool-call requests a plugin listener may fall behind by.
const RELAY_BUFFER: usize = 256;

/// One session's plugin as in force: the set, a compiled schema per tool,
/// and live use counts (the set's own counts are as of its last change).
pub struct Loaded {
    /// What the plugin registered.
    pub set: PluginSet,
    validators: HashMap<String, Arc<jsonschema::Validator>>,
    usage: HashMap<String, AtomicU64>,
}

impl Loaded {
    fn new(set: PluginSet, validators: HashMap<String, Arc<jsonschema::Validator>>) -> Self {
        let usage = set
            .tools
            .iter()
            .map(|t| (t.definition.name.clone(), AtomicU64::new(t.usage_count)))
            .collect();
        Self {
            set,
            validators,
            usage,
        }
    }

    /// The set with its tools' use counts as of now.
    pub fn current(&self) -> PluginSet {
        let mut set = self.set.clone();
        for tool in &mut set.tools {
            if let Some(n) = self.usage.get(&tool.definition.name) {
                tool.usage_count = n.load(Ordering::Relaxed);
            }
        }
        set
    }

    /// Checks `arguments` against plugin tool `tool`'s schema.
    pub fn check_arguments(&self, tool: &str, arguments: &Value) -> Result<(), String> {
        match self.validators.get(tool) {
            Some(v) => check_with(v, arguments),
            None => Ok(()),
        }
    }
}

/// A call waiting for its plugin's answer.
struct Waiting {
    session: String,
    answer: oneshot::Sender<Result<Value, String>>,
}

/// A session's plugin listeners and the id of the last request sent.
type Listeners = (broadcast::Sender<Arc<Frame>>, u64);

/// Every session's plugin overlay, update windows, plugin listeners and
/// calls waiting for an answer.
#[derive(Default)]
pub struct PluginRegistry {
    sets: RwLock<HashMap<String, Arc<Loaded>>>,
    windows: Mutex<HashMap<String, VecDeque<Instant>>>,
    listeners: Mutex<HashMap<String, Listeners>>,
    waiting: Mutex<HashMap<i64, Waiting>>,
}

fn locked<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|p| p.into_inner())
}

impl PluginRegistry {
    /// `session`'s plugin, if it registered one.
    pub fn get(&self, session: &str) -> Option<Arc<Loaded>> {
        self.sets
            .read()
            .unwrap_or_else(|p| p.into_inner())
            .get(session)
            .cloned()
    }

    fn put(&self, session: &str, loaded: Arc<Loaded>) {
        self.sets
            .write()
            .unwrap_or_else(|p| p.into_inner())
            .insert(session.to_owned(), loaded);
    }

    /// Forgets an ended session: its set, window and listeners (their
    /// streams end); calls still waiting get "session ended".
    pub fn forget(&self, session: &str) {
        self.sets
            .write()
            .unwrap_or_else(|p| p.into_inner())
            .remove(session);
        locked(&self.windows).remove(session);
        locked(&self.listeners).remove(session);
        let mut waiting = locked(&self.waiting);
        let ids: Vec<i64> = waiting
            .iter()
            .filter(|(_, w)| w.session == session)
            .map(|(id, _)| *id)
            .collect();
        for id in ids {
            if let Some(w) = waiting.remove(&id) {
                let _ = w.answer.send(Err("the session ended".into()));
            }
        }
    }

    /// Counts one update of `session` at `now`: `Err(seconds)` until the
    /// oldest of the last `per_minute` leaves the window.
    pub fn admit(&self, session: &str, now: Instant, per_minute: usize) -> Result<(), u64> {
        let mut windows = locked(&self.windows);
        let window = windows.entry(session.to_owned()).or_default();
        while window
            .front()
            .is_some_and(|t| now.duration_since(*t) >= UPDATE_WINDOW)
        {
            window.pop_front();
        }
        if window.len() >= per_minute {
            let oldest = window.front().copied().unwrap_or(now);
            let wait = UPDATE_WINDOW.saturating_sub(now.duration_since(oldest));
            return Err(wait.as_secs_f64().ceil().max(1.0) as u64);
        }
        window.push_back(now);
        Ok(())
    }

    /// Subscribes a plugin listener to `session`'s tool-call requests.
    pub fn listen(&self, session: &str) -> broadcast::Receiver<Arc<Frame>> {
        locked(&self.listeners)
            .entry(session.to_owned())
            .or_insert_with(|| (broadcast::channel(RELAY_BUFFER).0, 0))
            .0
            .subscribe()
    }

    /// Whether a plugin is listening on `session`.
    pub fn connected(&self, session: &str) -> bool {
        locked(&self.listeners)
            .get(session)
            .is_some_and(|(tx, _)| tx.receiver_count() > 0)
    }

    /// Sends a `tool-call-request` to `session`'s plugin and registers the
    /// call as waiting; the receiver gets the answer.
    fn relay(
        &self,
        session: &str,
        call_id: i64,
        tool: &str,
        arguments: &Value,
    ) -> Option<oneshot::Receiver<Result<Value, String>>> {
        let (tx, rx) = oneshot::channel();
        locked(&self.waiting).insert(
            call_id,
            Waiting {
                session: session.to_owned(),
                answer: tx,
            },
        );
        let json = json!({"callId": call_id.to_string(), "name": tool, "arguments": arguments});
        let sent = {
            let mut listeners = locked(&self.listeners);
            listeners.get_mut(session).and_then(|(sender, ids)| {
                *ids += 1;
                let frame = Frame::new(*ids, "tool-call-request", &json.to_string());
                sender.send(Arc::new(frame)).ok()
            })
        };
        if sent.is_none() {
            locked(&self.waiting).remove(&call_id);
            return None;
        }
        Some(rx)
    }

    /// Gives call `call_id` of `session` its plugin's answer. `Ok(false)`:
    /// no call of this session is waiting under that id.
    fn answer(&self, session: &str, call_id: i64, answer: Result<Value, String>) -> bool {
        let mut waiting = locked(&self.waiting);
        match waiting.get(&call_id) {
            Some(w) if w.session == session => {
                let w = waiting.remove(&call_id).expect("present");
                w.answer.send(answer).is_ok()
            }
            _ => false,
        }
    }

    fn stop_waiting(&self, call_id: i64) {
        locked(&self.waiting).remove(&call_id);
    }
}

/// Loads every open session's plugin at start-up, compiling its schemas.
pub async fn load(state: &AppState) -> Result<usize, ServerError> {
    let all = store::open_sessions(&state.db).await?;
    let count = all.len();
    for (session, set) in all {
        let schemas: Vec<(String, Value)> = set
            .tools
            .iter()
            .map(|t| (t.definition.name.clone(), t.definition.parameters.clone()))
            .collect();
        let compiled = compile_all(schemas).await?;
        let validators = compiled
            .into_iter()
            .filter_map(|(name, v)| v.ok().map(|v| (name, v)))
            .collect();
        state
            .plugins
            .put(&session, Arc::new(Loaded::new(set, validators)));
    }
    Ok(count)
}

type Compiled = Vec<(String, Result<Arc<jsonschema::Validator>, String>)>;

/// Compiles schemas on a blocking thread (a large one takes milliseconds).
async fn compile_all(schemas: Vec<(String, Value)>) -> Result<Compiled, ServerError> {
    tokio::task::spawn_blocking(move || {
        schemas
            .into_iter()
            .map(|(name, schema)| {
                let v = compile_schema(&schema).map(Arc::new);
                (name, v)
            })
            .collect()
    })
    .await
    .map_err(ServerError::from)
}

/// The answer to a registration or patch.
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct ChangeAnswer {
    /// Whether the request was applied (tools may still have failed).
    pub success: bool,
    /// Names registered (added or modified).
    pub registered_tools: Vec<String>,
    /// Tools refused, each with its reason.
    pub failed_tools: Vec<FailedTool>,
    /// What changed.
    pub added: Vec<String>,
    /// Names removed.
    pub removed: Vec<String>,
    /// Names modified.
    pub modified: Vec<String>,
    /// The session's plugin now.
    pub session_configuration: Value,
}

/// What a change request is.
pub enum Change {
    /// A registration: replaces the plugin and its tools.
    Register(Registration),
    /// A patch of the registered tools.
    Patch(Patch),
}

fn check_short(field: &str, text: &str) -> Result<(), ApiError> {
    let n = text.chars().count();
    if n > SHORT_TEXT_MAX_CHARS {
        return Err(ApiError::invalid(
            field,
            format!("must be at most {SHORT_TEXT_MAX_CHARS} characters (got {n})"),
        ));
    }
    Ok(())
}

fn check_list<T>(field: &str, list: &[T]) -> Result<(), ApiError> {
    if list.len() > LIST_MAX_ITEMS {
        return Err(ApiError::invalid(
            field,
            format!(
                "must have at most {LIST_MAX_ITEMS} entries (got {})",
                list.len()
            ),
        ));
    }
    Ok(())
}

/// The registration's own fields (not its tools): 422 naming the first
/// that breaks a limit.
fn check_registration(r: &Registration) -> Result<(), ApiError> {
    check_short("pluginVersion", &r.plugin_version)?;
    check_short("environment.version", &r.environment.version)?;
    check_list("capabilities", &r.capabilities)?;
    check_list("environment.features", &r.environment.features)?;
    check_list("environment.limitations", &r.environment.limitations)?;
    for (i, c) in r.capabilities.iter().enumerate() {
        check_list(&format!("capabilities[{i}].resources"), &c.resources)?;
        check_list(&format!("capabilities[{i}].permissions"), &c.permissions)?;
    }
    for (field, value) in [
        (
            "environment",
            serde_json::to_string(&r.environment).unwrap_or_default(),
        ),
        (
            "constraints",
            r.constraints
                .as_ref()
                .map(Value::to_string)
                .unwrap_or_default(),
        ),
        (
            "capabilities",
            serde_json::to_string(&r.capabilities).unwrap_or_default(),
        ),
    ] {
        if value.len() > CONTEXT_MAX_BYTES {
            return Err(ApiError::invalid(
                field,
                format!(
                    "must be at most {CONTEXT_MAX_BYTES} bytes as JSON (got {})",
                    value.len()
                ),
            ));
        }
    }
    Ok(())
}

fn now_ms() -> i64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_millis() as i64)
}

/// The session's plugin in the answers' `sessionConfiguration` shape.
fn configuration(set: &PluginSet) -> Value {
    json!({
        "toolCount": set.tools.len(),
        "activeToolCount": set.active().count(),
        "pluginType": set.plugin_type,
        "pluginVersion": set.plugin_version,
        "capabilities": set.capabilities,
        "environment": set.environment,
    })
}

/// Applies a registration or patch from `row`'s plugin: 422 for a field
/// over its limit or a set over the session's tool limit (nothing
/// changes), 429 past the update limit, 404 without a registration to
/// patch. Tools are checked alone; the good ones register.
pub async fn change(
    state: &AppState,
    row: &SessionRow,
    change: Change,
) -> Result<ChangeAnswer, ServerError> {
    if let Change::Register(r) = &change {
        check_registration(r)?;
    }
    if let Change::Patch(p) = &change {
        let entries = p.add.len() + p.remove.len() + p.modify.len();
        if entries > state.config.plugin_tools_max * 2 {
            return Err(ApiError::invalid(
                "add",
                format!(
                    "a patch may carry at most {} entries",
                    state.config.plugin_tools_max * 2
                ),
            )
            .into());
        }
    }
    if let Err(retry_after_secs) = state.plugins.admit(
        &row.id,
        Instant::now(),
        state.config.plugin_updates_per_minute,
    ) {
        return Err(ApiError::RateLimited {
            limit: format!(
                "{} plugin registrations or updates per minute per session",
                state.config.plugin_updates_per_minute
            ),
            retry_after_secs,
        }
        .into());
    }
    let incoming: Vec<(String, Value)> = match &change {
        Change::Register(r) => r
            .available_tools
            .iter()
            .map(|t| (t.name.clone(), t.parameters.clone()))
            .collect(),
        Change::Patch(p) => p
            .add
            .iter()
            .map(|t| (t.name.clone(), t.parameters.clone()))
            .chain(
                p.modify
                    .iter()
                    .filter_map(|m| m.parameters.clone().map(|s| (m.name.clone(), s))),
            )
            .collect(),
    };
    // Compiled before taking the lock: the slow part holds nothing up.
    // Keyed by the schema as JSON, so each is compiled once and a tool
    // whose schema did not change keeps its compiled one.
    let mut known: HashMap<String, Result<Arc<jsonschema::Validator>, String>> = compile_all(
        incoming
            .into_iter()
            .filter(|(_, schema)| {
                schema.to_string().len() <= crate::domain::plugin::SCHEMA_MAX_BYTES
            })
            .map(|(_, schema)| (schema.to_string(), schema))
            .collect(),
    )
    .await?
    .into_iter()
    .collect();

    let lock = state.session_lock(&row.id);
    let _guard = lock.lock().await;
    let row = sessions::get(state, &row.id).await?;
    if row.ended_at.is_some() {
        return Err(session_not_found(&row.id));
    }
    let rules = state.rules();
    let reserved = |name: &str| rules.tool(name).is_some();
    let previous = state.plugins.get(&row.id);
    let current: Vec<PluginTool> = previous
        .as_ref()
        .map(|l| l.current().tools)
        .unwrap_or_default();
    let limits = Limits {
        max_tools: state.config.plugin_tools_max,
    };
    let at = now_ms();
    if let Some(loaded) = &previous {
        for tool in &loaded.set.tools {
            if let Some(v) = loaded.validators.get(&tool.definition.name) {
                known
                    .entry(tool.definition.parameters.to_string())
                    .or_insert_with(|| Ok(v.clone()));
            }
        }
    }
    let compile = |schema: &Value| -> Result<(), String> {
        match known.get(&schema.to_string()) {
            Some(compiled) => compiled.as_ref().map(|_| ()).map_err(Clone::clone),
            None => compile_schema(schema).map(|_| ()),
        }
    };
    let (plan, registration) = match &change {
        Change::Register(r) => (
            plan_registration(
                &current,
                &r.available_tools,
                at,
                limits,
                &reserved,
                &compile,
            ),
            Some(r),
        ),
        Change::Patch(p) => {
            let Some(_) = previous.as_ref() else {
                return Err(ApiError::NotFound(format!(
                    "A plugin registration for session {} (register tools first)",
                    row.id
                ))
                .into());
            };
            (
                plan_patch(&current, p, at, limits, &reserved, &compile),
                None,
            )
        }
    };
    let plan: Plan = plan.map_err(|OverLimit { would_hold, max }| {
        ApiError::invalid(
            if registration.is_some() { "availableTools" } else { "add" },
            format!("a session may hold at most {max} plugin tools (this would make {would_hold}); nothing was registered"),
        )
    })?;
    let base = previous.as_ref().map(|l| l.current());
    let set = PluginSet {
        plugin_type: registration.map_or_else(
            || {
                base.as_ref()
                    .map(|b| b.plugin_type)
                    .unwrap_or(crate::domain::plugin::PluginType::Custom)
            },
            |r| r.plugin_type,
        ),
        plugin_version: registration.map_or_else(
            || {
                base.as_ref()
                    .map(|b| b.plugin_version.clone())
                    .unwrap_or_default()
            },
            |r| r.plugin_version.clone(),
        ),
        capabilities: registration.map_or_else(
            || {
                base.as_ref()
                    .map(|b| b.capabilities.clone())
                    .unwrap_or_default()
            },
            |r| r.capabilities.clone(),
        ),
        environment: registration.map_or_else(
            || {
                base.as_ref()
                    .map(|b| b.environment.clone())
                    .unwrap_or_default()
            },
            |r| r.environment.clone(),
        ),
        constraints: registration.map_or_else(
            || base.as_ref().and_then(|b| b.constraints.clone()),
            |r| r.constraints.clone(),
        ),
        tools: plan.tools.clone(),
        updated_at: at,
    };
    let validators = set
        .tools
        .iter()
        .filter_map(|t| {
            let compiled = known.get(&t.definition.parameters.to_string())?;
            compiled
                .as_ref()
                .ok()
                .map(|v| (t.definition.name.clone(), v.clone()))
        })
        .collect();
    let ws = row.workflow_state()?;
    let before = sessions::tools_now(state, &row.id, row.lesson_tools.as_deref(), &ws);
    store::put(&state.db, &row.id, &set).await?;
    state
        .plugins
        .put(&row.id, Arc::new(Loaded::new(set.clone(), validators)));
    if registration.is_some() || !plan.diff.is_empty() {
        let update = AvailabilityUpdate {
            kind: update_kind(&plan.diff, registration.is_some()).to_owned(),
            added: plan.diff.added.clone(),
            removed: plan.diff.removed.clone(),
            modified: plan.diff.modified.clone(),
            timestamp: at,
            reason: if registration.is_some() {
                "plugin-registration"
            } else {
                "plugin-update"
            }
            .to_owned(),
            tools: set.tools.clone(),
        };
        state.hub.publish_named(
            &row.id,
            AVAILABILITY_EVENT,
            &serde_json::to_string(&update).unwrap_or_default(),
        );
    }
    let after = sessions::tools_now(state, &row.id, row.lesson_tools.as_deref(), &ws);
    if after != before {
        state
            .hub
            .publish(&row.id, &SessionEvent::ToolsChanged { tools: after });
    }
    let names = |list: &[ToolDefinition]| list.iter().map(|d| d.name.clone()).collect::<Vec<_>>();
    Ok(ChangeAnswer {
        success: true,
        registered_tools: plan.registered,
        failed_tools: plan.failed,
        added: names(&plan.diff.added),
        removed: plan.diff.removed,
        modified: names(&plan.diff.modified),
        session_configuration: configuration(&set),
    })
}

/// The 404 for an unknown or ended session, in the plugin API's shape.
pub fn session_not_found(id: &str) -> ServerError {
    ApiError::NotFound(format!("Session {}", excerpt(id))).into()
}

/// `GET /api/sessions/{id}/metadata`: the plugin's registration and tools,
/// or for a session without one its default metadata (the tools its
/// workflow, lesson or agent gives).
pub fn metadata(state: &AppState, row: &SessionRow) -> Result<(Value, i64), ServerError> {
    let ws = row.workflow_state()?;
    let supported = [
        "register-tools",
        "update-tools",
        "metadata",
        "plugin-events",
        "tool-results",
    ];
    Ok(match state.plugins.get(&row.id) {
        Some(loaded) => {
            let set = loaded.current();
            let tools: Vec<Value> = set.tools.iter().map(|t| json!(t)).collect();
            (
                json!({
                    "apiVersion": API_VERSION,
                    "sessionId": row.id,
                    "pluginType": set.plugin_type,
                    "pluginVersion": set.plugin_version,
                    "capabilities": set.capabilities,
                    "tools": tools,
                    "environment": set.environment,
                    "constraints": set.constraints,
                    "toolCount": set.tools.len(),
                    "availableTools": sessions::tools_now(state, &row.id, row.lesson_tools.as_deref(), &ws),
                    "lastUpdated": iso(set.updated_at),
                    "supportedOperations": supported,
                }),
                set.updated_at,
            )
        }
        None => {
            let available = sessions::tools_now(state, &row.id, row.lesson_tools.as_deref(), &ws);
            let rules = state.rules();
            let tools: Vec<Value> = rules
                .declarations(&available)
                .into_iter()
                .map(|d| json!({"name": d.name, "description": d.description, "parameters": d.parameters, "status": "active"}))
                .collect();
            let at = row.created_at * 1000;
            (
                json!({
                    "apiVersion": API_VERSION,
                    "sessionId": row.id,
                    "pluginType": null,
                    "pluginVersion": null,
                    "capabilities": [],
                    "tools": tools,
                    "environment": {"workflow": ws.current_workflow, "agent": ws.agent},
                    "toolCount": 0,
                    "availableTools": available,
                    "lastUpdated": iso(at),
                    "supportedOperations": supported,
                }),
                at,
            )
        }
    })
}

/// The plugin API's version, sent as `API-Version`.
pub const API_VERSION: &str = "2.0.0";

fn iso(ms: i64) -> String {
    crate::domain::time::iso_utc_ms(ms)
}

/// Whether `tool` is one of `session`'s plugin tools, and the plugin's type.
pub fn plugin_of(state: &AppState, session: &str, tool: &str) -> Option<(Arc<Loaded>, bool)> {
    let loaded = state.plugins.get(session)?;
    let active = loaded.set.tool(tool)?.status == crate::domain::plugin::ToolStatus::Active;
    Some((loaded, active))
}

/// Carries allowed call `response.call_id` of plugin tool `tool` to the
/// plugin and waits for its answer (the session's call lock is not held
/// meanwhile); records and returns the outcome.
pub async fn relay(
    state: &AppState,
    row: SessionRow,
    tool: &str,
    arguments: &Value,
    mut response: CallResponse,
    plugin_type: &str,
) -> Result<CallResponse, ServerError> {
    let started = Instant::now();
    let timeout = state.config.plugin_call_timeout;
    let call_id = response.call_id;
    let answer = match state.plugins.relay(&row.id, call_id, tool, arguments) {
        None => Err(format!(
            "plugin `{plugin_type}` is not connected; its tools cannot run now"
        )),
        Some(rx) => match tokio::time::timeout(timeout, rx).await {
            Ok(Ok(answer)) => answer.map_err(|e| {
                format!(
                    "plugin `{plugin_type}` answered with an error: {}",
                    excerpt(&e)
                )
            }),
            Ok(Err(_)) => Err(format!("plugin `{plugin_type}` went away before answering")),
            Err(_) => {
                state.plugins.stop_waiting(call_id);
                Err(format!(
                    "plugin `{plugin_type}` did not answer within {} s",
                    timeout.as_secs()
                ))
            }
        },
    };
    let duration_us = started.elapsed().as_micros() as i64;
    let (ok, result) = match &answer {
        Ok(v) => (true, v.clone()),
        Err(reason) => (false, json!({"error": reason})),
    };
    let (reported, ws) = sessions::complete(state, row.clone(), call_id, ok, result).await?;
    crate::server::store::tool_calls::add_duration(&state.db, &row.id, call_id, duration_us)
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

/// `POST /api/sessions/{id}/tool-results/{callId}`: the plugin's answer to
/// a relayed call. 404 for a call of another session or none; 409 once
/// answered (or given up on).
pub async fn answer(
    state: &AppState,
    row: &SessionRow,
    call_id: i64,
    answer: Result<Value, String>,
) -> Result<(), ServerError> {
    if state.plugins.answer(&row.id, call_id, answer) {
        return Ok(());
    }
    match crate::server::store::tool_calls::find(&state.db, &row.id, call_id).await? {
        None => Err(ApiError::NotFound(format!("Call {call_id} of session {}", row.id)).into()),
        Some(_) => Err(ApiError::Conflict(format!(
            "Call {call_id} is not waiting for a plugin's answer (answered, timed out, or not a plugin tool's call)."
        ))
        .into()),
    }
}
