//! Accounts as admins run them (issue #38): making one over the API or the
//! page, with a password or a one-time link (used once, expiring, mailed
//! when SMTP is set up); disabling, which stops the account's sign-ins,
//! cookies, API keys and open event streams at once; enabling again; the
//! last active admin; role changes; the `accounts:write` scope; bounded
//! input; and changing one's own password.

use crate::helpers::{spawn_app, spawn_app_with, TestApp, ADMIN, TEACHER};
use crate::sessions::open;
use reqwest::{Client, Response};
use serde_json::{json, Value};
use std::time::Duration;
use switchboard::domain::api_key::Scope;
use switchboard::domain::limits::PASSWORD_RESET_LIFETIME_SECS;
use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader};

/// A key with `accounts:write`, made outside the app (no account owns it).
pub(crate) async fn accounts_key(app: &TestApp) -> String {
    app.api_key_with(&[Scope::AccountsWrite]).await
}

/// `POST /api/accounts` with `key`.
async fn create(app: &TestApp, key: &str, body: Value) -> Response {
    app.client
        .post(app.url("/api/accounts"))
        .bearer_auth(key)
        .json(&body)
        .send()
        .await
        .unwrap()
}

/// `PATCH /api/accounts/{id}` with `key`.
pub(crate) async fn patch(app: &TestApp, key: &str, id: i64, body: Value) -> Response {
    app.client
        .patch(app.url(&format!("/api/accounts/{id}")))
        .bearer_auth(key)
        .json(&body)
        .send()
        .await
        .unwrap()
}

/// Makes an account with a password; returns its id.
pub(crate) async fn make(app: &TestApp, key: &str, email: &str, role: &str, password: &str) -> i64 {
    let res = create(
        app,
        key,
        json!({"email": email, "name": "New Person", "role": role, "password": password}),
    )
    .await;
    assert_eq!(res.status(), 201);
    res.json::<Value>().await.unwrap()["id"].as_i64().unwrap()
}

/// The id of the account with `email`.
async fn id_of(app: &TestApp, email: &str) -> i64 {
    sqlx::query_scalar("SELECT id FROM users WHERE email = $1")
        .bind(email)
        .fetch_one(&app.state.db)
        .await
        .unwrap()
}

/// A sign-in attempt with a fresh client; its status and error.
async fn sign_in(app: &TestApp, email: &str, password: &str) -> (u16, Value) {
    let res = app
        .rpc_with(
            &crate::helpers::new_client(),
            "login",
            &[("email", email), ("password", password)],
        )
        .await;
    let status = res.status().as_u16();
    (status, res.json().await.unwrap_or(Value::Null))
}

/// The cookie (`sb_session=…`) of a new sign-in.
pub(crate) async fn cookie_of(app: &TestApp, email: &str, password: &str) -> String {
    let res = app
        .rpc_with(
            &crate::helpers::new_client(),
            "login",
            &[("email", email), ("password", password)],
        )
        .await;
    assert_eq!(res.status(), 200);
    let set = res.headers()["set-cookie"].to_str().unwrap();
    set.split(';').next().unwrap().to_owned()
}

/// The token of a reset link.
fn token_of(link: &str) -> String {
    link.split("token=").nth(1).expect("a token").to_owned()
}

/// Sets a password with a reset link's token, as its page does.
async fn use_link(app: &TestApp, token: &str, password: &str) -> Response {
    app.rpc_with(
        &crate::helpers::new_client(),
        "reset_password",
        &[("token", token), ("new_password", password)],
    )
    .await
}

/// Asks for an event stream at `path` on a new connection, with
/// `cookie` or `key`; the response once its head is in (the stream open).
pub(crate) async fn stream(
    app: &TestApp,
    path: &str,
    cookie: Option<&str>,
    key: Option<&str>,
) -> Response {
    // No idle connections kept: every request is a new connection, as an
    // `EventSource` opens it (the stream is then written on the socket).
    let client = Client::builder().pool_max_idle_per_host(0).build().unwrap();
    let mut req = client
        .get(app.url(path))
        .header("Accept", "text/event-stream");
    if let Some(cookie) = cookie {
        req = req.header("Cookie", cookie);
    }
    if let Some(key) = key {
        req = req.bearer_auth(key);
    }
    let res = req.send().await.unwrap();
    assert_eq!(res.status(), 200, "{path}");
    res
}

