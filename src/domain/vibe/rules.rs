//! The rules a set of agents and vibes must keep, checked on every save and
//! import. Each problem names the object, the field and the offending id,
//! so an admin (or an import's author) can fix it without guessing.

use crate::domain::error::FieldError;
use crate::domain::vibe::call_settings;
use crate::domain::vibe::template::{unknown_placeholders, PLACEHOLDERS};
use crate::domain::vibe::{Agent, Vibe, REQUIRED_CORE_TOOLS};
use std::collections::{BTreeSet, HashSet};

/// Longest name, in characters.
pub const MAX_NAME_CHARS: usize = 80;
/// Longest personality or description, in characters.
pub const MAX_TEXT_CHARS: usize = 1000;
/// Longest voice id, in characters.
pub const MAX_VOICE_CHARS: usize = 100;
/// Longest system prompt template, in characters (about 5,000 tokens).
pub const MAX_TEMPLATE_CHARS: usize = 20_000;
/// Most agents one vibe may list.
pub const MAX_AGENTS_PER_VIBE: usize = 20;
/// Most tools one agent or one vibe list may name.
pub const MAX_TOOLS_PER_LIST: usize = 64;

fn text_rule(
    problems: &mut Vec<FieldError>,
    field: String,
    value: &str,
    max: usize,
    required: bool,
) {
    let n = value.trim().chars().count();
    if required && n == 0 {
        problems.push(FieldError::new(field, "is required"));
    } else if value.chars().count() > max {
        problems.push(FieldError::new(
            field,
            format!("must be at most {max} characters"),
        ));
    }
}

/// A name shown in lists: [`text_rule`], then no control characters or
/// direction overrides.
fn name_rule(problems: &mut Vec<FieldError>, field: String, value: &str, max: usize) {
    let before = problems.len();
    text_rule(problems, field.clone(), value, max, true);
    if problems.len() == before && crate::domain::limits::unprintable(value).is_some() {
        problems.push(FieldError::new(
            field,
            crate::domain::limits::PRINTABLE_RULE,
        ));
    }
}

fn duplicates<'a>(ids: impl Iterator<Item = &'a str>) -> Vec<&'a str> {
    let mut seen = BTreeSet::new();
    ids.filter(|id| !seen.insert(*id)).collect()
}

