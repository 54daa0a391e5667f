//! The admin's tool-binding matrix, its history, the start-up file's
//! comparison and import, and catalogue management with its history.

use crate::domain::bindings::{BindingsVersion, SaveOutcome, ToolBindings, VersionMeta};
use crate::domain::bindings_file::BindingsFileStatus;
use crate::domain::catalogue::{CatalogueTool, Workflow};
use crate::domain::catalogue_history::{CatalogueDiff, CatalogueVersion};
use crate::error::ApiError;
use leptos::prelude::*;
use leptos::server_fn::codec::Json;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

/// Everything the matrix page needs.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct MatrixData {
    /// The current version.
    pub current: BindingsVersion,
    /// Columns.
    pub tools: Vec<CatalogueTool>,
    /// Rows (after Global).
    pub workflows: Vec<Workflow>,
    /// The catalogue's version, which a tool edit builds on.
    pub catalogue_version: i64,
    /// The imported tools no session is offered now (their MCP server no
    /// longer lists them or was removed), with why: their column says so.
    #[serde(default)]
    pub withheld: BTreeMap<String, String>,
}

/// The current bindings with the catalogue and workflows (admins only).
#[server(prefix = "/rpc", endpoint = "bindings_matrix")]
pub async fn bindings_matrix() -> Result<MatrixData, ApiError> {
    use crate::server::{http::ctx, store};
    ctx::finish(async {
        ctx::admin()?;
        let state = ctx::state()?;
        let current = store::bindings::current(&state.db)
            .await?
            .ok_or_else(|| ApiError::NotFound("Tool bindings".into()))?;
        let catalogue_version = store::catalogue::latest(&state.db)
            .await?
            .map_or(0, |m| m.version);
        Ok(MatrixData {
            current,
            tools: store::bindings::tools(&state.db).await?,
            workflows: store::bindings::workflows(&state.db).await?,
            catalogue_version,
            withheld: state
                .rules()
                .withheld_tools()
                .iter()
                .map(|(tool, why)| (tool.clone(), why.to_string()))
                .collect(),
        })
    })
    .await
}

/// Saves new bindings if the current version is still `version`.
#[server(prefix = "/rpc", endpoint = "save_bindings", input = Json)]
pub async fn save_bindings(version: i64, bindings: ToolBindings) -> Result<SaveOutcome, ApiError> {
    use crate::server::{catalogue::bindings, http::ctx};
    ctx::finish(async {
        let admin = ctx::admin()?;
        let state = ctx::state()?;
        bindings::save_in_force(
            &state,
            version,
            &bindings,
            Some(admin.0.id),
            &admin.0.display_name,
            None,
        )
        .await
    })
    .await
}

/// Every version, newest first.
#[server(prefix = "/rpc", endpoint = "bindings_history")]
pub async fn bindings_history() -> Result<Vec<VersionMeta>, ApiError> {
    use crate::server::{http::ctx, store};
    ctx::finish(async {
        ctx::admin()?;
        let state = ctx::state()?;
        store::bindings::history(&state.db).await
    })
    .await
}

/// One earlier version, for viewing its diff against the current one.
#[server(prefix = "/rpc", endpoint = "get_bindings_version")]
pub async fn get_bindings_version(version: i64) -> Result<BindingsVersion, ApiError> {
    use crate::server::{http::ctx, store};
    ctx::finish(async {
        ctx::admin()?;
        let state = ctx::state()?;
        store::bindings::version(&state.db, version).await
    })
    .await
}

/// Restores an earlier version as a new version (history is never rewritten),
/// if the current version is still `current`.
#[server(prefix = "/rpc", endpoint = "restore_bindings")]
pub async fn restore_bindings(restore: i64, current: i64) -> Result<SaveOutcome, ApiError> {
    use crate::server::{catalogue::bindings, http::ctx, store};
    ctx::finish(async {
        let admin = ctx::admin()?;
        let state = ctx::state()?;
        let old = store::bindings::version(&state.db, restore).await?;
        bindings::save_in_force(
            &state,
            current,
            &old.bindings,
            Some(admin.0.id),
            &admin.0.display_name,
            Some(&format!("Restored version {restore}")),
        )
        .await
    })
    .await
}

