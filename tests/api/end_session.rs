//! An admin's "End session" from the visualiser: admins only, once or
//! twice alike, never from another site, and everyone is told.

use crate::helpers::{spawn_app, ADMIN, TEACHER};
use crate::sessions::{call, open, read_events, subscribe};
use serde_json::json;
use switchboard::error::ApiError;

#[tokio::test]
async fn an_admin_ends_a_session_for_its_agent_and_every_watcher() {
    let app = spawn_app().await;
    let key = app.api_key().await;
    let s = open(&app, &key, "idv").await;
    let watcher = subscribe(&app, &s, None).await;
    let admin = app.signed_in(ADMIN).await;

    let res = app
        .rpc_with(&admin, "admin_end_session", &[("id", &s.id)])
        .await;
    assert_eq!(res.status(), 200, "{}", res.text().await.unwrap());
    let events = read_events(watcher, 2).await;
    assert_eq!(events[0].1["type"], "snapshot");
    assert_eq!(
        events[1].1,
        json!({"type": "ended", "data": {"reason": "ended by admin"}})
    );
    let (status, _) = call(&app, &s, "get_server_time", json!({})).await;
    assert_eq!(status, 409, "the agent's calls are refused from then on");

    // Ending it again changes nothing and is no error.
    let res = app
        .rpc_with(&admin, "admin_end_session", &[("id", &s.id)])
        .await;
    assert_eq!(res.status(), 200);
    let reason: String = sqlx::query_scalar("SELECT end_reason FROM agent_sessions WHERE id = $1")
        .bind(&s.id)
        .fetch_one(&app.state.db)
        .await
        .unwrap();
    assert_eq!(reason, "ended by admin");
}

#[tokio::test]
async fn teachers_and_strangers_cannot_end_a_session() {
    let app = spawn_app().await;
    let key = app.api_key().await;
    let s = open(&app, &key, "idv").await;

    let teacher = app.signed_in(TEACHER).await;
    let res = app
        .rpc_with(&teacher, "admin_end_session", &[("id", &s.id)])
        .await;
    assert_eq!(res.status(), 403);
    assert_eq!(
        res.json::<ApiError>().await.unwrap(),
        ApiError::Forbidden {
            needed: "admin".into()
        }
    );
    let res = app.rpc("admin_end_session", &[("id", &s.id)]).await;
    assert_eq!(res.status(), 401, "not signed in");
    let (status, _) = call(&app, &s, "get_server_time", json!({})).await;
    assert_eq!(status, 200, "the session is still open");
}

#[tokio::test]
async fn an_unknown_session_is_404() {
    let app = spawn_app().await;
    let admin = app.signed_in(ADMIN).await;
    let res = app
        .rpc_with(&admin, "admin_end_session", &[("id", "s-no-such-session")])
        .await;
    assert_eq!(res.status(), 404);
    assert!(matches!(
        res.json::<ApiError>().await.unwrap(),
        ApiError::NotFound(what) if what.contains("s-no-such-session")
    ));
}

#[tokio::test]
async fn a_cross_origin_end_is_refused_and_the_session_stays_open() {
    let app = spawn_app().await;
    let key = app.api_key().await;
    let s = open(&app, &key, "idv").await;
    let admin = app.signed_in(ADMIN).await;
    for origin in ["http://evil.example", "null"] {
        let res = admin
            .post(app.url("/rpc/admin_end_session"))
            .header("Origin", origin)
            .form(&[("id", &s.id)])
            .send()
            .await
            .unwrap();
        assert_eq!(res.status(), 403, "{origin}");
        assert_eq!(res.json::<ApiError>().await.unwrap(), ApiError::CrossOrigin);
    }
    let (status, _) = call(&app, &s, "get_server_time", json!({})).await;
    assert_eq!(status, 200, "the session is still open");
}
