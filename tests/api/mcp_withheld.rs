//! An imported tool its MCP server no longer offers is withheld, not
//! deleted: against the in-process upstream of `mcp_servers`, a bound
//! tool that disappears upstream (or whose server is removed) leaves the
//! session's listing in every format, its MCP endpoint's `tools/list` (with
//! `notifications/tools/list_changed`) and its events, and a call of it is
//! refused saying why; listed again upstream, it is offered and callable
//! again.

use crate::helpers::{TestApp, ADMIN};
use crate::mcp_servers::connected;
use crate::sessions::{call, open, open_with, read_events, subscribe, tools_body, Session};
use rmcp::model::CallToolRequestParams;
use rmcp::service::{NotificationContext, RunningService};
use rmcp::transport::streamable_http_client::StreamableHttpClientTransportConfig;
use rmcp::transport::StreamableHttpClientTransport;
use rmcp::{ClientHandler, RoleClient, ServiceExt};
use serde_json::{json, Value};
use std::sync::atomic::Ordering;
use std::sync::Arc;
use std::time::Duration;
use tokio::sync::Notify;

/// An MCP client of a session that hears `tools/list_changed`.
#[derive(Clone)]
struct Watcher {
    changed: Arc<Notify>,
}

impl ClientHandler for Watcher {
    async fn on_tool_list_changed(&self, _context: NotificationContext<RoleClient>) {
        self.changed.notify_one();
    }
}

async fn mcp_client(
    app: &TestApp,
    s: &Session,
) -> (RunningService<RoleClient, Watcher>, Arc<Notify>) {
    let url = app.url(&format!("/api/sessions/{}/mcp", s.id));
    let transport = StreamableHttpClientTransport::from_config(
        StreamableHttpClientTransportConfig::with_uri(url).auth_header(s.token.clone()),
    );
    let changed = Arc::new(Notify::new());
    let watcher = Watcher {
        changed: changed.clone(),
    };
    (
        watcher.serve(transport).await.expect("MCP initialize"),
        changed,
    )
}

async fn mcp_names(client: &RunningService<RoleClient, Watcher>) -> Vec<String> {
    let tools = client.list_all_tools().await.unwrap();
    tools.iter().map(|t| t.name.to_string()).collect()
}

/// Whether the session's REST listing names `tool`: asserts its names and
/// its declarations in every format agree.
async fn listed(app: &TestApp, s: &Session, tool: &str) -> bool {
    let mut answers = Vec::new();
    for format in ["gemini", "openai", "anthropic", "ultravox"] {
        let body = tools_body(app, s, format).await;
        let named = body["available"]
            .as_array()
            .unwrap()
            .iter()
            .any(|t| t == tool);
        let declared = body["tools"].to_string().contains(&format!("\"{tool}\""));
        assert_eq!(named, declared, "{format}: {body}");
        answers.push(named);
    }
    assert!(answers.windows(2).all(|w| w[0] == w[1]), "{answers:?}");
    answers[0]
}

/// `DELETE /api/mcp-servers/{id}`.
async fn remove_server(app: &TestApp, key: &str, id: i64) {
    let res = app
        .client
        .delete(app.url(&format!("/api/mcp-servers/{id}")))
        .bearer_auth(key)
        .send()
        .await
        .unwrap();
    assert_eq!(res.status(), 204);
}

async fn told(changed: &Notify, what: &str) {
    tokio::time::timeout(Duration::from_secs(10), changed.notified())
        .await
        .unwrap_or_else(|_| panic!("no tools/list_changed {what}"));
}

