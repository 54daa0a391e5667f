//! Retention: the sweep purges sessions whose last sign of life is older
//! than `DATA_RETENTION_DAYS` — by the injected clock — with every row of
//! theirs, in batches, keeps newer ones and the students' review items,
//! reports what it removed, runs daily, does nothing when off, and is for
//! admins only.

use crate::helpers::{spawn_app, spawn_app_with, TestApp, ADMIN, TEACHER};
use crate::lesson_sessions::full_lesson;
use crate::sessions::{call, open_with, Session};
use serde_json::{json, Value};
use switchboard::domain::api_key::Scope;
use switchboard::domain::limits::RETENTION_BATCH_SESSIONS;
use switchboard::server::retention;
use switchboard::server::store::retention::PER_SESSION_TABLES;

const DAY: i64 = 86_400;

/// The id of the account with this e-mail.
pub async fn user_id(app: &TestApp, email: &str) -> i64 {
    sqlx::query_scalar("SELECT id FROM users WHERE email = $1")
        .bind(email)
        .fetch_one(&app.state.db)
        .await
        .unwrap()
}

/// A student record of teacher `teacher` (as opening a session for them
/// would make it).
pub async fn student(app: &TestApp, teacher: i64, name: &str) -> i64 {
    sqlx::query_scalar::<_, i64>(
        "INSERT INTO students (teacher_id, name, created_at) VALUES ($1, $2, $3) RETURNING id",
    )
    .bind(teacher)
    .bind(name)
    .bind(app.state.clock.now())
    .fetch_one(&app.state.db)
    .await
    .unwrap()
}

/// A tutor session of `lesson` for student record `student` (named
/// `name`, found by that name), with a logged error (a call and an
/// outcome) in the student's words `said` and the review item it makes.
pub async fn session_for(
    app: &TestApp,
    key: &str,
    lesson: i64,
    student: i64,
    name: &str,
    said: &str,
) -> Session {
    let s = open_with(app, key, json!({"lessonId": lesson, "student": name})).await;
    let record: Option<i64> =
        sqlx::query_scalar("SELECT student_id FROM agent_sessions WHERE id = $1")
            .bind(&s.id)
            .fetch_one(&app.state.db)
            .await
            .unwrap();
    assert_eq!(
        record,
        Some(student),
        "the session runs for {name}'s record"
    );
    let (status, logged) = call(
        app,
        &s,
        "mark_for_review",
        json!({"errorType": "grammar", "studentSaid": said, "correctForm": "tengo hambre", "severity": 3}),
    )
    .await;
    assert_eq!(
        (status, &logged["allowed"]),
        (200, &json!(true)),
        "{logged}"
    );
    s
}

/// Gives session `s` a row in every other per-session table: plugin tools
/// and a join code (exchanged for a plugin token) through the API, a todo list, a todo and a dispute
/// case (the banking demo's) in the store.
pub async fn fill_every_table(app: &TestApp, s: &Session) {
    let registration = json!({
        "pluginType": "codap", "pluginVersion": "2.1.0",
        "capabilities": [{"type": "data_analysis", "level": "basic", "resources": ["tables"], "permissions": ["read"]}],
        "availableTools": [{"name": "addRow", "description": "Adds a row.", "parameters": {"type": "object", "properties": {}}}],
        "environment": {"version": "3.0", "features": [], "limitations": [], "contextInfo": {}}
    });
    let mut answers = Vec::new();
    for (path, body) in [("register-tools", Some(registration)), ("join-codes", None)] {
        let mut req = app
            .client
            .post(app.url(&format!("/api/sessions/{}/{path}", s.id)))
            .bearer_auth(&s.token);
        if let Some(body) = body {
            req = req.json(&body);
        }
        let res = req.send().await.unwrap();
        assert_eq!(res.status(), 201, "{path}");
        answers.push(res.json::<Value>().await.unwrap());
    }
    // The code exchanged for a plugin token of its own.
    let res = app
        .client
        .post(app.url("/api/plugins/join"))
        .json(&json!({"code": answers[1]["code"]}))
        .send()
        .await
        .unwrap();
    assert!(res.status().is_success(), "{}", res.status());
    let db = &app.state.db;
    let list = sqlx::query_scalar::<_, i64>("INSERT INTO todo_lists (session_id, name, name_key, created_at) VALUES ($1, 'Inbox', 'inbox', 0) RETURNING id")
        .bind(&s.id)
        .fetch_one(db)
        .await
        .unwrap();
    for sql in [
        "INSERT INTO todo_sessions (session_id, active_list, last_number) VALUES ($1, $2, 1)",
        "INSERT INTO todos (session_id, number, list_id, text, created_at, updated_at) VALUES ($1, 1, $2, 'Revise', 0, 0)",
        "INSERT INTO session_plugin_tool_uses (session_id, name, count) VALUES ($1, 'addRow', $2)",
        "INSERT INTO dispute_cases (session_id, account_number, transaction_id, reason, created_at) VALUES ($1, '12345678', 'tx-1001', 'fraud', $2)",
    ] {
        sqlx::query(sql).bind(&s.id).bind(list).execute(db).await.unwrap();
    }
}

