//! The catalogue's versions (`catalogue_versions`) and the writes of its
//! tools: a change writes the tools and appends its version in one
//! `BEGIN IMMEDIATE` transaction, so the tools in force and the newest
//! version never disagree, and two changes made on the same version cannot
//! both land.

use crate::domain::bindings::VersionMeta;
use crate::domain::catalogue::CatalogueTool;
use crate::domain::catalogue_history::CatalogueVersion;
use crate::domain::time::format_utc;
use crate::error::ApiError;
use crate::server::platform::db::now;
use crate::server::platform::db::{Conn, Db};
use crate::server::store::is_unique_violation;
use crate::server::ServerError;

fn corrupt(e: impl std::fmt::Display) -> ServerError {
    ServerError::Config(format!("stored catalogue version is unreadable: {e}"))
}

#[derive(sqlx::FromRow)]
struct MetaRow {
    version: i64,
    summary: String,
    author_name: String,
    created_at: i64,
}

impl From<MetaRow> for VersionMeta {
    fn from(r: MetaRow) -> Self {
        VersionMeta {
            version: r.version,
            summary: r.summary,
            author: r.author_name,
            created_at: r.created_at,
        }
    }
}

/// The newest version's metadata; `None` before the first change.
pub async fn latest<'e>(
    db: impl sqlx::Executor<'e, Database = sqlx::Any>,
) -> Result<Option<VersionMeta>, ServerError> {
    Ok(sqlx::query_as::<_, MetaRow>(
        "SELECT version, summary, author_name, created_at FROM catalogue_versions
         ORDER BY version DESC LIMIT 1",
    )
    .fetch_optional(db)
    .await?
    .map(VersionMeta::from))
}

/// One version with its tools; 404 naming it when there is none.
pub async fn version(db: &Db, version: i64) -> Result<CatalogueVersion, ServerError> {
    let row: Option<(String, String, String, i64)> = sqlx::query_as(
        "SELECT document, summary, author_name, created_at FROM catalogue_versions WHERE version = $1",
    )
    .bind(version)
    .fetch_optional(db)
    .await?;
    let (document, summary, author, created_at) =
        row.ok_or_else(|| ApiError::NotFound(format!("Catalogue version {version}")))?;
    Ok(CatalogueVersion {
        meta: VersionMeta {
            version,
            summary,
            author,
            created_at,
        },
        tools: serde_json::from_str(&document).map_err(corrupt)?,
    })
}

/// Up to `limit` versions' metadata older than `before` (all when `None`),
/// newest first.
pub async fn history(
    db: &Db,
    before: Option<i64>,
    limit: i64,
) -> Result<Vec<VersionMeta>, ServerError> {
    let rows: Vec<MetaRow> = sqlx::query_as(
        "SELECT version, summary, author_name, created_at FROM catalogue_versions
         WHERE version < $1 ORDER BY version DESC LIMIT $2",
    )
    .bind(before.unwrap_or(i64::MAX))
    .bind(limit)
    .fetch_all(db)
    .await?;
    Ok(rows.into_iter().map(VersionMeta::from).collect())
}

/// A change to append: the version it was made on, the tools it writes
/// (each with whether it is new), the whole catalogue after it, and who
/// made it.
pub struct NewVersion<'a> {
    /// The version the change was planned on (0: none yet).
    pub base: i64,
    /// The tools to write, each with whether it is new.
    pub changes: &'a [(CatalogueTool, bool)],
    /// Every tool after the change, in catalogue order: the version's
    /// document.
    pub tools: &'a [CatalogueTool],
    /// One line: what changed.
    pub summary: &'a str,
    /// The admin's account, if an admin made it.
    pub author_id: Option<i64>,
    /// Who made it.
    pub author_name: &'a str,
}

