//! Students and their review queue: a logged error becomes an item of the
//! student's queue, a review lesson opened for them offers it in its
//! prompt, `mark_item_mastered` moves it by the Leitner rule; profile facts
//! reach opted-in lessons; a teacher sees only their own students.

use crate::helpers::{TestApp, ADMIN, TEACHER};
use crate::lesson_sessions::{full_lesson, save_with};
use crate::sessions::{call, open_with, tools_body, Session};
use reqwest::Client;
use serde_json::{json, Value};
use switchboard::domain::api_key::Scope;
use switchboard::domain::review_queue::DAY_SECS;

/// An API key with every scope, made by the account `email`.
async fn key_of(app: &TestApp, email: &str) -> String {
    let id: i64 = sqlx::query_scalar("SELECT id FROM users WHERE email = $1")
        .bind(email)
        .fetch_one(&app.state.db)
        .await
        .unwrap();
    switchboard::server::store::api_keys::create(&app.state.db, "school", &Scope::ALL, Some(id))
        .await
        .unwrap()
        .0
}

async fn get(app: &TestApp, key: &str, path: &str) -> (u16, Value) {
    let res = app
        .client
        .get(app.url(path))
        .bearer_auth(key)
        .send()
        .await
        .unwrap();
    (
        res.status().as_u16(),
        res.json().await.unwrap_or(Value::Null),
    )
}

async fn post(app: &TestApp, key: &str, path: &str, body: Value) -> (u16, Value) {
    let res = app
        .client
        .post(app.url(path))
        .bearer_auth(key)
        .json(&body)
        .send()
        .await
        .unwrap();
    (
        res.status().as_u16(),
        res.json().await.unwrap_or(Value::Null),
    )
}

async fn end(app: &TestApp, s: &Session) {
    let res = app
        .client
        .post(app.url(&format!("/api/sessions/{}/end", s.id)))
        .bearer_auth(&s.token)
        .send()
        .await
        .unwrap();
    assert_eq!(res.status(), 204);
}

async fn prompt(app: &TestApp, s: &Session) -> String {
    tools_body(app, s, "openai").await["systemPrompt"]
        .as_str()
        .unwrap()
        .to_owned()
}

/// A lesson (not a review lesson) with Profile Learning on, and
/// `useProfileFacts` as given.
async fn plain_lesson(app: &TestApp, title: &str, use_facts: bool) -> i64 {
    let id: i64 = app
        .rpc("create_lesson", &[("title", title)])
        .await
        .json()
        .await
        .unwrap();
    let res = save_with(app, id, |d| {
        d["conversationPrompt"] = json!("You are a friendly tutor.");
        d["toolConfiguration"]["useProfileFacts"] = json!(use_facts);
    })
    .await;
    assert_eq!(res.status(), 200, "{}", res.text().await.unwrap());
    id
}

