//! Lessons run as sessions: a tutor session's tools are the lesson's
//! enabled tutor tools, checked like any session's, and its backend gets
//! the lesson's prompt.

use crate::helpers::{spawn_app, TEACHER};
use crate::sessions::{call, open_with, read_events, subscribe, tools_body};
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

/// Saves lesson `id` (at `version`) with `change` made to its draft.
pub(crate) async fn save_with(
    app: &crate::helpers::TestApp,
    id: i64,
    change: impl FnOnce(&mut Value),
) -> reqwest::Response {
    let mut lesson: Value = app
        .rpc("get_lesson", &[("id", &id.to_string())])
        .await
        .json()
        .await
        .unwrap();
    change(&mut lesson["draft"]);
    app.rpc_json(
        "save_lesson",
        &json!({"id": id, "version": lesson["version"], "draft": lesson["draft"]}),
    )
    .await
}

/// Turns tutor tool `tool` on (as the teacher's choice) in a draft.
fn enable(draft: &mut Value, tool: &str) {
    let tools = draft["toolConfiguration"]["tools"].as_array_mut().unwrap();
    match tools.iter_mut().find(|t| t["toolId"] == tool) {
        Some(t) => t["enabled"] = json!(true),
        None => tools
            .push(json!({"toolId": tool, "enabled": true, "triggerCondition": {"type": "always"}})),
    }
}

/// A review lesson with two tasks and two review items (one recorded),
/// every tutor tool on; returns its id.
pub async fn full_lesson(app: &crate::helpers::TestApp) -> i64 {
    let id: i64 = app
        .rpc("create_lesson", &[("title", "Past tense review")])
        .await
        .json()
        .await
        .unwrap();
    let res = save_with(app, id, |d| {
        d["review"] = json!(true);
        d["tasks"] = json!([
            {"id": "weekend", "text": "Say what you did last weekend"},
            {"id": "ill", "text": "Say you were ill"}
        ]);
        d["reviewItems"] = json!([
            {"id": "fui", "text": "Ayer fui al mercado", "audio": "recordings/fui.webm"},
            {"id": "comi", "text": "Comí paella"}
        ]);
        for tool in TUTOR_TOOLS {
            enable(d, tool.id);
        }
    })
    .await;
    assert_eq!(res.status(), 200, "{}", res.text().await.unwrap());
    id
}

#[tokio::test]
async fn a_tutor_session_stores_what_its_tools_record_and_refuses_unknown_ids() {
    let app = spawn_app().await;
    app.login(TEACHER).await;
    let lesson = full_lesson(&app).await;
    let key = app.api_key().await;
    let s = open_with(&app, &key, json!({"lessonId": lesson, "student": "Ana"})).await;
    let tools = tools_body(&app, &s, "openai").await;
    let prompt = tools["systemPrompt"].as_str().unwrap();
    assert!(
        prompt.contains("- fui: Ayer fui al mercado (recording)"),
        "{prompt}"
    );
    assert!(
        prompt.contains("- weekend: Say what you did last weekend"),
        "{prompt}"
    );

    let (status, logged) = call(
        &app,
        &s,
        "mark_for_review",
        json!({"errorType": "grammar", "studentSaid": "yo soy hambre", "correctForm": "tengo hambre", "severity": 5}),
    )
    .await;
    assert_eq!(
        (status, &logged["allowed"]),
        (200, &json!(true)),
        "{logged}"
    );
    assert_eq!(logged["status"], "done", "Switchboard ran it: {logged}");
    assert_eq!(logged["result"]["errorsLogged"], 1);

    let (_, unknown) = call(&app, &s, "mark_task_complete", json!({"taskId": "pay"})).await;
    assert_eq!(unknown["allowed"], false);
    assert_eq!(
        unknown["reason"],
        "there is no task `pay` in this lesson; task ids: weekend, ill"
    );
    let (_, done) = call(
        &app,
        &s,
        "mark_task_complete",
        json!({"taskId": "weekend", "evidence": "Fui al cine"}),
    )
    .await;
    assert_eq!(done["allowed"], true, "{done}");
    assert_eq!(done["result"]["remaining"], "ill");

    let (_, item) = call(&app, &s, "mark_item_mastered", json!({"itemId": "nope"})).await;
    assert_eq!(item["allowed"], false);
    assert!(
        item["reason"]
            .as_str()
            .unwrap()
            .ends_with("item ids: fui, comi"),
        "{item}"
    );
    let (_, item) = call(&app, &s, "mark_item_mastered", json!({"itemId": "comi"})).await;
    assert_eq!(item["allowed"], true, "{item}");
    let (_, audio) = call(
        &app,
        &s,
        "play_student_audio",
        json!({"recordingId": "comi"}),
    )
    .await;
    assert_eq!(audio["allowed"], false);
    assert!(
        audio["reason"]
            .as_str()
            .unwrap()
            .ends_with("items with a recording: fui"),
        "{audio}"
    );
    let (_, audio) = call(
        &app,
        &s,
        "play_student_audio",
        json!({"recordingId": "fui"}),
    )
    .await;
    assert_eq!(audio["result"]["audio"], "recordings/fui.webm", "{audio}");

    let (_, summary) = call(
        &app,
        &s,
        "show_session_summary",
        json!({"summary": "Good progress.", "strengths": ["ordering"], "areasToImprove": ["past tense"], "stars": 4}),
    )
    .await;
    assert_eq!(summary["allowed"], true, "{summary}");

    let kinds: Vec<String> =
        sqlx::query_scalar("SELECT kind FROM lesson_outcomes WHERE session_id = $1 ORDER BY id")
            .bind(&s.id)
            .fetch_all(&app.state.db)
            .await
            .unwrap();
    assert_eq!(kinds, ["error", "task", "mastered", "summary"]);
}

