//! Workflow definitions over the API: edits on top of the version read
//! (stale → 412), refusals naming the argument, history with authors, and
//! a step's tools joining a session's while it is in that step.

use crate::helpers::{spawn_app, TestApp};
use crate::sessions::{call, open};
use serde_json::{json, Value};
use switchboard::domain::api_key::Scope;

async fn edit(app: &TestApp, key: &str, version: i64, body: Value) -> (u16, Value) {
    let res = app
        .client
        .post(app.url("/api/workflows/idv/edits"))
        .bearer_auth(key)
        .header("If-Match", format!("\"{version}\""))
        .json(&body)
        .send()
        .await
        .unwrap();
    (
        res.status().as_u16(),
        res.json().await.unwrap_or(Value::Null),
    )
}

/// Applies `body` to idv on top of `version` as the signed-in admin (the
/// settings page's server function): an admin may give a step a tool the
/// bindings do not allow in its workflow, an API key may not.
async fn admin_edit(app: &TestApp, version: i64, body: Value) -> u16 {
    let admin = app.signed_in(crate::helpers::ADMIN).await;
    let res = app
        .rpc_json_with(
            &admin,
            "edit_workflow",
            &json!({"id": "idv", "version": version, "edit": body}),
        )
        .await;
    res.status().as_u16()
}

async fn tools(app: &TestApp, s: &crate::sessions::Session) -> Vec<String> {
    let res = app
        .client
        .get(app.url(&format!("/api/sessions/{}/tools", s.id)))
        .bearer_auth(&s.token)
        .send()
        .await
        .unwrap();
    let body: Value = res.json().await.unwrap();
    serde_json::from_value(body["available"].clone()).unwrap()
}

#[tokio::test]
async fn a_definition_is_edited_step_by_step_and_its_step_tools_reach_sessions() {
    let app = spawn_app().await;
    let key = app.api_key().await;
    let res = app
        .client
        .get(app.url("/api/workflows/idv/definition"))
        .bearer_auth(&key)
        .send()
        .await
        .unwrap();
    assert_eq!(res.status(), 200);
    assert_eq!(res.headers()["etag"], "\"0\"");
    let body: Value = res.json().await.unwrap();
    assert_eq!(body["definition"]["steps"], json!([]));
    assert_eq!(body["triggerTypes"].as_array().unwrap().len(), 5);

    let (status, body) = edit(
        &app,
        &key,
        0,
        json!({"edit": "add_step", "step_type": "custom_agent", "name": "Verify identity"}),
    )
    .await;
    assert_eq!(status, 200, "{body}");
    assert_eq!(body["version"], 1);
    let step = body["definition"]["steps"][0]["uuid"]
        .as_str()
        .unwrap()
        .to_owned();
    assert_eq!(step.len(), 36);

    // Stale: 412, nothing written.
    let (status, _) = edit(
        &app,
        &key,
        0,
        json!({"edit": "add_step", "step_type": "custom_llm", "name": "Greet"}),
    )
    .await;
    assert_eq!(status, 412);
    // A key the edit does not take: 422 naming it, nothing written.
    let (status, body) = edit(
        &app,
        &key,
        1,
        json!({"edit": "update_system_prompt", "step_uuid": step, "system_prompt": "", "systemPrompt": "Greet"}),
    )
    .await;
    assert_eq!(status, 422, "{body}");
    assert!(
        body.to_string().contains("unknown field `systemPrompt`"),
        "{body}"
    );
    // Refused: 422 naming the argument.
    let (status, body) = edit(&app, &key, 1, json!({"edit": "update_step_tools", "step_uuid": step, "enabled_tools": ["check_balance", "fly"]})).await;
    assert_eq!(status, 422);
    assert_eq!(body["Invalid"]["field"], "enabled_tools[1]");
    // check_balance is not bound in idv: a key may not put it on a step
    // (issue #33), the admin may.
    let (status, body) = edit(
        &app,
        &key,
        1,
        json!({"edit": "update_step_tools", "step_uuid": step, "enabled_tools": ["check_balance"]}),
    )
    .await;
    assert_eq!(status, 422, "{body}");
    assert_eq!(body["Invalid"]["field"], "steps[0].tools");
    let status = admin_edit(
        &app,
        1,
        json!({"edit": "update_step_tools", "step_uuid": step, "enabled_tools": ["check_balance"]}),
    )
    .await;
    assert_eq!(status, 200);
    let (status, body) = edit(
        &app,
        &key,
        2,
        json!({"edit": "set_trigger", "trigger_type_id": "inbound_call"}),
    )
    .await;
    assert_eq!(status, 200);
    let trigger = body["definition"]["trigger"]["uuid"]
        .as_str()
        .unwrap()
        .to_owned();
    let (status, body) = edit(&app, &key, 3, json!({"edit": "update_trigger_settings", "trigger_uuid": trigger, "filter_rules": {"calledNumbers": ["0800"]}})).await;
    assert_eq!(status, 422);
    assert!(
        body["Invalid"]["rule"]
            .as_str()
            .unwrap()
            .contains("do not fit trigger type `inbound_call`"),
        "{body}"
    );

    // A new session starts in the first step and has its tools.
    let s = open(&app, &key, "idv").await;
    assert!(tools(&app, &s).await.contains(&"check_balance".to_owned()));
    let (_, reply) = call(&app, &s, "check_balance", json!({})).await;
    assert!(
        !reply["reason"]
            .as_str()
            .unwrap_or_default()
            .contains("not available"),
        "{reply}"
    );

    // The history names each version's edit and author.
    let res = app
        .client
        .get(app.url("/api/workflows/idv/history"))
        .bearer_auth(&key)
        .send()
        .await
        .unwrap();
    let history: Value = res.json().await.unwrap();
    let versions = history["versions"].as_array().unwrap();
    assert_eq!(versions.len(), 3);
    assert_eq!(versions[0]["edit"]["edit"], "set_trigger");
    assert_eq!(versions[2]["savedBy"], "API key “test backend”");

    // Removing the step takes its tools away from a session entering idv.
    let (status, _) = edit(
        &app,
        &key,
        3,
        json!({"edit": "remove_step", "step_uuid": step}),
    )
    .await;
    assert_eq!(status, 200);
    let later = open(&app, &key, "idv").await;
    assert!(!tools(&app, &later)
        .await
        .contains(&"check_balance".to_owned()));

    // Scope and existence.
    let narrow = app.api_key_with(&[Scope::Sessions]).await;
    let (status, _) = edit(
        &app,
        &narrow,
        4,
        json!({"edit": "add_step", "step_type": "custom_llm", "name": "x"}),
    )
    .await;
    assert_eq!(status, 403);
    let res = app
        .client
        .get(app.url("/api/workflows/nope/definition"))
        .bearer_auth(&key)
        .send()
        .await
        .unwrap();
    assert_eq!(res.status(), 404);
}