/// Rows of `table` belonging to session `id`.
pub async fn rows_of(app: &TestApp, table: &str, id: &str) -> i64 {
    let column = if table == "agent_sessions" {
        "id"
    } else {
        "session_id"
    };
    sqlx::query_scalar(&format!("SELECT COUNT(*) FROM {table} WHERE {column} = $1"))
        .bind(id)
        .fetch_one(&app.state.db)
        .await
        .unwrap()
}

/// Rows of every per-session table that name a session that is gone.
pub async fn orphans(app: &TestApp) -> Vec<(String, i64)> {
    let mut out = Vec::new();
    for table in PER_SESSION_TABLES.iter().chain(&["review_queue"]) {
        let n: i64 = sqlx::query_scalar(&format!(
            "SELECT COUNT(*) FROM {table} WHERE session_id IS NOT NULL
             AND session_id NOT IN (SELECT id FROM agent_sessions)"
        ))
        .fetch_one(&app.state.db)
        .await
        .unwrap();
        if n > 0 {
            out.push(((*table).to_owned(), n));
        }
    }
    out
}

/// `POST /api/retention/sweep` as the signed-in client, from the app's
/// pages.
async fn sweep_now(app: &TestApp) -> (u16, Value) {
    let res = app
        .client
        .post(app.url("/api/retention/sweep"))
        .header("Origin", &app.address)
        .send()
        .await
        .unwrap();
    (
        res.status().as_u16(),
        res.json().await.unwrap_or(Value::Null),
    )
}