#[tokio::test]
async fn review_items_are_checked_when_a_lesson_is_saved() {
    let app = spawn_app().await;
    app.login(TEACHER).await;
    let id = full_lesson(&app).await;
    let before: Value = app
        .rpc("get_lesson", &[("id", &id.to_string())])
        .await
        .json()
        .await
        .unwrap();
    assert_eq!(
        before["draft"]["reviewItems"][0]["audio"],
        "recordings/fui.webm"
    );
    let res = save_with(&app, id, |d| {
        d["reviewItems"] =
            json!([{"id": "Bad Id", "text": "x"}, {"id": "ok", "text": "y", "audio": "has space"}]);
    })
    .await;
    assert_eq!(res.status(), 422);
    let body: Value = res.json().await.unwrap();
    assert_eq!(body["Invalid"]["field"], "reviewItems[0].id", "{body}");
    let res = save_with(&app, id, |d| {
        d["reviewItems"] = json!([{"id": "ok", "text": "y", "audio": "has space"}]);
    })
    .await;
    let body: Value = res.json().await.unwrap();
    assert_eq!(body["Invalid"]["field"], "reviewItems[0].audio", "{body}");
    let after: Value = app
        .rpc("get_lesson", &[("id", &id.to_string())])
        .await
        .json()
        .await
        .unwrap();
    assert_eq!(after, before, "nothing written");
}

