//! The agent runner against the scripted OpenAI-compatible model: a
//! model drives a tutor trial, a vibe and a workflow with steps, one
//! action per request, through the sessions' one listing and call path;
//! who may drive a session; and the stop rule, model failures, malformed
//! calls and results still awaited becoming words the model reads.

use crate::helpers::{spawn_app_with, TestApp, ADMIN, TEACHER};
use crate::sessions::{open_with, tools_body, Session};
use reqwest::Client;
use serde_json::{json, Value};
use switchboard::server::workflows::scripted_model::{parse, spawn};

/// The turns these tests script, keyed on the user's words.
const SCRIPT: &str = r#"{
  "fallback": "I can only follow the test script.",
  "conversations": [
    {"when": "runner tutor turn", "replies": [
      {"tool_calls": [
        {"name": "mark_for_review", "arguments": {"errorType": "grammar", "studentSaid": "yo soy ir", "correctForm": "yo voy", "severity": 3}},
        {"name": "mark_item_mastered", "arguments": {"itemId": "fui"}}
      ]},
      {"content": "Good try! We say \"yo voy\"."}
    ]},
    {"when": "runner vibe turn", "replies": [
      {"tool_calls": [{"name": "switchAgent", "arguments": {"agentName": "Oliver"}}]},
      {"tool_calls": [{"name": "createTodo", "arguments": {"todoText": "Buy milk"}}]},
      {"content": "Oliver added it."}
    ]},
    {"when": "runner workflow turn", "replies": [
      {"tool_calls": [{"name": "go_to_step", "arguments": {"step": "verify identity"}}]},
      {"content": "Let us check who you are."}
    ]},
    {"when": "runner awaiting turn", "replies": [
      {"tool_calls": [{"name": "perform_idv_check", "arguments": {"accountNumber": "12345678", "sortCode": "12-34-56", "dateOfBirth": "1985-04-12"}}]},
      {"content": "Checking."}
    ]},
    {"when": "runner broken turn", "replies": [
      {"tool_calls": [{"name": "get_server_time", "arguments": "{not json"}]},
      {"content": "Sorry."}
    ]},
    {"when": "runner endless turn", "replies": [
      {"tool_calls": [{"name": "get_server_time", "arguments": {}}]},
      {"tool_calls": [{"name": "get_server_time", "arguments": {}}]},
      {"tool_calls": [{"name": "get_server_time", "arguments": {}}]}
    ]}
  ]
}"#;

/// The app with the scripted model and `extra` settings; the model's
/// `/v1` root too.
async fn app_with_model(extra: &[(&str, &str)]) -> (TestApp, String) {
    let model = spawn(parse(SCRIPT).unwrap()).await.unwrap();
    let mut settings = vec![
        ("SWITCHBOARD_LLM_BASE_URL", model.as_str()),
        ("SWITCHBOARD_LLM_API_KEY", "test-key"),
        ("SWITCHBOARD_LLM_MODEL", "scripted"),
    ];
    settings.extend_from_slice(extra);
    (spawn_app_with(&settings).await, model)
}

/// What the scripted model was asked, newest last.
async fn asked(model: &str) -> Vec<Value> {
    reqwest::get(format!("{model}/requests"))
        .await
        .unwrap()
        .json()
        .await
        .unwrap()
}

/// `POST path` with `body` as signed-in `client` from the app's own
/// pages; the status and the new session's id (empty unless 201).
async fn open_trial(app: &TestApp, client: &Client, path: &str, body: Value) -> (u16, String) {
    let res = client
        .post(app.url(path))
        .header("Origin", &app.address)
        .json(&body)
        .send()
        .await
        .unwrap();
    let status = res.status().as_u16();
    let answer: Value = res.json().await.unwrap_or(Value::Null);
    (
        status,
        answer["sessionId"].as_str().unwrap_or_default().to_owned(),
    )
}

