//! Connected MCP servers and the catalogue tools imported from them
//! (migration `0025_mcp_servers.sql`).
//!
//! A server's headers are written here and read back only by
//! [`headers_of`], for the client that sends them upstream: no row struct
//! that reaches an answer carries them.

use crate::domain::mcp_server::{McpServerName, McpServerStatus, UpstreamHeaders, UpstreamUrl};
use crate::error::ApiError;
use crate::server::store::is_unique_violation;
use crate::server::ServerError;
use sqlx::SqlitePool;

/// A connected server as admins see it: never its headers.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct McpServerRow {
    /// Its id.
    pub id: i64,
    /// Its name (the prefix of its tools' ids).
    pub name: McpServerName,
    /// Its Streamable HTTP endpoint.
    pub url: UpstreamUrl,
    /// Whether it is in use.
    pub status: McpServerStatus,
    /// Why the last attempt failed, or which tools were left out.
    pub last_error: Option<String>,
}

/// A catalogue tool imported from a server.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LinkRow {
    /// The catalogue tool's id.
    pub tool_id: String,
    /// Its server (`None`: the server was removed).
    pub server_id: Option<i64>,
    /// Its name upstream.
    pub upstream_name: String,
    /// The description the upstream last gave.
    pub upstream_description: String,
    /// Whether the upstream still lists it.
    pub available: bool,
}

#[derive(sqlx::FromRow)]
struct Raw {
    id: i64,
    name: String,
    url: String,
    status: String,
    last_error: Option<String>,
}

impl Raw {
    fn into_row(self) -> Result<McpServerRow, ServerError> {
        Ok(McpServerRow {
            id: self.id,
            name: McpServerName::parse(&self.name).map_err(ApiError::Invalid)?,
            url: UpstreamUrl::parse(&self.url).map_err(ApiError::Invalid)?,
            status: McpServerStatus::parse(&self.status),
            last_error: self.last_error,
        })
    }
}

/// Stores a new server (status `connecting`); its id. 409 if the name is
/// taken, 422 naming `name` past `max` servers; nothing stored then.
pub async fn insert(
    db: &SqlitePool,
    name: &McpServerName,
    url: &UpstreamUrl,
    headers: &UpstreamHeaders,
    now: i64,
    max: usize,
) -> Result<i64, ServerError> {
    let mut tx = db.begin_with("BEGIN IMMEDIATE").await?;
    let count: i64 = sqlx::query_scalar("SELECT COUNT(*) FROM mcp_servers")
        .fetch_one(&mut *tx)
        .await?;
    if count as usize >= max {
        return Err(ApiError::invalid(
            "name",
            format!("at most {max} MCP servers may be connected"),
        )
        .into());
    }
    let headers = serde_json::to_string(headers)
        .map_err(|e| ServerError::Config(format!("headers not serialisable: {e}")))?;
    let inserted = sqlx::query(
        "INSERT INTO mcp_servers (name, url, headers, status, created_at, updated_at)
         VALUES (?, ?, ?, 'connecting', ?, ?)",
    )
    .bind(name.as_str())
    .bind(url.as_str())
    .bind(headers)
    .bind(now)
    .bind(now)
    .execute(&mut *tx)
    .await;
    let id = match inserted {
        Ok(done) => done.last_insert_rowid(),
        Err(e) if is_unique_violation(&e, "mcp_servers.name") => {
            return Err(ApiError::Conflict(format!(
                "An MCP server named \"{name}\" already exists."
            ))
            .into())
        }
        Err(e) => return Err(e.into()),
    };
    tx.commit().await?;
    Ok(id)
}

/// Every server, by name.
pub async fn all(db: &SqlitePool) -> Result<Vec<McpServerRow>, ServerError> {
    let rows: Vec<Raw> =
        sqlx::query_as("SELECT id, name, url, status, last_error FROM mcp_servers ORDER BY name")
            .fetch_all(db)
            .await?;
    rows.into_iter().map(Raw::into_row).collect()
}

