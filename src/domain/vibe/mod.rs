//! Agent personas and vibes (app experiences), held as data.
//!
//! A voice product runs several personas in one call: an orchestrator hands
//! the user to a specialist, and each persona must get exactly its own
//! tools. An [`Agent`] is a persona with its tools and prompt template; a
//! [`Vibe`] groups agents with the core tools every agent of it has (e.g.
//! `switchAgent`, `hangUp`) and the app tools its agents may draw from.
//! [`rules::problems`] checks a whole set on every save and import, and the
//! session engine computes an agent's tools as core ∪ agent tools — the
//! same one computation as a workflow's.

pub mod call_settings;
pub mod demo;
pub mod manifest;
pub mod rules;
pub mod template;
pub mod tool_file;

use crate::domain::declaration::ultravox::Runner;
use crate::domain::ids::{AgentId, ToolId, VibeId};
use crate::domain::vibe::call_settings::CallSettings;
use serde::{Deserialize, Serialize};

/// The tool that moves a vibe session to another agent.
pub const SWITCH_AGENT_TOOL: &str = "switchAgent";
/// The tool that ends a vibe session's call.
pub const HANG_UP_TOOL: &str = "hangUp";
/// Core tools every vibe must have: without them a user could be stuck
/// with one persona or unable to end the call.
pub const REQUIRED_CORE_TOOLS: [&str; 2] = [SWITCH_AGENT_TOOL, HANG_UP_TOOL];

/// A persona: who it is, how it sounds, what it may call, and its prompt.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct Agent {
    /// Id (`Oliver`).
    pub id: AgentId,
    /// Name the user hears and `switchAgent` accepts (`Oliver`).
    pub name: String,
    /// Character, one or two sentences, for the prompt.
    #[serde(default)]
    pub personality: String,
    /// The voice the backend speaks with.
    #[serde(default)]
    pub voice_id: String,
    /// What it is for, shown to the other agents (`{{otherAgents}}`).
    #[serde(default)]
    pub description: String,
    /// Its own tools (besides its vibe's core tools).
    #[serde(default)]
    pub tools: Vec<ToolId>,
    /// The system prompt, with `{{agentName}}`, `{{personality}}`,
    /// `{{tools}}` and `{{otherAgents}}` filled in per call.
    #[serde(default)]
    pub system_prompt_template: String,
}

/// An app experience: its agents, which starts, and the tools they share.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct Vibe {
    /// Slug (`todos`).
    pub id: VibeId,
    /// Name people see (`Todo Assistant`).
    pub name: String,
    /// What it is.
    #[serde(default)]
    pub description: String,
    /// The agent a new session starts with; one of `agents`.
    pub default_agent: AgentId,
    /// Its agents, in menu order.
    pub agents: Vec<AgentId>,
    /// Tools every agent of the vibe has.
    #[serde(default)]
    pub core_tools: Vec<ToolId>,
    /// Tools its agents may be given.
    #[serde(default)]
    pub app_tools: Vec<ToolId>,
    /// The tools the voice page runs itself (Ultravox client tools), of
    /// its core and app tools; every other tool is called on Switchboard.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub client_tools: Vec<ToolId>,
    /// The model and language settings its calls are created with.
    #[serde(default, skip_serializing_if = "CallSettings::is_empty")]
    pub call_settings: CallSettings,
}

impl Vibe {
    /// The tools `agent` has in this vibe: the core tools, then its own
    /// (each once, in that order). The one answer listing, enforcement and
    /// watchers use for an agent.
    pub fn tools_of(&self, agent: &Agent) -> Vec<String> {
        let mut tools: Vec<String> = Vec::with_capacity(self.core_tools.len() + agent.tools.len());
        for id in self.core_tools.iter().chain(&agent.tools) {
            if !tools.iter().any(|t| t == id.as_str()) {
                tools.push(id.to_string());
            }
        }
        tools
    }

    /// Whether the voice page runs `tool` itself (a client tool).
    pub fn runs_on_client(&self, tool: &str) -> bool {
        self.client_tools.iter().any(|t| t.as_str() == tool)
    }

