//! Changing the catalogue is its own power (issue #33): a manifest import
//! by a key without `catalogue:write` that would change a tool is refused
//! whole; catalogue changes are versioned with their author, comparable and
//! restorable, with ETag / If-Match; and a `workflows:write` key may only
//! put tools the bindings allow on a workflow step.

use crate::helpers::{spawn_app, TestApp, ADMIN, TEACHER};
use crate::sessions::{call, open_with};
use serde_json::{json, Value};
use switchboard::domain::api_key::Scope;
use switchboard::domain::catalogue::CatalogueTool;
use switchboard::domain::vibe::manifest::{from_files, Manifests};
use switchboard::server::vibes::manifests::{archive, unpack, ArchiveFormat};

/// The manifests a key exports.
async fn export(app: &TestApp, key: &str) -> Manifests {
    let res = app
        .client
        .get(app.url("/api/manifests?format=zip"))
        .bearer_auth(key)
        .send()
        .await
        .unwrap();
    assert_eq!(res.status(), 200);
    from_files(&unpack(&res.bytes().await.unwrap()).unwrap()).unwrap()
}

/// Imports `set` as a zip with `key`: status and body.
async fn import(app: &TestApp, key: &str, set: &Manifests) -> (u16, Value) {
    let res = app
        .client
        .post(app.url("/api/manifests"))
        .bearer_auth(key)
        .body(archive(set, ArchiveFormat::Zip).unwrap())
        .send()
        .await
        .unwrap();
    (
        res.status().as_u16(),
        res.json().await.unwrap_or(Value::Null),
    )
}

/// The stored catalogue tool `id`.
async fn stored(app: &TestApp, id: &str) -> CatalogueTool {
    switchboard::server::store::bindings::tools(&app.state.db)
        .await
        .unwrap()
        .into_iter()
        .find(|t| t.id.as_str() == id)
        .unwrap()
}

/// The export with `check_balance` added, its `requires` emptied: the
/// attack of issue #33.
async fn loosened(app: &TestApp, key: &str) -> Manifests {
    let mut set = export(app, key).await;
    let mut balance = stored(app, "check_balance").await;
    assert_eq!(balance.requires, ["identity_verified"]);
    balance.requires.clear();
    set.tools.push(balance);
    set
}

/// A GET with `key`: status, ETag and body.
async fn get(app: &TestApp, key: &str, path: &str) -> (u16, String, Value) {
    let res = app
        .client
        .get(app.url(path))
        .bearer_auth(key)
        .send()
        .await
        .unwrap();
    let etag = res
        .headers()
        .get("etag")
        .map(|v| v.to_str().unwrap().to_owned())
        .unwrap_or_default();
    (
        res.status().as_u16(),
        etag,
        res.json().await.unwrap_or(Value::Null),
    )
}

/// What `check_balance` answers in a banking session without a verified
/// caller, whose backend executes the tools: the refusal's reason, or `""`
/// when it was allowed.
async fn unverified_balance(app: &TestApp, key: &str) -> String {
    let s = open_with(
        app,
        key,
        json!({"workflowId": "banking-master", "runBuiltins": false}),
    )
    .await;
    let (_, reply) = call(
        app,
        &s,
        "check_balance",
        json!({"accountNumber": "12345678"}),
    )
    .await;
    if reply["allowed"] == true {
        String::new()
    } else {
        reply["reason"].as_str().unwrap().to_owned()
    }
}

#[tokio::test]
async fn a_vibes_key_emptying_check_balances_requirements_is_refused_whole() {
    let app = spawn_app().await;
    let vibes = app
        .api_key_with(&[Scope::VibesRead, Scope::VibesWrite])
        .await;
    let mut set = loosened(&app, &vibes).await;
    set.agents[2].personality = "Changed along with the tool.".into();
    let before = app.api_key().await;
    let (_, version_before, _) = get(&app, &before, "/api/catalogue").await;

    let (status, body) = import(&app, &vibes, &set).await;
    assert_eq!(status, 403, "{body}");
    assert_eq!(body, json!({"MissingScope": {"scope": "catalogue:write"}}));

    // Nothing written: the tool, the agents and the catalogue's version.
    assert_eq!(
        stored(&app, "check_balance").await.requires,
        ["identity_verified"]
    );
    assert!(
        unverified_balance(&app, &before)
            .await
            .contains("needs check `identity_verified`"),
        "check_balance still needs a verified caller"
    );
    let rajesh = export(&app, &vibes).await.agents[2].clone();
    assert_ne!(rajesh.personality, "Changed along with the tool.");
    let (_, version_after, _) = get(&app, &before, "/api/catalogue").await;
    assert_eq!(version_after, version_before);

    // A new tool is as much a change as a loosened one.
    let mut set = export(&app, &vibes).await;
    let mut extra = stored(&app, "get_server_time").await;
    extra.id = switchboard::domain::ids::ToolId::parse("wire_money").unwrap();
    set.tools.push(extra);
    let (status, body) = import(&app, &vibes, &set).await;
    assert_eq!(
        (status, body["MissingScope"]["scope"].clone()),
        (403, json!("catalogue:write"))
    );
}

