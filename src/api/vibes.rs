//! The admin's agents and vibes editor: the whole set with versions and the
//! catalogue, saves checked against the whole set, and what an agent would
//! get (prompt, `selectedTools`, stage change, exact token cost).
//!
//! [`preview`] is plain code shared by both sides: the editor runs it as the
//! admin types, and [`agent_preview`] runs the very same function on the
//! server for the exact token count, so the two can never disagree.

use crate::domain::catalogue::CatalogueTool;
use crate::domain::declaration::ultravox::{stage_change, Stage};
use crate::domain::vibe::template::stage;
use crate::domain::vibe::{Agent, Vibe};
use crate::error::ApiError;
use leptos::prelude::*;
use leptos::server_fn::codec::Json;
use serde::{Deserialize, Serialize};
use serde_json::Value;

/// An agent or vibe as stored, with the version a save must name.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Saved<T> {
    /// The object.
    pub value: T,
    /// Its version.
    pub version: i64,
}

/// Everything the `/agents` page needs.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct AgentsSet {
    /// Every agent, in menu order.
    pub agents: Vec<Saved<Agent>>,
    /// Every vibe.
    pub vibes: Vec<Saved<Vibe>>,
    /// The catalogue, for the tool checkboxes (grouped by category).
    pub tools: Vec<CatalogueTool>,
}

/// What an agent gets when a call starts with it or switches to it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct StagePreview {
    /// The stage: rendered prompt, voice, `selectedTools`.
    pub stage: Stage,
    /// The `switchAgent` answer that moves a call to it.
    pub stage_change: Value,
    /// The text whose tokens it costs: prompt, then `selectedTools` JSON.
    pub token_text: String,
    /// Exact o200k_base tokens of `token_text` (server only).
    pub tokens: Option<usize>,
}

/// What `agent` (possibly unsaved) gets in `vibe`: `agents` is the loaded
/// set (the edited agent replaces its saved self, so `{{otherAgents}}` and
/// its own tools are as typed) and `tools` the catalogue.
pub fn preview(
    agent: &Agent,
    vibe: &Vibe,
    agents: &[Agent],
    tools: &[CatalogueTool],
) -> StagePreview {
    let members: Vec<&Agent> = vibe
        .agents
        .iter()
        .filter_map(|id| {
            if *id == agent.id {
                Some(agent)
            } else {
                agents.iter().find(|a| a.id == *id)
            }
        })
        .collect();
    let declarations: Vec<_> = vibe
        .tools_of(agent)
        .iter()
        .filter_map(|id| tools.iter().find(|t| t.id.as_str() == id))
        .map(CatalogueTool::declaration)
        .collect();
    let builtin = |name: &str| {
        tools
            .iter()
            .any(|t| t.id.as_str() == name && t.ultravox_builtin)
    };
    let stage = stage(vibe, agent, &members, &declarations, builtin);
    let change = stage_change(
        &stage,
        &format!("I'm now switching you to {}...", agent.name),
    );
    let token_text = format!(
        "{}\n{}",
        stage.system_prompt,
        serde_json::to_string(&stage.selected_tools).unwrap_or_default()
    );
    StagePreview {
        stage,
        stage_change: change,
        token_text,
        tokens: None,
    }
}

/// Every agent and vibe with versions, and the catalogue (admins only).
#[server(prefix = "/rpc", endpoint = "agents_data")]
pub async fn agents_data() -> Result<AgentsSet, ApiError> {
    use crate::server::{http::ctx, store, vibes};
    ctx::finish(async {
        ctx::admin()?;
        let state = ctx::state()?;
        let (agents, all_vibes) = vibes::all(&state).await?;
        Ok(AgentsSet {
            agents: agents
                .into_iter()
                .map(|a| Saved {
                    value: a.value,
                    version: a.version,
                })
                .collect(),
            vibes: all_vibes
                .into_iter()
                .map(|v| Saved {
                    value: v.value,
                    version: v.version,
                })
                .collect(),
            tools: store::bindings::tools(&state.db).await?,
        })
    })
    .await
}

/// Saves `agent` if it is still at `version` (`None`: a new agent) and the
/// whole set stays valid; returns its new version. Open sessions whose
/// tools change are told at once.
#[server(prefix = "/rpc", endpoint = "save_agent", input = Json)]
pub async fn save_agent(agent: Agent, version: Option<i64>) -> Result<i64, ApiError> {
    use crate::server::http::ctx;
    use crate::server::vibes::{save, Change};
    ctx::finish(async {
        let admin = ctx::admin()?;
        let state = ctx::state()?;
        save(&state, Change::Agent(agent, version), &admin.0.display_name).await
    })
    .await
}