#[tokio::test]
async fn a_logged_error_comes_back_in_the_students_review_lesson_and_moves_by_the_leitner_rule() {
    let app = crate::helpers::spawn_app().await;
    app.login(TEACHER).await;
    let review = full_lesson(&app).await;
    let key = key_of(&app, TEACHER.0).await;

    let s1 = open_with(&app, &key, json!({"lessonId": review, "student": "Ana"})).await;
    let (_, logged) = call(
        &app,
        &s1,
        "mark_for_review",
        json!({"errorType": "grammar", "studentSaid": "yo soy hambre", "correctForm": "tengo hambre", "severity": 5, "explanation": "hunger takes tener"}),
    )
    .await;
    assert_eq!(logged["allowed"], true, "{logged}");
    assert_eq!(logged["result"]["queued"], true, "{logged}");
    assert_eq!(logged["result"]["box"], 1);
    end(&app, &s1).await;

    let (status, list) = get(&app, &key, "/api/students").await;
    assert_eq!(status, 200, "{list}");
    let ana = &list["students"][0];
    assert_eq!(
        (&ana["name"], &ana["due"], &ana["runs"]),
        (&json!("Ana"), &json!(1), &json!(1)),
        "{list}"
    );
    let student = ana["id"].as_i64().unwrap();
    let (_, view) = get(&app, &key, &format!("/api/students/{student}")).await;
    let item = &view["queue"][0];
    assert_eq!(item["studentSaid"], "yo soy hambre", "{view}");
    assert_eq!(item["correctForm"], "tengo hambre");
    assert_eq!(item["box"], 1);
    assert_eq!(view["runs"][0]["sessionId"], s1.id.as_str());
    assert_eq!(view["errors"][0]["studentSaid"], "yo soy hambre");
    let q = format!("q-{}", item["id"]);

    // The next review lesson for Ana offers it, beside the lesson's items.
    let s2 = open_with(
        &app,
        &key,
        json!({"lessonId": review, "studentId": student}),
    )
    .await;
    let text = prompt(&app, &s2).await;
    assert!(
        text.contains(&format!(
            "- {q} (grammar): they said \"yo soy hambre\"; correct: \"tengo hambre\""
        )),
        "{text}"
    );
    assert!(text.contains("- fui: Ayer fui al mercado"), "{text}");
    let (_, refused) = call(
        &app,
        &s2,
        "mark_item_mastered",
        json!({"itemId": "q-999999"}),
    )
    .await;
    assert_eq!(refused["allowed"], false);
    assert!(
        refused["reason"]
            .as_str()
            .unwrap()
            .ends_with(&format!("item ids: fui, comi, {q}")),
        "{refused}"
    );
    let now = app.state.clock.now();
    let (_, moved) = call(&app, &s2, "mark_item_mastered", json!({"itemId": q})).await;
    assert_eq!(moved["allowed"], true, "{moved}");
    assert_eq!(moved["result"]["box"], 2, "{moved}");
    let due = moved["result"]["dueAt"].as_i64().unwrap();
    assert!((due - now - 2 * DAY_SECS).abs() <= 2, "{moved}");
    end(&app, &s2).await;
    let (_, view) = get(&app, &key, &format!("/api/students/{student}")).await;
    assert_eq!(
        (&view["queue"][0]["box"], &view["queue"][0]["dueAt"]),
        (&json!(2), &json!(due)),
        "mastered items keep their box when the run ends: {view}"
    );

    // Not due until two days later.
    let s3 = open_with(&app, &key, json!({"lessonId": review, "student": "Ana"})).await;
    assert!(!prompt(&app, &s3).await.contains(&q));
    app.state.clock.advance(2 * DAY_SECS);
    let s4 = open_with(&app, &key, json!({"lessonId": review, "student": "Ana"})).await;
    assert!(
        prompt(&app, &s4).await.contains(&q),
        "due again after box 2's interval"
    );
    // Offered and not mastered: back to box 1 when the run ends.
    end(&app, &s4).await;
    let (_, view) = get(&app, &key, &format!("/api/students/{student}")).await;
    let item = &view["queue"][0];
    assert_eq!(item["box"], 1, "{view}");
    // Due a day after the run ended (its review time): measured from that,
    // not from the clock now, which may have ticked a second since.
    let reviewed = item["lastReviewedAt"].as_i64().unwrap();
    assert_eq!(
        item["dueAt"].as_i64().unwrap() - reviewed,
        DAY_SECS,
        "{view}"
    );
    assert!(
        (0..=5).contains(&(app.state.clock.now() - reviewed)),
        "reviewed when the run ended: {view}"
    );
    let (_, list) = get(&app, &key, "/api/students").await;
    assert_eq!(
        list["students"].as_array().unwrap().len(),
        1,
        "one record for Ana: {list}"
    );
}

