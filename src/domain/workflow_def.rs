//! A workflow's definition beyond its id, name and bound tools: the start
//! trigger (what starts it, with filter rules checked against the trigger
//! type's JSON Schema) and its ordered steps (`custom_llm` steps with a
//! system prompt, `custom_agent` steps with a prompt and tools).
//!
//! Words: "start trigger" and "workflow step" are named so because
//! `lesson::trigger` (when a tutor tool fires) and
//! `WorkflowState::current_step` (an outcome label) already exist.
//!
//! Pure: every edit the settings page and the workflow-editing agent make is
//! an [`Edit`] applied by [`apply`], which refuses with a message written
//! for a person and a model alike ("step type `custom_llm` has no tools;
//! use a `custom_agent` step"). Checking filter rules against a schema and
//! making new uuids are injected ([`EditContext`]).

use crate::domain::ids::ToolId;
use serde::{Deserialize, Serialize};
use serde_json::{json, Value};
use std::collections::BTreeSet;

/// Most steps in one workflow.
pub const MAX_STEPS: usize = 50;
/// Longest step name, in characters.
pub const MAX_STEP_NAME_CHARS: usize = 80;
/// Longest step system prompt, in characters.
pub const MAX_PROMPT_CHARS: usize = 20_000;
/// Most tools one step may enable.
pub const MAX_STEP_TOOLS: usize = 100;
/// Largest filter rules, serialised.
pub const MAX_FILTER_BYTES: usize = 16 * 1024;

/// What a step does.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum StepType {
    /// A model turn with its own system prompt and no tools of its own.
    CustomLlm,
    /// An agent with a system prompt and tools it may call in this step.
    CustomAgent,
}

impl StepType {
    /// Every step type, for listings.
    pub const ALL: [StepType; 2] = [StepType::CustomLlm, StepType::CustomAgent];

    /// Its id on the wire.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::CustomLlm => "custom_llm",
            Self::CustomAgent => "custom_agent",
        }
    }

    /// What it is, for a person or a model choosing one.
    pub fn description(self) -> &'static str {
        match self {
            Self::CustomLlm => "A model turn with its own system prompt; it has no tools.",
            Self::CustomAgent => {
                "An agent step with a system prompt and the catalogue tools it may call while the session is in this step."
            }
        }
    }

    /// Parses an id, naming the valid ones otherwise.
    pub fn parse(raw: &str) -> Result<Self, String> {
        Self::ALL
            .into_iter()
            .find(|t| t.as_str() == raw)
            .ok_or_else(|| {
                format!(
                    "there is no step type `{}`; step types: custom_llm, custom_agent",
                    crate::domain::limits::excerpt(raw)
                )
            })
    }
}

/// One step of a workflow.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Step {
    /// Its id, stable across renames and moves.
    pub uuid: String,
    /// What it does.
    pub step_type: StepType,
    /// What people call it.
    pub name: String,
    /// The model's instructions in this step.
    #[serde(default)]
    pub system_prompt: String,
    /// The tools the session may call in this step (custom_agent only).
    #[serde(default)]
    pub tools: Vec<ToolId>,
}

/// A kind of start trigger, from the catalogue.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct TriggerType {
    /// Its id (`inbound_call`).
    pub id: String,
    /// Its name.
    pub name: String,
    /// What starts the workflow.
    pub description: String,
    /// The JSON Schema its filter rules must satisfy.
    pub filter_schema: Value,
}

