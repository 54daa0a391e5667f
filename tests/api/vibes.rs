//! Sessions in a vibe: each agent gets exactly its own tools, switchAgent
//! moves between them in Ultravox's stage-change shape, and agents and
//! vibes are changed over the API with versions.

use crate::helpers::{spawn_app, TestApp};
use crate::sessions::{call, open_with, read_events, subscribe, tools_body, Session};
use serde_json::{json, Value};
use switchboard::domain::api_key::Scope;

/// `GET path` with API `key`, as JSON.
async fn get_json(app: &TestApp, key: &str, path: &str) -> Value {
    app.client
        .get(app.url(path))
        .bearer_auth(key)
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap()
}

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

    let todo = json!({"todoText": "Buy milk"});
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
    let (_, refused) = call(
        &app,
        &s,
        "updateTodo",
        json!({"oldText": "a", "newText": "x"}),
    )
    .await;
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

    let vibe: Value = get_json(&app, &key, "/api/vibes/todos").await;
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
    let list: Value = get_json(&app, &read_only, "/api/vibes").await;
    assert_eq!(list["vibes"].as_array().unwrap().len(), 2);

    let config: Value = get_json(&app, &key, "/api/vibes/todos/call-config?format=ultravox").await;
    assert_eq!(config["voice"], "Mark");
    assert_eq!(config["selectedTools"][0], json!({"toolName": "hangUp"}));
    assert!(config["systemPrompt"]
        .as_str()
        .unwrap()
        .contains("You are Hominio"));
}

async fn export(app: &TestApp, key: &str, format: &str) -> Vec<u8> {
    let res = app
        .client
        .get(app.url(&format!("/api/manifests?format={format}")))
        .bearer_auth(key)
        .send()
        .await
        .unwrap();
    assert_eq!(res.status(), 200);
    res.bytes().await.unwrap().to_vec()
}

async fn import(app: &TestApp, key: &str, body: Vec<u8>) -> (u16, Value) {
    let res = app
        .client
        .post(app.url("/api/manifests"))
        .bearer_auth(key)
        .body(body)
        .send()
        .await
        .unwrap();
    (
        res.status().as_u16(),
        res.json().await.unwrap_or(Value::Null),
    )
}

#[tokio::test]
async fn manifests_export_and_import_as_zip_and_tar_and_a_broken_set_changes_nothing() {
    use switchboard::domain::vibe::manifest::{from_files, to_files};
    use switchboard::server::vibes::manifests::{archive, unpack, ArchiveFormat};
    let app = spawn_app().await;
    let key = app.api_key().await;
    let zip = export(&app, &key, "zip").await;
    let tar = export(&app, &key, "tar").await;
    let from_zip = from_files(&unpack(&zip).unwrap()).unwrap();
    assert_eq!(from_files(&unpack(&tar).unwrap()).unwrap(), from_zip);
    assert_eq!(from_zip.vibes.len(), 1);
    assert_eq!(from_zip.agents.len(), 3);
    assert!(from_zip.tools.iter().any(|t| t.id.as_str() == "createTodo"));
    assert!(unpack(&zip)
        .unwrap()
        .iter()
        .any(|(p, _)| p == "AGENTS/Oliver/config.json"));

    // Rename Rajesh's persona and import the tar back: in force at once.
    let mut set = from_zip.clone();
    set.agents[2].personality = "Calm and thorough.".into();
    let (status, body) = import(&app, &key, archive(&set, ArchiveFormat::Tar).unwrap()).await;
    assert_eq!(status, 200, "{body}");
    assert_eq!(
        body,
        json!({"tools": from_zip.tools.len(), "agents": 3, "vibes": 1})
    );
    let rajesh: Value = get_json(&app, &key, "/api/agents/Rajesh").await;
    assert_eq!(rajesh["personality"], "Calm and thorough.");

    // A broken set: 422 naming file and field; nothing written.
    let mut broken = set.clone();
    broken.vibes[0].default_agent = switchboard::domain::ids::AgentId::parse("Ghost").unwrap();
    let (status, body) = import(&app, &key, archive(&broken, ArchiveFormat::Zip).unwrap()).await;
    assert_eq!(status, 422, "{body}");
    assert_eq!(
        body["Invalid"]["field"],
        "VIBES/todos/manifest.json: defaultAgent"
    );
    let mut files = to_files(&set);
    files
        .iter_mut()
        .find(|(p, _)| p == "AGENTS/Oliver/config.json")
        .unwrap()
        .1 = b"{\"id\": \"Oliver\", \"name\": 7}".to_vec();
    let mut tar_builder = tar::Builder::new(Vec::new());
    for (path, bytes) in &files {
        let mut header = tar::Header::new_gnu();
        header.set_size(bytes.len() as u64);
        header.set_mode(0o644);
        header.set_cksum();
        tar_builder
            .append_data(&mut header, path, bytes.as_slice())
            .unwrap();
    }
    let (status, body) = import(&app, &key, tar_builder.into_inner().unwrap()).await;
    assert_eq!(status, 422);
    assert_eq!(body["Invalid"]["field"], "AGENTS/Oliver/config.json");
    let (status, body) = import(&app, &key, b"not an archive".to_vec()).await;
    assert_eq!(
        (status, &body["Invalid"]["field"]),
        (422, &json!("archive"))
    );
    let after: Value = get_json(&app, &key, "/api/agents/Rajesh").await;
    assert_eq!(after, rajesh, "nothing changed");

    let read_only = app.api_key_with(&[Scope::VibesRead]).await;
    let (status, _) = import(&app, &read_only, zip.clone()).await;
    assert_eq!(status, 403);
    let (status, _) = import(&app, &key, vec![0u8; 4 * 1024 * 1024 + 1]).await;
    assert_eq!(status, 413);
}

