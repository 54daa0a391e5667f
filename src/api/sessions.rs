//! Watching live sessions from the browser, and the admins' test console.

use crate::domain::agent_session::{CallResponse, SessionSnapshot, SessionSummary};
use crate::domain::catalogue::{CatalogueTool, Workflow};
use crate::domain::session_checks::Outline;
use crate::domain::state_labels::StateLabels;
use crate::error::ApiError;
use leptos::prelude::*;
use leptos::server_fn::codec::Json;
use serde::{Deserialize, Serialize};

/// The sessions list's data: the sessions and what their keys read as.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct SessionListData {
    /// Recent sessions, open ones first.
    pub sessions: Vec<SessionSummary>,
    /// Workflow names, for the workflow column.
    pub workflows: Vec<Workflow>,
    /// Step descriptions, for the step column.
    pub labels: StateLabels,
}

/// Recent sessions the signed-in user may see (their own lessons', trials
/// and keys'; an admin every one), open ones first, with the names their
/// keys read as.
#[server(prefix = "/rpc", endpoint = "list_sessions")]
pub async fn list_sessions() -> Result<SessionListData, ApiError> {
    use crate::server::agent::sessions;
    use crate::server::{http::ctx, store};
    ctx::finish(async {
        let user = ctx::teacher()?;
        let state = ctx::state()?;
        Ok(SessionListData {
            sessions: sessions::list(&state, sessions::viewer_of(&user)).await?,
            workflows: store::bindings::workflows(&state.db).await?,
            labels: state.rules().bindings.labels.clone(),
        })
    })
    .await
}

/// What the visualiser needs to draw a session: the session now and what
/// its own lesson, workflow or vibe declares (its name for the badge, its
/// checks).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct SessionPageData {
    /// The session now.
    pub snapshot: SessionSnapshot,
    /// What the session runs: its name and the checks it declares.
    pub outline: Outline,
    /// Workflow names, for the timeline's "in …".
    pub workflows: Vec<Workflow>,
    /// Check labels and step descriptions, from the bindings in force.
    pub labels: StateLabels,
    /// For the admin console (empty for teachers): the tools the session
    /// may call now, as its listing describes them, then the rest of the
    /// catalogue.
    pub console_tools: Vec<CatalogueTool>,
    /// A workflow session's workflows' steps in order, for the steps panel
    /// (the current one lit); empty for a lesson or vibe session.
    pub workflow_steps: std::collections::BTreeMap<String, Vec<crate::domain::workflow_def::Step>>,
    /// Whether the signed-in user may make join codes for it now (see
    /// [`issue_join_code`]): the page then offers "Join code for a plugin".
    pub join_codes: bool,
}

/// One session for the visualiser, if the signed-in user may see it
/// (another teacher's session: 404, as an unknown one).
#[server(prefix = "/rpc", endpoint = "session_page")]
pub async fn session_page(id: String) -> Result<SessionPageData, ApiError> {
    use crate::domain::user::Role;
    use crate::server::agent::sessions;
    use crate::server::{http::ctx, store};
    ctx::finish(async {
        let user = ctx::teacher()?;
        let state = ctx::state()?;
        let row = sessions::watchable(&state, &id, sessions::viewer_of(&user)).await?;
        // The console offers the session's listing, then the rest of the
        // catalogue (to try a refusal).
        let console_tools = if user.0.role == Role::Admin {
            let listing = crate::server::agent::listing::Listing::of(&state, &row).await?;
            listing.console(store::bindings::tools(&state.db).await?)
        } else {
            Vec::new()
        };
        let outline = sessions::outline(&state, &row).await?;
        let workflow_steps = match &outline {
            Outline::Workflows { workflows } => {
                let rules = state.rules();
                workflows
                    .iter()
                    .filter_map(|w| Some((w.id.clone(), rules.definition(&w.id)?.steps.clone())))
                    .filter(|(_, steps)| !steps.is_empty())
                    .collect()
            }
            _ => Default::default(),
        };
        let join_codes = sessions::may_make_join_code(&row, &user).is_ok();
        Ok(SessionPageData {
            join_codes,
            snapshot: sessions::snapshot_of(&state, row).await?,
            outline,
            workflows: store::bindings::workflows(&state.db).await?,
            labels: state.rules().bindings.labels.clone(),
            workflow_steps,
            console_tools,
        })
    })
    .await
}

/// Ends session `id` for an admin watching it (the agent is refused from
/// then on and every watcher gets the `ended` event); ending an ended
/// session again changes nothing. A server function, so the cross-site
/// check on `/rpc/` guards it like every other cookie-authenticated change.
#[server(prefix = "/rpc", endpoint = "admin_end_session")]
pub async fn admin_end_session(id: String) -> Result<(), ApiError> {
    use crate::server::agent::sessions;
    use crate::server::http::ctx;
    ctx::finish(async {
        let admin = ctx::admin()?;
        let state = ctx::state()?;
        sessions::get(&state, &id).await?;
        sessions::end(&state, &id, "ended by admin").await?;
        tracing::info!(session = %id, admin = admin.0.id, "session ended by an admin");
        Ok(())
    })
    .await
}

/// Makes a one-use join code for session `id` (see `POST
/// /api/sessions/{id}/join-codes`) for the signed-in user on its page; a
/// server function, so `/rpc/`'s same-origin check guards it.
#[server(prefix = "/rpc", endpoint = "issue_join_code")]
pub async fn issue_join_code(
    id: String,
) -> Result<crate::domain::join_code::IssuedJoinCode, ApiError> {
    use crate::server::agent::sessions;
    use crate::server::http::ctx;
    use crate::server::store::join_codes::CreatedBy;
    ctx::finish(async {
        let user = ctx::teacher()?;
        let state = ctx::state()?;
        let row = sessions::watchable(&state, &id, sessions::viewer_of(&user)).await?;
        sessions::may_make_join_code(&row, &user)?;
        let code = sessions::issue_code(&state, &row, CreatedBy::User(user.0.id)).await?;
        tracing::info!(session = %id, user = user.0.id, "join code made on the session page");
        Ok(code)
    })
    .await
}

/// Opens a demo session in the ID&V workflow (admins), for trying the rules.
#[server(prefix = "/rpc", endpoint = "new_demo_session")]
pub async fn new_demo_session() -> Result<String, ApiError> {
    use crate::server::agent::sessions;
    use crate::server::http::ctx;
    ctx::finish(async {
        ctx::admin()?;
        let state = ctx::state()?;
        let id = sessions::open(&state, "idv", &Default::default(), true)
            .await?
            .id;
        leptos_axum::redirect(&format!("/sessions/{id}"));
        Ok(id)
    })
    .await
}

/// Calls a tool in a session as its agent would, through the same checks
/// (admins only: it bypasses the session token, not the rules).
#[server(prefix = "/rpc", endpoint = "console_call", input = Json)]
pub async fn console_call(
    id: String,
    name: String,
    arguments: serde_json::Value,
) -> Result<CallResponse, ApiError> {
    use crate::server::agent::sessions;
    use crate::server::http::ctx;
    ctx::finish(async {
        ctx::admin()?;
        let state = ctx::state()?;
        let row = sessions::get(&state, &id).await?;
        sessions::call(&state, row, &name, arguments).await
    })
    .await
}