#[tokio::test]
async fn an_item_leaves_the_queue_after_the_last_box() {
    let app = crate::helpers::spawn_app().await;
    app.login(TEACHER).await;
    let review = full_lesson(&app).await;
    let key = key_of(&app, TEACHER.0).await;
    let s = open_with(&app, &key, json!({"lessonId": review, "student": "Bea"})).await;
    call(
        &app,
        &s,
        "mark_for_review",
        json!({"errorType": "vocabulary", "studentSaid": "embarazada", "correctForm": "avergonzada", "severity": 6}),
    )
    .await;
    for expected_box in 2..=5 {
        let s = open_with(&app, &key, json!({"lessonId": review, "student": "Bea"})).await;
        let (_, moved) = call(&app, &s, "mark_item_mastered", json!({"itemId": "q-1"})).await;
        assert_eq!(moved["result"]["box"], expected_box, "{moved}");
        app.state.clock.advance(16 * DAY_SECS);
    }
    let s = open_with(&app, &key, json!({"lessonId": review, "student": "Bea"})).await;
    let (_, out) = call(&app, &s, "mark_item_mastered", json!({"itemId": "q-1"})).await;
    assert_eq!(out["result"]["leftQueue"], true, "{out}");
    let (_, list) = get(&app, &key, "/api/students").await;
    assert_eq!(list["students"][0]["queued"], 0, "{list}");
    let student = list["students"][0]["id"].as_i64().unwrap();
    let (_, view) = get(&app, &key, &format!("/api/students/{student}")).await;
    assert_eq!(view["graduated"][0]["studentSaid"], "embarazada", "{view}");
    let s = open_with(&app, &key, json!({"lessonId": review, "student": "Bea"})).await;
    assert!(!prompt(&app, &s).await.contains("q-1"));
}

#[tokio::test]
async fn another_teachers_student_is_refused_and_an_admin_sees_every_student() {
    let app = crate::helpers::spawn_app().await;
    app.login(TEACHER).await;
    let review = full_lesson(&app).await;
    let teacher_key = key_of(&app, TEACHER.0).await;
    let other: Client = app.other_teacher().await;
    let res = other
        .post(app.url("/api/students"))
        .header("Origin", &app.address)
        .json(&json!({"code": "7B-0412"}))
        .send()
        .await
        .unwrap();
    assert_eq!(res.status(), 201);
    let theirs: Value = res.json().await.unwrap();
    assert_eq!(theirs["pseudonymous"], true);
    let id = theirs["id"].as_i64().unwrap();

    let res = app
        .client
        .post(app.url("/api/sessions"))
        .bearer_auth(&teacher_key)
        .json(&json!({"lessonId": review, "studentId": id}))
        .send()
        .await
        .unwrap();
    assert_eq!(res.status(), 422);
    let body: Value = res.json().await.unwrap();
    assert_eq!(body["Invalid"]["field"], "studentId", "{body}");
    let (status, _) = get(&app, &teacher_key, &format!("/api/students/{id}")).await;
    assert_eq!(status, 404, "not one of theirs");
    let (_, mine) = get(&app, &teacher_key, "/api/students").await;
    assert_eq!(mine["students"], json!([]));
    let res = app
        .client
        .get(app.url(&format!("/api/students/{id}")))
        .send()
        .await
        .unwrap();
    assert_eq!(res.status(), 404, "nor through the teacher's sign-in");
    let res = other
        .get(app.url(&format!("/api/students/{id}")))
        .send()
        .await
        .unwrap();
    assert_eq!(res.status(), 200, "their own teacher sees them");

    let admin_key = key_of(&app, ADMIN.0).await;
    let (status, view) = get(&app, &admin_key, &format!("/api/students/{id}")).await;
    assert_eq!(
        (status, &view["student"]["name"]),
        (200, &json!("7B-0412")),
        "{view}"
    );
    let (_, all) = get(&app, &admin_key, "/api/students").await;
    assert_eq!(all["students"].as_array().unwrap().len(), 1);
}

