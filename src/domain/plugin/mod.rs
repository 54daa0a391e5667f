//! Plugin tools: the tools an app embedding an agent (a CODAP plugin, a
//! Slack bot, a database console) registers for one session, changes as its
//! state changes, and answers when the agent calls them.
//!
//! Pure: the shapes of the registration API, the checks each tool passes
//! alone (name, description, schema size and depth — compiling the schema
//! is injected, it needs the server's JSON-Schema engine), and the plans
//! that turn a registration or a patch into the session's next tool set
//! with what was added, removed and modified. The server applies a plan
//! atomically, so a refused request changes nothing.

use crate::domain::declaration::FunctionDeclaration;
use crate::domain::error::FieldError;
use crate::domain::ids::ToolId;
use crate::domain::limits::excerpt;
use serde::{Deserialize, Serialize};
use serde_json::Value;
use std::collections::{BTreeMap, BTreeSet};

mod schema;
pub use schema::{depth, Schema, Shape};

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

fn empty_object_schema() -> Schema {
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

/// A tool that was not registered, and why.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct FailedTool {
    /// The name sent (shortened if long).
    pub tool_name: String,
    /// The rule it broke.
    pub error: String,
    /// Whether sending it again, corrected, can succeed (a broken schema
    /// can; a clash with a catalogue tool cannot without a new name).
    pub recoverable: bool,
}

/// What a change did to the session's plugin tools.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ToolDiff {
    /// New tools.
    pub added: Vec<ToolDefinition>,
    /// Names of tools gone.
    pub removed: Vec<String>,
    /// Tools whose description or schema changed (as they are now).
    pub modified: Vec<ToolDefinition>,
    /// Tools whose status changed (a plugin turned one off or on).
    pub status_changed: Vec<StatusChange>,
}

impl ToolDiff {
    /// Nothing changed.
    pub fn is_empty(&self) -> bool {
        self.added.is_empty()
            && self.removed.is_empty()
            && self.modified.is_empty()
            && self.status_changed.is_empty()
    }

    /// The names of the tools changed in place (definition or status), in
    /// the order their changes were made, each once.
    pub fn changed_names(&self) -> Vec<String> {
        let mut names: Vec<String> = Vec::new();
        let defs = self.modified.iter().map(|d| &d.name);
        for name in defs.chain(self.status_changed.iter().map(|c| &c.name)) {
            if !names.contains(name) {
                names.push(name.clone());
            }
        }
        names
    }
}

/// One tool's new status.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct StatusChange {
    /// The tool.
    pub name: String,
    /// Its status now.
    pub status: ToolStatus,
}

/// The `tool-availability-update` event (SSE `event:` name), sent on the
/// session's stream whenever its plugin tools change. It carries the
/// change only, never the whole set: a set may hold up to
/// [`PLUGIN_SET_MAX_BYTES`](crate::domain::limits::PLUGIN_SET_MAX_BYTES),
/// and every watcher would get it again on every change. A listener that
/// starts late learns the whole set from its snapshot.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct AvailabilityUpdate {
    /// `tools-registered`, `tools-updated` or `tools-removed`.
    #[serde(rename = "type")]
    pub kind: String,
    /// New tools (active, registered at `timestamp`, never used).
    pub added: Vec<ToolDefinition>,
    /// Names of tools gone.
    pub removed: Vec<String>,
    /// Tools whose description or schema changed, as they are now.
    pub modified: Vec<ToolDefinition>,
    /// Tools whose status changed, with their status now.
    #[serde(default)]
    pub status_changed: Vec<StatusChange>,
    /// How many plugin tools the session holds after the change.
    #[serde(default)]
    pub tool_count: usize,
    /// When, Unix milliseconds.
    pub timestamp: i64,
    /// `plugin-registration` or `plugin-update`.
    pub reason: String,
}

impl AvailabilityUpdate {
    /// The update announcing `diff`, made at `timestamp` by a registration
    /// or a patch, leaving `tool_count` tools.
    pub fn of(diff: &ToolDiff, registration: bool, timestamp: i64, tool_count: usize) -> Self {
        Self {
            kind: update_kind(diff, registration).to_owned(),
            added: diff.added.clone(),
            removed: diff.removed.clone(),
            modified: diff.modified.clone(),
            status_changed: diff.status_changed.clone(),
            tool_count,
            timestamp,
            reason: if registration {
                "plugin-registration"
            } else {
                "plugin-update"
            }
            .to_owned(),
        }
    }

