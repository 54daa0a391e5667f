//! Real agent backends: tools they execute themselves report their result,
//! the catalogue's effects turn results into steps and checks, a backend
//! may set the state itself, and call responses say when tools changed.

use crate::helpers::{spawn_app, TestApp};
use crate::sessions::{call, idv, open, open_with, read_events, subscribe, tools_body, Session};
use serde_json::{json, Value};

/// A session whose backend executes every tool but the session tools.
async fn open_backend_session(app: &TestApp, key: &str, workflow: &str) -> Session {
    open_with(
        app,
        key,
        json!({"workflowId": workflow, "runBuiltins": false}),
    )
    .await
}

async fn report(
    app: &TestApp,
    s: &Session,
    token: &str,
    call_id: i64,
    body: Value,
) -> (u16, Value) {
    let res = app
        .client
        .post(app.url(&format!(
            "/api/sessions/{}/tool-calls/{call_id}/result",
            s.id
        )))
        .bearer_auth(token)
        .json(&body)
        .send()
        .await
        .unwrap();
    (
        res.status().as_u16(),
        res.json().await.unwrap_or(Value::Null),
    )
}

async fn patch_state(app: &TestApp, s: &Session, token: &str, body: Value) -> (u16, Value) {
    let res = app
        .client
        .patch(app.url(&format!("/api/sessions/{}/state", s.id)))
        .bearer_auth(token)
        .json(&body)
        .send()
        .await
        .unwrap();
    (
        res.status().as_u16(),
        res.json().await.unwrap_or(Value::Null),
    )
}

#[tokio::test]
async fn a_reported_result_runs_the_tools_effects_and_unlocks_what_needed_them() {
    let app = spawn_app().await;
    let key = app.api_key().await;
    let unverified = open_backend_session(&app, &key, "banking-master").await;
    let (_, refused) = call(
        &app,
        &unverified,
        "check_balance",
        json!({"accountNumber": "12345678"}),
    )
    .await;
    assert_eq!(refused["allowed"], false);
    assert!(refused["reason"]
        .as_str()
        .unwrap()
        .contains("needs check `identity_verified`"));

    let s = open_backend_session(&app, &key, "idv").await;
    let watcher = subscribe(&app, &s, None).await;
    let (status, idv_call) = call(&app, &s, "perform_idv_check", idv()).await;
    assert_eq!(status, 200);
    assert_eq!(idv_call["allowed"], true, "{idv_call}");
    assert_eq!(idv_call["status"], "awaiting", "{idv_call}");
    assert_eq!(
        idv_call["result"],
        Value::Null,
        "Switchboard did not run it"
    );
    assert_eq!(idv_call["state"]["currentStep"], "started");
    let call_id = idv_call["callId"].as_i64().unwrap();

    let (status, done) = report(
        &app,
        &s,
        &s.token,
        call_id,
        json!({"ok": true, "result": {"verified": true}}),
    )
    .await;
    assert_eq!(status, 200, "{done}");
    assert_eq!(done["status"], "done");
    assert_eq!(done["state"]["checks"]["identity_verified"], true);
    assert_eq!(done["state"]["currentStep"], "identity_verified");

    let (status, again) = report(
        &app,
        &s,
        &s.token,
        call_id,
        json!({"ok": true, "result": {}}),
    )
    .await;
    assert_eq!(status, 409, "{again}");

    let (_, switched) = call(
        &app,
        &s,
        "start_workflow",
        json!({"workflowId": "banking-master"}),
    )
    .await;
    assert_eq!(
        switched["status"], "done",
        "session tools run in Switchboard"
    );
    let (_, balance) = call(
        &app,
        &s,
        "check_balance",
        json!({"accountNumber": "12345678"}),
    )
    .await;
    assert_eq!(balance["allowed"], true, "{balance}");
    assert_eq!(balance["status"], "awaiting");

    let events = read_events(watcher, 8).await;
    let kinds: Vec<&str> = events
        .iter()
        .map(|(_, e)| e["type"].as_str().unwrap())
        .collect();
    assert_eq!(
        kinds,
        [
            "snapshot",
            "tool_call",
            "tool_result",
            "workflow_update",
            "tool_call",
            "workflow_update",
            "tools_changed",
            "tool_call"
        ]
    );
    assert_eq!(events[1].1["data"]["status"], "awaiting");
    assert_eq!(
        events[2].1["data"],
        json!({"callId": call_id, "status": "done", "result": {"verified": true}})
    );
    assert_eq!(
        events[3].1["data"],
        json!({"workflowId": "idv", "activeStep": "identity_verified", "checks": {"identity_verified": true}})
    );
}

