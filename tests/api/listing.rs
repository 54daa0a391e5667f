//! The three doors describe a session's tools from its one listing: REST
//! (`GET …/tools` in every format), MCP (`tools/list`) and the admins'
//! console (`session_page`'s tools, the callable ones first) agree on
//! each tool's name, description and schema, for a banking, a tutor and a
//! vibe session.

use crate::helpers::{spawn_app, TestApp, ADMIN, TEACHER};
use crate::lesson_sessions::full_lesson;
use crate::sessions::{open, open_with, tools_body, Session};
use rmcp::transport::streamable_http_client::StreamableHttpClientTransportConfig;
use rmcp::transport::StreamableHttpClientTransport;
use rmcp::ServiceExt;
use serde_json::{json, Value};
use switchboard::domain::api_key::Scope;
use switchboard::domain::declaration::gemini;

/// One tool as a door describes it: name, description, schema (`Null`
/// where the door's shape has none of its own, as Ultravox's).
type Described = (String, String, Value);

fn triple(name: &Value, description: &Value, parameters: &Value) -> Described {
    (
        name.as_str().unwrap().to_owned(),
        description.as_str().unwrap_or_default().to_owned(),
        parameters.clone(),
    )
}

/// `GET …/tools` in each format, as (format, its tools).
async fn rest(app: &TestApp, s: &Session) -> (Vec<String>, Vec<(String, Vec<Described>)>) {
    let gemini = tools_body(app, s, "gemini").await;
    let available = serde_json::from_value(gemini["available"].clone()).unwrap();
    let mut doors = Vec::new();
    for format in [
        "gemini",
        "openai",
        "openai-realtime",
        "anthropic",
        "ultravox",
        "nova-sonic",
    ] {
        let body = tools_body(app, s, format).await;
        let tools: Vec<Described> = match format {
            "gemini" => body["tools"]["functionDeclarations"]
                .as_array()
                .unwrap()
                .iter()
                .map(|d| triple(&d["name"], &d["description"], &d["parameters"]))
                .collect(),
            "openai" => body["tools"]["tools"]
                .as_array()
                .unwrap()
                .iter()
                .map(|t| &t["function"])
                .map(|f| triple(&f["name"], &f["description"], &f["parameters"]))
                .collect(),
            "openai-realtime" => body["tools"]["tools"]
                .as_array()
                .unwrap()
                .iter()
                .inspect(|t| assert_eq!(t["type"], "function"))
                .map(|t| triple(&t["name"], &t["description"], &t["parameters"]))
                .collect(),
            "nova-sonic" => body["tools"]["toolConfiguration"]["tools"]
                .as_array()
                .unwrap()
                .iter()
                .map(|t| &t["toolSpec"])
                .map(|t| {
                    let schema: Value =
                        serde_json::from_str(t["inputSchema"]["json"].as_str().unwrap()).unwrap();
                    triple(&t["name"], &t["description"], &schema)
                })
                .collect(),
            "anthropic" => body["tools"]["tools"]
                .as_array()
                .unwrap()
                .iter()
                .map(|t| triple(&t["name"], &t["description"], &t["input_schema"]))
                .collect(),
            _ => body["tools"]["selectedTools"]
                .as_array()
                .unwrap()
                .iter()
                .map(|t| match t.get("temporaryTool") {
                    Some(tool) => {
                        triple(&tool["modelToolName"], &tool["description"], &Value::Null)
                    }
                    None => triple(&t["toolName"], &Value::Null, &Value::Null),
                })
                .collect(),
        };
        doors.push((format.to_owned(), tools));
    }
    (available, doors)
}

/// MCP `tools/list` with the session token.
async fn mcp(app: &TestApp, s: &Session) -> Vec<Described> {
    let url = app.url(&format!("/api/sessions/{}/mcp", s.id));
    let transport = StreamableHttpClientTransport::from_config(
        StreamableHttpClientTransportConfig::with_uri(url).auth_header(s.token.clone()),
    );
    let client = ().serve(transport).await.expect("MCP initialize");
    let tools = client.list_all_tools().await.unwrap();
    client.cancel().await.unwrap();
    tools
        .iter()
        .map(|t| {
            (
                t.name.to_string(),
                t.description.as_deref().unwrap_or_default().to_owned(),
                Value::Object((*t.input_schema).clone()),
            )
        })
        .collect()
}

/// The console's first `n` tools (the callable ones), for an admin.
async fn console(app: &TestApp, admin: &reqwest::Client, s: &Session, n: usize) -> Vec<Described> {
    let data: Value = app
        .rpc_with(admin, "session_page", &[("id", &s.id)])
        .await
        .json()
        .await
        .unwrap();
    let tools = data["consoleTools"].as_array().unwrap();
    assert!(tools.len() >= n, "{data}");
    tools[..n]
        .iter()
        .map(|t| triple(&t["id"], &t["description"], &t["parameters"]))
        .collect()
}

