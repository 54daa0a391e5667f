//! Join codes: a session's backend (or a signed-in user who may drive the
//! session, on its page) makes a short one-use code; a plugin exchanges it
//! at `POST /api/plugins/join` for a plugin token of its own, with plugin
//! rights only. A code works once, for 10 minutes, while its session is
//! open; a wrong one is 404 and counts against the caller's address like a
//! wrong password, up to 429.

use crate::helpers::{spawn_app, TestApp, ADMIN, TEACHER};
use crate::sessions::{open, Session};
use serde_json::{json, Value};
use switchboard::domain::join_code::ALPHABET;
use switchboard::domain::limits::{
    JOIN_CODES_LIVE_PER_SESSION, JOIN_CODE_LENGTH, JOIN_CODE_LIFETIME_SECS,
    JOIN_GUESSES_PER_ADDRESS, JOIN_GUESS_WINDOW_SECS,
};

/// `POST /api/sessions/{id}/join-codes` with `token`: status and body.
async fn make_code_with(app: &TestApp, id: &str, token: &str) -> (u16, Value) {
    let res = app
        .client
        .post(app.url(&format!("/api/sessions/{id}/join-codes")))
        .bearer_auth(token)
        .send()
        .await
        .unwrap();
    let status = res.status().as_u16();
    (status, res.json().await.unwrap_or(Value::Null))
}

/// A code made by session `s`'s backend; asserts 201.
async fn make_code(app: &TestApp, s: &Session) -> String {
    let (status, body) = make_code_with(app, &s.id, &s.token).await;
    assert_eq!(status, 201, "{body}");
    body["code"].as_str().unwrap().to_owned()
}

/// `POST /api/plugins/join {"code"}` with `client`: status, body and
/// `Retry-After`.
async fn exchange_with(client: &reqwest::Client, app: &TestApp, code: &str) -> (u16, Value) {
    let res = client
        .post(app.url("/api/plugins/join"))
        .json(&json!({ "code": code }))
        .send()
        .await
        .unwrap();
    let status = res.status().as_u16();
    (status, res.json().await.unwrap_or(Value::Null))
}

async fn exchange(app: &TestApp, code: &str) -> (u16, Value) {
    exchange_with(&app.client, app, code).await
}

/// The plugin a code let in; asserts 200.
async fn join(app: &TestApp, code: &str) -> Session {
    let (status, body) = exchange(app, code).await;
    assert_eq!(status, 200, "{body}");
    Session {
        id: body["sessionId"].as_str().unwrap().to_owned(),
        token: body["pluginToken"].as_str().unwrap().to_owned(),
    }
}

/// `method …/{path}` on the session with `s`'s token.
async fn request(
    app: &TestApp,
    s: &Session,
    method: reqwest::Method,
    path: &str,
    body: Option<Value>,
) -> (u16, Value) {
    let mut req = app
        .client
        .request(method, app.url(&format!("/api/sessions/{}/{path}", s.id)))
        .bearer_auth(&s.token);
    if let Some(body) = body {
        req = req.json(&body);
    }
    let res = req.send().await.unwrap();
    let status = res.status().as_u16();
    (status, res.json().await.unwrap_or(Value::Null))
}

fn registration(name: &str) -> Value {
    json!({"pluginType": "codap", "pluginVersion": "1", "availableTools": [
        {"name": name, "description": "A plugin action.",
         "parameters": {"type": "object", "properties": {"rows": {"type": "integer"}}}}]})
}

fn assert_not_found(status: u16, body: &Value) {
    assert_eq!(status, 404, "{body}");
    assert_eq!(body["error"], "join_code_not_found", "{body}");
}

