//! The Ultravox bridge: the body an Ultravox call is created with (one
//! builder for a session, an inbound call's session and a vibe), the
//! calls Ultravox makes of the HTTP tools in it (through the one call
//! path), and the webhook that ends a session when its call ends.
//!
//! Shapes as Ultravox documents them: HTTP tools
//! (<https://docs.ultravox.ai/tools/custom/http-vs-client-tools>), their
//! special response types (`X-Ultravox-Response-Type: new-stage | hang-up`,
//! <https://docs.ultravox.ai/tools/custom/changing-call-state>), call stages
//! (<https://docs.ultravox.ai/agents/call-stages>) and signed webhooks
//! (<https://docs.ultravox.ai/webhooks/securing-webhooks>).

pub mod signature;

use crate::domain::agent_session::{CallResponse, CallStatus};
use crate::domain::declaration::ultravox::{
    call_body, selected_tool_for, with_credential, HttpTarget, Runner, HANG_UP, NEW_STAGE,
};
use crate::domain::vibe::{Vibe, HANG_UP_TOOL, SWITCH_AGENT_TOOL};
use crate::domain::workflow_state::AgentContext;
use crate::error::ApiError;
use crate::server::agent::listing::{Listing, Prompt};
use crate::server::agent::rules::Rules;
use crate::server::agent::runner::{call_and_wait, Waited};
use crate::server::agent::sessions;
use crate::server::store::agent_sessions::SessionRow;
use crate::server::{AppState, ServerError};
use serde_json::Value;

/// What a refusal the model reads starts with, so it knows who refused.
pub const REFUSED_PREFIX: &str = "Refused by Switchboard: ";

/// The public origin HTTP tools point at: `PUBLIC_ORIGIN`, never a
/// request's `Host` (Ultravox calls from its own servers). 503 naming
/// the setting without it.
pub fn public_origin(state: &AppState) -> Result<&str, ApiError> {
    state.config.public_origin.as_deref().ok_or_else(|| {
        ApiError::Unavailable(
            "Set PUBLIC_ORIGIN (e.g. https://sb.example): Ultravox calls a session's HTTP tools at absolute URLs built from it.".into(),
        )
    })
}

/// Who runs `tool` in session `listing`'s call: for a vibe session, as its
/// vibe says ([`Vibe::runner`]); otherwise Switchboard, but for Ultravox's
/// own built-ins (except `hangUp`, whose call must end the session).
fn runner(rules: &Rules, vibe: Option<&Vibe>, tool: &str, from_plugin: bool) -> Runner {
    let builtin = !from_plugin && rules.is_ultravox_builtin(tool);
    match vibe {
        Some(vibe) => vibe.runner(tool, builtin),
        None => Runner::server(builtin, tool == HANG_UP_TOOL),
    }
}

/// The create-call body for session `row` (its `listing` now): the
/// prompt, a vibe session's voice and call settings, every tool of the
/// listing (its plugin's included) in `target`'s HTTP form where
/// Switchboard runs it (without a target, as the backend relays them),
/// and `metadata` naming the session. The one builder behind
/// `GET /api/sessions/{id}/call-config` and an inbound call's answer.
pub fn session_config(
    rules: &Rules,
    row: &SessionRow,
    listing: &Listing,
    target: Option<&HttpTarget<'_>>,
) -> Value {
    let vibe = listing
        .state
        .agent
        .as_ref()
        .and_then(|ctx| rules.vibe(&ctx.vibe));
    let tools = listing
        .tools
        .iter()
        .map(|t| {
            let name = t.declaration.name.as_str();
            selected_tool_for(
                &t.declaration,
                runner(rules, vibe, name, t.from_plugin),
                target,
            )
        })
        .collect();
    let voice = match &listing.prompt {
        Some(Prompt::Agent { stage, .. }) => Some(stage.stage.voice.as_str()),
        _ => None,
    };
    let settings = vibe.map(|v| v.call_settings.fields()).unwrap_or_default();
    let mut metadata = vec![("sessionId", row.id.as_str())];
    match &listing.state.agent {
        Some(AgentContext { vibe, agent }) => {
            metadata.push(("vibeId", vibe));
            metadata.push(("agentId", agent));
        }
        None => metadata.push(("workflowId", &listing.state.current_workflow)),
    }
    call_body(
        listing.system_prompt().unwrap_or_default(),
        voice,
        settings,
        tools,
        &metadata,
    )
}