/// The same on a connection that served a request before (hyper writes
/// the stream as a body).
async fn stream_after_a_request(app: &TestApp, path: &str, cookie: &str) -> Response {
    let client = Client::new();
    let warm = client.get(app.url("/healthz")).send().await.unwrap();
    assert_eq!(warm.status(), 200);
    warm.text().await.unwrap();
    let res = client
        .get(app.url(path))
        .header("Accept", "text/event-stream")
        .header("Cookie", cookie)
        .send()
        .await
        .unwrap();
    assert_eq!(res.status(), 200, "{path}");
    res
}

/// Whether the stream's body ends (or breaks off) within 3 s.
pub(crate) async fn ends(mut res: Response) -> bool {
    tokio::time::timeout(Duration::from_secs(3), async {
        while let Ok(Some(_)) = res.chunk().await {}
    })
    .await
    .is_ok()
}

/// Whether the stream is still open after 300 ms.
pub(crate) async fn stays_open(mut res: Response) -> bool {
    tokio::time::timeout(Duration::from_millis(300), async {
        while let Ok(Some(_)) = res.chunk().await {}
    })
    .await
    .is_err()
}

#[tokio::test]
async fn an_account_made_with_a_password_signs_in_and_is_listed() {
    let app = spawn_app().await;
    let key = accounts_key(&app).await;
    let res = create(
        &app,
        &key,
        json!({"email": " Nina@School.example ", "name": " Nina Novak ", "role": "teacher", "password": "nina-first-pass"}),
    )
    .await;
    assert_eq!(res.status(), 201);
    let made: Value = res.json().await.unwrap();
    assert_eq!(made["email"], "nina@school.example");
    assert_eq!(made["name"], "Nina Novak");
    assert_eq!(made["role"], "teacher");
    assert_eq!(made["disabled"], false);
    assert!(made.get("resetLink").is_none(), "{made}");

    assert_eq!(
        sign_in(&app, "nina@school.example", "nina-first-pass")
            .await
            .0,
        200
    );
    let listed: Value = app
        .client
        .get(app.url("/api/accounts"))
        .bearer_auth(&key)
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    let nina = listed["accounts"]
        .as_array()
        .unwrap()
        .iter()
        .find(|a| a["email"] == "nina@school.example")
        .expect("listed");
    assert!(nina["lastSignInAt"].as_i64().unwrap() > 0, "{nina}");
    assert!(nina.get("passwordHash").is_none() && nina.get("password_hash").is_none());
}

#[tokio::test]
async fn an_account_made_without_a_password_gets_a_link_that_works_once() {
    let app = spawn_app().await;
    let key = accounts_key(&app).await;
    let res = create(
        &app,
        &key,
        json!({"email": "omar@school.example", "name": "Omar", "role": "teacher"}),
    )
    .await;
    assert_eq!(res.status(), 201);
    let made: Value = res.json().await.unwrap();
    let link = made["resetLink"].as_str().expect("a link").to_owned();
    assert!(
        link.starts_with(&format!("{}/reset-password?token=", app.address)),
        "{link}"
    );
    assert!(made["resetLinkExpiresAt"].as_i64().unwrap() > 0);
    // Only the link's hash is stored.
    let token = token_of(&link);
    let stored: Vec<String> = sqlx::query_scalar("SELECT token_hash FROM password_resets")
        .fetch_all(&app.state.db)
        .await
        .unwrap();
    assert_eq!(stored.len(), 1);
    assert_ne!(stored[0], token);

    // The page the link opens renders for a signed-out visitor.
    let page = reqwest::get(&link).await.unwrap();
    assert_eq!(page.status(), 200);
    assert!(page.text().await.unwrap().contains("Set your password"));

    let res = use_link(&app, &token, "short").await;
    assert_eq!(res.status(), 422);
    assert_eq!(
        res.json::<Value>().await.unwrap()["Invalid"]["field"],
        "new_password"
    );
    assert_eq!(
        use_link(&app, &token, "omar-chosen-pass").await.status(),
        200
    );
    assert_eq!(
        sign_in(&app, "omar@school.example", "omar-chosen-pass")
            .await
            .0,
        200
    );
    // Once only.
    let again = use_link(&app, &token, "someone-elses-pass").await;
    assert_eq!(again.status(), 404);
    assert_eq!(
        sign_in(&app, "omar@school.example", "someone-elses-pass")
            .await
            .0,
        401
    );
}