/// One step as a signed-in `client` (from the app's own pages).
async fn step_as(app: &TestApp, client: &Client, id: &str, messages: &Value) -> (u16, Value) {
    let res = client
        .post(app.url(&format!("/api/sessions/{id}/agent/step")))
        .header("Origin", &app.address)
        .json(&json!({"messages": messages}))
        .send()
        .await
        .unwrap();
    (
        res.status().as_u16(),
        res.json().await.unwrap_or(Value::Null),
    )
}

/// One step with session `s`'s token (a backend using the runner).
async fn step_with_token(app: &TestApp, s: &Session, messages: &Value) -> (u16, Value) {
    let res = app
        .client
        .post(app.url(&format!("/api/sessions/{}/agent/step", s.id)))
        .bearer_auth(&s.token)
        .json(&json!({"messages": messages}))
        .send()
        .await
        .unwrap();
    (
        res.status().as_u16(),
        res.json().await.unwrap_or(Value::Null),
    )
}

/// Steps from `said` until the turn completes (at most 20), through
/// `send`; each answer's new message, in order, and the last answer.
async fn turn<F, Fut>(said: &str, send: F) -> (Vec<Value>, Value)
where
    F: Fn(Value) -> Fut,
    Fut: std::future::Future<Output = (u16, Value)>,
{
    let mut messages = json!([{"role": "user", "content": said}]);
    let mut added = Vec::new();
    for _ in 0..20 {
        let (status, answer) = send(messages.clone()).await;
        assert_eq!(status, 200, "{answer}");
        let list = answer["messages"].as_array().unwrap();
        added.push(list.last().unwrap().clone());
        if answer["is_complete"] == true {
            return (added, answer);
        }
        messages = answer["messages"].clone();
    }
    panic!("the turn did not complete: {added:?}");
}

#[tokio::test]
async fn a_teacher_tries_a_lesson_the_tutor_records_and_a_disabled_tool_is_refused_in_words() {
    let (app, model) = app_with_model(&[]).await;
    let teacher = app.signed_in(TEACHER).await;
    let lesson: i64 = app
        .rpc_with(&teacher, "create_lesson", &[("title", "Going places")])
        .await
        .json()
        .await
        .unwrap();
    let trials = format!("/api/lessons/{lesson}/trials");
    let (status, id) = open_trial(
        &app,
        &teacher,
        &trials,
        json!({"student": "Teacher as Ana"}),
    )
    .await;
    assert_eq!(status, 201);

    let (added, last) = turn("runner tutor turn: yo soy ir al cine", |m| {
        let (app, teacher, id) = (&app, &teacher, &id);
        async move { step_as(app, teacher, id, &m).await }
    })
    .await;
    assert_eq!(added.len(), 4, "{added:?}");
    assert_eq!(added[0]["tool_calls"].as_array().unwrap().len(), 2);
    assert_eq!(added[1]["role"], "tool");
    assert!(
        added[1]["content"]
            .as_str()
            .unwrap()
            .contains("\"logged\":true"),
        "{}",
        added[1]
    );
    assert!(added[2]["content"].as_str().unwrap().starts_with(&format!(
        "Refused by Switchboard: `mark_item_mastered` is not enabled in lesson {lesson}"
    )));
    assert_eq!(added[3]["content"], "Good try! We say \"yo voy\".");
    assert_eq!(last["state"]["currentWorkflow"], format!("lesson-{lesson}"));

    // The tutor's model got the lesson's prompt and exactly its tools.
    let first = &asked(&model).await[0];
    assert_eq!(first["messages"][0]["role"], "system");
    let key = app.api_key().await;
    let built: Value = app
        .client
        .get(app.url(&format!("/api/lessons/{lesson}/prompt")))
        .bearer_auth(&key)
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    assert_eq!(first["messages"][0]["content"], built["systemPrompt"]);
    let names: Vec<&str> = first["tools"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["function"]["name"].as_str().unwrap())
        .collect();
    assert!(names.contains(&"mark_for_review") && !names.contains(&"mark_item_mastered"));

    // The call is stored, as the session's timeline shows it.
    let calls: Value = teacher
        .get(app.url(&format!("/api/sessions/{id}/calls")))
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    let tools: Vec<(&str, &str)> = calls["calls"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| (c["tool"].as_str().unwrap(), c["outcome"].as_str().unwrap()))
        .collect();
    assert_eq!(
        tools,
        [
            ("mark_for_review", "allowed"),
            ("mark_item_mastered", "refused")
        ]
    );

    // The sessions list says it is a trial.
    let list: Value = teacher
        .get(app.url("/api/sessions"))
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    let listed = list
        .as_array()
        .unwrap()
        .iter()
        .find(|s| s["id"] == id.as_str())
        .unwrap();
    assert_eq!(listed["trial"], true, "{listed}");

    // The runner reported the turns as a backend would: one each.
    let page: Value = app
        .rpc_with(&teacher, "session_page", &[("id", &id)])
        .await
        .json()
        .await
        .unwrap();
    assert_eq!(
        page["snapshot"]["turns"]["student"], 1,
        "{}",
        page["snapshot"]
    );
    assert_eq!(page["snapshot"]["turns"]["tutor"], 1);

    // Nobody else may drive the teacher's trial (another teacher may not
    // even see it: 404, as an unknown session — issue #38's ownership); a
    // cross-site page may not either.
    let other = app.other_teacher().await;
    let (status, _) = step_as(
        &app,
        &other,
        &id,
        &json!([{"role": "user", "content": "hi"}]),
    )
    .await;
    assert_eq!(status, 404);
    let res = teacher
        .post(app.url(&format!("/api/sessions/{id}/agent/step")))
        .header("Origin", "https://evil.example")
        .json(&json!({"messages": [{"role": "user", "content": "hi"}]}))
        .send()
        .await
        .unwrap();
    assert_eq!(res.status(), 403);
    let res = app
        .client
        .post(app.url(&format!("/api/sessions/{id}/agent/step")))
        .json(&json!({"messages": [{"role": "user", "content": "hi"}]}))
        .send()
        .await
        .unwrap();
    assert_eq!(res.status(), 401);
    // Another teacher's lesson cannot be tried.
    assert_eq!(open_trial(&app, &other, &trials, json!({})).await.0, 404);
}