#[tokio::test]
async fn an_import_that_changes_no_tool_needs_only_vibes_write() {
    let app = spawn_app().await;
    let vibes = app
        .api_key_with(&[Scope::VibesRead, Scope::VibesWrite])
        .await;
    let reader = app.api_key_with(&[Scope::BindingsRead]).await;
    let (_, history_before, _) = get(&app, &reader, "/api/catalogue/history").await;

    let set = export(&app, &vibes).await;
    let (status, body) = import(&app, &vibes, &set).await;
    assert_eq!(status, 200, "an unchanged re-import: {body}");
    let mut agents_only = set.clone();
    agents_only.agents[2].personality = "Calm and thorough.".into();
    let (status, body) = import(&app, &vibes, &agents_only).await;
    assert_eq!(status, 200, "only an agent changed: {body}");
    assert_eq!(
        export(&app, &vibes).await.agents[2].personality,
        "Calm and thorough."
    );

    let (_, history_after, _) = get(&app, &reader, "/api/catalogue/history").await;
    assert_eq!(history_after, history_before, "no catalogue version");
}

#[tokio::test]
async fn with_catalogue_write_the_change_is_recorded_with_its_author_and_can_be_restored() {
    let app = spawn_app().await;
    let key = app
        .api_key_with(&[
            Scope::Sessions,
            Scope::VibesRead,
            Scope::VibesWrite,
            Scope::CatalogueWrite,
        ])
        .await;
    let (status, etag, body) = get(&app, &key, "/api/catalogue").await;
    assert_eq!(status, 200);
    let before = body["version"].as_i64().unwrap();
    assert_eq!(etag, format!("\"{before}\""));
    assert!(before >= 1, "a new database's catalogue has a version");

    let (status, body) = import(&app, &key, &loosened(&app, &key).await).await;
    assert_eq!(status, 200, "{body}");
    assert_eq!(unverified_balance(&app, &key).await, "", "in force at once");

    // The history names the change and its author; the version's diff
    // shows exactly what changed.
    let (status, _, history) = get(&app, &key, "/api/catalogue/history").await;
    assert_eq!(status, 200);
    let newest = &history["versions"][0];
    let changed = newest["version"].as_i64().unwrap();
    assert_eq!(changed, before + 1);
    assert_eq!(newest["author"], "API key “test backend”");
    assert_eq!(
        newest["summary"],
        "Manifest import: changed check_balance (requires)"
    );
    let (status, _, one) = get(&app, &key, &format!("/api/catalogue/history/{changed}")).await;
    assert_eq!(status, 200);
    assert_eq!(one["diff"]["changed"][0]["id"], "check_balance");
    assert_eq!(one["diff"]["changed"][0]["fields"], json!(["requires"]));
    assert_eq!(
        one["diff"]["changed"][0]["before"]["requires"],
        json!(["identity_verified"])
    );
    assert_eq!(one["diff"]["added"], json!([]));

    // A stale If-Match changes nothing: 412.
    let restore = |version: i64, if_match: i64| {
        app.client
            .post(app.url(&format!("/api/catalogue/restore/{version}")))
            .bearer_auth(&key)
            .header("If-Match", format!("\"{if_match}\""))
            .send()
    };
    let res = restore(before, before).await.unwrap();
    assert_eq!(res.status(), 412);
    assert_eq!(unverified_balance(&app, &key).await, "");

    // Restoring the version before it: a new version, check_balance needs
    // a verified caller again.
    let res = restore(before, changed).await.unwrap();
    assert_eq!(res.status(), 200);
    assert_eq!(
        res.headers()["etag"],
        format!("\"{}\"", changed + 1).as_str()
    );
    let body: Value = res.json().await.unwrap();
    assert_eq!(body["changed"], json!(["check_balance"]));
    assert!(unverified_balance(&app, &key)
        .await
        .contains("needs check `identity_verified`"));
    let (_, _, history) = get(&app, &key, "/api/catalogue/history").await;
    assert_eq!(
        history["versions"][0]["summary"],
        format!("Restored version {before}: changed check_balance (requires)")
    );
    assert_eq!(history["versions"][0]["author"], "API key “test backend”");
    assert_eq!(
        history["versions"][1]["version"], changed,
        "history is kept"
    );

    // Restoring needs the scope, whatever it would change.
    let vibes = app
        .api_key_with(&[Scope::VibesRead, Scope::VibesWrite, Scope::BindingsRead])
        .await;
    let res = app
        .client
        .post(app.url(&format!("/api/catalogue/restore/{changed}")))
        .bearer_auth(&vibes)
        .header("If-Match", format!("\"{}\"", changed + 1))
        .send()
        .await
        .unwrap();
    assert_eq!(res.status(), 403);
    let body: Value = res.json().await.unwrap();
    assert_eq!(body["MissingScope"]["scope"], "catalogue:write");
}