/// Every rule `agents` and `vibes` break together, given the catalogue's
/// tool ids: fields and lengths, template placeholders, every referenced
/// agent and tool exists, the default agent is one of the vibe's, every
/// vibe has the required core tools, and an agent's tools are within
/// app ∪ core tools of every vibe that lists it. Field names are
/// `agents.<id>.<field>` and `vibes.<id>.<field>`. Empty: the set is valid.
pub fn problems(agents: &[Agent], vibes: &[Vibe], catalogue: &HashSet<String>) -> Vec<FieldError> {
    let mut problems = Vec::new();
    for id in duplicates(agents.iter().map(|a| a.id.as_str())) {
        problems.push(FieldError::new(
            format!("agents.{id}.id"),
            format!("agent id \"{id}\" is used twice"),
        ));
    }
    for id in duplicates(vibes.iter().map(|v| v.id.as_str())) {
        problems.push(FieldError::new(
            format!("vibes.{id}.id"),
            format!("vibe id \"{id}\" is used twice"),
        ));
    }
    for agent in agents {
        let at = |field: &str| format!("agents.{}.{field}", agent.id);
        name_rule(&mut problems, at("name"), &agent.name, MAX_NAME_CHARS);
        text_rule(
            &mut problems,
            at("personality"),
            &agent.personality,
            MAX_TEXT_CHARS,
            false,
        );
        text_rule(
            &mut problems,
            at("description"),
            &agent.description,
            MAX_TEXT_CHARS,
            false,
        );
        text_rule(
            &mut problems,
            at("voiceId"),
            &agent.voice_id,
            MAX_VOICE_CHARS,
            false,
        );
        text_rule(
            &mut problems,
            at("systemPromptTemplate"),
            &agent.system_prompt_template,
            MAX_TEMPLATE_CHARS,
            true,
        );
        let unknown = unknown_placeholders(&agent.system_prompt_template);
        if !unknown.is_empty() {
            problems.push(FieldError::new(
                at("systemPromptTemplate"),
                format!(
                    "unknown placeholder{} {}; use {}",
                    if unknown.len() == 1 { "" } else { "s" },
                    unknown
                        .iter()
                        .map(|p| format!("{{{{{p}}}}}"))
                        .collect::<Vec<_>>()
                        .join(", "),
                    PLACEHOLDERS.map(|p| format!("{{{{{p}}}}}")).join(", ")
                ),
            ));
        }
        if agent.tools.len() > MAX_TOOLS_PER_LIST {
            problems.push(FieldError::new(
                at("tools"),
                format!("at most {MAX_TOOLS_PER_LIST} tools"),
            ));
        }
        for (i, tool) in agent.tools.iter().enumerate() {
            if !catalogue.contains(tool.as_str()) {
                problems.push(FieldError::new(
                    format!("agents.{}.tools[{i}]", agent.id),
                    format!("tool \"{tool}\" is not in the catalogue"),
                ));
            }
        }
        for id in duplicates(agent.tools.iter().map(|t| t.as_str())) {
            problems.push(FieldError::new(
                at("tools"),
                format!("tool \"{id}\" is listed twice"),
            ));
        }
    }
    for vibe in vibes {
        let at = |field: &str| format!("vibes.{}.{field}", vibe.id);
        name_rule(&mut problems, at("name"), &vibe.name, MAX_NAME_CHARS);
        text_rule(
            &mut problems,
            at("description"),
            &vibe.description,
            MAX_TEXT_CHARS,
            false,
        );
        if vibe.agents.is_empty() {
            problems.push(FieldError::new(at("agents"), "needs at least one agent"));
        } else if vibe.agents.len() > MAX_AGENTS_PER_VIBE {
            problems.push(FieldError::new(
                at("agents"),
                format!("at most {MAX_AGENTS_PER_VIBE} agents"),
            ));
        }
        for (i, id) in vibe.agents.iter().enumerate() {
            if !agents.iter().any(|a| a.id == *id) {
                problems.push(FieldError::new(
                    format!("vibes.{}.agents[{i}]", vibe.id),
                    format!("agent \"{id}\" does not exist"),
                ));
            }
        }
        for id in duplicates(vibe.agents.iter().map(|a| a.as_str())) {
            problems.push(FieldError::new(
                at("agents"),
                format!("agent \"{id}\" is listed twice"),
            ));
        }
        if !vibe.agents.contains(&vibe.default_agent) {
            problems.push(FieldError::new(
                at("defaultAgent"),
                format!(
                    "\"{}\" is not one of the vibe's agents ({})",
                    vibe.default_agent,
                    vibe.agents
                        .iter()
                        .map(|a| a.as_str())
                        .collect::<Vec<_>>()
                        .join(", ")
                ),
            ));
        }
        for (field, list) in [
            ("coreTools", &vibe.core_tools),
            ("appTools", &vibe.app_tools),
        ] {
            if list.len() > MAX_TOOLS_PER_LIST {
                problems.push(FieldError::new(
                    at(field),
                    format!("at most {MAX_TOOLS_PER_LIST} tools"),
                ));
            }
            for (i, tool) in list.iter().enumerate() {
                if !catalogue.contains(tool.as_str()) {
                    problems.push(FieldError::new(
                        format!("vibes.{}.{field}[{i}]", vibe.id),
                        format!("tool \"{tool}\" is not in the catalogue"),
                    ));
                }
            }
        }
        for (i, tool) in vibe.client_tools.iter().enumerate() {
            if !vibe.core_tools.contains(tool) && !vibe.app_tools.contains(tool) {
                problems.push(FieldError::new(
                    format!("vibes.{}.clientTools[{i}]", vibe.id),
                    format!("tool \"{tool}\" is not one of the vibe's core or app tools"),
                ));
            }
        }
        for id in duplicates(vibe.client_tools.iter().map(|t| t.as_str())) {
            problems.push(FieldError::new(
                at("clientTools"),
                format!("tool \"{id}\" is listed twice"),
            ));
        }
        problems.extend(call_settings::problems(
            &vibe.call_settings,
            &at("callSettings"),
        ));
        for required in REQUIRED_CORE_TOOLS {
            if !vibe.core_tools.iter().any(|t| t.as_str() == required) {
                problems.push(FieldError::new(
                    at("coreTools"),
                    format!(
                        "must include \"{required}\" (every vibe's agents can switch and hang up)"
                    ),
                ));
            }
        }
        for agent in agents.iter().filter(|a| vibe.agents.contains(&a.id)) {
            for (i, tool) in agent.tools.iter().enumerate() {
                let allowed = vibe.app_tools.contains(tool) || vibe.core_tools.contains(tool);
                if !allowed && catalogue.contains(tool.as_str()) {
                    problems.push(FieldError::new(
                        format!("agents.{}.tools[{i}]", agent.id),
                        format!(
                            "tool \"{tool}\" is not one of vibe \"{}\"'s app or core tools",
                            vibe.id
                        ),
                    ));
                }
            }
        }
    }
    problems
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::domain::ids::AgentId;
    use crate::domain::ids::ToolId;
    use crate::domain::vibe::tests::{agent, vibe};

    fn catalogue() -> HashSet<String> {
        [
            "hangUp",
            "switchAgent",
            "createTodo",
            "toggleTodo",
            "get_server_time",
        ]
        .map(str::to_owned)
        .into()
    }

    fn fields(problems: &[FieldError]) -> Vec<(&str, &str)> {
        problems
            .iter()
            .map(|p| (p.field.as_str(), p.rule.as_str()))
            .collect()
    }

    #[test]
    fn the_demo_shape_is_valid() {
        let agents = [
            agent("Hominio", &[]),
            agent("Oliver", &["createTodo", "toggleTodo"]),
        ];
        let vibes = [vibe(
            &["Hominio", "Oliver"],
            &["hangUp", "switchAgent"],
            &["createTodo", "toggleTodo"],
        )];
        assert_eq!(problems(&agents, &vibes, &catalogue()), vec![]);
    }

    #[test]
    fn every_refusal_names_the_object_field_and_id() {
        let mut oliver = agent(
            "Oliver",
            &["createTodo", "nope", "get_server_time", "createTodo"],
        );
        oliver.system_prompt_template = "Hi {{agentname}}".into();
        oliver.name = " ".into();
        let mut v = vibe(
            &["Oliver", "Ghost"],
            &["hangUp", "missing"],
            &["createTodo"],
        );
        v.default_agent = AgentId::parse("Rajesh").unwrap();
        let got = problems(&[oliver], &[v], &catalogue());
        assert_eq!(
            fields(&got),
            [
                ("agents.Oliver.name", "is required"),
                (
                    "agents.Oliver.systemPromptTemplate",
                    "unknown placeholder {{agentname}}; use {{agentName}}, {{personality}}, {{tools}}, {{otherAgents}}"
                ),
                ("agents.Oliver.tools[1]", "tool \"nope\" is not in the catalogue"),
                ("agents.Oliver.tools", "tool \"createTodo\" is listed twice"),
                ("vibes.todos.agents[1]", "agent \"Ghost\" does not exist"),
                ("vibes.todos.defaultAgent", "\"Rajesh\" is not one of the vibe's agents (Oliver, Ghost)"),
                ("vibes.todos.coreTools[1]", "tool \"missing\" is not in the catalogue"),
                (
                    "vibes.todos.coreTools",
                    "must include \"switchAgent\" (every vibe's agents can switch and hang up)"
                ),
                (
                    "agents.Oliver.tools[2]",
                    "tool \"get_server_time\" is not one of vibe \"todos\"'s app or core tools"
                ),
            ]
        );
    }

    #[test]
    fn ids_used_twice_and_empty_vibes_are_refused() {
        let a = agent("A", &[]);
        let mut v = vibe(&["A"], &["hangUp", "switchAgent"], &[]);
        v.agents.clear();
        let got = problems(&[a.clone(), a], &[v.clone(), v], &catalogue());
        let names: Vec<&str> = got.iter().map(|p| p.field.as_str()).collect();
        assert!(names.contains(&"agents.A.id"));
        assert!(names.contains(&"vibes.todos.id"));
        assert!(names.contains(&"vibes.todos.agents"));
        let _ = ToolId::parse("x");
    }

    #[test]
    fn client_tools_are_the_vibes_own_and_call_settings_are_checked() {
        let agents = [agent("Oliver", &["createTodo"])];
        let mut v = vibe(&["Oliver"], &["hangUp", "switchAgent"], &["createTodo"]);
        v.client_tools = ["createTodo", "toggleTodo", "createTodo"]
            .map(|t| ToolId::parse(t).unwrap())
            .into();
        v.call_settings.temperature = Some(call_settings::Temperature(2.0));
        let got = problems(&agents, &[v], &catalogue());
        assert_eq!(
            fields(&got),
            [
                (
                    "vibes.todos.clientTools[1]",
                    "tool \"toggleTodo\" is not one of the vibe's core or app tools"
                ),
                (
                    "vibes.todos.clientTools",
                    "tool \"createTodo\" is listed twice"
                ),
                (
                    "vibes.todos.callSettings.temperature",
                    "must be between 0 and 1"
                ),
            ]
        );
    }
}
