use crate::helpers::{spawn_app, ADMIN, TEACHER};

#[tokio::test]
async fn anonymous_visitors_are_sent_to_login_with_where_they_were_going() {
    let app = spawn_app().await;
    for (path, next) in [
        ("/", "/"),
        ("/lessons?x=1", "/lessons%3Fx%3D1"),
        ("/sessions/abc", "/sessions/abc"),
    ] {
        let res = app.client.get(app.url(path)).send().await.unwrap();
        assert_eq!(res.status(), 303, "{path}");
        assert_eq!(res.headers()["location"], format!("/login?next={next}"));
    }
}

#[tokio::test]
async fn the_login_page_renders_on_the_server() {
    let app = spawn_app().await;
    let res = app.client.get(app.url("/login")).send().await.unwrap();
    assert_eq!(res.status(), 200);
    let html = res.text().await.unwrap();
    assert!(html.contains("name=\"email\""), "{html}");
    assert!(html.contains("Sign in"));
    assert!(html.contains("/pkg/switchboard.css"));
}

#[tokio::test]
async fn pages_render_the_signed_in_user_on_the_server() {
    let app = spawn_app().await;
    app.login(TEACHER).await;
    let html = app
        .client
        .get(app.url("/"))
        .send()
        .await
        .unwrap()
        .text()
        .await
        .unwrap();
    assert!(html.contains("Welcome, Tess Teacher"), "{html}");
    assert!(
        !html.contains("href=\"/bindings\""),
        "teachers get no bindings link"
    );

    let res = app.client.get(app.url("/login")).send().await.unwrap();
    assert_eq!(res.status(), 303, "signed-in users skip the login page");
}

#[tokio::test]
async fn the_bindings_area_is_forbidden_to_teachers_and_open_to_admins() {
    let app = spawn_app().await;
    app.login(TEACHER).await;
    let res = app.client.get(app.url("/bindings")).send().await.unwrap();
    assert_eq!(res.status(), 403);
    assert!(res
        .text()
        .await
        .unwrap()
        .contains("Not available to your account"));

    let admin = app.restart().await;
    admin.login(ADMIN).await;
    let res = admin
        .client
        .get(admin.url("/bindings"))
        .send()
        .await
        .unwrap();
    assert_eq!(res.status(), 200);
    let html = res.text().await.unwrap();
    assert!(html.contains("Tool bindings"));
    assert!(html.contains("Accounts") || html.contains("Global tools"));
}

#[tokio::test]
async fn unknown_pages_are_404() {
    let app = spawn_app().await;
    app.login(TEACHER).await;
    let res = app
        .client
        .get(app.url("/no-such-page"))
        .send()
        .await
        .unwrap();
    assert_eq!(res.status(), 404);
}
