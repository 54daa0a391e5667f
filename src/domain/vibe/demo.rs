//! The demo vibe shipped with Switchboard: `todos` ("Todo Assistant") with
//! an orchestrator (Hominio), a todo specialist (Oliver) and tech support
//! (Rajesh), and the core tools every vibe needs.

use crate::domain::catalogue::{object, CatalogueTool};
use crate::domain::ids::ToolId;
use crate::domain::ids::{AgentId, VibeId};
use crate::domain::vibe::{Agent, Vibe, HANG_UP_TOOL, SWITCH_AGENT_TOOL};
use serde_json::json;

/// The core tools: `switchAgent` (run by Switchboard) and `hangUp`
/// (Ultravox's own, selected by name).
pub fn core_tools() -> Vec<CatalogueTool> {
    let mut hang_up = CatalogueTool::new(
        HANG_UP_TOOL,
        "Hang up",
        "vibe-core",
        "Ends the call once the user has nothing more to ask; say goodbye first.",
        object(json!({}), &[]),
    );
    hang_up.ultravox_builtin = true;
    let switch = CatalogueTool::new(
        SWITCH_AGENT_TOOL,
        "Switch agent",
        "vibe-core",
        "Hands the user to another agent of this app who can help with what they ask; your tools change to theirs at once.",
        object(
            json!({"agentName": {"type": "string", "description": "The name of the agent to switch to."}}),
            &["agentName"],
        ),
    );
    vec![switch, hang_up]
}

fn ids(list: &[&str]) -> Vec<ToolId> {
    list.iter()
        .map(|t| ToolId::parse(t).expect("demo tool id"))
        .collect()
}

const TEMPLATE: &str =
    "You are {{agentName}}, part of the Todo Assistant voice app. {{personality}}\n\n\
Speak briefly and naturally. Use only your tools: {{tools}}. When the user needs something another \
agent does, call switchAgent with that agent's name; never pretend to do their work.\n\n\
The other agents:\n{{otherAgents}}";

fn agent(id: &str, personality: &str, voice: &str, description: &str, tools: &[&str]) -> Agent {
    Agent {
        id: AgentId::parse(id).expect("demo agent id"),
        name: id.to_owned(),
        personality: personality.to_owned(),
        voice_id: voice.to_owned(),
        description: description.to_owned(),
        tools: ids(tools),
        system_prompt_template: TEMPLATE.to_owned(),
    }
}

/// Hominio, Oliver and Rajesh.
pub fn agents() -> Vec<Agent> {
    vec![
        agent(
            "Hominio",
            "Warm and quick, you greet the user, find out what they need and hand them to the right colleague.",
            "Mark",
            "Orchestrator: greets the user and routes them.",
            &[],
        ),
        agent(
            "Oliver",
            "Organised and upbeat, you manage the user's todos and lists.",
            "Oliver-English",
            "Todo creation and management.",
            &["createTodo", "toggleTodo", "updateTodo", "removeTodo", "filterTodos", "createList", "switchList"],
        ),
        agent(
            "Rajesh",
            "Patient and precise, you help with problems using the app.",
            "Raj-English",
            "Tech support for the app.",
            &[],
        ),
    ]
}

/// The `todos` vibe.
pub fn vibes() -> Vec<Vibe> {
    vec![Vibe {
        id: VibeId::parse("todos").expect("demo vibe id"),
        name: "Todo Assistant".into(),
        description:
            "A voice assistant for todo lists, with a specialist for todos and one for support."
                .into(),
        default_agent: AgentId::parse("Hominio").expect("demo agent id"),
        agents: ["Hominio", "Oliver", "Rajesh"]
            .map(|a| AgentId::parse(a).expect("demo agent id"))
            .into(),
        core_tools: ids(&[HANG_UP_TOOL, SWITCH_AGENT_TOOL]),
        app_tools: ids(&[
            "createTodo",
            "toggleTodo",
            "updateTodo",
            "removeTodo",
            "filterTodos",
            "createList",
            "switchList",
        ]),
        client_tools: Vec::new(),
        call_settings: Default::default(),
    }]
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::domain::vibe::rules::problems;
    use std::collections::HashSet;

    #[test]
    fn the_demo_set_keeps_every_rule() {
        let catalogue: HashSet<String> = core_tools()
            .into_iter()
            .chain(crate::domain::todos::todo_tools())
            .map(|t| t.id.to_string())
            .collect();
        assert_eq!(problems(&agents(), &vibes(), &catalogue), vec![]);
    }
}
