//! A credential that stops being good gives back what it holds open, on
//! every instance: revoking an API key ends its event streams (not only
//! the sessions it opened), a role change ends the account's streams so
//! that what reconnects is let in by the new role, and a key revoked or an
//! account disabled through one instance ends their streams on the other
//! (`accounts::cutoff`; the two-instance test needs `TEST_POSTGRES_URL`).

use crate::accounts::{accounts_key, cookie_of, ends, make, patch, stays_open, stream};
use crate::helpers::{two_instances, TestApp, ADMIN, TEACHER};
use serde_json::{json, Value};

/// A key the signed-in `who` makes with `scopes`: its secret and id.
async fn key_of(app: &TestApp, who: &reqwest::Client, scopes: &[&str]) -> (String, String) {
    let mut form = vec![("name", "doomed")];
    form.extend(scopes.iter().map(|s| ("scopes[]", *s)));
    let created: Value = app
        .rpc_with(who, "create_api_key", &form)
        .await
        .json()
        .await
        .unwrap();
    (
        created["secret"].as_str().unwrap().to_owned(),
        created["key"]["id"].as_i64().unwrap().to_string(),
    )
}

#[tokio::test]
async fn revoking_a_key_ends_its_streams_and_no_one_elses() {
    let app = crate::helpers::spawn_app().await;
    let admin = app.signed_in(ADMIN).await;
    let (doomed, id) = key_of(&app, &admin, &["sessions", "catalogue:write"]).await;
    let (kept, _) = key_of(&app, &admin, &["sessions"]).await;
    let list = stream(&app, "/api/sessions/events", None, Some(&doomed)).await;
    let servers = stream(&app, "/api/mcp-servers/events", None, Some(&doomed)).await;
    let bystander = stream(&app, "/api/sessions/events", None, Some(&kept)).await;

    let res = app.rpc_with(&admin, "revoke_api_key", &[("id", &id)]).await;
    assert_eq!(res.status(), 200);
    assert!(ends(list).await, "the key's session-list stream ended");
    assert!(ends(servers).await, "the key's MCP-servers stream ended");
    assert!(stays_open(bystander).await, "another key's stream stays");
    let again = app
        .client
        .get(app.url("/api/sessions/events"))
        .bearer_auth(&doomed)
        .send()
        .await
        .unwrap();
    assert_eq!(again.status(), 401);
}

#[tokio::test]
async fn a_role_change_ends_the_accounts_streams_and_the_new_role_decides_again() {
    let app = crate::helpers::spawn_app().await;
    let key = accounts_key(&app).await;
    let (email, password) = ("deputy@school.example", "deputy-pass-1");
    let id = make(&app, &key, email, "admin", password).await;
    let cookie = cookie_of(&app, email, password).await;
    // An admin's stream: the MCP servers' list.
    let servers = stream(&app, "/api/mcp-servers/events", Some(&cookie), None).await;
    let teacher = cookie_of(&app, TEACHER.0, TEACHER.1).await;
    let bystander = stream(&app, "/api/sessions/events", Some(&teacher), None).await;

    let res = patch(&app, &key, id, json!({"role": "teacher"})).await;
    assert_eq!(res.status(), 200);
    assert!(ends(servers).await, "the demoted admin's stream ended");
    assert!(
        stays_open(bystander).await,
        "another account's stream stays"
    );
    let again = app
        .client
        .get(app.url("/api/mcp-servers/events"))
        .header("Cookie", &cookie)
        .send()
        .await
        .unwrap();
    assert_eq!(again.status(), 403, "reconnecting, the teacher is refused");
    // What a teacher may watch, the same cookie still opens.
    drop(stream(&app, "/api/sessions/events", Some(&cookie), None).await);
}

#[tokio::test]
async fn a_credential_ended_through_one_instance_ends_its_streams_on_the_other() {
    let test = "a_credential_ended_through_one_instance_ends_its_streams_on_the_other";
    let Some((a, b)) = two_instances(test, &[]).await else {
        return;
    };
    let key = accounts_key(&a).await;
    let (email, password) = ("deputy@school.example", "deputy-pass-1");
    let id = make(&a, &key, email, "admin", password).await;
    let cookie = cookie_of(&a, email, password).await;
    let admin = a.signed_in(ADMIN).await;
    let (doomed, doomed_id) = key_of(&a, &admin, &["sessions"]).await;

    // Streams on B; the changes made through A.
    let theirs = stream(&b, "/api/sessions/events", Some(&cookie), None).await;
    let keys = stream(&b, "/api/sessions/events", None, Some(&doomed)).await;
    let teacher = cookie_of(&b, TEACHER.0, TEACHER.1).await;
    let bystander = stream(&b, "/api/sessions/events", Some(&teacher), None).await;

    let res = a
        .rpc_with(&admin, "revoke_api_key", &[("id", &doomed_id)])
        .await;
    assert_eq!(res.status(), 200);
    assert!(ends(keys).await, "the revoked key's stream on B ended");
    let res = patch(&a, &key, id, json!({"disabled": true})).await;
    assert_eq!(res.status(), 200);
    assert!(
        ends(theirs).await,
        "the disabled account's stream on B ended"
    );
    assert!(
        stays_open(bystander).await,
        "another account's stream on B stays"
    );
}

#[tokio::test]
async fn after_missed_notices_an_instance_finds_the_credentials_that_ended() {
    // What a cluster instance does once its listener reconnected: the key
    // was revoked and the account disabled without it being told.
    let app = crate::helpers::spawn_app().await;
    let key = accounts_key(&app).await;
    let (email, password) = ("deputy@school.example", "deputy-pass-1");
    let id = make(&app, &key, email, "admin", password).await;
    let cookie = cookie_of(&app, email, password).await;
    let admin = app.signed_in(ADMIN).await;
    let (doomed, doomed_id) = key_of(&app, &admin, &["sessions"]).await;
    let (kept, _) = key_of(&app, &admin, &["sessions"]).await;
    let theirs = stream(&app, "/api/sessions/events", Some(&cookie), None).await;
    let keys = stream(&app, "/api/sessions/events", None, Some(&doomed)).await;
    let bystander = stream(&app, "/api/sessions/events", None, Some(&kept)).await;

    for (sql, id) in [
        (
            "UPDATE api_keys SET revoked_at = 1 WHERE id = $1",
            doomed_id.parse::<i64>().unwrap(),
        ),
        ("UPDATE users SET disabled_at = 1 WHERE id = $1", id),
    ] {
        sqlx::query(sql)
            .bind(id)
            .execute(&app.state.db)
            .await
            .unwrap();
    }
    switchboard::server::accounts::cutoff::recheck(&app.state).await;
    assert!(ends(keys).await, "the revoked key's stream ended");
    assert!(ends(theirs).await, "the disabled account's stream ended");
    assert!(stays_open(bystander).await, "a live key's stream stays");
}
