//! The session's tools over MCP, with rmcp's own client: `tools/list` is
//! the session's tools now (plugin tools included), `tools/call` is
//! enforced like any call, and `notifications/tools/list_changed` arrives
//! after a plugin registration and after a workflow switch.

use crate::helpers::{spawn_app, spawn_app_with};
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
    assert_eq!(
        initialize(&app.client, &url, Some(&other.token), None).await,
        403
    );
    let res = app.client.post(&url).json(&json!({})).send().await.unwrap();
    assert_eq!(res.status(), 401);
}

#[tokio::test]
async fn the_workflow_mcp_server_has_its_eleven_tools_and_edits_through_the_same_code() {
    use switchboard::domain::api_key::Scope;
    let app = spawn_app().await;
    let key = app.api_key_with(&[Scope::WorkflowsWrite]).await;
    let transport = StreamableHttpClientTransport::from_config(
        StreamableHttpClientTransportConfig::with_uri(app.url("/mcp")).auth_header(key.clone()),
    );
    let client = ().serve(transport).await.expect("MCP initialize");
    let tools = client.list_all_tools().await.unwrap();
    assert_eq!(
        names(&tools),
        [
            "get_workflow_details",
            "list_available_triggers",
            "set_trigger",
            "update_trigger_settings",
            "list_available_step_types",
            "add_step",
            "remove_step",
            "reorder_steps",
            "update_system_prompt_for_step",
            "list_available_mcp_tools",
            "update_step_mcp_tools"
        ]
    );
    for tool in &tools {
        assert_eq!(tool.input_schema["type"], "object", "{}", tool.name);
        assert!(
            tool.description.as_ref().unwrap().len() > 40,
            "{}",
            tool.name
        );
    }
    let call = |name: &'static str, args: serde_json::Value| {
        let args = args.as_object().unwrap().clone();
        client.call_tool(CallToolRequestParams::new(name).with_arguments(args))
    };
    let text = |res: &rmcp::model::CallToolResult| serde_json::to_string(&res.content).unwrap();

    let res = call(
        "add_step",
        json!({"workflow_uuid": "idv", "step_type": "custom_llm", "name": "Greet"}),
    )
    .await
    .unwrap();
    assert_eq!(res.is_error, Some(false), "{}", text(&res));
    let greet = res.structured_content.as_ref().unwrap()["result"]["steps"][0]["uuid"]
        .as_str()
        .unwrap()
        .to_owned();
    let res = call(
        "update_step_mcp_tools",
        json!({"workflow_uuid": "idv", "step_uuid": greet, "enabled_tools": ["check_balance"]}),
    )
    .await
    .unwrap();
    assert_eq!(res.is_error, Some(true));
    assert!(
        text(&res).contains("step type `custom_llm` has no tools; use a `custom_agent` step"),
        "{}",
        text(&res)
    );
    let res = call(
        "add_step",
        json!({"workflow_uuid": "idv", "step_type": "custom_agent", "name": "Verify identity"}),
    )
    .await
    .unwrap();
    let verify = res.structured_content.as_ref().unwrap()["result"]["steps"][1]["uuid"]
        .as_str()
        .unwrap()
        .to_owned();
    let res = call("update_step_mcp_tools", json!({"workflow_uuid": "idv", "step_uuid": verify, "enabled_tools": ["perform_idv_check"]})).await.unwrap();
    assert_eq!(res.is_error, Some(false), "{}", text(&res));
    let res = call(
        "reorder_steps",
        json!({"workflow_uuid": "idv", "ordered_step_uuids": [verify]}),
    )
    .await
    .unwrap();
    assert!(
        text(&res).contains("missing"),
        "not a permutation: {}",
        text(&res)
    );

    // Stored, versioned and attributed like any edit.
    let res = app
        .client
        .get(app.url("/api/workflows/idv/history"))
        .bearer_auth(&key)
        .send()
        .await
        .unwrap();
    let history: serde_json::Value = res.json().await.unwrap();
    assert_eq!(history["versions"].as_array().unwrap().len(), 3);
    assert_eq!(history["versions"][0]["savedBy"], "API key “test backend”");
    client.cancel().await.unwrap();

    // Without the scope, or as a teacher: refused before MCP.
    let url = app.url("/mcp");
    let narrow = app.api_key_with(&[Scope::Sessions]).await;
    let status = initialize(&app.client, &url, Some(&narrow), None).await;
    assert_eq!(status, 403);
    let teacher = app.signed_in(crate::helpers::TEACHER).await;
    assert_eq!(
        initialize(&teacher, &url, None, Some(&app.address)).await,
        403
    );
    let admin = app.signed_in(crate::helpers::ADMIN).await;
    let status = initialize(&admin, &url, None, Some("http://evil.example")).await;
    assert_eq!(status, 403, "an admin's cookie from another site");
    let status = initialize(&admin, &url, None, Some(&app.address)).await;
    assert_eq!(status, 200, "the admin's own page");
}

