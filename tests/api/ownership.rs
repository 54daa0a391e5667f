//! Ownership by every door (issue #38): a teacher sees only the sessions
//! of their own lessons, their own trials and their own keys — by the
//! list (REST with a cookie or a key, the server function), the live page,
//! its event stream and calls, the list's event stream, the lesson's runs
//! page and CSV — and another teacher's session answers 404 as an unknown
//! one; an admin (cookie or key) sees every session. API keys belong to
//! the user who made them.

use crate::helpers::{new_client, spawn_app, TestApp, ADMIN, TEACHER};
use crate::lesson_sessions::full_lesson;
use crate::sessions::{call, open, open_with, read_events, Session};
use reqwest::Client;
use serde_json::{json, Value};
use switchboard::domain::api_key::Scope;

/// What teacher 1's student said, recorded in teacher 1's session only.
const SECRET: &str = "yo soy hambre secreto-uno";

/// Two teachers, an admin and their sessions: teacher 1's lesson run with
/// teacher 1's key (`one_s`, for "Ana Uno", who said [`SECRET`]), with the
/// admin's key (`one_by_admin`: teacher 1's by the lesson alone) and as
/// teacher 1's trial; teacher 2's lesson run with teacher 2's key
/// (`two_s`, for "Ben Dos"); and a workflow session of a key whose maker
/// is gone (`orphan_s`).
struct World {
    app: TestApp,
    one: Client,
    two: Client,
    admin: Client,
    lesson_one: i64,
    lesson_two: i64,
    key_one: String,
    key_two: String,
    admin_key: String,
    orphan_key: String,
    one_s: Session,
    one_by_admin: Session,
    one_trial: String,
    two_s: Session,
    orphan_s: Session,
}

impl World {
    async fn new() -> World {
        let app = spawn_app().await;
        app.login(TEACHER).await;
        let one = app.client.clone();
        let two = app.other_teacher().await;
        let admin = app.signed_in(ADMIN).await;
        let both = [Scope::Sessions, Scope::LessonsRead];
        let key_one = app.api_key_of(app.user_id(TEACHER.0).await, &both).await;
        let two_id = app.user_id("other.teacher@example.com").await;
        let key_two = app.api_key_of(two_id, &both).await;
        let admin_key = app
            .api_key_of(app.user_id(ADMIN.0).await, &Scope::ALL)
            .await;
        let orphan_key = app.api_key().await;
        let lesson_one = full_lesson(&app).await;
        let lesson_two: i64 = app
            .rpc_with(&two, "create_lesson", &[("title", "Zweite Stunde")])
            .await
            .json()
            .await
            .unwrap();
        let open_lesson = |key: String, lesson: i64, student: &'static str| {
            let app = &app;
            async move { open_with(app, &key, json!({"lessonId": lesson, "student": student})).await }
        };
        let one_s = open_lesson(key_one.clone(), lesson_one, "Ana Uno").await;
        let (status, said) = call(
            &app,
            &one_s,
            "mark_for_review",
            json!({"errorType": "grammar", "studentSaid": SECRET, "correctForm": "tengo hambre", "severity": 3}),
        )
        .await;
        assert_eq!((status, &said["allowed"]), (200, &json!(true)), "{said}");
        let one_by_admin = open_lesson(admin_key.clone(), lesson_one, "Ana Admin").await;
        let two_s = open_lesson(key_two.clone(), lesson_two, "Ben Dos").await;
        let orphan_s = open(&app, &orphan_key, "idv").await;
        let res = one
            .post(app.url(&format!("/api/lessons/{lesson_one}/trials")))
            .header("Origin", &app.address)
            .json(&json!({"student": "Teacher as Ana"}))
            .send()
            .await
            .unwrap();
        assert_eq!(res.status(), 201);
        let one_trial = res.json::<Value>().await.unwrap()["sessionId"]
            .as_str()
            .unwrap()
            .to_owned();
        World {
            app,
            one,
            two,
            admin,
            lesson_one,
            lesson_two,
            key_one,
            key_two,
            admin_key,
            orphan_key,
            one_s,
            one_by_admin,
            one_trial,
            two_s,
            orphan_s,
        }
    }

    /// Teacher 1's three sessions, sorted.
    fn ones(&self) -> Vec<String> {
        sorted(vec![
            self.one_s.id.clone(),
            self.one_by_admin.id.clone(),
            self.one_trial.clone(),
        ])
    }

    /// Every session, sorted.
    fn all(&self) -> Vec<String> {
        let mut all = self.ones();
        all.extend([self.two_s.id.clone(), self.orphan_s.id.clone()]);
        sorted(all)
    }

    /// `GET path` as `client`, with `key` as its bearer if given.
    async fn get(&self, client: &Client, key: Option<&str>, path: &str) -> reqwest::Response {
        let mut req = client.get(self.app.url(path));
        if let Some(key) = key {
            req = req.bearer_auth(key);
        }
        req.send().await.unwrap()
    }

    /// The ids `GET /api/sessions` lists for `client` (and `key`).
    async fn listed(&self, client: &Client, key: Option<&str>) -> Vec<String> {
        let res = self.get(client, key, "/api/sessions").await;
        assert_eq!(res.status(), 200);
        let list: Vec<Value> = res.json().await.unwrap();
        sorted(
            list.iter()
                .map(|s| s["id"].as_str().unwrap().to_owned())
                .collect(),
        )
    }

    /// The ids the `/sessions` page's server function lists for `client`.
    async fn listed_by_page(&self, client: &Client) -> Vec<String> {
        let res = self.app.rpc_with(client, "list_sessions", &[]).await;
        assert_eq!(res.status(), 200);
        let data: Value = res.json().await.unwrap();
        sorted(
            data["sessions"]
                .as_array()
                .unwrap()
                .iter()
                .map(|s| s["id"].as_str().unwrap().to_owned())
                .collect(),
        )
    }
}

