//! Refusals as an outside probe sends them: every door answers bad input
//! with the API's JSON error naming the field (a query parameter, an
//! unknown key cut to a line, the MCP endpoint's own refusals, a method a
//! path does not take), tokens travel in `Authorization` off the event
//! streams, and the bearer scheme is read in any case.

use crate::helpers::{spawn_app, status_and_json};
use crate::sessions::open;
use serde_json::{json, Value};

#[tokio::test]
async fn the_call_history_takes_its_token_in_the_header_only() {
    let app = spawn_app().await;
    let key = app.api_key().await;
    let s = open(&app, &key, "idv").await;
    let calls = format!("/api/sessions/{}/calls", s.id);
    let res = app
        .client
        .get(app.url(&format!("{calls}?token={}", s.token)))
        .send()
        .await
        .unwrap();
    assert_eq!(res.status(), 401);
    // The scheme in any case, as HTTP reads it.
    let res = app
        .client
        .get(app.url(&calls))
        .header("Authorization", format!("bearer {}", s.token))
        .send()
        .await
        .unwrap();
    assert_eq!(res.status(), 200);
}

/// `GET path` with session token `token`: the status and JSON body.
async fn get(app: &crate::helpers::TestApp, token: &str, path: &str) -> (u16, Value) {
    let res = app.client.get(app.url(path)).bearer_auth(token).send();
    status_and_json(res.await.unwrap()).await
}

#[tokio::test]
async fn a_bad_query_parameter_is_422_naming_it() {
    let app = spawn_app().await;
    let key = app.api_key().await;
    let s = open(&app, &key, "idv").await;
    let calls = format!("/api/sessions/{}/calls", s.id);
    for (query, field) in [
        ("limit=abc", "limit"),
        ("limit=-1", "limit"),
        ("limit=0", "limit"),
        ("limit=101", "limit"),
        ("before=1e3", "before"),
    ] {
        let (status, body) = get(&app, &s.token, &format!("{calls}?{query}")).await;
        assert_eq!(status, 422, "{query}: {body}");
        assert_eq!(body["Invalid"]["field"], field, "{query}: {body}");
    }
    let (status, body) = get(&app, &s.token, &format!("{calls}?limit=100")).await;
    assert_eq!(status, 200, "{body}");
    let tools = format!("/api/sessions/{}/tools?format=openai&format=gemini", s.id);
    let (status, body) = get(&app, &s.token, &tools).await;
    assert_eq!(status, 422, "{body}");
    assert_eq!(
        body["Invalid"],
        json!({"field": "format", "rule": "may be given once"})
    );
}