    /// Who runs `tool` in this vibe's Ultravox calls (`ultravox_builtin`:
    /// Ultravox has it built in): the voice page for its client tools,
    /// else Switchboard — except Ultravox's own built-ins, which stay
    /// Ultravox's, but for `hangUp`, whose call must end the session.
    pub fn runner(&self, tool: &str, ultravox_builtin: bool) -> Runner {
        if self.runs_on_client(tool) {
            Runner::Client
        } else {
            Runner::server(ultravox_builtin, tool == HANG_UP_TOOL)
        }
    }

    /// Whether `agent` is one of this vibe's.
    pub fn has_agent(&self, agent: &str) -> bool {
        self.agents.iter().any(|a| a.as_str() == agent)
    }
}

/// Who a vibe session is talking to, as watchers see it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct AgentView {
    /// The vibe's id.
    pub vibe_id: String,
    /// The vibe's name.
    pub vibe_name: String,
    /// The agent's id.
    pub agent_id: String,
    /// Its name.
    pub name: String,
    /// Its personality.
    pub personality: String,
    /// Its voice.
    pub voice_id: String,
}

impl AgentView {
    /// `agent` as it runs in `vibe`.
    pub fn of(vibe: &Vibe, agent: &Agent) -> Self {
        Self {
            vibe_id: vibe.id.to_string(),
            vibe_name: vibe.name.clone(),
            agent_id: agent.id.to_string(),
            name: agent.name.clone(),
            personality: agent.personality.clone(),
            voice_id: agent.voice_id.clone(),
        }
    }
}

/// Finds the agent `wanted` names among `agents`: its id or its name, in
/// any case, trimmed (a model says "oliver" as readily as "Oliver").
pub fn find_agent<'a>(agents: &'a [&'a Agent], wanted: &str) -> Option<&'a Agent> {
    let wanted = wanted.trim();
    agents.iter().copied().find(|a| {
        a.id.as_str().eq_ignore_ascii_case(wanted) || a.name.trim().eq_ignore_ascii_case(wanted)
    })
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;

    pub fn agent(id: &str, tools: &[&str]) -> Agent {
        Agent {
            id: AgentId::parse(id).unwrap(),
            name: id.to_owned(),
            personality: format!("{id} is helpful."),
            voice_id: "Mark".into(),
            description: format!("{id} does things."),
            tools: tools.iter().map(|t| ToolId::parse(t).unwrap()).collect(),
            system_prompt_template: "You are {{agentName}}.".into(),
        }
    }

    pub fn vibe(agents: &[&str], core: &[&str], app: &[&str]) -> Vibe {
        let ids = |list: &[&str]| list.iter().map(|t| ToolId::parse(t).unwrap()).collect();
        Vibe {
            id: VibeId::parse("todos").unwrap(),
            name: "Todo Assistant".into(),
            description: String::new(),
            default_agent: AgentId::parse(agents[0]).unwrap(),
            agents: agents.iter().map(|a| AgentId::parse(a).unwrap()).collect(),
            core_tools: ids(core),
            app_tools: ids(app),
            client_tools: Vec::new(),
            call_settings: CallSettings::default(),
        }
    }

    #[test]
    fn an_agents_tools_are_the_core_tools_then_its_own_once_each() {
        let v = vibe(&["Oliver"], &["hangUp", "switchAgent"], &["createTodo"]);
        let oliver = agent("Oliver", &["createTodo", "hangUp"]);
        assert_eq!(v.tools_of(&oliver), ["hangUp", "switchAgent", "createTodo"]);
    }

    #[test]
    fn agents_are_found_by_id_or_name_in_any_case() {
        let mut rajesh = agent("rajesh", &[]);
        rajesh.name = "Rajesh".into();
        let oliver = agent("Oliver", &[]);
        let list = [&oliver, &rajesh];
        assert_eq!(find_agent(&list, " oliver ").unwrap().id.as_str(), "Oliver");
        assert_eq!(find_agent(&list, "RAJESH").unwrap().id.as_str(), "rajesh");
        assert!(find_agent(&list, "Hominio").is_none());
    }

    #[test]
    fn ids_are_parsed_once() {
        assert!(AgentId::parse("Hominio").is_ok());
        assert!(AgentId::parse("no spaces").is_err());
        assert!(VibeId::parse("todos").is_ok());
        assert_eq!(VibeId::parse("Todos").unwrap_err().field, "id");
        let bad: Result<Vibe, _> =
            serde_json::from_str(r#"{"id":"todos","name":"x","defaultAgent":"a b","agents":[]}"#);
        assert!(bad.is_err());
    }
}