#[tokio::test]
async fn a_link_expires_and_a_new_one_replaces_the_old() {
    let app = spawn_app().await;
    let admin = app.signed_in(ADMIN).await;
    let teacher = id_of(&app, TEACHER.0).await.to_string();
    let link = |res: Value| token_of(res["resetLink"].as_str().unwrap());
    let first = app
        .rpc_with(&admin, "account_reset_link", &[("id", &teacher)])
        .await;
    assert_eq!(first.status(), 200);
    let first = link(first.json().await.unwrap());
    let second = app
        .rpc_with(&admin, "account_reset_link", &[("id", &teacher)])
        .await;
    let second = link(second.json().await.unwrap());
    assert_eq!(
        use_link(&app, &first, "replaced-link-pass").await.status(),
        404
    );

    app.state.clock.advance(PASSWORD_RESET_LIFETIME_SECS + 1);
    assert_eq!(
        use_link(&app, &second, "expired-link-pass").await.status(),
        404
    );
    assert_eq!(sign_in(&app, TEACHER.0, TEACHER.1).await.0, 200);
    // A teacher may not make links.
    let res = app
        .rpc_with(
            &app.signed_in(TEACHER).await,
            "account_reset_link",
            &[("id", &teacher)],
        )
        .await;
    assert_eq!(res.status(), 403);
}

#[tokio::test]
async fn disabling_stops_sign_ins_cookies_keys_and_open_streams_at_once() {
    let app = spawn_app().await;
    let key = accounts_key(&app).await;
    let (email, password) = ("second.admin@school.example", "second-admin-pass");
    let id = make(&app, &key, email, "admin", password).await;
    let browser = app.signed_in((email, password)).await;
    // Their own key, with a scope that follows a live stream.
    let created: Value = app
        .rpc_with(
            &browser,
            "create_api_key",
            &[("name", "theirs"), ("scopes[]", "catalogue:write")],
        )
        .await
        .json()
        .await
        .unwrap();
    let their_key = created["secret"].as_str().unwrap().to_owned();
    let servers = |k: &str| {
        app.client
            .get(app.url("/api/mcp-servers"))
            .bearer_auth(k.to_owned())
            .send()
    };
    assert_eq!(servers(&their_key).await.unwrap().status(), 200);

    let cookie = cookie_of(&app, email, password).await;
    let session = open(&app, &app.api_key().await, "idv").await;
    let session_path = format!("/api/sessions/{}/events", session.id);
    let list_direct = stream(&app, "/api/sessions/events", Some(&cookie), None).await;
    let list_hyper = stream_after_a_request(&app, "/api/sessions/events", &cookie).await;
    let session_direct = stream(&app, &session_path, Some(&cookie), None).await;
    let session_hyper = stream_after_a_request(&app, &session_path, &cookie).await;
    let key_stream = stream(&app, "/api/mcp-servers/events", None, Some(&their_key)).await;
    // Someone else's stream is not touched.
    let teacher_cookie = cookie_of(&app, TEACHER.0, TEACHER.1).await;
    let bystander = stream(&app, "/api/sessions/events", Some(&teacher_cookie), None).await;

    let res = patch(&app, &key, id, json!({"disabled": true})).await;
    assert_eq!(res.status(), 200);
    assert_eq!(res.json::<Value>().await.unwrap()["disabled"], true);

    for (what, open_stream) in [
        ("list stream on its socket", list_direct),
        ("list stream through hyper", list_hyper),
        ("session stream on its socket", session_direct),
        ("session stream through hyper", session_hyper),
        ("a stream opened with their key", key_stream),
    ] {
        assert!(ends(open_stream).await, "{what} ended");
    }
    assert!(
        stays_open(bystander).await,
        "another account's stream stays"
    );

    let (status, error) = sign_in(&app, email, password).await;
    assert_eq!(status, 403);
    assert_eq!(error, json!("AccountDisabled"));
    // The wrong password of a disabled account reads as any wrong password.
    assert_eq!(sign_in(&app, email, "not-their-password").await.0, 401);
    assert_eq!(
        app.rpc_with(&browser, "list_api_keys", &[]).await.status(),
        401
    );
    let res = app
        .client
        .get(app.url("/api/sessions/events"))
        .header("Cookie", &cookie)
        .send()
        .await
        .unwrap();
    assert_eq!(res.status(), 401);
    assert_eq!(servers(&their_key).await.unwrap().status(), 401);
    let rows: i64 = sqlx::query_scalar("SELECT COUNT(*) FROM auth_sessions WHERE user_id = $1")
        .bind(id)
        .fetch_one(&app.state.db)
        .await
        .unwrap();
    assert_eq!(rows, 0, "their sign-ins were deleted");

    // Enabled again: the password and the key work again (the old
    // sign-ins stay ended).
    let res = patch(&app, &key, id, json!({"disabled": false})).await;
    assert_eq!(res.status(), 200);
    assert_eq!(sign_in(&app, email, password).await.0, 200);
    assert_eq!(servers(&their_key).await.unwrap().status(), 200);
    assert_eq!(
        app.rpc_with(&browser, "list_api_keys", &[]).await.status(),
        401
    );
}

