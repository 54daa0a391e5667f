//! Edits of a definition, each applied whole or refused naming the
//! argument and why, in words for a person and a model alike; the
//! small pure helpers they use (new uuids, reorderings checked).

use super::definition::Definition;
use super::error::{refuse, EditError};
use super::step::{
    Step, StepType, MAX_PROMPT_CHARS, MAX_STEPS, MAX_STEP_NAME_CHARS, MAX_STEP_TOOLS,
};
use super::trigger::{trigger_types, Trigger, MAX_FILTER_BYTES};
use crate::domain::ids::ToolId;
use serde::{Deserialize, Serialize};
use serde_json::{json, Value};
use std::collections::BTreeSet;

/// One change to a definition: what the settings page and the agent's
/// tools do. A key an edit does not take is refused (a misspelt
/// `systemPrompt` would otherwise save an empty prompt without a word).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "edit", rename_all = "snake_case", deny_unknown_fields)]
pub enum Edit {
    /// Sets (or replaces) the start trigger, with empty filter rules.
    SetTrigger {
        /// A [`TriggerType`] id.
        trigger_type_id: String,
    },
    /// Replaces the trigger's filter rules.
    UpdateTriggerSettings {
        /// The trigger's uuid.
        trigger_uuid: String,
        /// The new rules.
        filter_rules: Value,
    },
    /// Adds a step at the end.
    AddStep {
        /// `custom_llm` or `custom_agent`.
        step_type: String,
        /// Its name.
        name: String,
    },
    /// Removes a step.
    RemoveStep {
        /// The step's uuid.
        step_uuid: String,
    },
    /// Puts the steps in this order (every current step, once).
    ReorderSteps {
        /// The step uuids in their new order.
        ordered_step_uuids: Vec<String>,
    },
    /// Replaces a step's system prompt.
    UpdateSystemPrompt {
        /// The step's uuid.
        step_uuid: String,
        /// The new prompt.
        system_prompt: String,
    },
    /// Replaces a custom_agent step's tools (the full list).
    UpdateStepTools {
        /// The step's uuid.
        step_uuid: String,
        /// The tool ids it may call.
        enabled_tools: Vec<String>,
    },
    /// Replaces the whole definition with one read from a file (an export
    /// of this workflow or another): checked as if built edit by edit, so
    /// a file passes exactly the rules the editors do.
    ReplaceDefinition {
        /// The definition the file holds.
        definition: Definition,
    },
}

impl Edit {
    /// The edit as the history and the `workflow_changed` event record it:
    /// itself, except that a replaced definition is summed up (the
    /// definition itself is the version's).
    pub fn recorded(&self) -> Value {
        match self {
            Edit::ReplaceDefinition { definition } => json!({
                "edit": "replace_definition",
                "steps": definition.steps.len(),
                "trigger": definition.trigger.as_ref().map(|t| t.trigger_type_id.as_str()),
            }),
            other => serde_json::to_value(other).unwrap_or_default(),
        }
    }
}

/// What an edit needs from outside: the catalogue, the filter-rule check
/// against a trigger type's schema, and fresh uuids.
pub struct EditContext<'a> {
    /// Whether a tool id is in the catalogue.
    pub is_tool: &'a dyn Fn(&str) -> bool,
    /// Checks `rules` against `schema`: the first problem, named.
    pub check_filter: &'a dyn Fn(&Value, &Value) -> Result<(), String>,
    /// A new uuid.
    pub new_uuid: &'a mut dyn FnMut() -> String,
    /// The edit comes from a caller held to the bindings (an API key): the
    /// step tools it gives are [`Step::bound_only`].
    pub by_key: bool,
}