#[tokio::test]
async fn in_a_vibe_switch_agent_gives_the_model_the_new_agents_prompt_and_tools() {
    let (app, model) = app_with_model(&[]).await;
    let admin = app.signed_in(ADMIN).await;
    let (status, id) = open_trial(&app, &admin, "/api/vibes/todos/trials", json!({})).await;
    assert_eq!(status, 201);
    let (added, last) = turn("runner vibe turn", |m| {
        let (app, admin, id) = (&app, &admin, &id);
        async move { step_as(app, admin, id, &m).await }
    })
    .await;
    assert_eq!(added.len(), 5, "{added:?}");
    assert!(
        added[1]["content"]
            .as_str()
            .unwrap()
            .contains("Your tools changed; you may now call:"),
        "{}",
        added[1]
    );
    assert!(
        added[3]["content"].as_str().unwrap().contains("Buy milk"),
        "createTodo ran for the new agent: {}",
        added[3]
    );
    assert_eq!(last["state"]["agent"]["agent"], "Oliver");

    let requests = asked(&model).await;
    let tools_of = |r: &Value| -> Vec<String> {
        r["tools"]
            .as_array()
            .unwrap()
            .iter()
            .map(|t| t["function"]["name"].as_str().unwrap().to_owned())
            .collect()
    };
    assert!(!tools_of(&requests[0]).contains(&"createTodo".to_owned()));
    assert!(tools_of(&requests[1]).contains(&"createTodo".to_owned()));
    let prompt = |r: &Value| r["messages"][0]["content"].as_str().unwrap().to_owned();
    assert!(prompt(&requests[0]).starts_with("You are Hominio"));
    assert!(prompt(&requests[1]).starts_with("You are Oliver"));
}

