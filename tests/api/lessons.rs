use crate::helpers::{spawn_app, TestApp, ADMIN, TEACHER};
use serde_json::{json, Value};
use switchboard::error::ApiError;

async fn create(app: &TestApp, title: &str) -> i64 {
    let res = app.rpc("create_lesson", &[("title", title)]).await;
    assert_eq!(res.status(), 200);
    res.json().await.unwrap()
}

async fn load(app: &TestApp, id: i64) -> Value {
    let res = app.rpc("get_lesson", &[("id", &id.to_string())]).await;
    assert_eq!(res.status(), 200);
    res.json().await.unwrap()
}

async fn save(app: &TestApp, id: i64, version: i64, draft: &Value) -> reqwest::Response {
    app.rpc_json(
        "save_lesson",
        &json!({"id": id, "version": version, "draft": draft}),
    )
    .await
}

#[tokio::test]
async fn a_saved_lesson_loads_back_exactly() {
    let app = spawn_app().await;
    app.login(TEACHER).await;
    let id = create(&app, "Café").await;
    let mut lesson = load(&app, id).await;
    assert_eq!(lesson["version"], 1);
    let draft = &mut lesson["draft"];
    draft["conversationPrompt"] = json!("You are a waiter.");
    draft["tasks"] = json!([{"id": "order-drink", "text": "Order a drink"}]);
    draft["level"] = json!("B1");
    draft["review"] = json!(true);
    draft["toolConfiguration"]["tools"][1]["triggerCondition"] =
        json!({"type": "keyword", "keywords": ["hobby", "family"]});
    draft["toolConfiguration"]["tools"][1]["customInstructions"] =
        json!("Only facts they volunteer.");
    draft["toolConfiguration"]["globalInstructions"] = json!("Never mention the functions.");
    let expected = draft.clone();
    let res = save(&app, id, 1, &expected).await;
    assert_eq!(res.status(), 200);
    assert_eq!(res.json::<i64>().await.unwrap(), 2);
    let reloaded = load(&app, id).await;
    assert_eq!(reloaded["version"], 2);
    assert_eq!(reloaded["draft"], expected);
    assert_eq!(reloaded["updatedBy"].as_str(), Some("Tess Teacher"));
}

#[tokio::test]
async fn an_invalid_configuration_is_refused_naming_the_field_and_nothing_is_stored() {
    let app = spawn_app().await;
    app.login(TEACHER).await;
    let id = create(&app, "Café").await;
    let before = load(&app, id).await;
    let mut draft = before["draft"].clone();
    draft["toolConfiguration"]["tools"][2]["triggerCondition"] = json!({"type": "always"});
    let res = save(&app, id, 1, &draft).await;
    assert_eq!(res.status(), 422);
    let err: ApiError = res.json().await.unwrap();
    assert_eq!(
        err.field(),
        Some("toolConfiguration.tools[2].triggerCondition.type")
    );
    assert!(err
        .to_string()
        .contains("Session Summary (show_session_summary): trigger always is not allowed"));

    // A trigger that does not even parse is refused too, before anything
    // runs, as a bad request that says what could not be read.
    for (trigger, words) in [
        (json!({"type": "sometimes"}), "unknown variant `sometimes`"),
        (json!({"type": "keyword"}), "missing field `keywords`"),
        (
            json!({"type": "turn_count", "minTurns": -1}),
            "invalid value: integer `-1`",
        ),
    ] {
        draft["toolConfiguration"]["tools"][2]["triggerCondition"] = trigger;
        let res = save(&app, id, 1, &draft).await;
        assert_eq!(res.status(), 400);
        let err: ApiError = res.json().await.unwrap();
        let ApiError::BadRequest(message) = &err else {
            panic!("{err:?}");
        };
        assert!(
            message.starts_with("The request could not be read: "),
            "{message}"
        );
        assert!(message.contains(words), "{message}");
    }
    assert_eq!(load(&app, id).await, before);
}