#[tokio::test]
async fn an_unknown_key_is_named_in_a_line_and_a_wrong_method_in_json() {
    let app = spawn_app().await;
    let key = app.api_key().await;
    let body = format!(r#"{{"{}": 1}}"#, "k".repeat(100_000));
    let res = app
        .client
        .post(app.url("/api/sessions"))
        .bearer_auth(&key)
        .header("Content-Type", "application/json")
        .body(body)
        .send()
        .await
        .unwrap();
    assert_eq!(res.status(), 422);
    let text = res.text().await.unwrap();
    assert!(text.len() < 1024, "{} bytes echoed", text.len());
    let body: Value = serde_json::from_str(&text).unwrap();
    assert!(body["Invalid"]["field"].as_str().unwrap().ends_with('…'));

    let res = app
        .client
        .delete(app.url("/api/sessions"))
        .bearer_auth(&key)
        .send()
        .await
        .unwrap();
    assert_eq!(res.status(), 405);
    let allow = res.headers()["allow"].to_str().unwrap().to_owned();
    assert!(allow.contains("GET") && allow.contains("POST"), "{allow}");
    let body: Value = res.json().await.unwrap();
    assert!(
        body["BadRequest"].as_str().unwrap().contains("DELETE"),
        "{body}"
    );
}

#[tokio::test]
async fn a_blank_student_is_refused_naming_it() {
    let app = spawn_app().await;
    let key = app.teacher_key().await;
    for student in ["", "   ", "a\nb"] {
        let res = app
            .client
            .post(app.url("/api/sessions"))
            .bearer_auth(&key)
            .json(&json!({"lessonId": 1, "student": student}))
            .send()
            .await
            .unwrap();
        assert_eq!(res.status(), 422, "{student:?}");
        let body: Value = res.json().await.unwrap();
        assert_eq!(body["Invalid"]["field"], "student", "{body}");
    }
}

#[tokio::test]
async fn the_session_mcp_endpoint_refuses_in_json_under_the_api_limit() {
    let app = spawn_app().await;
    let key = app.api_key().await;
    let s = open(&app, &key, "idv").await;
    let mcp = app.url(&format!("/api/sessions/{}/mcp", s.id));
    let post = |content_type: &'static str, accept: &'static str, body: Vec<u8>| {
        app.client
            .post(&mcp)
            .bearer_auth(&s.token)
            .header("Content-Type", content_type)
            .header("Accept", accept)
            .body(body)
            .send()
    };
    let both = "application/json, text/event-stream";
    let call = |arguments: String| {
        format!(
            r#"{{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{{"name":"get_server_time","arguments":{{"pad":"{arguments}"}}}}}}"#
        )
        .into_bytes()
    };
    let res = post("application/json", both, call("x".repeat(1_100_000)))
        .await
        .unwrap();
    assert_eq!(res.status(), 413);
    let body: Value = res.json().await.unwrap();
    assert_eq!(
        body,
        json!({"TooLarge": {"field": "body", "limit": "1 MiB"}})
    );
    for (content_type, text) in [("application/json", "hello"), ("text/plain", "{}")] {
        let res = post(content_type, both, text.into()).await.unwrap();
        assert_eq!(res.status(), 400, "{content_type} {text}");
        let body: Value = res.json().await.unwrap();
        assert!(body["BadRequest"].is_string(), "{body}");
    }
    let res = post("application/json", "application/json", call("x".into()))
        .await
        .unwrap();
    assert_eq!(res.status(), 406);
    let body: Value = res.json().await.unwrap();
    assert!(body["BadRequest"].is_string(), "{body}");
}

#[tokio::test]
async fn two_authorization_headers_are_refused_whichever_comes_first() {
    let app = spawn_app().await;
    let key = app.api_key().await;
    let a = open(&app, &key, "idv").await;
    let b = open(&app, &key, "idv").await;
    for (first, second) in [
        (&a.token, &b.token),
        (&b.token, &a.token),
        (&a.token, &a.token),
    ] {
        let res = app
            .client
            .get(app.url(&format!("/api/sessions/{}/tools", a.id)))
            .header("Authorization", format!("Bearer {first}"))
            .header("Authorization", format!("Bearer {second}"))
            .send()
            .await
            .unwrap();
        let (status, body) = status_and_json(res).await;
        assert_eq!(status, 400, "{body}");
        assert!(
            body["BadRequest"]
                .as_str()
                .unwrap()
                .contains("Authorization may be given once"),
            "{body}"
        );
    }
}

#[tokio::test]
async fn a_call_with_a_key_besides_name_and_arguments_is_refused_and_not_run() {
    let app = spawn_app().await;
    let key = app.api_key().await;
    let s = open(&app, &key, "idv").await;
    // Gemini's own `args`, forwarded as it came, would have run with none.
    for body in [
        json!({"name": "end_session", "args": {}}),
        json!({"name": "get_server_time", "arguments": {}, "extra": 1}),
    ] {
        let res = app
            .client
            .post(app.url(&format!("/api/sessions/{}/tool-calls", s.id)))
            .bearer_auth(&s.token)
            .json(&body)
            .send()
            .await
            .unwrap();
        let (status, answer) = status_and_json(res).await;
        assert_eq!(status, 422, "{body} → {answer}");
        assert!(
            answer["Invalid"]["rule"]
                .as_str()
                .unwrap()
                .contains("unknown field"),
            "{answer}"
        );
    }
    let calls: i64 = sqlx::query_scalar("SELECT COUNT(*) FROM tool_calls")
        .fetch_one(&app.state.db)
        .await
        .unwrap();
    assert_eq!(calls, 0, "nothing ran");
}

#[tokio::test]
async fn an_ended_sessions_tools_are_refused_like_its_other_doors() {
    let app = spawn_app().await;
    let key = app.api_key().await;
    let s = open(&app, &key, "idv").await;
    crate::freed::end(&app, &s).await;
    let res = app
        .client
        .get(app.url(&format!("/api/sessions/{}/tools?format=openai", s.id)))
        .bearer_auth(&s.token)
        .send()
        .await
        .unwrap();
    let (status, body) = status_and_json(res).await;
    assert_eq!(status, 409, "{body}");
    assert_eq!(body["Conflict"], format!("Session {} has ended.", s.id));
}

#[tokio::test]
async fn names_and_labels_with_control_characters_or_direction_overrides_are_refused() {
    use crate::helpers::TEACHER;
    let app = spawn_app().await;
    app.login(TEACHER).await;
    for title in ["Ring\u{7}", "Lesson\u{202E}txt"] {
        let res = app.rpc("create_lesson", &[("title", title)]).await;
        let (status, body) = status_and_json(res).await;
        assert_eq!(status, 422, "{title:?}: {body}");
        assert_eq!(body["Invalid"]["field"], "title", "{body}");
    }
    use switchboard::domain::api_key::Scope;
    let key = app
        .api_key_with(&[Scope::BindingsRead, Scope::BindingsWrite])
        .await;
    let (etag, mut doc) = app.bindings_with_etag(&key).await;
    doc["labels"]["checks"]["identity_verified"] = json!({"label": "Iden\u{0}tity"});
    let res = app.put_bindings(&key, &etag, &doc).await;
    let (status, body) = status_and_json(res).await;
    assert_eq!(status, 422, "{body}");
    assert_eq!(
        body["Invalid"]["field"], "labels.checks.identity_verified.label",
        "{body}"
    );
}
