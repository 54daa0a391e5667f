//! Lessons run as sessions: a tutor session's tools are the lesson's
//! enabled tutor tools, checked like any session's, and its backend gets
//! the lesson's prompt.

use crate::helpers::{spawn_app, TEACHER};
use crate::sessions::{call, open_with, tools_body};
use serde_json::{json, Value};
use switchboard::domain::api_key::Scope;
use switchboard::domain::lesson::tools::TUTOR_TOOLS;

#[tokio::test]
async fn a_lesson_session_may_call_only_the_lessons_enabled_tutor_tools() {
    let app = spawn_app().await;
    app.login(TEACHER).await;
    let res = app.rpc("create_lesson", &[("title", "At the café")]).await;
    let lesson_id: i64 = res.json().await.unwrap();
    let lesson: Value = app
        .rpc("get_lesson", &[("id", &lesson_id.to_string())])
        .await
        .json()
        .await
        .unwrap();
    let enabled: Vec<String> = lesson["draft"]["toolConfiguration"]["tools"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|t| t["enabled"] == true)
        .map(|t| t["toolId"].as_str().unwrap().to_owned())
        .collect();
    let disabled = TUTOR_TOOLS
        .iter()
        .map(|t| t.id)
        .find(|id| !enabled.iter().any(|e| e == id))
        .expect("a standard lesson leaves some tutor tool off");

    let key = app.api_key().await;
    let s = open_with(&app, &key, json!({"lessonId": lesson_id, "student": "Ana"})).await;

    let tools = tools_body(&app, &s, "gemini").await;
    let mut available: Vec<String> = serde_json::from_value(tools["available"].clone()).unwrap();
    available.sort();
    let mut expected = enabled.clone();
    expected.sort();
    assert_eq!(available, expected, "{tools}");
    assert_eq!(tools["lessonId"], lesson_id);
    assert_eq!(tools["student"], "Ana");
    assert!(
        tools["systemPrompt"].as_str().unwrap().len() > 20,
        "{tools}"
    );
    let declared = tools["tools"]["functionDeclarations"].as_array().unwrap();
    assert_eq!(declared.len(), enabled.len());

    let (_, refused) = call(&app, &s, disabled, json!({})).await;
    assert_eq!(refused["allowed"], false);
    assert!(
        refused["reason"].as_str().unwrap().contains(&format!(
            "`{disabled}` is not enabled in lesson {lesson_id}"
        )),
        "{refused}"
    );
    let (_, banking) = call(
        &app,
        &s,
        "check_balance",
        json!({"accountNumber": "12345678"}),
    )
    .await;
    assert_eq!(
        banking["allowed"], false,
        "workflow tools are not a tutor's"
    );
    let (_, switch) = call(&app, &s, "start_workflow", json!({"workflowId": "idv"})).await;
    assert_eq!(
        switch["allowed"], false,
        "a tutor session cannot leave its lesson"
    );
}

#[tokio::test]
async fn opening_a_lesson_session_needs_the_lessons_scope_and_one_target() {
    let app = spawn_app().await;
    app.login(TEACHER).await;
    let lesson_id: i64 = app
        .rpc("create_lesson", &[("title", "Scoped")])
        .await
        .json()
        .await
        .unwrap();
    let sessions_only = app.api_key_with(&[Scope::Sessions]).await;
    let open = |key: String, body: Value| {
        let app = &app;
        async move {
            let res = app
                .client
                .post(app.url("/api/sessions"))
                .bearer_auth(key)
                .json(&body)
                .send()
                .await
                .unwrap();
            let status = res.status().as_u16();
            (status, res.json::<Value>().await.unwrap_or(Value::Null))
        }
    };
    let (status, body) = open(sessions_only, json!({"lessonId": lesson_id})).await;
    assert_eq!(status, 403, "{body}");
    assert_eq!(body["MissingScope"]["scope"], "lessons:read");
    let key = app.api_key().await;
    let (status, body) = open(
        key.clone(),
        json!({"lessonId": lesson_id, "workflowId": "idv"}),
    )
    .await;
    assert_eq!(status, 422);
    assert_eq!(body["Invalid"]["field"], "workflowId");
    let (status, _) = open(key.clone(), json!({"lessonId": 999_999})).await;
    assert_eq!(status, 404);
    let (status, body) = open(
        key.clone(),
        json!({"lessonId": lesson_id, "student": "x".repeat(81)}),
    )
    .await;
    assert_eq!(status, 422);
    assert_eq!(body["Invalid"]["field"], "student");
    let (status, body) = open(key, json!({"workflowId": "idv", "student": "Ana"})).await;
    assert_eq!(status, 422);
    assert_eq!(body["Invalid"]["field"], "student");
    let sessions: i64 = sqlx::query_scalar("SELECT COUNT(*) FROM agent_sessions")
        .fetch_one(&app.state.db)
        .await
        .unwrap();
    assert_eq!(sessions, 0, "nothing opened");
}