/// A raw MCP `initialize` to `url` as `client` (with a bearer token and an
/// Origin if given): the HTTP status, for checks made before MCP starts.
async fn initialize(
    client: &reqwest::Client,
    url: &str,
    bearer: Option<&str>,
    origin: Option<&str>,
) -> u16 {
    initialize_response(client, url, bearer, origin)
        .await
        .status()
        .as_u16()
}

/// The whole answer to a raw MCP `initialize`.
async fn initialize_response(
    client: &reqwest::Client,
    url: &str,
    bearer: Option<&str>,
    origin: Option<&str>,
) -> reqwest::Response {
    let mut req = client
        .post(url)
        .header("accept", "application/json, text/event-stream")
        .json(&json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
            "protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "x", "version": "1"}}}));
    if let Some(token) = bearer {
        req = req.bearer_auth(token);
    }
    if let Some(origin) = origin {
        req = req.header("Origin", origin);
    }
    req.send().await.unwrap()
}

/// A raw `tools/list` in MCP session `mcp_session` of `url`: the status.
async fn list_in(app: &crate::helpers::TestApp, url: &str, bearer: &str, mcp_session: &str) -> u16 {
    app.client
        .post(url)
        .bearer_auth(bearer)
        .header("accept", "application/json, text/event-stream")
        .header("mcp-session-id", mcp_session)
        .header("mcp-protocol-version", "2025-06-18")
        .json(&json!({"jsonrpc": "2.0", "id": 2, "method": "tools/list", "params": {}}))
        .send()
        .await
        .unwrap()
        .status()
        .as_u16()
}

#[tokio::test]
async fn a_credential_opens_at_most_its_cap_of_mcp_sessions() {
    use switchboard::domain::api_key::Scope;
    use switchboard::domain::limits::MCP_SESSIONS_PER_CREDENTIAL;
    let app = spawn_app().await;
    let key = app.api_key_with(&[Scope::WorkflowsWrite]).await;
    let backend = app.api_key().await;
    let s = open(&app, &backend, "idv").await;
    let session_url = app.url(&format!("/api/sessions/{}/mcp", s.id));
    let workflow_url = app.url("/mcp");
    for (url, credential) in [(&workflow_url, &key), (&session_url, &s.token)] {
        let mut first = None;
        for n in 0..MCP_SESSIONS_PER_CREDENTIAL {
            let res = initialize_response(&app.client, url, Some(credential), None).await;
            assert_eq!(res.status(), 200, "{url}: initialize {n}");
            first.get_or_insert(res.headers()["mcp-session-id"].to_str().unwrap().to_owned());
        }
        let res = initialize_response(&app.client, url, Some(credential), None).await;
        assert_eq!(res.status(), 429, "{url}: one past the cap");
        assert!(res.headers().contains_key("retry-after"));
        let body = res.text().await.unwrap();
        assert!(
            body.contains(&format!(
                "{MCP_SESSIONS_PER_CREDENTIAL} open MCP sessions per credential"
            )),
            "{body}"
        );
        // The sessions opened still work; ending one frees its slot.
        let first = first.unwrap();
        assert_eq!(list_in(&app, url, credential, &first).await, 200);
        let res = app
            .client
            .delete(url.as_str())
            .bearer_auth(credential)
            .header("mcp-session-id", &first)
            .send()
            .await
            .unwrap();
        assert_eq!(res.status(), 204, "ended, as MCP clients read it");
        assert_eq!(
            initialize(&app.client, url, Some(credential), None).await,
            200
        );
    }
    // Another credential has its own slots, and no use of the first's.
    let other = app.api_key_with(&[Scope::WorkflowsWrite]).await;
    let res = initialize_response(&app.client, &workflow_url, Some(&other), None).await;
    assert_eq!(res.status(), 200);
    let theirs = res.headers()["mcp-session-id"].to_str().unwrap().to_owned();
    assert_eq!(list_in(&app, &workflow_url, &key, &theirs).await, 404);
}

#[tokio::test]
async fn an_ended_sessions_mcp_endpoint_refuses_and_its_mcp_sessions_close() {
    let app = spawn_app().await;
    let key = app.api_key().await;
    let s = open(&app, &key, "idv").await;
    let url = app.url(&format!("/api/sessions/{}/mcp", s.id));
    let res = initialize_response(&app.client, &url, Some(&s.token), None).await;
    assert_eq!(res.status(), 200);
    let mcp_session = res.headers()["mcp-session-id"].to_str().unwrap().to_owned();
    let owner = switchboard::server::http::mcp_sessions::session_owner(&s.id);
    assert_eq!(app.state.session_mcp.open_for(&owner), 1);

    crate::freed::end(&app, &s).await;
    assert_eq!(app.state.session_mcp.open_for(&owner), 0, "closed with it");
    let res = initialize_response(&app.client, &url, Some(&s.token), None).await;
    assert_eq!(res.status(), 409);
    let body = res.text().await.unwrap();
    assert!(body.contains("has ended"), "{body}");
    assert_eq!(list_in(&app, &url, &s.token, &mcp_session).await, 409);
}

#[tokio::test]
async fn an_idle_mcp_session_closes_and_frees_its_slot() {
    use switchboard::domain::api_key::Scope;
    use switchboard::domain::limits::MCP_SESSIONS_PER_CREDENTIAL;
    let app = spawn_app_with(&[("MCP_SESSION_IDLE_SECONDS", "1")]).await;
    let key = app.api_key_with(&[Scope::WorkflowsWrite]).await;
    let url = app.url("/mcp");
    let mut opened = Vec::new();
    for n in 0..MCP_SESSIONS_PER_CREDENTIAL {
        let res = initialize_response(&app.client, &url, Some(&key), None).await;
        assert_eq!(res.status(), 200, "initialize {n}");
        opened.push(res.headers()["mcp-session-id"].to_str().unwrap().to_owned());
    }
    let res = initialize_response(&app.client, &url, Some(&key), None).await;
    assert_eq!(res.status(), 429, "the cap is full");
    assert!(res.text().await.unwrap().contains("idle out after 1 s"));
    // Idle past the limit: every session closed, its slot free again, and
    // its id answers 404 (the client initialises anew).
    tokio::time::sleep(Duration::from_millis(2_500)).await;
    assert_eq!(list_in(&app, &url, &key, &opened[0]).await, 404);
    for n in 0..MCP_SESSIONS_PER_CREDENTIAL {
        let res = initialize_response(&app.client, &url, Some(&key), None).await;
        assert_eq!(
            res.status(),
            200,
            "initialize {n} after the idle ones closed"
        );
    }
}

/// A raw JSON-RPC request in MCP session `mcp_session`: the JSON-RPC
/// message that answers it (read from the event stream or the JSON body).
async fn raw_request(
    app: &crate::helpers::TestApp,
    url: &str,
    bearer: &str,
    mcp_session: &str,
    message: serde_json::Value,
) -> serde_json::Value {
    let text = app
        .client
        .post(url)
        .bearer_auth(bearer)
        .header("accept", "application/json, text/event-stream")
        .header("mcp-session-id", mcp_session)
        .header("mcp-protocol-version", "2025-06-18")
        .json(&message)
        .send()
        .await
        .unwrap()
        .text()
        .await
        .unwrap();
    text.lines()
        .filter_map(|l| l.strip_prefix("data:"))
        .chain(std::iter::once(text.as_str()))
        .filter_map(|d| serde_json::from_str::<serde_json::Value>(d.trim()).ok())
        .find(|m| m.get("id") == message.get("id"))
        .unwrap_or_else(|| panic!("no answer to {message} in {text:?}"))
}

#[tokio::test]
async fn a_tools_call_whose_params_do_not_fit_is_invalid_params_on_both_servers() {
    use switchboard::domain::api_key::Scope;
    let app = spawn_app().await;
    let backend = app.api_key().await;
    let s = open(&app, &backend, "idv").await;
    let editor = app.api_key_with(&[Scope::WorkflowsWrite]).await;
    let session_url = app.url(&format!("/api/sessions/{}/mcp", s.id));
    let workflow_url = app.url("/mcp");
    for (url, credential) in [(&session_url, &s.token), (&workflow_url, &editor)] {
        let res = initialize_response(&app.client, url, Some(credential), None).await;
        assert_eq!(res.status(), 200, "{url}");
        let mcp_session = res.headers()["mcp-session-id"].to_str().unwrap().to_owned();
        let initialized = app
            .client
            .post(url.as_str())
            .bearer_auth(credential)
            .header("accept", "application/json, text/event-stream")
            .header("mcp-session-id", &mcp_session)
            .header("mcp-protocol-version", "2025-06-18")
            .json(&json!({"jsonrpc": "2.0", "method": "notifications/initialized"}))
            .send()
            .await
            .unwrap();
        assert_eq!(initialized.status(), 202, "{url}");
        let answer = raw_request(
            &app,
            url,
            credential,
            &mcp_session,
            json!({"jsonrpc": "2.0", "id": 3, "method": "tools/call",
                   "params": {"name": "get_server_time", "arguments": [1]}}),
        )
        .await;
        assert_eq!(answer["error"]["code"], -32602, "{url}: {answer}");
        let message = answer["error"]["message"].as_str().unwrap();
        assert!(
            message.contains("`tools/call`") && message.contains("invalid type"),
            "{url}: {answer}"
        );
        // A method neither serves is still "method not found".
        let answer = raw_request(
            &app,
            url,
            credential,
            &mcp_session,
            json!({"jsonrpc": "2.0", "id": 4, "method": "tools/frobnicate", "params": {}}),
        )
        .await;
        assert_eq!(answer["error"]["code"], -32601, "{url}: {answer}");
    }
    // Nothing was called.
    let calls: i64 = sqlx::query_scalar("SELECT COUNT(*) FROM tool_calls")
        .fetch_one(&app.state.db)
        .await
        .unwrap();
    assert_eq!(calls, 0);
}
