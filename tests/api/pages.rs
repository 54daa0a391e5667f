use crate::helpers::{spawn_app, ADMIN, TEACHER};
use switchboard::domain::pages::PAGES;
use switchboard::domain::user::Role;

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

/// Walks the page table itself, so a page added to it is covered here
/// without a change: signed out, every page that needs a sign-in answers
/// 303 to `/login?next=<its address>`; signed in as a teacher, every admin
/// page answers 403 with the notice and every other page does not refuse.
#[tokio::test]
async fn every_page_of_the_table_is_guarded_by_its_role() {
    let app = spawn_app().await;
    let teacher = app.signed_in(TEACHER).await;
    let admin = app.signed_in(ADMIN).await;
    let mut guarded = 0;
    for page in &PAGES {
        let address = page.address_with("1");
        let res = app.client.get(app.url(&address)).send().await.unwrap();
        let Some(role) = page.role else {
            assert_eq!(res.status(), 200, "{address} is open to visitors");
            continue;
        };
        guarded += 1;
        assert_eq!(res.status(), 303, "{address} signed out");
        assert_eq!(
            res.headers()["location"],
            format!("/login?next={address}"),
            "{address}"
        );
        let as_teacher = teacher.get(app.url(&address)).send().await.unwrap();
        let as_admin = admin.get(app.url(&address)).send().await.unwrap();
        assert!(
            ![303, 401, 403].contains(&as_admin.status().as_u16()),
            "{address} as admin: {}",
            as_admin.status()
        );
        let html = as_admin.text().await.unwrap();
        assert!(
            html.contains(&format!("<title>{} · Switchboard</title>", page.title)),
            "{address}: the table's title"
        );
        if role == Role::Admin {
            assert_eq!(as_teacher.status(), 403, "{address} as a teacher");
            let html = as_teacher.text().await.unwrap();
            assert!(html.contains("Not available to your account"), "{address}");
        } else {
            assert!(
                ![303, 401, 403].contains(&as_teacher.status().as_u16()),
                "{address} as a teacher: {}",
                as_teacher.status()
            );
        }
    }
    assert!(guarded >= 11, "the table lists the app's pages");
}
