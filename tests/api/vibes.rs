//! Sessions in a vibe: each agent gets exactly its own tools, switchAgent
//! moves between them in Ultravox's stage-change shape, and agents and
//! vibes are changed over the API with versions.

use crate::helpers::{spawn_app, TestApp};
use crate::sessions::{call, open_with, read_events, subscribe, tools_body, Session};
use serde_json::{json, Value};
use switchboard::domain::api_key::Scope;

async fn switch(app: &TestApp, s: &Session, to: &str) -> Value {
    let (status, body) = call(app, s, "switchAgent", json!({"agentName": to})).await;
    assert_eq!(status, 200, "{body}");
    body
}

#[tokio::test]
async fn the_demo_flow_gives_each_agent_exactly_its_tools() {
    let app = spawn_app().await;
    let key = app.api_key().await;
    let s = open_with(&app, &key, json!({"vibeId": "todos"})).await;

    let tools = tools_body(&app, &s, "ultravox").await;
    assert_eq!(tools["agent"], json!({"vibe": "todos", "agent": "Hominio"}));
    assert_eq!(tools["available"], json!(["hangUp", "switchAgent"]));
    assert_eq!(tools["voice"], "Mark");
    assert!(tools["systemPrompt"]
        .as_str()
        .unwrap()
        .starts_with("You are Hominio"));
    assert!(tools["systemPrompt"]
        .as_str()
        .unwrap()
        .contains("Oliver — Todo creation and management."));
    let selected = tools["selectedTools"].as_array().unwrap();
    assert_eq!(selected[0], json!({"toolName": "hangUp"}));
    assert_eq!(selected[1]["temporaryTool"]["modelToolName"], "switchAgent");
    assert_eq!(
        selected[1]["temporaryTool"]["dynamicParameters"][0],
        json!({"name": "agentName", "location": "PARAMETER_LOCATION_BODY", "schema": {"type": "string", "description": "The name of the agent to switch to."}, "required": true})
    );
    assert_eq!(tools["tools"]["selectedTools"], tools["selectedTools"]);

    let todo = json!({"text": "Buy milk"});
    let (_, refused) = call(&app, &s, "createTodo", todo.clone()).await;
    assert_eq!(refused["allowed"], false);
    assert_eq!(
        refused["reason"],
        "`createTodo` is not available to agent `Hominio`; available: hangUp, switchAgent"
    );

    let switched = switch(&app, &s, "oliver").await;
    assert_eq!(switched["allowed"], true, "{switched}");
    assert_eq!(switched["result"]["responseType"], "new-stage");
    let stage: Value =
        serde_json::from_str(switched["result"]["result"].as_str().unwrap()).unwrap();
    assert_eq!(
        stage["toolResultText"],
        "I'm now switching you to Oliver..."
    );
    assert_eq!(stage["voice"], "Oliver-English");
    assert!(stage["systemPrompt"]
        .as_str()
        .unwrap()
        .starts_with("You are Oliver"));
    let names: Vec<&str> = stage["selectedTools"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| {
            t["toolName"]
                .as_str()
                .or(t["temporaryTool"]["modelToolName"].as_str())
                .unwrap()
        })
        .collect();
    assert_eq!(
        names,
        [
            "hangUp",
            "switchAgent",
            "createTodo",
            "toggleTodo",
            "updateTodo",
            "removeTodo",
            "filterTodos",
            "createList",
            "switchList"
        ]
    );
    assert_eq!(switched["toolsChanged"], true);
    assert_eq!(switched["state"]["agent"]["agent"], "Oliver");

    let (_, created) = call(&app, &s, "createTodo", todo.clone()).await;
    assert_eq!(created["allowed"], true, "{created}");
    assert_eq!(created["result"]["todo"]["text"], "Buy milk");

    switch(&app, &s, "Rajesh").await;
    let (_, again) = call(&app, &s, "createTodo", todo).await;
    assert_eq!(again["allowed"], false);
    assert_eq!(
        again["reason"],
        "`createTodo` is not available to agent `Rajesh`; available: hangUp, switchAgent"
    );

    let nobody = switch(&app, &s, "Nobody").await;
    assert_eq!(nobody["allowed"], false);
    assert_eq!(
        nobody["reason"],
        "there is no agent `Nobody` in vibe `todos`; agents: Hominio, Oliver, Rajesh"
    );

    // Watchers saw each switch; a new one learns the agent from the snapshot.
    let events = read_events(subscribe(&app, &s, None).await, 1).await;
    assert_eq!(
        events[0].1["data"]["agent"]["agentId"], "Rajesh",
        "{}",
        events[0].1
    );

    // Another session's token is refused; hangUp ends the call.
    let other = open_with(&app, &key, json!({"vibeId": "todos", "agentId": "Oliver"})).await;
    let res = app
        .client
        .post(app.url(&format!("/api/sessions/{}/tool-calls", s.id)))
        .bearer_auth(&other.token)
        .json(&json!({"name": "hangUp", "arguments": {}}))
        .send()
        .await
        .unwrap();
    assert_eq!(res.status(), 403);
    let (_, hung) = call(&app, &other, "hangUp", json!({})).await;
    assert_eq!(hung["allowed"], true);
    let (status, _) = call(&app, &other, "hangUp", json!({})).await;
    assert_eq!(status, 409, "ended");
}