fn sorted(mut ids: Vec<String>) -> Vec<String> {
    ids.sort();
    ids
}

#[tokio::test]
async fn each_teacher_lists_only_their_own_sessions_by_every_list_and_an_admin_lists_all() {
    let w = World::new().await;
    let anonymous = new_client();
    let two = vec![w.two_s.id.clone()];
    assert_eq!(w.listed(&w.two, None).await, two, "teacher 2's cookie");
    assert_eq!(
        w.listed(&anonymous, Some(&w.key_two)).await,
        two,
        "teacher 2's key"
    );
    assert_eq!(w.listed_by_page(&w.two).await, two, "teacher 2's page");

    assert_eq!(w.listed(&w.one, None).await, w.ones(), "teacher 1's cookie");
    assert_eq!(w.listed(&anonymous, Some(&w.key_one)).await, w.ones());
    assert_eq!(w.listed_by_page(&w.one).await, w.ones());

    assert_eq!(
        w.listed(&w.admin, None).await,
        w.all(),
        "the admin's cookie"
    );
    assert_eq!(w.listed(&anonymous, Some(&w.admin_key)).await, w.all());
    assert_eq!(w.listed_by_page(&w.admin).await, w.all());
    // A key whose maker is gone sees what it opened.
    assert_eq!(
        w.listed(&anonymous, Some(&w.orphan_key)).await,
        vec![w.orphan_s.id.clone()]
    );
    // A key needs the sessions scope to list, as before.
    let lessons_only = w.app.api_key_with(&[Scope::LessonsRead]).await;
    let res = w
        .get(&anonymous, Some(&lessons_only), "/api/sessions")
        .await;
    assert_eq!(res.status(), 403);
}

