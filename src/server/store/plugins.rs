//! Plugin tools (migrations `0014_plugin_tools.sql`, `0016_plugin_tools_as_document.sql`):
//! each session's plugin and the tools it registered, kept so a restart
//! loses none of them.
//!
//! A change replaces the whole set, so the tools are one JSON document on
//! the plugin's row, written in one statement (a reader never sees half of
//! it); use counts, bumped by every relayed call, are rows of their own.
//!
//! The document is stored LZ4-compressed (`tools_lz4`, migration 0033):
//! a thousand tools' schemas are about 1 MB of JSON, much of it the same
//! keys and shapes again, which SQLite wrote to its log and then to the
//! database file on every registration; packed, a few tens of kilobytes,
//! in a fraction of a millisecond. A row written before keeps its
//! document as text in `tools`, and is read from there.

use crate::domain::plugin::{
    PluginSet, PluginTool, PluginType, Schema, ToolDefinition, ToolStatus,
};
use crate::server::platform::db::{backend_of, json_ids, Db};
use crate::server::ServerError;
use serde::{Deserialize, Serialize};
use std::collections::HashMap;

#[derive(sqlx::FromRow)]
struct PluginRow {
    session_id: String,
    plugin_type: String,
    plugin_version: String,
    capabilities: String,
    environment: String,
    constraints: Option<String>,
    tools: String,
    tools_lz4: Option<Vec<u8>>,
    updated_at: i64,
}

/// The most a stored document may unpack to: more than any set the limits
/// let in (1 MiB of texts, plus each tool's fixed keys at the highest
/// `PLUGIN_TOOLS_MAX`), so a damaged length cannot make a read allocate
/// gigabytes.
const UNPACKED_MAX_BYTES: usize = 16 * 1024 * 1024;

/// `document` packed for `tools_lz4`: its length as four little-endian
/// bytes, then one LZ4 block.
fn pack(document: &[u8]) -> Vec<u8> {
    lz4_flex::block::compress_prepend_size(document)
}

/// The document [`pack`] packed, or why it cannot be read.
fn unpack(packed: &[u8]) -> Result<Vec<u8>, String> {
    let (len, block) = packed
        .split_first_chunk::<4>()
        .ok_or("shorter than its length")?;
    let len = u32::from_le_bytes(*len) as usize;
    if len > UNPACKED_MAX_BYTES {
        return Err(format!(
            "says it holds {len} bytes, over {UNPACKED_MAX_BYTES}"
        ));
    }
    let document = lz4_flex::block::decompress(block, len).map_err(|e| e.to_string())?;
    if document.len() != len {
        return Err(format!(
            "holds {} bytes, not the {len} it says",
            document.len()
        ));
    }
    Ok(document)
}

/// A tool as the document holds it (its use count is kept apart):
/// written from borrowed text, read into owned.
#[derive(Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
struct StoredTool<S, P> {
    name: S,
    description: S,
    parameters: P,
    status: S,
    registered_at: i64,
}

