use crate::helpers::{spawn_app, TestApp, ADMIN, TEACHER};
use serde_json::{json, Value};
use switchboard::error::ApiError;

/// The example `tool-bindings.json` as written before labels existed: still
/// a valid document.
const EXAMPLE: &str = r#"{"global":["get_server_time","start_workflow","end_session"],"workflows":{"banking-master":["manage_recent_interactions","check_balance"],"idv":["perform_idv_check","lookup_account"],"disputes":["create_dispute_case","lookup_transaction"]}}"#;

/// The document a new database starts with: the example plus the demo's
/// check and step labels.
fn demo() -> Value {
    serde_json::to_value(switchboard::domain::bindings::ToolBindings::demo()).unwrap()
}

async fn get(app: &TestApp, key: &str) -> (String, Value) {
    let res = app
        .client
        .get(app.url("/api/bindings"))
        .bearer_auth(key)
        .send()
        .await
        .unwrap();
    assert_eq!(res.status(), 200);
    let etag = res.headers()["etag"].to_str().unwrap().to_owned();
    (etag, res.json().await.unwrap())
}

async fn put(app: &TestApp, key: &str, if_match: Option<&str>, body: &Value) -> reqwest::Response {
    let mut req = app
        .client
        .put(app.url("/api/bindings"))
        .bearer_auth(key)
        .json(body);
    if let Some(tag) = if_match {
        req = req.header("If-Match", tag);
    }
    req.send().await.unwrap()
}

async fn version_count(app: &TestApp) -> i64 {
    sqlx::query_scalar("SELECT COUNT(*) FROM bindings_versions")
        .fetch_one(&app.state.db)
        .await
        .unwrap()
}

#[tokio::test]
async fn get_returns_the_demo_document_with_an_etag() {
    let app = spawn_app().await;
    let key = app.api_key().await;
    let (etag, doc) = get(&app, &key).await;
    assert_eq!(etag, "\"1\"");
    assert_eq!(doc, demo());
    assert_eq!(
        doc["labels"]["checks"]["identity_verified"]["label"],
        "Identity verified"
    );
    let res = app
        .client
        .get(app.url("/api/bindings"))
        .send()
        .await
        .unwrap();
    assert_eq!(res.status(), 401);
}

#[tokio::test]
async fn put_needs_a_current_if_match() {
    let app = spawn_app().await;
    let key = app.api_key().await;
    let (etag, mut doc) = get(&app, &key).await;
    doc["workflows"]["disputes"]
        .as_array_mut()
        .unwrap()
        .push(json!("check_balance"));

    let res = put(&app, &key, None, &doc).await;
    assert_eq!(res.status(), 428);
    let body: Value = res.json().await.unwrap();
    assert_eq!(
        body,
        json!({"PreconditionRequired": {"send": "If-Match with the ETag you read"}})
    );
    let res = put(&app, &key, Some("\"7\""), &doc).await;
    assert_eq!(res.status(), 412);
    assert_eq!(version_count(&app).await, 1);

    let res = put(&app, &key, Some(&etag), &doc).await;
    assert_eq!(res.status(), 200);
    assert_eq!(res.headers()["etag"], "\"2\"");
    let (etag2, stored) = get(&app, &key).await;
    assert_eq!(etag2, "\"2\"");
    assert_eq!(stored, doc);

    // The same document again (a retried PUT) is no new version.
    let res = put(&app, &key, Some(&etag2), &doc).await;
    assert_eq!(res.status(), 200);
    assert_eq!(res.headers()["etag"], "\"2\"");
    let body: Value = res.json().await.unwrap();
    assert_eq!(body["version"], 2);
    assert_eq!(
        body["notes"],
        json!(["Nothing changed: the bindings stay at version 2."])
    );
    assert_eq!(version_count(&app).await, 2);

    // The first tag is stale now, even for the same document.
    let res = put(&app, &key, Some(&etag), &doc).await;
    assert_eq!(res.status(), 412);
    let err: ApiError = res.json().await.unwrap();
    assert!(err.to_string().contains("version 2"), "{err}");
}

