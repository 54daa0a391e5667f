//! Connected MCP servers and the catalogue tools imported from them
//! (migrations `0025_mcp_servers.sql`, `0026_mcp_stdio_servers.sql`).
//!
//! A server's headers and a stdio server's variables are written here and
//! read back only by [`headers_of`] and [`env_of`], for the client that
//! sends them upstream or hands them to the process: no row struct that
//! reaches an answer carries them.

use crate::domain::mcp_server::{McpServerName, McpServerStatus, UpstreamHeaders, UpstreamUrl};
use crate::domain::mcp_stdio::{Endpoint, Reach, StdioCommand, StdioEnv};
use crate::error::ApiError;
use crate::server::platform::db::{Db, Flag};
use crate::server::store::is_unique_violation;
use crate::server::ServerError;

/// A connected server as admins see it: never its headers.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct McpServerRow {
    /// Its id.
    pub id: i64,
    /// Its name (the prefix of its tools' ids).
    pub name: McpServerName,
    /// Its Streamable HTTP URL, or the command that starts it.
    pub endpoint: Endpoint,
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
    url: Option<String>,
    command: Option<String>,
    status: String,
    last_error: Option<String>,
}

impl Raw {
    fn into_row(self) -> Result<McpServerRow, ServerError> {
        let endpoint = match (self.url, self.command) {
            (Some(url), _) => Endpoint::Url(UpstreamUrl::parse(&url).map_err(ApiError::Invalid)?),
            (None, Some(command)) => {
                let parts: Vec<String> = serde_json::from_str(&command).map_err(|_| {
                    ServerError::Config(format!(
                        "MCP server {}'s stored command is unreadable",
                        self.id
                    ))
                })?;
                Endpoint::Command(StdioCommand::parse(parts).map_err(ApiError::Invalid)?)
            }
            (None, None) => {
                return Err(ServerError::Config(format!(
                    "MCP server {} has neither a URL nor a command",
                    self.id
                )))
            }
        };
        Ok(McpServerRow {
            id: self.id,
            name: McpServerName::parse(&self.name).map_err(ApiError::Invalid)?,
            endpoint,
            status: McpServerStatus::parse(&self.status),
            last_error: self.last_error,
        })
    }
}

