//! API keys carry scopes: a call outside them is 403 naming the missing
//! scope; `If-Match: *` cannot replace the policy; revoking a key ends the
//! sessions it opened; keys record when they were last used.

use crate::freed::ends;
use crate::helpers::{spawn_app, TestApp, ADMIN};
use crate::sessions::{open, subscribe};
use serde_json::{json, Value};
use switchboard::domain::api_key::Scope;

async fn put_bindings(app: &TestApp, key: &str, if_match: &str) -> reqwest::Response {
    let current: Value = app
        .client
        .get(app.url("/api/bindings"))
        .bearer_auth(app.api_key().await)
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    app.client
        .put(app.url("/api/bindings"))
        .bearer_auth(key)
        .header("If-Match", if_match)
        .json(&current)
        .send()
        .await
        .unwrap()
}

#[tokio::test]
async fn a_key_without_bindings_write_cannot_replace_the_policy() {
    let app = spawn_app().await;
    let reader = app.api_key_with(&Scope::LEGACY).await;
    let res = put_bindings(&app, &reader, "\"1\"").await;
    assert_eq!(res.status(), 403);
    assert_eq!(
        res.json::<Value>().await.unwrap(),
        json!({"MissingScope": {"scope": "bindings:write"}})
    );
    let writer = app.api_key_with(&[Scope::BindingsWrite]).await;
    assert_eq!(put_bindings(&app, &writer, "\"1\"").await.status(), 200);
}

#[tokio::test]
async fn if_match_star_is_not_any_version() {
    let app = spawn_app().await;
    let writer = app.api_key_with(&[Scope::BindingsWrite]).await;
    let res = put_bindings(&app, &writer, "*").await;
    assert_eq!(res.status(), 412);
    let versions: i64 = sqlx::query_scalar("SELECT COUNT(*) FROM bindings_versions")
        .fetch_one(&app.state.db)
        .await
        .unwrap();
    assert_eq!(versions, 1);
}

#[tokio::test]
async fn each_endpoint_needs_its_own_scope() {
    let app = spawn_app().await;
    let prompts_only = app.api_key_with(&[Scope::LessonsRead]).await;
    let res = app
        .client
        .post(app.url("/api/sessions"))
        .bearer_auth(&prompts_only)
        .json(&json!({"workflowId": "idv"}))
        .send()
        .await
        .unwrap();
    assert_eq!(res.status(), 403);
    assert_eq!(
        res.json::<Value>().await.unwrap()["MissingScope"]["scope"],
        "sessions"
    );
    for (path, scope) in [
        ("/api/bindings", "bindings:read"),
        ("/api/sessions", "sessions"),
    ] {
        let res = app
            .client
            .get(app.url(path))
            .bearer_auth(&prompts_only)
            .send()
            .await
            .unwrap();
        assert_eq!(res.status(), 403, "{path}");
        assert_eq!(
            res.json::<Value>().await.unwrap()["MissingScope"]["scope"],
            scope
        );
    }
    let sessions_only = app.api_key_with(&[Scope::Sessions]).await;
    let res = app
        .client
        .get(app.url("/api/lessons/1/prompt"))
        .bearer_auth(&sessions_only)
        .send()
        .await
        .unwrap();
    assert_eq!(res.status(), 403);
}

#[tokio::test]
async fn keys_made_before_scopes_keep_all_but_bindings_write() {
    let app = spawn_app().await;
    sqlx::query(
        "INSERT INTO api_keys (name, key_hash, prefix, created_at) VALUES ('old', 'h', 'sb_x', 0)",
    )
    .execute(&app.state.db)
    .await
    .unwrap();
    let keys = switchboard::server::store::api_keys::list(&app.state.db, None)
        .await
        .unwrap();
    assert_eq!(keys[0].scopes, Scope::LEGACY);
}

#[tokio::test]
async fn admins_create_keys_with_scopes_and_see_when_they_were_used() {
    let app = spawn_app().await;
    let admin = app.signed_in(ADMIN).await;
    let res = app
        .rpc_with(
            &admin,
            "create_api_key",
            &[
                ("name", "writer"),
                ("scopes[]", "sessions"),
                ("scopes[]", "bindings:write"),
            ],
        )
        .await;
    assert_eq!(res.status(), 200);
    let created: Value = res.json().await.unwrap();
    assert_eq!(
        created["key"]["scopes"],
        json!(["sessions", "bindings:write"])
    );
    assert_eq!(created["key"]["last_used_at"], Value::Null);
    let secret = created["secret"].as_str().unwrap();
    open(&app, secret, "idv").await;
    let listed: Vec<Value> = app
        .rpc_with(&admin, "list_api_keys", &[])
        .await
        .json()
        .await
        .unwrap();
    assert!(listed[0]["last_used_at"].as_i64().unwrap() > 0);

    for form in [
        vec![("name", "none")],
        vec![("name", "bad"), ("scopes[]", "root")],
    ] {
        let res = app.rpc_with(&admin, "create_api_key", &form).await;
        assert_eq!(res.status(), 422);
        assert_eq!(
            res.json::<Value>().await.unwrap()["Invalid"]["field"],
            "scopes"
        );
    }
}

#[tokio::test]
async fn revoking_a_key_ends_the_sessions_it_opened() {
    let app = spawn_app().await;
    let admin = app.signed_in(ADMIN).await;
    let created: Value = app
        .rpc_with(
            &admin,
            "create_api_key",
            &[("name", "voice"), ("scopes[]", "sessions")],
        )
        .await
        .json()
        .await
        .unwrap();
    let secret = created["secret"].as_str().unwrap();
    let id = created["key"]["id"].as_i64().unwrap().to_string();
    let doomed = open(&app, secret, "idv").await;
    let other = open(&app, &app.api_key().await, "idv").await;
    let watcher = subscribe(&app, &doomed, None).await;
    let res = app.rpc_with(&admin, "revoke_api_key", &[("id", &id)]).await;
    assert_eq!(res.status(), 200);
    assert!(ends(watcher).await);
    let ended: Option<String> =
        sqlx::query_scalar("SELECT end_reason FROM agent_sessions WHERE id = $1")
            .bind(&doomed.id)
            .fetch_one(&app.state.db)
            .await
            .unwrap();
    assert_eq!(ended.as_deref(), Some("API key revoked"));
    let still_open: Option<i64> =
        sqlx::query_scalar("SELECT ended_at FROM agent_sessions WHERE id = $1")
            .bind(&other.id)
            .fetch_one(&app.state.db)
            .await
            .unwrap();
    assert_eq!(still_open, None);
    // The ended session's channel is gone; the other's stays where the
    // hub keeps one (on PostgreSQL, only for sessions watched here).
    let kept = usize::from(crate::helpers::on_postgres().is_none());
    assert_eq!(app.state.hub.live_sessions(), kept);
}
