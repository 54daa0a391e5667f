//! What a change did to a session's plugin tools, as the registering
//! plugin is answered and as watchers are told (`tool-availability-update`).

use super::registration::{ToolDefinition, ToolStatus};
use super::set::{new_tool, PluginTool};
use serde::{Deserialize, Serialize};

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
