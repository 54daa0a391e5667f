//! How connected MCP servers are reached beyond plain HTTP.
//!
//! HTTPS: an rmcp server the test serves over TLS with a fixed test
//! certificate (`tests/fixtures/tls`, signed by a test CA) is refused for
//! its certificate, with a last error saying so — so TLS is spoken — and
//! connects once the CA is trusted through `MCP_CA_FILE`.
//!
//! Stdio: a command is refused while `MCP_STDIO_ALLOWED` is off; with it on,
//! the real `@modelcontextprotocol/server-everything` (end2end's
//! node_modules, installed by `make e2e-deps`) is started in its stdio mode,
//! its `echo` imported and callable from a session, its variables never
//! shown; removing the server, or stopping Switchboard, ends the process;
//! a process that exits says, in the last error, what it wrote to stderr.

use crate::helpers::{spawn_app, spawn_app_with, TestApp, ADMIN, TEACHER};
use crate::mcp_servers::{
    add_server, bind_globally, get_server, refused_naming_and_none_stored, tool_ids, wait_for,
};
use crate::sessions::{call, open};
use hyper_util::rt::TokioIo;
use hyper_util::service::TowerToHyperService;
use rmcp::model::{
    CallToolRequestParams, CallToolResponse, CallToolResult, ContentBlock, ListToolsResult,
    PaginatedRequestParams, ServerCapabilities, ServerConfig, Tool,
};
use rmcp::service::RequestContext;
use rmcp::transport::streamable_http_server::session::local::LocalSessionManager;
use rmcp::transport::streamable_http_server::{StreamableHttpServerConfig, StreamableHttpService};
use rmcp::{ErrorData as McpError, RoleServer, ServerHandler};
use serde_json::{json, Value};
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;
use switchboard::domain::api_key::Scope;
use tokio_rustls::rustls;

/// A fixture file of `tests/fixtures/tls`.
fn fixture(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures/tls")
        .join(name)
}

/// An upstream with one tool, `echo`.
#[derive(Clone)]
struct Echo;

impl ServerHandler for Echo {
    fn get_info(&self) -> ServerConfig {
        ServerConfig::new(ServerCapabilities::builder().enable_tools().build())
    }

