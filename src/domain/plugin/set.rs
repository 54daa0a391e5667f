//! A session's plugin tools as stored and served: each tool with its
//! status and use count, the whole set with what described the plugin,
//! and how the set joins the tools a session's rules give.

use super::registration::{
    empty_object_schema, Capability, Environment, PluginType, Registration, ToolDefinition,
    ToolStatus,
};
use super::schema::Schema;
use crate::domain::ids::ToolId;
use serde::{Deserialize, Serialize};
use serde_json::Value;
use std::collections::BTreeSet;

/// A registered tool with its bookkeeping.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", from = "PluginToolFields")]
pub struct PluginTool {
    /// Name, description, schema.
    #[serde(flatten)]
    pub definition: ToolDefinition,
    /// Whether it is offered.
    pub status: ToolStatus,
    /// When it was first registered, Unix milliseconds.
    pub registered_at: i64,
    /// How many allowed calls of it were relayed to the plugin.
    pub usage_count: u64,
}

/// [`PluginTool`] as read: its fields side by side rather than through
/// `flatten`, whose buffering cannot carry a [`Schema`]'s text.
#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct PluginToolFields {
    name: String,
    #[serde(default)]
    description: String,
    #[serde(default = "empty_object_schema")]
    parameters: Schema,
    status: ToolStatus,
    registered_at: i64,
    usage_count: u64,
}

impl From<PluginToolFields> for PluginTool {
    fn from(f: PluginToolFields) -> Self {
        Self {
            definition: ToolDefinition {
                name: f.name,
                description: f.description,
                parameters: f.parameters,
            },
            status: f.status,
            registered_at: f.registered_at,
            usage_count: f.usage_count,
        }
    }
}

impl PluginTool {
    /// The tool as a catalogue entry in category `plugin` (for the
    /// console's tool list); `None` for a name that is not a tool id.
    pub fn as_catalogue_tool(&self) -> Option<crate::domain::catalogue::CatalogueTool> {
        Some(crate::domain::catalogue::CatalogueTool {
            id: ToolId::parse(&self.definition.name).ok()?,
            name: self.definition.name.clone(),
            description: self.definition.description.clone(),
            category: "plugin".into(),
            parameters: self.definition.parameters.value().clone(),
            requires: Vec::new(),
            effects: Vec::new(),
            ultravox_builtin: false,
        })
    }
}

/// Everything a session's plugin has told Switchboard.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct PluginSet {
    /// The kind of app.
    pub plugin_type: PluginType,
    /// Its version.
    pub plugin_version: String,
    /// What it can do.
    pub capabilities: Vec<Capability>,
    /// Where it runs.
    pub environment: Environment,
    /// Its own limits.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub constraints: Option<Value>,
    /// Its tools, in registration order.
    pub tools: Vec<PluginTool>,
    /// When it last changed, Unix milliseconds.
    pub updated_at: i64,
}

impl PluginSet {
    /// What `r` says of the plugin (its tools are planned separately).
    pub fn described_by(r: &Registration) -> Self {
        Self {
            plugin_type: r.plugin_type,
            plugin_version: r.plugin_version.clone(),
            capabilities: r.capabilities.clone(),
            environment: r.environment.clone(),
            constraints: r.constraints.clone(),
            tools: Vec::new(),
            updated_at: 0,
        }
    }

    /// The names of the tools the agent may call now, in order.
    pub fn active(&self) -> impl Iterator<Item = &str> {
        self.tools
            .iter()
            .filter(|t| t.status == ToolStatus::Active)
            .map(|t| t.definition.name.as_str())
    }

    /// The tool called `name`.
    pub fn tool(&self, name: &str) -> Option<&PluginTool> {
        self.tools.iter().find(|t| t.definition.name == name)
    }
}

/// The tools a session may call: those its workflow, lesson or agent gives,
/// then its plugin's active tools (a plugin tool never shadows one of the
/// base set: names clashing with the catalogue are refused at
/// registration).
pub fn union(base: Vec<String>, plugin: Option<&PluginSet>) -> Vec<String> {
    let Some(set) = plugin else { return base };
    let mut seen: BTreeSet<String> = base.iter().cloned().collect();
    let mut all = base;
    for name in set.active() {
        if seen.insert(name.to_owned()) {
            all.push(name.to_owned());
        }
    }
    all
}

/// A tool just registered: active, unused, registered `now`.
pub(super) fn new_tool(def: &ToolDefinition, now: i64) -> PluginTool {
    PluginTool {
        definition: def.clone(),
        status: ToolStatus::Active,
        registered_at: now,
        usage_count: 0,
    }
}