#[tokio::test]
async fn the_last_active_admin_can_be_neither_disabled_nor_demoted() {
    let app = spawn_app().await;
    let key = accounts_key(&app).await;
    let admin = id_of(&app, ADMIN.0).await;
    for body in [json!({"disabled": true}), json!({"role": "teacher"})] {
        let res = patch(&app, &key, admin, body.clone()).await;
        assert_eq!(res.status(), 409, "{body}");
        let error: Value = res.json().await.unwrap();
        assert!(
            error["Conflict"]
                .as_str()
                .unwrap()
                .contains("last active admin"),
            "{error}"
        );
    }
    assert_eq!(sign_in(&app, ADMIN.0, ADMIN.1).await.0, 200);
    // With a second admin, one of them may go; a disabled admin does not
    // count.
    let other = make(
        &app,
        &key,
        "deputy@school.example",
        "admin",
        "deputy-pass-1",
    )
    .await;
    assert_eq!(
        patch(&app, &key, other, json!({"disabled": true}))
            .await
            .status(),
        200
    );
    assert_eq!(
        patch(&app, &key, admin, json!({"role": "teacher"}))
            .await
            .status(),
        409
    );
}

#[tokio::test]
async fn two_admins_removed_at_once_cannot_both_go() {
    let app = spawn_app().await;
    let key = accounts_key(&app).await;
    let first = id_of(&app, ADMIN.0).await;
    let second = make(
        &app,
        &key,
        "deputy@school.example",
        "admin",
        "deputy-pass-1",
    )
    .await;
    for round in 0..5 {
        let (a, b) = tokio::join!(
            patch(&app, &key, first, json!({"disabled": true})),
            patch(&app, &key, second, json!({"role": "teacher"})),
        );
        let mut statuses = [a.status().as_u16(), b.status().as_u16()];
        statuses.sort();
        assert_eq!(statuses, [200, 409], "round {round}");
        let active: i64 = sqlx::query_scalar(
            "SELECT COUNT(*) FROM users WHERE role = 'admin' AND disabled_at IS NULL",
        )
        .fetch_one(&app.state.db)
        .await
        .unwrap();
        assert_eq!(active, 1, "round {round}");
        // Both back for the next round.
        let both = [
            (first, json!({"disabled": false})),
            (second, json!({"role": "admin"})),
        ];
        for (id, body) in both {
            assert_eq!(patch(&app, &key, id, body).await.status(), 200);
        }
    }
}