/// `random` as a version 4 UUID (the version and variant bits set): step
/// and trigger ids on the server, conversation ids in the browser, each
/// side supplying its own randomness.
pub fn uuid_v4(random: u128) -> String {
    let n = (random & !(0xf << 76) | (0x4 << 76)) & !(0x3 << 62) | (0x2 << 62);
    let hex = format!("{n:032x}");
    format!(
        "{}-{}-{}-{}-{}",
        &hex[..8],
        &hex[8..12],
        &hex[12..16],
        &hex[16..20],
        &hex[20..]
    )
}

/// Checks that `ordered` holds every one of `current` exactly once.
pub fn check_permutation(current: &[String], ordered: &[String]) -> Result<(), String> {
    let have: BTreeSet<&String> = current.iter().collect();
    let mut seen = BTreeSet::new();
    for id in ordered {
        if !have.contains(id) {
            return Err(format!(
                "`{}` is not a step of this workflow",
                crate::domain::limits::excerpt(id)
            ));
        }
        if !seen.insert(id) {
            return Err(format!("`{id}` is listed twice"));
        }
    }
    let missing: Vec<&str> = current
        .iter()
        .filter(|id| !seen.contains(id))
        .map(String::as_str)
        .collect();
    if !missing.is_empty() {
        return Err(format!(
            "every step must be listed once; missing: {}",
            missing.join(", ")
        ));
    }
    Ok(())
}