#[tokio::test]
async fn a_failed_or_negative_result_does_not_verify_and_refused_calls_take_none() {
    let app = spawn_app().await;
    let key = app.api_key().await;
    let s = open_backend_session(&app, &key, "idv").await;
    let (_, first) = call(&app, &s, "perform_idv_check", idv()).await;
    let (status, body) = report(
        &app,
        &s,
        &s.token,
        first["callId"].as_i64().unwrap(),
        json!({"ok": false, "result": {"error": "upstream timeout"}}),
    )
    .await;
    assert_eq!(status, 200);
    assert_eq!(body["status"], "failed");
    assert_eq!(
        body["state"]["checks"],
        json!({}),
        "a failure has no effects"
    );

    let (_, second) = call(&app, &s, "perform_idv_check", idv()).await;
    let (_, body) = report(
        &app,
        &s,
        &s.token,
        second["callId"].as_i64().unwrap(),
        json!({"ok": true, "result": {"verified": false}}),
    )
    .await;
    assert_eq!(body["state"]["checks"]["identity_verified"], false);
    assert_eq!(body["state"]["currentStep"], "identity_failed");

    let (_, refused) = call(&app, &s, "no_such_tool", json!({})).await;
    let (status, _) = report(
        &app,
        &s,
        &s.token,
        refused["callId"].as_i64().unwrap(),
        json!({"ok": true}),
    )
    .await;
    assert_eq!(status, 409, "a refused call has no result");
    assert_eq!(refused["status"], "refused", "{refused}");
    let stored: Value = app
        .client
        .get(app.url(&format!("/api/sessions/{}/calls", s.id)))
        .bearer_auth(&s.token)
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    let record = stored["calls"]
        .as_array()
        .unwrap()
        .iter()
        .find(|c| c["id"] == refused["callId"])
        .unwrap();
    assert_eq!(record["status"], "refused", "as recorded too: {record}");
    let (status, _) = report(&app, &s, &s.token, 999_999, json!({"ok": true})).await;
    assert_eq!(status, 404);
    let res = app
        .client
        .post(app.url(&format!("/api/sessions/{}/tool-calls/abc/result", s.id)))
        .bearer_auth(&s.token)
        .json(&json!({"ok": true}))
        .send()
        .await
        .unwrap();
    assert_eq!(res.status(), 422);
    let body: Value = res.json().await.unwrap();
    assert_eq!(body["Invalid"]["field"], "callId");
    let (status, body) = report(
        &app,
        &s,
        &s.token,
        second["callId"].as_i64().unwrap(),
        json!({"result": 1}),
    )
    .await;
    assert_eq!(status, 422, "`ok` is required: {body}");
}