#[tokio::test]
async fn a_role_change_takes_effect_on_the_next_request() {
    let app = spawn_app().await;
    let key = accounts_key(&app).await;
    let teacher = app.signed_in(TEACHER).await;
    assert_eq!(app.rpc_with(&teacher, "accounts", &[]).await.status(), 403);
    let id = id_of(&app, TEACHER.0).await;
    let res = patch(&app, &key, id, json!({"role": "admin"})).await;
    assert_eq!(res.status(), 200);
    assert_eq!(res.json::<Value>().await.unwrap()["role"], "admin");
    assert_eq!(app.rpc_with(&teacher, "accounts", &[]).await.status(), 200);
    assert_eq!(
        patch(&app, &key, id, json!({"role": "teacher"}))
            .await
            .status(),
        200
    );
    assert_eq!(app.rpc_with(&teacher, "accounts", &[]).await.status(), 403);
}

#[tokio::test]
async fn the_accounts_api_takes_an_accounts_write_key_or_the_admin() {
    let app = spawn_app().await;
    let body = json!({"email": "x@school.example", "name": "X", "role": "teacher", "password": "long-enough-1"});
    let res = app
        .client
        .get(app.url("/api/accounts"))
        .send()
        .await
        .unwrap();
    assert_eq!(res.status(), 401);
    let other = app
        .api_key_with(&[Scope::Sessions, Scope::CatalogueWrite])
        .await;
    let res = create(&app, &other, body.clone()).await;
    assert_eq!(res.status(), 403);
    assert_eq!(
        res.json::<Value>().await.unwrap(),
        json!({"MissingScope": {"scope": "accounts:write"}})
    );
    let teacher = app.signed_in(TEACHER).await;
    let res = teacher.get(app.url("/api/accounts")).send().await.unwrap();
    assert_eq!(res.status(), 403);

    let admin = app.signed_in(ADMIN).await;
    let res = admin.get(app.url("/api/accounts")).send().await.unwrap();
    assert_eq!(res.status(), 200);
    // A cookie's change must come from the app's own pages.
    let res = admin
        .post(app.url("/api/accounts"))
        .json(&body)
        .send()
        .await
        .unwrap();
    assert_eq!(res.status(), 403);
    assert_eq!(res.json::<Value>().await.unwrap(), json!("CrossOrigin"));
    let res = admin
        .post(app.url("/api/accounts"))
        .header("Origin", &app.address)
        .json(&body)
        .send()
        .await
        .unwrap();
    assert_eq!(res.status(), 201);
}

#[tokio::test]
async fn bad_input_is_refused_naming_the_field_and_nothing_is_stored() {
    let app = spawn_app().await;
    let key = accounts_key(&app).await;
    let users = || async {
        sqlx::query_scalar::<_, i64>("SELECT COUNT(*) FROM users")
            .fetch_one(&app.state.db)
            .await
            .unwrap()
    };
    let before = users().await;
    let ok = json!({"email": "ok@school.example", "name": "Ok", "role": "teacher", "password": "long-enough-1"});
    let with = |field: &str, value: Value| {
        let mut body = ok.clone();
        body[field] = value;
        body
    };
    for (body, field) in [
        (with("email", json!("not-an-address")), "email"),
        (
            with("email", json!(format!("{}@x.example", "a".repeat(300)))),
            "email",
        ),
        (with("name", json!("   ")), "name"),
        (with("name", json!("n".repeat(81))), "name"),
        (with("role", json!("root")), "role"),
        (with("role", json!("r".repeat(100_000))), "role"),
        (with("password", json!("short")), "password"),
        (with("password", json!("p".repeat(129))), "password"),
        (with("email", json!(42)), "email"),
        (with("extra", json!(1)), "extra"),
    ] {
        let res = create(&app, &key, body).await;
        assert_eq!(res.status(), 422, "{field}");
        let text = res.text().await.unwrap();
        assert!(text.len() < 400, "no echo of big input: {text}");
        let error: Value = serde_json::from_str(&text).unwrap();
        let named = error["Invalid"]["field"].as_str().unwrap();
        assert!(
            named == field || named.starts_with(field),
            "{field}: {error}"
        );
    }
    let res = create(&app, &key, with("email", json!(TEACHER.0))).await;
    assert_eq!(res.status(), 409);
    assert_eq!(users().await, before, "nothing stored");

    let teacher = id_of(&app, TEACHER.0).await;
    for (body, field) in [
        (json!({}), "body"),
        (json!({"role": "root"}), "role"),
        (json!({"disabled": "yes"}), "disabled"),
    ] {
        let res = patch(&app, &key, teacher, body).await;
        assert_eq!(res.status(), 422, "{field}");
        assert_eq!(
            res.json::<Value>().await.unwrap()["Invalid"]["field"],
            field
        );
    }
    assert_eq!(
        patch(&app, &key, 9_999, json!({"disabled": true}))
            .await
            .status(),
        404
    );
    let res = app
        .client
        .patch(app.url("/api/accounts/x"))
        .bearer_auth(&key)
        .json(&json!({"disabled": true}))
        .send()
        .await
        .unwrap();
    assert_eq!(res.status(), 422);
}

