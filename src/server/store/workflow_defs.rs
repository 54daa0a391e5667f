//! Workflow definitions (migration `0015_workflow_definitions.sql`): the
//! current definition of each workflow with its version, and every saved
//! version with its edit and author.

use crate::domain::workflow_def::{Definition, Edit};
use crate::error::ApiError;
use crate::server::platform::db::now;
use crate::server::platform::db::{Conn, Db};
use crate::server::ServerError;
use std::collections::HashMap;

/// A definition as stored, with its version (0: never saved).
#[derive(Debug, Clone, PartialEq)]
pub struct Versioned {
    /// The definition.
    pub definition: Definition,
    /// Its version.
    pub version: i64,
}

fn parse(raw: &str) -> Definition {
    // Written only by `put` from a checked Definition.
    serde_json::from_str(raw).unwrap_or_default()
}

/// Workflow `id`'s definition (empty at version 0 when never saved).
pub async fn get(db: &Db, id: &str) -> Result<Versioned, ServerError> {
    let row: Option<(String, i64)> = sqlx::query_as(
        "SELECT definition, version FROM workflow_definitions WHERE workflow_id = $1",
    )
    .bind(id)
    .fetch_optional(db)
    .await?;
    Ok(row.map_or_else(
        || Versioned {
            definition: Definition::default(),
            version: 0,
        },
        |(raw, version)| Versioned {
            definition: parse(&raw),
            version,
        },
    ))
}

/// Every saved definition, by workflow id (for the rules).
pub async fn all(db: &Db) -> Result<HashMap<String, Definition>, ServerError> {
    let rows: Vec<(String, String)> =
        sqlx::query_as("SELECT workflow_id, definition FROM workflow_definitions")
            .fetch_all(db)
            .await?;
    Ok(rows
        .into_iter()
        .map(|(id, raw)| (id, parse(&raw)))
        .collect())
}

/// Stores `definition` for workflow `id` by `by` after `edit`, if it is
/// still at `expected`: the new version, or 412 naming the current one.
pub async fn put(
    tx: &mut Conn,
    id: &str,
    definition: &Definition,
    edit: &Edit,
    expected: i64,
    by: &str,
) -> Result<i64, ServerError> {
    let current: i64 = sqlx::query_scalar(
        "SELECT COALESCE((SELECT version FROM workflow_definitions WHERE workflow_id = $1), 0)",
    )
    .bind(id)
    .fetch_one(&mut *tx)
    .await?;
    if current != expected {
        return Err(ApiError::PreconditionFailed(format!(
            "Workflow {id}'s definition is at version {current}, not {expected}: someone else changed it. Reload and try again."
        ))
        .into());
    }
    let version = current + 1;
    let json = serde_json::to_string(definition).unwrap_or_default();
    let at = now();
    sqlx::query(
        "INSERT INTO workflow_definitions (workflow_id, definition, version, updated_at, updated_by)
         VALUES ($1, $2, $3, $4, $5)
         ON CONFLICT (workflow_id) DO UPDATE SET definition = excluded.definition,
           version = excluded.version, updated_at = excluded.updated_at, updated_by = excluded.updated_by",
    )
    .bind(id)
    .bind(&json)
    .bind(version)
    .bind(at)
    .bind(by)
    .execute(&mut *tx)
    .await?;
    sqlx::query(
        "INSERT INTO workflow_definition_versions (workflow_id, version, definition, edit, saved_at, saved_by)
         VALUES ($1, $2, $3, $4, $5, $6)",
    )
    .bind(id)
    .bind(version)
    .bind(&json)
    .bind(edit.recorded().to_string())
    .bind(at)
    .bind(by)
    .execute(&mut *tx)
    .await?;
    Ok(version)
}

/// One saved version, for the history.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
#[serde(rename_all = "camelCase")]
pub struct HistoryEntry {
    /// The version.
    pub version: i64,
    /// The edit that made it.
    pub edit: serde_json::Value,
    /// When, Unix seconds.
    pub saved_at: i64,
    /// Who.
    pub saved_by: String,
}

/// Workflow `id`'s saved versions, newest first (at most `limit`).
pub async fn history(db: &Db, id: &str, limit: i64) -> Result<Vec<HistoryEntry>, ServerError> {
    let rows: Vec<(i64, String, i64, String)> = sqlx::query_as(
        "SELECT version, edit, saved_at, saved_by FROM workflow_definition_versions
         WHERE workflow_id = $1 ORDER BY version DESC LIMIT $2",
    )
    .bind(id)
    .bind(limit)
    .fetch_all(db)
    .await?;
    Ok(rows
        .into_iter()
        .map(|(version, edit, saved_at, saved_by)| HistoryEntry {
            version,
            edit: serde_json::from_str(&edit).unwrap_or_default(),
            saved_at,
            saved_by,
        })
        .collect())
}
