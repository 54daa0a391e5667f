//! Seed 003's own files (issue #36): its manifest tree — reproduced under
//! `tests/fixtures/seed-003/` from VisioncreatorEarth/hominio at commit
//! baf69225, the JSON byte for byte, placeholders for its code — imports
//! as it is (a zip of the repository, a tar of `src/lib/`, a directory),
//! a vibe session then runs its todo tools with its contracts, and an
//! export in either form imports back to the same set.

use crate::helpers::{spawn_app, spawn_app_with, TestApp, ADMIN};
use crate::sessions::{call, open_with, Session};
use serde_json::{json, Value};
use std::io::Write;
use std::path::{Path, PathBuf};
use switchboard::domain::actor::Actor;
use switchboard::domain::catalogue::CatalogueTool;
use switchboard::domain::declaration::ultravox::{from_ultravox, UltravoxParameter};
use switchboard::domain::todos::todo_tools;
use switchboard::domain::vibe::manifest::from_files;
use switchboard::server::vibes::manifests::unpack;

/// The fixture: seed 003's repository, as far as the import reads it.
fn seed_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/seed-003")
}

/// Every file under `dir`, as paths relative to it, sorted.
fn files_under(dir: &Path) -> Vec<(String, Vec<u8>)> {
    fn walk(root: &Path, at: &Path, out: &mut Vec<(String, Vec<u8>)>) {
        for entry in std::fs::read_dir(at).unwrap() {
            let path = entry.unwrap().path();
            if path.is_dir() {
                walk(root, &path, out);
            } else {
                let rel = path
                    .strip_prefix(root)
                    .unwrap()
                    .to_string_lossy()
                    .replace('\\', "/");
                out.push((rel, std::fs::read(&path).unwrap()));
            }
        }
    }
    let mut files = Vec::new();
    walk(dir, dir, &mut files);
    files.sort();
    files
}

/// The seed's repository files, each path after `prefix`.
fn seed_files(prefix: &str) -> Vec<(String, Vec<u8>)> {
    files_under(&seed_dir())
        .into_iter()
        .map(|(p, b)| (format!("{prefix}{p}"), b))
        .collect()
}

fn zip_of(files: &[(String, Vec<u8>)]) -> Vec<u8> {
    let mut zip = zip::ZipWriter::new(std::io::Cursor::new(Vec::new()));
    for (path, bytes) in files {
        zip.start_file(path.as_str(), zip::write::SimpleFileOptions::default())
            .unwrap();
        zip.write_all(bytes).unwrap();
    }
    zip.finish().unwrap().into_inner()
}