#[tokio::test]
async fn a_save_from_a_stale_version_is_a_conflict_and_changes_nothing() {
    let app = spawn_app().await;
    app.login(TEACHER).await;
    let id = create(&app, "Café").await;
    let original = load(&app, id).await;
    let mut first = original["draft"].clone();
    first["title"] = json!("First tab's title");
    assert_eq!(save(&app, id, 1, &first).await.status(), 200);

    let mut second = original["draft"].clone();
    second["title"] = json!("Second tab's title");
    let res = save(&app, id, 1, &second).await;
    assert_eq!(res.status(), 409);
    let err: ApiError = res.json().await.unwrap();
    assert!(err.to_string().contains("changed elsewhere"), "{err}");
    assert!(err.to_string().contains("reload"), "{err}");
    let stored = load(&app, id).await;
    assert_eq!(stored["draft"]["title"], "First tab's title");
    assert_eq!(stored["version"], 2);
}

#[tokio::test]
async fn a_teacher_cannot_read_change_or_delete_another_teachers_lesson() {
    let app = spawn_app().await;
    app.login(TEACHER).await;
    let id = create(&app, "Mine").await;
    let before = load(&app, id).await;
    let other = app.other_teacher().await;

    let res = app
        .rpc_with(&other, "get_lesson", &[("id", &id.to_string())])
        .await;
    assert_eq!(res.status(), 404);
    let mut draft = before["draft"].clone();
    draft["title"] = json!("Stolen");
    let res = app
        .rpc_json_with(
            &other,
            "save_lesson",
            &json!({"id": id, "version": 1, "draft": draft}),
        )
        .await;
    assert_eq!(res.status(), 404);
    let res = app
        .rpc_with(
            &other,
            "delete_lesson",
            &[("id", &id.to_string()), ("version", "1")],
        )
        .await;
    assert_eq!(res.status(), 404);
    let listed: Vec<Value> = app
        .rpc_with(&other, "list_lessons", &[])
        .await
        .json()
        .await
        .unwrap();
    assert!(listed.iter().all(|l| l["id"] != id));
    assert_eq!(load(&app, id).await, before);
}

#[tokio::test]
async fn admins_see_every_lesson() {
    let app = spawn_app().await;
    app.login(TEACHER).await;
    let id = create(&app, "Teacher's lesson").await;
    let admin = crate::helpers::new_client();
    app.rpc_with(
        &admin,
        "login",
        &[("email", ADMIN.0), ("password", ADMIN.1)],
    )
    .await;
    let listed: Vec<Value> = app
        .rpc_with(&admin, "list_lessons", &[])
        .await
        .json()
        .await
        .unwrap();
    assert!(listed
        .iter()
        .any(|l| l["id"] == id && l["ownerName"] == "Tess Teacher"));
}

#[tokio::test]
async fn deleting_needs_the_current_version() {
    let app = spawn_app().await;
    app.login(TEACHER).await;
    let id = create(&app, "Temp").await;
    let res = app
        .rpc(
            "delete_lesson",
            &[("id", &id.to_string()), ("version", "7")],
        )
        .await;
    assert_eq!(res.status(), 409);
    let res = app
        .rpc(
            "delete_lesson",
            &[("id", &id.to_string()), ("version", "1")],
        )
        .await;
    assert_eq!(res.status(), 200);
    let res = app.rpc("get_lesson", &[("id", &id.to_string())]).await;
    assert_eq!(res.status(), 404);
}