#[tokio::test]
async fn the_sweep_purges_sessions_past_the_cutoff_with_every_row_and_keeps_the_rest() {
    let app = spawn_app_with(&[("DATA_RETENTION_DAYS", "30")]).await;
    app.login(TEACHER).await;
    let lesson = full_lesson(&app).await;
    let key = app.api_key().await;
    let ana = student(&app, user_id(&app, TEACHER.0).await, "Ana").await;
    let ended = session_for(&app, &key, lesson, ana, "Ana", "yo soy hambre").await;
    fill_every_table(&app, &ended).await;
    let res = app
        .client
        .post(app.url(&format!("/api/sessions/{}/end", ended.id)))
        .bearer_auth(&ended.token)
        .send()
        .await
        .unwrap();
    assert!(res.status().is_success(), "{}", res.status());
    let left_open = session_for(&app, &key, lesson, ana, "Ana", "yo es cansado").await;

    // Twenty days on, a new session; fifteen more, and the cut-off (30
    // days back) falls between the two.
    app.state.clock.advance(20 * DAY);
    let newer = session_for(&app, &key, lesson, ana, "Ana", "yo tiene frio").await;
    app.state.clock.advance(15 * DAY);
    let mut expected: Vec<(String, i64)> = Vec::new();
    for table in PER_SESSION_TABLES.iter().chain(&["agent_sessions"]) {
        let n = rows_of(&app, table, &ended.id).await + rows_of(&app, table, &left_open.id).await;
        expected.push(((*table).to_owned(), n));
    }
    assert!(
        expected.iter().all(|(_, n)| *n > 0),
        "every table has rows: {expected:?}"
    );
    let newer_calls = rows_of(&app, "tool_calls", &newer.id).await;

    app.login(ADMIN).await;
    let before = app.state.clock.now();
    let (status, answer) = sweep_now(&app).await;
    let after = app.state.clock.now();
    assert_eq!(status, 200, "{answer}");
    let last = &answer["lastSweep"];
    assert_eq!(last["days"], 30);
    assert_eq!(last["startedBy"], "admin");
    // The test clock still ticks with real time: the sweep's own "now" is
    // its `ranAt`, somewhere in the second(s) the request took.
    let ran_at = last["ranAt"].as_i64().expect("ranAt");
    assert!((before..=after).contains(&ran_at), "{answer}");
    assert_eq!(last["cutoff"], ran_at - 30 * DAY, "{answer}");
    // The answer's own cutoff is "now" less the days, read as it answers.
    let cutoff = answer["cutoff"].as_i64().expect("cutoff");
    assert!(
        (ran_at - 30 * DAY..=after - 30 * DAY).contains(&cutoff),
        "{answer}"
    );
    for (table, n) in &expected {
        assert_eq!(last["removed"][table], *n, "{table}: {answer}");
    }
    assert_eq!(last["reviewItemsKept"], 2, "{answer}");

    for s in [&ended, &left_open] {
        for table in PER_SESSION_TABLES.iter().chain(&["agent_sessions"]) {
            assert_eq!(rows_of(&app, table, &s.id).await, 0, "{table} of {}", s.id);
        }
    }
    assert_eq!(orphans(&app).await, vec![]);
    // The newer session stays with its calls; the student and all three
    // review items stay, the purged sessions' cleared.
    assert_eq!(rows_of(&app, "agent_sessions", &newer.id).await, 1);
    assert_eq!(rows_of(&app, "tool_calls", &newer.id).await, newer_calls);
    let items: Vec<(String, Option<String>)> = sqlx::query_as(
        "SELECT student_said, session_id FROM review_queue WHERE student_id = $1 ORDER BY id",
    )
    .bind(ana)
    .fetch_all(&app.state.db)
    .await
    .unwrap();
    assert_eq!(
        items,
        [
            ("yo soy hambre".to_owned(), None),
            ("yo es cansado".to_owned(), None),
            ("yo tiene frio".to_owned(), Some(newer.id.clone())),
        ]
    );
    let status: Value = app
        .client
        .get(app.url("/api/retention"))
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    assert_eq!(status["enabled"], true);
    assert_eq!(status["days"], 30);
    assert_eq!(status["lastSweep"], answer["lastSweep"]);
    assert_eq!(status["nextSweepAt"], last["ranAt"].as_i64().unwrap() + DAY);
}

#[tokio::test]
async fn an_open_session_past_the_cutoff_is_ended_for_its_watchers_before_it_goes() {
    let app = spawn_app_with(&[("DATA_RETENTION_DAYS", "1")]).await;
    let key = app.api_key().await;
    let s = crate::sessions::open(&app, &key, "idv").await;
    let watcher = crate::sessions::subscribe(&app, &s, None).await;
    app.state.clock.advance(2 * DAY);
    let report = retention::sweep_if_due(&app.state).await.unwrap().unwrap();
    assert_eq!(report.sessions(), 1);
    let events = crate::sessions::read_events(watcher, 2).await;
    assert_eq!(
        events.last().map(|(_, e)| e.clone()),
        Some(json!({"type": "ended", "data": {"reason": "retention"}})),
        "{events:?}"
    );
    assert_eq!(rows_of(&app, "agent_sessions", &s.id).await, 0);
}

#[tokio::test]
async fn every_table_naming_a_session_is_purged_with_it() {
    let app = spawn_app().await;
    let sql = if crate::helpers::on_postgres().is_some() {
        "SELECT table_name::text FROM information_schema.columns
         WHERE table_schema = 'public' AND column_name = 'session_id' ORDER BY table_name"
    } else {
        "SELECT m.name FROM sqlite_master m, pragma_table_info(m.name) c
         WHERE m.type = 'table' AND c.name = 'session_id' ORDER BY m.name"
    };
    let tables: Vec<String> = sqlx::query_scalar(sql)
        .fetch_all(&app.state.db)
        .await
        .unwrap();
    // On PostgreSQL, the events relayed between instances: a purged
    // session's go at the next idle sweep (`store::cluster::prune`); and
    // the plugin relay's waiting calls and stream presence, deleted when
    // the session ends (`store::plugin_relay::end_session`), which the
    // sweep does first, and pruned past their deadline or grace.
    let relayed: &[&str] = if crate::helpers::on_postgres().is_some() {
        &["session_events", "plugin_relay_calls", "plugin_streams"]
    } else {
        &[]
    };
    let mut known: Vec<String> = PER_SESSION_TABLES
        .iter()
        .chain(&["review_queue", "student_facts"])
        .chain(relayed)
        .map(|t| (*t).to_owned())
        .collect();
    known.sort();
    assert_eq!(tables, known, "a new per-session table must be purged too");
}