/// Stores a new server (status `connecting`); its id. 409 if the name is
/// taken, 422 naming `name` past `max` servers; nothing stored then.
pub async fn insert(
    db: &Db,
    name: &McpServerName,
    reach: &Reach,
    now: i64,
    max: usize,
) -> Result<i64, ServerError> {
    let mut tx = crate::server::platform::db::begin_write(db).await?;
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
    let json = |value: Result<String, serde_json::Error>| {
        value.map_err(|e| ServerError::Config(format!("not serialisable: {e}")))
    };
    let headers = json(serde_json::to_string(&reach.headers))?;
    let env = json(serde_json::to_string(&reach.env))?;
    let (url, command) = match &reach.endpoint {
        Endpoint::Url(url) => (Some(url.as_str().to_owned()), None),
        Endpoint::Command(command) => (None, Some(json(serde_json::to_string(command))?)),
    };
    let inserted = sqlx::query_scalar::<_, i64>(
        "INSERT INTO mcp_servers (name, url, headers, command, env, status, created_at, updated_at)
         VALUES ($1, $2, $3, $4, $5, 'connecting', $6, $7) RETURNING id",
    )
    .bind(name.as_str())
    .bind(url)
    .bind(headers)
    .bind(command)
    .bind(env)
    .bind(now)
    .bind(now)
    .fetch_one(&mut *tx)
    .await;
    let id = match inserted {
        Ok(done) => done,
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
pub async fn all(db: &Db) -> Result<Vec<McpServerRow>, ServerError> {
    let rows: Vec<Raw> = sqlx::query_as(
        "SELECT id, name, url, command, status, last_error FROM mcp_servers ORDER BY name",
    )
    .fetch_all(db)
    .await?;
    rows.into_iter().map(Raw::into_row).collect()
}

/// Server `id`, if it exists.
pub async fn get(db: &Db, id: i64) -> Result<Option<McpServerRow>, ServerError> {
    let row: Option<Raw> = sqlx::query_as(
        "SELECT id, name, url, command, status, last_error FROM mcp_servers WHERE id = $1",
    )
    .bind(id)
    .fetch_optional(db)
    .await?;
    row.map(Raw::into_row).transpose()
}

/// Server `id`'s headers, for the client that sends them upstream only.
pub async fn headers_of(db: &Db, id: i64) -> Result<UpstreamHeaders, ServerError> {
    let raw: Option<String> = sqlx::query_scalar("SELECT headers FROM mcp_servers WHERE id = $1")
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

/// Stdio server `id`'s variables, for the client that starts its process
/// only.
pub async fn env_of(db: &Db, id: i64) -> Result<StdioEnv, ServerError> {
    let raw: Option<String> = sqlx::query_scalar("SELECT env FROM mcp_servers WHERE id = $1")
        .bind(id)
        .fetch_optional(db)
        .await?;
    Ok(match raw {
        // The error names no value: a variable is never echoed.
        Some(raw) => serde_json::from_str(&raw).map_err(|_| {
            ServerError::Config(format!("MCP server {id}'s stored env is unreadable"))
        })?,
        None => StdioEnv::default(),
    })
}

/// Sets server `id`'s status and last error.
pub async fn set_status(
    db: &Db,
    id: i64,
    status: McpServerStatus,
    last_error: Option<&str>,
    now: i64,
) -> Result<(), ServerError> {
    sqlx::query(
        "UPDATE mcp_servers SET status = $1, last_error = $2, updated_at = $3 WHERE id = $4",
    )
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
pub async fn delete(db: &Db, id: i64) -> Result<bool, ServerError> {
    let mut tx = crate::server::platform::db::begin_write(db).await?;
    sqlx::query("UPDATE mcp_server_tools SET available = 0 WHERE server_id = $1")
        .bind(id)
        .execute(&mut *tx)
        .await?;
    let done = sqlx::query("DELETE FROM mcp_servers WHERE id = $1")
        .bind(id)
        .execute(&mut *tx)
        .await?;
    tx.commit().await?;
    Ok(done.rows_affected() > 0)
}

/// Every imported tool's link.
pub async fn links(db: &Db) -> Result<Vec<LinkRow>, ServerError> {
    let rows: Vec<(String, Option<i64>, String, String, Flag)> = sqlx::query_as(
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
                available: available.0,
            },
        )
        .collect())
}

/// Makes `listed` server `server_id`'s tools, available, and every other
/// tool linked to it unavailable, in one transaction.
pub async fn set_links(db: &Db, server_id: i64, listed: &[LinkRow]) -> Result<(), ServerError> {
    let mut tx = crate::server::platform::db::begin_write(db).await?;
    sqlx::query("UPDATE mcp_server_tools SET available = 0 WHERE server_id = $1")
        .bind(server_id)
        .execute(&mut *tx)
        .await?;
    for link in listed {
        sqlx::query(
            "INSERT INTO mcp_server_tools (tool_id, server_id, upstream_name, upstream_description, available)
             VALUES ($1, $2, $3, $4, 1)
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

#[cfg(test)]
mod tests {
    use super::*;
    use std::borrow::Cow;

    #[tokio::test]
    async fn the_stdio_migration_keeps_servers_their_ids_and_their_tools_links() {
        // Foreign keys on, as `platform::db` opens the database.
        let pool = crate::server::platform::db::memory().await;
        let all = sqlx::migrate!("./migrations/sqlite");
        let mut before = sqlx::migrate!("./migrations/sqlite");
        before.migrations = Cow::Owned(all.iter().filter(|m| m.version < 26).cloned().collect());
        before.run(&pool).await.unwrap();
        for sql in [
            "INSERT INTO mcp_servers (id, name, url, headers, status, created_at, updated_at)
             VALUES (3, 'kept', 'http://127.0.0.1:1/mcp', '{\"x-key\":\"k\"}', 'connected', 1, 2)",
            "INSERT INTO mcp_servers (id, name, url, created_at, updated_at)
             VALUES (7, 'gone', 'http://127.0.0.1:2/mcp', 1, 2)",
            "DELETE FROM mcp_servers WHERE id = 7",
            "INSERT INTO mcp_server_tools VALUES ('kept__echo', 3, 'echo', 'Echoes.', 1)",
            "INSERT INTO mcp_server_tools VALUES ('gone__add', NULL, 'add', 'Adds.', 0)",
        ] {
            sqlx::query(sql).execute(&pool).await.unwrap();
        }
        all.run(&pool).await.unwrap();
        let kept = get(&pool, 3).await.unwrap().unwrap();
        assert_eq!(kept.name.as_str(), "kept");
        assert!(
            matches!(&kept.endpoint, Endpoint::Url(u) if u.as_str() == "http://127.0.0.1:1/mcp")
        );
        assert_eq!(kept.status, McpServerStatus::Connected);
        assert_eq!(headers_of(&pool, 3).await.unwrap().iter().count(), 1);
        let links = links(&pool).await.unwrap();
        let server_of = |tool: &str| links.iter().find(|l| l.tool_id == tool).unwrap().server_id;
        assert_eq!(server_of("kept__echo"), Some(3));
        assert_eq!(server_of("gone__add"), None);
        // A new server never takes a removed one's id.
        let reach = Reach::parse(
            None,
            Default::default(),
            Some(vec!["node".into(), "server.js".into()]),
            [("TOKEN".to_owned(), "t".to_owned())].into(),
            true,
        )
        .unwrap();
        let name = McpServerName::parse("local").unwrap();
        let id = insert(&pool, &name, &reach, 3, 50).await.unwrap();
        assert_eq!(id, 8);
        let local = get(&pool, id).await.unwrap().unwrap();
        assert_eq!(local.endpoint, reach.endpoint);
        assert_eq!(env_of(&pool, id).await.unwrap(), reach.env);
        // Neither or both of url and command: refused by the table itself.
        let both = sqlx::query(
            "INSERT INTO mcp_servers (name, url, command, created_at, updated_at)
             VALUES ('both', 'http://x', '[\"node\"]', 1, 1)",
        )
        .execute(&pool)
        .await;
        assert!(both.is_err());
    }
}
