//! Plugin tools (migration `0014_plugin_tools.sql`): each session's plugin
//! and the tools it registered, kept so a restart loses none of them.
//!
//! A change writes the whole set in one transaction (the plugin row, then
//! its tools replaced in batches), so a reader never sees half of it.

use crate::domain::plugin::{
    PluginSet, PluginTool, PluginType, Schema, ToolDefinition, ToolStatus,
};
use crate::server::ServerError;
use sqlx::{QueryBuilder, Sqlite, SqlitePool};

/// Rows per multi-row insert (8 binds each, far under SQLite's limit).
const BATCH: usize = 200;

#[derive(sqlx::FromRow)]
struct PluginRow {
    session_id: String,
    plugin_type: String,
    plugin_version: String,
    capabilities: String,
    environment: String,
    constraints: Option<String>,
    updated_at: i64,
}

#[derive(sqlx::FromRow)]
struct ToolRow {
    session_id: String,
    name: String,
    description: String,
    parameters: String,
    status: String,
    registered_at: i64,
    usage_count: i64,
}

/// Writes `set` as `session`'s plugin, replacing what it had.
pub async fn put(db: &SqlitePool, session: &str, set: &PluginSet) -> Result<(), ServerError> {
    let mut tx = db.begin().await?;
    sqlx::query(
        "INSERT INTO session_plugins (session_id, plugin_type, plugin_version, capabilities, environment, constraints, updated_at)
         VALUES (?, ?, ?, ?, ?, ?, ?)
         ON CONFLICT (session_id) DO UPDATE SET plugin_type = excluded.plugin_type,
           plugin_version = excluded.plugin_version, capabilities = excluded.capabilities,
           environment = excluded.environment, constraints = excluded.constraints,
           updated_at = excluded.updated_at",
    )
    .bind(session)
    .bind(set.plugin_type.as_str())
    .bind(&set.plugin_version)
    .bind(serde_json::to_string(&set.capabilities).unwrap_or_default())
    .bind(serde_json::to_string(&set.environment).unwrap_or_default())
    .bind(set.constraints.as_ref().map(|c| c.to_string()))
    .bind(set.updated_at)
    .execute(&mut *tx)
    .await?;
    sqlx::query("DELETE FROM session_plugin_tools WHERE session_id = ?")
        .bind(session)
        .execute(&mut *tx)
        .await?;
    for (chunk_no, chunk) in set.tools.chunks(BATCH).enumerate() {
        let mut insert = QueryBuilder::<Sqlite>::new(
            "INSERT INTO session_plugin_tools (session_id, name, position, description, parameters, status, registered_at, usage_count) ",
        );
        insert.push_values(chunk.iter().enumerate(), |mut row, (i, tool)| {
            row.push_bind(session)
                .push_bind(&tool.definition.name)
                .push_bind((chunk_no * BATCH + i) as i64)
                .push_bind(&tool.definition.description)
                .push_bind(tool.definition.parameters.json())
                .push_bind(tool.status.as_str())
                .push_bind(tool.registered_at)
                .push_bind(tool.usage_count as i64);
        });
        insert.build().execute(&mut *tx).await?;
    }
    tx.commit().await?;
    Ok(())
}

/// Counts one relayed call of `tool` in `session`.
pub async fn count_use(db: &SqlitePool, session: &str, tool: &str) -> Result<(), ServerError> {
    sqlx::query(
        "UPDATE session_plugin_tools SET usage_count = usage_count + 1 WHERE session_id = ? AND name = ?",
    )
    .bind(session)
    .bind(tool)
    .execute(db)
    .await?;
    Ok(())
}

/// Every open session's plugin, for start-up.
pub async fn open_sessions(db: &SqlitePool) -> Result<Vec<(String, PluginSet)>, ServerError> {
    let plugins: Vec<PluginRow> = sqlx::query_as(
        "SELECT p.session_id, p.plugin_type, p.plugin_version, p.capabilities, p.environment, p.constraints, p.updated_at
         FROM session_plugins p JOIN agent_sessions s ON s.id = p.session_id
         WHERE s.ended_at IS NULL",
    )
    .fetch_all(db)
    .await?;
    let tools: Vec<ToolRow> = sqlx::query_as(
        "SELECT t.session_id, t.name, t.description, t.parameters, t.status, t.registered_at, t.usage_count
         FROM session_plugin_tools t JOIN agent_sessions s ON s.id = t.session_id
         WHERE s.ended_at IS NULL ORDER BY t.session_id, t.position",
    )
    .fetch_all(db)
    .await?;
    let mut out = Vec::with_capacity(plugins.len());
    for p in plugins {
        let mine = tools
            .iter()
            .filter(|t| t.session_id == p.session_id)
            .map(|t| PluginTool {
                definition: ToolDefinition {
                    name: t.name.clone(),
                    description: t.description.clone(),
                    parameters: Schema::new(
                        serde_json::from_str(&t.parameters).unwrap_or_default(),
                    ),
                },
                status: ToolStatus::parse(&t.status),
                registered_at: t.registered_at,
                usage_count: t.usage_count.max(0) as u64,
            })
            .collect();
        let plugin_type: PluginType =
            serde_json::from_value(serde_json::Value::String(p.plugin_type.clone()))
                .unwrap_or(PluginType::Custom);
        out.push((
            p.session_id,
            PluginSet {
                plugin_type,
                plugin_version: p.plugin_version,
                capabilities: serde_json::from_str(&p.capabilities).unwrap_or_default(),
                environment: serde_json::from_str(&p.environment).unwrap_or_default(),
                constraints: p.constraints.and_then(|c| serde_json::from_str(&c).ok()),
                tools: mine,
                updated_at: p.updated_at,
            },
        ));
    }
    Ok(out)
}