#[tokio::test]
async fn the_sweep_goes_through_every_batch_and_runs_once_a_day() {
    let app = spawn_app_with(&[("DATA_RETENTION_DAYS", "365")]).await;
    let many = RETENTION_BATCH_SESSIONS * 2 + 7;
    let t = app.state.clock.now();
    for i in 0..many {
        sqlx::query(
            "INSERT INTO agent_sessions (id, token_hash, state, created_at, last_activity, ended_at)
             VALUES ($1, $1, '{}', $2, $2, $2)",
        )
        .bind(format!("old{i}"))
        .bind(t)
        .execute(&app.state.db)
        .await
        .unwrap();
    }
    // A year less a day on: not yet.
    app.state.clock.advance(364 * DAY);
    let first = retention::sweep_if_due(&app.state).await.unwrap().unwrap();
    assert_eq!(first.sessions(), 0);
    assert_eq!(
        retention::sweep_if_due(&app.state).await.unwrap(),
        None,
        "not again the same day"
    );
    app.state.clock.advance(DAY - 60);
    assert_eq!(retention::sweep_if_due(&app.state).await.unwrap(), None);
    app.state.clock.advance(61);
    let next = retention::sweep_if_due(&app.state).await.unwrap().unwrap();
    assert_eq!(next.sessions(), many as u64, "every batch, not the first");
    let left: i64 = sqlx::query_scalar("SELECT COUNT(*) FROM agent_sessions")
        .fetch_one(&app.state.db)
        .await
        .unwrap();
    assert_eq!(left, 0);
}

#[tokio::test]
async fn with_retention_off_nothing_is_purged() {
    let app = spawn_app_with(&[("DATA_RETENTION_DAYS", "off")]).await;
    let key = app.api_key().await;
    let s = crate::sessions::open(&app, &key, "idv").await;
    app.state.clock.advance(100 * 365 * DAY);
    assert_eq!(retention::sweep_if_due(&app.state).await.unwrap(), None);
    app.login(ADMIN).await;
    let (status, answer) = sweep_now(&app).await;
    assert_eq!(status, 200, "{answer}");
    assert_eq!(
        answer,
        json!({"enabled": false, "days": null, "cutoff": null, "nextSweepAt": null, "lastSweep": null})
    );
    assert_eq!(rows_of(&app, "agent_sessions", &s.id).await, 1);
}

#[tokio::test]
async fn retention_is_for_admins_by_cookie_or_by_an_admins_key() {
    let app = spawn_app().await;
    let anon = app
        .client
        .get(app.url("/api/retention"))
        .send()
        .await
        .unwrap();
    assert_eq!(anon.status(), 401);
    app.login(TEACHER).await;
    let teacher = app
        .client
        .get(app.url("/api/retention"))
        .send()
        .await
        .unwrap();
    assert_eq!(teacher.status(), 403);
    app.login(ADMIN).await;
    let get = app
        .client
        .get(app.url("/api/retention"))
        .send()
        .await
        .unwrap();
    assert_eq!(get.status(), 200);
    let cross = app
        .client
        .post(app.url("/api/retention/sweep"))
        .send()
        .await
        .unwrap();
    assert_eq!(
        cross.status(),
        403,
        "a cookie's POST must come from the app"
    );

    let store = |scopes: &'static [Scope], by: Option<i64>| {
        let db = app.state.db.clone();
        async move {
            switchboard::server::store::api_keys::create(&db, "sis", scopes, by)
                .await
                .unwrap()
                .0
        }
    };
    let admin_id = user_id(&app, ADMIN.0).await;
    let teacher_id = user_id(&app, TEACHER.0).await;
    let client = crate::helpers::new_client();
    for (key, expected) in [
        (store(&[Scope::Students], Some(admin_id)).await, 200),
        (store(&[Scope::Students], Some(teacher_id)).await, 403),
        (store(&[Scope::Students], None).await, 403),
        (store(&[Scope::Sessions], Some(admin_id)).await, 403),
    ] {
        let res = client
            .post(app.url("/api/retention/sweep"))
            .bearer_auth(&key)
            .send()
            .await
            .unwrap();
        assert_eq!(res.status(), expected);
    }
}