/// Saves `vibe` if it is still at `version` (`None`: a new vibe) and the
/// whole set stays valid; returns its new version.
#[server(prefix = "/rpc", endpoint = "save_vibe", input = Json)]
pub async fn save_vibe(vibe: Vibe, version: Option<i64>) -> Result<i64, ApiError> {
    use crate::server::http::ctx;
    use crate::server::vibes::{save, Change};
    ctx::finish(async {
        let admin = ctx::admin()?;
        let state = ctx::state()?;
        save(&state, Change::Vibe(vibe, version), &admin.0.display_name).await
    })
    .await
}

/// The new versions after [`save_vibe_with_agents`].
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct VibeSaved {
    /// The vibe's new version, if it was sent.
    pub vibe: Option<i64>,
    /// Each agent's new version, in the order sent.
    pub agents: Vec<i64>,
}

/// Saves a vibe's editor as one change: `vibe` if given (at its version)
/// and the `agents` of the vibe whose tools were changed in its agent ×
/// tool matrix, each at its version. All are checked together and written
/// in one transaction: a stale version (412) or a broken rule (422) saves
/// none of them.
#[server(prefix = "/rpc", endpoint = "save_vibe_with_agents", input = Json)]
pub async fn save_vibe_with_agents(
    vibe_id: String,
    vibe: Option<Saved<Vibe>>,
    agents: Vec<Saved<Agent>>,
) -> Result<VibeSaved, ApiError> {
    use crate::domain::vibe::rules::MAX_AGENTS_PER_VIBE;
    use crate::server::http::ctx;
    use crate::server::vibes::{save_all, Change};
    ctx::finish(async {
        let admin = ctx::admin()?;
        let state = ctx::state()?;
        if agents.len() > MAX_AGENTS_PER_VIBE {
            return Err(ApiError::invalid(
                "agents",
                format!("at most {MAX_AGENTS_PER_VIBE} agents per save"),
            )
            .into());
        }
        let members = match &vibe {
            Some(v) if v.value.id.as_str() != vibe_id => {
                return Err(ApiError::invalid("vibe.id", "must be the vibe being edited").into())
            }
            Some(v) => v.value.agents.clone(),
            None => state
                .rules()
                .vibe(&vibe_id)
                .map(|v| v.agents.clone())
                .ok_or_else(|| {
                    ApiError::NotFound(format!("Vibe {}", crate::domain::limits::excerpt(&vibe_id)))
                })?,
        };
        if let Some((i, a)) = agents
            .iter()
            .enumerate()
            .find(|(_, a)| !members.contains(&a.value.id))
        {
            return Err(ApiError::invalid(
                format!("agents[{i}].id"),
                format!("`{}` is not an agent of vibe `{vibe_id}`", a.value.id),
            )
            .into());
        }
        let sent_vibe = vibe.is_some();
        let mut changes: Vec<Change> = vibe
            .into_iter()
            .map(|v| Change::Vibe(v.value, Some(v.version)))
            .collect();
        changes.extend(
            agents
                .into_iter()
                .map(|a| Change::Agent(a.value, Some(a.version))),
        );
        let mut versions = save_all(&state, changes, &admin.0.display_name).await?;
        let vibe = sent_vibe.then(|| versions.remove(0));
        Ok(VibeSaved {
            vibe,
            agents: versions,
        })
    })
    .await
}

/// What `agent` (as edited, unsaved) gets in vibe `vibe_id`, with the exact
/// token count of its prompt and tools (the tokenizer is too large to ship
/// to the browser).
#[server(prefix = "/rpc", endpoint = "agent_preview", input = Json)]
pub async fn agent_preview(agent: Agent, vibe_id: String) -> Result<StagePreview, ApiError> {
    use crate::server::{http::ctx, platform::tokens, store, vibes};
    ctx::finish(async {
        ctx::admin()?;
        let state = ctx::state()?;
        let (agents, all_vibes) = vibes::all(&state).await?;
        let vibe = all_vibes
            .into_iter()
            .map(|v| v.value)
            .find(|v| v.id.as_str() == vibe_id)
            .ok_or_else(|| ApiError::NotFound(format!("Vibe {vibe_id}")))?;
        let agents: Vec<Agent> = agents.into_iter().map(|a| a.value).collect();
        let tools = store::bindings::tools(&state.db).await?;
        let mut out = preview(&agent, &vibe, &agents, &tools);
        if out.token_text.len() > 400_000 {
            return Err(ApiError::invalid("agent", "prompt and tools exceed 400,000 bytes").into());
        }
        out.tokens = Some(tokens::count(&out.token_text).await?);
        Ok(out)
    })
    .await
}
