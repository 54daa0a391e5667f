//! An agent's system prompt template: `{{agentName}}`, `{{personality}}`,
//! `{{tools}}` and `{{otherAgents}}` filled in for the vibe it runs in.
//!
//! Placeholders are checked at save: a typo (`{{agentname}}`) would
//! otherwise reach the model verbatim. [`stage`] renders it, with the
//! agent's voice and tools, into the Ultravox stage a call starts with or a
//! switch moves to.

use crate::domain::declaration::ultravox;
use crate::domain::declaration::FunctionDeclaration;
use crate::domain::vibe::{Agent, Vibe};

/// The placeholders a template may use.
pub const PLACEHOLDERS: [&str; 4] = ["agentName", "personality", "tools", "otherAgents"];

/// Every `{{name}}` in `template`, trimmed, in order of appearance.
pub fn placeholders(template: &str) -> Vec<String> {
    let mut found = Vec::new();
    let mut rest = template;
    while let Some(start) = rest.find("{{") {
        let after = &rest[start + 2..];
        let Some(end) = after.find("}}") else {
            break;
        };
        found.push(after[..end].trim().to_owned());
        rest = &after[end + 2..];
    }
    found
}

/// The placeholders in `template` that are not in [`PLACEHOLDERS`].
pub fn unknown_placeholders(template: &str) -> Vec<String> {
    let mut unknown: Vec<String> = placeholders(template)
        .into_iter()
        .filter(|p| !PLACEHOLDERS.contains(&p.as_str()))
        .collect();
    unknown.dedup();
    unknown
}

/// `agent`'s system prompt in its vibe: `tools` are the tools it has there
/// (core ∪ its own) and `others` the vibe's other agents, one per line as
/// `Name — description`.
pub fn render(agent: &Agent, tools: &[String], others: &[&Agent]) -> String {
    let other_agents = others
        .iter()
        .filter(|a| a.id != agent.id)
        .map(|a| format!("{} — {}", a.name, a.description))
        .collect::<Vec<_>>()
        .join("\n");
    let mut out = String::with_capacity(agent.system_prompt_template.len() + 256);
    let mut rest = agent.system_prompt_template.as_str();
    while let Some(start) = rest.find("{{") {
        out.push_str(&rest[..start]);
        let after = &rest[start + 2..];
        let Some(end) = after.find("}}") else {
            out.push_str(&rest[start..]);
            rest = "";
            break;
        };
        match after[..end].trim() {
            "agentName" => out.push_str(&agent.name),
            "personality" => out.push_str(&agent.personality),
            "tools" => out.push_str(&tools.join(", ")),
            "otherAgents" => out.push_str(&other_agents),
            _ => out.push_str(&rest[start..start + 2 + end + 2]),
        }
        rest = &after[end + 2..];
    }
    out.push_str(rest);
    out
}

/// What `agent` gets in `vibe`: its rendered prompt (with `agents`, the
/// vibe's agents, as `{{otherAgents}}`), its voice, and `declarations` (of
/// [`Vibe::tools_of`]) as Ultravox `selectedTools`, `builtin` saying which
/// are Ultravox's own (who runs each: [`Vibe::runner`]). The stage a call
/// starts with and a switch moves to.
pub fn stage(
    vibe: &Vibe,
    agent: &Agent,
    agents: &[&Agent],
    declarations: &[FunctionDeclaration],
    builtin: impl Fn(&str) -> bool,
) -> ultravox::Stage {
    let tools = vibe.tools_of(agent);
    ultravox::Stage::new(
        render(agent, &tools, agents),
        agent.voice_id.clone(),
        declarations
            .iter()
            .map(|d| ultravox::StageTool {
                runner: vibe.runner(&d.name, builtin(&d.name)),
                declaration: d.clone(),
            })
            .collect(),
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::domain::vibe::tests::agent;

    #[test]
    fn every_placeholder_is_filled() {
        let mut oliver = agent("Oliver", &["createTodo"]);
        oliver.system_prompt_template =
            "You are {{agentName}}. {{ personality }}\nTools: {{tools}}\nColleagues:\n{{otherAgents}}".into();
        let mut rajesh = agent("Rajesh", &[]);
        rajesh.description = "Tech support".into();
        let tools = vec!["hangUp".to_owned(), "createTodo".to_owned()];
        assert_eq!(
            render(&oliver, &tools, &[&oliver, &rajesh]),
            "You are Oliver. Oliver is helpful.\nTools: hangUp, createTodo\nColleagues:\nRajesh — Tech support"
        );
    }

    #[test]
    fn unknown_placeholders_are_named_and_left_alone() {
        let template = "Hi {{agentname}} {{tools}} {{ mood }} {{unclosed";
        assert_eq!(unknown_placeholders(template), ["agentname", "mood"]);
        let mut a = agent("A", &[]);
        a.system_prompt_template = template.into();
        assert_eq!(
            render(&a, &[], &[]),
            "Hi {{agentname}}  {{ mood }} {{unclosed"
        );
    }
}
