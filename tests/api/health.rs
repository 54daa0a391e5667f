use crate::helpers::{on_postgres, spawn_app};

#[tokio::test]
async fn healthz_answers_ok_when_the_database_is_reachable() {
    let app = spawn_app().await;
    let res = app.client.get(app.url("/healthz")).send().await.unwrap();
    assert_eq!(res.status(), 200);
    let body: serde_json::Value = res.json().await.unwrap();
    assert_eq!(body["status"], "ok");
    let kind = if on_postgres().is_some() {
        "postgres"
    } else {
        "sqlite"
    };
    assert_eq!(body["database"], kind);
}

#[tokio::test]
async fn healthz_needs_no_sign_in_and_reports_a_lost_database() {
    let app = spawn_app().await;
    app.state.db.close().await;
    let res = app.client.get(app.url("/healthz")).send().await.unwrap();
    assert_eq!(res.status(), 503);
}