/// Adds steps `names` to workflow idv with API key `key`, each with the
/// prompt "Do NAME."; their uuids.
async fn add_steps(app: &TestApp, key: &str, names: &[&str]) -> Vec<String> {
    let mut uuids = Vec::new();
    for (version, name) in names.iter().enumerate() {
        let edit = |version: usize, body: Value| {
            app.client
                .post(app.url("/api/workflows/idv/edits"))
                .bearer_auth(key)
                .header("If-Match", format!("\"{version}\""))
                .json(&body)
                .send()
        };
        let body: Value = edit(
            version * 2,
            json!({"edit": "add_step", "step_type": "custom_llm", "name": name}),
        )
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
        let uuid = body["definition"]["steps"][version]["uuid"]
            .as_str()
            .unwrap()
            .to_owned();
        let res = edit(
            version * 2 + 1,
            json!({"edit": "update_system_prompt", "step_uuid": uuid, "system_prompt": format!("Do {name}.")}),
        )
        .await
        .unwrap();
        assert_eq!(res.status(), 200);
        uuids.push(uuid);
    }
    uuids
}

#[tokio::test]
async fn a_workflow_steps_prompt_reaches_every_door_and_the_model_moves_on() {
    let (app, model) = app_with_model(&[]).await;
    let key = app.api_key().await;
    let steps = add_steps(&app, &key, &["Greet", "Verify identity"]).await;
    let s = open_with(&app, &key, json!({"workflowId": "idv"})).await;

    let told = tools_body(&app, &s, "openai").await;
    let prompt = told["systemPrompt"].as_str().unwrap();
    assert!(
        prompt.contains("## Current step: Greet (step 1 of 2)\nDo Greet."),
        "{prompt}"
    );
    assert_eq!(told["step"]["uuid"], steps[0]);
    assert!(told["available"]
        .as_array()
        .unwrap()
        .contains(&json!("go_to_step")));
    for format in ["gemini", "anthropic"] {
        assert_eq!(tools_body(&app, &s, format).await["systemPrompt"], prompt);
    }

    let (added, last) = turn("runner workflow turn", |m| {
        let (app, s) = (&app, &s);
        async move { step_with_token(app, s, &m).await }
    })
    .await;
    assert!(
        added[1]["content"]
            .as_str()
            .unwrap()
            .contains("Do Verify identity."),
        "{}",
        added[1]
    );
    assert_eq!(last["state"]["workflowStep"], steps[1]);

    // The model got exactly what GET …/tools?format=openai gives.
    let requests = asked(&model).await;
    assert_eq!(requests[0]["messages"][0]["content"], prompt);
    assert_eq!(requests[0]["tools"], told["tools"]["tools"]);
    let now = tools_body(&app, &s, "openai").await;
    assert_eq!(requests[1]["messages"][0]["content"], now["systemPrompt"]);
    assert!(now["systemPrompt"]
        .as_str()
        .unwrap()
        .contains("## Current step: Verify identity (step 2 of 2)"));
}

#[tokio::test]
async fn a_result_the_backend_has_not_reported_is_pending_and_one_it_reports_is_read() {
    let (app, _) = app_with_model(&[("AGENT_RESULT_WAIT_SECONDS", "1")]).await;
    let key = app.api_key().await;
    let s = open_with(
        &app,
        &key,
        json!({"workflowId": "idv", "runBuiltins": false}),
    )
    .await;
    let (added, _) = turn("runner awaiting turn", |m| {
        let (app, s) = (&app, &s);
        async move { step_with_token(app, s, &m).await }
    })
    .await;
    assert!(
        added[1]["content"]
            .as_str()
            .unwrap()
            .contains("has not reported its result yet"),
        "{}",
        added[1]
    );

    // Reported during the wait: the model reads the result.
    let s2 = open_with(
        &app,
        &key,
        json!({"workflowId": "idv", "runBuiltins": false}),
    )
    .await;
    let reporter = {
        let (client, base, id, token) = (
            app.client.clone(),
            app.address.clone(),
            s2.id.clone(),
            s2.token.clone(),
        );
        tokio::spawn(async move {
            for _ in 0..100 {
                let calls: Value = client
                    .get(format!("{base}/api/sessions/{id}/calls"))
                    .bearer_auth(&token)
                    .send()
                    .await
                    .unwrap()
                    .json()
                    .await
                    .unwrap();
                if let Some(call) = calls["calls"].as_array().and_then(|c| c.first()) {
                    let res = client
                        .post(format!(
                            "{base}/api/sessions/{id}/tool-calls/{}/result",
                            call["id"]
                        ))
                        .bearer_auth(&token)
                        .json(&json!({"ok": true, "result": {"verified": true, "by": "the bank"}}))
                        .send()
                        .await
                        .unwrap();
                    assert_eq!(res.status(), 200);
                    return;
                }
                tokio::time::sleep(std::time::Duration::from_millis(20)).await;
            }
            panic!("no call to report");
        })
    };
    let (added, last) = turn("runner awaiting turn", |m| {
        let (app, s2) = (&app, &s2);
        async move { step_with_token(app, s2, &m).await }
    })
    .await;
    reporter.await.unwrap();
    assert!(
        added[1]["content"].as_str().unwrap().contains("the bank"),
        "{}",
        added[1]
    );
    assert_eq!(last["state"]["checks"]["identity_verified"], true);
}

