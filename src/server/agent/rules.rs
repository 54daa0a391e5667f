//! The rules in force: the current bindings indexed for O(1) checks, and
//! every catalogue tool's compiled argument schema.
//!
//! Built once per bindings or catalogue change (or a change of which
//! imported tools their MCP servers still offer) and swapped atomically, so
//! a tool call never waits on the database to learn what is allowed.

use crate::domain::bindings::{Availability, ToolBindings};
use crate::domain::catalogue::{CatalogueTool, Workflow, WORKFLOW_SWITCH_TOOL};
use crate::domain::decide::{Rulebook, Withheld};
use crate::domain::declaration::ultravox::PreparedStage;
use crate::domain::declaration::FunctionDeclaration;
use crate::domain::vibe::template::stage;
use crate::domain::vibe::{Agent, Vibe};
use crate::domain::workflow_def::Definition;
use crate::domain::workflow_state::AgentContext;
use crate::server::platform::db::Db;
use crate::server::store::bindings as store;
use crate::server::store::mcp_servers::{links, LinkRow};
use crate::server::store::vibes as vibes_store;
use crate::server::ServerError;
use serde_json::{json, Value};
use std::collections::HashMap;
use std::sync::Arc;

/// Bindings, availability index and argument validators.
pub struct Rules {
    /// The current bindings document.
    pub bindings: ToolBindings,
    availability: Availability,
    tools: HashMap<String, (CatalogueTool, Option<jsonschema::Validator>)>,
    workflows: Vec<Workflow>,
    agents: HashMap<String, Agent>,
    vibes: Vec<Vibe>,
    /// Each (vibe, agent)'s stage, prepared once per change.
    stages: HashMap<(String, String), Arc<PreparedStage>>,
    /// Each workflow's definition (start trigger, steps), when saved.
    definitions: HashMap<String, Definition>,
    /// The imported tools no session is offered now, and why.
    withheld: HashMap<String, Withheld>,
}

impl Rules {
    /// No rules yet (before the first load): nothing is allowed.
    pub fn empty() -> Self {
        Self {
            bindings: ToolBindings::default(),
            availability: Availability::default(),
            tools: HashMap::new(),
            workflows: Vec::new(),
            agents: HashMap::new(),
            vibes: Vec::new(),
            stages: HashMap::new(),
            definitions: HashMap::new(),
            withheld: HashMap::new(),
        }
    }

    /// Loads the current bindings, catalogue and workflows, compiling the
    /// schemas on a blocking thread (once per change, off the request path).
    pub async fn load(db: &Db) -> Result<Self, ServerError> {
        let bindings = store::current(db)
            .await?
            .map(|v| v.bindings)
            .unwrap_or_default();
        let tools = store::tools(db).await?;
        let workflows = store::workflows(db).await?;
        let agents = vibes_store::agents(db)
            .await?
            .into_iter()
            .map(|a| a.value)
            .collect();
        let vibes = vibes_store::vibes(db)
            .await?
            .into_iter()
            .map(|v| v.value)
            .collect();
        let definitions = crate::server::store::workflow_defs::all(db).await?;
        let withheld = withheld_of(&links(db).await?);
        Ok(tokio::task::spawn_blocking(move || {
            Self::new(bindings, tools, workflows)
                .with_withheld(withheld)
                .with_vibes(agents, vibes)
                .with_definitions(definitions)
        })
        .await?)
    }

    /// Indexes the given bindings, tools (compiling their schemas) and
    /// workflows. The workflow switch's `workflowId` is narrowed to the
    /// workflows that exist, in what the model is told and in what a call
    /// is checked against.
    pub fn new(
        bindings: ToolBindings,
        tools: Vec<CatalogueTool>,
        workflows: Vec<Workflow>,
    ) -> Self {
        let tools = tools
            .into_iter()
            .map(|mut t| {
                if t.id.as_str() == WORKFLOW_SWITCH_TOOL {
                    narrow_to_workflows(&mut t, &workflows);
                }
                let validator = compile_schema(&t.parameters).ok();
                (t.id.to_string(), (t, validator))
            })
            .collect();
        Self {
            availability: Availability::new(&bindings),
            bindings,
            tools,
            workflows,
            agents: HashMap::new(),
            vibes: Vec::new(),
            stages: HashMap::new(),
            definitions: HashMap::new(),
            withheld: HashMap::new(),
        }
    }