#[tokio::test]
async fn only_the_sessions_own_token_reports_results_or_sets_state() {
    let app = spawn_app().await;
    let key = app.api_key().await;
    let a = open_backend_session(&app, &key, "idv").await;
    let b = open_backend_session(&app, &key, "idv").await;
    let (_, b_call) = call(&app, &b, "perform_idv_check", idv()).await;
    let b_call = b_call["callId"].as_i64().unwrap();
    let (status, _) = report(
        &app,
        &b,
        &a.token,
        b_call,
        json!({"ok": true, "result": {"verified": true}}),
    )
    .await;
    assert_eq!(status, 403);
    let (status, _) = report(
        &app,
        &a,
        &a.token,
        b_call,
        json!({"ok": true, "result": {"verified": true}}),
    )
    .await;
    assert_eq!(status, 404, "b's call is not one of a's");
    let (status, _) = patch_state(&app, &b, &a.token, json!({"activeStep": "hijacked"})).await;
    assert_eq!(status, 403);
    let row: String = sqlx::query_scalar("SELECT state FROM agent_sessions WHERE id = $1")
        .bind(&b.id)
        .fetch_one(&app.state.db)
        .await
        .unwrap();
    assert!(
        !row.contains("hijacked") && !row.contains("identity_verified"),
        "{row}"
    );
}

#[tokio::test]
async fn a_backend_sets_step_and_checks_and_watchers_see_it() {
    let app = spawn_app().await;
    let key = app.api_key().await;
    let s = open_backend_session(&app, &key, "idv").await;
    let watcher = subscribe(&app, &s, None).await;
    let (status, body) = patch_state(
        &app,
        &s,
        &s.token,
        json!({"activeStep": "collecting_details", "checks": {"caller_named": true}}),
    )
    .await;
    assert_eq!(status, 200, "{body}");
    assert_eq!(body["state"]["currentStep"], "collecting_details");
    let (status, body) = patch_state(&app, &s, &s.token, json!({"activeStep": "Not A Slug"})).await;
    assert_eq!(status, 422);
    assert_eq!(body["Invalid"]["field"], "activeStep");
    let (status, _) = patch_state(&app, &s, &s.token, json!({"currentWorkflow": "mortgage"})).await;
    assert_eq!(status, 422, "the workflow is not the backend's to set");
    let events = read_events(watcher, 2).await;
    assert_eq!(
        events[1].1,
        json!({"type": "workflow_update", "data": {"workflowId": "idv", "activeStep": "collecting_details", "checks": {"caller_named": true}}})
    );
}

#[tokio::test]
async fn the_model_is_told_the_workflow_ids_and_a_wrong_one_is_refused_naming_them() {
    let app = spawn_app().await;
    let key = app.api_key().await;
    let s = open(&app, &key, "idv").await;
    let body = tools_body(&app, &s, "openai").await;
    let switch = body["tools"]["tools"]
        .as_array()
        .unwrap()
        .iter()
        .find(|t| t["function"]["name"] == "start_workflow")
        .expect("start_workflow declared");
    let property = &switch["function"]["parameters"]["properties"]["workflowId"];
    assert_eq!(
        property["enum"],
        json!(["banking-master", "idv", "disputes", "mortgage"]),
        "{switch}"
    );
    assert!(property["description"]
        .as_str()
        .unwrap()
        .contains("disputes (Disputes)"));

    let (_, refused) = call(&app, &s, "start_workflow", json!({"workflowId": "loans"})).await;
    assert_eq!(refused["allowed"], false);
    let reason = refused["reason"].as_str().unwrap();
    assert!(
        reason.contains("no workflow `loans`")
            && reason.contains("banking-master, idv, disputes, mortgage"),
        "{reason}"
    );
}