fn tar_of(files: &[(String, Vec<u8>)]) -> Vec<u8> {
    let mut tar = tar::Builder::new(Vec::new());
    for (path, bytes) in files {
        let mut header = tar::Header::new_gnu();
        header.set_size(bytes.len() as u64);
        header.set_mode(0o644);
        header.set_cksum();
        tar.append_data(&mut header, path, bytes.as_slice())
            .unwrap();
    }
    tar.into_inner().unwrap()
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

async fn export(app: &TestApp, key: &str, query: &str) -> (u16, Vec<u8>) {
    let res = app
        .client
        .get(app.url(&format!("/api/manifests?{query}")))
        .bearer_auth(key)
        .send()
        .await
        .unwrap();
    (res.status().as_u16(), res.bytes().await.unwrap().to_vec())
}

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

/// The stored catalogue.
async fn catalogue(app: &TestApp) -> Vec<CatalogueTool> {
    switchboard::server::store::bindings::tools(&app.state.db)
        .await
        .unwrap()
}

async fn tool(app: &TestApp, id: &str) -> CatalogueTool {
    catalogue(app)
        .await
        .into_iter()
        .find(|t| t.id.as_str() == id)
        .unwrap()
}

/// The newest catalogue version's number and summary.
async fn catalogue_version(app: &TestApp) -> (i64, String) {
    let meta = switchboard::server::store::catalogue::latest(&app.state.db)
        .await
        .unwrap()
        .unwrap();
    (meta.version, meta.summary)
}

/// What an import of the seed's tree answers.
fn seed_import_answer() -> Value {
    json!({
        "tools": 9,
        "agents": 3,
        "vibes": 1,
        "ignored": [
            {"field": "TOOLS/hangUp/config.json", "rule": "tool \"hangUp\" is also in a group folder, as TOOLS/core/hangUp/config.json, which is imported"},
            {"field": "TOOLS/switchAgent/config.json", "rule": "tool \"switchAgent\" is also in a group folder, as TOOLS/core/switchAgent/config.json, which is imported"}
        ]
    })
}

/// Checks the set in force is the seed's.
async fn assert_seed_in_force(app: &TestApp, key: &str) {
    let vibe = get_json(app, key, "/api/vibes/todos").await;
    assert_eq!(vibe["name"], "Todo Assistant", "{vibe}");
    assert_eq!(
        vibe["description"],
        "Interactive assistant for managing todo lists"
    );
    assert_eq!(vibe["coreTools"], json!(["hangUp", "switchAgent"]));
    let hominio = get_json(app, key, "/api/agents/Hominio").await;
    assert_eq!(hominio["voiceId"], "b0e6b5c1-3100-44d5-8578-9015aa3023ae");
    assert_eq!(hominio["tools"], json!(["switchAgent"]));
    // The seed's createTodo, its Ultravox parameters as a JSON Schema.
    let seed_create: Value = serde_json::from_slice(
        &std::fs::read(seed_dir().join("src/lib/TOOLS/todos/createTodo/config.json")).unwrap(),
    )
    .unwrap();
    let parameters: Vec<UltravoxParameter> =
        serde_json::from_value(seed_create["parameters"].clone()).unwrap();
    let create = tool(app, "createTodo").await;
    assert_eq!(create.parameters, from_ultravox(&parameters));
    assert_eq!(create.parameters["required"], json!(["todoText"]));
    assert_eq!(
        (create.name.as_str(), create.category.as_str()),
        ("Create Todo", "todos")
    );
    // The grouped hangUp, not the ungrouped copy beside it.
    let hang_up = tool(app, "hangUp").await;
    assert_eq!(
        (hang_up.description.as_str(), hang_up.category.as_str()),
        ("End the current call", "core")
    );
}

/// Opens a session of the seed's vibe and hands it to Oliver.
async fn with_oliver(app: &TestApp, key: &str) -> Session {
    let s = open_with(app, key, json!({"vibeId": "todos"})).await;
    let (status, switched) = call(app, &s, "switchAgent", json!({"agentName": "Oliver"})).await;
    assert_eq!(
        (status, &switched["allowed"]),
        (200, &json!(true)),
        "{switched}"
    );
    s
}

#[tokio::test]
async fn seed_003s_tree_imports_as_it_is_and_its_todo_tools_answer_in_its_shape() {
    let app = spawn_app().await;
    let key = app.api_key().await;

    // GitHub's archive of the repository: one top folder, src/lib/ in it,
    // the rest of the repository (README.md) and the code beside.
    let (status, body) = import(&app, &key, zip_of(&seed_files("hominio-baf69225/"))).await;
    assert_eq!(status, 200, "{body}");
    assert_eq!(body, seed_import_answer());
    assert_seed_in_force(&app, &key).await;

    let s = with_oliver(&app, &key).await;
    let (status, created) = call(
        &app,
        &s,
        "createTodo",
        json!({"todoText": "Buy milk", "tags": "shopping,urgent"}),
    )
    .await;
    assert_eq!(status, 200);
    assert_eq!(created["allowed"], true, "{created}");
    assert_eq!(created["status"], "done", "{created}");
    let result = &created["result"];
    assert_eq!(result["success"], true);
    assert_eq!(result["message"], "Created todo \"Buy milk\" on Inbox.");
    assert_eq!(
        result["toolResultText"],
        "I've added \"Buy milk\" to your Inbox list with tags: shopping, urgent."
    );
    assert_eq!(result["todo"]["tags"], json!(["shopping", "urgent"]));

    // A failing call runs and says so: allowed, `failed`, the seed's shape.
    let (status, toggled) = call(&app, &s, "toggleTodo", json!({"todoText": "bread"})).await;
    assert_eq!(status, 200);
    assert_eq!(
        (&toggled["allowed"], &toggled["status"]),
        (&json!(true), &json!("failed")),
        "{toggled}"
    );
    assert_eq!(
        toggled["result"],
        json!({
            "success": false,
            "error": "no todo matches \"bread\"",
            "toolResultText": "I couldn't find a todo matching \"bread\". Please try a different description or check that it exists."
        })
    );
    assert!(toggled["reason"].is_null(), "not a refusal: {toggled}");
    // The timeline keeps it as a failed call, with its answer.
    let calls = get_json(&app, &s.token, &format!("/api/sessions/{}/calls", s.id)).await;
    let last = calls["calls"]
        .as_array()
        .and_then(|c| c.iter().find(|c| c["tool"] == "toggleTodo"))
        .cloned()
        .unwrap_or_else(|| panic!("toggleTodo in {calls}"));
    assert_eq!(
        (&last["outcome"], &last["status"]),
        (&json!("allowed"), &json!("failed"))
    );

    let (_, toggled) = call(&app, &s, "toggleTodo", json!({"todoText": "MILK"})).await;
    assert_eq!(toggled["result"]["message"], "Marked \"Buy milk\" as done.");
    // A bound of Switchboard's on the seed's `tags`: at most five.
    let (_, tagged) = call(
        &app,
        &s,
        "createTodo",
        json!({"todoText": "Pay rent", "tags": "a,b,c,d,e,f"}),
    )
    .await;
    assert_eq!(tagged["status"], "failed", "{tagged}");
    assert_eq!(
        tagged["result"]["error"],
        "invalid arguments for `createTodo`: `tags` names 6 tags; at most 5 are allowed"
    );

    // A tar of the repository's src/lib/ imports the same, changing nothing.
    let version = catalogue_version(&app).await;
    let lib: Vec<(String, Vec<u8>)> = seed_files("")
        .into_iter()
        .filter(|(p, _)| p.starts_with("src/lib/"))
        .collect();
    let (status, body) = import(&app, &key, tar_of(&lib)).await;
    assert_eq!((status, &body), (200, &seed_import_answer()));
    assert_eq!(catalogue_version(&app).await, version, "no tool changed");
}

#[tokio::test]
async fn seed_003s_checkout_as_the_manifests_directory_seeds_a_new_database() {
    let dir = seed_dir();
    let app = spawn_app_with(&[("SWITCHBOARD_MANIFESTS_DIR", dir.to_str().unwrap())]).await;
    let key = app.api_key().await;
    assert_seed_in_force(&app, &key).await;
    let s = with_oliver(&app, &key).await;
    let (_, created) = call(&app, &s, "createTodo", json!({"todoText": "Water plants"})).await;
    assert_eq!(created["result"]["success"], true, "{created}");
}

#[tokio::test]
async fn a_seed_file_that_breaks_a_rule_is_refused_naming_file_and_field_and_nothing_changes() {
    let app = spawn_app().await;
    let key = app.api_key().await;
    let before = catalogue(&app).await;
    let with = |path: &str, edit: &dyn Fn(&mut Value)| {
        let mut files = seed_files("");
        let file = files.iter_mut().find(|(p, _)| p == path).unwrap();
        let mut value: Value = serde_json::from_slice(&file.1).unwrap();
        edit(&mut value);
        file.1 = value.to_string().into_bytes();
        zip_of(&files)
    };
    let cases = [
        (
            with("src/lib/TOOLS/todos/createTodo/config.json", &|v| {
                v["modelToolName"] = json!("create_todo")
            }),
            "TOOLS/todos/createTodo/config.json: modelToolName",
        ),
        (
            with("src/lib/TOOLS/todos/toggleTodo/config.json", &|v| {
                v["parameters"][0]["location"] = json!("BODY")
            }),
            "TOOLS/todos/toggleTodo/config.json: parameters[0].location",
        ),
        (
            with("src/lib/TOOLS/todos/toggleTodo/config.json", &|v| {
                v["id"] = json!("createTodo");
                v["modelToolName"] = json!("createTodo");
            }),
            "TOOLS/todos/toggleTodo/config.json: id",
        ),
        (
            with("src/lib/AGENTS/Oliver/config.json", &|v| {
                v["tools"][0] = json!("bakeCake")
            }),
            "AGENTS/Oliver/config.json: tools[0]",
        ),
    ];
    for (archive, field) in cases {
        let (status, body) = import(&app, &key, archive).await;
        assert_eq!(status, 422, "{body}");
        assert_eq!(body["Invalid"]["field"], field, "{body}");
    }
    let mut files = seed_files("");
    let again = files
        .iter()
        .find(|(p, _)| p == "src/lib/TOOLS/core/hangUp/config.json")
        .unwrap()
        .1
        .clone();
    files.push(("src/lib/TOOLS/todos/hangUp/config.json".into(), again));
    let (status, body) = import(&app, &key, zip_of(&files)).await;
    assert_eq!(status, 422);
    assert_eq!(body["Invalid"]["field"], "TOOLS/todos/hangUp/config.json");
    assert!(body["Invalid"]["rule"]
        .as_str()
        .unwrap()
        .contains("as TOOLS/core/hangUp/config.json does"));
    assert_eq!(catalogue(&app).await, before, "nothing changed");
    let vibe = get_json(&app, &key, "/api/vibes/todos").await;
    assert_eq!(vibe["name"], "Todo Assistant");
    assert_ne!(
        vibe["description"],
        "Interactive assistant for managing todo lists"
    );
}

/// Agents and vibes in force, as the API shows them.
async fn set_in_force(app: &TestApp, key: &str) -> Value {
    let (_, zip) = export(app, key, "format=zip").await;
    let set = from_files(&unpack(&zip).unwrap()).unwrap();
    json!({"agents": set.agents, "vibes": set.vibes})
}

#[tokio::test]
async fn an_export_in_either_form_imports_back_to_the_same_catalogue_agents_and_vibes() {
    let app = spawn_app().await;
    let key = app.api_key().await;
    for seeded in [false, true] {
        if seeded {
            let (status, _) = import(&app, &key, zip_of(&seed_files(""))).await;
            assert_eq!(status, 200);
        }
        let (tools, set, version) = (
            catalogue(&app).await,
            set_in_force(&app, &key).await,
            catalogue_version(&app).await,
        );
        for (format, form) in [
            ("zip", "ultravox"),
            ("tar", "ultravox"),
            ("zip", "switchboard"),
        ] {
            let (status, archive) =
                export(&app, &key, &format!("format={format}&form={form}")).await;
            assert_eq!(status, 200);
            let files = unpack(&archive).unwrap();
            let create: Value = serde_json::from_slice(
                &files
                    .iter()
                    .find(|(p, _)| p == "TOOLS/todos/createTodo/config.json")
                    .unwrap()
                    .1,
            )
            .unwrap();
            assert_eq!(
                create["parameters"].is_array(),
                form == "ultravox",
                "{create}"
            );
            if form == "ultravox" {
                assert_eq!(create["modelToolName"], "createTodo");
                assert!(create["parameters"]
                    .as_array()
                    .unwrap()
                    .iter()
                    .all(|p| p["location"] == "PARAMETER_LOCATION_BODY"));
            }
            let (status, body) = import(&app, &key, archive).await;
            assert_eq!(status, 200, "{body}");
            assert_eq!(catalogue(&app).await, tools, "seeded {seeded}, {form}");
            assert_eq!(set_in_force(&app, &key).await, set);
            assert_eq!(
                catalogue_version(&app).await,
                version,
                "an unchanged catalogue"
            );
        }
    }
    let (status, body) = export(&app, &key, "form=seed").await;
    let body: Value = serde_json::from_slice(&body).unwrap();
    assert_eq!((status, &body["Invalid"]["field"]), (422, &json!("form")));

    // The /agents page offers the same export.
    app.login(ADMIN).await;
    let res = app
        .client
        .get(app.url("/agents/manifests.tar?form=ultravox"))
        .send()
        .await
        .unwrap();
    assert_eq!(res.status(), 200);
    assert!(res.headers()["content-disposition"]
        .to_str()
        .unwrap()
        .contains("switchboard-manifests-ultravox.tar"));
    let files = unpack(&res.bytes().await.unwrap()).unwrap();
    let switch: Value = serde_json::from_slice(
        &files
            .iter()
            .find(|(p, _)| p.ends_with("/switchAgent/config.json"))
            .unwrap()
            .1,
    )
    .unwrap();
    assert_eq!(switch["modelToolName"], "switchAgent");
}

#[tokio::test]
async fn an_older_databases_todo_tools_get_the_seeds_contracts_at_its_next_start() {
    use switchboard::server::catalogue::{commit, field_as_is, plan};
    let app = spawn_app().await;
    // The todo tools as a database from before issue #36 holds them.
    let old: Vec<CatalogueTool> = catalogue(&app)
        .await
        .into_iter()
        .filter(|t| todo_tools().iter().any(|n| n.id == t.id))
        .map(|mut t| {
            t.parameters = match t.id.as_str() {
                "createTodo" => json!({"type": "object", "properties": {"text": {"type": "string", "minLength": 1, "maxLength": 200, "description": "What is to be done, one line"}, "listName": {"type": "string", "minLength": 1, "maxLength": 40, "description": "An existing list to add to instead of the active one"}}, "required": ["text"], "additionalProperties": false}),
                "toggleTodo" => json!({"type": "object", "properties": {"todoId": {"type": "integer", "minimum": 1, "description": "The todo's id, as an earlier result gave it"}}, "required": ["todoId"], "additionalProperties": false}),
                // An admin's own parameters are left alone.
                _ => json!({"type": "object", "properties": {"mine": {"type": "string"}}}),
            };
            t
        })
        .collect();
    let system = Actor::system("test");
    let planned = plan(&app.state.db, &system, &old, None, &field_as_is)
        .await
        .unwrap();
    commit(&app.state.db, &planned, &system, None)
        .await
        .unwrap();

    let restarted = app.restart().await;
    let new = todo_tools();
    assert_eq!(
        tool(&restarted, "createTodo").await.parameters,
        new[0].parameters
    );
    assert_eq!(
        tool(&restarted, "toggleTodo").await.parameters,
        new[1].parameters
    );
    assert_eq!(
        tool(&restarted, "updateTodo").await.parameters,
        json!({"type": "object", "properties": {"mine": {"type": "string"}}})
    );
    let (_, summary) = catalogue_version(&restarted).await;
    assert!(
        summary.starts_with("Seed 003's todo contracts"),
        "{summary}"
    );
    // A later start changes nothing more.
    let version = catalogue_version(&restarted).await;
    let again = restarted.restart().await;
    assert_eq!(catalogue_version(&again).await, version);
}

#[tokio::test]
async fn over_mcp_a_todo_tools_failure_is_a_tool_error_with_the_seeds_answer() {
    use rmcp::model::CallToolRequestParams;
    use rmcp::transport::streamable_http_client::StreamableHttpClientTransportConfig;
    use rmcp::transport::StreamableHttpClientTransport;
    use rmcp::ServiceExt;
    let app = spawn_app().await;
    let key = app.api_key().await;
    let s = open_with(&app, &key, json!({"vibeId": "todos", "agentId": "Oliver"})).await;
    let transport = StreamableHttpClientTransport::from_config(
        StreamableHttpClientTransportConfig::with_uri(
            app.url(&format!("/api/sessions/{}/mcp", s.id)),
        )
        .auth_header(s.token.clone()),
    );
    let client = ().serve(transport).await.expect("MCP initialize");
    let arguments = |v: Value| v.as_object().unwrap().clone();
    let created = client
        .call_tool(
            CallToolRequestParams::new("createTodo")
                .with_arguments(arguments(json!({"todoText": "Buy milk"}))),
        )
        .await
        .unwrap();
    assert_ne!(created.is_error, Some(true));
    let failed = client
        .call_tool(
            CallToolRequestParams::new("toggleTodo")
                .with_arguments(arguments(json!({"todoText": "bread"}))),
        )
        .await
        .unwrap();
    assert_eq!(failed.is_error, Some(true));
    let text = serde_json::to_string(&failed.content).unwrap();
    assert!(text.contains("no todo matches"), "{text}");
    assert!(text.contains("success") && text.contains("false"), "{text}");
    client.cancel().await.unwrap();
}

#[tokio::test]
async fn an_archive_holding_one_path_twice_is_refused_naming_it_and_nothing_is_imported() {
    let app = spawn_app().await;
    let key = app.api_key().await;
    let before = set_in_force(&app, &key).await;
    let files = seed_files("");
    let (path, mut bytes) = files
        .iter()
        .find(|(p, _)| p.ends_with("config.json"))
        .cloned()
        .unwrap();
    bytes.extend_from_slice(b" ");
    for archive in [
        tar_of(&[files.clone(), vec![(path.clone(), bytes.clone())]].concat()),
        zip_of(&[files.clone(), vec![(format!("./{path}"), bytes.clone())]].concat()),
    ] {
        let (status, body) = import(&app, &key, archive).await;
        assert_eq!(status, 422, "{body}");
        assert!(
            body["Invalid"]["field"].as_str().unwrap().ends_with(&path),
            "{body}"
        );
        assert!(
            body["Invalid"]["rule"].as_str().unwrap().contains("twice"),
            "{body}"
        );
    }
    assert_eq!(set_in_force(&app, &key).await, before, "nothing imported");
}

#[tokio::test]
async fn an_archive_of_tools_only_adds_them_and_keeps_the_agents_and_vibes_in_force() {
    let app = spawn_app().await;
    let key = app.api_key().await;
    let (status, _) = import(&app, &key, zip_of(&seed_files(""))).await;
    assert_eq!(status, 200);
    let before = set_in_force(&app, &key).await;
    let tools: Vec<(String, Vec<u8>)> = seed_files("")
        .into_iter()
        .filter(|(p, _)| p.contains("/TOOLS/"))
        .collect();
    assert!(!tools.is_empty());
    let (status, body) = import(&app, &key, tar_of(&tools)).await;
    assert_eq!(status, 200, "{body}");
    assert_eq!(body["kept"], true, "{body}");
    assert_eq!(
        body["agents"].as_u64().unwrap() as usize,
        before["agents"].as_array().unwrap().len()
    );
    assert_eq!(set_in_force(&app, &key).await, before, "nothing emptied");
}
