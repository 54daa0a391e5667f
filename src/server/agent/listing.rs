//! What a session may call now, and the one `Listing` of its tools, prompt
//! and state that every door renders: REST (`GET …/tools`, each format),
//! MCP (`tools/list`) and the admins' console.
//!
//! The names come from one rule computation ([`tools_now`]: a tutor
//! session's lesson tools, else its workflow's or agent's under the rules
//! in force, less the imported tools their MCP servers no longer offer,
//! then its plugin's active tools), which enforcement, `tools_changed` and
//! watchers use too.

use crate::domain::agent_runner::workflow_prompt;
use crate::domain::agent_session::SessionEvent;
use crate::domain::catalogue::CatalogueTool;
use crate::domain::declaration::export::export_with;
use crate::domain::declaration::ultravox::PreparedStage;
use crate::domain::declaration::{DeclarationFormat, FunctionDeclaration};
use crate::domain::lesson::optimise::OptimiseMode;
use crate::domain::lesson::prompt::{build, BuiltPrompt};
use crate::domain::lesson::LessonDraft;
use crate::domain::plugin::union;
use crate::domain::student::StudentContext;
use crate::domain::vibe::AgentView;
use crate::domain::workflow_state::{AgentContext, WorkflowState};
use crate::server::agent::rules::Rules;
use crate::server::store::agent_sessions::{self as rows, SessionRow};
use crate::server::store::{lessons, students};
use crate::server::{AppState, ServerError};
use serde_json::{json, Value};
use std::sync::Arc;

/// A session's tools, prompt and state now, built in one place from the
/// one rule computation; REST, MCP and the console only render it, so they
/// cannot disagree.
pub struct Listing {
    /// The session's state.
    pub state: WorkflowState,
    /// The names it may call now ([`tools_now`]), in order.
    pub available: Vec<String>,
    /// Their declarations, in the same order (a name with none, such as a
    /// catalogue tool deleted since, is left out): a plugin tool's from its
    /// plugin, every other from the catalogue in force, which is also what
    /// a call's arguments are checked against.
    pub tools: Vec<Listed>,
    /// What the session's model is told besides its tools.
    pub prompt: Option<Prompt>,
    /// The rules the listing was built under.
    rules: Arc<Rules>,
}

/// One tool of a [`Listing`].
pub struct Listed {
    /// What the model is told about it.
    pub declaration: FunctionDeclaration,
    /// Whether it is the session's plugin's (else the catalogue's).
    pub from_plugin: bool,
}

/// A session's prompt, when it has one of its own.
pub enum Prompt {
    /// A tutor session: the lesson's prompt (as the prompt endpoint builds
    /// it, normal optimisation), for the student it runs for.
    Lesson {
        /// The lesson.
        lesson_id: i64,
        /// Who the session is for.
        student: Option<String>,
        /// The lesson's system prompt.
        system_prompt: String,
    },
    /// A workflow session: the workflow, then the step it is in (that
    /// step's own instructions), as the agent runner gives its model.
    Workflow {
        /// The workflow step the session is in, if its workflow has steps.
        step: Option<crate::domain::workflow_def::Step>,
        /// The composed prompt (`domain::agent_runner::workflow_prompt`).
        system_prompt: String,
    },
    /// A vibe session: its agent's stage (prompt, voice, Ultravox tools).
    Agent {
        /// The vibe and agent.
        agent: AgentContext,
        /// The agent's stage.
        stage: Arc<PreparedStage>,
    },
}

/// The prompt a tutor session's model gets: the lesson as the prompt
/// endpoint builds it (normal optimisation), with what the session knows
/// of its student, if it runs for one.
pub fn lesson_prompt(draft: &LessonDraft, student: Option<&StudentContext>) -> BuiltPrompt {
    build(&draft.prompt_input_for(Some(OptimiseMode::Normal), student))
}

impl Listing {
    /// Session `row`'s listing now.
    pub async fn of(state: &AppState, row: &SessionRow) -> Result<Self, ServerError> {
        let ws = row.workflow_state()?;
        let rules = state.rules();
        let available = tools_now(state, &row.id, row.lesson_tools.as_deref(), &ws);
        let tools = listed(state, &rules, &row.id, &available);
        let prompt = match (row.lesson_id, &ws.agent) {
            (Some(lesson_id), _) => {
                let lesson = lessons::get_any(&state.db, lesson_id).await?;
                let context = match row.student_id {
                    Some(_) => students::context_of(&state.db, &row.id).await?,
                    None => None,
                };
                Some(Prompt::Lesson {
                    lesson_id,
                    student: row.student.clone(),
                    system_prompt: lesson_prompt(&lesson.draft, context.as_ref()).system_prompt,
                })
            }
            (None, Some(ctx)) => rules.stage(ctx).map(|stage| Prompt::Agent {
                agent: ctx.clone(),
                stage,
            }),
            (None, None) => Some(workflow_prompt_of(&rules, &ws)),
        };
        Ok(Self {
            state: ws,
            available,
            tools,
            prompt,
            rules,
        })
    }