/// Server `id`, if it exists.
pub async fn get(db: &SqlitePool, id: i64) -> Result<Option<McpServerRow>, ServerError> {
    let row: Option<Raw> =
        sqlx::query_as("SELECT id, name, url, status, last_error FROM mcp_servers WHERE id = ?")
            .bind(id)
            .fetch_optional(db)
            .await?;
    row.map(Raw::into_row).transpose()
}

/// Server `id`'s headers, for the client that sends them upstream only.
pub async fn headers_of(db: &SqlitePool, id: i64) -> Result<UpstreamHeaders, ServerError> {
    let raw: Option<String> = sqlx::query_scalar("SELECT headers FROM mcp_servers WHERE id = ?")
        .bind(id)
        .fetch_optional(db)
        .await?;
    Ok(match raw {
        // The error names no value: a header is never echoed.
        Some(raw) => serde_json::from_str(&raw).map_err(|_| {
            ServerError::Config(format!("MCP server {id}'s stored headers are unreadable"))
        })?,
        None => UpstreamHeaders::default(),
    })
}

/// Sets server `id`'s status and last error.
pub async fn set_status(
    db: &SqlitePool,
    id: i64,
    status: McpServerStatus,
    last_error: Option<&str>,
    now: i64,
) -> Result<(), ServerError> {
    sqlx::query("UPDATE mcp_servers SET status = ?, last_error = ?, updated_at = ? WHERE id = ?")
        .bind(status.as_str())
        .bind(last_error)
        .bind(now)
        .bind(id)
        .execute(db)
        .await?;
    Ok(())
}

/// Removes server `id` (its tools stay linked to no server, unavailable);
/// whether it existed.
pub async fn delete(db: &SqlitePool, id: i64) -> Result<bool, ServerError> {
    let mut tx = db.begin_with("BEGIN IMMEDIATE").await?;
    sqlx::query("UPDATE mcp_server_tools SET available = 0 WHERE server_id = ?")
        .bind(id)
        .execute(&mut *tx)
        .await?;
    let done = sqlx::query("DELETE FROM mcp_servers WHERE id = ?")
        .bind(id)
        .execute(&mut *tx)
        .await?;
    tx.commit().await?;
    Ok(done.rows_affected() > 0)
}

/// Every imported tool's link.
pub async fn links(db: &SqlitePool) -> Result<Vec<LinkRow>, ServerError> {
    let rows: Vec<(String, Option<i64>, String, String, bool)> = sqlx::query_as(
        "SELECT tool_id, server_id, upstream_name, upstream_description, available
         FROM mcp_server_tools ORDER BY tool_id",
    )
    .fetch_all(db)
    .await?;
    Ok(rows
        .into_iter()
        .map(
            |(tool_id, server_id, upstream_name, upstream_description, available)| LinkRow {
                tool_id,
                server_id,
                upstream_name,
                upstream_description,
                available,
            },
        )
        .collect())
}

/// Makes `listed` server `server_id`'s tools, available, and every other
/// tool linked to it unavailable, in one transaction.
pub async fn set_links(
    db: &SqlitePool,
    server_id: i64,
    listed: &[LinkRow],
) -> Result<(), ServerError> {
    let mut tx = db.begin_with("BEGIN IMMEDIATE").await?;
    sqlx::query("UPDATE mcp_server_tools SET available = 0 WHERE server_id = ?")
        .bind(server_id)
        .execute(&mut *tx)
        .await?;
    for link in listed {
        sqlx::query(
            "INSERT INTO mcp_server_tools (tool_id, server_id, upstream_name, upstream_description, available)
             VALUES (?, ?, ?, ?, 1)
             ON CONFLICT (tool_id) DO UPDATE SET server_id = excluded.server_id,
               upstream_name = excluded.upstream_name,
               upstream_description = excluded.upstream_description, available = 1",
        )
        .bind(&link.tool_id)
        .bind(server_id)
        .bind(&link.upstream_name)
        .bind(&link.upstream_description)
        .execute(&mut *tx)
        .await?;
    }
    tx.commit().await?;
    Ok(())
}