/// Writes `set` as `session`'s plugin, replacing what it had; the use
/// counts of tools no longer in it go with them.
pub async fn put(db: &Db, session: &str, set: &PluginSet) -> Result<(), ServerError> {
    let tools: Vec<StoredTool<&str, &Schema>> = set
        .tools
        .iter()
        .map(|t| StoredTool {
            name: t.definition.name.as_str(),
            description: t.definition.description.as_str(),
            parameters: &t.definition.parameters,
            status: t.status.as_str(),
            registered_at: t.registered_at,
        })
        .collect();
    let names: Vec<&str> = set
        .tools
        .iter()
        .map(|t| t.definition.name.as_str())
        .collect();
    // Sized for the whole document up front: grown by doubling, a 1 MB
    // document was copied a dozen times, onto fresh pages each time.
    let mut document = Vec::with_capacity(document_bytes(set));
    serde_json::to_writer(&mut document, &tools).map_err(|e| sqlx::Error::Encode(e.into()))?;
    let mut tx = db.begin().await?;
    sqlx::query(
        "INSERT INTO session_plugins (session_id, plugin_type, plugin_version, capabilities, environment, constraints, tools, tools_lz4, updated_at)
         VALUES ($1, $2, $3, $4, $5, $6, '', $7, $8)
         ON CONFLICT (session_id) DO UPDATE SET plugin_type = excluded.plugin_type,
           plugin_version = excluded.plugin_version, capabilities = excluded.capabilities,
           environment = excluded.environment, constraints = excluded.constraints,
           tools = excluded.tools, tools_lz4 = excluded.tools_lz4, updated_at = excluded.updated_at",
    )
    .bind(session)
    .bind(set.plugin_type.as_str())
    .bind(&set.plugin_version)
    .bind(serde_json::to_string(&set.capabilities).unwrap_or_default())
    .bind(serde_json::to_string(&set.environment).unwrap_or_default())
    .bind(set.constraints.as_ref().map(|c| c.to_string()))
    .bind(pack(&document))
    .bind(set.updated_at)
    .execute(&mut *tx)
    .await?;
    let listed = json_ids(backend_of(&tx), 2);
    sqlx::query(&format!(
        "DELETE FROM session_plugin_tool_uses WHERE session_id = $1 AND name NOT IN ({listed})"
    ))
    .bind(session)
    .bind(serde_json::to_string(&names).unwrap_or_default())
    .execute(&mut *tx)
    .await?;
    tx.commit().await?;
    Ok(())
}

/// Room for `set`'s document: its texts, and each tool's keys, status and
/// time (under 80 bytes).
fn document_bytes(set: &PluginSet) -> usize {
    2 + set
        .tools
        .iter()
        .map(|t| {
            80 + t.definition.name.len()
                + t.definition.description.len()
                + t.definition.parameters.json().len()
        })
        .sum::<usize>()
}

/// Counts one relayed call of `tool` in `session`.
pub async fn count_use(db: &Db, session: &str, tool: &str) -> Result<(), ServerError> {
    sqlx::query(
        "INSERT INTO session_plugin_tool_uses (session_id, name, count) VALUES ($1, $2, 1)
         ON CONFLICT (session_id, name) DO UPDATE SET count = session_plugin_tool_uses.count + 1",
    )
    .bind(session)
    .bind(tool)
    .execute(db)
    .await?;
    Ok(())
}

/// Every open session's plugin, for start-up.
pub async fn open_sessions(db: &Db) -> Result<Vec<(String, PluginSet)>, ServerError> {
    let plugins: Vec<PluginRow> = sqlx::query_as(
        "SELECT p.session_id, p.plugin_type, p.plugin_version, p.capabilities, p.environment, p.constraints, p.tools, p.tools_lz4, p.updated_at
         FROM session_plugins p JOIN agent_sessions s ON s.id = p.session_id
         WHERE s.ended_at IS NULL",
    )
    .fetch_all(db)
    .await?;
    let uses: Vec<(String, String, i64)> = sqlx::query_as(
        "SELECT u.session_id, u.name, u.count
         FROM session_plugin_tool_uses u JOIN agent_sessions s ON s.id = u.session_id
         WHERE s.ended_at IS NULL",
    )
    .fetch_all(db)
    .await?;
    let mut counts: HashMap<String, HashMap<String, u64>> = HashMap::new();
    for (session, name, count) in uses {
        counts
            .entry(session)
            .or_default()
            .insert(name, count.max(0) as u64);
    }
    let none = HashMap::new();
    Ok(plugins
        .into_iter()
        .map(|p| {
            let mine = counts.get(&p.session_id).unwrap_or(&none);
            (p.session_id.clone(), into_set(p, mine))
        })
        .collect())
}