/// Applies `edit` to `def`: the new definition, or why not (nothing
/// changes).
pub fn apply(
    def: &Definition,
    edit: &Edit,
    ctx: &mut EditContext<'_>,
) -> Result<Definition, EditError> {
    let mut next = def.clone();
    match edit {
        Edit::SetTrigger { trigger_type_id } => {
            let types = trigger_types();
            let Some(kind) = types.iter().find(|t| t.id == *trigger_type_id) else {
                let ids: Vec<&str> = types.iter().map(|t| t.id.as_str()).collect();
                return Err(refuse(
                    "trigger_type_id",
                    format!(
                        "there is no trigger type `{}`; trigger types: {}",
                        crate::domain::limits::excerpt(trigger_type_id),
                        ids.join(", ")
                    ),
                ));
            };
            next.trigger = Some(Trigger {
                uuid: (ctx.new_uuid)(),
                trigger_type_id: kind.id.clone(),
                filter_rules: json!({}),
            });
        }
        Edit::UpdateTriggerSettings {
            trigger_uuid,
            filter_rules,
        } => {
            let Some(trigger) = next.trigger.as_mut().filter(|t| t.uuid == *trigger_uuid) else {
                return Err(refuse(
                    "trigger_uuid",
                    match &def.trigger {
                        Some(t) => format!(
                            "there is no trigger `{}`; this workflow's trigger is `{}`",
                            crate::domain::limits::excerpt(trigger_uuid),
                            t.uuid
                        ),
                        None => "this workflow has no trigger yet; call set_trigger first".into(),
                    },
                ));
            };
            let bytes = filter_rules.to_string().len();
            if bytes > MAX_FILTER_BYTES {
                return Err(refuse(
                    "filter_rules",
                    format!("must be at most {MAX_FILTER_BYTES} bytes as JSON (got {bytes})"),
                ));
            }
            let schema = trigger_types()
                .into_iter()
                .find(|t| t.id == trigger.trigger_type_id)
                .map(|t| t.filter_schema)
                .unwrap_or_else(|| json!({"type": "object"}));
            (ctx.check_filter)(&schema, filter_rules).map_err(|e| {
                refuse(
                    "filter_rules",
                    format!("do not fit trigger type `{}`: {e}", trigger.trigger_type_id),
                )
            })?;
            trigger.filter_rules = filter_rules.clone();
        }
        Edit::AddStep { step_type, name } => {
            let step_type = StepType::parse(step_type).map_err(|m| refuse("step_type", m))?;
            let name = checked_name(name)?;
            if next.steps.len() >= MAX_STEPS {
                return Err(refuse(
                    "workflow_uuid",
                    format!("a workflow has at most {MAX_STEPS} steps"),
                ));
            }
            next.steps.push(Step {
                uuid: (ctx.new_uuid)(),
                step_type,
                name,
                system_prompt: String::new(),
                tools: Vec::new(),
                bound_only: Vec::new(),
            });
        }
        Edit::RemoveStep { step_uuid } => {
            next.step(step_uuid)?;
            next.steps.retain(|s| s.uuid != *step_uuid);
        }
        Edit::ReorderSteps { ordered_step_uuids } => {
            let current: Vec<String> = next.steps.iter().map(|s| s.uuid.clone()).collect();
            check_permutation(&current, ordered_step_uuids)
                .map_err(|m| refuse("ordered_step_uuids", m))?;
            let mut steps = std::mem::take(&mut next.steps);
            next.steps = ordered_step_uuids
                .iter()
                .filter_map(|id| {
                    steps
                        .iter()
                        .position(|s| s.uuid == *id)
                        .map(|i| steps.remove(i))
                })
                .collect();
        }
        Edit::UpdateSystemPrompt {
            step_uuid,
            system_prompt,
        } => {
            let chars = system_prompt.chars().count();
            if chars > MAX_PROMPT_CHARS {
                return Err(refuse(
                    "system_prompt",
                    format!("must be at most {MAX_PROMPT_CHARS} characters (got {chars})"),
                ));
            }
            next.step_mut(step_uuid)?.system_prompt = system_prompt.clone();
        }
        Edit::UpdateStepTools {
            step_uuid,
            enabled_tools,
        } => {
            let step = next.step_mut(step_uuid)?;
            if step.step_type != StepType::CustomAgent {
                return Err(refuse(
                    "step_uuid",
                    format!(
                        "step type `{}` has no tools; use a `custom_agent` step",
                        step.step_type.as_str()
                    ),
                ));
            }
            if enabled_tools.len() > MAX_STEP_TOOLS {
                return Err(refuse(
                    "enabled_tools",
                    format!("a step may enable at most {MAX_STEP_TOOLS} tools"),
                ));
            }
            let mut tools: Vec<ToolId> = Vec::new();
            for (i, raw) in enabled_tools.iter().enumerate() {
                let field = format!("enabled_tools[{i}]");
                let id = ToolId::parse(raw).map_err(|e| refuse(&field, e.rule))?;
                if !(ctx.is_tool)(raw) {
                    return Err(refuse(
                        &field,
                        format!("`{raw}` is not a catalogue tool; list_available_mcp_tools gives the ids"),
                    ));
                }
                if !tools.contains(&id) {
                    tools.push(id);
                }
            }
            // Who gave each tool: one the step had from an admin stays the
            // admin's grant; a new one is the caller's; the rest keep theirs.
            let admins: Vec<&ToolId> = step
                .tools
                .iter()
                .filter(|t| !step.bound_only.contains(t))
                .collect();
            let bound_only: Vec<ToolId> = tools
                .iter()
                .filter(|t| {
                    if ctx.by_key {
                        !admins.contains(t)
                    } else {
                        step.bound_only.contains(t)
                    }
                })
                .cloned()
                .collect();
            step.tools = tools;
            step.bound_only = bound_only;
        }
        Edit::ReplaceDefinition { definition } => {
            next = replaced(def, definition, ctx)?;
        }
    }
    Ok(next)
}

