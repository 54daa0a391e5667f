//! The registration API's shapes: what a plugin sends to register its
//! tools or change them (each tool's definition, the plugin's type,
//! capabilities and environment), with the limits on each part.

use super::schema::Schema;
use crate::domain::declaration::FunctionDeclaration;
use serde::{Deserialize, Serialize};
use serde_json::Value;

/// Default most plugin tools one session may hold (`PLUGIN_TOOLS_MAX`).
pub const DEFAULT_MAX_TOOLS: usize = 1000;
/// Default registrations and updates one session may make per minute
/// (`PLUGIN_UPDATES_PER_MINUTE`).
pub const DEFAULT_UPDATES_PER_MINUTE: usize = 10;
/// Longest tool description, in characters.
pub const DESCRIPTION_MAX_CHARS: usize = 1024;
/// Largest `parameters` schema of one tool, serialised.
pub const SCHEMA_MAX_BYTES: usize = 16 * 1024;
/// Deepest nesting of objects and arrays in one schema.
pub const SCHEMA_MAX_DEPTH: usize = 12;
/// Longest plugin version, environment version and similar short strings.
pub const SHORT_TEXT_MAX_CHARS: usize = 64;
/// Most capabilities, features, limitations or entries of one list.
pub const LIST_MAX_ITEMS: usize = 50;
/// Largest registration or patch body (`413` naming `body` past it).
pub const REGISTRATION_MAX_BYTES: usize = 4 * 1024 * 1024;
/// Largest `environment` or `constraints` object, serialised.
pub const CONTEXT_MAX_BYTES: usize = 32 * 1024;

/// The kind of app the plugin is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum PluginType {
    /// The CODAP data-analysis plugin.
    Codap,
    /// A Slack bot.
    Slack,
    /// A database console.
    Database,
    /// Anything else.
    Custom,
}

impl PluginType {
    /// Its name on the wire (`codap`).
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Codap => "codap",
            Self::Slack => "slack",
            Self::Database => "database",
            Self::Custom => "custom",
        }
    }
}

/// What a plugin can do, as it declares it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct Capability {
    /// `data_analysis`, `visualization`, `messaging`, `storage` or
    /// `computation`.
    #[serde(rename = "type")]
    pub kind: CapabilityType,
    /// `basic`, `advanced` or `enterprise`.
    pub level: CapabilityLevel,
    /// What it works on.
    #[serde(default)]
    pub resources: Vec<String>,
    /// What it may do.
    #[serde(default)]
    pub permissions: Vec<String>,
}

/// The kinds of capability.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum CapabilityType {
    /// Data analysis.
    DataAnalysis,
    /// Graphs and charts.
    Visualization,
    /// Messages.
    Messaging,
    /// Storage.
    Storage,
    /// Computation.
    Computation,
}

/// How far a capability goes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum CapabilityLevel {
    /// Basic.
    Basic,
    /// Advanced.
    Advanced,
    /// Enterprise.
    Enterprise,
}

/// Where the plugin runs: shown to watchers and returned in metadata.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Environment {
    /// The host app's version.
    #[serde(default)]
    pub version: String,
    /// Features it has.
    #[serde(default)]
    pub features: Vec<String>,
    /// Limits it works under.
    #[serde(default)]
    pub limitations: Vec<String>,
    /// What it holds now (`dataContexts`, `components`, `activeDatasets`,
    /// `userPermissions`), as the plugin describes it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub context_info: Option<Value>,
}

/// One tool as a plugin declares it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ToolDefinition {
    /// The name the model calls it by.
    pub name: String,
    /// What it does, for the model.
    #[serde(default)]
    pub description: String,
    /// JSON Schema (an object) of its arguments; absent means none.
    #[serde(default = "empty_object_schema")]
    pub parameters: Schema,
}

pub(super) fn empty_object_schema() -> Schema {
    Schema::new(serde_json::json!({"type": "object", "properties": {}}))
}

impl ToolDefinition {
    /// The declaration the model gets.
    pub fn declaration(&self) -> FunctionDeclaration {
        FunctionDeclaration {
            name: self.name.clone(),
            description: self.description.clone(),
            parameters: self.parameters.value().clone(),
        }
    }
}

/// `POST /api/sessions/{id}/register-tools`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Registration {
    /// The kind of app.
    pub plugin_type: PluginType,
    /// Its version.
    pub plugin_version: String,
    /// What it can do.
    #[serde(default)]
    pub capabilities: Vec<Capability>,
    /// Its tools: this set replaces what it registered before.
    pub available_tools: Vec<ToolDefinition>,
    /// Where it runs.
    #[serde(default)]
    pub environment: Environment,
    /// Its own limits, kept as given.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub constraints: Option<Value>,
}

/// A change to one registered tool in a patch: its new description or
/// schema, or its status (a plugin may disable a tool without removing it).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct ToolChange {
    /// The tool's name.
    pub name: String,
    /// New description.
    #[serde(default)]
    pub description: Option<String>,
    /// New schema.
    #[serde(default)]
    pub parameters: Option<Schema>,
    /// New status (`active` or `disabled`).
    #[serde(default)]
    pub status: Option<ToolStatus>,
}

/// `PATCH /api/sessions/{id}/tools`.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct Patch {
    /// New tools.
    #[serde(default)]
    pub add: Vec<ToolDefinition>,
    /// Names of tools to drop.
    #[serde(default)]
    pub remove: Vec<String>,
    /// Changes to registered tools.
    #[serde(default)]
    pub modify: Vec<ToolChange>,
}

/// A plugin tool's state: only `active` tools are available to the agent.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum ToolStatus {
    /// Available.
    Active,
    /// Kept but not offered (the plugin turned it off).
    Disabled,
    /// Kept but not offered (the plugin reported it broken).
    Error,
}

impl ToolStatus {
    /// Its name on the wire.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Active => "active",
            Self::Disabled => "disabled",
            Self::Error => "error",
        }
    }

    /// Parses a stored status (unknown → error).
    pub fn parse(raw: &str) -> Self {
        match raw {
            "active" => Self::Active,
            "disabled" => Self::Disabled,
            _ => Self::Error,
        }
    }
}
