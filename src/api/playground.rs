//! The playground's server functions: the workflows a playground session
//! may start in, and opening one for the signed-in user (the browser then
//! acts as the session's plugin with the plugin token it gets; the session
//! token, the agent's, never reaches the page).

use crate::error::ApiError;
use leptos::prelude::*;
use serde::{Deserialize, Serialize};

/// A session the playground opened: the plugin authenticates with the
/// session's plugin token (plugin rights only), and the watcher opens
/// `/sessions/{session_id}`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct PlaygroundSession {
    /// The session.
    pub session_id: String,
    /// Its plugin token (`pt_…`).
    pub plugin_token: String,
}

/// The workflows (id, name) a playground session may start in.
#[server(prefix = "/rpc", endpoint = "playground_workflows")]
pub async fn playground_workflows() -> Result<Vec<(String, String)>, ApiError> {
    use crate::server::http::ctx;
    ctx::finish(async {
        ctx::teacher()?;
        let state = ctx::state()?;
        Ok(state
            .rules()
            .workflows()
            .iter()
            .map(|w| (w.id.to_string(), w.name.clone()))
            .collect())
    })
    .await
}

/// Opens a session in `workflow_id` for the playground (Switchboard runs
/// its built-in tools; the playground's own tools are relayed to it).
#[server(prefix = "/rpc", endpoint = "open_playground_session")]
pub async fn open_playground_session(workflow_id: String) -> Result<PlaygroundSession, ApiError> {
    use crate::server::agent::sessions;
    use crate::server::http::ctx;
    ctx::finish(async {
        let user = ctx::teacher()?;
        let state = ctx::state()?;
        state
            .budgets
            .admit_playground(user.0.id, state.clock.now())
            .await?;
        // Its opener is the user, so the session page it links to is theirs.
        let opener = crate::domain::session_origin::Opener {
            user: Some(user.0.id),
            ..Default::default()
        };
        let opened = sessions::open(&state, &workflow_id, &opener, true).await?;
        Ok(PlaygroundSession {
            session_id: opened.id,
            plugin_token: opened.plugin_token,
        })
    })
    .await
}