    async fn list_tools(
        &self,
        _request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListToolsResult, McpError> {
        let Value::Object(schema) =
            json!({"type": "object", "properties": {"message": {"type": "string"}}})
        else {
            unreachable!()
        };
        let echo = Tool::new("echo", "Echoes the message back.", Arc::new(schema));
        Ok(ListToolsResult::with_all_items(vec![echo]))
    }

    async fn call_tool(
        &self,
        request: CallToolRequestParams,
        _context: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, McpError> {
        let args = request.arguments.unwrap_or_default();
        let message = args.get("message").and_then(Value::as_str).unwrap_or("");
        Ok(CallToolResult::success(vec![ContentBlock::text(format!("Echo: {message}"))]).into())
    }
}

/// Serves [`Echo`] over TLS with the fixture certificate (for 127.0.0.1,
/// signed by the fixture CA); its `https://` URL. The task ends with the
/// test's runtime.
async fn start_tls_upstream() -> String {
    use rustls::pki_types::pem::PemObject;
    use rustls::pki_types::{CertificateDer, PrivateKeyDer};
    let certs: Vec<CertificateDer<'static>> = CertificateDer::pem_file_iter(fixture("server.pem"))
        .unwrap()
        .collect::<Result<_, _>>()
        .unwrap();
    let key = PrivateKeyDer::from_pem_file(fixture("server.key")).unwrap();
    let provider = Arc::new(rustls::crypto::ring::default_provider());
    let mut config = rustls::ServerConfig::builder_with_provider(provider)
        .with_safe_default_protocol_versions()
        .unwrap()
        .with_no_client_auth()
        .with_single_cert(certs, key)
        .unwrap();
    config.alpn_protocols = vec![b"http/1.1".to_vec()];
    let acceptor = tokio_rustls::TlsAcceptor::from(Arc::new(config));
    let service = StreamableHttpService::new(
        || Ok(Echo),
        Arc::new(LocalSessionManager::default()),
        StreamableHttpServerConfig::default(),
    );
    let router = axum::Router::new().nest_service("/mcp", service);
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let url = format!("https://{}/mcp", listener.local_addr().unwrap());
    tokio::spawn(async move {
        loop {
            let Ok((tcp, _)) = listener.accept().await else {
                continue;
            };
            let (acceptor, router) = (acceptor.clone(), router.clone());
            tokio::spawn(async move {
                // A client that refuses the certificate ends the handshake.
                let Ok(tls) = acceptor.accept(tcp).await else {
                    return;
                };
                let _ = hyper::server::conn::http1::Builder::new()
                    .serve_connection(TokioIo::new(tls), TowerToHyperService::new(router))
                    .await;
            });
        }
    });
    url
}

#[tokio::test]
async fn an_https_upstream_with_an_untrusted_certificate_is_in_error_saying_so() {
    let app = spawn_app().await;
    let url = start_tls_upstream().await;
    let key = app.api_key_with(&[Scope::CatalogueWrite]).await;
    let (status, body) = add_server(&app, &key, json!({"name": "tls", "url": url})).await;
    assert_eq!(status, 201, "{body}");
    let id = body["id"].as_i64().unwrap();
    let server = wait_for(&app, &key, id, |s| s["status"] == "error").await;
    let why = server["lastError"].as_str().unwrap();
    assert!(
        why.contains("certificate") && why.contains("UnknownIssuer"),
        "{why}"
    );
}

#[tokio::test]
async fn an_https_upstream_signed_by_a_ca_in_mcp_ca_file_connects_and_answers() {
    let ca = fixture("ca.pem");
    let app = spawn_app_with(&[("MCP_CA_FILE", ca.to_str().unwrap())]).await;
    let url = start_tls_upstream().await;
    let key = app.api_key_with(&[Scope::CatalogueWrite]).await;
    let (_, body) = add_server(&app, &key, json!({"name": "tls", "url": url})).await;
    let id = body["id"].as_i64().unwrap();
    let server = wait_for(&app, &key, id, |s| s["status"] == "connected").await;
    assert_eq!(tool_ids(&server), ["tls__echo"], "{server}");
    bind_globally(&app, &["tls__echo"]).await;
    let s = open(&app, &app.api_key().await, "idv").await;
    let (_, reply) = call(&app, &s, "tls__echo", json!({"message": "over TLS"})).await;
    assert_eq!(reply["result"]["text"], "Echo: over TLS", "{reply}");
}

#[tokio::test]
async fn an_mcp_ca_file_that_holds_no_certificate_stops_the_start_naming_it() {
    use switchboard::server::platform::config::Config;
    use switchboard::startup::Application;
    let dir = tempfile::tempdir().unwrap();
    let not_pem = dir.path().join("ca.pem");
    std::fs::write(&not_pem, "not a certificate").unwrap();
    for ca in [not_pem, dir.path().join("missing.pem")] {
        let db = format!("sqlite://{}/switchboard.db", dir.path().display());
        let config = Config::from_lookup(|key| match key {
            "PORT" => Some("0".into()),
            "DATABASE_URL" => Some(db.clone()),
            "SWITCHBOARD_TEACHER_PASSWORD" => Some(TEACHER.1.into()),
            "SWITCHBOARD_ADMIN_PASSWORD" => Some(ADMIN.1.into()),
            "MCP_CA_FILE" => Some(ca.display().to_string()),
            _ => None,
        })
        .unwrap();
        match Application::build(config).await {
            Ok(_) => panic!("started with MCP_CA_FILE {}", ca.display()),
            Err(e) => assert!(e.to_string().contains("MCP_CA_FILE"), "{e}"),
        }
    }
}

/// `node` on this machine's `PATH`.
fn node() -> String {
    let path = std::env::var_os("PATH").unwrap_or_default();
    std::env::split_paths(&path)
        .map(|dir| dir.join("node"))
        .find(|candidate| candidate.is_file())
        .expect("Node.js (`node` on PATH) runs the stdio MCP server of these tests")
        .display()
        .to_string()
}

/// The entry point of end2end's `@modelcontextprotocol/server-everything`.
pub(crate) fn everything() -> String {
    let js = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("end2end/node_modules/@modelcontextprotocol/server-everything/dist/index.js");
    assert!(
        js.is_file(),
        "{} is missing: run `make e2e-deps` to install end2end's npm packages",
        js.display()
    );
    js.display().to_string()
}

/// The pid of the process whose environment holds `marker`, if any is
/// running (not a zombie).
fn process_with(marker: &str) -> Option<u32> {
    let needle = marker.as_bytes();
    std::fs::read_dir("/proc")
        .ok()?
        .flatten()
        .find_map(|entry| {
            let pid: u32 = entry.file_name().to_str()?.parse().ok()?;
            let environ = std::fs::read(entry.path().join("environ")).ok()?;
            let stat = std::fs::read_to_string(entry.path().join("stat")).ok()?;
            let zombie = stat.rsplit(')').next()?.trim_start().starts_with('Z');
            (!zombie && environ.windows(needle.len()).any(|w| w == needle)).then_some(pid)
        })
}

/// Waits (at most 10 s) until no process holds `marker`.
async fn wait_until_ended(marker: &str) {
    for _ in 0..200 {
        if process_with(marker).is_none() {
            return;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    panic!("the process holding {marker} is still running");
}

/// A unique marker for one test's process.
fn marker(test: &str) -> String {
    format!("sb-stdio-{test}-{}", std::process::id())
}

/// An app that allows stdio servers, with server-everything added as
/// `everything` (its environment holding `marker`) and connected.
async fn stdio_connected(marker: &str) -> (TestApp, String, i64) {
    let app = spawn_app_with(&[("MCP_STDIO_ALLOWED", "true")]).await;
    let key = app.api_key_with(&[Scope::CatalogueWrite]).await;
    let body = json!({
        "name": "everything",
        "command": [node(), everything(), "stdio"],
        "env": {"SB_TEST_MARKER": marker},
    });
    let (status, added) = add_server(&app, &key, body).await;
    assert_eq!(status, 201, "{added}");
    let id = added["id"].as_i64().unwrap();
    wait_for(&app, &key, id, |s| s["status"] == "connected").await;
    (app, key, id)
}

#[tokio::test]
async fn a_command_is_refused_naming_the_setting_while_stdio_servers_are_off() {
    let app = spawn_app().await;
    let key = app.api_key_with(&[Scope::CatalogueWrite]).await;
    let (status, reply) = add_server(
        &app,
        &key,
        json!({"name": "local", "command": ["node", "server.js"]}),
    )
    .await;
    assert_eq!(status, 422, "{reply}");
    assert_eq!(reply["Invalid"]["field"], "command", "{reply}");
    let rule = reply["Invalid"]["rule"].as_str().unwrap();
    assert!(rule.contains("MCP_STDIO_ALLOWED"), "{rule}");
    let list = app
        .client
        .get(app.url("/api/mcp-servers"))
        .bearer_auth(&key)
        .send()
        .await
        .unwrap();
    assert_eq!(list.json::<Value>().await.unwrap()["servers"], json!([]));
}

#[tokio::test]
async fn a_stdio_server_needs_exactly_one_of_url_and_command_within_the_limits() {
    let app = spawn_app_with(&[("MCP_STDIO_ALLOWED", "true")]).await;
    let key = app.api_key_with(&[Scope::CatalogueWrite]).await;
    let many: Vec<String> = (0..65).map(|i| i.to_string()).collect();
    let long = "a".repeat(4097);
    let big = "v".repeat(16 * 1024);
    let refused = [
        (json!({"name": "x"}), "url"),
        (
            json!({"name": "x", "url": "http://127.0.0.1:1/mcp", "command": ["node"]}),
            "command",
        ),
        (json!({"name": "x", "command": []}), "command"),
        (json!({"name": "x", "command": many}), "command"),
        (json!({"name": "x", "command": ["node", long]}), "command"),
        (
            json!({"name": "x", "command": ["node"], "env": {"TOKEN": big}}),
            "env",
        ),
        (
            json!({"name": "x", "command": ["node"], "headers": {"x-key": "k"}}),
            "headers",
        ),
        (
            json!({"name": "x", "command": ["node"], "env": {"BAD-NAME": "v"}}),
            "env.BAD-NAME",
        ),
        (
            json!({"name": "x", "url": "http://127.0.0.1:1/mcp", "env": {"K": "v"}}),
            "env",
        ),
    ];
    refused_naming_and_none_stored(&app, &key, refused).await;
}

#[tokio::test]
async fn a_stdio_server_is_started_its_echo_called_from_a_session_and_removing_it_ends_it() {
    let marker = marker("remove");
    let (app, key, id) = stdio_connected(&marker).await;
    let server = get_server(&app, &key, id).await;
    assert!(
        tool_ids(&server).contains(&"everything__echo".to_owned()),
        "{server}"
    );
    assert_eq!(server["command"], json!([node(), everything(), "stdio"]));
    assert!(server.get("url").is_none(), "{server}");
    assert!(!server.to_string().contains(&marker), "env never shown");
    assert!(
        process_with(&marker).is_some(),
        "the server's process runs, with its env"
    );

    bind_globally(&app, &["everything__echo"]).await;
    let s = open(&app, &app.api_key().await, "idv").await;
    let (status, reply) = call(&app, &s, "everything__echo", json!({"message": "hi"})).await;
    assert_eq!(status, 200, "{reply}");
    assert_eq!(reply["allowed"], true, "{reply}");
    let text = reply["result"]["text"].as_str().unwrap();
    assert!(text.contains("hi"), "{reply}");

    let res = app
        .client
        .delete(app.url(&format!("/api/mcp-servers/{id}")))
        .bearer_auth(&key)
        .send()
        .await
        .unwrap();
    assert_eq!(res.status(), 204);
    wait_until_ended(&marker).await;
}

#[tokio::test]
async fn stopping_switchboard_ends_a_stdio_servers_process() {
    let marker = marker("stop");
    let (app, _, _) = stdio_connected(&marker).await;
    assert!(process_with(&marker).is_some());
    app.shut_down().await;
    wait_until_ended(&marker).await;
}

#[tokio::test]
async fn a_stdio_server_whose_process_exits_says_what_it_wrote_to_stderr() {
    let app = spawn_app_with(&[("MCP_STDIO_ALLOWED", "true")]).await;
    let key = app.api_key_with(&[Scope::CatalogueWrite]).await;
    let body = json!({"name": "broken", "command": [node(), everything(), "no-such-mode"]});
    let (_, added) = add_server(&app, &key, body).await;
    let id = added["id"].as_i64().unwrap();
    let server = wait_for(&app, &key, id, |s| s["status"] == "error").await;
    let why = server["lastError"].as_str().unwrap();
    assert!(why.contains("Unknown transport: no-such-mode"), "{why}");

    let body = json!({"name": "missing", "command": ["/no/such/program"]});
    let (_, added) = add_server(&app, &key, body).await;
    let id = added["id"].as_i64().unwrap();
    let server = wait_for(&app, &key, id, |s| s["status"] == "error").await;
    let why = server["lastError"].as_str().unwrap();
    assert!(why.contains("could not start /no/such/program"), "{why}");
}