    /// These rules withholding `withheld` from every session (call it
    /// before [`Rules::with_vibes`], whose stages leave them out).
    pub fn with_withheld(mut self, withheld: HashMap<String, Withheld>) -> Self {
        self.withheld = withheld;
        self
    }

    /// The imported tools no session is offered now, and why.
    pub fn withheld_tools(&self) -> &HashMap<String, Withheld> {
        &self.withheld
    }

    /// `tools` without the withheld ones, in the same order.
    pub fn offered(&self, mut tools: Vec<String>) -> Vec<String> {
        if !self.withheld.is_empty() {
            tools.retain(|t| !self.withheld.contains_key(t));
        }
        tools
    }

    /// These rules with `agents` and `vibes` (already checked together).
    pub fn with_vibes(mut self, agents: Vec<Agent>, vibes: Vec<Vibe>) -> Self {
        self.agents = agents.into_iter().map(|a| (a.id.to_string(), a)).collect();
        self.vibes = vibes;
        let mut stages = HashMap::new();
        for vibe in &self.vibes {
            let agents = self.agents_of(vibe);
            for agent in &agents {
                let declarations = self.declarations(&self.offered(vibe.tools_of(agent)));
                let prepared = stage(vibe, agent, &agents, &declarations, |t| {
                    self.is_ultravox_builtin(t)
                });
                stages.insert(
                    (vibe.id.to_string(), agent.id.to_string()),
                    Arc::new(PreparedStage::new(prepared)),
                );
            }
        }
        self.stages = stages;
        self
    }

    /// Vibe `id`, if it exists.
    pub fn vibe(&self, id: &str) -> Option<&Vibe> {
        self.vibes.iter().find(|v| v.id.as_str() == id)
    }

    /// Every vibe, in menu order.
    pub fn vibes(&self) -> &[Vibe] {
        &self.vibes
    }

    /// Agent `id`, if it exists.
    pub fn agent(&self, id: &str) -> Option<&Agent> {
        self.agents.get(id)
    }

    /// `vibe`'s agents, in its order.
    pub fn agents_of(&self, vibe: &Vibe) -> Vec<&Agent> {
        vibe.agents
            .iter()
            .filter_map(|a| self.agent(a.as_str()))
            .collect()
    }

    /// The tools a session talking to `ctx`'s agent may call: its vibe's
    /// core tools and the agent's own, but those withheld; none if either
    /// is gone.
    pub fn agent_tools(&self, ctx: &AgentContext) -> Vec<String> {
        self.offered(self.agent_bound(ctx))
    }

    /// [`Rules::agent_tools`] with the withheld ones.
    pub fn agent_bound(&self, ctx: &AgentContext) -> Vec<String> {
        match (self.vibe(&ctx.vibe), self.agent(&ctx.agent)) {
            (Some(vibe), Some(agent)) if vibe.has_agent(&ctx.agent) => vibe.tools_of(agent),
            _ => Vec::new(),
        }
    }

    /// Whether `tool` is one of Ultravox's own tools.
    pub fn is_ultravox_builtin(&self, tool: &str) -> bool {
        self.tool(tool).is_some_and(|t| t.ultravox_builtin)
    }

    /// The stage `ctx`'s agent gets (prompt, voice, `selectedTools`),
    /// prepared when these rules were built.
    pub fn stage(&self, ctx: &AgentContext) -> Option<Arc<PreparedStage>> {
        self.stages
            .get(&(ctx.vibe.clone(), ctx.agent.clone()))
            .cloned()
    }

    /// Whether `workflow` exists.
    pub fn has_workflow(&self, workflow: &str) -> bool {
        self.workflows.iter().any(|w| w.id.as_str() == workflow)
    }

    /// The workflows, in catalogue order.
    pub fn workflows(&self) -> &[Workflow] {
        &self.workflows
    }

    /// The workflow ids, in catalogue order, for messages that list them.
    pub fn workflow_ids(&self) -> Vec<&str> {
        self.workflows.iter().map(|w| w.id.as_str()).collect()
    }

    /// The tools available in `workflow`, in stable order.
    pub fn available(&self, workflow: &str) -> Vec<String> {
        self.bindings.available_in(workflow)
    }

    /// Whether `tool` may be called in `workflow`.
    pub fn allows(&self, workflow: &str, tool: &str) -> bool {
        self.availability.allows(workflow, tool)
    }

