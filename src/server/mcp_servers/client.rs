//! The connections to upstream MCP servers, with rmcp's client over the
//! server's transport (`transport`: Streamable HTTP, or a stdio process):
//! one task per server keeps it connected (back-off from one
//! second to [`MCP_RECONNECT_MAX_SECS`] between failed attempts), lists all
//! pages of its tools and imports them, and lists again on
//! `notifications/tools/list_changed`. [`call`] forwards one allowed call
//! with the named deadline [`MCP_CALL_DEADLINE_SECS`].
//!
//! The headers go into the transport's request headers and nowhere else:
//! no error, status or log line here carries them.

use super::transport::{self, describe};
use super::{import_listed, Live};
use crate::domain::limits::{
    MCP_CALL_DEADLINE_SECS, MCP_CONNECT_DEADLINE_SECS, MCP_RECONNECT_MAX_SECS,
};
use crate::domain::mcp_server::{call_result, McpServerName, McpServerStatus, UpstreamTool};
use crate::server::store::mcp_servers as store;
use crate::server::{AppState, ServerError};
use rmcp::model::{CallToolRequestParams, ClientConfig, ContentBlock, ProtocolVersion};
use rmcp::service::{NotificationContext, RunningService};
use rmcp::{ClientHandler, RoleClient};
use serde_json::Value;
use std::collections::HashMap;
use std::sync::Arc;
use std::time::Duration;
use tokio::sync::Notify;
use tokio_util::sync::CancellationToken;

/// Most characters of an upstream error kept as a server's last error.
const ERROR_MAX_CHARS: usize = 300;

/// How often a connected server's task checks that its connection is
/// still open.
const ALIVE_CHECK: Duration = Duration::from_secs(2);

/// The client side's handler: it only hears `tools/list_changed`.
#[derive(Clone)]
struct Handler {
    changed: Arc<Notify>,
}

impl ClientHandler for Handler {
    /// Protocol 2025-06-18: every server of the last year speaks it, and
    /// on it `tools/list_changed` arrives without a subscription (on
    /// 2026-07-28 only a client that opened a listen stream gets it).
    fn get_info(&self) -> ClientConfig {
        ClientConfig::default().with_protocol_version(ProtocolVersion::V_2025_06_18)
    }

    async fn on_tool_list_changed(&self, _context: NotificationContext<RoleClient>) {
        self.changed.notify_one();
    }
}

/// Runs until shutdown: keeps one task per stored server, starting one
/// for each server added and stopping the task of each removed.
pub async fn supervise(state: AppState) {
    let mut tasks: HashMap<i64, CancellationToken> = HashMap::new();
    loop {
        match store::all(&state.db).await {
            Ok(servers) => {
                tasks.retain(|id, stop| {
                    let kept = servers.iter().any(|s| s.id == *id);
                    if !kept {
                        stop.cancel();
                        state.mcp_servers.set_live(*id, None);
                    }
                    kept
                });
                for server in servers {
                    tasks.entry(server.id).or_insert_with(|| {
                        let stop = state.shutdown.child_token();
                        tokio::spawn(keep_connected(state.clone(), server.id, stop.clone()));
                        stop
                    });
                }
            }
            Err(e) => tracing::warn!(error = %e, "could not read the MCP servers"),
        }
        tokio::select! {
            () = state.mcp_servers.servers_changed.notified() => {}
            () = state.shutdown.cancelled() => break,
        }
    }
}

/// Keeps server `id` connected until `stop`: each attempt that fails, or
/// connection that ends, is recorded as its status and last error, then
/// retried after the back-off.
async fn keep_connected(state: AppState, id: i64, stop: CancellationToken) {
    let mut backoff = 1;
    while !stop.is_cancelled() {
        let why = match connected(&state, id, &stop).await {
            Ok(ended) => {
                backoff = 1;
                ended
            }
            Err(failed) => failed,
        };
        state.mcp_servers.set_live(id, None);
        if stop.is_cancelled() {
            break;
        }
        tracing::info!(server = id, reason = %why, "MCP server unreachable; retrying");
        let now = state.clock.now_ms() / 1000;
        if let Err(e) =
            store::set_status(&state.db, id, McpServerStatus::Error, Some(&why), now).await
        {
            tracing::warn!(error = %e, "could not record an MCP server's status");
        }
        state.mcp_servers.touch();
        tokio::select! {
            () = tokio::time::sleep(Duration::from_secs(backoff)) => {}
            () = stop.cancelled() => break,
        }
        backoff = (backoff * 2).min(MCP_RECONNECT_MAX_SECS);
    }
}

