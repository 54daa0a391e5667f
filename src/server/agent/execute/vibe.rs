//! A vibe session's own tools: moving to another agent of the vibe
//! (`switchAgent`) and ending the call (`hangUp`).

use super::{arg, plain, Ctx, Family, Outcome};
use crate::domain::declaration::ultravox::{HttpTarget, CREDENTIAL_PLACEHOLDER};
use crate::domain::limits::excerpt;
use crate::domain::vibe::{find_agent, HANG_UP_TOOL, SWITCH_AGENT_TOOL};
use crate::domain::workflow_state::{AgentContext, WorkflowState};
use crate::server::AppState;
use futures_util::future::BoxFuture;
use serde_json::{json, Value};

/// The vibe tools, run for vibe sessions.
pub const FAMILY: Family = Family {
    name: "vibe",
    tools: || vec![SWITCH_AGENT_TOOL, HANG_UP_TOOL],
    runs_for: |kind| kind.vibe,
    claims: super::by_id_only,
    run,
};

fn run(cx: Ctx<'_>) -> BoxFuture<'_, Outcome> {
    Box::pin(async move {
        Ok(plain(if cx.tool == SWITCH_AGENT_TOOL {
            switch_agent(cx.state, &cx.row.id, cx.ws, cx.arguments)
        } else {
            Ok(json!({"status": "ended", "message": "The call is ending; say goodbye."}))
        }))
    })
}

/// `switchAgent {"agentName"}`: moves the session to the vibe's agent of
/// that name or id (any case) and answers in Ultravox's stage-change shape
/// with the new agent's prompt, voice and tools; an agent outside the vibe
/// is refused naming the choices. With `PUBLIC_ORIGIN` set, the tools
/// Switchboard runs are HTTP tools of session `session`, so its calls
/// after the switch still reach Switchboard; the credential stays a
/// placeholder here (the record is read by watchers) and the door that
/// answers fills it in.
fn switch_agent(
    state: &AppState,
    session: &str,
    ws: &mut WorkflowState,
    arguments: &Value,
) -> Result<Value, String> {
    let Some(ctx) = ws.agent.clone() else {
        return Err("this session does not run in a vibe".into());
    };
    let rules = state.rules();
    let vibe = rules
        .vibe(&ctx.vibe)
        .ok_or_else(|| format!("vibe `{}` no longer exists", ctx.vibe))?;
    let agents = rules.agents_of(vibe);
    let wanted = arg(arguments, "agentName");
    let Some(agent) = find_agent(&agents, wanted) else {
        return Err(format!(
            "there is no agent `{}` in vibe `{}`; agents: {}",
            excerpt(wanted),
            vibe.id,
            agents
                .iter()
                .map(|a| a.name.as_str())
                .collect::<Vec<_>>()
                .join(", ")
        ));
    };
    let next = AgentContext {
        vibe: ctx.vibe.clone(),
        agent: agent.id.to_string(),
    };
    let stage = rules
        .stage(&next)
        .ok_or_else(|| format!("agent `{}` cannot be staged", agent.id))?;
    let text = if ctx.agent == next.agent {
        format!("You are already talking to {}.", agent.name)
    } else {
        format!("I'm now switching you to {}...", agent.name)
    };
    ws.agent = Some(next);
    Ok(match state.config.public_origin.as_deref() {
        Some(origin) => stage.change_for(
            &HttpTarget {
                origin,
                session,
                token: CREDENTIAL_PLACEHOLDER,
            },
            &text,
        ),
        None => stage.change(&text),
    })
}
