use crate::helpers::{new_client, spawn_app, ADMIN, TEACHER};
use switchboard::domain::user::{Role, UserView};
use switchboard::error::ApiError;

#[tokio::test]
async fn anonymous_calls_to_a_protected_server_function_are_refused() {
    let app = spawn_app().await;
    let res = app.rpc("list_accounts", &[]).await;
    assert_eq!(res.status(), 401);
    let err: ApiError = res.json().await.unwrap();
    assert_eq!(err, ApiError::Unauthenticated);
}

#[tokio::test]
async fn a_teacher_is_forbidden_an_admin_only_function_and_an_admin_is_not() {
    let app = spawn_app().await;
    app.login(TEACHER).await;
    let res = app.rpc("list_accounts", &[]).await;
    assert_eq!(res.status(), 403);
    assert_eq!(
        res.json::<ApiError>().await.unwrap(),
        ApiError::Forbidden {
            needed: "admin".into()
        }
    );

    let admin = new_client();
    let res = app
        .rpc_with(
            &admin,
            "login",
            &[("email", ADMIN.0), ("password", ADMIN.1)],
        )
        .await;
    assert_eq!(res.status(), 200);
    let res = app.rpc_with(&admin, "list_accounts", &[]).await;
    assert_eq!(res.status(), 200);
    let accounts: Vec<serde_json::Value> = res.json().await.unwrap();
    let emails: Vec<_> = accounts
        .iter()
        .map(|a| a["user"]["email"].clone())
        .collect();
    assert_eq!(emails, ["admin@example.com", "teacher@example.com"]);
}

#[tokio::test]
async fn a_cross_origin_post_is_refused_before_it_runs() {
    let app = spawn_app().await;
    for origin in ["http://evil.example", "null"] {
        let res = app
            .client
            .post(app.url("/rpc/login"))
            .header("Origin", origin)
            .form(&[("email", TEACHER.0), ("password", TEACHER.1)])
            .send()
            .await
            .unwrap();
        assert_eq!(res.status(), 403, "{origin}");
        assert!(res.headers().get("set-cookie").is_none());
        assert_eq!(res.json::<ApiError>().await.unwrap(), ApiError::CrossOrigin);
    }
    // Neither Origin nor Referer: refused too.
    let res = app
        .client
        .post(app.url("/rpc/login"))
        .form(&[("email", TEACHER.0), ("password", TEACHER.1)])
        .send()
        .await
        .unwrap();
    assert_eq!(res.status(), 403);
    assert_eq!(
        app.session_rows().await,
        0,
        "no session may have been created"
    );
}

#[tokio::test]
async fn a_cross_origin_logout_does_not_end_the_session() {
    let app = spawn_app().await;
    app.login(TEACHER).await;
    let res = app
        .client
        .post(app.url("/rpc/logout"))
        .header("Origin", "http://evil.example")
        .send()
        .await
        .unwrap();
    assert_eq!(res.status(), 403);
    assert_eq!(app.session_rows().await, 1);
}

#[tokio::test]
async fn a_wrong_password_gives_a_clear_error_and_no_session() {
    let app = spawn_app().await;
    for (email, password) in [(TEACHER.0, "wrong"), ("nobody@example.com", TEACHER.1)] {
        let res = app
            .rpc("login", &[("email", email), ("password", password)])
            .await;
        assert_eq!(res.status(), 401);
        assert!(res.headers().get("set-cookie").is_none());
        assert_eq!(
            res.json::<ApiError>().await.unwrap(),
            ApiError::InvalidCredentials
        );
    }
    assert_eq!(app.session_rows().await, 0);
}

#[tokio::test]
async fn a_malformed_email_is_refused_naming_the_field() {
    let app = spawn_app().await;
    let res = app
        .rpc("login", &[("email", "not-an-address"), ("password", "x")])
        .await;
    assert_eq!(res.status(), 422);
    let err: ApiError = res.json().await.unwrap();
    assert_eq!(err.field(), Some("email"));
}

#[tokio::test]
async fn sign_in_sets_a_strict_http_only_cookie_and_sign_out_ends_the_session() {
    let app = spawn_app().await;
    let res = app
        .rpc(
            "login",
            &[
                ("email", "  Teacher@Example.com "),
                ("password", TEACHER.1),
                ("next", "/lessons"),
            ],
        )
        .await;
    assert_eq!(res.status(), 200);
    let cookie = res.headers()["set-cookie"].to_str().unwrap().to_owned();
    assert!(cookie.starts_with("sb_session="), "{cookie}");
    assert!(
        cookie.contains("HttpOnly") && cookie.contains("SameSite=Strict"),
        "{cookie}"
    );
    assert_eq!(res.headers()["location"], "/lessons");

    let me: Option<UserView> = app.rpc("current_user", &[]).await.json().await.unwrap();
    let me = me.expect("signed in");
    assert_eq!(me.email.as_str(), TEACHER.0);
    assert_eq!(me.role, Role::Teacher);

    let res = app.rpc("logout", &[]).await;
    assert_eq!(res.status(), 200);
    assert_eq!(app.session_rows().await, 0);
    let me: Option<UserView> = app.rpc("current_user", &[]).await.json().await.unwrap();
    assert_eq!(me, None);
}

#[tokio::test]
async fn an_open_redirect_through_next_is_not_possible() {
    let app = spawn_app().await;
    let res = app
        .rpc(
            "login",
            &[
                ("email", TEACHER.0),
                ("password", TEACHER.1),
                ("next", "//evil.example/x"),
            ],
        )
        .await;
    assert_eq!(res.status(), 200);
    assert_eq!(res.headers()["location"], "/");
}

#[tokio::test]
async fn a_session_survives_a_server_restart() {
    let app = spawn_app().await;
    app.login(ADMIN).await;
    let restarted = app.restart().await;
    let res = restarted.rpc_with(&app.client, "current_user", &[]).await;
    // The cookie jar is keyed by host, and both servers are on 127.0.0.1.
    let me: Option<UserView> = res.json().await.unwrap();
    assert_eq!(me.map(|u| u.role), Some(Role::Admin));
}