/// The start trigger types.
pub fn trigger_types() -> Vec<TriggerType> {
    let t = |id: &str, name: &str, description: &str, filter_schema: Value| TriggerType {
        id: id.into(),
        name: name.into(),
        description: description.into(),
        filter_schema,
    };
    vec![
        t(
            "manual",
            "Manual",
            "Started by a person or an API call; no filter rules.",
            json!({"type": "object", "additionalProperties": false}),
        ),
        t(
            "inbound_call",
            "Inbound call",
            "Started when a phone call comes in; filter by the number called or the caller's.",
            json!({"type": "object", "additionalProperties": false, "properties": {
                "calledNumbers": {"type": "array", "maxItems": 50, "items": {"type": "string", "pattern": "^\\+[0-9]{6,15}$"}},
                "callerPrefixes": {"type": "array", "maxItems": 50, "items": {"type": "string", "pattern": "^\\+[0-9]{1,15}$"}}
            }}),
        ),
        t(
            "chat_message",
            "Chat message",
            "Started by a chat message; filter by channel and by keywords in the message.",
            json!({"type": "object", "additionalProperties": false, "properties": {
                "channels": {"type": "array", "maxItems": 20, "items": {"type": "string", "enum": ["web", "whatsapp", "sms", "slack"]}},
                "keywords": {"type": "array", "maxItems": 50, "items": {"type": "string", "minLength": 1, "maxLength": 60}}
            }}),
        ),
        t(
            "schedule",
            "Schedule",
            "Started on a schedule (five-field cron, in a time zone).",
            json!({"type": "object", "additionalProperties": false, "required": ["cron"], "properties": {
                "cron": {"type": "string", "pattern": "^(\\S+\\s+){4}\\S+$", "maxLength": 100},
                "timezone": {"type": "string", "maxLength": 64}
            }}),
        ),
        t(
            "webhook",
            "Webhook",
            "Started by an HTTP request to the workflow's webhook; filter by event type.",
            json!({"type": "object", "additionalProperties": false, "properties": {
                "eventTypes": {"type": "array", "maxItems": 50, "items": {"type": "string", "minLength": 1, "maxLength": 80}}
            }}),
        ),
    ]
}

/// A workflow's start trigger.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Trigger {
    /// Its id.
    pub uuid: String,
    /// Its type, from [`trigger_types`].
    pub trigger_type_id: String,
    /// What must match for it to fire (the type's schema).
    #[serde(default = "empty_rules")]
    pub filter_rules: Value,
}

fn empty_rules() -> Value {
    json!({})
}

/// Everything a workflow is beyond id, name and bound tools.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Definition {
    /// What starts it, once set.
    #[serde(default)]
    pub trigger: Option<Trigger>,
    /// Its steps, in order.
    #[serde(default)]
    pub steps: Vec<Step>,
}

/// One change to a definition: what the settings page and the agent's
/// tools do.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "edit", rename_all = "snake_case")]
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
}

/// An edit refused: the argument it is about and why.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct EditError {
    /// The argument (`step_uuid`, `enabled_tools[2]`).
    pub field: String,
    /// Why, for a person or a model.
    pub message: String,
}

fn refuse(field: &str, message: impl Into<String>) -> EditError {
    EditError {
        field: field.into(),
        message: message.into(),
    }
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

impl Definition {
    /// The step `uuid`, or why there is none (naming the steps there are).
    pub fn step(&self, uuid: &str) -> Result<&Step, EditError> {
        self.steps.iter().find(|s| s.uuid == uuid).ok_or_else(|| {
            let known: Vec<String> = self
                .steps
                .iter()
                .map(|s| format!("{} ({})", s.uuid, s.name))
                .collect();
            refuse(
                "step_uuid",
                format!(
                    "there is no step `{}` in this workflow; steps: {}",
                    crate::domain::limits::excerpt(uuid),
                    if known.is_empty() {
                        "none yet".into()
                    } else {
                        known.join(", ")
                    }
                ),
            )
        })
    }

    fn step_mut(&mut self, uuid: &str) -> Result<&mut Step, EditError> {
        self.step(uuid)?;
        Ok(self
            .steps
            .iter_mut()
            .find(|s| s.uuid == uuid)
            .expect("found above"))
    }

    /// The tools step `uuid` adds (none for an unknown step).
    pub fn step_tools(&self, uuid: &str) -> &[ToolId] {
        self.steps
            .iter()
            .find(|s| s.uuid == uuid)
            .map_or(&[], |s| s.tools.as_slice())
    }

    /// Step `uuid`'s position and the tools it has that `allowed` (the
    /// tools the bindings allow in the workflow) leaves out; `None` when it
    /// has none such (or there is no such step).
    pub fn tools_outside(&self, uuid: &str, allowed: &[String]) -> Option<(usize, Vec<String>)> {
        let (i, step) = self
            .steps
            .iter()
            .enumerate()
            .find(|(_, s)| s.uuid == uuid)?;
        let outside: Vec<String> = step
            .tools
            .iter()
            .filter(|t| !allowed.iter().any(|a| a == t.as_str()))
            .map(ToString::to_string)
            .collect();
        (!outside.is_empty()).then_some((i, outside))
    }
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
            step.tools = tools;
        }
    }
    Ok(next)
}

