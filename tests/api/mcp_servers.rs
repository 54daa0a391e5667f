//! Connected MCP servers, against an rmcp server the test starts in process
//! (`echo`, `add`, `fail`, listed two per page): added over the API, its
//! tools are imported as `test__…`; a session whose bindings include one
//! calls it and gets the upstream's answer; an unbound one is refused
//! before anything reaches the upstream; a tool gone upstream is refused
//! as unavailable; an upstream that is down gives a readable refusal and
//! an `error` status. The headers are never shown.

use crate::helpers::{spawn_app, TestApp};
use crate::sessions::{call, open, Session};
use hyper_util::rt::TokioIo;
use hyper_util::service::TowerToHyperService;
use rmcp::model::{
    CallToolRequestParams, CallToolResponse, CallToolResult, ContentBlock, ListToolsResult,
    PaginatedRequestParams, ServerCapabilities, ServerConfig, Tool,
};
use rmcp::service::{NotificationContext, RequestContext};
use rmcp::transport::streamable_http_server::session::local::LocalSessionManager;
use rmcp::transport::streamable_http_server::{StreamableHttpServerConfig, StreamableHttpService};
use rmcp::{ErrorData as McpError, Peer, RoleServer, ServerHandler};
use serde_json::{json, Value};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;
use switchboard::domain::api_key::Scope;

/// The upstream: its tools (changeable), the clients connected, the calls
/// it ran and the headers it was sent.
#[derive(Clone, Default)]
pub(crate) struct Upstream {
    tools: Arc<Mutex<Vec<Tool>>>,
    peers: Arc<Mutex<Vec<Peer<RoleServer>>>>,
    pub(crate) calls: Arc<AtomicUsize>,
    seen_keys: Arc<Mutex<Vec<String>>>,
}

fn tool(name: &str, description: &str, schema: Value) -> Tool {
    let Value::Object(schema) = schema else {
        unreachable!()
    };
    Tool::new(name.to_owned(), description.to_owned(), Arc::new(schema))
}

fn number(args: &serde_json::Map<String, Value>, key: &str) -> f64 {
    args.get(key).and_then(Value::as_f64).unwrap_or_default()
}

impl Upstream {
    fn new() -> Self {
        let up = Self::default();
        *up.tools.lock().unwrap() = vec![
            tool(
                "echo",
                "Echoes the message back.",
                json!({"type": "object", "properties": {"message": {"type": "string"}}, "required": ["message"]}),
            ),
            tool(
                "add",
                "Adds a and b.",
                json!({"type": "object", "properties": {"a": {"type": "number"}, "b": {"type": "number"}}, "required": ["a", "b"]}),
            ),
            tool(
                "fail",
                "Always fails.",
                json!({"type": "object", "properties": {}}),
            ),
        ];
        up
    }

    /// Drops tool `name` and tells every connected client.
    pub(crate) async fn remove_tool(&self, name: &str) {
        self.tools.lock().unwrap().retain(|t| t.name != name);
        self.tell_changed().await;
    }

    /// Lists tool `name` (one of the first three) again, as it was, and
    /// tells every connected client.
    pub(crate) async fn bring_back(&self, name: &str) {
        let original = Self::new().tools.lock().unwrap().clone();
        let tool = original.into_iter().find(|t| t.name == name).unwrap();
        self.tools.lock().unwrap().push(tool);
        self.tell_changed().await;
    }

    async fn tell_changed(&self) {
        let peers = self.peers.lock().unwrap().clone();
        for peer in peers {
            let _ = peer.notify_tool_list_changed().await;
        }
    }
}

impl ServerHandler for Upstream {
    fn get_info(&self) -> ServerConfig {
        ServerConfig::new(
            ServerCapabilities::builder()
                .enable_tools()
                .enable_tool_list_changed()
                .build(),
        )
    }

    async fn on_initialized(&self, context: NotificationContext<RoleServer>) {
        self.peers.lock().unwrap().push(context.peer.clone());
    }