#[tokio::test]
async fn malformed_calls_model_failures_and_the_step_limit_are_words_not_errors() {
    let (app, _) = app_with_model(&[("AGENT_STEP_LIMIT", "3")]).await;
    let key = app.api_key().await;
    let s = open_with(&app, &key, json!({"workflowId": "idv"})).await;
    let (added, _) = turn("runner broken turn", |m| {
        let (app, s) = (&app, &s);
        async move { step_with_token(app, s, &m).await }
    })
    .await;
    assert_eq!(added.len(), 1, "{added:?}");
    assert!(
        added[0]["content"]
            .as_str()
            .unwrap()
            .starts_with("The model asked for a tool call I could not use"),
        "{}",
        added[0]
    );

    let (added, _) = turn("runner endless turn", |m| {
        let (app, s) = (&app, &s);
        async move { step_with_token(app, s, &m).await }
    })
    .await;
    assert_eq!(added.len(), 4, "{added:?}");
    assert!(added[3]["content"]
        .as_str()
        .unwrap()
        .starts_with("I stopped after 3 steps"));

    // A history that does not hold together: 422 naming the field.
    let (status, body) = step_with_token(
        &app,
        &s,
        &json!([{"role": "tool", "content": "x", "tool_call_id": "nope"}]),
    )
    .await;
    assert_eq!(status, 422, "{body}");
    assert_eq!(body["Invalid"]["field"], "messages[0].tool_call_id");

    // A model that cannot be reached: the assistant says so.
    let down = spawn_app_with(&[
        ("SWITCHBOARD_LLM_BASE_URL", "http://127.0.0.1:9/v1"),
        ("SWITCHBOARD_LLM_API_KEY", "k"),
        ("SWITCHBOARD_LLM_MODEL", "m"),
    ])
    .await;
    let key = down.api_key().await;
    let s = open_with(&down, &key, json!({"workflowId": "idv"})).await;
    let (status, body) =
        step_with_token(&down, &s, &json!([{"role": "user", "content": "hello"}])).await;
    assert_eq!(status, 200, "{body}");
    assert!(body["messages"][1]["content"]
        .as_str()
        .unwrap()
        .contains("could not be reached"));
    assert_eq!(body["is_complete"], true);

    // No model: 503 saying what to set, and GET /api/model says so too.
    let none = crate::helpers::spawn_app().await;
    let key = none.api_key().await;
    let s = open_with(&none, &key, json!({"workflowId": "idv"})).await;
    let (status, body) =
        step_with_token(&none, &s, &json!([{"role": "user", "content": "hello"}])).await;
    assert_eq!(status, 503, "{body}");
    // An admin is told what to set; a teacher, who cannot, whom to ask.
    let model_for = |who: reqwest::Client| {
        let url = none.url("/api/model");
        async move {
            let model: Value = who.get(url).send().await.unwrap().json().await.unwrap();
            assert_eq!(model["configured"], false);
            model["help"].as_str().unwrap().to_owned()
        }
    };
    let admin_help = model_for(none.signed_in(ADMIN).await).await;
    assert!(
        admin_help.contains("SWITCHBOARD_LLM_BASE_URL"),
        "{admin_help}"
    );
    let teacher_help = model_for(none.signed_in(TEACHER).await).await;
    assert!(teacher_help.contains("ask an admin"), "{teacher_help}");
    assert!(!teacher_help.contains("SWITCHBOARD_LLM"), "{teacher_help}");
}