#[tokio::test]
async fn another_teachers_session_is_404_by_its_page_events_and_calls_and_open_to_its_owner_and_admins(
) {
    let w = World::new().await;
    let anonymous = new_client();
    let id = &w.one_s.id;
    let page = |client: &Client| {
        let (w, client) = (&w, client.clone());
        async move {
            let res = w.get(&client, None, &format!("/sessions/{id}")).await;
            res.text().await.unwrap()
        }
    };
    // The owner's page shows the student's words; teacher 2's does not.
    assert!(page(&w.one).await.contains(SECRET), "the owner sees it");
    assert!(page(&w.admin).await.contains(SECRET), "an admin sees it");
    let refused = page(&w.two).await;
    assert!(!refused.contains(SECRET), "{refused}");
    assert!(
        !refused.contains("Past tense review"),
        "not even the lesson"
    );
    let res = w
        .app
        .rpc_with(&w.two, "session_page", &[("id", id.as_str())])
        .await;
    assert_eq!(res.status(), 404);
    let res = w
        .app
        .rpc_with(&w.one, "session_page", &[("id", id.as_str())])
        .await;
    assert_eq!(res.status(), 200);

    for path in [
        format!("/api/sessions/{id}/events"),
        format!("/api/sessions/{id}/calls"),
    ] {
        let status = |client: &Client, key: Option<&str>| {
            let (w, client, path) = (&w, client.clone(), path.clone());
            let key = key.map(str::to_owned);
            async move {
                w.get(&client, key.as_deref(), &path)
                    .await
                    .status()
                    .as_u16()
            }
        };
        assert_eq!(
            status(&w.two, None).await,
            404,
            "teacher 2's cookie: {path}"
        );
        assert_eq!(
            status(&anonymous, Some(&w.key_two)).await,
            404,
            "teacher 2's key: {path}"
        );
        assert_eq!(
            status(&anonymous, Some(&w.orphan_key)).await,
            404,
            "an orphan key: {path}"
        );
        assert_eq!(status(&w.one, None).await, 200, "the owner: {path}");
        assert_eq!(
            status(&anonymous, Some(&w.key_one)).await,
            200,
            "the owner's key: {path}"
        );
        assert_eq!(status(&w.admin, None).await, 200, "the admin: {path}");
        assert_eq!(
            status(&anonymous, Some(&w.admin_key)).await,
            200,
            "an admin's key: {path}"
        );
        assert_eq!(
            status(&anonymous, Some(&w.one_s.token)).await,
            200,
            "its token: {path}"
        );
        // Another session's token still gets 403, as before.
        assert_eq!(
            status(&anonymous, Some(&w.two_s.token)).await,
            403,
            "{path}"
        );
        assert_eq!(status(&anonymous, None).await, 401, "{path}");
    }
    // The calls hold the student's words: only for those who may see them.
    let calls = w
        .get(&w.one, None, &format!("/api/sessions/{id}/calls"))
        .await
        .text()
        .await
        .unwrap();
    assert!(calls.contains(SECRET), "{calls}");
    // The same 404 as for a session that does not exist.
    let unknown = w.get(&w.two, None, "/api/sessions/snope/calls").await;
    assert_eq!(unknown.status(), 404);
    // Teacher 1's session by the lesson alone (the admin's key opened it).
    let by_lesson = format!("/api/sessions/{}/calls", w.one_by_admin.id);
    assert_eq!(w.get(&w.one, None, &by_lesson).await.status(), 200);
    assert_eq!(w.get(&w.two, None, &by_lesson).await.status(), 404);
}

/// Opens the session list's stream as `client` (with `key` if given).
async fn list_stream(w: &World, client: &Client, key: Option<&str>) -> reqwest::Response {
    let res = w.get(client, key, "/api/sessions/events").await;
    assert_eq!(res.status(), 200);
    res
}

