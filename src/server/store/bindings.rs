//! The catalogue's tools and workflows as they stand, and the versioned
//! bindings. (Tool writes go with their version: `store::catalogue`.)

use crate::domain::bindings::ToolBindings;
use crate::domain::bindings::{BindingsVersion, VersionMeta};
use crate::domain::catalogue::{CatalogueTool, Workflow};
use crate::domain::ids::{ToolId, WorkflowId};
use crate::domain::time::format_utc;
use crate::error::ApiError;
use crate::server::platform::db::now;
use crate::server::platform::db::Db;
use crate::server::store::is_unique_violation;
use crate::server::ServerError;
use std::collections::HashSet;

fn corrupt(what: &str, e: impl std::fmt::Display) -> ServerError {
    ServerError::Config(format!("stored {what} is unreadable: {e}"))
}

/// How many tools the catalogue holds (zero on a new database).
pub async fn tool_count(db: &Db) -> Result<i64, ServerError> {
    Ok(sqlx::query_scalar("SELECT COUNT(*) FROM catalogue_tools")
        .fetch_one(db)
        .await?)
}

/// Every catalogue tool, in catalogue order (from the pool, or inside a
/// transaction).
pub async fn tools<'e>(
    db: impl sqlx::Executor<'e, Database = sqlx::Any>,
) -> Result<Vec<CatalogueTool>, ServerError> {
    #[derive(sqlx::FromRow)]
    struct Row {
        id: String,
        name: String,
        description: String,
        category: String,
        parameters: String,
        requires: String,
        effects: String,
        #[sqlx(try_from = "crate::server::platform::db::Flag")]
        ultravox_builtin: bool,
    }
    let rows: Vec<Row> = sqlx::query_as(
        "SELECT id, name, description, category, parameters, requires, effects, ultravox_builtin
         FROM catalogue_tools ORDER BY position, id",
    )
    .fetch_all(db)
    .await?;
    rows.into_iter()
        .map(|r| {
            Ok(CatalogueTool {
                id: ToolId::parse(&r.id).map_err(|e| corrupt("tool id", e))?,
                name: r.name,
                description: r.description,
                category: r.category,
                parameters: serde_json::from_str(&r.parameters)
                    .map_err(|e| corrupt("tool schema", e))?,
                requires: serde_json::from_str(&r.requires)
                    .map_err(|e| corrupt("tool requirements", e))?,
                effects: serde_json::from_str(&r.effects)
                    .map_err(|e| corrupt("tool effects", e))?,
                ultravox_builtin: r.ultravox_builtin,
            })
        })
        .collect()
}

/// Every workflow, in order.
pub async fn workflows(db: &Db) -> Result<Vec<Workflow>, ServerError> {
    let rows: Vec<(String, String, String)> =
        sqlx::query_as("SELECT id, name, description FROM workflows ORDER BY position, id")
            .fetch_all(db)
            .await?;
    rows.into_iter()
        .map(|(id, name, description)| {
            Ok(Workflow {
                id: WorkflowId::parse(&id).map_err(|e| corrupt("workflow id", e))?,
                name,
                description,
            })
        })
        .collect()
}

/// The ids bindings may name.
pub async fn known_ids(db: &Db) -> Result<(HashSet<String>, HashSet<String>), ServerError> {
    let tools: Vec<String> = sqlx::query_scalar("SELECT id FROM catalogue_tools")
        .fetch_all(db)
        .await?;
    let workflows: Vec<String> = sqlx::query_scalar("SELECT id FROM workflows")
        .fetch_all(db)
        .await?;
    Ok((tools.into_iter().collect(), workflows.into_iter().collect()))
}

/// Adds a workflow (`create`) or replaces an existing one's details.
pub async fn put_workflow(db: &Db, workflow: &Workflow, create: bool) -> Result<(), ServerError> {
    let result = if create {
        sqlx::query(
            "INSERT INTO workflows (id, name, description, position)
             VALUES ($1, $2, $3, (SELECT COALESCE(MAX(position), 0) + 1 FROM workflows))",
        )
        .bind(workflow.id.as_str())
        .bind(workflow.name.trim())
        .bind(workflow.description.trim())
        .execute(db)
        .await
    } else {
        sqlx::query("UPDATE workflows SET name = $1, description = $2 WHERE id = $3")
            .bind(workflow.name.trim())
            .bind(workflow.description.trim())
            .bind(workflow.id.as_str())
            .execute(db)
            .await
    };
    match result {
        Ok(done) if done.rows_affected() == 1 => Ok(()),
        Ok(_) => Err(ApiError::NotFound(format!("Workflow \"{}\"", workflow.id)).into()),
        Err(e) if is_unique_violation(&e, "workflows.id") => Err(ApiError::Conflict(format!(
            "A workflow with the id \"{}\" already exists.",
            workflow.id
        ))
        .into()),
        Err(e) => Err(e.into()),
    }
}