#[tokio::test]
async fn a_call_response_says_when_the_tools_changed_since_the_previous_call() {
    let app = spawn_app().await;
    let key = app.api_key().await;
    let s = open(&app, &key, "idv").await;
    let (_, first) = call(&app, &s, "get_server_time", json!({})).await;
    assert_eq!(first["toolsChanged"], false, "{first}");
    assert!(first.get("tools").is_none());

    let (_, switched) = call(
        &app,
        &s,
        "start_workflow",
        json!({"workflowId": "disputes"}),
    )
    .await;
    assert_eq!(switched["toolsChanged"], true);
    assert!(switched["tools"]
        .as_array()
        .unwrap()
        .iter()
        .any(|t| t == "lookup_transaction"));
    let (_, next) = call(&app, &s, "get_server_time", json!({})).await;
    assert_eq!(next["toolsChanged"], false, "told once");

    // An admin takes get_server_time out of the global tools.
    let res = app
        .client
        .get(app.url("/api/bindings"))
        .bearer_auth(&key)
        .send()
        .await
        .unwrap();
    let etag = res.headers()["etag"].to_str().unwrap().to_owned();
    let mut bindings: Value = res.json().await.unwrap();
    let global = bindings["global"].as_array_mut().unwrap();
    global.retain(|t| t != "get_server_time");
    let res = app
        .client
        .put(app.url("/api/bindings"))
        .bearer_auth(
            app.api_key_with(&[switchboard::domain::api_key::Scope::BindingsWrite])
                .await,
        )
        .header("If-Match", etag)
        .json(&bindings)
        .send()
        .await
        .unwrap();
    assert_eq!(res.status(), 200, "{}", res.text().await.unwrap());
    let (_, after) = call(
        &app,
        &s,
        "lookup_transaction",
        json!({"transactionId": "tx-1001"}),
    )
    .await;
    assert_eq!(after["toolsChanged"], true, "{after}");
    assert!(!after["tools"]
        .as_array()
        .unwrap()
        .iter()
        .any(|t| t == "get_server_time"));
}

#[tokio::test]
async fn the_demo_tools_change_state_through_the_same_catalogue_effects() {
    let app = spawn_app().await;
    let key = app.api_key().await;
    let s = open(&app, &key, "idv").await;
    let (_, body) = call(&app, &s, "perform_idv_check", idv()).await;
    assert_eq!(body["status"], "done");
    assert_eq!(body["state"]["checks"]["identity_verified"], true);
    // Take the effect away: the same built-in result no longer verifies.
    let mut tool: Value = serde_json::to_value(
        switchboard::server::store::bindings::tools(&app.state.db)
            .await
            .unwrap()
            .into_iter()
            .find(|t| t.id.as_str() == "perform_idv_check")
            .unwrap(),
    )
    .unwrap();
    tool["effects"] = json!([{"then": {"step": "details_checked"}}]);
    app.login(crate::helpers::ADMIN).await;
    let res = app
        .rpc_json("save_tool", &json!({"tool": tool, "create": false}))
        .await;
    assert_eq!(res.status(), 200, "{}", res.text().await.unwrap());
    let s2 = open(&app, &key, "idv").await;
    let (_, body) = call(&app, &s2, "perform_idv_check", idv()).await;
    assert_eq!(body["state"]["checks"], json!({}));
    assert_eq!(body["state"]["currentStep"], "details_checked");
}

#[tokio::test]
async fn a_requirement_nothing_can_satisfy_is_refused_naming_the_known_checks() {
    let app = spawn_app().await;
    app.login(crate::helpers::ADMIN).await;
    let tool = json!({
        "id": "wire_money", "name": "Wire money", "description": "Sends money.",
        "category": "banking", "parameters": {"type": "object"},
        "requires": ["manager_approved"]
    });
    let res = app
        .rpc_json("save_tool", &json!({"tool": tool, "create": true}))
        .await;
    assert_eq!(res.status(), 422);
    let body: Value = res.json().await.unwrap();
    assert_eq!(body["Invalid"]["field"], "requires");
    let rule = body["Invalid"]["rule"].as_str().unwrap();
    assert!(rule.contains("account_found, identity_verified"), "{rule}");
    let bad_pointer = json!({
        "id": "wire_money", "name": "Wire money", "description": "Sends money.",
        "category": "banking", "parameters": {"type": "object"},
        "effects": [{"when": "sent", "then": {"step": "sent"}}]
    });
    let res = app
        .rpc_json("save_tool", &json!({"tool": bad_pointer, "create": true}))
        .await;
    assert_eq!(res.status(), 422);
    let body: Value = res.json().await.unwrap();
    assert_eq!(body["Invalid"]["field"], "effects[0].when");
}