#[tokio::test]
async fn a_backend_moves_a_session_between_steps_and_its_tools_follow() {
    let app = spawn_app().await;
    let key = app.api_key().await;
    let (_, body) = edit(
        &app,
        &key,
        0,
        json!({"edit": "add_step", "step_type": "custom_llm", "name": "Greet"}),
    )
    .await;
    let greet = body["definition"]["steps"][0]["uuid"]
        .as_str()
        .unwrap()
        .to_owned();
    let (_, body) = edit(
        &app,
        &key,
        1,
        json!({"edit": "add_step", "step_type": "custom_agent", "name": "Balance"}),
    )
    .await;
    let balance = body["definition"]["steps"][1]["uuid"]
        .as_str()
        .unwrap()
        .to_owned();
    let status = admin_edit(&app, 2, json!({"edit": "update_step_tools", "step_uuid": balance, "enabled_tools": ["check_balance"]})).await;
    assert_eq!(status, 200);
    let s = open(&app, &key, "idv").await;
    assert!(
        !tools(&app, &s).await.contains(&"check_balance".to_owned()),
        "starts in Greet"
    );
    let patch = |step: &str| {
        app.client
            .patch(app.url(&format!("/api/sessions/{}/state", s.id)))
            .bearer_auth(&s.token)
            .json(&json!({"workflowStep": step}))
            .send()
    };
    let res = patch(&balance).await.unwrap();
    assert_eq!(res.status(), 200);
    let state: Value = res.json().await.unwrap();
    assert_eq!(state["state"]["workflowStep"], balance.as_str());
    assert!(tools(&app, &s).await.contains(&"check_balance".to_owned()));
    let res = patch("not-a-step").await.unwrap();
    assert_eq!(res.status(), 422);
    let body: Value = res.json().await.unwrap();
    assert_eq!(body["Invalid"]["field"], "workflowStep");
    assert!(body["Invalid"]["rule"].as_str().unwrap().contains(&greet));
}