#[tokio::test]
async fn a_user_changes_their_own_password_with_the_current_one() {
    let app = spawn_app().await;
    let teacher = app.signed_in(TEACHER).await;
    let elsewhere = app.signed_in(TEACHER).await;
    let change = |current: &'static str, new: &'static str| {
        let teacher = teacher.clone();
        let app = &app;
        async move {
            app.rpc_with(
                &teacher,
                "change_own_password",
                &[("current_password", current), ("new_password", new)],
            )
            .await
        }
    };
    let res = change("wrong-current-pass", "a-new-teacher-pass").await;
    assert_eq!(res.status(), 422);
    assert_eq!(
        res.json::<Value>().await.unwrap()["Invalid"]["field"],
        "current_password"
    );
    let res = change(TEACHER.1, "short").await;
    assert_eq!(res.status(), 422);
    assert_eq!(
        res.json::<Value>().await.unwrap()["Invalid"]["field"],
        "new_password"
    );
    assert_eq!(change(TEACHER.1, "a-new-teacher-pass").await.status(), 200);

    assert_eq!(sign_in(&app, TEACHER.0, TEACHER.1).await.0, 401);
    assert_eq!(sign_in(&app, TEACHER.0, "a-new-teacher-pass").await.0, 200);
    // This sign-in stays, the others end.
    // (A teacher lists their own keys: 200 signed in, 401 signed out.)
    assert_eq!(
        app.rpc_with(&teacher, "list_api_keys", &[]).await.status(),
        200
    );
    assert_eq!(
        app.rpc_with(&elsewhere, "list_api_keys", &[])
            .await
            .status(),
        401
    );
    // Signed out, nobody's password changes.
    let anonymous = app
        .rpc_with(
            &crate::helpers::new_client(),
            "change_own_password",
            &[("current_password", "x"), ("new_password", "y-long-enough")],
        )
        .await;
    assert_eq!(anonymous.status(), 401);
}

#[tokio::test]
async fn the_accounts_page_and_the_profile_render_for_their_roles() {
    let app = spawn_app().await;
    let admin = app.signed_in(ADMIN).await;
    let page = admin.get(app.url("/accounts")).send().await.unwrap();
    assert_eq!(page.status(), 200);
    let html = page.text().await.unwrap();
    assert!(html.contains("teacher@example.com") && html.contains("Create account"));
    let teacher = app.signed_in(TEACHER).await;
    assert_eq!(
        teacher
            .get(app.url("/accounts"))
            .send()
            .await
            .unwrap()
            .status(),
        403
    );
    let profile = teacher.get(app.url("/profile")).send().await.unwrap();
    assert_eq!(profile.status(), 200);
    let html = profile.text().await.unwrap();
    assert!(html.contains("teacher@example.com") && html.contains("Change your password"));
    let res = app.client.get(app.url("/profile")).send().await.unwrap();
    assert_eq!(res.status(), 303);
}