/// Every door describes exactly `s`'s available tools, alike; returns the
/// description (REST's OpenAI shape: the JSON Schema as the catalogue
/// holds it; Gemini's is that schema in Gemini's own `Schema`).
async fn doors_agree(app: &TestApp, admin: &reqwest::Client, s: &Session) -> Vec<Described> {
    let (available, formats) = rest(app, s).await;
    let listed = formats
        .iter()
        .find(|(f, _)| f == "openai")
        .expect("an OpenAI listing")
        .1
        .clone();
    let names: Vec<String> = listed.iter().map(|t| t.0.clone()).collect();
    assert_eq!(names, available, "every available tool is declared");
    for (format, tools) in &formats {
        // Ultravox selects its own tools (such as `hangUp`) by name only.
        let comparable: Vec<Described> = listed
            .iter()
            .zip(tools)
            .map(|((n, d, p), (_, said, _))| match format.as_str() {
                "ultravox" if said.is_empty() => (n.clone(), String::new(), Value::Null),
                "ultravox" => (n.clone(), d.clone(), Value::Null),
                "gemini" => (n.clone(), d.clone(), gemini::schema(p)),
                _ => (n.clone(), d.clone(), p.clone()),
            })
            .collect();
        assert_eq!(tools.len(), listed.len(), "REST {format}");
        assert_eq!(tools, &comparable, "REST {format}");
    }
    assert_eq!(mcp(app, s).await, listed, "MCP tools/list");
    assert_eq!(
        console(app, admin, s, listed.len()).await,
        listed,
        "the console"
    );
    listed
}

#[tokio::test]
async fn rest_mcp_and_the_console_describe_a_banking_session_alike() {
    let app = spawn_app().await;
    let admin = app.signed_in(ADMIN).await;
    let key = app.api_key().await;
    let s = open(&app, &key, "banking-master").await;
    let listed = doors_agree(&app, &admin, &s).await;
    let switch = listed.iter().find(|t| t.0 == "start_workflow").unwrap();
    assert!(
        switch.2["properties"]["workflowId"]["enum"].is_array(),
        "the workflow switch names the real workflows, in every door: {switch:?}"
    );
}

#[tokio::test]
async fn rest_mcp_and_the_console_describe_a_vibe_session_alike() {
    let app = spawn_app().await;
    let admin = app.signed_in(ADMIN).await;
    let key = app.api_key().await;
    let s = open_with(&app, &key, json!({"vibeId": "todos"})).await;
    let listed = doors_agree(&app, &admin, &s).await;
    assert!(listed.iter().any(|t| t.0 == "switchAgent"), "{listed:?}");
    let s = open_with(&app, &key, json!({"vibeId": "todos", "agentId": "Oliver"})).await;
    let listed = doors_agree(&app, &admin, &s).await;
    assert!(listed.iter().any(|t| t.0 == "createTodo"), "{listed:?}");
    let body = tools_body(&app, &s, "ultravox").await;
    assert_eq!(
        body["selectedTools"].as_array().unwrap().len(),
        listed.len(),
        "the agent's stage selects the same tools"
    );
}

/// A tutor session's tools are described as the catalogue in force has
/// them (what a call's arguments are checked against), by every door, even
/// after an admin edits a tutor tool's description.
#[tokio::test]
async fn rest_mcp_and_the_console_describe_a_tutor_session_alike() {
    let app = spawn_app().await;
    app.login(TEACHER).await;
    let admin = app.signed_in(ADMIN).await;
    let lesson = full_lesson(&app).await;
    let key = app
        .api_key_with(&[Scope::Sessions, Scope::LessonsRead, Scope::CatalogueWrite])
        .await;
    let catalogue: Value = app
        .client
        .get(app.url("/api/catalogue"))
        .bearer_auth(&key)
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    let mut tool = catalogue["tools"]
        .as_array()
        .unwrap()
        .iter()
        .find(|t| t["id"] == "mark_for_review")
        .unwrap()
        .clone();
    tool["description"] = json!("Note a mistake to review later (edited by an admin).");
    let res = app
        .client
        .put(app.url("/api/catalogue/tools/mark_for_review"))
        .bearer_auth(&key)
        .header("If-Match", format!("\"{}\"", catalogue["version"]))
        .json(&tool)
        .send()
        .await
        .unwrap();
    assert_eq!(res.status(), 200, "{}", res.text().await.unwrap());

    let s = open_with(&app, &key, json!({"lessonId": lesson, "student": "Ana"})).await;
    let listed = doors_agree(&app, &admin, &s).await;
    let review = listed.iter().find(|t| t.0 == "mark_for_review").unwrap();
    assert_eq!(
        review.1, "Note a mistake to review later (edited by an admin).",
        "the catalogue in force"
    );
    let body = tools_body(&app, &s, "gemini").await;
    assert_eq!(body["lessonId"], lesson);
    assert!(body["systemPrompt"].as_str().unwrap().len() > 20, "{body}");
}