/// `POST /api/sessions/{id}/turns` as the session's backend.
async fn turn(
    app: &crate::helpers::TestApp,
    s: &crate::sessions::Session,
    body: Value,
) -> (u16, Value) {
    let res = app
        .client
        .post(app.url(&format!("/api/sessions/{}/turns", s.id)))
        .bearer_auth(&s.token)
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
async fn turns_get_the_time_nudge_at_the_right_minute_and_keyword_nudges_once() {
    let app = spawn_app().await;
    app.login(TEACHER).await;
    let lesson = full_lesson(&app).await;
    // Ten minutes; the summary when 2 remain; the profile on "football".
    let res = save_with(&app, lesson, |d| {
        d["durationMinutes"] = json!(10);
        for t in d["toolConfiguration"]["tools"].as_array_mut().unwrap() {
            if t["toolId"] == "show_session_summary" {
                t["triggerCondition"] = json!({"type": "time_remaining", "minutesRemaining": 2});
            }
            if t["toolId"] == "update_user_profile" {
                t["triggerCondition"] = json!({"type": "keyword", "keywords": ["football"]});
            }
        }
    })
    .await;
    assert_eq!(res.status(), 200, "{}", res.text().await.unwrap());
    let key = app.api_key().await;
    let s = open_with(&app, &key, json!({"lessonId": lesson})).await;

    let (status, first) = turn(&app, &s, json!({"role": "tutor", "text": "¡Hola!"})).await;
    assert_eq!(status, 200, "{first}");
    assert_eq!(first["nudges"], json!([]));
    assert_eq!(first["tutorTurns"], 1);
    let remaining = first["remainingSeconds"].as_i64().unwrap();
    assert!((590..=600).contains(&remaining), "{first}");

    let (_, kw) = turn(
        &app,
        &s,
        json!({"role": "student", "text": "Me gusta el football"}),
    )
    .await;
    let nudges = kw["nudges"].as_array().unwrap();
    assert_eq!(nudges.len(), 1, "{kw}");
    assert_eq!(nudges[0]["tool"], "update_user_profile");
    assert_eq!(
        nudges[0]["text"],
        "The student mentioned football: call `update_user_profile` now."
    );
    let (_, again) = turn(&app, &s, json!({"role": "student", "text": "football!"})).await;
    assert_eq!(again["nudges"], json!([]), "once per keyword");

    app.state.clock.advance(7 * 60 + 30);
    let (_, early) = turn(&app, &s, json!({"role": "student"})).await;
    assert_eq!(early["nudges"], json!([]), "2:30 left: not yet {early}");
    app.state.clock.advance(40);
    let (_, due) = turn(&app, &s, json!({"role": "tutor"})).await;
    assert_eq!(
        due["nudges"][0]["text"], "About 2 minutes remain: call `show_session_summary` now.",
        "{due}"
    );
    assert_eq!(due["studentTurns"], 3);
    assert_eq!(due["tutorTurns"], 2);
    let (_, later) = turn(&app, &s, json!({"role": "tutor"})).await;
    assert_eq!(later["nudges"], json!([]), "fires once");

    // A new watcher learns the turns and nudges from the snapshot.
    let events = read_events(subscribe(&app, &s, None).await, 1).await;
    let snapshot = &events[0].1;
    assert_eq!(snapshot["type"], "snapshot");
    assert_eq!(snapshot["data"]["turns"]["student"], 3, "{snapshot}");
    assert_eq!(
        snapshot["data"]["turns"]["nudges"]
            .as_array()
            .unwrap()
            .len(),
        2
    );
    assert_eq!(snapshot["data"]["plannedMinutes"], 10);
}

#[tokio::test]
async fn turn_reports_are_checked_and_scoped_to_the_session() {
    let app = spawn_app().await;
    app.login(TEACHER).await;
    let lesson = full_lesson(&app).await;
    let key = app.api_key().await;
    let s = open_with(&app, &key, json!({"lessonId": lesson})).await;
    let other = open_with(&app, &key, json!({"lessonId": lesson})).await;
    let (status, body) = turn(&app, &s, json!({"role": "teacher"})).await;
    assert_eq!(status, 422);
    assert_eq!(body["Invalid"]["field"], "role");
    let (status, body) = turn(
        &app,
        &s,
        json!({"role": "student", "text": "x".repeat(16 * 1024 + 1)}),
    )
    .await;
    assert_eq!(status, 413, "{body}");
    assert_eq!(body["TooLarge"]["field"], "text");
    let (status, _) = turn(&app, &s, json!({"role": "student", "extra": 1})).await;
    assert_eq!(status, 422);
    let res = app
        .client
        .post(app.url(&format!("/api/sessions/{}/turns", s.id)))
        .bearer_auth(&other.token)
        .json(&json!({"role": "student"}))
        .send()
        .await
        .unwrap();
    assert_eq!(res.status(), 403);
    let turns: Option<String> =
        sqlx::query_scalar("SELECT turns FROM agent_sessions WHERE id = $1")
            .bind(&s.id)
            .fetch_one(&app.state.db)
            .await
            .unwrap();
    assert_eq!(turns, None, "nothing counted");
    // A workflow session counts turns too, with no triggers to fire.
    let w = crate::sessions::open(&app, &key, "idv").await;
    let (status, body) = turn(&app, &w, json!({"role": "student", "text": "hello"})).await;
    assert_eq!((status, &body["nudges"]), (200, &json!([])), "{body}");
    assert_eq!(body["remainingSeconds"], Value::Null);
    let res = app
        .client
        .post(app.url(&format!("/api/sessions/{}/end", s.id)))
        .bearer_auth(&s.token)
        .send()
        .await
        .unwrap();
    assert_eq!(res.status(), 204);
    let (status, _) = turn(&app, &s, json!({"role": "student"})).await;
    assert_eq!(status, 409);
}

#[tokio::test]
async fn the_teacher_sees_each_run_with_its_errors_tasks_and_summary_and_can_download_it() {
    let app = spawn_app().await;
    app.login(TEACHER).await;
    let lesson = full_lesson(&app).await;
    let key = app.api_key().await;
    let s = open_with(&app, &key, json!({"lessonId": lesson, "student": "Ana"})).await;
    for (tool, args) in [
        (
            "mark_for_review",
            json!({"errorType": "grammar", "studentSaid": "=yo soy hambre", "correctForm": "tengo hambre", "severity": 5}),
        ),
        (
            "mark_task_complete",
            json!({"taskId": "ill", "evidence": "Estuve enfermo"}),
        ),
        (
            "update_user_profile",
            json!({"category": "interest", "value": "football"}),
        ),
        ("mark_item_mastered", json!({"itemId": "fui"})),
        (
            "show_session_summary",
            json!({"summary": "Good progress.", "strengths": ["ordering"], "areasToImprove": ["past tense"], "stars": 4}),
        ),
    ] {
        let (_, body) = call(&app, &s, tool, args).await;
        assert_eq!(body["allowed"], true, "{tool}: {body}");
    }
    let quiet = open_with(&app, &key, json!({"lessonId": lesson})).await;

    let page: Value = app
        .rpc("lesson_runs", &[("id", &lesson.to_string())])
        .await
        .json()
        .await
        .unwrap();
    let runs = page["runs"].as_array().unwrap();
    assert_eq!(runs.len(), 2, "{page}");
    let run = runs
        .iter()
        .find(|r| r["sessionId"] == s.id.as_str())
        .unwrap();
    assert_eq!(run["student"], "Ana");
    assert_eq!(run["errors"][0]["correctForm"], "tengo hambre");
    let tasks: Vec<(String, bool)> = run["tasks"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| {
            (
                t["task"]["id"].as_str().unwrap().to_owned(),
                t["done"].as_bool().unwrap(),
            )
        })
        .collect();
    assert_eq!(
        tasks,
        [("weekend".to_owned(), false), ("ill".to_owned(), true)]
    );
    assert_eq!(run["facts"][0]["value"], "football");
    assert_eq!(run["mastered"][0]["text"], "Ayer fui al mercado");
    assert_eq!(run["summary"]["stars"], 4);
    let other = runs
        .iter()
        .find(|r| r["sessionId"] == quiet.id.as_str())
        .unwrap();
    assert_eq!(other["errors"], json!([]));
    assert_eq!(other["summary"], Value::Null);

    let csv = app
        .client
        .get(app.url(&format!("/lessons/{lesson}/sessions.csv")))
        .send()
        .await
        .unwrap();
    assert_eq!(csv.status(), 200);
    assert!(csv.headers()["content-type"]
        .to_str()
        .unwrap()
        .starts_with("text/csv"));
    assert!(csv.headers()["content-disposition"]
        .to_str()
        .unwrap()
        .contains(&format!("lesson-{lesson}-sessions.csv")));
    let text = csv.text().await.unwrap();
    assert_eq!(text.lines().count(), 3, "{text}");
    let row = text.lines().find(|l| l.contains(&s.id)).unwrap();
    assert!(
        row.contains("'=yo soy hambre → tengo hambre (grammar, severity 5)"),
        "no formula: {row}"
    );
    assert!(
        row.contains(",1/2,✗ Say what you did last weekend; ✓ Say you were ill,"),
        "{row}"
    );
    assert!(
        row.ends_with(",Good progress.,ordering,past tense,4,"),
        "{row}"
    );

    // Another teacher sees neither; no one signed out does.
    let otto = app.other_teacher().await;
    let res = app
        .rpc_with(&otto, "lesson_runs", &[("id", &lesson.to_string())])
        .await;
    assert_eq!(res.status(), 404);
    let res = otto
        .get(app.url(&format!("/lessons/{lesson}/sessions.csv")))
        .send()
        .await
        .unwrap();
    assert_eq!(res.status(), 404);
    let res = reqwest::Client::builder()
        .redirect(reqwest::redirect::Policy::none())
        .build()
        .unwrap()
        .get(app.url(&format!("/lessons/{lesson}/sessions.csv")))
        .send()
        .await
        .unwrap();
    assert!(res.status().is_redirection(), "{}", res.status());
    assert!(res.headers()["location"]
        .to_str()
        .unwrap()
        .starts_with("/login"));
    let res = app
        .client
        .get(app.url("/lessons/abc/sessions.csv"))
        .send()
        .await
        .unwrap();
    assert_eq!(res.status(), 422);
}

#[tokio::test]
async fn the_session_list_names_a_tutor_session_by_its_lessons_title() {
    let app = spawn_app().await;
    app.login(TEACHER).await;
    let lesson_id: i64 = app
        .rpc("create_lesson", &[("title", "Ordering paella")])
        .await
        .json()
        .await
        .unwrap();
    let key = app.api_key().await;
    let tutor = open_with(&app, &key, json!({"lessonId": lesson_id})).await;
    let banking = open_with(&app, &key, json!({"workflowId": "idv"})).await;
    let listed = app.get_json(&key, "/api/sessions").await;
    let entry = |id: &str| {
        listed
            .as_array()
            .unwrap()
            .iter()
            .find(|s| s["id"] == id)
            .cloned()
            .unwrap_or_else(|| panic!("{id} not in {listed}"))
    };
    assert_eq!(entry(&tutor.id)["lessonTitle"], "Ordering paella");
    assert_eq!(
        entry(&tutor.id)["state"]["currentWorkflow"],
        format!("lesson-{lesson_id}")
    );
    assert!(entry(&banking.id).get("lessonTitle").is_none(), "{listed}");
}