/// Open session `session`'s plugin (`None`: none registered, or the
/// session ended), as stored now: another instance changed it.
pub async fn get(db: &Db, session: &str) -> Result<Option<PluginSet>, ServerError> {
    let plugin: Option<PluginRow> = sqlx::query_as(
        "SELECT p.session_id, p.plugin_type, p.plugin_version, p.capabilities, p.environment, p.constraints, p.tools, p.tools_lz4, p.updated_at
         FROM session_plugins p JOIN agent_sessions s ON s.id = p.session_id
         WHERE p.session_id = $1 AND s.ended_at IS NULL",
    )
    .bind(session)
    .fetch_optional(db)
    .await?;
    let Some(plugin) = plugin else {
        return Ok(None);
    };
    let uses: Vec<(String, i64)> =
        sqlx::query_as("SELECT name, count FROM session_plugin_tool_uses WHERE session_id = $1")
            .bind(session)
            .fetch_all(db)
            .await?;
    let counts = uses
        .into_iter()
        .map(|(name, count)| (name, count.max(0) as u64))
        .collect();
    Ok(Some(into_set(plugin, &counts)))
}

/// A stored plugin as the set in force, with its tools' use counts.
fn into_set(p: PluginRow, counts: &HashMap<String, u64>) -> PluginSet {
    let read = match &p.tools_lz4 {
        Some(packed) => unpack(packed).and_then(|document| {
            serde_json::from_slice::<Vec<StoredTool<String, Schema>>>(&document)
                .map_err(|e| e.to_string())
        }),
        None => serde_json::from_str(&p.tools).map_err(|e| e.to_string()),
    };
    let stored = read.unwrap_or_else(|e| {
        tracing::error!(session = %p.session_id, error = %e, "stored plugin tools are unreadable");
        Vec::new()
    });
    let tools = stored
        .into_iter()
        .map(|t| PluginTool {
            usage_count: counts.get(&t.name).copied().unwrap_or(0),
            definition: ToolDefinition {
                name: t.name,
                description: t.description,
                parameters: t.parameters,
            },
            status: ToolStatus::parse(&t.status),
            registered_at: t.registered_at,
        })
        .collect();
    let plugin_type: PluginType =
        serde_json::from_value(serde_json::Value::String(p.plugin_type.clone()))
            .unwrap_or(PluginType::Custom);
    PluginSet {
        plugin_type,
        plugin_version: p.plugin_version,
        capabilities: serde_json::from_str(&p.capabilities).unwrap_or_default(),
        environment: serde_json::from_str(&p.environment).unwrap_or_default(),
        constraints: p.constraints.and_then(|c| serde_json::from_str(&c).ok()),
        tools,
        updated_at: p.updated_at,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::Value;
    use std::borrow::Cow;

    #[tokio::test]
    async fn tools_stored_as_rows_move_into_the_document_in_order_with_their_counts() {
        let pool = crate::server::platform::db::memory().await;
        let all = sqlx::migrate!("./migrations/sqlite");
        let mut before = sqlx::migrate!("./migrations/sqlite");
        before.migrations = Cow::Owned(all.iter().filter(|m| m.version < 16).cloned().collect());
        before.run(&pool).await.unwrap();
        for sql in [
            "INSERT INTO agent_sessions (id, token_hash, state, last_activity, created_at) VALUES ('s1', 'h', '{}', 0, 0)",
            "INSERT INTO session_plugins (session_id, plugin_type, plugin_version, capabilities, environment, updated_at)
             VALUES ('s1', 'codap', '2.1', '[]', '{\"version\":\"3\",\"features\":[],\"limitations\":[]}', 5)",
            "INSERT INTO session_plugin_tools VALUES ('s1', 'zeta', 0, 'First.', '{\"type\": \"object\"}', 'active', 1, 4)",
            "INSERT INTO session_plugin_tools VALUES ('s1', 'alpha', 1, 'Second.', '{\"type\":\"object\",\"properties\":{}}', 'disabled', 2, 0)",
        ] {
            sqlx::query(sql).execute(&pool).await.unwrap();
        }
        all.run(&pool).await.unwrap();
        let sessions = open_sessions(&pool).await.unwrap();
        let (id, set) = &sessions[0];
        assert_eq!(id, "s1");
        let tools: Vec<(&str, &str, ToolStatus, i64, u64)> = set
            .tools
            .iter()
            .map(|t| {
                (
                    t.definition.name.as_str(),
                    t.definition.description.as_str(),
                    t.status,
                    t.registered_at,
                    t.usage_count,
                )
            })
            .collect();
        assert_eq!(
            tools,
            [
                ("zeta", "First.", ToolStatus::Active, 1, 4),
                ("alpha", "Second.", ToolStatus::Disabled, 2, 0)
            ]
        );
        assert_eq!(
            set.tools[1].definition.parameters.value(),
            &serde_json::json!({"type": "object", "properties": {}})
        );
        assert_eq!(set.plugin_version, "2.1");
    }

    /// A set as a registration leaves it: two tools, one with a schema
    /// and words outside ASCII, the other disabled.
    fn set(version: &str) -> PluginSet {
        serde_json::from_str(&serde_json::json!({
            "pluginType": "codap",
            "pluginVersion": version,
            "capabilities": [],
            "environment": {"version": "3", "features": [], "limitations": []},
            "tools": [
                {"name": "créer_graphe", "description": "Crée un graphe « vite ».",
                 "parameters": {"type": "object", "properties": {"x": {"type": "string", "pattern": "^[a-z]+$"}}},
                 "status": "active", "registeredAt": 7, "usageCount": 0},
                {"name": "zoom", "description": "Zooms.", "parameters": {"type": "object"},
                 "status": "disabled", "registeredAt": 8, "usageCount": 0}
            ],
            "updatedAt": 9
        }).to_string())
        .unwrap()
    }

    #[tokio::test]
    async fn a_set_is_stored_packed_and_read_back_as_it_was() {
        let pool = crate::server::platform::db::memory().await;
        sqlx::migrate!("./migrations/sqlite")
            .run(&pool)
            .await
            .unwrap();
        sqlx::query("INSERT INTO agent_sessions (id, token_hash, state, last_activity, created_at) VALUES ('s1', 'h', '{}', 0, 0)")
            .execute(&pool)
            .await
            .unwrap();
        put(&pool, "s1", &set("1.0")).await.unwrap();
        put(&pool, "s1", &set("2.0")).await.unwrap();
        assert_eq!(get(&pool, "s1").await.unwrap(), Some(set("2.0")));
        let (text, packed): (String, Vec<u8>) =
            sqlx::query_as("SELECT tools, tools_lz4 FROM session_plugins WHERE session_id = 's1'")
                .fetch_one(&pool)
                .await
                .unwrap();
        assert_eq!(text, "", "the document is kept packed only");
        let document: Value = serde_json::from_slice(&unpack(&packed).unwrap()).unwrap();
        assert_eq!(document[0]["name"], "créer_graphe");
        assert_eq!(document[1]["status"], "disabled");
    }

    #[test]
    fn a_damaged_packed_document_is_refused_not_trusted() {
        let document = br#"[{"name":"a","description":"b"}]"#.repeat(50);
        let packed = pack(&document);
        assert!(packed.len() < document.len() / 4, "{}", packed.len());
        assert_eq!(unpack(&packed).unwrap(), document);
        assert!(unpack(&packed[..3]).unwrap_err().contains("shorter"));
        let mut huge = packed.clone();
        huge[..4].copy_from_slice(&u32::MAX.to_le_bytes());
        assert!(unpack(&huge).unwrap_err().contains("over"));
        let mut short = packed.clone();
        short[..4].copy_from_slice(&10u32.to_le_bytes());
        assert!(unpack(&short).is_err());
        let cut = &packed[..packed.len() - 5];
        assert!(unpack(cut).is_err());
    }
}