/// One connection: connects, imports, then follows `list_changed` until
/// it ends (`Ok`: why) or fails to start (`Err`: why).
async fn connected(state: &AppState, id: i64, stop: &CancellationToken) -> Result<String, String> {
    let server = store::get(&state.db, id)
        .await
        .map_err(|e| e.to_string())?
        .ok_or("removed")?;
    let changed = Arc::new(Notify::new());
    let handler = Handler {
        changed: changed.clone(),
    };
    let (service, mut stderr) = transport::open(state, id, &server.endpoint, handler).await?;
    if let Err(why) = refresh(state, id, &server.name, &service).await {
        let _ = service.cancel().await;
        return Err(why);
    }
    let kick = Arc::new(Notify::new());
    let live = Live {
        peer: service.peer().clone(),
        kick: kick.clone(),
    };
    state.mcp_servers.set_live(id, Some(live));
    tracing::info!(server = %server.name, "MCP server connected");
    let ended = loop {
        tokio::select! {
            () = changed.notified() => {
                if let Err(why) = refresh(state, id, &server.name, &service).await {
                    break why;
                }
            }
            () = kick.notified() => break "a forwarded call could not reach it".to_owned(),
            () = stop.cancelled() => break "removed".to_owned(),
            () = tokio::time::sleep(ALIVE_CHECK) => {
                if service.is_closed() {
                    break "the connection closed".to_owned();
                }
            }
        }
    };
    let _ = service.cancel().await;
    Ok(match stderr.as_mut() {
        // A stdio server's process has ended: say what it last wrote.
        Some(stderr) if !stop.is_cancelled() => stderr.explain(ended).await,
        _ => ended,
    })
}

/// Lists every page of the server's tools and imports them.
async fn refresh(
    state: &AppState,
    id: i64,
    name: &McpServerName,
    service: &RunningService<RoleClient, Handler>,
) -> Result<(), String> {
    let deadline = Duration::from_secs(MCP_CONNECT_DEADLINE_SECS);
    let tools = match tokio::time::timeout(deadline, service.list_all_tools()).await {
        Ok(Ok(tools)) => tools,
        Ok(Err(e)) => return Err(short(&format!("tools/list failed: {e}"))),
        Err(_) => {
            return Err(format!(
                "tools/list took over {MCP_CONNECT_DEADLINE_SECS} s"
            ))
        }
    };
    let listed: Vec<UpstreamTool> = tools
        .into_iter()
        .map(|t| UpstreamTool {
            name: t.name.to_string(),
            title: t.title,
            description: t.description.map(|d| d.to_string()),
            input_schema: Value::Object((*t.input_schema).clone()),
        })
        .collect();
    import_listed(state, id, name, &listed)
        .await
        .map_err(|e| short(&format!("its tools could not be imported: {e}")))
}

/// What forwarding a call gave: the upstream's answer (and whether it
/// flagged it an error), or why it could not be had.
pub enum Forwarded {
    /// The upstream answered; `true` when it flagged an error.
    Answered(Value, bool),
    /// No answer: unreachable, timed out, or refused by the upstream.
    Failed(String),
}

/// Forwards `tool`'s call to server `server_id` as `upstream_name`, within
/// [`MCP_CALL_DEADLINE_SECS`]. A transport failure kicks the server's task
/// to reconnect.
pub async fn call(
    state: &AppState,
    server_id: i64,
    upstream_name: &str,
    arguments: &Value,
) -> Result<Forwarded, ServerError> {
    let Some(live) = state.mcp_servers.live(server_id) else {
        let why = store::get(&state.db, server_id)
            .await?
            .and_then(|s| s.last_error)
            .unwrap_or_else(|| "it is not connected".to_owned());
        return Ok(Forwarded::Failed(format!(
            "its MCP server is not connected ({why})"
        )));
    };
    let args = match arguments {
        Value::Object(map) => map.clone(),
        _ => serde_json::Map::new(),
    };
    let params = CallToolRequestParams::new(upstream_name.to_owned()).with_arguments(args);
    let deadline = Duration::from_secs(MCP_CALL_DEADLINE_SECS);
    let started = tokio::time::Instant::now();
    let answer = tokio::time::timeout(deadline, live.peer.call_tool(params)).await;
    // The time the call took, for its admins' median (`health`).
    state.mcp_servers.record_call(server_id, started.elapsed());
    Ok(match answer {
        Ok(Ok(result)) => {
            let texts: Vec<String> = result
                .content
                .iter()
                .filter_map(ContentBlock::as_text)
                .map(|t| t.text.clone())
                .collect();
            let is_error = result.is_error == Some(true);
            Forwarded::Answered(
                call_result(&texts, result.structured_content, is_error),
                is_error,
            )
        }
        Ok(Err(e)) => {
            if matches!(
                e,
                rmcp::ServiceError::TransportClosed | rmcp::ServiceError::TransportSend(_)
            ) {
                live.kick.notify_one();
            }
            let why = match &e {
                rmcp::ServiceError::TransportClosed => "the connection to it closed".to_owned(),
                rmcp::ServiceError::TransportSend(_) => {
                    format!("the call could not be sent: {}", describe(&e))
                }
                other => other.to_string(),
            };
            Forwarded::Failed(short(&format!("its MCP server failed the call: {why}")))
        }
        Err(_) => Forwarded::Failed(format!(
            "its MCP server did not answer within {MCP_CALL_DEADLINE_SECS} s"
        )),
    })
}

/// `text` cut to [`ERROR_MAX_CHARS`].
pub(super) fn short(text: &str) -> String {
    let mut out: String = text.chars().take(ERROR_MAX_CHARS).collect();
    if text.chars().count() > ERROR_MAX_CHARS {
        out.push('…');
    }
    out
}
