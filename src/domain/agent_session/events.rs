//! The events pushed to a session's watchers and to the session list's,
//! with their names (every frame's `event:`).

use super::calls::{CallResult, ToolCallRecord};
use crate::domain::lesson::nudge::{Nudge, TurnLog};
use crate::domain::session_origin::StartedBy;
use crate::domain::vibe::AgentView;
use crate::domain::workflow_state::{AgentContext, WorkflowState};
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

/// The `workflow_update` event for a state: kept here, beside the event,
/// so `workflow_state` stays a leaf.
impl WorkflowState {
    /// The `workflow_update` payload for this state.
    pub fn update(&self) -> WorkflowUpdate {
        WorkflowUpdate {
            workflow_id: self.current_workflow.clone(),
            active_step: self.current_step.clone(),
            checks: self.checks.clone(),
            agent: self.agent.clone(),
            workflow_step: self.workflow_step.clone(),
        }
    }
}

/// The data of a `workflow_update` event.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct WorkflowUpdate {
    /// Current workflow.
    pub workflow_id: String,
    /// Current step.
    pub active_step: String,
    /// Checks.
    pub checks: BTreeMap<String, bool>,
    /// A vibe session's vibe and current agent.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub agent: Option<AgentContext>,
    /// The workflow step (uuid) the session is in, if its workflow has steps.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub workflow_step: Option<String>,
}

/// Everything a watcher needs to draw a session from scratch.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct SessionSnapshot {
    /// Session id.
    pub session_id: String,
    /// Workflow state.
    pub state: WorkflowState,
    /// Tools available now.
    pub tools: Vec<String>,
    /// Recent calls, newest last.
    pub calls: Vec<ToolCallRecord>,
    /// Whether the session has ended.
    pub ended: bool,
    /// Opened, Unix seconds (the visualiser's elapsed time).
    #[serde(default)]
    pub started_at: i64,
    /// When it ended, if it has.
    #[serde(default)]
    pub ended_at: Option<i64>,
    /// Why it ended (the `ended` event's reason), if it has.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub end_reason: Option<String>,
    /// A tutor session's planned length.
    #[serde(default)]
    pub planned_minutes: Option<u32>,
    /// The turns reported and the nudges given so far.
    #[serde(default)]
    pub turns: TurnLog,
    /// A vibe session's current agent.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub agent: Option<AgentView>,
    /// What the session's plugin registered (its tools with status and use
    /// counts), so a late listener learns them without the events.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub plugin: Option<crate::domain::plugin::PluginSet>,
    /// The start trigger that opened it, if one did (the page's "Started
    /// by" line).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub started_by: Option<StartedBy>,
}

/// The data of a `turn` event: the backend reported a turn.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct TurnUpdate {
    /// Turns the student has taken.
    pub student: u32,
    /// Turns the tutor has taken.
    pub tutor: u32,
    /// Nudges this turn gave the model.
    pub nudges: Vec<Nudge>,
}

/// An event on a session's stream: `{"type": "...", "data": {...}}`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "type", content = "data", rename_all = "snake_case")]
pub enum SessionEvent {
    /// The full state (first event for a new subscriber, or after a gap).
    Snapshot(Box<SessionSnapshot>),
    /// Workflow, step or checks changed.
    WorkflowUpdate(WorkflowUpdate),
    /// A call was allowed or refused.
    ToolCall(ToolCallRecord),
    /// The agent backend reported the result of a call it executed.
    ToolResult(CallResult),
    /// The backend reported a turn (and the nudges it got).
    Turn(TurnUpdate),
    /// A vibe session moved to another agent (`switchAgent`).
    AgentChanged(AgentView),
    /// The available tools changed (workflow switch or new bindings).
    ToolsChanged {
        /// Tools available now.
        tools: Vec<String>,
    },
    /// The session ended.
    Ended {
        /// Why (`ended by agent`, `idle timeout`).
        reason: String,
    },
}

impl SessionEvent {
    /// Its SSE `event:` name, the same as its JSON `type`, so a browser's
    /// `EventSource.addEventListener(name, …)` gets it.
    pub fn name(&self) -> &'static str {
        match self {
            Self::Snapshot(_) => "snapshot",
            Self::WorkflowUpdate(_) => "workflow_update",
            Self::ToolCall(_) => "tool_call",
            Self::ToolResult(_) => "tool_result",
            Self::Turn(_) => "turn",
            Self::AgentChanged(_) => "agent_changed",
            Self::ToolsChanged { .. } => "tools_changed",
            Self::Ended { .. } => "ended",
        }
    }
}

/// Every `event:` name a session's stream carries: the [`SessionEvent`]s
/// and the plugin's `tool-availability-update`.
pub const SESSION_EVENT_NAMES: [&str; 9] = [
    "snapshot",
    "workflow_update",
    "tool_call",
    "tool_result",
    "turn",
    "agent_changed",
    "tools_changed",
    "ended",
    crate::domain::plugin::AVAILABILITY_EVENT,
];

/// Every `event:` name the session list's stream carries (its JSON `type`).
pub const LIST_EVENT_NAMES: [&str; 3] = ["opened", "updated", "ended"];

/// A session as listed for watchers.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct SessionSummary {
    /// Id.
    pub id: String,
    /// Workflow state.
    pub state: WorkflowState,
    /// Last activity, Unix seconds.
    pub last_activity: i64,
    /// Opened, Unix seconds.
    pub created_at: i64,
    /// Whether it has ended.
    pub ended: bool,
    /// Who a tutor session is for, if its backend named them.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub student: Option<String>,
    /// The start trigger that opened it, if one did.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub started_by: Option<StartedBy>,
    /// A signed-in user trying their configuration (listed as a trial).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub trial: bool,
    /// A tutor session's lesson, by its title now (the list names it so,
    /// not by its `lesson-{id}` workflow).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub lesson_title: Option<String>,
}

impl SessionSummary {
    /// What the session is in, as the list names it: a vibe session's vibe
    /// and agent now, a tutor session's lesson, else its workflow's name
    /// (its id when `workflows` does not know it).
    pub fn context_name(&self, workflows: &[crate::domain::catalogue::Workflow]) -> String {
        match (&self.state.agent, &self.lesson_title) {
            (Some(ctx), _) => format!("{} · {}", ctx.vibe, ctx.agent),
            (None, Some(title)) => title.clone(),
            (None, None) => {
                crate::domain::catalogue::workflow_name(workflows, &self.state.current_workflow)
            }
        }
    }
}
