//! Editing workflow definitions: one implementation for the settings page,
//! the JSON API and the workflow-editing agent's MCP tools. An edit is
//! applied by `domain::workflow_def::apply` (the catalogue and the trigger
//! schemas checked here), stored at the version it was made on (stale →
//! 412), attributed, and put in force at once: the rules reload, sessions
//! whose tools changed are told, and open settings pages get
//! `workflow_changed`.

pub mod chat;
pub mod llm;
pub mod mcp;
pub mod scripted_model;

use crate::domain::actor::Actor;
use crate::domain::workflow_def::{apply, Definition, Edit, EditContext};
use crate::error::ApiError;
use crate::server::agent::rules::{check_with, compile_schema, Rules};
use crate::server::store::workflow_defs::{self as store, Versioned};
use crate::server::{AppState, ServerError};
use serde_json::{json, Value};

/// A new random (version 4) UUID.
pub fn new_uuid() -> String {
    crate::domain::workflow_def::uuid_v4(rand::random())
}

/// Workflow `id`'s definition and version; 404 for a workflow that does
/// not exist.
pub async fn get(state: &AppState, id: &str) -> Result<Versioned, ServerError> {
    if !state.rules().has_workflow(id) {
        return Err(ApiError::NotFound(format!(
            "Workflow \"{}\"",
            crate::domain::limits::excerpt(id)
        ))
        .into());
    }
    store::get(&state.db, id).await
}

/// Checks `rules` against a trigger type's `schema`; a schedule's cron
/// expression and time zone must also parse (only the schedule's schema
/// allows `cron`), so the scheduler never meets one it cannot run.
fn check_filter(schema: &Value, rules: &Value) -> Result<(), String> {
    let validator = compile_schema(schema)?;
    check_with(&validator, rules)?;
    match crate::domain::start_trigger::ScheduleRules::of(rules) {
        Some(schedule) => crate::server::triggers::schedule::parse(&schedule).map(|_| ()),
        None => Ok(()),
    }
}

/// Refuses (422 naming `steps[i].tools` and the tools; for a whole
/// definition, `definition.steps[i].tools`) the tools an edit
/// by `by` gives step `i` of workflow `id` that the bindings do not allow
/// there (global and `id`'s own), when `by` is held to the bindings (an
/// API key: see [`Actor::step_tools_within_bindings`]). Only the step the
/// edit sets is checked: other edits never fail for tools an admin gave a
/// step.
fn check_step_tools(
    rules: &Rules,
    id: &str,
    next: &Definition,
    edit: &Edit,
    by: &Actor,
) -> Result<(), ApiError> {
    let (prefix, steps): (&str, Vec<&str>) = match edit {
        Edit::UpdateStepTools { step_uuid, .. } => ("", vec![step_uuid.as_str()]),
        Edit::ReplaceDefinition { .. } => (
            "definition.",
            next.steps.iter().map(|s| s.uuid.as_str()).collect(),
        ),
        _ => return Ok(()),
    };
    if !by.step_tools_within_bindings() {
        return Ok(());
    }
    let allowed = rules.available(id);
    let Some((i, outside)) = steps
        .iter()
        .find_map(|uuid| next.tools_outside(uuid, &allowed))
    else {
        return Ok(());
    };
    let names = outside
        .iter()
        .map(|t| format!("`{t}`"))
        .collect::<Vec<_>>()
        .join(", ");
    Err(ApiError::invalid(
        format!("{prefix}steps[{i}].tools"),
        format!(
            "{names} {} not allowed in workflow `{id}` by the tool bindings (allowed there: {}); \
             an API key may only give a step tools the bindings allow — an admin binds them first",
            if outside.len() == 1 { "is" } else { "are" },
            allowed.join(", ")
        ),
    ))
}

/// Applies `edit` to workflow `id` by `by`, on top of `expected` (the
/// version the editor read; `None`: whatever is current, for a tool call
/// that read it just before). The new definition and version; 422 naming
/// the argument for a refused edit (for a key, `steps[i].tools` naming
/// step tools the bindings do not allow), 412 for a stale version.
pub async fn edit(
    state: &AppState,
    id: &str,
    edit: &Edit,
    expected: Option<i64>,
    by: &Actor,
) -> Result<Versioned, ServerError> {
    let _guard = state.lock_workflows().await?;
    let current = get(state, id).await?;
    let expected = expected.unwrap_or(current.version);
    let next: Definition = {
        let rules = state.rules();
        let is_tool = |t: &str| rules.tool(t).is_some();
        let mut new_uuid = new_uuid;
        let mut ctx = EditContext {
            is_tool: &is_tool,
            check_filter: &check_filter,
            new_uuid: &mut new_uuid,
            by_key: by.step_tools_within_bindings(),
        };
        let next = apply(&current.definition, edit, &mut ctx)
            .map_err(|e| ApiError::invalid(e.field, e.message))?;
        check_step_tools(&rules, id, &next, edit, by)?;
        next
    };
    let by = by.name.as_str();
    let mut tx = state.db.begin().await?;
    let version = store::put(&mut tx, id, &next, edit, expected, by).await?;
    tx.commit().await?;
    crate::server::agent::listing::rules_changed(state).await?;
    let json = json!({"type": "workflow_changed", "workflowId": id, "version": version, "by": by, "edit": edit.recorded()});
    state
        .hub
        .publish_workflow(id, "workflow_changed", &json.to_string());
    Ok(Versioned {
        definition: next,
        version,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn uuids_are_version_4_and_differ() {
        let a = new_uuid();
        assert_eq!(a.len(), 36);
        assert_eq!(&a[14..15], "4");
        assert!(matches!(&a[19..20], "8" | "9" | "a" | "b"), "{a}");
        assert_ne!(a, new_uuid());
    }
}
