//! Registrations and patches: checked, planned by `domain::plugin`, the
//! schemas checked once (off the async threads, before the session's call
//! lock; `checked`), then stored and swapped in under that lock, and
//! announced.

// `TextKey`'s hash and equality read only its schema's text, never what
// the schema caches beside it.
#![allow(clippy::mutable_key_type)]

use super::text_key::TextKey;
use super::{check_all, CheckedSchema, Loaded};
use crate::domain::agent_session::SessionEvent;
use crate::domain::limits::{bytes_in_words, excerpt, PLUGIN_SET_MAX_BYTES};
use crate::domain::plugin::{
    check_registration, plan_patch, plan_registration, AvailabilityUpdate, FailedTool, Limits,
    OverLimit, Patch, Plan, PluginSet, PluginTool, Registration, Schema, ToolDefinition,
    AVAILABILITY_EVENT,
};
use crate::error::ApiError;
use crate::server::agent::{access, listing};
use crate::server::platform::clock::wall_ms;
use crate::server::store::agent_sessions::SessionRow;
use crate::server::store::plugins as store;
use crate::server::{AppState, ServerError};
use serde::Serialize;
use serde_json::{json, Value};
use std::sync::Arc;

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

/// Checked schemas by their JSON text (or why one is refused); foldhash,
/// as every map keyed by schema text (`weak_table`).
type Known = foldhash::HashMap<TextKey, Result<Arc<CheckedSchema>, String>>;

/// Applies a registration or patch from `row`'s plugin: 422 for a field
/// over its limit or a set over the session's tool limit (nothing
/// changes), 429 past the update limit, 404 without a registration to
/// patch. Tools are checked alone; the good ones register.
pub async fn change(
    state: &AppState,
    row: &SessionRow,
    change: Change,
) -> Result<ChangeAnswer, ServerError> {
    admit(state, row, &change).await?;
    // Checked before taking the lock: the slow part holds nothing up.
    let mut known = check_incoming(state, row, &change).await?;
    let _guard = state.lock_session(&row.id).await?;
    let row = access::get(state, &row.id).await?;
    if row.ended_at.is_some() {
        return Err(session_not_found(&row.id));
    }
    let previous = state.plugins.get(&row.id);
    if let Some(loaded) = &previous {
        for tool in &loaded.set.tools {
            if let Some(v) = loaded.schemas.get(&tool.definition.name) {
                known
                    .entry(TextKey(tool.definition.parameters.clone()))
                    .or_insert_with(|| Ok(v.clone()));
            }
        }
    }
    let at = wall_ms();
    let (plan, set) = plan(state, &row, &change, previous.as_deref(), &known, at)?;
    let registered = matches!(change, Change::Register(_));
    install(state, &row, &set, &known, &plan, registered, at).await?;
    let names = |list: &[ToolDefinition]| list.iter().map(|d| d.name.clone()).collect::<Vec<_>>();
    let modified = plan.diff.changed_names();
    Ok(ChangeAnswer {
        success: true,
        registered_tools: plan.registered,
        failed_tools: plan.failed,
        added: names(&plan.diff.added),
        removed: plan.diff.removed,
        modified,
        session_configuration: configuration(&set),
    })
}