#[tokio::test]
async fn facts_reach_the_students_next_opted_in_lesson_and_no_other() {
    let app = crate::helpers::spawn_app().await;
    app.login(TEACHER).await;
    let key = key_of(&app, TEACHER.0).await;
    let first = plain_lesson(&app, "Introductions", false).await;
    let s = open_with(&app, &key, json!({"lessonId": first, "student": "Ana"})).await;
    let (_, saved) = call(
        &app,
        &s,
        "update_user_profile",
        json!({"category": "interest", "value": "football", "confidence": 0.9}),
    )
    .await;
    assert_eq!(saved["result"]["saved"], "studentProfile", "{saved}");
    let (_, summary) = call(
        &app,
        &s,
        "show_session_summary",
        json!({"summary": "Good", "strengths": [], "areasToImprove": []}),
    )
    .await;
    assert!(summary["result"].get("shown").is_none(), "{summary}");

    let opted = plain_lesson(&app, "Weekend plans", true).await;
    let s = open_with(&app, &key, json!({"lessonId": opted, "student": "Ana"})).await;
    let text = prompt(&app, &s).await;
    assert!(text.contains("## About This Student"), "{text}");
    assert!(text.contains("- interest: football"), "{text}");
    let s = open_with(&app, &key, json!({"lessonId": first, "student": "Ana"})).await;
    assert!(
        !prompt(&app, &s).await.contains("football"),
        "a lesson that does not opt in"
    );
    let s = open_with(&app, &key, json!({"lessonId": opted, "student": "Ben"})).await;
    assert!(
        !prompt(&app, &s).await.contains("football"),
        "another student"
    );
    let s = open_with(&app, &key, json!({"lessonId": opted})).await;
    let (_, alone) = call(
        &app,
        &s,
        "update_user_profile",
        json!({"category": "goal", "value": "travel"}),
    )
    .await;
    assert_eq!(
        alone["result"]["saved"], "thisRunOnly",
        "no student record: {alone}"
    );
    let (_, error) = call(
        &app,
        &s,
        "mark_for_review",
        json!({"errorType": "grammar", "studentSaid": "a", "correctForm": "b", "severity": 1}),
    )
    .await;
    assert_eq!(error["result"]["queued"], false, "{error}");
}

#[tokio::test]
async fn bad_student_input_is_refused_naming_the_field_and_nothing_is_stored() {
    let app = crate::helpers::spawn_app().await;
    app.login(TEACHER).await;
    let review = full_lesson(&app).await;
    let key = key_of(&app, TEACHER.0).await;
    let long = "x".repeat(switchboard::domain::limits::STUDENT_MAX_CHARS + 1);
    let long_code = "x".repeat(switchboard::domain::student::STUDENT_CODE_MAX_CHARS + 1);
    for (body, field) in [
        (json!({}), "name"),
        (json!({"name": "Ana", "code": "A1"}), "name"),
        (json!({"name": "  "}), "name"),
        (json!({"name": long}), "name"),
        (json!({"code": "has space"}), "code"),
        (json!({"code": long_code}), "code"),
    ] {
        let (status, answer) = post(&app, &key, "/api/students", body.clone()).await;
        assert_eq!(
            (status, &answer["Invalid"]["field"]),
            (422, &json!(field)),
            "{body}: {answer}"
        );
    }
    for (body, field) in [
        (
            json!({"lessonId": review, "studentId": 1, "student": "Ana"}),
            "studentId",
        ),
        (json!({"workflowId": "idv", "studentId": 1}), "studentId"),
        (
            json!({"lessonId": review, "studentId": 424242}),
            "studentId",
        ),
        (
            json!({"lessonId": review, "student": "Ana\u{7}"}),
            "student",
        ),
    ] {
        let (status, answer) = post(&app, &key, "/api/sessions", body.clone()).await;
        assert_eq!(
            (status, &answer["Invalid"]["field"]),
            (422, &json!(field)),
            "{body}: {answer}"
        );
    }
    let (status, answer) = get(&app, &key, "/api/students/abc").await;
    assert_eq!((status, &answer["Invalid"]["field"]), (422, &json!("id")));
    let count = |table: &'static str| {
        let db = app.state.db.clone();
        async move {
            sqlx::query_scalar::<_, i64>(&format!("SELECT COUNT(*) FROM {table}"))
                .fetch_one(&db)
                .await
                .unwrap()
        }
    };
    assert_eq!(
        (count("students").await, count("agent_sessions").await),
        (0, 0)
    );

    let (status, _) = post(&app, &key, "/api/students", json!({"name": "Ana"})).await;
    assert_eq!(status, 201);
    let (status, _) = post(&app, &key, "/api/students", json!({"name": "Ana"})).await;
    assert_eq!(status, 409, "one record per name");
}