    /// The plugin's tools after this update, given those a watcher had
    /// before: the removed ones dropped, the modified ones' definitions and
    /// the new statuses put in place (keeping registration time and use
    /// count), the added ones appended as new. A registration that sent
    /// kept tools in a new order is shown in the old one until the next
    /// snapshot.
    pub fn apply_to(&self, before: &[PluginTool]) -> Vec<PluginTool> {
        let mut tools: Vec<PluginTool> = before
            .iter()
            .filter(|t| !self.removed.contains(&t.definition.name))
            .filter(|t| !self.added.iter().any(|d| d.name == t.definition.name))
            .cloned()
            .collect();
        for tool in &mut tools {
            let name = tool.definition.name.as_str();
            let status = self.status_changed.iter().find(|c| c.name == name);
            if let Some(c) = status {
                tool.status = c.status;
            }
            if let Some(d) = self.modified.iter().find(|d| d.name == name) {
                tool.definition = d.clone();
            }
        }
        tools.extend(self.added.iter().map(|d| new_tool(d, self.timestamp)));
        tools
    }
}

/// The SSE `event:` name of [`AvailabilityUpdate`].
pub const AVAILABILITY_EVENT: &str = "tool-availability-update";

/// The limits a change is checked against.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Limits {
    /// Most plugin tools in one session.
    pub max_tools: usize,
    /// Most bytes of tool text in one session ([`tools_bytes`]).
    pub max_bytes: usize,
}

/// The next tool set a registration or patch leads to, or why none.
#[derive(Debug, Clone, PartialEq)]
pub struct Plan {
    /// The session's plugin tools after the change.
    pub tools: Vec<PluginTool>,
    /// Names that registered (added or modified).
    pub registered: Vec<String>,
    /// Tools refused, each alone.
    pub failed: Vec<FailedTool>,
    /// What changed.
    pub diff: ToolDiff,
}

/// A whole request refused (nothing is registered): the set it would
/// leave is over one of the session's limits.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum OverLimit {
    /// Too many tools.
    Tools {
        /// How many the session would hold.
        would_hold: usize,
        /// The limit.
        max: usize,
    },
    /// Too much tool text ([`tools_bytes`]).
    Bytes {
        /// How many bytes the session's tools would take.
        would_take: usize,
        /// The limit.
        max: usize,
    },
}

/// Counts the bytes written to it, so a size is measured without building
/// the text.
struct ByteCount(usize);

impl std::io::Write for ByteCount {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        self.0 += buf.len();
        Ok(buf.len())
    }
    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

/// The bytes `tools` take as metadata, snapshots and the store carry
/// them: their JSON array, each tool with its name, description, schema,
/// status and dates, and its use count at its widest (20 digits), so
/// relayed calls never carry a set over its budget.
pub fn tools_bytes(tools: &[PluginTool]) -> usize {
    let mut count = ByteCount(0);
    for tool in tools {
        let widest = PluginTool {
            usage_count: u64::MAX,
            ..tool.clone()
        };
        // Writing to a counter cannot fail; a failure would only under-count.
        let _ = serde_json::to_writer(&mut count, &widest);
    }
    count.0 + tools.len().saturating_sub(1) + 2
}

/// Refuses `tools` (the set a change leads to) when over `limits`' byte
/// budget; `before` (the bytes the set took) lets a patch that shrinks an
/// oversized set through.
fn check_bytes(
    tools: &[PluginTool],
    before: Option<usize>,
    limits: Limits,
) -> Result<(), OverLimit> {
    let would_take = tools_bytes(tools);
    if would_take > limits.max_bytes && before.is_none_or(|b| would_take > b) {
        return Err(OverLimit::Bytes {
            would_take,
            max: limits.max_bytes,
        });
    }
    Ok(())
}