#[tokio::test]
async fn a_users_open_trials_are_bounded_the_oldest_ending_first() {
    let (app, _) = app_with_model(&[]).await;
    let admin = app.signed_in(ADMIN).await;
    let mut ids = Vec::new();
    for _ in 0..switchboard::domain::limits::OPEN_TRIALS_PER_USER + 1 {
        let (status, id) = open_trial(&app, &admin, "/api/vibes/todos/trials", json!({})).await;
        assert_eq!(status, 201);
        ids.push(id);
    }
    let ended = |id: &str| {
        let id = id.to_owned();
        let db = app.state.db.clone();
        async move {
            sqlx::query_scalar::<_, Option<String>>(
                "SELECT end_reason FROM agent_sessions WHERE id = $1",
            )
            .bind(id)
            .fetch_one(&db)
            .await
            .unwrap()
        }
    };
    assert_eq!(
        ended(&ids[0]).await.as_deref(),
        Some("replaced by a newer trial")
    );
    for id in &ids[1..] {
        assert_eq!(ended(id).await, None);
    }
}

/// An MCP client that notes `notifications/prompts/list_changed`.
#[derive(Clone)]
struct PromptWatcher {
    changed: std::sync::Arc<tokio::sync::Notify>,
}

impl rmcp::ClientHandler for PromptWatcher {
    async fn on_prompt_list_changed(
        &self,
        _context: rmcp::service::NotificationContext<rmcp::RoleClient>,
    ) {
        self.changed.notify_one();
    }
}

#[tokio::test]
async fn an_mcp_client_gets_the_steps_prompt_and_hears_when_the_step_changes() {
    use rmcp::model::GetPromptRequestParams;
    use rmcp::transport::streamable_http_client::StreamableHttpClientTransportConfig;
    use rmcp::transport::StreamableHttpClientTransport;
    use rmcp::ServiceExt;

    let (app, _) = app_with_model(&[]).await;
    let key = app.api_key().await;
    add_steps(&app, &key, &["Greet", "Verify identity"]).await;
    let s = open_with(&app, &key, json!({"workflowId": "idv"})).await;
    let changed = std::sync::Arc::new(tokio::sync::Notify::new());
    let transport = StreamableHttpClientTransport::from_config(
        StreamableHttpClientTransportConfig::with_uri(
            app.url(&format!("/api/sessions/{}/mcp", s.id)),
        )
        .auth_header(s.token.clone()),
    );
    let client = PromptWatcher {
        changed: changed.clone(),
    }
    .serve(transport)
    .await
    .expect("MCP initialize");
    let prompts = client.list_all_prompts().await.unwrap();
    assert_eq!(prompts.len(), 1);
    assert_eq!(prompts[0].name, "system");
    let text = |r: rmcp::model::GetPromptResult| serde_json::to_string(&r.messages).unwrap();
    let first = client
        .get_prompt(GetPromptRequestParams::new("system"))
        .await
        .unwrap();
    assert!(text(first).contains("Current step: Greet (step 1 of 2)"));

    let (status, moved) =
        crate::sessions::call(&app, &s, "go_to_step", json!({"step": "Verify identity"})).await;
    assert_eq!(
        (status, moved["allowed"].clone()),
        (200, json!(true)),
        "{moved}"
    );
    tokio::time::timeout(std::time::Duration::from_secs(5), changed.notified())
        .await
        .expect("prompts/list_changed after the step change");
    let now = client
        .get_prompt(GetPromptRequestParams::new("system"))
        .await
        .unwrap();
    let now = text(now);
    assert!(
        now.contains("Current step: Verify identity (step 2 of 2)")
            && now.contains("Do Verify identity.")
    );
    assert!(client
        .get_prompt(GetPromptRequestParams::new("other"))
        .await
        .is_err());
    let _ = client.cancel().await;
}