#[tokio::test]
async fn a_step_tool_a_key_gave_lapses_when_the_bindings_no_longer_allow_it() {
    let app = spawn_app().await;
    let key = app.api_key().await;
    let (status, body) = edit(
        &app,
        &key,
        0,
        json!({"edit": "add_step", "step_type": "custom_agent", "name": "Verify"}),
    )
    .await;
    assert_eq!(status, 200, "{body}");
    let step = body["definition"]["steps"][0]["uuid"].clone();
    let (status, body) = edit(
        &app,
        &key,
        1,
        json!({"edit": "update_step_tools", "step_uuid": step, "enabled_tools": ["perform_idv_check"]}),
    )
    .await;
    assert_eq!(status, 200, "a bound tool: {body}");
    assert_eq!(
        body["definition"]["steps"][0]["boundOnly"],
        json!(["perform_idv_check"]),
        "recorded as the key's grant"
    );

    // An admin takes perform_idv_check out of idv's bindings.
    let (etag, mut doc) = app.bindings_with_etag(&key).await;
    for path in ["/global", "/workflows/idv"] {
        doc.pointer_mut(path)
            .and_then(Value::as_array_mut)
            .unwrap()
            .retain(|t| t != "perform_idv_check");
    }
    let res = app.put_bindings(&key, &etag, &doc).await;
    assert_eq!(res.status(), 200);

    // The key's grant narrows with them: a session in the step has no
    // perform_idv_check, and calling it is refused.
    let s = open(&app, &key, "idv").await;
    assert!(
        !tools(&app, &s)
            .await
            .contains(&"perform_idv_check".to_owned()),
        "the key gave only what the bindings allowed"
    );
    let (_, reply) = call(
        &app,
        &s,
        "perform_idv_check",
        json!({"accountNumber": "12345678", "sortCode": "12-34-56", "dateOfBirth": "1985-04-12"}),
    )
    .await;
    assert_eq!(reply["allowed"], false, "{reply}");

    // An admin's save of the list keeps the key's grant the key's (the
    // page sends the whole list whichever box was ticked); taken off and
    // given again by the admin, the tool is in force whatever the bindings.
    let status = admin_edit(
        &app,
        2,
        json!({"edit": "update_step_tools", "step_uuid": step, "enabled_tools": ["perform_idv_check"]}),
    )
    .await;
    assert_eq!(status, 200);
    let s = open(&app, &key, "idv").await;
    assert!(!tools(&app, &s)
        .await
        .contains(&"perform_idv_check".to_owned()));
    for (version, list) in [(3, json!([])), (4, json!(["perform_idv_check"]))] {
        let status = admin_edit(
            &app,
            version,
            json!({"edit": "update_step_tools", "step_uuid": step, "enabled_tools": list}),
        )
        .await;
        assert_eq!(status, 200);
    }
    let s = open(&app, &key, "idv").await;
    assert!(tools(&app, &s)
        .await
        .contains(&"perform_idv_check".to_owned()));
}

#[tokio::test]
async fn a_definition_exported_as_a_file_imports_back_whole_and_a_bad_one_is_refused_by_place() {
    let app = spawn_app().await;
    let key = app.api_key().await;
    for (version, body) in [
        (
            0,
            json!({"edit": "add_step", "step_type": "custom_agent", "name": "Verify"}),
        ),
        (
            1,
            json!({"edit": "set_trigger", "trigger_type_id": "manual"}),
        ),
    ] {
        let (status, body) = edit(&app, &key, version, body).await;
        assert_eq!(status, 200, "{body}");
    }
    // The export is the definition's GET; the signed-in admin may read it.
    let admin = app.signed_in(crate::helpers::ADMIN).await;
    let res = admin
        .get(app.url("/api/workflows/idv/definition"))
        .send()
        .await
        .unwrap();
    assert_eq!(res.status(), 200);
    let file: Value = res.json().await.unwrap();
    let mut definition = file["definition"].clone();
    definition["steps"][0]["name"] = json!("Verify who calls");
    definition["steps"][0]["systemPrompt"] = json!("Ask for the account number.");
    let (status, body) = edit(
        &app,
        &key,
        2,
        json!({"edit": "replace_definition", "definition": definition}),
    )
    .await;
    assert_eq!(status, 200, "{body}");
    assert_eq!(body["version"], 3);
    assert_eq!(body["definition"]["steps"][0]["name"], "Verify who calls");
    assert_eq!(
        body["definition"]["steps"][0]["uuid"], file["definition"]["steps"][0]["uuid"],
        "the file's uuids are kept"
    );
    let history: Value = app
        .client
        .get(app.url("/api/workflows/idv/history"))
        .bearer_auth(&key)
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    assert_eq!(
        history["versions"][0]["edit"],
        json!({"edit": "replace_definition", "steps": 1, "trigger": "manual"})
    );

    // Refused whole, named by place: a broken step, and (for a key) a tool
    // the bindings do not allow.
    definition["steps"][0]["name"] = json!("");
    let (status, body) = edit(
        &app,
        &key,
        3,
        json!({"edit": "replace_definition", "definition": definition}),
    )
    .await;
    assert_eq!(status, 422, "{body}");
    assert_eq!(body["Invalid"]["field"], "definition.steps[0].name");
    definition["steps"][0]["name"] = json!("Verify");
    definition["steps"][0]["tools"] = json!(["check_balance"]);
    let (status, body) = edit(
        &app,
        &key,
        3,
        json!({"edit": "replace_definition", "definition": definition}),
    )
    .await;
    assert_eq!(status, 422, "{body}");
    assert_eq!(body["Invalid"]["field"], "definition.steps[0].tools");
    let (status, _) = edit(
        &app,
        &key,
        3,
        json!({"edit": "add_step", "step_type": "custom_llm", "name": "x"}),
    )
    .await;
    assert_eq!(status, 200, "nothing was written: still version 3");
}