fn check_short(field: &str, text: &str) -> Result<(), FieldError> {
    let n = text.chars().count();
    if n > SHORT_TEXT_MAX_CHARS {
        return Err(FieldError::new(
            field,
            format!("must be at most {SHORT_TEXT_MAX_CHARS} characters (got {n})"),
        ));
    }
    Ok(())
}

fn check_list<T>(field: &str, list: &[T]) -> Result<(), FieldError> {
    if list.len() > LIST_MAX_ITEMS {
        return Err(FieldError::new(
            field,
            format!(
                "must have at most {LIST_MAX_ITEMS} entries (got {})",
                list.len()
            ),
        ));
    }
    Ok(())
}

/// Checks a registration's own fields (not its tools, which are checked
/// one by one): the first field over its limit, named.
pub fn check_registration(r: &Registration) -> Result<(), FieldError> {
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
            return Err(FieldError::new(
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

fn failed(name: &str, error: String, recoverable: bool) -> FailedTool {
    FailedTool {
        tool_name: excerpt(name),
        error,
        recoverable,
    }
}

/// Checks one definition alone: its name, description and schema (size,
/// depth, an object schema, and that `compile` accepts it). `reserved`
/// says whether a name belongs to the catalogue.
pub fn check_definition(
    def: &ToolDefinition,
    reserved: &dyn Fn(&str) -> bool,
    compile: &dyn Fn(&Schema) -> Result<(), String>,
) -> Result<(), FailedTool> {
    let name = def.name.as_str();
    ToolId::parse(name).map_err(|e| failed(name, format!("name: {}", e.rule), true))?;
    if reserved(name) {
        return Err(failed(
            name,
            format!("name: `{name}` is a catalogue tool; choose another name"),
            false,
        ));
    }
    let chars = def.description.chars().count();
    if def.description.trim().is_empty() {
        return Err(failed(name, "description: is required".into(), true));
    }
    if chars > DESCRIPTION_MAX_CHARS {
        return Err(failed(
            name,
            format!(
                "description: must be at most {DESCRIPTION_MAX_CHARS} characters (got {chars})"
            ),
            true,
        ));
    }
    check_schema(name, &def.parameters, compile)
}

fn check_schema(
    name: &str,
    schema: &Schema,
    compile: &dyn Fn(&Schema) -> Result<(), String>,
) -> Result<(), FailedTool> {
    let bytes = schema.json().len();
    if bytes > SCHEMA_MAX_BYTES {
        return Err(failed(
            name,
            format!("parameters: must be at most {SCHEMA_MAX_BYTES} bytes as JSON (got {bytes})"),
            true,
        ));
    }
    let shape = schema.shape().map_err(|e| {
        failed(
            name,
            format!("parameters: {}", excerpt(&e.to_string())),
            true,
        )
    })?;
    let levels = shape.depth;
    if levels > SCHEMA_MAX_DEPTH {
        return Err(failed(
            name,
            format!("parameters: must nest at most {SCHEMA_MAX_DEPTH} levels (got {levels})"),
            true,
        ));
    }
    if !shape.object_type {
        return Err(failed(
            name,
            "parameters: must be a JSON Schema with \"type\": \"object\"".into(),
            true,
        ));
    }
    compile(schema).map_err(|e| failed(name, format!("parameters: {}", excerpt(&e)), true))
}

/// Plans a registration: `incoming` replaces `current`. Each tool is
/// checked alone; a name sent twice keeps the first. Tools kept keep their
/// registration time, use count and status.
pub fn plan_registration(
    current: &[PluginTool],
    incoming: &[ToolDefinition],
    now: i64,
    limits: Limits,
    reserved: &dyn Fn(&str) -> bool,
    compile: &dyn Fn(&Schema) -> Result<(), String>,
) -> Result<Plan, OverLimit> {
    let mut failed_tools = Vec::new();
    let mut accepted: Vec<&ToolDefinition> = Vec::new();
    let mut seen = BTreeSet::new();
    for def in incoming {
        if !seen.insert(def.name.as_str()) {
            failed_tools.push(failed(
                &def.name,
                "name: sent twice in this request; the first one counts".into(),
                false,
            ));
            continue;
        }
        match check_definition(def, reserved, compile) {
            Ok(()) => accepted.push(def),
            Err(f) => failed_tools.push(f),
        }
    }
    if accepted.len() > limits.max_tools {
        return Err(OverLimit::Tools {
            would_hold: accepted.len(),
            max: limits.max_tools,
        });
    }
    let old: BTreeMap<&str, &PluginTool> = current
        .iter()
        .map(|t| (t.definition.name.as_str(), t))
        .collect();
    let mut diff = ToolDiff::default();
    let tools: Vec<PluginTool> = accepted
        .iter()
        .map(|def| match old.get(def.name.as_str()) {
            Some(was) => {
                if was.definition != **def {
                    diff.modified.push((*def).clone());
                }
                PluginTool {
                    definition: (*def).clone(),
                    ..(*was).clone()
                }
            }
            None => {
                diff.added.push((*def).clone());
                new_tool(def, now)
            }
        })
        .collect();
    let kept: BTreeSet<&str> = accepted.iter().map(|d| d.name.as_str()).collect();
    diff.removed = current
        .iter()
        .map(|t| t.definition.name.clone())
        .filter(|n| !kept.contains(n.as_str()))
        .collect();
    check_bytes(&tools, None, limits)?;
    Ok(Plan {
        registered: accepted.iter().map(|d| d.name.clone()).collect(),
        tools,
        failed: failed_tools,
        diff,
    })
}

fn new_tool(def: &ToolDefinition, now: i64) -> PluginTool {
    PluginTool {
        definition: def.clone(),
        status: ToolStatus::Active,
        registered_at: now,
        usage_count: 0,
    }
}

/// Plans a patch on `current`: removals first, then changes, then
/// additions; each entry is checked alone (adding a name already there,
/// or changing or removing one that is not, fails that entry only).
pub fn plan_patch(
    current: &[PluginTool],
    patch: &Patch,
    now: i64,
    limits: Limits,
    reserved: &dyn Fn(&str) -> bool,
    compile: &dyn Fn(&Schema) -> Result<(), String>,
) -> Result<Plan, OverLimit> {
    let mut tools: Vec<PluginTool> = current.to_vec();
    let mut plan_failed = Vec::new();
    let mut registered = Vec::new();
    let mut diff = ToolDiff::default();
    for name in &patch.remove {
        match tools.iter().position(|t| t.definition.name == *name) {
            Some(i) => {
                tools.remove(i);
                diff.removed.push(name.clone());
            }
            None => plan_failed.push(failed(
                name,
                "remove: no such plugin tool in this session".into(),
                false,
            )),
        }
    }
    for change in &patch.modify {
        let Some(slot) = tools.iter_mut().find(|t| t.definition.name == change.name) else {
            plan_failed.push(failed(
                &change.name,
                "modify: no such plugin tool in this session; add it instead".into(),
                true,
            ));
            continue;
        };
        let mut next = slot.clone();
        if let Some(d) = &change.description {
            next.definition.description = d.clone();
        }
        if let Some(p) = &change.parameters {
            next.definition.parameters = p.clone();
        }
        if let Some(s) = change.status {
            next.status = s;
        }
        if let Err(f) = check_definition(&next.definition, reserved, compile) {
            plan_failed.push(f);
            continue;
        }
        if next.definition != slot.definition {
            diff.modified.push(next.definition.clone());
        }
        if next.status != slot.status {
            diff.status_changed.push(StatusChange {
                name: change.name.clone(),
                status: next.status,
            });
        }
        registered.push(change.name.clone());
        *slot = next;
    }
    let mut adding = 0usize;
    for def in &patch.add {
        if tools.iter().any(|t| t.definition.name == def.name) {
            plan_failed.push(failed(
                &def.name,
                "add: already registered in this session; use modify".into(),
                false,
            ));
            continue;
        }
        if let Err(f) = check_definition(def, reserved, compile) {
            plan_failed.push(f);
            continue;
        }
        adding += 1;
        tools.push(new_tool(def, now));
        diff.added.push(def.clone());
        registered.push(def.name.clone());
    }
    if adding > 0 && tools.len() > limits.max_tools {
        return Err(OverLimit::Tools {
            would_hold: tools.len(),
            max: limits.max_tools,
        });
    }
    check_bytes(&tools, Some(tools_bytes(current)), limits)?;
    Ok(Plan {
        tools,
        registered,
        failed: plan_failed,
        diff,
    })
}

/// The event `kind` for a diff: registration, removals only, or updates.
pub fn update_kind(diff: &ToolDiff, registration: bool) -> &'static str {
    if registration {
        "tools-registered"
    } else if diff.added.is_empty()
        && diff.modified.is_empty()
        && diff.status_changed.is_empty()
        && !diff.removed.is_empty()
    {
        "tools-removed"
    } else {
        "tools-updated"
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

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;
    use serde_json::json;

    fn def(name: &str) -> ToolDefinition {
        ToolDefinition {
            name: name.into(),
            description: format!("Does {name}."),
            parameters: json!({"type": "object", "properties": {"x": {"type": "number"}}}).into(),
        }
    }
    fn none(_: &str) -> bool {
        false
    }
    #[test]
    fn a_registered_tool_reads_back_as_written_with_its_schema_text() {
        let tool = PluginTool {
            definition: ToolDefinition {
                name: "createGraph".into(),
                description: "Draws a graph.".into(),
                parameters: serde_json::from_str(
                    r#"{"type": "object", "properties": {"x": {"type": "string"}}}"#,
                )
                .unwrap(),
            },
            status: ToolStatus::Disabled,
            registered_at: 7,
            usage_count: 3,
        };
        let text = serde_json::to_string(&tool).unwrap();
        assert!(text.contains(r#""parameters":{"type": "object""#), "{text}");
        assert!(text.contains(r#""registeredAt":7"#), "{text}");
        let back: PluginTool = serde_json::from_str(&text).unwrap();
        assert_eq!(back, tool);
        assert_eq!(
            serde_json::from_value::<PluginTool>(serde_json::to_value(&tool).unwrap()).unwrap(),
            tool
        );
    }

    fn ok(_: &Schema) -> Result<(), String> {
        Ok(())
    }

    #[test]
    fn a_schema_holding_a_number_no_tree_can_hold_fails_alone_naming_it() {
        let mut big = def("bigNumber");
        big.parameters = serde_json::from_str(r#"{"type": "object", "maximum": 1e400}"#).unwrap();
        // The server compiles (and so builds the tree) before it checks.
        assert!(big.parameters.value().is_null());
        let err = check_definition(&big, &none, &ok).unwrap_err();
        assert!(
            err.error.starts_with("parameters: number out of range"),
            "{}",
            err.error
        );
        assert!(err.recoverable);
        assert!(check_definition(&def("fine"), &none, &ok).is_ok());
    }
    const LIMITS: Limits = Limits {
        max_tools: 5,
        max_bytes: 1024 * 1024,
    };

    #[test]
    fn each_field_is_checked_and_named() {
        let catalogue = |n: &str| n == "get_server_time";
        let cases = [
            (
                ToolDefinition {
                    name: "bad name".into(),
                    ..def("x")
                },
                "name: tool id",
            ),
            (def("get_server_time"), "is a catalogue tool"),
            (
                ToolDefinition {
                    description: " ".into(),
                    ..def("a")
                },
                "description: is required",
            ),
            (
                ToolDefinition {
                    description: "d".repeat(1025),
                    ..def("a")
                },
                "at most 1024 characters (got 1025)",
            ),
            (
                ToolDefinition {
                    parameters: json!({"type": "string"}).into(),
                    ..def("a")
                },
                "\"type\": \"object\"",
            ),
            (
                ToolDefinition {
                    parameters: json!({"type": "object", "description": "x".repeat(17_000)}).into(),
                    ..def("a")
                },
                "at most 16384 bytes",
            ),
        ];
        for (d, expected) in cases {
            let e = check_definition(&d, &catalogue, &ok).unwrap_err();
            assert!(e.error.contains(expected), "{} → {}", d.name, e.error);
        }
        let mut deep = json!({"type": "string"});
        for _ in 0..13 {
            deep = json!({"type": "object", "properties": {"a": deep}});
        }
        let e = check_definition(
            &ToolDefinition {
                parameters: deep.into(),
                ..def("a")
            },
            &none,
            &ok,
        )
        .unwrap_err();
        assert!(e.error.contains("nest at most 12 levels"), "{}", e.error);
        let e = check_definition(&def("a"), &none, &|_| Err("bad regex".into())).unwrap_err();
        assert_eq!(e.error, "parameters: bad regex");
        assert!(e.recoverable);
        assert!(check_definition(&def("createGraph"), &none, &ok).is_ok());
    }

    #[test]
    fn a_registrations_own_fields_are_bounded_and_named() {
        let ok = Registration {
            plugin_type: PluginType::Codap,
            plugin_version: "1".into(),
            capabilities: vec![],
            available_tools: vec![],
            environment: Environment::default(),
            constraints: None,
        };
        assert!(check_registration(&ok).is_ok());
        let long = Registration {
            plugin_version: "v".repeat(65),
            ..ok.clone()
        };
        assert_eq!(
            check_registration(&long).unwrap_err().field,
            "pluginVersion"
        );
        let mut many = ok.clone();
        many.environment.features = vec!["f".into(); 51];
        assert_eq!(
            check_registration(&many).unwrap_err().field,
            "environment.features"
        );
        let big = Registration {
            constraints: Some(json!({"x": "y".repeat(33_000)})),
            ..ok
        };
        let e = check_registration(&big).unwrap_err();
        assert_eq!(e.field, "constraints");
        assert!(e.rule.contains("at most 32768 bytes"), "{}", e.rule);
    }

    #[test]
    fn a_registration_keeps_good_tools_and_lists_bad_ones() {
        let incoming = vec![
            def("createTable"),
            def("bad name"),
            def("addRow"),
            def("createTable"),
        ];
        let plan = plan_registration(&[], &incoming, 7, LIMITS, &none, &ok).unwrap();
        assert_eq!(plan.registered, ["createTable", "addRow"]);
        assert_eq!(plan.failed.len(), 2);
        assert_eq!(plan.failed[0].tool_name, "bad name");
        assert!(plan.failed[1].error.contains("sent twice"));
        assert_eq!(plan.diff.added.len(), 2);
        assert!(plan
            .tools
            .iter()
            .all(|t| t.registered_at == 7 && t.status == ToolStatus::Active));
    }

    #[test]
    fn a_second_registration_replaces_and_says_what_changed() {
        let first = plan_registration(&[], &[def("a"), def("b")], 1, LIMITS, &none, &ok).unwrap();
        let mut tools = first.tools;
        tools[0].usage_count = 3;
        let changed = ToolDefinition {
            description: "New.".into(),
            ..def("a")
        };
        let second =
            plan_registration(&tools, &[changed.clone(), def("c")], 9, LIMITS, &none, &ok).unwrap();
        assert_eq!(second.diff.added, vec![def("c")]);
        assert_eq!(second.diff.removed, vec!["b".to_owned()]);
        assert_eq!(second.diff.modified, vec![changed]);
        assert_eq!(
            (second.tools[0].usage_count, second.tools[0].registered_at),
            (3, 1)
        );
        assert_eq!(update_kind(&second.diff, true), "tools-registered");
    }

    #[test]
    fn over_the_limit_nothing_is_registered() {
        let many: Vec<_> = (0..6).map(|i| def(&format!("t{i}"))).collect();
        let e = plan_registration(&[], &many, 1, LIMITS, &none, &ok).unwrap_err();
        assert_eq!(
            e,
            OverLimit::Tools {
                would_hold: 6,
                max: 5
            }
        );
        let four = plan_registration(&[], &many[..4], 1, LIMITS, &none, &ok)
            .unwrap()
            .tools;
        let patch = Patch {
            add: vec![def("x"), def("y")],
            ..Patch::default()
        };
        assert!(plan_patch(&four, &patch, 2, LIMITS, &none, &ok).is_err());
        let patch = Patch {
            add: vec![def("x")],
            ..Patch::default()
        };
        assert_eq!(
            plan_patch(&four, &patch, 2, LIMITS, &none, &ok)
                .unwrap()
                .tools
                .len(),
            5
        );
    }

    #[test]
    fn a_patch_removes_modifies_and_adds_each_entry_alone() {
        let tools = plan_registration(&[], &[def("a"), def("b")], 1, LIMITS, &none, &ok)
            .unwrap()
            .tools;
        let patch = Patch {
            add: vec![def("c"), def("a")],
            remove: vec!["b".into(), "zz".into()],
            modify: vec![
                ToolChange {
                    name: "a".into(),
                    description: None,
                    parameters: None,
                    status: Some(ToolStatus::Disabled),
                },
                ToolChange {
                    name: "ghost".into(),
                    description: Some("x".into()),
                    parameters: None,
                    status: None,
                },
            ],
        };
        let plan = plan_patch(&tools, &patch, 5, LIMITS, &none, &ok).unwrap();
        let names: Vec<_> = plan
            .tools
            .iter()
            .map(|t| t.definition.name.as_str())
            .collect();
        assert_eq!(names, ["a", "c"]);
        assert_eq!(plan.tools[0].status, ToolStatus::Disabled);
        assert_eq!(plan.diff.removed, ["b"]);
        assert_eq!(plan.diff.added, vec![def("c")]);
        assert!(plan.diff.modified.is_empty(), "only its status changed");
        assert_eq!(
            plan.diff.status_changed,
            [StatusChange {
                name: "a".into(),
                status: ToolStatus::Disabled
            }]
        );
        assert_eq!(plan.diff.changed_names(), ["a"]);
        let errors: Vec<_> = plan
            .failed
            .iter()
            .map(|f| (f.tool_name.as_str(), f.error.as_str()))
            .collect();
        assert_eq!(errors.len(), 3, "{errors:?}");
        assert!(errors
            .iter()
            .any(|(n, e)| *n == "zz" && e.starts_with("remove:")));
        assert!(errors
            .iter()
            .any(|(n, e)| *n == "ghost" && e.starts_with("modify:")));
        assert!(errors
            .iter()
            .any(|(n, e)| *n == "a" && e.starts_with("add:")));
        let removed_only = ToolDiff {
            removed: vec!["b".into()],
            ..ToolDiff::default()
        };
        assert_eq!(update_kind(&removed_only, false), "tools-removed");
    }

    #[test]
    fn a_watcher_rebuilds_the_tools_from_an_update_and_what_it_had() {
        let first = plan_registration(&[], &[def("a"), def("b")], 1, LIMITS, &none, &ok).unwrap();
        let mut had = first.tools.clone();
        had[1].usage_count = 4;
        let changed = ToolDefinition {
            description: "New.".into(),
            ..def("b")
        };
        let second =
            plan_registration(&had, &[changed.clone(), def("c")], 2, LIMITS, &none, &ok).unwrap();
        let update = AvailabilityUpdate::of(&second.diff, true, 2, second.tools.len());
        assert_eq!(update.apply_to(&had), second.tools);
        let patch = Patch {
            modify: vec![ToolChange {
                name: "c".into(),
                description: None,
                parameters: None,
                status: Some(ToolStatus::Disabled),
            }],
            remove: vec!["b".into()],
            ..Patch::default()
        };
        let third = plan_patch(&second.tools, &patch, 3, LIMITS, &none, &ok).unwrap();
        let update = AvailabilityUpdate::of(&third.diff, false, 3, third.tools.len());
        assert_eq!(update.apply_to(&second.tools), third.tools);
        assert_eq!(update.kind, "tools-updated");
        assert!(update.added.is_empty() && update.modified.is_empty());
        assert_eq!(update.tool_count, 1);
    }

    #[test]
    fn an_update_carries_the_change_not_the_whole_set() {
        let many: Vec<_> = (0..50).map(|i| def(&format!("t{i}"))).collect();
        let limits = Limits {
            max_tools: 100,
            ..LIMITS
        };
        let first = plan_registration(&[], &many, 1, limits, &none, &ok).unwrap();
        let patch = Patch {
            add: vec![def("extra")],
            ..Patch::default()
        };
        let plan = plan_patch(&first.tools, &patch, 2, limits, &none, &ok).unwrap();
        let update = AvailabilityUpdate::of(&plan.diff, false, 2, plan.tools.len());
        let text = serde_json::to_string(&update).unwrap();
        assert!(!text.contains("\"t7\""), "{text}");
        assert!(text.len() < tools_bytes(&plan.tools[..2]), "{text}");
        assert_eq!(update.tool_count, 51);
    }

    #[test]
    fn the_byte_budget_counts_every_tool_as_sent_and_refuses_whole_requests() {
        let tools = plan_registration(&[], &[def("a"), def("b")], 1, LIMITS, &none, &ok)
            .unwrap()
            .tools;
        let mut widest = tools.clone();
        for t in &mut widest {
            t.usage_count = u64::MAX;
        }
        assert_eq!(
            tools_bytes(&tools),
            serde_json::to_string(&widest).unwrap().len()
        );
        assert_eq!(tools_bytes(&[]), 2);
        let tight = Limits {
            max_tools: 10,
            max_bytes: tools_bytes(&tools),
        };
        assert!(plan_registration(&[], &[def("a"), def("b")], 1, tight, &none, &ok).is_ok());
        let e = plan_registration(&[], &[def("a"), def("b"), def("c")], 1, tight, &none, &ok)
            .unwrap_err();
        assert!(matches!(e, OverLimit::Bytes { would_take, max } if would_take > max));
        let add = Patch {
            add: vec![def("c")],
            ..Patch::default()
        };
        assert!(plan_patch(&tools, &add, 2, tight, &none, &ok).is_err());
        // A set already over a (lowered) budget may still shrink.
        let lower = Limits {
            max_bytes: 10,
            ..tight
        };
        let remove = Patch {
            remove: vec!["b".into()],
            ..Patch::default()
        };
        assert!(plan_patch(&tools, &remove, 2, lower, &none, &ok).is_ok());
        let grow = Patch {
            modify: vec![ToolChange {
                name: "a".into(),
                description: Some("A much longer description than before.".into()),
                parameters: None,
                status: None,
            }],
            ..Patch::default()
        };
        assert!(plan_patch(&tools, &grow, 2, lower, &none, &ok).is_err());
    }

    #[test]
    fn the_union_adds_only_active_plugin_tools_after_the_base() {
        let mut tools = plan_registration(
            &[],
            &[def("x"), def("y"), def("hangUp")],
            1,
            LIMITS,
            &none,
            &ok,
        )
        .unwrap()
        .tools;
        tools[1].status = ToolStatus::Disabled;
        let set = PluginSet {
            plugin_type: PluginType::Codap,
            plugin_version: "1".into(),
            capabilities: vec![],
            environment: Environment::default(),
            constraints: None,
            tools,
            updated_at: 1,
        };
        let base = vec!["hangUp".to_owned(), "a".to_owned()];
        assert_eq!(union(base.clone(), Some(&set)), ["hangUp", "a", "x"]);
        assert_eq!(union(base.clone(), None), base);
    }

    proptest! {
        #[test]
        fn the_diff_of_two_registrations_accounts_for_every_name(
            a in proptest::collection::btree_set("[a-e]", 0..5),
            b in proptest::collection::btree_set("[a-e]", 0..5),
        ) {
            let limits = Limits { max_tools: 10, max_bytes: 1 << 20 };
            let first: Vec<_> = a.iter().map(|n| def(n)).collect();
            let second: Vec<_> = b.iter().map(|n| def(n)).collect();
            let old = plan_registration(&[], &first, 1, limits, &none, &ok).unwrap().tools;
            let plan = plan_registration(&old, &second, 2, limits, &none, &ok).unwrap();
            let added: BTreeSet<_> = plan.diff.added.iter().map(|d| d.name.clone()).collect();
            let removed: BTreeSet<_> = plan.diff.removed.iter().cloned().collect();
            prop_assert_eq!(added, b.difference(&a).cloned().collect::<BTreeSet<_>>());
            prop_assert_eq!(removed, a.difference(&b).cloned().collect::<BTreeSet<_>>());
            prop_assert!(plan.diff.modified.is_empty());
            prop_assert_eq!(plan.tools.len(), b.len());
        }
    }
}