#[tokio::test]
async fn the_list_stream_tells_each_watcher_only_of_sessions_it_may_see() {
    let w = World::new().await;
    let anonymous = new_client();
    let two_cookie = list_stream(&w, &w.two, None).await;
    let two_key = list_stream(&w, &anonymous, Some(&w.key_two)).await;
    let admin = list_stream(&w, &w.admin, None).await;
    let one = list_stream(&w, &w.one, None).await;

    // Teacher 1's sessions change: one opens, one changes, one ends.
    let newer = open_with(
        &w.app,
        &w.key_one,
        json!({"lessonId": w.lesson_one, "student": "Ana Dos"}),
    )
    .await;
    let (_, done) = call(
        &w.app,
        &w.one_s,
        "mark_task_complete",
        json!({"taskId": "ill"}),
    )
    .await;
    assert_eq!(done["allowed"], true, "{done}");
    let res = w
        .app
        .client
        .post(w.app.url(&format!("/api/sessions/{}/end", w.one_s.id)))
        .bearer_auth(&w.one_s.token)
        .send()
        .await
        .unwrap();
    assert_eq!(res.status(), 204);
    // Then teacher 2's own session ends.
    let res = w
        .app
        .client
        .post(w.app.url(&format!("/api/sessions/{}/end", w.two_s.id)))
        .bearer_auth(&w.two_s.token)
        .send()
        .await
        .unwrap();
    assert_eq!(res.status(), 204);

    // Teacher 2, by cookie and by key: their session's end is the first
    // and only frame, numbered 1 (no gap counts the others' changes).
    for (who, stream) in [("cookie", two_cookie), ("key", two_key)] {
        let events = read_events(stream, 2).await;
        assert_eq!(events.len(), 1, "{who}: {events:?}");
        let (frame_id, event) = &events[0];
        assert_eq!(*frame_id, 1, "{who}");
        assert_eq!(event, &json!({"type": "ended", "id": w.two_s.id}), "{who}");
        let text = serde_json::to_string(&events).unwrap();
        for theirs in [&w.one_s.id, &newer.id, "Ana"] {
            assert!(!text.contains(theirs), "{who}: {text}");
        }
    }
    // The admin got all four; teacher 1 their three, not teacher 2's end.
    let events = read_events(admin, 4).await;
    let kinds: Vec<&str> = events
        .iter()
        .map(|(_, e)| e["type"].as_str().unwrap())
        .collect();
    assert_eq!(kinds, ["opened", "updated", "ended", "ended"], "{events:?}");
    assert_eq!(events[0].1["session"]["student"], "Ana Dos");
    let events = read_events(one, 4).await;
    let kinds: Vec<&str> = events
        .iter()
        .map(|(_, e)| e["type"].as_str().unwrap())
        .collect();
    assert_eq!(kinds, ["opened", "updated", "ended"], "{events:?}");
    let ids: Vec<u64> = events.iter().map(|(id, _)| *id).collect();
    assert_eq!(ids, [1, 2, 3]);
}

#[tokio::test]
async fn a_lessons_runs_page_and_csv_stay_the_owners() {
    let w = World::new().await;
    let csv = format!("/lessons/{}/sessions.csv", w.lesson_one);
    let res = w.get(&w.two, None, &csv).await;
    assert_eq!(res.status(), 404);
    let res = w.get(&w.one, None, &csv).await;
    assert_eq!(res.status(), 200);
    assert!(res.text().await.unwrap().contains("Ana Uno"));
    let res = w.get(&w.admin, None, &csv).await;
    assert!(res.text().await.unwrap().contains("Ana Uno"));

    let id = w.lesson_one.to_string();
    let res = w.app.rpc_with(&w.two, "lesson_runs", &[("id", &id)]).await;
    assert_eq!(res.status(), 404);
    let page = w
        .get(&w.two, None, &format!("/lessons/{}/sessions", w.lesson_one))
        .await
        .text()
        .await
        .unwrap();
    assert!(
        !page.contains("Ana Uno") && !page.contains(SECRET),
        "{page}"
    );
    let page = w
        .get(&w.one, None, &format!("/lessons/{}/sessions", w.lesson_one))
        .await
        .text()
        .await
        .unwrap();
    assert!(page.contains("Ana Uno"), "{page}");
    // Teacher 2's own lesson is theirs.
    let res = w
        .get(
            &w.two,
            None,
            &format!("/lessons/{}/sessions.csv", w.lesson_two),
        )
        .await;
    assert!(res.text().await.unwrap().contains("Ben Dos"));
}

#[tokio::test]
async fn another_teachers_session_cannot_be_driven_or_joined_and_is_not_revealed() {
    let w = World::new().await;
    // The runner: 404 for a session teacher 2 may not see (not 403).
    let res = w
        .two
        .post(
            w.app
                .url(&format!("/api/sessions/{}/agent/step", w.one_trial)),
        )
        .header("Origin", &w.app.address)
        .json(&json!({"messages": [{"role": "user", "content": "hola"}]}))
        .send()
        .await
        .unwrap();
    assert_eq!(res.status(), 404);
    // A join code from the session's page.
    let res = w
        .app
        .rpc_with(&w.two, "issue_join_code", &[("id", w.one_s.id.as_str())])
        .await;
    assert_eq!(res.status(), 404);
    // Teacher 1 may see the admin-keyed run of their lesson but not drive
    // it (they did not open it): 403, as before.
    let res = w
        .one
        .post(
            w.app
                .url(&format!("/api/sessions/{}/agent/step", w.one_by_admin.id)),
        )
        .header("Origin", &w.app.address)
        .json(&json!({"messages": [{"role": "user", "content": "hola"}]}))
        .send()
        .await
        .unwrap();
    assert_eq!(res.status(), 403);
}

