//! The admin's tool-binding matrix, its history, the start-up file's
//! comparison and import, and catalogue management.

use crate::domain::bindings::{BindingsVersion, SaveOutcome, ToolBindings, VersionMeta};
use crate::domain::bindings_file::BindingsFileStatus;
use crate::domain::catalogue::{CatalogueTool, Workflow};
use crate::error::ApiError;
use leptos::prelude::*;
use leptos::server_fn::codec::Json;
use serde::{Deserialize, Serialize};

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
}

/// The current bindings with the catalogue and workflows (admins only).
#[server(prefix = "/rpc", endpoint = "bindings_matrix")]
pub async fn bindings_matrix() -> Result<MatrixData, ApiError> {
    use crate::domain::user::Role;
    use crate::server::{ctx, store};
    ctx::finish(async {
        let state = ctx::state()?;
        ctx::require(Role::Admin)?;
        let current = store::bindings::current(&state.db)
            .await?
            .ok_or_else(|| ApiError::NotFound("Tool bindings".into()))?;
        Ok(MatrixData {
            current,
            tools: store::bindings::tools(&state.db).await?,
            workflows: store::bindings::workflows(&state.db).await?,
        })
    })
    .await
}

/// Saves new bindings if the current version is still `version`.
#[server(prefix = "/rpc", endpoint = "save_bindings", input = Json)]
pub async fn save_bindings(version: i64, bindings: ToolBindings) -> Result<SaveOutcome, ApiError> {
    use crate::domain::user::Role;
    use crate::server::{bindings, ctx};
    ctx::finish(async {
        let state = ctx::state()?;
        let admin = ctx::require(Role::Admin)?;
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
    use crate::domain::user::Role;
    use crate::server::{ctx, store};
    ctx::finish(async {
        let state = ctx::state()?;
        ctx::require(Role::Admin)?;
        store::bindings::history(&state.db).await
    })
    .await
}

/// One earlier version, for viewing its diff against the current one.
#[server(prefix = "/rpc", endpoint = "get_bindings_version")]
pub async fn get_bindings_version(version: i64) -> Result<BindingsVersion, ApiError> {
    use crate::domain::user::Role;
    use crate::server::{ctx, store};
    ctx::finish(async {
        let state = ctx::state()?;
        ctx::require(Role::Admin)?;
        store::bindings::version(&state.db, version).await
    })
    .await
}

/// Restores an earlier version as a new version (history is never rewritten),
/// if the current version is still `current`.
#[server(prefix = "/rpc", endpoint = "restore_bindings")]
pub async fn restore_bindings(restore: i64, current: i64) -> Result<SaveOutcome, ApiError> {
    use crate::domain::user::Role;
    use crate::server::{bindings, ctx, store};
    ctx::finish(async {
        let state = ctx::state()?;
        let admin = ctx::require(Role::Admin)?;
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
    use crate::domain::user::Role;
    use crate::server::{bindings, ctx};
    ctx::finish(async {
        let state = ctx::state()?;
        ctx::require(Role::Admin)?;
        bindings::file_status(&state).await
    })
    .await
}

/// Imports the start-up file's bindings as a new version, if the current
/// version is still `current`.
#[server(prefix = "/rpc", endpoint = "import_bindings_file")]
pub async fn import_bindings_file(current: i64) -> Result<SaveOutcome, ApiError> {
    use crate::domain::user::Role;
    use crate::server::{bindings, ctx};
    ctx::finish(async {
        let state = ctx::state()?;
        let admin = ctx::require(Role::Admin)?;
        bindings::import_file(&state, current, admin.0.id, &admin.0.display_name).await
    })
    .await
}

/// Adds (`create`) or edits a catalogue tool; its parameters must be a valid
/// JSON Schema.
#[server(prefix = "/rpc", endpoint = "save_tool", input = Json)]
pub async fn save_tool(tool: CatalogueTool, create: bool) -> Result<(), ApiError> {
    use crate::domain::user::Role;
    use crate::server::{bindings, ctx, store};
    ctx::finish(async {
        let state = ctx::state()?;
        ctx::require(Role::Admin)?;
        bindings::check_tool(&state.db, &tool).await?;
        store::bindings::put_tool(&state.db, &tool, create).await?;
        state.rules_changed().await
    })
    .await
}

/// Adds (`create`) or edits a workflow.
#[server(prefix = "/rpc", endpoint = "save_workflow", input = Json)]
pub async fn save_workflow(workflow: Workflow, create: bool) -> Result<(), ApiError> {
    use crate::domain::user::Role;
    use crate::server::{ctx, store};
    ctx::finish(async {
        let state = ctx::state()?;
        ctx::require(Role::Admin)?;
        if let Some(problem) = workflow.problems().into_iter().next() {
            return Err(ApiError::Invalid(problem).into());
        }
        store::bindings::put_workflow(&state.db, &workflow, create).await?;
        state.rules_changed().await
    })
    .await
}
