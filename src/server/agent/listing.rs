//! What a session may call now, and the one `Listing` of its tools, prompt
//! and state that every door renders: REST (`GET …/tools`, each format),
//! MCP (`tools/list`) and the admins' console.
//!
//! The names come from one rule computation ([`tools_now`]: a tutor
//! session's lesson tools, else its workflow's or agent's under the rules
//! in force, then its plugin's active tools), which enforcement,
//! `tools_changed` and watchers use too.

use crate::domain::agent_session::{SessionEvent, WorkflowState};
use crate::domain::plugin::union;
use crate::domain::vibe::AgentView;
use crate::server::agent::rules::Rules;
use crate::server::store::agent_sessions::{self as rows, SessionRow};
use crate::server::{AppState, ServerError};

/// The tools session `session` may call now: a tutor session's lesson
/// tools (`lesson_tools`, fixed when it opened), else the tools of its
/// current workflow or agent under the rules in force; then its plugin's
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
/// `session`: catalogue tools from the rules, plugin tools from its plugin.
pub fn declarations(
    state: &AppState,
    session: &str,
    available: &[String],
) -> Vec<crate::domain::declaration::FunctionDeclaration> {
    let rules = state.rules();
    let plugin = state.plugins.get(session);
    available
        .iter()
        .filter_map(|name| {
            let from_plugin = plugin
                .as_ref()
                .and_then(|p| p.set.tool(name))
                .map(|t| t.definition.declaration());
            from_plugin.or_else(|| rules.tool(name).map(|t| t.declaration()))
        })
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
    match (lesson_tools, &ws.agent) {
        (Some(tools), _) => tools
            .split(',')
            .filter(|t| !t.is_empty())
            .map(str::to_owned)
            .collect(),
        (None, Some(ctx)) => rules.agent_tools(ctx),
        (None, None) => rules.available_at(&ws.current_workflow, ws.workflow_step.as_deref()),
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
/// after new bindings; no session is restarted.
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

/// After bindings, the catalogue, a workflow or the vibes changed: new
/// rules in force at once, and every open session whose tools changed is
/// told (none restarted).
pub async fn rules_changed(state: &AppState) -> Result<(), ServerError> {
    let before = state.reload_rules().await?;
    announce_tools(state, &before).await
}