#[tokio::test]
async fn the_prompt_endpoint_serves_all_three_formats_to_key_holders() {
    let app = spawn_app().await;
    app.login(TEACHER).await;
    let id = create(&app, "Café").await;
    let mut lesson = load(&app, id).await;
    lesson["draft"]["conversationPrompt"] = json!("You are Lucía.");
    lesson["draft"]["tasks"] = json!([{"id": "greet", "text": "Greet"}]);
    // A new lesson starts without Task Completion (it has no tasks yet); the
    // editor's smart defaults would switch it on with the first task.
    assert_eq!(
        lesson["draft"]["toolConfiguration"]["tools"][3]["toolId"],
        "mark_task_complete"
    );
    lesson["draft"]["toolConfiguration"]["tools"][3]["enabled"] = json!(true);
    assert_eq!(save(&app, id, 1, &lesson["draft"]).await.status(), 200);
    let key = app.api_key().await;
    let get = |format: &str| {
        app.client
            .get(app.url(&format!("/api/lessons/{id}/prompt?format={format}")))
            .bearer_auth(&key)
            .send()
    };

    let gemini: Value = get("gemini").await.unwrap().json().await.unwrap();
    let prompt = gemini["systemPrompt"].as_str().unwrap();
    assert!(prompt.starts_with("You are Lucía."));
    assert!(
        prompt.contains("## Lesson Objectives")
            && prompt.ends_with(&prompt[prompt.find("**mark_task_complete**").unwrap()..])
    );
    let names: Vec<&str> = gemini["tools"]["functionDeclarations"]
        .as_array()
        .unwrap()
        .iter()
        .map(|d| d["name"].as_str().unwrap())
        .collect();
    assert_eq!(
        names,
        [
            "mark_for_review",
            "update_user_profile",
            "show_session_summary",
            "mark_task_complete"
        ]
    );
    let estimate = gemini["estimatedTokens"].as_u64().unwrap();
    let bpe = gemini["tokenCount"].as_u64().unwrap();
    assert!(bpe > 10 && bpe < prompt.len() as u64, "{bpe}");
    // The exact count covers the same text as the estimate: comparable.
    let exact = gemini["exactTokens"].as_u64().unwrap();
    assert!(exact > bpe, "{exact} vs prompt only {bpe}");
    assert!(
        exact * 2 > estimate && exact < estimate * 2,
        "{exact} vs ~{estimate}"
    );

    let openai: Value = get("openai").await.unwrap().json().await.unwrap();
    assert_eq!(openai["tools"]["tools"][0]["type"], "function");
    assert_eq!(
        openai["tools"]["tools"][0]["function"]["name"],
        "mark_for_review"
    );
    assert_eq!(openai["systemPrompt"], gemini["systemPrompt"]);

    let anthropic: Value = get("anthropic").await.unwrap().json().await.unwrap();
    assert_eq!(anthropic["tools"]["tools"][3]["name"], "mark_task_complete");
    assert_eq!(
        anthropic["tools"]["tools"][3]["input_schema"]["required"],
        json!(["taskId"])
    );

    let bad = get("claude").await.unwrap();
    assert_eq!(bad.status(), 422);
    assert_eq!(
        bad.json::<ApiError>().await.unwrap().field(),
        Some("format")
    );
}

#[tokio::test]
async fn the_prompt_endpoint_refuses_missing_wrong_and_revoked_keys() {
    let app = spawn_app().await;
    let url = app.url("/api/lessons/1/prompt");
    let res = app.client.get(&url).send().await.unwrap();
    assert_eq!(res.status(), 401);
    let res = app
        .client
        .get(&url)
        .bearer_auth("sb_wrong")
        .send()
        .await
        .unwrap();
    assert_eq!(res.status(), 401);
    let (secret, key) = switchboard::server::store::api_keys::create(
        &app.state.db,
        "old",
        &switchboard::domain::api_key::Scope::LEGACY,
        None,
    )
    .await
    .unwrap();
    switchboard::server::store::api_keys::revoke(&app.state.db, key.id, None)
        .await
        .unwrap();
    let res = app
        .client
        .get(&url)
        .bearer_auth(&secret)
        .send()
        .await
        .unwrap();
    assert_eq!(res.status(), 401);
    let live = app.api_key().await;
    let res = app
        .client
        .get(app.url("/api/lessons/999/prompt"))
        .bearer_auth(&live)
        .send()
        .await
        .unwrap();
    assert_eq!(res.status(), 404);
}

#[tokio::test]
async fn a_legacy_lesson_gets_the_standard_tools_that_fit_it_on_first_edit() {
    let app = spawn_app().await;
    switchboard::server::seed::seed_demo_lessons(&app.state)
        .await
        .unwrap();
    app.login(TEACHER).await;
    let listed: Vec<Value> = app.rpc("list_lessons", &[]).await.json().await.unwrap();
    let legacy = listed
        .iter()
        .find(|l| l["title"] == "Free conversation: weekend plans")
        .unwrap();
    let lesson = load(&app, legacy["id"].as_i64().unwrap()).await;
    assert_eq!(lesson["legacyConfiguration"], true);
    let enabled: Vec<&str> = lesson["draft"]["toolConfiguration"]["tools"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|t| t["enabled"] == true)
        .map(|t| t["toolId"].as_str().unwrap())
        .collect();
    // No tasks, so no Task Completion: the prompt must not ask the model
    // to mark objectives that do not exist.
    assert_eq!(
        enabled,
        [
            "mark_for_review",
            "update_user_profile",
            "show_session_summary"
        ]
    );
    let res = save(&app, lesson["id"].as_i64().unwrap(), 1, &lesson["draft"]).await;
    assert_eq!(res.status(), 200);
    assert_eq!(
        load(&app, lesson["id"].as_i64().unwrap()).await["legacyConfiguration"],
        false
    );
}