    /// The system prompt the session's model gets: the lesson's, the
    /// agent's stage's, or the workflow's with its current step's.
    pub fn system_prompt(&self) -> Option<&str> {
        match self.prompt.as_ref()? {
            Prompt::Lesson { system_prompt, .. } | Prompt::Workflow { system_prompt, .. } => {
                Some(system_prompt)
            }
            Prompt::Agent { stage, .. } => Some(&stage.stage.system_prompt),
        }
    }

    /// The declarations, in order.
    pub fn declarations(&self) -> impl Iterator<Item = &FunctionDeclaration> {
        self.tools.iter().map(|t| &t.declaration)
    }

    /// `GET /api/sessions/{id}/tools?format=…`: the workflow, the names,
    /// the declarations in `format`'s shape and the state; a tutor
    /// session's lesson, student and prompt; a vibe session's agent,
    /// prompt and voice (and for Ultravox its `selectedTools` at the top,
    /// as a call takes them).
    pub fn rest(&self, format: DeclarationFormat) -> Value {
        let declarations: Vec<&FunctionDeclaration> = self.declarations().collect();
        let mut body = json!({
            "workflow": self.state.current_workflow,
            "available": self.available,
            "tools": export_with(&declarations, format, |t| self.rules.is_ultravox_builtin(t)),
            "state": self.state,
        });
        match &self.prompt {
            Some(Prompt::Lesson {
                lesson_id,
                student,
                system_prompt,
            }) => {
                body["lessonId"] = json!(lesson_id);
                body["student"] = json!(student);
                body["systemPrompt"] = json!(system_prompt);
            }
            Some(Prompt::Agent { agent, stage }) => {
                body["agent"] = json!(agent);
                body["systemPrompt"] = json!(stage.stage.system_prompt);
                body["voice"] = json!(stage.stage.voice);
                if format == DeclarationFormat::Ultravox {
                    body["selectedTools"] = json!(stage.stage.selected_tools);
                }
            }
            Some(Prompt::Workflow {
                step,
                system_prompt,
            }) => {
                body["systemPrompt"] = json!(system_prompt);
                body["step"] = json!(step
                    .as_ref()
                    .map(|s| json!({"uuid": s.uuid, "name": s.name})));
            }
            None => {}
        }
        body
    }

    /// The admins' console: the listed catalogue tools first, as listed
    /// (callable now), then the rest of `catalogue` (to try a refusal);
    /// the page adds the plugin's tools as they come and go.
    pub fn console(&self, catalogue: Vec<CatalogueTool>) -> Vec<CatalogueTool> {
        let mut tools: Vec<CatalogueTool> = self
            .tools
            .iter()
            .filter(|t| !t.from_plugin)
            .filter_map(|t| {
                let mut tool = self.rules.tool(&t.declaration.name)?.clone();
                tool.description.clone_from(&t.declaration.description);
                tool.parameters.clone_from(&t.declaration.parameters);
                Some(tool)
            })
            .collect();
        let listed: Vec<String> = tools.iter().map(|t| t.id.to_string()).collect();
        tools.extend(
            catalogue
                .into_iter()
                .filter(|t| !listed.iter().any(|l| l == t.id.as_str())),
        );
        tools
    }
}

/// A workflow session's prompt: the workflow, then its current step.
fn workflow_prompt_of(rules: &Rules, ws: &WorkflowState) -> Prompt {
    let id = ws.current_workflow.as_str();
    let name = rules
        .workflows()
        .iter()
        .find(|w| w.id.as_str() == id)
        .map_or(id, |w| w.name.as_str());
    let steps = rules
        .definition(id)
        .map(|d| d.steps.as_slice())
        .unwrap_or_default();
    let current = ws.workflow_step.as_deref();
    Prompt::Workflow {
        step: current.and_then(|c| steps.iter().find(|s| s.uuid == c).cloned()),
        system_prompt: workflow_prompt(id, name, steps, current),
    }
}

/// The declarations of `available` for session `session`: a plugin tool's
/// from its plugin, every other from the catalogue in `rules`.
fn listed(state: &AppState, rules: &Rules, session: &str, available: &[String]) -> Vec<Listed> {
    let plugin = state.plugins.get(session);
    available
        .iter()
        .filter_map(|name| {
            let from_plugin = plugin
                .as_ref()
                .and_then(|p| p.set.tool(name))
                .map(|t| t.definition.declaration());
            match from_plugin {
                Some(declaration) => Some(Listed {
                    declaration,
                    from_plugin: true,
                }),
                None => rules.tool(name).map(|t| Listed {
                    declaration: t.declaration(),
                    from_plugin: false,
                }),
            }
        })
        .collect()
}