#[tokio::test]
async fn student_routes_need_a_sign_in_or_a_key_with_the_students_scope() {
    let app = crate::helpers::spawn_app().await;
    let res = app
        .client
        .get(app.url("/api/students"))
        .send()
        .await
        .unwrap();
    assert_eq!(res.status(), 401);
    let sessions_only = app.api_key_with(&[Scope::Sessions]).await;
    let (status, body) = get(&app, &sessions_only, "/api/students").await;
    assert_eq!(status, 403, "{body}");
    assert_eq!(body["MissingScope"]["scope"], "students", "{body}");
    let nobodys = app.api_key_with(&[Scope::Students]).await;
    let (status, _) = get(&app, &nobodys, "/api/students").await;
    assert_eq!(status, 403, "a key no user made acts for no one");
    app.login(TEACHER).await;
    let res = app
        .client
        .post(app.url("/api/students"))
        .json(&json!({"name": "Ana"}))
        .send()
        .await
        .unwrap();
    assert_eq!(
        res.status(),
        403,
        "a cookie's change must come from the app's pages"
    );
}

#[tokio::test]
async fn the_students_pages_show_a_teachers_own_students_and_their_queue() {
    let app = crate::helpers::spawn_app().await;
    app.login(TEACHER).await;
    let review = full_lesson(&app).await;
    let key = key_of(&app, TEACHER.0).await;
    let s = open_with(&app, &key, json!({"lessonId": review, "student": "Ana"})).await;
    call(
        &app,
        &s,
        "mark_for_review",
        json!({"errorType": "grammar", "studentSaid": "yo soy hambre", "correctForm": "tengo hambre", "severity": 5}),
    )
    .await;
    let list: Value = app.rpc("list_students", &[]).await.json().await.unwrap();
    assert_eq!(list[0]["name"], "Ana", "{list}");
    assert_eq!(list[0]["due"], 1);
    let id = list[0]["id"].as_i64().unwrap().to_string();
    let view: Value = app
        .rpc("get_student", &[("id", &id)])
        .await
        .json()
        .await
        .unwrap();
    assert_eq!(view["queue"][0]["correctForm"], "tengo hambre", "{view}");

    let html = app
        .client
        .get(app.url("/students"))
        .send()
        .await
        .unwrap()
        .text()
        .await
        .unwrap();
    assert!(
        html.contains("href=\"/students\""),
        "the nav links the page"
    );
    assert!(html.contains(&format!("href=\"/students/{id}\"")), "{html}");
    let html = app
        .client
        .get(app.url(&format!("/students/{id}")))
        .send()
        .await
        .unwrap()
        .text()
        .await
        .unwrap();
    assert!(
        html.contains("yo soy hambre") && html.contains("box 1 of 5"),
        "{html}"
    );
    assert!(
        html.contains(&format!("href=\"/sessions/{}\"", s.id)),
        "the run links its timeline"
    );

    let otto = app.other_teacher().await;
    let res = app.rpc_with(&otto, "get_student", &[("id", &id)]).await;
    assert_eq!(res.status(), 404);
    let theirs: Value = app
        .rpc_with(&otto, "list_students", &[])
        .await
        .json()
        .await
        .unwrap();
    assert_eq!(theirs, json!([]));
}