    async fn list_tools(
        &self,
        request: Option<PaginatedRequestParams>,
        context: RequestContext<RoleServer>,
    ) -> Result<ListToolsResult, McpError> {
        if let Some(parts) = context.extensions.get::<axum::http::request::Parts>() {
            if let Some(key) = parts.headers.get("x-upstream-key") {
                self.seen_keys
                    .lock()
                    .unwrap()
                    .push(key.to_str().unwrap().to_owned());
            }
        }
        // Two per page, so the client must follow the cursor.
        let all = self.tools.lock().unwrap().clone();
        let start: usize = request
            .and_then(|r| r.cursor)
            .map_or(0, |c| c.parse().unwrap());
        let mut page =
            ListToolsResult::with_all_items(all.iter().skip(start).take(2).cloned().collect());
        page.next_cursor = (start + 2 < all.len()).then(|| (start + 2).to_string());
        Ok(page)
    }

    async fn call_tool(
        &self,
        request: CallToolRequestParams,
        _context: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, McpError> {
        self.calls.fetch_add(1, Ordering::SeqCst);
        let args = request.arguments.unwrap_or_default();
        let result = match request.name.as_ref() {
            "echo" => CallToolResult::success(vec![ContentBlock::text(format!(
                "Echo: {}",
                args.get("message")
                    .and_then(Value::as_str)
                    .unwrap_or_default()
            ))]),
            "add" => {
                let sum = number(&args, "a") + number(&args, "b");
                let mut r = CallToolResult::success(vec![ContentBlock::text(sum.to_string())]);
                r.structured_content = Some(json!({"sum": sum}));
                r
            }
            _ => CallToolResult::error(vec![ContentBlock::text("it broke")]),
        };
        Ok(result.into())
    }
}

/// A running upstream: its URL, its state, and the task serving it (abort
/// it to take the upstream down, connections and all).
pub(crate) struct Running {
    pub(crate) url: String,
    pub(crate) upstream: Upstream,
    task: tokio::task::JoinHandle<()>,
}

pub(crate) async fn start_upstream() -> Running {
    start_upstream_at("127.0.0.1:0").await
}

/// [`start_upstream`] on address `addr` (to bring one back where it was).
async fn start_upstream_at(addr: &str) -> Running {
    let upstream = Upstream::new();
    let handler = upstream.clone();
    let service = StreamableHttpService::new(
        move || Ok(handler.clone()),
        Arc::new(LocalSessionManager::default()),
        StreamableHttpServerConfig::default(),
    );
    let router = axum::Router::new().nest_service("/mcp", service);
    let listener = tokio::net::TcpListener::bind(addr).await.unwrap();
    let url = format!("http://{}/mcp", listener.local_addr().unwrap());
    let task = tokio::spawn(async move {
        // Connections live in this set: aborting the task drops them all.
        let mut connections = tokio::task::JoinSet::new();
        loop {
            let Ok((tcp, _)) = listener.accept().await else {
                continue;
            };
            let service = TowerToHyperService::new(router.clone());
            connections.spawn(async move {
                let _ = hyper::server::conn::http1::Builder::new()
                    .serve_connection(TokioIo::new(tcp), service)
                    .await;
            });
        }
    });
    Running {
        url,
        upstream,
        task,
    }
}

pub(crate) async fn add_server(app: &TestApp, key: &str, body: Value) -> (u16, Value) {
    let res = app
        .client
        .post(app.url("/api/mcp-servers"))
        .bearer_auth(key)
        .json(&body)
        .send()
        .await
        .unwrap();
    (
        res.status().as_u16(),
        res.json().await.unwrap_or(Value::Null),
    )
}

pub(crate) async fn get_server(app: &TestApp, key: &str, id: i64) -> Value {
    let res = app
        .client
        .get(app.url(&format!("/api/mcp-servers/{id}")))
        .bearer_auth(key)
        .send()
        .await
        .unwrap();
    assert_eq!(res.status(), 200);
    res.json().await.unwrap()
}

/// Each of `refused` (a body, the field its 422 names) is refused naming
/// that field, and no server is stored.
pub(crate) async fn refused_naming_and_none_stored<const N: usize>(
    app: &TestApp,
    key: &str,
    refused: [(Value, &str); N],
) {
    for (body, field) in refused {
        let (status, reply) = add_server(app, key, body).await;
        assert_eq!(status, 422, "{reply}");
        assert_eq!(reply["Invalid"]["field"], field, "{reply}");
    }
    let list: Value = app
        .client
        .get(app.url("/api/mcp-servers"))
        .bearer_auth(key)
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    assert_eq!(list["servers"], json!([]), "nothing stored");
}

/// Polls server `id` until `done` holds of it (at most 10 s).
pub(crate) async fn wait_for(
    app: &TestApp,
    key: &str,
    id: i64,
    done: impl Fn(&Value) -> bool,
) -> Value {
    for _ in 0..200 {
        let server = get_server(app, key, id).await;
        if done(&server) {
            return server;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    panic!(
        "server {id} never got there: {}",
        get_server(app, key, id).await
    );
}

pub(crate) fn tool_ids(server: &Value) -> Vec<String> {
    server["tools"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["id"].as_str().unwrap().to_owned())
        .collect()
}

/// Puts `tools` in the global bindings.
pub(crate) async fn bind_globally(app: &TestApp, tools: &[&str]) {
    bind(app, None, tools).await;
}

/// Puts `tools` in workflow `workflow`'s bindings (`None`: the global ones).
pub(crate) async fn bind(app: &TestApp, workflow: Option<&str>, tools: &[&str]) {
    let key = app
        .api_key_with(&[Scope::BindingsRead, Scope::BindingsWrite])
        .await;
    let res = app
        .client
        .get(app.url("/api/bindings"))
        .bearer_auth(&key)
        .send()
        .await
        .unwrap();
    let etag = res.headers()["etag"].to_str().unwrap().to_owned();
    let mut bindings: Value = res.json().await.unwrap();
    let list = match workflow {
        Some(w) => &mut bindings["workflows"][w],
        None => &mut bindings["global"],
    };
    for t in tools {
        list.as_array_mut().unwrap().push(json!(t));
    }
    let res = app
        .client
        .put(app.url("/api/bindings"))
        .bearer_auth(&key)
        .header("If-Match", etag)
        .json(&bindings)
        .send()
        .await
        .unwrap();
    assert_eq!(res.status(), 200, "{}", res.text().await.unwrap());
}

/// An app with the upstream added as `test`, its tools imported, and
/// `test__echo`, `test__add` and `test__fail` bound globally.
pub(crate) async fn connected() -> (TestApp, Running, String, i64, Session) {
    let app = spawn_app().await;
    let up = start_upstream().await;
    let key = app.api_key_with(&[Scope::CatalogueWrite]).await;
    let (status, body) = add_server(
        &app,
        &key,
        json!({"name": "test", "url": up.url, "headers": {"X-Upstream-Key": "s3cret-value"}}),
    )
    .await;
    assert_eq!(status, 201, "{body}");
    let id = body["id"].as_i64().unwrap();
    wait_for(&app, &key, id, |s| s["status"] == "connected").await;
    bind_globally(&app, &["test__echo", "test__add", "test__fail"]).await;
    let s = open(&app, &app.api_key().await, "idv").await;
    (app, up, key, id, s)
}

#[tokio::test]
async fn an_added_servers_tools_are_imported_from_every_page_and_its_headers_never_shown() {
    let (app, up, key, id, _) = connected().await;
    let server = get_server(&app, &key, id).await;
    assert_eq!(
        tool_ids(&server),
        ["test__add", "test__echo", "test__fail"],
        "{server}"
    );
    assert_eq!(server["name"], "test");
    assert_eq!(server["tools"][1]["upstreamName"], "echo");
    assert_eq!(
        server["tools"][1]["description"],
        "Echoes the message back."
    );
    assert!(server["lastError"].is_null(), "{server}");
    // The headers went upstream, and come back in no answer.
    assert!(up
        .upstream
        .seen_keys
        .lock()
        .unwrap()
        .contains(&"s3cret-value".to_owned()));
    let list = app
        .client
        .get(app.url("/api/mcp-servers"))
        .bearer_auth(&key)
        .send()
        .await
        .unwrap();
    let text = list.text().await.unwrap();
    assert!(
        text.contains("test__echo") && !text.contains("s3cret"),
        "{text}"
    );
    assert!(!server.to_string().contains("s3cret") && server.get("headers").is_none());
    // They are catalogue tools, with the upstream's schema.
    let catalogue: Value = app
        .client
        .get(app.url("/api/catalogue"))
        .bearer_auth(app.api_key().await)
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    let echo = catalogue["tools"]
        .as_array()
        .unwrap()
        .iter()
        .find(|t| t["id"] == "test__echo")
        .unwrap();
    assert_eq!(echo["parameters"]["required"], json!(["message"]));
}

#[tokio::test]
async fn a_sessions_call_of_a_bound_upstream_tool_is_forwarded_and_answered() {
    let (app, up, _, _, s) = connected().await;
    let (status, reply) = call(&app, &s, "test__echo", json!({"message": "hi"})).await;
    assert_eq!(status, 200, "{reply}");
    assert_eq!(reply["allowed"], true, "{reply}");
    assert_eq!(reply["result"]["text"], "Echo: hi", "{reply}");
    assert_eq!(reply["result"]["isError"], false);
    let (_, sum) = call(&app, &s, "test__add", json!({"a": 2, "b": 3})).await;
    assert_eq!(
        sum["result"]["structuredContent"],
        json!({"sum": 5.0}),
        "{sum}"
    );
    // An upstream error is a failed call the model reads.
    let (_, failed) = call(&app, &s, "test__fail", json!({})).await;
    assert_eq!(
        (failed["allowed"].clone(), failed["status"].clone()),
        (json!(true), json!("failed")),
        "{failed}"
    );
    assert_eq!(failed["result"]["text"], "it broke");
    // Arguments are checked against the upstream schema before forwarding.
    let before = up.upstream.calls.load(Ordering::SeqCst);
    let (_, bad) = call(&app, &s, "test__echo", json!({})).await;
    assert_eq!(bad["allowed"], false, "{bad}");
    assert_eq!(
        up.upstream.calls.load(Ordering::SeqCst),
        before,
        "nothing reached the upstream"
    );
}

#[tokio::test]
async fn the_sessions_own_mcp_endpoint_lists_and_passes_through_upstream_tools() {
    use rmcp::transport::streamable_http_client::StreamableHttpClientTransportConfig;
    use rmcp::transport::StreamableHttpClientTransport;
    use rmcp::ServiceExt;
    let (app, _up, _, _, s) = connected().await;
    let url = app.url(&format!("/api/sessions/{}/mcp", s.id));
    let transport = StreamableHttpClientTransport::from_config(
        StreamableHttpClientTransportConfig::with_uri(url).auth_header(s.token.clone()),
    );
    let client = ().serve(transport).await.expect("MCP initialize");
    let tools = client.list_all_tools().await.unwrap();
    assert!(tools.iter().any(|t| t.name == "test__echo"), "{tools:?}");
    let mut args = serde_json::Map::new();
    args.insert("message".into(), json!("via mcp"));
    let res = client
        .call_tool(CallToolRequestParams::new("test__echo").with_arguments(args))
        .await
        .unwrap();
    assert_eq!(res.is_error, Some(false), "{res:?}");
    assert!(
        serde_json::to_string(&res.content)
            .unwrap()
            .contains("Echo: via mcp"),
        "{res:?}"
    );
    client.cancel().await.unwrap();
}

#[tokio::test]
async fn an_unbound_upstream_tool_is_refused_before_anything_reaches_the_upstream() {
    let app = spawn_app().await;
    let up = start_upstream().await;
    let key = app.api_key_with(&[Scope::CatalogueWrite]).await;
    let (_, body) = add_server(&app, &key, json!({"name": "test", "url": up.url})).await;
    let id = body["id"].as_i64().unwrap();
    wait_for(&app, &key, id, |s| s["status"] == "connected").await;
    let s = open(&app, &app.api_key().await, "idv").await;
    let (status, reply) = call(&app, &s, "test__echo", json!({"message": "hi"})).await;
    assert_eq!(
        (status, reply["allowed"].clone()),
        (200, json!(false)),
        "{reply}"
    );
    assert_eq!(up.upstream.calls.load(Ordering::SeqCst), 0);
}

#[tokio::test]
async fn a_tool_gone_upstream_stays_in_the_catalogue_unavailable_and_is_refused_saying_so() {
    let (app, up, key, id, s) = connected().await;
    up.upstream.remove_tool("add").await;
    let server = wait_for(&app, &key, id, |s| {
        s["tools"]
            .as_array()
            .unwrap()
            .iter()
            .any(|t| t["id"] == "test__add" && t["available"] == false)
    })
    .await;
    assert!(
        tool_ids(&server).contains(&"test__add".to_owned()),
        "kept: {server}"
    );
    let (_, reply) = call(&app, &s, "test__add", json!({"a": 1, "b": 1})).await;
    assert_eq!(reply["allowed"], false, "{reply}");
    let reason = reply["reason"].as_str().unwrap();
    assert!(
        reason.contains("unavailable") && reason.contains("no longer lists"),
        "{reason}"
    );
    let (_, echo) = call(&app, &s, "test__echo", json!({"message": "still"})).await;
    assert_eq!(echo["result"]["text"], "Echo: still", "{echo}");
}

#[tokio::test]
async fn an_upstream_that_is_down_gives_a_readable_refusal_and_an_error_status() {
    let (app, up, key, id, s) = connected().await;
    up.task.abort();
    let _ = up.task.await;
    let (status, reply) = call(&app, &s, "test__echo", json!({"message": "hi"})).await;
    assert_eq!(
        (status, reply["allowed"].clone()),
        (200, json!(false)),
        "{reply}"
    );
    let reason = reply["reason"].as_str().unwrap();
    assert!(
        reason.contains("could not run") && reason.contains("MCP server"),
        "{reason}"
    );
    assert!(!reason.contains("rmcp::"), "no Rust type names: {reason}");
    let server = wait_for(&app, &key, id, |s| s["status"] == "error").await;
    assert!(
        server["lastError"].as_str().is_some_and(|e| !e.is_empty()),
        "{server}"
    );

    // A server that never answers is in error from the start.
    let closed = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let url = format!("http://{}/mcp", closed.local_addr().unwrap());
    drop(closed);
    let (_, body) = add_server(&app, &key, json!({"name": "gone", "url": url})).await;
    let gone = body["id"].as_i64().unwrap();
    let server = wait_for(&app, &key, gone, |s| s["status"] == "error").await;
    assert!(
        server["lastError"].as_str().unwrap().contains("connect"),
        "{server}"
    );
}

#[tokio::test]
async fn bad_input_is_refused_naming_the_field_and_nothing_is_stored() {
    let app = spawn_app().await;
    let key = app.api_key_with(&[Scope::CatalogueWrite]).await;
    let big = "v".repeat(9 * 1024);
    let refused = [
        (
            json!({"name": "Bad Name", "url": "http://127.0.0.1:1/mcp"}),
            "name",
        ),
        (json!({"name": "ok", "url": "ftp://127.0.0.1/mcp"}), "url"),
        (
            json!({"name": "ok", "url": "http://user:pw@127.0.0.1/mcp"}),
            "url",
        ),
        (
            json!({"name": "ok", "url": "http://127.0.0.1:1/mcp", "headers": {"x-key": big}}),
            "headers",
        ),
        (
            json!({"name": "ok", "url": "http://127.0.0.1:1/mcp", "headers": {"Host": "x"}}),
            "headers.Host",
        ),
    ];
    refused_naming_and_none_stored(&app, &key, refused).await;
    let (status, _) = add_server(
        &app,
        &key,
        json!({"name": "twice", "url": "http://127.0.0.1:1/mcp"}),
    )
    .await;
    assert_eq!(status, 201);
    let (status, _) = add_server(
        &app,
        &key,
        json!({"name": "twice", "url": "http://127.0.0.1:1/mcp"}),
    )
    .await;
    assert_eq!(status, 409);
}

#[tokio::test]
async fn the_routes_need_a_key_scoped_catalogue_write_and_delete_removes_the_server() {
    let app = spawn_app().await;
    let reader = app
        .api_key_with(&[Scope::BindingsRead, Scope::Sessions])
        .await;
    let (status, _) = add_server(
        &app,
        &reader,
        json!({"name": "x", "url": "http://127.0.0.1:1/mcp"}),
    )
    .await;
    assert_eq!(status, 403);
    let res = app
        .client
        .get(app.url("/api/mcp-servers"))
        .bearer_auth(&reader)
        .send()
        .await
        .unwrap();
    assert_eq!(res.status(), 403);
    let res = app
        .client
        .get(app.url("/api/mcp-servers"))
        .send()
        .await
        .unwrap();
    assert_eq!(res.status(), 401);

    let key = app.api_key_with(&[Scope::CatalogueWrite]).await;
    let (_, body) = add_server(
        &app,
        &key,
        json!({"name": "x", "url": "http://127.0.0.1:1/mcp"}),
    )
    .await;
    let id = body["id"].as_i64().unwrap();
    let url = app.url(&format!("/api/mcp-servers/{id}"));
    let res = app
        .client
        .delete(&url)
        .bearer_auth(&reader)
        .send()
        .await
        .unwrap();
    assert_eq!(res.status(), 403);
    let res = app
        .client
        .delete(&url)
        .bearer_auth(&key)
        .send()
        .await
        .unwrap();
    assert_eq!(res.status(), 204);
    let res = app.client.get(&url).bearer_auth(&key).send().await.unwrap();
    assert_eq!(res.status(), 404);
}

#[tokio::test]
async fn the_workflow_agents_tool_list_names_each_imported_tools_server() {
    use rmcp::transport::streamable_http_client::StreamableHttpClientTransportConfig;
    use rmcp::transport::StreamableHttpClientTransport;
    use rmcp::ServiceExt;
    let (app, _up, _, _, _) = connected().await;
    let key = app.api_key_with(&[Scope::WorkflowsWrite]).await;
    let transport = StreamableHttpClientTransport::from_config(
        StreamableHttpClientTransportConfig::with_uri(app.url("/mcp")).auth_header(key),
    );
    let client = ().serve(transport).await.expect("MCP initialize");
    let res = client
        .call_tool(CallToolRequestParams::new("list_available_mcp_tools"))
        .await
        .unwrap();
    let text = res.content[0].as_text().expect("a text answer");
    let listed: Value = serde_json::from_str(&text.text).unwrap();
    let entry = |id: &str| {
        listed
            .as_array()
            .unwrap()
            .iter()
            .find(|t| t["id"] == id)
            .cloned()
            .unwrap_or_else(|| panic!("{id} not listed: {listed}"))
    };
    let echo = entry("test__echo");
    assert_eq!(
        (echo["mcpServer"].clone(), echo["available"].clone()),
        (json!("test"), json!(true)),
        "{echo}"
    );
    assert!(entry("check_balance").get("mcpServer").is_none());
    client.cancel().await.unwrap();
}