#[derive(sqlx::FromRow)]
struct VersionRow {
    version: i64,
    document: String,
    summary: String,
    author_name: String,
    created_at: i64,
}

impl VersionRow {
    fn into_version(self) -> Result<BindingsVersion, ServerError> {
        Ok(BindingsVersion {
            bindings: serde_json::from_str(&self.document).map_err(|e| corrupt("bindings", e))?,
            meta: VersionMeta {
                version: self.version,
                summary: self.summary,
                author: self.author_name,
                created_at: self.created_at,
            },
        })
    }
}

/// The newest version, if any was ever saved.
pub async fn current(db: &Db) -> Result<Option<BindingsVersion>, ServerError> {
    sqlx::query_as::<_, VersionRow>(
        "SELECT version, document, summary, author_name, created_at FROM bindings_versions ORDER BY version DESC LIMIT 1",
    )
    .fetch_optional(db)
    .await?
    .map(VersionRow::into_version)
    .transpose()
}

/// One version.
pub async fn version(db: &Db, version: i64) -> Result<BindingsVersion, ServerError> {
    sqlx::query_as::<_, VersionRow>(
        "SELECT version, document, summary, author_name, created_at FROM bindings_versions WHERE version = $1",
    )
    .bind(version)
    .fetch_optional(db)
    .await?
    .ok_or_else(|| ApiError::NotFound(format!("Bindings version {version}")))?
    .into_version()
}

/// Every version's metadata, newest first.
pub async fn history(db: &Db) -> Result<Vec<VersionMeta>, ServerError> {
    let rows: Vec<(i64, String, String, i64)> = sqlx::query_as(
        "SELECT version, summary, author_name, created_at FROM bindings_versions ORDER BY version DESC",
    )
    .fetch_all(db)
    .await?;
    Ok(rows
        .into_iter()
        .map(|(version, summary, author, created_at)| VersionMeta {
            version,
            summary,
            author,
            created_at,
        })
        .collect())
}

/// Stores `bindings` (already validated and normalised) as version
/// `expected + 1`. If that version exists — someone saved first — nothing
/// is written and the conflict names who and when.
pub async fn save(
    db: &Db,
    expected: i64,
    bindings: &ToolBindings,
    summary: &str,
    author_id: Option<i64>,
    author_name: &str,
) -> Result<i64, ServerError> {
    let document = serde_json::to_string(bindings).map_err(|e| corrupt("bindings", e))?;
    let latest: Option<i64> = sqlx::query_scalar("SELECT MAX(version) FROM bindings_versions")
        .fetch_one(db)
        .await?;
    if latest.unwrap_or(0) != expected {
        return Err(stale(db).await);
    }
    let result = sqlx::query(
        "INSERT INTO bindings_versions (version, document, summary, author_id, author_name, created_at)
         VALUES ($1, $2, $3, $4, $5, $6)",
    )
    .bind(expected + 1)
    .bind(document)
    .bind(summary)
    .bind(author_id)
    .bind(author_name)
    .bind(now())
    .execute(db)
    .await;
    match result {
        Ok(_) => Ok(expected + 1),
        Err(e)
            if e.as_database_error()
                .is_some_and(|d| d.is_unique_violation()) =>
        {
            Err(stale(db).await)
        }
        Err(e) => Err(e.into()),
    }
}

async fn stale(db: &Db) -> ServerError {
    match current(db).await {
        Ok(Some(now)) => ApiError::Conflict(format!(
            "The bindings were changed by {} at {} (version {}) — reload.",
            now.meta.author,
            format_utc(now.meta.created_at),
            now.meta.version
        ))
        .into(),
        Ok(None) => {
            ApiError::Conflict("The bindings were changed elsewhere — reload.".into()).into()
        }
        Err(e) => e,
    }
}
