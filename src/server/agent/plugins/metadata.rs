//! `GET /api/sessions/{id}/metadata`: what the session's plugin told
//! Switchboard, or a session's default metadata without one.

use crate::server::agent::listing;
use crate::server::store::agent_sessions::SessionRow;
use crate::server::{AppState, ServerError};
use serde_json::{json, Value};

/// `GET /api/sessions/{id}/metadata`: the plugin's registration and tools,
/// or for a session without one its default metadata (the tools its
/// workflow, lesson or agent gives).
pub fn metadata(state: &AppState, row: &SessionRow) -> Result<(Value, i64), ServerError> {
    let ws = row.workflow_state()?;
    let supported = [
        "register-tools",
        "update-tools",
        "metadata",
        "plugin-events",
        "tool-results",
    ];
    Ok(match state.plugins.get(&row.id) {
        Some(loaded) => {
            let set = loaded.current();
            let tools: Vec<Value> = set.tools.iter().map(|t| json!(t)).collect();
            (
                json!({
                    "apiVersion": API_VERSION,
                    "sessionId": row.id,
                    "pluginType": set.plugin_type,
                    "pluginVersion": set.plugin_version,
                    "capabilities": set.capabilities,
                    "tools": tools,
                    "environment": set.environment,
                    "constraints": set.constraints,
                    "toolCount": set.tools.len(),
                    "availableTools": listing::tools_now(state, &row.id, row.lesson_tools.as_deref(), &ws),
                    "lastUpdated": iso(set.updated_at),
                    "supportedOperations": supported,
                }),
                set.updated_at,
            )
        }
        None => {
            let available = listing::tools_now(state, &row.id, row.lesson_tools.as_deref(), &ws);
            let tools: Vec<Value> = listing::declarations(state, &row.id, &available)
                .into_iter()
                .map(|d| json!({"name": d.name, "description": d.description, "parameters": d.parameters, "status": "active"}))
                .collect();
            let at = row.created_at * 1000;
            (
                json!({
                    "apiVersion": API_VERSION,
                    "sessionId": row.id,
                    "pluginType": null,
                    "pluginVersion": null,
                    "capabilities": [],
                    "tools": tools,
                    "environment": {"workflow": ws.current_workflow, "agent": ws.agent},
                    "toolCount": 0,
                    "availableTools": available,
                    "lastUpdated": iso(at),
                    "supportedOperations": supported,
                }),
                at,
            )
        }
    })
}

/// The plugin API's version, sent as `API-Version`.
pub const API_VERSION: &str = "2.0.0";

fn iso(ms: i64) -> String {
    crate::domain::time::iso_utc_ms(ms)
}