#[tokio::test]
async fn switching_agents_is_pushed_to_watchers() {
    let app = spawn_app().await;
    let key = app.api_key().await;
    let s = open_with(&app, &key, json!({"vibeId": "todos"})).await;
    let stream = subscribe(&app, &s, None).await;
    switch(&app, &s, "Oliver").await;
    let events = read_events(stream, 6).await;
    let kinds: Vec<&str> = events
        .iter()
        .map(|(_, e)| e["type"].as_str().unwrap())
        .collect();
    assert!(kinds.contains(&"agent_changed"), "{kinds:?}");
    assert!(kinds.contains(&"tools_changed"), "{kinds:?}");
    let changed = events
        .iter()
        .find(|(_, e)| e["type"] == "agent_changed")
        .unwrap();
    assert_eq!(changed.1["data"]["name"], "Oliver");
    assert_eq!(changed.1["data"]["voiceId"], "Oliver-English");
}

#[tokio::test]
async fn opening_a_vibe_session_checks_vibe_and_agent() {
    let app = spawn_app().await;
    let key = app.api_key().await;
    for (body, field) in [
        (json!({"vibeId": "nope"}), "vibeId"),
        (json!({"vibeId": "todos", "agentId": "Ghost"}), "agentId"),
        (json!({"vibeId": "todos", "workflowId": "idv"}), "vibeId"),
        (json!({"agentId": "Oliver", "workflowId": "idv"}), "agentId"),
    ] {
        let res = app
            .client
            .post(app.url("/api/sessions"))
            .bearer_auth(&key)
            .json(&body)
            .send()
            .await
            .unwrap();
        assert_eq!(res.status(), 422, "{body}");
        let answer: Value = res.json().await.unwrap();
        assert_eq!(answer["Invalid"]["field"], field, "{answer}");
    }
    assert_eq!(app.session_rows().await, 0);
}

async fn put(
    app: &TestApp,
    key: &str,
    path: &str,
    body: &Value,
    header: Option<(&str, &str)>,
) -> (u16, Value, Option<String>) {
    let mut req = app.client.put(app.url(path)).bearer_auth(key).json(body);
    if let Some((name, value)) = header {
        req = req.header(name, value);
    }
    let res = req.send().await.unwrap();
    let status = res.status().as_u16();
    let etag = res
        .headers()
        .get("etag")
        .map(|v| v.to_str().unwrap().to_owned());
    (status, res.json().await.unwrap_or(Value::Null), etag)
}