#[tokio::test]
async fn a_code_is_short_readable_and_works_once_however_it_is_typed() {
    let app = spawn_app().await;
    let key = app.api_key().await;
    let backend = open(&app, &key, "idv").await;
    let made_at = app.state.clock.now();
    let (status, body) = make_code_with(&app, &backend.id, &backend.token).await;
    assert_eq!(status, 201, "{body}");
    let code = body["code"].as_str().unwrap();
    assert_eq!(code.len(), JOIN_CODE_LENGTH);
    assert!(code.bytes().all(|b| ALPHABET.contains(&b)), "{code}");
    let expected =
        switchboard::domain::time::iso_utc_ms((made_at + JOIN_CODE_LIFETIME_SECS) * 1000);
    let expires = body["expiresAt"].as_str().unwrap();
    assert!(expires.ends_with('Z') && expires.len() == 20, "{expires}");
    assert!(expires >= expected.as_str(), "{expires} vs {expected}");
    // Only the code's hash is stored.
    let stored: Vec<String> = sqlx::query_scalar("SELECT code_hash FROM join_codes")
        .fetch_all(&app.state.db)
        .await
        .unwrap();
    assert_eq!(stored, [switchboard::server::auth::token_hash(code)]);

    // Typed by a human: lowercase, a dash and spaces.
    let typed = format!(" {}-{} ", code[..4].to_lowercase(), &code[4..]);
    let plugin = join(&app, &typed).await;
    assert_eq!(plugin.id, backend.id);
    assert!(plugin.token.starts_with("pt_"), "{}", plugin.token);
    let (status, body) = exchange(&app, code).await;
    assert_not_found(status, &body);
}

#[tokio::test]
async fn a_joined_plugin_has_plugin_rights_only() {
    let app = spawn_app().await;
    let key = app.api_key().await;
    let backend = open(&app, &key, "idv").await;
    let code = make_code(&app, &backend).await;
    let plugin = join(&app, &code).await;
    let post = reqwest::Method::POST;
    let (status, body) = request(
        &app,
        &plugin,
        post.clone(),
        "register-tools",
        Some(registration("addRow")),
    )
    .await;
    assert_eq!(status, 201, "{body}");
    let (status, body) = request(&app, &plugin, reqwest::Method::GET, "metadata", None).await;
    assert_eq!(
        (status, body["tools"][0]["name"].clone()),
        (200, json!("addRow")),
        "{body}"
    );
    let (status, _) = request(&app, &plugin, reqwest::Method::GET, "calls", None).await;
    assert_eq!(status, 200);
    let refused = [
        (
            post.clone(),
            "tool-calls",
            Some(json!({"name": "get_server_time"})),
        ),
        (
            reqwest::Method::PATCH,
            "state",
            Some(json!({"checks": {"identity_verified": true}})),
        ),
        (reqwest::Method::GET, "tools", None),
        (post.clone(), "end", None),
        (post.clone(), "join-codes", None),
        (post.clone(), "plugin-token", None),
    ];
    for (method, path, body) in refused {
        let (status, answer) = request(&app, &plugin, method, path, body).await;
        assert_eq!(status, 403, "{path}: {answer}");
        let needed = answer["Forbidden"]["needed"].as_str().unwrap_or_default();
        assert!(
            needed.starts_with("session token (st_…)"),
            "{path}: {answer}"
        );
    }
    // Nothing changed: no call, no state, the session still open.
    let (status, tools) = request(&app, &backend, reqwest::Method::GET, "tools", None).await;
    assert_eq!(status, 200);
    assert_eq!(tools["state"]["checks"], json!({}), "{tools}");
}

#[tokio::test]
async fn several_plugins_join_one_session_beside_its_own_plugin_token() {
    let app = spawn_app().await;
    let key = app.api_key().await;
    let backend = open(&app, &key, "idv").await;
    let first = join(&app, &make_code(&app, &backend).await).await;
    let second = join(&app, &make_code(&app, &backend).await).await;
    assert_ne!(first.token, second.token);
    for plugin in [&first, &second] {
        let (status, body) = request(&app, plugin, reqwest::Method::GET, "metadata", None).await;
        assert_eq!(status, 200, "{body}");
    }
    // A new session plugin token does not cut off the plugins that joined.
    let (status, _) = request(&app, &backend, reqwest::Method::POST, "plugin-token", None).await;
    assert_eq!(status, 201);
    let (status, _) = request(&app, &first, reqwest::Method::GET, "metadata", None).await;
    assert_eq!(status, 200);
    // Another session's joined token is refused there.
    let other = open(&app, &key, "idv").await;
    let stranger = Session {
        id: other.id.clone(),
        token: first.token.clone(),
    };
    let (status, _) = request(&app, &stranger, reqwest::Method::GET, "metadata", None).await;
    assert_eq!(status, 403);
}

#[tokio::test]
async fn a_code_expires_after_its_lifetime() {
    let app = spawn_app().await;
    let key = app.api_key().await;
    let backend = open(&app, &key, "idv").await;
    let early = make_code(&app, &backend).await;
    let late = make_code(&app, &backend).await;
    // The app's clock is the wall's seconds plus what the test advanced:
    // a second may pass between the codes' making and their use (a busy
    // machine), so each side of the lifetime is checked with room to
    // spare; the exact boundary is `domain::join_code`'s unit test.
    app.state.clock.advance(JOIN_CODE_LIFETIME_SECS - 5);
    join(&app, &early).await;
    app.state.clock.advance(10);
    let (status, body) = exchange(&app, &late).await;
    assert_not_found(status, &body);
}