fn checked_name(name: &str) -> Result<String, EditError> {
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
    Ok(name.to_owned())
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn run(def: &Definition, edit: Edit) -> Result<Definition, EditError> {
        let mut n = 0;
        let mut new_uuid = move || {
            n += 1;
            format!("u{n}")
        };
        let mut ctx = EditContext {
            is_tool: &|t| t == "perform_idv_check" || t == "check_balance",
            check_filter: &|_, rules| {
                if rules.get("bad").is_some() {
                    Err("`bad` is not allowed".into())
                } else {
                    Ok(())
                }
            },
            new_uuid: &mut new_uuid,
        };
        apply(def, &edit, &mut ctx)
    }

    fn add(def: &Definition, kind: &str, name: &str) -> Definition {
        let mut next = run(
            def,
            Edit::AddStep {
                step_type: kind.into(),
                name: name.into(),
            },
        )
        .unwrap();
        let last = next.steps.len();
        next.steps[last - 1].uuid = format!("s{last}");
        next
    }

    #[test]
    fn steps_are_added_reordered_prompted_and_tooled() {
        let def = add(
            &add(&Definition::default(), "custom_llm", "Greet"),
            "custom_agent",
            "Verify identity",
        );
        assert_eq!(def.steps.len(), 2);
        let def = run(
            &def,
            Edit::ReorderSteps {
                ordered_step_uuids: vec!["s2".into(), "s1".into()],
            },
        )
        .unwrap();
        assert_eq!(def.steps[0].name, "Verify identity");
        let def = run(
            &def,
            Edit::UpdateStepTools {
                step_uuid: "s2".into(),
                enabled_tools: vec!["perform_idv_check".into()],
            },
        )
        .unwrap();
        assert_eq!(def.step_tools("s2")[0].as_str(), "perform_idv_check");
        let def = run(
            &def,
            Edit::UpdateSystemPrompt {
                step_uuid: "s1".into(),
                system_prompt: "Be brief.".into(),
            },
        )
        .unwrap();
        assert_eq!(def.step("s1").unwrap().system_prompt, "Be brief.");
        let def = run(
            &def,
            Edit::RemoveStep {
                step_uuid: "s1".into(),
            },
        )
        .unwrap();
        assert_eq!(def.steps.len(), 1);
    }

    #[test]
    fn a_steps_tools_outside_the_bindings_are_named_with_its_position() {
        let def = add(
            &add(&Definition::default(), "custom_llm", "Greet"),
            "custom_agent",
            "Balance",
        );
        let def = run(
            &def,
            Edit::UpdateStepTools {
                step_uuid: "s2".into(),
                enabled_tools: vec!["perform_idv_check".into(), "check_balance".into()],
            },
        )
        .unwrap();
        let allowed = vec!["get_server_time".to_owned(), "perform_idv_check".to_owned()];
        assert_eq!(
            def.tools_outside("s2", &allowed),
            Some((1, vec!["check_balance".to_owned()]))
        );
        assert_eq!(def.tools_outside("s1", &allowed), None, "no tools");
        assert_eq!(def.tools_outside("nope", &allowed), None);
        let all = vec!["perform_idv_check".to_owned(), "check_balance".to_owned()];
        assert_eq!(def.tools_outside("s2", &all), None);
    }

    #[test]
    fn refusals_say_what_to_do_instead() {
        let def = add(&Definition::default(), "custom_llm", "Greet");
        let e = run(
            &def,
            Edit::UpdateStepTools {
                step_uuid: "s1".into(),
                enabled_tools: vec![],
            },
        )
        .unwrap_err();
        assert_eq!(
            e.message,
            "step type `custom_llm` has no tools; use a `custom_agent` step"
        );
        let e = run(
            &def,
            Edit::AddStep {
                step_type: "robot".into(),
                name: "x".into(),
            },
        )
        .unwrap_err();
        assert_eq!(
            (e.field.as_str(), e.message.as_str()),
            (
                "step_type",
                "there is no step type `robot`; step types: custom_llm, custom_agent"
            )
        );
        let e = run(
            &def,
            Edit::RemoveStep {
                step_uuid: "nope".into(),
            },
        )
        .unwrap_err();
        assert!(e.message.contains("steps: s1 (Greet)"), "{}", e.message);
        let e = run(
            &def,
            Edit::UpdateTriggerSettings {
                trigger_uuid: "t".into(),
                filter_rules: json!({}),
            },
        )
        .unwrap_err();
        assert!(e.message.contains("call set_trigger first"));
        let def = add(&def, "custom_agent", "Agent");
        let e = run(
            &def,
            Edit::UpdateStepTools {
                step_uuid: "s2".into(),
                enabled_tools: vec!["perform_idv_check".into(), "launch".into()],
            },
        )
        .unwrap_err();
        assert_eq!(e.field, "enabled_tools[1]");
        assert!(e.message.contains("list_available_mcp_tools"));
        let e = run(
            &def,
            Edit::AddStep {
                step_type: "custom_llm".into(),
                name: " ".into(),
            },
        )
        .unwrap_err();
        assert_eq!(
            (e.field.as_str(), e.message.as_str()),
            ("name", "is required")
        );
    }

    #[test]
    fn a_trigger_is_set_then_its_rules_checked_against_its_type() {
        let def = run(
            &Definition::default(),
            Edit::SetTrigger {
                trigger_type_id: "inbound_call".into(),
            },
        )
        .unwrap();
        let uuid = def.trigger.as_ref().unwrap().uuid.clone();
        let ok = run(
            &def,
            Edit::UpdateTriggerSettings {
                trigger_uuid: uuid.clone(),
                filter_rules: json!({"calledNumbers": ["+441234567890"]}),
            },
        )
        .unwrap();
        assert_eq!(
            ok.trigger.unwrap().filter_rules["calledNumbers"][0],
            "+441234567890"
        );
        let e = run(
            &def,
            Edit::UpdateTriggerSettings {
                trigger_uuid: uuid,
                filter_rules: json!({"bad": 1}),
            },
        )
        .unwrap_err();
        assert_eq!(
            e.message,
            "do not fit trigger type `inbound_call`: `bad` is not allowed"
        );
        let e = run(
            &def,
            Edit::SetTrigger {
                trigger_type_id: "fax".into(),
            },
        )
        .unwrap_err();
        assert!(e
            .message
            .ends_with("manual, inbound_call, chat_message, schedule, webhook"));
    }

    #[test]
    fn reordering_needs_every_step_once() {
        let ids = |v: &[&str]| v.iter().map(|s| s.to_string()).collect::<Vec<_>>();
        let current = ids(&["a", "b", "c"]);
        assert!(check_permutation(&current, &ids(&["c", "a", "b"])).is_ok());
        assert_eq!(
            check_permutation(&current, &ids(&["a", "b"])).unwrap_err(),
            "every step must be listed once; missing: c"
        );
        assert_eq!(
            check_permutation(&current, &ids(&["a", "a", "b", "c"])).unwrap_err(),
            "`a` is listed twice"
        );
        assert_eq!(
            check_permutation(&current, &ids(&["a", "b", "z"])).unwrap_err(),
            "`z` is not a step of this workflow"
        );
    }

    proptest! {
        #[test]
        fn a_permutation_is_accepted_and_anything_else_refused(
            n in 0usize..8,
            seed in proptest::collection::vec(any::<u8>(), 0..12),
        ) {
            let current: Vec<String> = (0..n).map(|i| format!("s{i}")).collect();
            let mut shuffled = current.clone();
            for (i, b) in seed.iter().enumerate() {
                if n > 1 { shuffled.swap(i % n, *b as usize % n); }
            }
            prop_assert!(check_permutation(&current, &shuffled).is_ok());
            if n > 0 {
                let mut short = shuffled.clone();
                short.pop();
                prop_assert!(check_permutation(&current, &short).is_err());
                let mut doubled = shuffled.clone();
                doubled.push(shuffled[0].clone());
                prop_assert!(check_permutation(&current, &doubled).is_err());
            }
        }
    }
}