#[tokio::test]
async fn one_tool_is_added_and_changed_over_the_api_with_etags_and_scopes() {
    let app = spawn_app().await;
    let key = app.api_key_with(&[Scope::CatalogueWrite]).await;
    let (_, etag, _) = get(&app, &key, "/api/catalogue").await;
    let tool = json!({"id": "loan_quote", "name": "Loan quote", "description": "Quotes a loan.",
        "category": "lending", "parameters": {"type": "object", "properties": {"amount": {"type": "number"}}}});
    let put = |body: Value, header: (&'static str, String), key: String| {
        app.client
            .put(app.url("/api/catalogue/tools/loan_quote"))
            .bearer_auth(key)
            .header(header.0, header.1)
            .json(&body)
            .send()
    };
    let res = put(tool.clone(), ("If-None-Match", "*".into()), key.clone())
        .await
        .unwrap();
    assert_eq!(res.status(), 201);
    let created = res.headers()["etag"].to_str().unwrap().to_owned();
    assert_ne!(created, etag);
    let res = put(tool.clone(), ("If-None-Match", "*".into()), key.clone())
        .await
        .unwrap();
    assert_eq!(res.status(), 409, "the id is taken");

    let mut changed = tool.clone();
    changed["category"] = json!("loans");
    let res = put(changed.clone(), ("If-Match", etag.clone()), key.clone())
        .await
        .unwrap();
    assert_eq!(res.status(), 412, "stale");
    let res = put(changed.clone(), ("X-None", String::new()), key.clone())
        .await
        .unwrap();
    assert_eq!(res.status(), 428, "no precondition");
    let body: Value = res.json().await.unwrap();
    assert!(
        body["PreconditionRequired"]["send"]
            .as_str()
            .is_some_and(|s| s.contains("If-Match") && s.contains("If-None-Match: *")),
        "the body names both headers: {body}"
    );
    let vibes = app
        .api_key_with(&[Scope::VibesWrite, Scope::BindingsRead])
        .await;
    let res = put(
        changed.clone(),
        ("If-Match", created.clone()),
        vibes.clone(),
    )
    .await
    .unwrap();
    assert_eq!(res.status(), 403);
    // A misspelt key (`require` for `requires`) is refused, not dropped.
    let mut typo = changed.clone();
    typo["require"] = json!(["identity_verified"]);
    let res = put(typo, ("If-Match", created.clone()), key.clone())
        .await
        .unwrap();
    assert_eq!(res.status(), 422);
    let body: Value = res.json().await.unwrap();
    assert!(
        body["Invalid"]["rule"]
            .as_str()
            .unwrap()
            .starts_with("unknown field `require`"),
        "{body}"
    );
    let res = put(changed.clone(), ("If-Match", created.clone()), key.clone())
        .await
        .unwrap();
    assert_eq!(res.status(), 200);
    assert_eq!(stored(&app, "loan_quote").await.category, "loans");

    // Reading takes bindings:read (or catalogue:write), not vibes:read.
    let narrow = app.api_key_with(&[Scope::VibesRead]).await;
    let (status, _, body) = get(&app, &narrow, "/api/catalogue").await;
    assert_eq!(status, 403);
    assert_eq!(body["MissingScope"]["scope"], "bindings:read");
    let (status, _, history) = get(&app, &vibes, "/api/catalogue/history").await;
    assert_eq!(status, 200);
    assert_eq!(
        history["versions"][0]["summary"],
        "changed loan_quote (category)"
    );
    assert_eq!(history["versions"][1]["summary"], "added loan_quote");
}

/// The catalogue editor's save of `tool` as `client`, on top of `version`.
async fn save_tool(
    app: &TestApp,
    client: &reqwest::Client,
    version: i64,
    tool: &Value,
) -> reqwest::Response {
    let body = json!({"tool": tool, "create": false, "version": version});
    app.rpc_json_with(client, "save_tool", &body).await
}