#[tokio::test]
async fn invalid_documents_are_422_naming_the_problem_and_nothing_is_stored() {
    let app = spawn_app().await;
    let key = app.api_key().await;
    let (etag, doc) = get(&app, &key).await;
    let cases = [
        (
            json!({"global": ["get_server_time", "end_session"], "workflows": {}}),
            "\"start_workflow\" must be global",
        ),
        (
            json!({"global": ["start_workflow", "teleport"], "workflows": {}}),
            "unknown tool \"teleport\" in global",
        ),
        (
            json!({"global": ["start_workflow"], "workflows": {"pirates": []}}),
            "unknown workflow \"pirates\"",
        ),
        (
            json!({"global": ["start_workflow"], "extra": true}),
            "unknown field",
        ),
        (json!({"global": "start_workflow"}), "invalid type"),
    ];
    for (body, expected) in cases {
        let res = put(&app, &key, Some(&etag), &body).await;
        assert_eq!(res.status(), 422, "{body}");
        let err: ApiError = res.json().await.unwrap();
        assert!(
            err.to_string().contains(expected),
            "{err} should mention {expected}"
        );
    }
    assert_eq!(version_count(&app).await, 1);
    assert_eq!(get(&app, &key).await.1, doc);
}

#[tokio::test]
async fn redundant_entries_are_normalised_and_reported() {
    let app = spawn_app().await;
    let key = app.api_key().await;
    let (etag, mut doc) = get(&app, &key).await;
    doc["workflows"]["idv"]
        .as_array_mut()
        .unwrap()
        .push(json!("end_session"));
    let res = put(&app, &key, Some(&etag), &doc).await;
    assert_eq!(res.status(), 200);
    let body: Value = res.json().await.unwrap();
    assert!(body["notes"][0].as_str().unwrap().contains("redundant"));
    let (_, stored) = get(&app, &key).await;
    assert_eq!(stored, demo());
}

#[tokio::test]
async fn teachers_are_forbidden_the_matrix() {
    let app = spawn_app().await;
    app.login(TEACHER).await;
    assert_eq!(app.rpc("bindings_matrix", &[]).await.status(), 403);
    let doc: Value = serde_json::from_str(EXAMPLE).unwrap();
    let res = app.save_bindings(&app.client, 1, &doc).await;
    assert_eq!(res.status(), 403);
    assert_eq!(version_count(&app).await, 1);
}

#[tokio::test]
async fn a_save_from_a_stale_version_names_who_changed_it() {
    let app = spawn_app().await;
    let admin = app.signed_in(ADMIN).await;
    let matrix: Value = app
        .rpc_with(&admin, "bindings_matrix", &[])
        .await
        .json()
        .await
        .unwrap();
    assert_eq!(matrix["current"]["meta"]["version"], 1);
    assert_eq!(matrix["workflows"].as_array().unwrap().len(), 4);
    let mut doc = matrix["current"]["bindings"].clone();
    doc["workflows"]["disputes"]
        .as_array_mut()
        .unwrap()
        .push(json!("check_balance"));
    let res = app.save_bindings(&admin, 1, &doc).await;
    assert_eq!(res.status(), 200);
    let res = app.save_bindings(&admin, 1, &doc).await;
    assert_eq!(res.status(), 409);
    let err: ApiError = res.json().await.unwrap();
    assert!(
        err.to_string()
            .starts_with("The bindings were changed by Ada Admin at "),
        "{err}"
    );
    assert!(err.to_string().ends_with("— reload."), "{err}");
    assert_eq!(version_count(&app).await, 2);
}