/// A scripted SMTP server for one mail: answers each command as a relay
/// would and hands back what was sent after `DATA`.
async fn smtp_server() -> (u16, tokio::sync::oneshot::Receiver<String>) {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let port = listener.local_addr().unwrap().port();
    let (tx, rx) = tokio::sync::oneshot::channel();
    tokio::spawn(async move {
        let (socket, _) = listener.accept().await.unwrap();
        let (read, mut write) = socket.into_split();
        let mut lines = BufReader::new(read).lines();
        write.write_all(b"220 test.local ESMTP\r\n").await.unwrap();
        let (mut data, mut in_data) = (String::new(), false);
        while let Ok(Some(line)) = lines.next_line().await {
            if in_data {
                if line == "." {
                    in_data = false;
                    write.write_all(b"250 2.0.0 queued\r\n").await.unwrap();
                } else {
                    data.push_str(&line);
                    data.push('\n');
                }
                continue;
            }
            let command = line.to_ascii_uppercase();
            let reply: &[u8] = if command.starts_with("EHLO") || command.starts_with("HELO") {
                b"250-test.local\r\n250 8BITMIME\r\n"
            } else if command.starts_with("DATA") {
                in_data = true;
                b"354 go ahead\r\n"
            } else if command.starts_with("QUIT") {
                write.write_all(b"221 bye\r\n").await.unwrap();
                break;
            } else {
                b"250 2.1.0 ok\r\n"
            };
            write.write_all(reply).await.unwrap();
        }
        let _ = tx.send(data);
    });
    (port, rx)
}

/// A mail's text with quoted-printable soft breaks and `=3D` undone.
fn unfolded(mail: &str) -> String {
    mail.replace("=\n", "").replace("=3D", "=")
}

#[tokio::test]
async fn with_smtp_set_up_the_link_is_mailed_instead_of_shown() {
    let (port, sent) = smtp_server().await;
    let url = format!("smtp://127.0.0.1:{port}");
    let app = spawn_app_with(&[
        ("SMTP_URL", url.as_str()),
        ("SMTP_FROM", "Switchboard <noreply@school.example>"),
    ])
    .await;
    let key = accounts_key(&app).await;
    let res = create(
        &app,
        &key,
        json!({"email": "pia@school.example", "name": "Pia", "role": "teacher"}),
    )
    .await;
    assert_eq!(res.status(), 201);
    let made: Value = res.json().await.unwrap();
    assert_eq!(made["resetLinkMailedTo"], "pia@school.example");
    assert!(made.get("resetLink").is_none(), "{made}");

    let mail = unfolded(
        &tokio::time::timeout(Duration::from_secs(5), sent)
            .await
            .unwrap()
            .unwrap(),
    );
    assert!(
        mail.contains("Subject: Set your Switchboard password"),
        "{mail}"
    );
    assert!(mail.contains("pia@school.example"), "{mail}");
    let link = mail
        .split_whitespace()
        .find(|w| w.contains("/reset-password?token="))
        .expect("the link in the mail");
    assert_eq!(
        use_link(&app, &token_of(link), "pia-chosen-pass")
            .await
            .status(),
        200
    );
    assert_eq!(
        sign_in(&app, "pia@school.example", "pia-chosen-pass")
            .await
            .0,
        200
    );
}

#[tokio::test]
async fn a_link_that_cannot_be_mailed_is_shown_with_the_reason() {
    // A port nobody listens on.
    let port = {
        let probe = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        probe.local_addr().unwrap().port()
    };
    let url = format!("smtp://127.0.0.1:{port}");
    let app = spawn_app_with(&[
        ("SMTP_URL", url.as_str()),
        ("SMTP_FROM", "noreply@school.example"),
    ])
    .await;
    let admin = app.signed_in(ADMIN).await;
    let teacher = id_of(&app, TEACHER.0).await.to_string();
    let res = app
        .rpc_with(&admin, "account_reset_link", &[("id", &teacher)])
        .await;
    assert_eq!(res.status(), 200);
    let answer: Value = res.json().await.unwrap();
    assert!(answer["mailError"].as_str().is_some(), "{answer}");
    let link = answer["resetLink"].as_str().unwrap();
    assert_eq!(
        use_link(&app, &token_of(link), "shown-link-pass")
            .await
            .status(),
        200
    );
}