/// Writes `change`'s tools and appends it as version `base + 1`, in one
/// transaction. If the catalogue is no longer at `base` — someone changed
/// it since — nothing is written: 412 naming who changed it and when.
pub async fn append(db: &Db, change: NewVersion<'_>) -> Result<i64, ServerError> {
    let document = serde_json::to_string(change.tools).map_err(corrupt)?;
    let mut tx = crate::server::platform::db::begin_write(db).await?;
    let newest = latest(&mut *tx).await?;
    if newest.as_ref().map_or(0, |m| m.version) != change.base {
        return Err(stale(newest).into());
    }
    for (tool, create) in change.changes {
        put_tool(&mut tx, tool, *create).await?;
    }
    let next = change.base + 1;
    let inserted = sqlx::query(
        "INSERT INTO catalogue_versions (version, document, summary, author_id, author_name, created_at)
         VALUES ($1, $2, $3, $4, $5, $6)",
    )
    .bind(next)
    .bind(document)
    .bind(change.summary)
    .bind(change.author_id)
    .bind(change.author_name)
    .bind(now())
    .execute(&mut *tx)
    .await;
    match inserted {
        Ok(_) => {}
        Err(e) if is_unique_violation(&e, "catalogue_versions.version") => {
            return Err(stale(None).into())
        }
        Err(e) => return Err(e.into()),
    }
    tx.commit().await?;
    Ok(next)
}

/// The refusal of a change planned on an older version.
pub fn stale(newest: Option<VersionMeta>) -> ApiError {
    ApiError::PreconditionFailed(match newest {
        Some(m) => format!(
            "The catalogue was changed by {} at {} (version {}) — read it again and reapply your change.",
            m.author,
            format_utc(m.created_at),
            m.version
        ),
        None => "The catalogue was changed meanwhile — read it again and reapply your change.".into(),
    })
}

/// Adds a tool (`create`) or replaces an existing one's details, inside the
/// change's transaction.
async fn put_tool(tx: &mut Conn, tool: &CatalogueTool, create: bool) -> Result<(), ServerError> {
    let parameters = tool.parameters.to_string();
    let requires = serde_json::to_string(&tool.requires).unwrap_or_else(|_| "[]".into());
    let effects = serde_json::to_string(&tool.effects).unwrap_or_else(|_| "[]".into());
    let result = if create {
        sqlx::query(
            "INSERT INTO catalogue_tools (id, name, description, category, parameters, requires, effects, ultravox_builtin, position, updated_at)
             VALUES ($1, $2, $3, $4, $5, $6, $7, $8, (SELECT COALESCE(MAX(position), 0) + 1 FROM catalogue_tools), $9)",
        )
        .bind(tool.id.as_str())
        .bind(tool.name.trim())
        .bind(tool.description.trim())
        .bind(tool.category.trim())
        .bind(&parameters)
        .bind(&requires)
        .bind(&effects)
        .bind(i64::from(tool.ultravox_builtin))
        .bind(now())
        .execute(&mut *tx)
        .await
    } else {
        sqlx::query(
            "UPDATE catalogue_tools SET name = $1, description = $2, category = $3, parameters = $4,
             requires = $5, effects = $6, ultravox_builtin = $7, updated_at = $8 WHERE id = $9",
        )
        .bind(tool.name.trim())
        .bind(tool.description.trim())
        .bind(tool.category.trim())
        .bind(&parameters)
        .bind(&requires)
        .bind(&effects)
        .bind(i64::from(tool.ultravox_builtin))
        .bind(now())
        .bind(tool.id.as_str())
        .execute(&mut *tx)
        .await
    };
    match result {
        Ok(done) if done.rows_affected() == 1 => Ok(()),
        Ok(_) => Err(ApiError::NotFound(format!("Tool \"{}\"", tool.id)).into()),
        Err(e) if is_unique_violation(&e, "catalogue_tools.id") => Err(ApiError::Conflict(
            format!("A tool with the id \"{}\" already exists.", tool.id),
        )
        .into()),
        Err(e) => Err(e.into()),
    }
}