#[tokio::test]
async fn restoring_an_old_version_creates_a_new_version() {
    let app = spawn_app().await;
    let admin = app.signed_in(ADMIN).await;
    let mut doc = demo();
    doc["workflows"]["banking-master"] = json!(["manage_recent_interactions"]);
    let res = app.save_bindings(&admin, 1, &doc).await;
    assert_eq!(res.status(), 200);
    let res = app
        .rpc_with(
            &admin,
            "restore_bindings",
            &[("restore", "1"), ("current", "2")],
        )
        .await;
    assert_eq!(res.status(), 200);
    let history: Vec<Value> = app
        .rpc_with(&admin, "bindings_history", &[])
        .await
        .json()
        .await
        .unwrap();
    let versions: Vec<i64> = history
        .iter()
        .map(|h| h["version"].as_i64().unwrap())
        .collect();
    assert_eq!(versions, [3, 2, 1]);
    assert_eq!(
        history[0]["summary"],
        "Restored version 1: added check_balance in banking-master"
    );
    assert_eq!(
        history[1]["summary"],
        "removed check_balance in banking-master"
    );
    assert_eq!(history[0]["author"], "Ada Admin");
    let key = app.api_key().await;
    assert_eq!(get(&app, &key).await.1, demo());
}

#[tokio::test]
async fn catalogue_tools_need_a_valid_schema_and_a_free_id() {
    let app = spawn_app().await;
    let admin = app.signed_in(ADMIN).await;
    let tool = |id: &str, parameters: Value| json!({"tool": {"id": id, "name": "Loan quote", "description": "Quotes a loan.", "category": "lending", "parameters": parameters}, "create": true});
    let res = app
        .rpc_json_with(
            &admin,
            "save_tool",
            &tool(
                "loan_quote",
                json!({"type": "object", "properties": {"amount": {"type": "wrong"}}}),
            ),
        )
        .await;
    assert_eq!(res.status(), 422);
    assert_eq!(
        res.json::<ApiError>().await.unwrap().field(),
        Some("parameters")
    );
    let res = app
        .rpc_json_with(
            &admin,
            "save_tool",
            &tool("bad id!", json!({"type": "object"})),
        )
        .await;
    assert!(res.status().is_client_error());
    let res = app
        .rpc_json_with(
            &admin,
            "save_tool",
            &tool(
                "loan_quote",
                json!({"type": "object", "properties": {"amount": {"type": "number"}}}),
            ),
        )
        .await;
    assert_eq!(res.status(), 200);
    let res = app
        .rpc_json_with(
            &admin,
            "save_tool",
            &tool("loan_quote", json!({"type": "object"})),
        )
        .await;
    assert_eq!(res.status(), 409);
    let matrix: Value = app
        .rpc_with(&admin, "bindings_matrix", &[])
        .await
        .json()
        .await
        .unwrap();
    assert!(matrix["tools"]
        .as_array()
        .unwrap()
        .iter()
        .any(|t| t["id"] == "loan_quote"));
}

#[tokio::test]
async fn an_invalid_bindings_file_stops_start_up_with_a_clear_message() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("tool-bindings.json");
    std::fs::write(&file, r#"{"global": ["get_server_time"], "workflows": {}}"#).unwrap();
    let db = switchboard::server::platform::db::connect(&format!(
        "sqlite://{}/x.db",
        dir.path().display()
    ))
    .await
    .unwrap();
    switchboard::server::catalogue::bindings::seed_catalogue(&db)
        .await
        .unwrap();
    let err =
        switchboard::server::catalogue::bindings::seed_bindings(&db, Some(file.to_str().unwrap()))
            .await
            .unwrap_err()
            .to_string();
    assert!(
        err.contains("tool-bindings.json") && err.contains("\"start_workflow\" must be global"),
        "{err}"
    );

    std::fs::write(
        &file,
        EXAMPLE
            .replace("\"idv\"", "\"disputes-2\"")
            .replace("disputes-2", "mortgage"),
    )
    .unwrap();
    switchboard::server::catalogue::bindings::seed_bindings(&db, Some(file.to_str().unwrap()))
        .await
        .unwrap();
    let current = switchboard::server::store::bindings::current(&db)
        .await
        .unwrap()
        .unwrap();
    assert!(current.meta.summary.starts_with("Loaded from"));
    assert!(current.bindings.workflows.contains_key("mortgage"));
}