#[tokio::test]
async fn anonymous_and_cross_origin_lesson_calls_are_refused() {
    let app = spawn_app().await;
    assert_eq!(app.rpc("list_lessons", &[]).await.status(), 401);
    app.login(TEACHER).await;
    let res = app
        .client
        .post(app.url("/rpc/create_lesson"))
        .header("Origin", "http://evil.example")
        .form(&[("title", "x")])
        .send()
        .await
        .unwrap();
    assert_eq!(res.status(), 403);
    let listed: Vec<Value> = app.rpc("list_lessons", &[]).await.json().await.unwrap();
    assert!(listed.is_empty());
}

async fn history(app: &TestApp, id: i64) -> Vec<Value> {
    let res = app.rpc("lesson_history", &[("id", &id.to_string())]).await;
    assert_eq!(res.status(), 200);
    res.json().await.unwrap()
}

async fn restore(app: &TestApp, id: i64, version: i64, restore: i64) -> reqwest::Response {
    app.rpc(
        "restore_lesson",
        &[
            ("id", &id.to_string()),
            ("version", &version.to_string()),
            ("restore", &restore.to_string()),
        ],
    )
    .await
}

#[tokio::test]
async fn every_save_is_a_version_listed_with_author_time_and_what_changed() {
    let app = spawn_app().await;
    app.login(TEACHER).await;
    let id = create(&app, "Café").await;
    let mut draft = load(&app, id).await["draft"].clone();
    draft["title"] = json!("Café, second take");
    assert_eq!(save(&app, id, 1, &draft).await.status(), 200);
    draft["tasks"] = json!([{"id": "greet", "text": "Greet"}]);
    draft["review"] = json!(true);
    assert_eq!(save(&app, id, 2, &draft).await.status(), 200);

    let list = history(&app, id).await;
    let versions: Vec<i64> = list
        .iter()
        .map(|v| v["version"].as_i64().unwrap())
        .collect();
    assert_eq!(versions, [3, 2, 1]);
    let summaries: Vec<&str> = list
        .iter()
        .map(|v| v["summary"].as_str().unwrap())
        .collect();
    assert_eq!(
        summaries,
        ["Changed tasks and review flag", "Changed title", "Created"]
    );
    for v in &list {
        assert_eq!(v["author"], "Tess Teacher");
        assert!(v["createdAt"].as_i64().unwrap() > 1_600_000_000);
    }
}

#[tokio::test]
async fn restoring_saves_the_old_content_as_a_new_version() {
    let app = spawn_app().await;
    app.login(TEACHER).await;
    let id = create(&app, "Original title").await;
    let original = load(&app, id).await["draft"].clone();
    let mut draft = original.clone();
    draft["title"] = json!("Changed title");
    draft["conversationPrompt"] = json!("Something else.");
    assert_eq!(save(&app, id, 1, &draft).await.status(), 200);

    let res = restore(&app, id, 2, 1).await;
    assert_eq!(res.status(), 200);
    assert_eq!(res.json::<i64>().await.unwrap(), 3);
    let now = load(&app, id).await;
    assert_eq!(now["version"], 3);
    assert_eq!(now["draft"], original);
    let list = history(&app, id).await;
    assert_eq!(list[0]["summary"], "Restored version 1");
    assert_eq!(list.len(), 3, "history is never rewritten");
    // Version 2 is still there to go back to.
    assert_eq!(restore(&app, id, 3, 2).await.status(), 200);
    assert_eq!(load(&app, id).await["draft"]["title"], "Changed title");
}