#[tokio::test]
async fn a_manifests_directory_seeds_a_new_database_and_a_broken_one_stops_start_up() {
    use switchboard::domain::vibe::{
        demo,
        manifest::{to_files, Manifests},
    };
    let dir = tempfile::tempdir().unwrap();
    let mut set = Manifests {
        tools: demo::core_tools()
            .into_iter()
            .chain(switchboard::domain::todos::todo_tools())
            .collect(),
        agents: demo::agents(),
        vibes: demo::vibes(),
    };
    set.agents[0].name = "Hominia".into();
    for (path, bytes) in to_files(&set) {
        let file = dir.path().join(path);
        std::fs::create_dir_all(file.parent().unwrap()).unwrap();
        std::fs::write(file, bytes).unwrap();
    }
    let app = crate::helpers::spawn_app_with(&[(
        "SWITCHBOARD_MANIFESTS_DIR",
        dir.path().to_str().unwrap(),
    )])
    .await;
    let key = app.api_key().await;
    let hominio: Value = get_json(&app, &key, "/api/agents/Hominio").await;
    assert_eq!(hominio["name"], "Hominia");

    std::fs::write(
        dir.path().join("VIBES/todos/manifest.json"),
        b"{\"id\": \"todos\"}",
    )
    .unwrap();
    let db = tempfile::tempdir().unwrap();
    let url = format!("sqlite://{}/broken.db", db.path().display());
    let config = switchboard::server::platform::config::Config::from_lookup(|k| match k {
        "DATABASE_URL" => Some(url.clone()),
        "PORT" => Some("0".into()),
        "SWITCHBOARD_MANIFESTS_DIR" => Some(dir.path().to_str().unwrap().into()),
        _ => None,
    });
    let error = match switchboard::startup::Application::build(config.unwrap()).await {
        Ok(_) => panic!("a broken manifests directory must stop start-up"),
        Err(e) => e.to_string(),
    };
    assert!(error.contains("VIBES/todos/manifest.json"), "{error}");
}

/// Agent `id`'s `ETag` and body.
async fn agent_version(app: &TestApp, key: &str, id: &str) -> (String, Value) {
    let res = app
        .client
        .get(app.url(&format!("/api/agents/{id}")))
        .bearer_auth(key)
        .send()
        .await
        .unwrap();
    let etag = res.headers()["etag"].to_str().unwrap().to_owned();
    (etag, res.json().await.unwrap())
}

#[tokio::test]
async fn an_import_moves_the_versions_of_what_it_changes_so_a_stale_editor_is_refused() {
    use switchboard::domain::vibe::manifest::from_files;
    use switchboard::server::vibes::manifests::{archive, unpack, ArchiveFormat};
    let app = spawn_app().await;
    let key = app.api_key().await;
    let set = from_files(&unpack(&export(&app, &key, "zip").await).unwrap()).unwrap();
    let (rajesh_before, rajesh) = agent_version(&app, &key, "Rajesh").await;
    let (oliver_before, _) = agent_version(&app, &key, "Oliver").await;

    let mut changed = set.clone();
    let at = changed
        .agents
        .iter()
        .position(|a| a.id.as_str() == "Rajesh")
        .unwrap();
    changed.agents[at].personality = "Imported persona.".into();
    let (status, body) = import(&app, &key, archive(&changed, ArchiveFormat::Zip).unwrap()).await;
    assert_eq!(status, 200, "{body}");
    let (rajesh_after, _) = agent_version(&app, &key, "Rajesh").await;
    let (oliver_after, _) = agent_version(&app, &key, "Oliver").await;
    assert_ne!(rajesh_after, rajesh_before, "a changed agent moves on");
    assert_eq!(
        oliver_after, oliver_before,
        "an unchanged one keeps its version"
    );

    // An editor who loaded Rajesh before the import cannot overwrite it.
    let mut edit = rajesh.clone();
    edit["personality"] = json!("Saved from an old page.");
    let res = app
        .client
        .put(app.url("/api/agents/Rajesh"))
        .bearer_auth(&key)
        .header("If-Match", &rajesh_before)
        .json(&edit)
        .send()
        .await
        .unwrap();
    assert_eq!(res.status(), 412);
    let (_, now) = agent_version(&app, &key, "Rajesh").await;
    assert_eq!(now["personality"], "Imported persona.");
}