#[tokio::test]
async fn the_admin_edits_the_catalogue_in_the_browser_as_a_version_and_a_teacher_cannot() {
    let app = spawn_app().await;
    let admin = app.signed_in(ADMIN).await;
    let matrix: Value = app
        .rpc_with(&admin, "bindings_matrix", &[])
        .await
        .json()
        .await
        .unwrap();
    let version = matrix["catalogueVersion"].as_i64().unwrap();
    let mut tool = serde_json::to_value(stored(&app, "check_balance").await).unwrap();
    tool["requires"] = json!([]);
    let teacher = app.signed_in(TEACHER).await;
    assert_eq!(
        save_tool(&app, &teacher, version, &tool).await.status(),
        403
    );
    assert_eq!(
        save_tool(&app, &admin, version - 1, &tool).await.status(),
        412
    );
    let res = save_tool(&app, &admin, version, &tool).await;
    assert_eq!(res.status(), 200, "{}", res.text().await.unwrap());

    let history: Value = app
        .rpc_with(&admin, "catalogue_history", &[])
        .await
        .json()
        .await
        .unwrap();
    assert_eq!(history[0]["version"], version + 1);
    assert_eq!(history[0]["author"], "admin@example.com");
    assert_eq!(history[0]["summary"], "changed check_balance (requires)");

    let res = app
        .rpc_with(
            &admin,
            "restore_catalogue",
            &[
                ("restore", &version.to_string()),
                ("current", &(version + 1).to_string()),
            ],
        )
        .await;
    assert_eq!(res.status(), 200);
    assert_eq!(
        stored(&app, "check_balance").await.requires,
        ["identity_verified"]
    );
}

#[tokio::test]
async fn a_workflows_key_may_only_put_tools_the_bindings_allow_on_a_step() {
    let app = spawn_app().await;
    let key = app.api_key_with(&[Scope::WorkflowsWrite]).await;
    let edit = |version: i64, body: Value| {
        app.client
            .post(app.url("/api/workflows/idv/edits"))
            .bearer_auth(&key)
            .header("If-Match", format!("\"{version}\""))
            .json(&body)
            .send()
    };
    let res = edit(
        0,
        json!({"edit": "add_step", "step_type": "custom_agent", "name": "Verify identity"}),
    )
    .await
    .unwrap();
    let body: Value = res.json().await.unwrap();
    let step = body["definition"]["steps"][0]["uuid"]
        .as_str()
        .unwrap()
        .to_owned();

    let res = edit(
        1,
        json!({"edit": "update_step_tools", "step_uuid": step,
        "enabled_tools": ["perform_idv_check", "check_balance", "create_dispute_case"]}),
    )
    .await
    .unwrap();
    assert_eq!(res.status(), 422);
    let body: Value = res.json().await.unwrap();
    assert_eq!(body["Invalid"]["field"], "steps[0].tools");
    let rule = body["Invalid"]["rule"].as_str().unwrap();
    assert!(
        rule.starts_with(
            "`check_balance`, `create_dispute_case` are not allowed in workflow `idv`"
        ),
        "{rule}"
    );
    let reader = app.api_key_with(&[Scope::WorkflowsWrite]).await;
    let (_, etag, _) = get(&app, &reader, "/api/workflows/idv/definition").await;
    assert_eq!(etag, "\"1\"", "nothing stored");

    // Global and idv's own bound tools are fine.
    let res = edit(
        1,
        json!({"edit": "update_step_tools", "step_uuid": step,
        "enabled_tools": ["perform_idv_check", "get_server_time"]}),
    )
    .await
    .unwrap();
    assert_eq!(res.status(), 200);
}

#[tokio::test]
async fn a_catalogue_from_before_versions_gets_its_first_version_and_history_is_append_only() {
    use switchboard::server::store::catalogue as versions;
    let dir = tempfile::tempdir().unwrap();
    let db = switchboard::server::platform::db::connect(&format!(
        "sqlite://{}/old.db",
        dir.path().display()
    ))
    .await
    .unwrap();
    sqlx::query(
        "INSERT INTO catalogue_tools (id, name, description, category, parameters, position, updated_at)
         VALUES ('old_tool', 'Old tool', 'Made before versions.', 'legacy', '{\"type\":\"object\"}', 1, 0)",
    )
    .execute(&db)
    .await
    .unwrap();
    switchboard::server::catalogue::bindings::seed_catalogue(&db)
        .await
        .unwrap();
    switchboard::server::catalogue::bindings::seed_catalogue(&db)
        .await
        .unwrap();
    let history = versions::history(&db, None, 10).await.unwrap();
    assert_eq!(history.len(), 1, "once");
    assert_eq!(
        history[0].summary,
        "The catalogue as it stood when versions began"
    );
    assert_eq!(history[0].author, "system");
    let first = versions::version(&db, 1).await.unwrap();
    let ids: Vec<&str> = first.tools.iter().map(|t| t.id.as_str()).collect();
    assert_eq!(ids, ["old_tool"], "no demo tools on a database in use");

    for sql in [
        "UPDATE catalogue_versions SET summary = 'rewritten'",
        "DELETE FROM catalogue_versions",
    ] {
        let refused = sqlx::query(sql).execute(&db).await.unwrap_err();
        assert!(refused.to_string().contains("append-only"), "{refused}");
    }
}