#[tokio::test]
async fn wrong_codes_count_against_the_caller_until_429_even_for_a_right_code() {
    let app = spawn_app().await;
    let key = app.api_key().await;
    let backend = open(&app, &key, "idv").await;
    let right = make_code(&app, &backend).await;
    // Text that cannot be a code is refused by its shape and not counted.
    for bad in ["", "ABC", "ABCDEFG0", "ABCDEFGHJ"] {
        let (status, body) = exchange(&app, bad).await;
        assert_eq!(status, 422, "{bad}: {body}");
        assert_eq!(body["Invalid"]["field"], "code", "{body}");
    }
    let wrong = if right == "22222222" {
        "33333333"
    } else {
        "22222222"
    };
    for _ in 0..JOIN_GUESSES_PER_ADDRESS {
        let (status, body) = exchange(&app, wrong).await;
        assert_not_found(status, &body);
    }
    let res = app
        .client
        .post(app.url("/api/plugins/join"))
        .json(&json!({ "code": right }))
        .send()
        .await
        .unwrap();
    assert_eq!(res.status(), 429);
    let wait: i64 = res.headers()["retry-after"]
        .to_str()
        .unwrap()
        .parse()
        .unwrap();
    assert!(wait > 0 && wait <= JOIN_GUESS_WINDOW_SECS, "{wait}");
    let body: Value = res.json().await.unwrap();
    assert!(
        body["TooManyAttempts"]["retry_after_secs"].is_u64(),
        "{body}"
    );
    // The refused attempt did not spend the right code; once the window
    // frees (a code made afresh: the old one expired meanwhile) one works.
    let used: Option<i64> =
        sqlx::query_scalar("SELECT used_at FROM join_codes WHERE code_hash = $1")
            .bind(switchboard::server::auth::token_hash(&right))
            .fetch_one(&app.state.db)
            .await
            .unwrap();
    assert_eq!(used, None);
    app.state.clock.advance(JOIN_GUESS_WINDOW_SECS);
    let fresh = make_code(&app, &backend).await;
    join(&app, &fresh).await;
}

#[tokio::test]
async fn two_exchanges_of_one_code_at_once_let_exactly_one_plugin_in() {
    let app = spawn_app().await;
    let key = app.api_key().await;
    let backend = open(&app, &key, "idv").await;
    let code = make_code(&app, &backend).await;
    let url = app.url("/api/plugins/join");
    let tries: Vec<_> = (0..8)
        .map(|_| {
            let (url, code) = (url.clone(), code.clone());
            tokio::spawn(async move {
                crate::helpers::new_client()
                    .post(url)
                    .json(&json!({ "code": code }))
                    .send()
                    .await
                    .unwrap()
                    .status()
                    .as_u16()
            })
        })
        .collect();
    let mut statuses = Vec::new();
    for t in tries {
        statuses.push(t.await.unwrap());
    }
    statuses.sort_unstable();
    assert_eq!(statuses, [200, 404, 404, 404, 404, 404, 404, 404]);
    let tokens: i64 = sqlx::query_scalar("SELECT COUNT(*) FROM session_joined_tokens")
        .fetch_one(&app.state.db)
        .await
        .unwrap();
    assert_eq!(tokens, 1);
}

#[tokio::test]
async fn a_session_holds_a_bounded_number_of_live_codes() {
    let app = spawn_app().await;
    let key = app.api_key().await;
    let backend = open(&app, &key, "idv").await;
    let mut codes = Vec::new();
    for _ in 0..JOIN_CODES_LIVE_PER_SESSION {
        codes.push(make_code(&app, &backend).await);
    }
    let res = app
        .client
        .post(app.url(&format!("/api/sessions/{}/join-codes", backend.id)))
        .bearer_auth(&backend.token)
        .send()
        .await
        .unwrap();
    assert_eq!(res.status(), 429);
    assert!(res.headers().contains_key("retry-after"));
    let body: Value = res.json().await.unwrap();
    let limit = body["RateLimited"]["limit"].as_str().unwrap_or_default();
    assert!(limit.contains("live join codes per session"), "{body}");
    let stored: i64 = sqlx::query_scalar("SELECT COUNT(*) FROM join_codes")
        .fetch_one(&app.state.db)
        .await
        .unwrap();
    assert_eq!(stored, JOIN_CODES_LIVE_PER_SESSION as i64);
    // A used code is no longer live: its slot is free again.
    join(&app, &codes[0]).await;
    make_code(&app, &backend).await;
}