#[tokio::test]
async fn a_bound_upstream_tool_gone_upstream_is_withheld_then_offered_again_when_it_comes_back() {
    let (app, up, _, _, s) = connected().await;
    let (client, changed) = mcp_client(&app, &s).await;
    assert!(listed(&app, &s, "test__add").await);
    assert!(mcp_names(&client).await.contains(&"test__add".to_owned()));
    let events = subscribe(&app, &s, None).await;

    up.upstream.remove_tool("add").await;
    told(&changed, "when the tool went").await;
    assert!(!mcp_names(&client).await.contains(&"test__add".to_owned()));
    assert!(!listed(&app, &s, "test__add").await);
    assert!(listed(&app, &s, "test__echo").await, "the others stay");
    let events = read_events(events, 2).await;
    let news = events
        .iter()
        .find(|(_, e)| e["type"] == "tools_changed")
        .unwrap_or_else(|| panic!("{events:?}"));
    let tools = news.1["data"]["tools"].as_array().unwrap();
    assert!(
        !tools.contains(&json!("test__add")) && tools.contains(&json!("test__echo")),
        "{news:?}"
    );
    let late = read_events(subscribe(&app, &s, None).await, 1).await;
    assert!(
        !late[0].1["data"]["tools"]
            .as_array()
            .unwrap()
            .contains(&json!("test__add")),
        "a new watcher's snapshot: {late:?}"
    );

    // A call of it is refused saying why, and nothing reaches the upstream.
    let before = up.upstream.calls.load(Ordering::SeqCst);
    let (status, reply) = call(&app, &s, "test__add", json!({"a": 1, "b": 2})).await;
    assert_eq!(status, 200, "{reply}");
    assert_eq!(reply["allowed"], false, "{reply}");
    let why = "`test__add` is unavailable: its MCP server no longer lists `add`";
    assert_eq!(reply["reason"], why, "{reply}");
    let mut args = serde_json::Map::new();
    args.insert("a".into(), json!(1));
    args.insert("b".into(), json!(2));
    let res = client
        .call_tool(CallToolRequestParams::new("test__add").with_arguments(args.clone()))
        .await
        .unwrap();
    assert_eq!(res.is_error, Some(true), "{res:?}");
    assert!(
        serde_json::to_string(&res.content).unwrap().contains(why),
        "{res:?}"
    );
    assert_eq!(up.upstream.calls.load(Ordering::SeqCst), before);
    let recorded: Value = app
        .client
        .get(app.url(&format!("/api/sessions/{}/calls", s.id)))
        .bearer_auth(&s.token)
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    assert!(recorded.to_string().contains(why), "recorded: {recorded}");

    // Back upstream: offered and callable again.
    up.upstream.bring_back("add").await;
    told(&changed, "when the tool came back").await;
    assert!(mcp_names(&client).await.contains(&"test__add".to_owned()));
    assert!(listed(&app, &s, "test__add").await);
    let (_, sum) = call(&app, &s, "test__add", json!({"a": 2, "b": 3})).await;
    assert_eq!(sum["allowed"], true, "{sum}");
    assert_eq!(sum["result"]["structuredContent"], json!({"sum": 5.0}));
    let res = client
        .call_tool(CallToolRequestParams::new("test__add").with_arguments(args))
        .await
        .unwrap();
    assert_eq!(res.is_error, Some(false), "{res:?}");
    client.cancel().await.unwrap();
}

#[tokio::test]
async fn a_removed_servers_tools_are_withheld_from_every_session_saying_so() {
    let (app, _up, key, id, s) = connected().await;
    let (client, changed) = mcp_client(&app, &s).await;
    assert!(listed(&app, &s, "test__echo").await);
    remove_server(&app, &key, id).await;
    // Withheld by the time the removal is answered.
    assert!(!listed(&app, &s, "test__echo").await);
    told(&changed, "when the server was removed").await;
    let names = mcp_names(&client).await;
    assert!(
        !names.iter().any(|n| n.starts_with("test__")) && names.contains(&"start_workflow".into()),
        "{names:?}"
    );
    let (_, reply) = call(&app, &s, "test__echo", json!({"message": "hi"})).await;
    assert_eq!(reply["allowed"], false, "{reply}");
    assert_eq!(
        reply["reason"],
        "`test__echo` is unavailable: its MCP server was removed"
    );
    // A new session is not offered them either; the catalogue keeps them.
    let fresh = open(&app, &app.api_key().await, "idv").await;
    assert!(!listed(&app, &fresh, "test__fail").await);
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
    assert!(
        catalogue.to_string().contains("\"test__echo\""),
        "{catalogue}"
    );
    // The bindings matrix marks them unavailable, saying why.
    let admin = app.signed_in(ADMIN).await;
    let matrix: Value = app
        .rpc_with(&admin, "bindings_matrix", &[])
        .await
        .json()
        .await
        .unwrap();
    assert_eq!(
        matrix["withheld"]["test__echo"], "its MCP server was removed",
        "{}",
        matrix["withheld"]
    );
    let page = admin
        .get(app.url("/bindings"))
        .send()
        .await
        .unwrap()
        .text()
        .await
        .unwrap();
    assert!(
        page.contains("data-withheld=\"its MCP server was removed\""),
        "the matrix's column says so"
    );
    client.cancel().await.unwrap();
}

#[tokio::test]
async fn a_withheld_tool_the_session_is_not_bound_to_is_refused_as_not_available_there() {
    let (app, _up, key, id, s) = connected().await;
    let vibe = open_with(&app, &app.api_key().await, json!({"vibeId": "todos"})).await;
    remove_server(&app, &key, id).await;
    // Bound where `s` is: withheld. Not bound to the vibe's agent: the
    // refusal says so, as it would with the server there.
    let (_, bound) = call(&app, &s, "test__echo", json!({"message": "hi"})).await;
    assert_eq!(
        bound["reason"],
        "`test__echo` is unavailable: its MCP server was removed"
    );
    let (_, unbound) = call(&app, &vibe, "test__echo", json!({"message": "hi"})).await;
    let reason = unbound["reason"].as_str().unwrap();
    assert!(
        reason.starts_with("`test__echo` is not available to agent"),
        "{reason}"
    );
}