#[tokio::test]
async fn api_keys_belong_to_their_maker_who_alone_lists_revokes_and_uses_them_for_their_lessons() {
    let w = World::new().await;
    let anonymous = new_client();
    let names = |client: &Client| {
        let (w, client) = (&w, client.clone());
        async move {
            let res = w.app.rpc_with(&client, "list_api_keys", &[]).await;
            assert_eq!(res.status(), 200);
            res.json::<Vec<Value>>().await.unwrap()
        }
    };
    let twos = names(&w.two).await;
    assert_eq!(twos.len(), 1, "{twos:?}");
    assert_eq!(twos[0]["owner"], "Otto Other");
    let all = names(&w.admin).await;
    assert_eq!(all.len(), 4, "every key, for an admin: {all:?}");
    let mut owners: Vec<String> = all
        .iter()
        .map(|k| k["owner"].as_str().unwrap_or("(gone)").to_owned())
        .collect();
    owners.sort();
    assert_eq!(
        owners,
        ["(gone)", "Ada Admin", "Otto Other", "Tess Teacher"]
    );

    // Teacher 2 cannot revoke teacher 1's key (404: not theirs); teacher 1 can.
    let ones = names(&w.one).await;
    let key_one_id = ones[0]["id"].as_i64().unwrap().to_string();
    let res = w
        .app
        .rpc_with(&w.two, "revoke_api_key", &[("id", &key_one_id)])
        .await;
    assert_eq!(res.status(), 404);
    assert_eq!(
        w.get(&anonymous, Some(&w.key_one), "/api/sessions")
            .await
            .status(),
        200
    );

    // A teacher's key reads and opens only its maker's lessons.
    let prompt = |key: &str, lesson: i64| {
        let (w, anonymous, key) = (&w, anonymous.clone(), key.to_owned());
        async move {
            w.get(
                &anonymous,
                Some(&key),
                &format!("/api/lessons/{lesson}/prompt"),
            )
            .await
            .status()
            .as_u16()
        }
    };
    assert_eq!(prompt(&w.key_two, w.lesson_one).await, 404);
    assert_eq!(prompt(&w.key_one, w.lesson_one).await, 200);
    assert_eq!(prompt(&w.admin_key, w.lesson_two).await, 200);
    let res = anonymous
        .post(w.app.url("/api/sessions"))
        .bearer_auth(&w.key_two)
        .json(&json!({"lessonId": w.lesson_one}))
        .send()
        .await
        .unwrap();
    assert_eq!(res.status(), 404);

    // A teacher makes keys with a teacher's scopes only.
    let res = w
        .app
        .rpc_with(
            &w.two,
            "create_api_key",
            &[
                ("name", "mine"),
                ("scopes[]", "sessions"),
                ("scopes[]", "bindings:write"),
            ],
        )
        .await;
    assert_eq!(res.status(), 403);
    let res = w
        .app
        .rpc_with(
            &w.two,
            "create_api_key",
            &[("name", "mine"), ("scopes[]", "sessions")],
        )
        .await;
    assert_eq!(res.status(), 200);
    assert_eq!(names(&w.two).await.len(), 2);
    // Their students are a teacher's own too (the key reaches only theirs).
    let res = w
        .app
        .rpc_with(
            &w.two,
            "create_api_key",
            &[("name", "roster"), ("scopes[]", "students")],
        )
        .await;
    assert_eq!(res.status(), 200);
    assert_eq!(names(&w.two).await.len(), 3);

    let res = w
        .app
        .rpc_with(&w.one, "revoke_api_key", &[("id", &key_one_id)])
        .await;
    assert_eq!(res.status(), 200);
    assert_eq!(
        w.get(&anonymous, Some(&w.key_one), "/api/sessions")
            .await
            .status(),
        401
    );
}