/// Lets a change in, before any work: a registration's fields within
/// their limits, a patch's entries within twice the tool limit, and the
/// session's update window (429 past it).
async fn admit(state: &AppState, row: &SessionRow, change: &Change) -> Result<(), ServerError> {
    if let Change::Register(r) = change {
        check_registration(r).map_err(ApiError::Invalid)?;
    }
    if let Change::Patch(p) = change {
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
    state
        .budgets
        .admit_plugin_update(
            &row.id,
            state.clock.now(),
            state.config.plugin_updates_per_minute,
        )
        .await
}

/// The schemas this change brings, each checked once (keyed by its JSON
/// text, computed when the request was read): a schema this session
/// already checked, or one repeated within the request, is checked once.
async fn check_incoming(
    state: &AppState,
    row: &SessionRow,
    change: &Change,
) -> Result<Known, ServerError> {
    let incoming: Vec<&Schema> = match change {
        Change::Register(r) => r.available_tools.iter().map(|t| &t.parameters).collect(),
        Change::Patch(p) => p
            .add
            .iter()
            .map(|t| &t.parameters)
            .chain(p.modify.iter().filter_map(|m| m.parameters.as_ref()))
            .collect(),
    };
    let loaded = state.plugins.get(&row.id);
    let checked_before: foldhash::HashSet<&str> = loaded
        .as_deref()
        .map(Loaded::checked_schemas)
        .unwrap_or_default();
    let mut unique: foldhash::HashMap<&str, &Schema> = foldhash::HashMap::default();
    for schema in incoming {
        let key = schema.json();
        if key.len() <= crate::domain::plugin::SCHEMA_MAX_BYTES && !checked_before.contains(key) {
            unique.entry(key).or_insert(schema);
        }
    }
    Ok(check_all(
        unique
            .into_values()
            .map(|schema| (TextKey(schema.clone()), schema.clone()))
            .collect(),
    )
    .await?
    .into_iter()
    .collect())
}

/// Plans the change against the session's plugin `previous` (under the
/// call lock): the plan and the plugin set it makes. A patch without a
/// registration is 404; a set over a limit 422.
fn plan(
    state: &AppState,
    row: &SessionRow,
    change: &Change,
    previous: Option<&Loaded>,
    known: &Known,
    at: i64,
) -> Result<(Plan, PluginSet), ServerError> {
    let rules = state.rules();
    let reserved = |name: &str| rules.tool(name).is_some();
    let current: Vec<PluginTool> = previous.map(|l| l.current().tools).unwrap_or_default();
    let limits = Limits {
        max_tools: state.config.plugin_tools_max,
        max_bytes: PLUGIN_SET_MAX_BYTES,
    };
    let check = |schema: &Schema| -> Result<(), String> {
        match known.get(schema.json()) {
            Some(checked) => checked.as_ref().map(|_| ()).map_err(Clone::clone),
            None => CheckedSchema::check(schema.clone()).map(|_| ()),
        }
    };
    let (planned, registration) = match change {
        Change::Register(r) => (
            plan_registration(&current, &r.available_tools, at, limits, &reserved, &check),
            Some(r),
        ),
        Change::Patch(p) => {
            if previous.is_none() {
                return Err(ApiError::NotFound(format!(
                    "A plugin registration for session {} (register tools first)",
                    row.id
                ))
                .into());
            }
            (plan_patch(&current, p, at, limits, &reserved, &check), None)
        }
    };
    let plan: Plan = planned.map_err(|over| refusal(over, registration.is_some()))?;
    let set = next_set(registration, previous, &row.id, &plan, at)?;
    Ok((plan, set))
}

/// The plugin set after `plan`: a registration describes the plugin anew;
/// a patch keeps what the registration said (a patch without one was
/// refused before).
fn next_set(
    registration: Option<&Registration>,
    previous: Option<&Loaded>,
    session: &str,
    plan: &Plan,
    at: i64,
) -> Result<PluginSet, ServerError> {
    let described = match registration {
        Some(r) => PluginSet::described_by(r),
        None => previous.map(|l| l.current()).ok_or_else(|| {
            ApiError::NotFound(format!("A plugin registration for session {session}"))
        })?,
    };
    Ok(PluginSet {
        tools: plan.tools.clone(),
        updated_at: at,
        ..described
    })
}

/// Stores `set` and swaps it in with its compiled schemas, then tells the
/// session's listeners what changed (`tool-availability-update`, then
/// `tools_changed` if the session's tools did).
async fn install(
    state: &AppState,
    row: &SessionRow,
    set: &PluginSet,
    known: &Known,
    plan: &Plan,
    registered: bool,
    at: i64,
) -> Result<(), ServerError> {
    let schemas = set
        .tools
        .iter()
        .filter_map(|t| {
            let compiled = known.get(t.definition.parameters.json())?;
            compiled
                .as_ref()
                .ok()
                .map(|v| (t.definition.name.clone(), v.clone()))
        })
        .collect();
    let ws = row.workflow_state()?;
    let before = listing::tools_now(state, &row.id, row.lesson_tools.as_deref(), &ws);
    store::put(&state.db, &row.id, set).await?;
    state
        .plugins
        .put(&row.id, Arc::new(Loaded::new(set.clone(), schemas)));
    if registered || !plan.diff.is_empty() {
        let update = AvailabilityUpdate::of(&plan.diff, registered, at, set.tools.len());
        let json = update_json(&update);
        state.hub.publish_named(&row.id, AVAILABILITY_EVENT, &json);
        // The plugin's own stream carries it too, so a plugin needs one
        // connection (`onToolsChanged` in the JavaScript client).
        state
            .plugins
            .relays()
            .notify(&row.id, AVAILABILITY_EVENT, &json);
        super::across::tools_changed(state, &row.id, Some((AVAILABILITY_EVENT, &json))).await;
    } else {
        super::across::tools_changed(state, &row.id, None).await;
    }
    let after = listing::tools_now(state, &row.id, row.lesson_tools.as_deref(), &ws);
    if after != before {
        state
            .hub
            .publish(&row.id, &SessionEvent::ToolsChanged { tools: after });
    }
    Ok(())
}

/// `update` as JSON, written into room for all of it (a registration's
/// update carries every new tool's schema, up to 1 MB: grown by
/// doubling, it was copied a dozen times, onto fresh pages each time).
fn update_json(update: &AvailabilityUpdate) -> String {
    let definitions = update.added.iter().chain(&update.modified);
    let room = 256
        + definitions
            .map(|d| 64 + d.name.len() + d.description.len() + d.parameters.json().len())
            .sum::<usize>()
        + update.removed.iter().map(|n| 4 + n.len()).sum::<usize>()
        + update
            .status_changed
            .iter()
            .map(|c| 32 + c.name.len())
            .sum::<usize>();
    let mut json = Vec::with_capacity(room);
    if serde_json::to_writer(&mut json, update).is_err() {
        return String::new();
    }
    String::from_utf8(json).unwrap_or_default()
}

/// The 422 for a change that would take the set over a limit (nothing
/// was registered): the tool count names the list sent, the byte budget
/// names `tools`, the session's set.
fn refusal(over: OverLimit, registration: bool) -> ApiError {
    match over {
        OverLimit::Tools { would_hold, max } => ApiError::invalid(
            if registration { "availableTools" } else { "add" },
            format!("a session may hold at most {max} plugin tools (this would make {would_hold}); nothing was registered"),
        ),
        OverLimit::Bytes { would_take, max } => ApiError::invalid(
            "tools",
            format!(
                "a session's plugin tools may take at most {} ({max} bytes) of names, descriptions and schemas as JSON (PLUGIN_SET_MAX_BYTES); this would make {would_take} bytes; nothing was registered",
                bytes_in_words(max)
            ),
        ),
    }
}

/// The 404 for an unknown or ended session, in the plugin API's shape.
pub fn session_not_found(id: &str) -> ServerError {
    ApiError::NotFound(format!("Session {}", excerpt(id))).into()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::domain::plugin::{StatusChange, ToolDiff, ToolStatus};

    #[test]
    fn an_update_is_written_as_serde_json_writes_it() {
        let definition = |name: &str| ToolDefinition {
            name: name.to_owned(),
            description: "Donne « un » graphe.\n".to_owned(),
            parameters: Schema::new(
                json!({"type": "object", "properties": {"x": {"enum": [1, "ü"]}}}),
            ),
        };
        let diff = ToolDiff {
            added: vec![definition("a"), definition("b")],
            removed: vec!["gone".to_owned()],
            modified: vec![definition("c")],
            status_changed: vec![StatusChange {
                name: "d".to_owned(),
                status: ToolStatus::Disabled,
            }],
        };
        for registration in [true, false] {
            let update = AvailabilityUpdate::of(&diff, registration, 5, 4);
            assert_eq!(
                update_json(&update),
                serde_json::to_string(&update).unwrap()
            );
        }
        let empty = AvailabilityUpdate::of(&ToolDiff::default(), false, 0, 0);
        assert_eq!(update_json(&empty), serde_json::to_string(&empty).unwrap());
    }
}
