//! Bounded input: oversized or malformed requests get a clear 4xx naming the
//! field and the limit, nothing is recorded, and nothing large is echoed.

use crate::helpers::{spawn_app, TestApp, ADMIN};
use crate::sessions::{call, open};
use serde_json::{json, Value};

async fn recorded_calls(app: &TestApp) -> i64 {
    sqlx::query_scalar("SELECT COUNT(*) FROM tool_calls")
        .fetch_one(&app.state.db)
        .await
        .unwrap()
}

#[tokio::test]
async fn an_oversized_tool_name_is_refused_by_field_without_echo_or_record() {
    let app = spawn_app().await;
    let key = app.api_key().await;
    let s = open(&app, &key, "idv").await;
    let (status, body) = call(&app, &s, &"x".repeat(900_000), json!({})).await;
    assert_eq!(status, 422);
    assert_eq!(body["Invalid"]["field"], "name");
    assert!(body.to_string().len() < 1_000, "{}", body.to_string().len());
    let (status, body) = call(&app, &s, "get server time; drop", json!({})).await;
    assert_eq!(
        (status, body["Invalid"]["field"].clone()),
        (422, json!("name"))
    );
    assert_eq!(recorded_calls(&app).await, 0);
}

#[tokio::test]
async fn oversized_arguments_are_413_naming_the_field_and_not_recorded() {
    let app = spawn_app().await;
    let key = app.api_key().await;
    let s = open(&app, &key, "idv").await;
    let big = json!({"accountNumber": "1".repeat(900_000)});
    let (status, body) = call(&app, &s, "perform_idv_check", big).await;
    assert_eq!(status, 413);
    assert_eq!(
        body,
        json!({"TooLarge": {"field": "arguments", "limit": "64 KiB"}})
    );
    assert_eq!(recorded_calls(&app).await, 0);
}

#[tokio::test]
async fn a_refusal_quotes_only_a_short_excerpt_of_the_arguments() {
    let app = spawn_app().await;
    let key = app.api_key().await;
    let s = open(&app, &key, "idv").await;
    let long = json!({"accountNumber": "9".repeat(60_000), "sortCode": "12-34-56", "dateOfBirth": "1985-04-12"});
    let (status, body) = call(&app, &s, "perform_idv_check", long).await;
    assert_eq!((status, body["allowed"].clone()), (200, json!(false)));
    let reason = body["reason"].as_str().unwrap();
    assert!(
        reason.starts_with("invalid arguments for `perform_idv_check`: field `accountNumber`:"),
        "{reason}"
    );
    assert!(reason.len() < 400, "{}", reason.len());
}

#[tokio::test]
async fn request_bodies_over_the_limit_are_413() {
    let app = spawn_app().await;
    let key = app.api_key().await;
    let s = open(&app, &key, "idv").await;
    let res = app
        .client
        .post(app.url(&format!("/api/sessions/{}/tool-calls", s.id)))
        .bearer_auth(&s.token)
        .header("content-type", "application/json")
        .body(format!(
            "{{\"name\":\"x\",\"pad\":\"{}\"}}",
            "p".repeat(1_100_000)
        ))
        .send()
        .await
        .unwrap();
    assert_eq!(res.status(), 413);
    let body: Value = res.json().await.unwrap();
    assert_eq!(
        body,
        json!({"TooLarge": {"field": "body", "limit": "1 MiB"}})
    );
    assert_eq!(recorded_calls(&app).await, 0);
}

#[tokio::test]
async fn malformed_json_is_400_and_the_wrong_shape_is_422() {
    let app = spawn_app().await;
    let key = app.api_key().await;
    let post = |body: &'static str| {
        app.client
            .post(app.url("/api/sessions"))
            .bearer_auth(&key)
            .header("content-type", "application/json")
            .body(body)
            .send()
    };
    let res = post("{\"workflowId\": ").await.unwrap();
    assert_eq!(res.status(), 400);
    assert!(res.json::<Value>().await.unwrap()["BadRequest"].is_string());
    let res = post("{\"workflowId\": 7}").await.unwrap();
    assert_eq!(res.status(), 422);
    let invalid = res.json::<Value>().await.unwrap()["Invalid"].clone();
    assert_eq!(invalid["field"], "workflowId");
    assert_eq!(
        invalid["rule"],
        "invalid type: integer `7`, expected a string"
    );
}

#[tokio::test]
async fn unknown_api_paths_are_a_json_404() {
    let app = spawn_app().await;
    for path in ["/api/nope", "/api/sessions/x/y/z"] {
        let res = app.client.get(app.url(path)).send().await.unwrap();
        assert_eq!(res.status(), 404, "{path}");
        assert_eq!(res.headers()["content-type"], "application/json");
        assert!(res.json::<Value>().await.unwrap()["NotFound"].is_string());
    }
}

#[tokio::test]
async fn a_catalogue_schema_over_64_kib_is_refused_naming_parameters() {
    let app = spawn_app().await;
    let admin = app.signed_in(ADMIN).await;
    let mut properties = serde_json::Map::new();
    for n in 0..3_000 {
        properties.insert(
            format!("field_{n}"),
            json!({"type": "string", "description": "padding"}),
        );
    }
    let tool = json!({
        "id": "huge_tool", "name": "Huge", "description": "Too big", "category": "Test",
        "parameters": {"type": "object", "properties": properties}
    });
    let res = app
        .rpc_json_with(&admin, "save_tool", &json!({"tool": tool, "create": true}))
        .await;
    assert_eq!(res.status(), 422);
    let body: Value = res.json().await.unwrap();
    assert_eq!(body["Invalid"]["field"], "parameters");
    assert!(body["Invalid"]["rule"].as_str().unwrap().contains("64 KiB"));
}