/// How the start-up file (`SWITCHBOARD_BINDINGS_FILE`) compares with the
/// bindings in force; `None` without a file (admins only).
#[server(prefix = "/rpc", endpoint = "bindings_file")]
pub async fn bindings_file() -> Result<Option<BindingsFileStatus>, ApiError> {
    use crate::server::{catalogue::bindings, http::ctx};
    ctx::finish(async {
        ctx::admin()?;
        let state = ctx::state()?;
        bindings::file_status(&state).await
    })
    .await
}

/// Imports the start-up file's bindings as a new version, if the current
/// version is still `current`.
#[server(prefix = "/rpc", endpoint = "import_bindings_file")]
pub async fn import_bindings_file(current: i64) -> Result<SaveOutcome, ApiError> {
    use crate::server::{catalogue::bindings, http::ctx};
    ctx::finish(async {
        let admin = ctx::admin()?;
        let state = ctx::state()?;
        bindings::import_file(&state, current, admin.0.id, &admin.0.display_name).await
    })
    .await
}

/// Adds (`create`) or edits a catalogue tool (admins: the browser's
/// `catalogue:write`), on top of catalogue version `version` if given (412
/// when the catalogue changed since); its parameters must be a valid JSON
/// Schema. Saved as a new catalogue version attributed to the admin.
#[server(prefix = "/rpc", endpoint = "save_tool", input = Json)]
pub async fn save_tool(
    tool: CatalogueTool,
    create: bool,
    version: Option<i64>,
) -> Result<(), ApiError> {
    use crate::server::{catalogue, http::ctx};
    ctx::finish(async {
        let admin = ctx::admin()?.admin_actor()?;
        let state = ctx::state()?;
        catalogue::put_tool(&state, &admin, &tool, create, version).await?;
        Ok(())
    })
    .await
}

/// The catalogue's versions, newest first (admins), at most
/// [`CATALOGUE_HISTORY_PAGE_MAX`](crate::domain::limits::CATALOGUE_HISTORY_PAGE_MAX)
/// older than `before` if given.
#[server(prefix = "/rpc", endpoint = "catalogue_history")]
pub async fn catalogue_history(before: Option<i64>) -> Result<Vec<VersionMeta>, ApiError> {
    use crate::domain::limits::CATALOGUE_HISTORY_PAGE_MAX;
    use crate::server::{http::ctx, store};
    ctx::finish(async {
        ctx::admin()?;
        let state = ctx::state()?;
        store::catalogue::history(&state.db, before, CATALOGUE_HISTORY_PAGE_MAX).await
    })
    .await
}

/// One catalogue version and what differs from it to the current one (what
/// restoring it would change), for admins.
#[server(prefix = "/rpc", endpoint = "get_catalogue_version")]
pub async fn get_catalogue_version(
    version: i64,
) -> Result<(CatalogueVersion, CatalogueDiff), ApiError> {
    use crate::server::{http::ctx, store};
    ctx::finish(async {
        ctx::admin()?;
        let state = ctx::state()?;
        let old = store::catalogue::version(&state.db, version).await?;
        let now = store::bindings::tools(&state.db).await?;
        let diff = CatalogueDiff::between(&now, &old.tools);
        Ok((old, diff))
    })
    .await
}

/// Restores catalogue version `restore` as a new version (history is never
/// rewritten; tools added since are kept), if the catalogue is still at
/// `current` (admins). The catalogue's version after it.
#[server(prefix = "/rpc", endpoint = "restore_catalogue")]
pub async fn restore_catalogue(restore: i64, current: i64) -> Result<i64, ApiError> {
    use crate::server::{catalogue, http::ctx};
    ctx::finish(async {
        let admin = ctx::admin()?.admin_actor()?;
        let state = ctx::state()?;
        Ok(catalogue::restore(&state, &admin, restore, current)
            .await?
            .version)
    })
    .await
}

/// Adds (`create`) or edits a workflow.
#[server(prefix = "/rpc", endpoint = "save_workflow", input = Json)]
pub async fn save_workflow(workflow: Workflow, create: bool) -> Result<(), ApiError> {
    use crate::server::{http::ctx, store};
    ctx::finish(async {
        ctx::admin()?;
        let state = ctx::state()?;
        if let Some(problem) = workflow.problems().into_iter().next() {
            return Err(ApiError::Invalid(problem).into());
        }
        store::bindings::put_workflow(&state.db, &workflow, create).await?;
        crate::server::agent::listing::rules_changed(&state).await
    })
    .await
}
