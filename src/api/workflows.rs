//! The admin's workflow settings: the list of workflows, one workflow's
//! definition with what its editors offer (trigger types, the catalogue),
//! and one edit on top of the version read — the same
//! `server::workflows::edit` the JSON API and the workflow agent's MCP
//! tools use, so a change made here, over the API or by the agent is the
//! same change.

use crate::domain::catalogue::CatalogueTool;
use crate::domain::workflow_def::{Definition, Edit, TriggerType};
use crate::error::ApiError;
use leptos::prelude::*;
use leptos::server_fn::codec::Json;
use serde::{Deserialize, Serialize};

/// A workflow in the list.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct WorkflowSummary {
    /// Its id (slug).
    pub id: String,
    /// Its name.
    pub name: String,
    /// What happens in it.
    pub description: String,
    /// Its start trigger's type, once set.
    pub trigger: Option<String>,
    /// How many steps it has.
    pub steps: usize,
    /// Its definition's version.
    pub version: i64,
}

/// Everything `/workflows/{id}` needs.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct WorkflowSettings {
    /// Its id.
    pub id: String,
    /// Its name.
    pub name: String,
    /// What happens in it.
    pub description: String,
    /// The definition now.
    pub definition: Definition,
    /// The version an edit must build on.
    pub version: i64,
    /// The start trigger types, with their filter-rule schemas.
    pub trigger_types: Vec<TriggerType>,
    /// The catalogue, for a custom_agent step's tools.
    pub tools: Vec<CatalogueTool>,
    /// The tools the workflow has in every step (its bindings).
    pub bound_tools: Vec<String>,
    /// Why the chat cannot run (no model configured), in words; `None`
    /// when it can.
    pub chat_unavailable: Option<String>,
    /// When its hook secret (webhook and inbound-call URLs) was made, Unix
    /// seconds; `None` when it has none. The secret itself is never read
    /// back.
    #[serde(default)]
    pub hook_secret_at: Option<i64>,
}

/// Every workflow, for `/workflows` (admins).
#[server(prefix = "/rpc", endpoint = "workflows_list")]
pub async fn workflows_list() -> Result<Vec<WorkflowSummary>, ApiError> {
    use crate::server::{http::ctx, store};
    ctx::finish(async {
        ctx::admin()?;
        let state = ctx::state()?;
        let mut out = Vec::new();
        for w in store::bindings::workflows(&state.db).await? {
            let id = w.id.to_string();
            let found = store::workflow_defs::get(&state.db, &id).await?;
            out.push(WorkflowSummary {
                trigger: found
                    .definition
                    .trigger
                    .as_ref()
                    .map(|t| t.trigger_type_id.clone()),
                steps: found.definition.steps.len(),
                version: found.version,
                id,
                name: w.name,
                description: w.description,
            });
        }
        Ok(out)
    })
    .await
}

/// Workflow `id` for its settings page (admins); 404 for no such workflow.
#[server(prefix = "/rpc", endpoint = "workflow_page")]
pub async fn workflow_page(id: String) -> Result<WorkflowSettings, ApiError> {
    use crate::domain::workflow_def::trigger_types;
    use crate::server::{http::ctx, store, workflows};
    ctx::finish(async {
        ctx::admin()?;
        let state = ctx::state()?;
        let found = workflows::get(&state, &id).await?;
        let (name, description, bound_tools) = {
            let rules = state.rules();
            let w = rules.workflows().iter().find(|w| w.id.as_str() == id);
            (
                w.map(|w| w.name.clone()).unwrap_or_default(),
                w.map(|w| w.description.clone()).unwrap_or_default(),
                rules.available(&id),
            )
        };
        Ok(WorkflowSettings {
            definition: found.definition,
            version: found.version,
            trigger_types: trigger_types(),
            tools: store::bindings::tools(&state.db).await?,
            chat_unavailable: state.config.llm.as_ref().err().cloned(),
            hook_secret_at: store::workflow_triggers::hook_secret_at(&state.db, &id).await?,
            id,
            name,
            description,
            bound_tools,
        })
    })
    .await
}

/// Applies `edit` to workflow `id` on top of `version` (the one the page
/// shows): the new version; 412 when someone saved in between, 422 naming
/// the argument for a refused edit.
#[server(prefix = "/rpc", endpoint = "edit_workflow", input = Json)]
pub async fn edit_workflow(id: String, version: i64, edit: Edit) -> Result<i64, ApiError> {
    use crate::server::{http::ctx, workflows};
    ctx::finish(async {
        let admin = ctx::admin()?;
        let state = ctx::state()?;
        let by = crate::domain::actor::Actor::admin(admin.0.id, &admin.0.display_name);
        let saved = workflows::edit(&state, &id, &edit, Some(version), &by).await?;
        Ok(saved.version)
    })
    .await
}