#[tokio::test]
async fn agents_and_vibes_change_over_the_api_with_versions_and_rules() {
    let app = spawn_app().await;
    let key = app.api_key().await;
    let read_only = app.api_key_with(&[Scope::VibesRead]).await;
    let res = app
        .client
        .get(app.url("/api/agents/Oliver"))
        .bearer_auth(&read_only)
        .send()
        .await
        .unwrap();
    assert_eq!(res.status(), 200);
    let etag = res.headers()["etag"].to_str().unwrap().to_owned();
    assert_eq!(etag, "\"1\"");
    let mut oliver: Value = res.json().await.unwrap();

    // A session talking to Oliver sees a tool go at once.
    let s = open_with(&app, &key, json!({"vibeId": "todos", "agentId": "Oliver"})).await;
    oliver["tools"] = json!(["createTodo", "toggleTodo"]);
    let (status, _, _) = put(
        &app,
        &read_only,
        "/api/agents/Oliver",
        &oliver,
        Some(("If-Match", &etag)),
    )
    .await;
    assert_eq!(status, 403, "needs vibes:write");
    let (status, _, _) = put(&app, &key, "/api/agents/Oliver", &oliver, None).await;
    assert_eq!(status, 428, "no blind overwrite");
    let (status, body, new_tag) = put(
        &app,
        &key,
        "/api/agents/Oliver",
        &oliver,
        Some(("If-Match", &etag)),
    )
    .await;
    assert_eq!(status, 200, "{body}");
    assert_eq!(new_tag.as_deref(), Some("\"2\""));
    let (_, refused) = call(&app, &s, "updateTodo", json!({"todoId": 1, "text": "x"})).await;
    assert_eq!(refused["allowed"], false, "{refused}");
    assert!(refused["reason"]
        .as_str()
        .unwrap()
        .contains("not available to agent `Oliver`"));

    // Stale → 412; a tool outside the vibe → 422 naming object, field, id.
    let (status, body, _) = put(
        &app,
        &key,
        "/api/agents/Oliver",
        &oliver,
        Some(("If-Match", &etag)),
    )
    .await;
    assert_eq!(status, 412, "{body}");
    oliver["tools"] = json!(["createTodo", "get_server_time"]);
    let (status, body, _) = put(
        &app,
        &key,
        "/api/agents/Oliver",
        &oliver,
        Some(("If-Match", "\"2\"")),
    )
    .await;
    assert_eq!(status, 422);
    assert_eq!(body["Invalid"]["field"], "agents.Oliver.tools[1]");
    assert_eq!(
        body["Invalid"]["rule"],
        "tool \"get_server_time\" is not one of vibe \"todos\"'s app or core tools"
    );

    let vibe: Value = app
        .client
        .get(app.url("/api/vibes/todos"))
        .bearer_auth(&key)
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    let mut broken = vibe.clone();
    broken["defaultAgent"] = json!("Ghost");
    let (status, body, _) = put(
        &app,
        &key,
        "/api/vibes/todos",
        &broken,
        Some(("If-Match", "\"1\"")),
    )
    .await;
    assert_eq!(status, 422);
    assert_eq!(body["Invalid"]["field"], "vibes.todos.defaultAgent");
    let mut no_switch = vibe.clone();
    no_switch["coreTools"] = json!(["hangUp"]);
    let (_, body, _) = put(
        &app,
        &key,
        "/api/vibes/todos",
        &no_switch,
        Some(("If-Match", "\"1\"")),
    )
    .await;
    assert_eq!(body["Invalid"]["field"], "vibes.todos.coreTools");

    // A new vibe is created with If-None-Match: *; the list shows both.
    let mut second = vibe;
    second["id"] = json!("support");
    second["name"] = json!("Support line");
    let (status, _, tag) = put(
        &app,
        &key,
        "/api/vibes/support",
        &second,
        Some(("If-None-Match", "*")),
    )
    .await;
    assert_eq!((status, tag.as_deref()), (201, Some("\"1\"")));
    let (status, _, _) = put(
        &app,
        &key,
        "/api/vibes/support",
        &second,
        Some(("If-None-Match", "*")),
    )
    .await;
    assert_eq!(status, 409);
    let (status, body, _) = put(
        &app,
        &key,
        "/api/vibes/other",
        &second,
        Some(("If-None-Match", "*")),
    )
    .await;
    assert_eq!((status, &body["Invalid"]["field"]), (422, &json!("id")));
    let list: Value = app
        .client
        .get(app.url("/api/vibes"))
        .bearer_auth(&read_only)
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    assert_eq!(list["vibes"].as_array().unwrap().len(), 2);

    let config: Value = app
        .client
        .get(app.url("/api/vibes/todos/call-config?format=ultravox"))
        .bearer_auth(&key)
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    assert_eq!(config["voice"], "Mark");
    assert_eq!(config["selectedTools"][0], json!({"toolName": "hangUp"}));
    assert!(config["systemPrompt"]
        .as_str()
        .unwrap()
        .contains("You are Hominio"));
}