    /// The catalogue entry for `tool`.
    pub fn tool(&self, tool: &str) -> Option<&CatalogueTool> {
        self.tools.get(tool).map(|(t, _)| t)
    }

    /// The tools whose effects can set `check`, in id order: what a refusal
    /// for a missing check tells the model to call first.
    pub fn setters_of(&self, check: &str) -> Vec<&str> {
        let mut ids: Vec<&str> = self
            .tools
            .values()
            .filter(|(t, _)| t.effects.iter().any(|e| e.checks().any(|c| c == check)))
            .map(|(t, _)| t.id.as_str())
            .collect();
        ids.sort_unstable();
        ids
    }

    /// Whether anything declares `check`: a catalogue tool's effects or
    /// requirements, a label in the bindings, or a lesson (its tasks' and
    /// review items' checks, which only its tutor tools set). A session may hold only
    /// [`SESSION_OWN_CHECKS_MAX`](crate::domain::limits::SESSION_OWN_CHECKS_MAX)
    /// checks that nothing declares.
    pub fn declares_check(&self, check: &str) -> bool {
        crate::domain::session_checks::is_lesson_check(check)
            || self.bindings.labels.checks.contains_key(check)
            || self.tools.values().any(|(t, _)| {
                t.requires.iter().any(|r| r == check)
                    || t.effects.iter().any(|e| e.checks().any(|c| c == check))
            })
    }

    /// Declarations of `ids` that exist in the catalogue.
    pub fn declarations(&self, ids: &[String]) -> Vec<FunctionDeclaration> {
        ids.iter()
            .filter_map(|id| self.tool(id))
            .map(CatalogueTool::declaration)
            .collect()
    }

    /// Checks `arguments` against `tool`'s schema; the error names the field
    /// and the rule it broke.
    pub fn check_arguments(&self, tool: &str, arguments: &Value) -> Result<(), String> {
        match self.tools.get(tool) {
            Some((_, Some(validator))) => check_with(validator, arguments),
            _ => Ok(()),
        }
    }
}

/// The rules in force, as `decide` reads them.
impl Rulebook for Rules {
    fn requires(&self, tool: &str) -> Option<&[String]> {
        self.tool(tool).map(|t| t.requires.as_slice())
    }
    fn has_workflow(&self, workflow: &str) -> bool {
        Rules::has_workflow(self, workflow)
    }
    fn workflow_ids(&self) -> Vec<&str> {
        Rules::workflow_ids(self)
    }
    fn check_arguments(&self, tool: &str, arguments: &Value) -> Result<(), String> {
        Rules::check_arguments(self, tool, arguments)
    }
    fn setters_of(&self, check: &str) -> Vec<&str> {
        Rules::setters_of(self, check)
    }
    fn withheld(&self, tool: &str) -> Option<&Withheld> {
        self.withheld.get(tool)
    }
}

/// The imported tools `links` withhold, and why: one whose server was
/// removed or no longer lists it.
pub fn withheld_of(links: &[LinkRow]) -> HashMap<String, Withheld> {
    links
        .iter()
        .filter_map(|l| {
            let why = Withheld::of(l.server_id.is_some(), &l.upstream_name, l.available)?;
            Some((l.tool_id.clone(), why))
        })
        .collect()
}

/// Gives the workflow switch's `workflowId` an `enum` of the workflow ids
/// and lists them with their names in its description, so a model picks a
/// real one instead of guessing.
fn narrow_to_workflows(tool: &mut CatalogueTool, workflows: &[Workflow]) {
    let ids: Vec<&str> = workflows.iter().map(|w| w.id.as_str()).collect();
    let names: Vec<String> = workflows
        .iter()
        .map(|w| format!("{} ({})", w.id, w.name))
        .collect();
    if let Some(property) = tool
        .parameters
        .pointer_mut("/properties/workflowId")
        .and_then(Value::as_object_mut)
    {
        property.insert("enum".into(), json!(ids));
        property.insert(
            "description".into(),
            json!(format!("Id of the workflow to enter: {}", names.join(", "))),
        );
    }
}

mod pattern;
mod plain;
mod schema;
mod steps;
pub use pattern::SharedPattern;
pub use plain::check_plain_text;
pub use schema::{check_plain, check_with, compile_schema, is_plain};

#[cfg(test)]
mod tests;