/// `file` checked by building it again edit by edit (with its own uuids),
/// each refusal named by its place in the file (`definition.steps[1].name`);
/// each step tool keeps the provenance it had in `def` (see
/// [`Step::bound_only`]): a key's new tools are the key's, and an admin's
/// import keeps a key's grants the key's.
fn replaced(
    def: &Definition,
    file: &Definition,
    ctx: &mut EditContext<'_>,
) -> Result<Definition, EditError> {
    let at = |place: String| {
        move |e: EditError| refuse(&format!("definition.{place}.{}", e.field), e.message)
    };
    let readable = |uuid: &str, field: &str| {
        if uuid.is_empty()
            || uuid.chars().count() > 64
            || crate::domain::limits::unprintable(uuid).is_some()
        {
            Err(refuse(field, "must be 1-64 printable characters"))
        } else {
            Ok(())
        }
    };
    if let Some(trigger) = &file.trigger {
        readable(&trigger.uuid, "definition.trigger.uuid")?;
    }
    let mut uuids = BTreeSet::new();
    for (i, step) in file.steps.iter().enumerate() {
        let uuid = step.uuid.as_str();
        readable(uuid, &format!("definition.steps[{i}].uuid"))?;
        if !uuids.insert(uuid) {
            return Err(refuse(
                &format!("definition.steps[{i}].uuid"),
                format!("`{uuid}` is the uuid of an earlier step too"),
            ));
        }
    }
    let mut ids = file
        .trigger
        .iter()
        .map(|t| t.uuid.clone())
        .chain(file.steps.iter().map(|s| s.uuid.clone()))
        .collect::<Vec<_>>()
        .into_iter();
    let mut next_id = move || ids.next().unwrap_or_default();
    let mut replay = EditContext {
        is_tool: ctx.is_tool,
        check_filter: ctx.check_filter,
        new_uuid: &mut next_id,
        by_key: false,
    };
    let mut built = Definition::default();
    if let Some(trigger) = &file.trigger {
        built = apply(
            &built,
            &Edit::SetTrigger {
                trigger_type_id: trigger.trigger_type_id.clone(),
            },
            &mut replay,
        )
        .map_err(at("trigger".into()))?;
        built = apply(
            &built,
            &Edit::UpdateTriggerSettings {
                trigger_uuid: trigger.uuid.clone(),
                filter_rules: trigger.filter_rules.clone(),
            },
            &mut replay,
        )
        .map_err(at("trigger".into()))?;
    }
    for (i, step) in file.steps.iter().enumerate() {
        let place = || format!("steps[{i}]");
        let edits = [
            Some(Edit::AddStep {
                step_type: step.step_type.as_str().into(),
                name: step.name.clone(),
            }),
            Some(Edit::UpdateSystemPrompt {
                step_uuid: step.uuid.clone(),
                system_prompt: step.system_prompt.clone(),
            }),
            (!step.tools.is_empty()).then(|| Edit::UpdateStepTools {
                step_uuid: step.uuid.clone(),
                enabled_tools: step.tools.iter().map(ToString::to_string).collect(),
            }),
        ];
        for edit in edits.into_iter().flatten() {
            built = apply(&built, &edit, &mut replay).map_err(at(place()))?;
        }
    }
    for step in &mut built.steps {
        let had = def.steps.iter().find(|s| s.uuid == step.uuid);
        let admins: Vec<&ToolId> = had
            .map(|s| {
                s.tools
                    .iter()
                    .filter(|t| !s.bound_only.contains(t))
                    .collect()
            })
            .unwrap_or_default();
        step.bound_only = step
            .tools
            .iter()
            .filter(|t| {
                if ctx.by_key {
                    !admins.contains(t)
                } else {
                    had.is_some_and(|s| s.bound_only.contains(t))
                }
            })
            .cloned()
            .collect();
    }
    Ok(built)
}

pub(super) fn checked_name(name: &str) -> Result<String, EditError> {
    let name = name.trim();
    let chars = name.chars().count();
    if chars == 0 {
        return Err(refuse("name", "is required"));
    }
    if chars > MAX_STEP_NAME_CHARS {
        return Err(refuse(
            "name",
            format!("must be at most {MAX_STEP_NAME_CHARS} characters (got {chars})"),
        ));
    }
    if crate::domain::limits::unprintable(name).is_some() {
        return Err(refuse("name", crate::domain::limits::PRINTABLE_RULE));
    }
    Ok(name.to_owned())
}