#[tokio::test]
async fn a_restore_from_a_stale_version_is_a_conflict_and_bad_numbers_are_refused() {
    let app = spawn_app().await;
    app.login(TEACHER).await;
    let id = create(&app, "Café").await;
    let mut draft = load(&app, id).await["draft"].clone();
    draft["title"] = json!("Newer");
    assert_eq!(save(&app, id, 1, &draft).await.status(), 200);

    let res = restore(&app, id, 1, 1).await;
    assert_eq!(res.status(), 409);
    let err: ApiError = res.json().await.unwrap();
    assert!(err.to_string().contains("changed elsewhere"), "{err}");

    let res = restore(&app, id, 2, 0).await;
    assert_eq!(res.status(), 422);
    let err: ApiError = res.json().await.unwrap();
    assert_eq!(err.field(), Some("restore"));
    assert!(err.to_string().contains("version number"), "{err}");

    assert_eq!(restore(&app, id, 2, 9).await.status(), 404);
    assert_eq!(load(&app, id).await["version"], 2);
}

#[tokio::test]
async fn another_teachers_history_cannot_be_read_restored_or_duplicated() {
    let app = spawn_app().await;
    app.login(TEACHER).await;
    let id = create(&app, "Mine").await;
    let other = app.other_teacher().await;
    let ids = [("id", id.to_string())];
    let form: Vec<(&str, &str)> = ids.iter().map(|(k, v)| (*k, v.as_str())).collect();
    let res = app.rpc_with(&other, "lesson_history", &form).await;
    assert_eq!(res.status(), 404);
    let res = app.rpc_with(&other, "duplicate_lesson", &form).await;
    assert_eq!(res.status(), 404);
    let res = app
        .rpc_with(
            &other,
            "restore_lesson",
            &[("id", &id.to_string()), ("version", "1"), ("restore", "1")],
        )
        .await;
    assert_eq!(res.status(), 404);
    assert_eq!(
        app.rpc("list_lessons", &[])
            .await
            .json::<Vec<Value>>()
            .await
            .unwrap()
            .len(),
        1
    );
}

#[tokio::test]
async fn duplicating_copies_the_saved_content_into_a_new_lesson() {
    let app = spawn_app().await;
    app.login(TEACHER).await;
    let id = create(&app, "Café").await;
    let mut draft = load(&app, id).await["draft"].clone();
    draft["tasks"] = json!([{"id": "greet", "text": "Greet"}]);
    draft["toolConfiguration"]["globalInstructions"] = json!("Be brief.");
    assert_eq!(save(&app, id, 1, &draft).await.status(), 200);

    let res = app
        .rpc("duplicate_lesson", &[("id", &id.to_string())])
        .await;
    assert_eq!(res.status(), 200);
    let copy_id: i64 = res.json().await.unwrap();
    assert_ne!(copy_id, id);
    let copy = load(&app, copy_id).await;
    assert_eq!(copy["version"], 1);
    assert_eq!(copy["draft"]["title"], "Copy of Café");
    let mut expected = draft.clone();
    expected["title"] = json!("Copy of Café");
    assert_eq!(copy["draft"], expected);
    let list = history(&app, copy_id).await;
    assert_eq!(list.len(), 1);
    assert!(list[0]["summary"]
        .as_str()
        .unwrap()
        .starts_with("Duplicated from “Café”"));
    // The original is untouched.
    assert_eq!(load(&app, id).await["draft"], draft);
    let res = app.rpc("duplicate_lesson", &[("id", "999")]).await;
    assert_eq!(res.status(), 404);
}

#[tokio::test]
async fn a_legacy_lessons_history_shows_its_current_content() {
    let app = spawn_app().await;
    switchboard::server::seed::seed_demo_lessons(&app.state)
        .await
        .unwrap();
    app.login(TEACHER).await;
    let listed: Vec<Value> = app.rpc("list_lessons", &[]).await.json().await.unwrap();
    let legacy = listed
        .iter()
        .find(|l| l["title"] == "Free conversation: weekend plans")
        .unwrap()["id"]
        .as_i64()
        .unwrap();
    let list = history(&app, legacy).await;
    assert_eq!(list.len(), 1);
    assert_eq!(list[0]["version"], 1);
    let draft = load(&app, legacy).await["draft"].clone();
    let mut edited = draft.clone();
    edited["title"] = json!("Weekend plans");
    assert_eq!(save(&app, legacy, 1, &edited).await.status(), 200);
    assert_eq!(restore(&app, legacy, 2, 1).await.status(), 200);
    assert_eq!(load(&app, legacy).await["draft"], draft);
}