/// The tools session `session` may call now: a tutor session's lesson
/// tools (`lesson_tools`, fixed when it opened), else the tools of its
/// current workflow or agent under the rules in force, less those withheld
/// (imported tools their MCP server no longer offers); then its plugin's
/// active tools. The one answer that listing, enforcement, `toolsChanged`
/// and watchers all use.
pub fn tools_now(
    state: &AppState,
    session: &str,
    lesson_tools: Option<&str>,
    ws: &WorkflowState,
) -> Vec<String> {
    with_plugin(
        state,
        session,
        tools_under(&state.rules(), lesson_tools, ws),
    )
}

/// The declarations of `available` (a [`tools_now`] answer) for session
/// `session`, as a [`Listing`] has them.
pub fn declarations(
    state: &AppState,
    session: &str,
    available: &[String],
) -> Vec<FunctionDeclaration> {
    listed(state, &state.rules(), session, available)
        .into_iter()
        .map(|t| t.declaration)
        .collect()
}

/// `base` and then `session`'s active plugin tools.
fn with_plugin(state: &AppState, session: &str, base: Vec<String>) -> Vec<String> {
    match state.plugins.get(session) {
        Some(loaded) => union(base, Some(&loaded.set)),
        None => base,
    }
}

/// [`tools_now`] under `rules` (the rules in force, or the ones just
/// replaced when telling sessions what changed).
pub(super) fn tools_under(
    rules: &Rules,
    lesson_tools: Option<&str>,
    ws: &WorkflowState,
) -> Vec<String> {
    rules.offered(bound_under(rules, lesson_tools, ws))
}

/// The tools a session would have under `rules` but that are withheld:
/// a call of one is refused saying why (`domain::decide`), not as a tool
/// that is not available where the session is.
pub(super) fn withheld_under(
    rules: &Rules,
    lesson_tools: Option<&str>,
    ws: &WorkflowState,
) -> Vec<String> {
    let withheld = rules.withheld_tools();
    if withheld.is_empty() {
        return Vec::new();
    }
    let mut tools = bound_under(rules, lesson_tools, ws);
    tools.retain(|t| withheld.contains_key(t));
    tools
}

/// [`tools_under`] with the withheld tools.
fn bound_under(rules: &Rules, lesson_tools: Option<&str>, ws: &WorkflowState) -> Vec<String> {
    match (lesson_tools, &ws.agent) {
        (Some(tools), _) => tools
            .split(',')
            .filter(|t| !t.is_empty())
            .map(str::to_owned)
            .collect(),
        (None, Some(ctx)) => rules.agent_bound(ctx),
        (None, None) => rules.bound_at(&ws.current_workflow, ws.workflow_step.as_deref()),
    }
}

/// Who `ws`'s session is talking to, for watchers (a vibe session only).
pub fn agent_view(state: &AppState, ws: &WorkflowState) -> Option<AgentView> {
    let ctx = ws.agent.as_ref()?;
    let rules = state.rules();
    Some(AgentView::of(
        rules.vibe(&ctx.vibe)?,
        rules.agent(&ctx.agent)?,
    ))
}

/// Records that `row`'s backend has been told `tools` (it fetched them),
/// so its next call does not report them as changed; no write when it
/// already knew them.
pub async fn tools_told(
    state: &AppState,
    row: &SessionRow,
    tools: &[String],
) -> Result<(), ServerError> {
    let told = tools.join(",");
    if row.tools_seen.as_deref() == Some(told.as_str()) {
        return Ok(());
    }
    rows::set_tools_seen(&state.db, &row.id, &told).await
}
/// Re-announces the available tools of every open session whose set changed
/// after new rules (bindings, catalogue, withheld tools); no session is
/// restarted.
async fn announce_tools(state: &AppState, before: &Rules) -> Result<(), ServerError> {
    for row in rows::open(&state.db).await? {
        let ws = row.workflow_state()?;
        let now_tools = tools_now(state, &row.id, row.lesson_tools.as_deref(), &ws);
        let then = with_plugin(
            state,
            &row.id,
            tools_under(before, row.lesson_tools.as_deref(), &ws),
        );
        if now_tools != then {
            state
                .hub
                .publish(&row.id, &SessionEvent::ToolsChanged { tools: now_tools });
        }
    }
    Ok(())
}

/// After bindings, the catalogue, a workflow, the vibes or which imported
/// tools are withheld changed: new rules in force at once, and every open
/// session whose tools changed is told (none restarted).
pub async fn rules_changed(state: &AppState) -> Result<(), ServerError> {
    let before = state.reload_rules().await?;
    announce_tools(state, &before).await
}