/// The create-call body for vibe `vibe_id` before any session: its
/// default agent's stage (tools as the backend relays them: without a
/// session there is no HTTP target) and its call settings.
pub fn vibe_config(rules: &Rules, vibe_id: &str) -> Result<Value, ApiError> {
    let vibe = rules.vibe(vibe_id).ok_or_else(|| {
        ApiError::NotFound(format!(
            "Vibe \"{}\"",
            crate::domain::limits::excerpt(vibe_id)
        ))
    })?;
    let ctx = AgentContext {
        vibe: vibe.id.to_string(),
        agent: vibe.default_agent.to_string(),
    };
    let stage = rules
        .stage(&ctx)
        .ok_or_else(|| ApiError::NotFound(format!("Agent \"{}\"", vibe.default_agent)))?;
    Ok(call_body(
        &stage.stage.system_prompt,
        Some(&stage.stage.voice),
        vibe.call_settings.fields(),
        stage.stage.selected_tools_for(None),
        &[("vibeId", &ctx.vibe), ("agentId", &ctx.agent)],
    ))
}

/// What Switchboard answers an HTTP tool's call with: a body, and the
/// response type when the call changes the call (`new-stage`, `hang-up`).
#[derive(Debug, Clone, PartialEq)]
pub struct ToolAnswer {
    /// `X-Ultravox-Response-Type`, if any.
    pub response_type: Option<&'static str>,
    /// Whether `body` is JSON (else plain text).
    pub json: bool,
    /// The body.
    pub body: String,
}

impl ToolAnswer {
    /// A refusal the model can read (200, so the conversation goes on).
    pub fn refused(reason: &str) -> Self {
        Self {
            response_type: None,
            json: false,
            body: format!("{REFUSED_PREFIX}{reason}"),
        }
    }
}

/// Ultravox's call of session `row`'s tool `tool` with `arguments` (the
/// dynamic parameters it sent as the body), made with `token`: through
/// the one call path (`agent::call`: availability, schema, requirements,
/// built-ins, the plugin relay, bounds, the record and the timeline), then
/// answered as an HTTP tool answers. A refusal, and a call the API refuses
/// (ended session, a bound, arguments too large), is text the model reads;
/// a call the session's backend executes is waited for as the agent
/// runner waits.
pub async fn call_tool(
    state: &AppState,
    row: SessionRow,
    token: &str,
    tool: &str,
    arguments: Value,
) -> Result<ToolAnswer, ServerError> {
    match call_and_wait(state, row, tool, arguments).await {
        Ok(Waited::Answered(response)) => Ok(answer(tool, *response, token)),
        Ok(Waited::Pending(call_id)) => Ok(ToolAnswer {
            response_type: None,
            json: false,
            body: format!(
                "Allowed; the result is still pending (call {call_id}). Tell the user it is being done."
            ),
        }),
        Err(ServerError::Api(e)) if e.status() < 500 => Ok(ToolAnswer::refused(&e.to_string())),
        Err(other) => Err(other),
    }
}

/// An HTTP tool's answer to `response`: the refusal in words, the new
/// stage for an allowed `switchAgent` (its stage as the body, the
/// session's credential filled in), `hang-up` for an allowed `hangUp`,
/// else the result as JSON (a failed tool's own answer too).
fn answer(tool: &str, response: CallResponse, token: &str) -> ToolAnswer {
    if !response.allowed {
        return ToolAnswer::refused(response.reason.as_deref().unwrap_or("refused"));
    }
    if response.status == CallStatus::Failed {
        // The tool ran and failed: its own answer (a todo tool's
        // `{"success":false,"error",…}`) is what the model reads, as the
        // seed's client tools answered; not a refusal.
        return ToolAnswer {
            response_type: None,
            json: response.result.is_some(),
            body: response
                .result
                .map_or_else(|| format!("The tool {tool} failed."), |r| r.to_string()),
        };
    }
    let mut result = response.result.unwrap_or(Value::Null);
    if tool == SWITCH_AGENT_TOOL
        && result.get("responseType").and_then(Value::as_str) == Some(NEW_STAGE)
    {
        with_credential(&mut result, token);
        if let Some(Value::String(stage)) = result.get_mut("result").map(Value::take) {
            return ToolAnswer {
                response_type: Some(NEW_STAGE),
                json: true,
                body: stage,
            };
        }
    }
    ToolAnswer {
        response_type: (tool == HANG_UP_TOOL).then_some(HANG_UP),
        json: true,
        body: result.to_string(),
    }
}

/// A webhook's `call.metadata.sessionId`: the session Switchboard named
/// when it handed out the call's config.
pub fn session_of(event: &Value) -> Option<&str> {
    event.pointer("/call/metadata/sessionId")?.as_str()
}

/// Ends the session an Ultravox `call.ended` event names, if it is one of
/// Switchboard's (idempotent: a retried event ends nothing twice). `false`
/// when no session is named or none has that id.
pub async fn call_ended(state: &AppState, event: &Value) -> Result<bool, ServerError> {
    let Some(id) = session_of(event) else {
        return Ok(false);
    };
    if crate::server::store::agent_sessions::find(&state.db, id)
        .await?
        .is_none()
    {
        return Ok(false);
    }
    sessions::end(state, id, "Ultravox call ended").await?;
    Ok(true)
}
