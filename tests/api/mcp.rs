//! The session's tools over MCP, with rmcp's own client: `tools/list` is
//! the session's tools now (plugin tools included), `tools/call` is
//! enforced like any call, and `notifications/tools/list_changed` arrives
//! after a plugin registration and after a workflow switch.

use crate::helpers::spawn_app;
use crate::sessions::{call, open};
use rmcp::model::CallToolRequestParams;
use rmcp::service::NotificationContext;
use rmcp::transport::streamable_http_client::StreamableHttpClientTransportConfig;
use rmcp::transport::StreamableHttpClientTransport;
use rmcp::{ClientHandler, RoleClient, ServiceExt};
use serde_json::json;
use std::sync::Arc;
use std::time::Duration;
use tokio::sync::Notify;

#[derive(Clone)]
struct Watcher {
    changed: Arc<Notify>,
}

impl ClientHandler for Watcher {
    async fn on_tool_list_changed(&self, _context: NotificationContext<RoleClient>) {
        self.changed.notify_one();
    }
}

fn names(tools: &[rmcp::model::Tool]) -> Vec<String> {
    tools.iter().map(|t| t.name.to_string()).collect()
}

#[tokio::test]
async fn an_mcp_client_lists_calls_and_follows_the_sessions_tools() {
    let app = spawn_app().await;
    let key = app.api_key().await;
    let s = open(&app, &key, "idv").await;
    let url = app.url(&format!("/api/sessions/{}/mcp", s.id));
    let changed = Arc::new(Notify::new());
    let transport = StreamableHttpClientTransport::from_config(
        StreamableHttpClientTransportConfig::with_uri(url.clone()).auth_header(s.token.clone()),
    );
    let client = Watcher {
        changed: changed.clone(),
    }
    .serve(transport)
    .await
    .expect("MCP initialize");

    let tools = client.list_all_tools().await.unwrap();
    assert!(
        names(&tools).contains(&"perform_idv_check".to_owned()),
        "{:?}",
        names(&tools)
    );
    assert!(!names(&tools).contains(&"check_balance".to_owned()));
    let idv = tools
        .iter()
        .find(|t| t.name == "perform_idv_check")
        .unwrap();
    assert!(idv.input_schema.contains_key("properties"));

    // A call goes through the rules: bad arguments are a readable tool error.
    let bad = json!({"accountNumber": "1"}).as_object().unwrap().clone();
    let res = client
        .call_tool(CallToolRequestParams::new("perform_idv_check").with_arguments(bad))
        .await
        .unwrap();
    assert_eq!(res.is_error, Some(true));
    let text = serde_json::to_string(&res.content).unwrap();
    assert!(
        text.contains("invalid arguments for `perform_idv_check`"),
        "{text}"
    );
    let res = client
        .call_tool(CallToolRequestParams::new("check_balance"))
        .await
        .unwrap();
    assert_eq!(res.is_error, Some(true), "not available in this workflow");

    // A plugin registers a tool: the client is told, and lists it.
    let res = app
        .client
        .post(app.url(&format!("/api/sessions/{}/register-tools", s.id)))
        .bearer_auth(&s.token)
        .json(&json!({"pluginType": "custom", "pluginVersion": "1", "availableTools": [
            {"name": "createGraph", "description": "Draws a graph.", "parameters": {"type": "object", "properties": {}}}
        ]}))
        .send()
        .await
        .unwrap();
    assert_eq!(res.status(), 201);
    tokio::time::timeout(Duration::from_secs(5), changed.notified())
        .await
        .expect("list_changed after a registration");
    assert!(names(&client.list_all_tools().await.unwrap()).contains(&"createGraph".to_owned()));

    // A workflow switch (by the REST API) changes the list: told again.
    let (status, reply) = call(
        &app,
        &s,
        "start_workflow",
        json!({"workflowId": "banking-master"}),
    )
    .await;
    assert_eq!(
        (status, reply["allowed"].clone()),
        (200, json!(true)),
        "{reply}"
    );
    tokio::time::timeout(Duration::from_secs(5), changed.notified())
        .await
        .expect("list_changed after a workflow switch");
    let now = names(&client.list_all_tools().await.unwrap());
    assert!(
        now.contains(&"check_balance".to_owned()) && now.contains(&"createGraph".to_owned()),
        "{now:?}"
    );

    // And an allowed call answers with the tool's result.
    let res = client
        .call_tool(CallToolRequestParams::new("get_server_time"))
        .await
        .unwrap();
    assert_eq!(res.is_error, Some(false), "{res:?}");
    client.cancel().await.unwrap();

    // Another session's token is refused before MCP starts.
    let other = open(&app, &key, "idv").await;
    let res = app
        .client
        .post(&url)
        .bearer_auth(&other.token)
        .header("accept", "application/json, text/event-stream")
        .json(&json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
            "protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "x", "version": "1"}}}))
        .send()
        .await
        .unwrap();
    assert_eq!(res.status(), 403);
    let res = app.client.post(&url).json(&json!({})).send().await.unwrap();
    assert_eq!(res.status(), 401);
}