#[tokio::test]
async fn an_ended_session_takes_no_codes_and_its_joined_plugins_are_refused() {
    let app = spawn_app().await;
    let key = app.api_key().await;
    let backend = open(&app, &key, "idv").await;
    let plugin = join(&app, &make_code(&app, &backend).await).await;
    let unused = make_code(&app, &backend).await;
    let (status, _) = request(&app, &backend, reqwest::Method::POST, "end", None).await;
    assert_eq!(status, 204);
    let (status, body) = exchange(&app, &unused).await;
    assert_not_found(status, &body);
    let (status, body) = request(
        &app,
        &plugin,
        reqwest::Method::POST,
        "register-tools",
        Some(registration("addRow")),
    )
    .await;
    assert_eq!(
        (status, body["error"].clone()),
        (404, json!("session_not_found")),
        "{body}"
    );
    let (status, _) = make_code_with(&app, &backend.id, &backend.token).await;
    assert_eq!(status, 409);
    let (status, _) = make_code_with(&app, &backend.id, "st_nobody").await;
    assert_eq!(status, 401);
}

#[tokio::test]
async fn the_join_body_is_small() {
    let app = spawn_app().await;
    let res = app
        .client
        .post(app.url("/api/plugins/join"))
        .json(&json!({ "code": "A".repeat(4096) }))
        .send()
        .await
        .unwrap();
    assert_eq!(res.status(), 413);
    let body: Value = res.json().await.unwrap();
    assert_eq!(body["TooLarge"]["limit"], "1 KiB", "{body}");
}

/// `issue_join_code` as `client` (a server function, from the app's own pages).
async fn page_code(app: &TestApp, client: &reqwest::Client, id: &str) -> (u16, Value) {
    let res = app.rpc_with(client, "issue_join_code", &[("id", id)]).await;
    crate::helpers::status_and_json(res).await
}

#[tokio::test]
async fn whoever_may_drive_a_session_makes_codes_on_its_page() {
    let app = spawn_app().await;
    let key = app.api_key().await;
    let backend = open(&app, &key, "idv").await;
    let admin = app.signed_in(ADMIN).await;
    let teacher = app.signed_in(TEACHER).await;
    let page = |client: reqwest::Client| {
        let url = app.url(&format!("/sessions/{}", backend.id));
        async move { client.get(url).send().await.unwrap().text().await.unwrap() }
    };
    assert!(page(admin.clone())
        .await
        .contains(r#"data-testid="join-code-button""#));
    assert!(!page(teacher.clone())
        .await
        .contains(r#"data-testid="join-code-button""#));

    let (status, body) = page_code(&app, &admin, &backend.id).await;
    assert_eq!(status, 200, "{body}");
    let plugin = join(&app, body["code"].as_str().unwrap()).await;
    assert_eq!(plugin.id, backend.id);
    // A teacher whose session it is not may not even see it (404, as an
    // unknown session — issue #38's ownership), let alone let plugins in.
    let (status, body) = page_code(&app, &teacher, &backend.id).await;
    assert_eq!(status, 404, "{body}");
    // Another site's page cannot make one with the admin's cookie.
    let res = admin
        .post(app.url("/rpc/issue_join_code"))
        .header("Origin", "https://evil.example")
        .form(&[("id", backend.id.as_str())])
        .send()
        .await
        .unwrap();
    assert_eq!(res.status(), 403);
    // A trial takes no plugins; an ended session none either.
    let res = admin
        .post(app.url("/api/vibes/todos/trials"))
        .header("Origin", &app.address)
        .json(&json!({}))
        .send()
        .await
        .unwrap();
    assert_eq!(res.status(), 201);
    let trial: Value = res.json().await.unwrap();
    let (status, body) = page_code(&app, &admin, trial["sessionId"].as_str().unwrap()).await;
    assert_eq!(status, 409, "{body}");
    request(&app, &backend, reqwest::Method::POST, "end", None).await;
    let (status, body) = page_code(&app, &admin, &backend.id).await;
    assert_eq!(status, 409, "{body}");
    assert!(!page(admin)
        .await
        .contains(r#"data-testid="join-code-button""#));
}
