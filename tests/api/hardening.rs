//! Limits on what one session or request can try: identity checks lock
//! after repeated failures, session tokens travel in headers (a query
//! string only for the event stream), and pages carry security headers.

use crate::helpers::spawn_app;
use crate::sessions::{call, open, subscribe};
use serde_json::json;

#[tokio::test]
async fn identity_checks_lock_after_five_failures_in_a_session() {
    let app = spawn_app().await;
    let key = app.api_key().await;
    let s = open(&app, &key, "idv").await;
    let wrong =
        json!({"accountNumber": "12345678", "sortCode": "12-34-56", "dateOfBirth": "1999-01-01"});
    for _ in 0..5 {
        let (status, body) = call(&app, &s, "perform_idv_check", wrong.clone()).await;
        assert_eq!(
            (status, body["result"]["verified"].clone()),
            (200, json!(false))
        );
    }
    let (_, body) = call(&app, &s, "perform_idv_check", crate::sessions::idv()).await;
    assert_eq!(body["allowed"], false);
    assert!(
        body["reason"].as_str().unwrap().contains("locked"),
        "{body}"
    );
    assert_eq!(body["state"]["failedIdentityChecks"], 5);
    // Another session is not affected.
    let fresh = open(&app, &key, "idv").await;
    let (_, body) = call(&app, &fresh, "perform_idv_check", crate::sessions::idv()).await;
    assert_eq!(body["result"]["verified"], true);
}

#[tokio::test]
async fn session_tokens_in_the_query_string_work_only_for_the_event_stream() {
    let app = spawn_app().await;
    let key = app.api_key().await;
    let s = open(&app, &key, "idv").await;
    let res = app
        .client
        .post(app.url(&format!(
            "/api/sessions/{}/tool-calls?token={}",
            s.id, s.token
        )))
        .json(&json!({"name": "get_server_time"}))
        .send()
        .await
        .unwrap();
    assert_eq!(res.status(), 401);
    let res = app
        .client
        .get(app.url(&format!("/api/sessions/{}/tools?token={}", s.id, s.token)))
        .send()
        .await
        .unwrap();
    assert_eq!(res.status(), 401);
    subscribe(&app, &s, None).await; // asserts 200 with ?token=
}

#[tokio::test]
async fn pages_carry_security_headers() {
    let app = spawn_app().await;
    let res = app.client.get(app.url("/login")).send().await.unwrap();
    assert_eq!(res.status(), 200);
    let h = res.headers();
    assert_eq!(h["x-content-type-options"], "nosniff");
    assert_eq!(h["referrer-policy"], "same-origin");
    let csp = h["content-security-policy"].to_str().unwrap().to_owned();
    assert!(csp.contains("frame-ancestors 'self';"), "{csp}");
    assert!(csp.contains("object-src 'none'"), "{csp}");
    assert!(csp.contains("default-src 'self'"), "{csp}");
    assert!(!csp.contains("unsafe-inline"), "{csp}");
    let nonce = csp
        .split("'nonce-")
        .nth(1)
        .and_then(|rest| rest.split('\'').next())
        .expect("script-src names a nonce")
        .to_owned();
    assert!(nonce.len() >= 22, "128-bit nonce: {nonce}");
    let html = res.text().await.unwrap();
    let scripts: Vec<&str> = html.split("<script").skip(1).collect();
    assert!(!scripts.is_empty(), "{html}");
    for script in scripts {
        let tag = script.split('>').next().unwrap();
        assert!(
            tag.contains(&format!("nonce=\"{nonce}\"")),
            "every inline script carries this response's nonce: <script{tag}>"
        );
    }
    let again = app.client.get(app.url("/login")).send().await.unwrap();
    let csp_again = again.headers()["content-security-policy"].to_str().unwrap();
    assert!(!csp_again.contains(&nonce), "a fresh nonce per response");
    let res = app.client.get(app.url("/healthz")).send().await.unwrap();
    assert_eq!(res.headers()["x-content-type-options"], "nosniff");
    assert!(res.headers().get("content-security-policy").is_none());
}

#[tokio::test]
async fn a_signed_in_user_may_hold_only_so_many_event_streams() {
    let app = spawn_app().await;
    let admin = app.signed_in(crate::helpers::ADMIN).await;
    let mut open = Vec::new();
    for _ in 0..50 {
        let res = admin
            .get(app.url("/api/sessions/events"))
            .send()
            .await
            .unwrap();
        assert_eq!(res.status(), 200);
        open.push(res);
    }
    let res = admin
        .get(app.url("/api/sessions/events"))
        .send()
        .await
        .unwrap();
    assert_eq!(res.status(), 429);
    let body: serde_json::Value = res.json().await.unwrap();
    assert_eq!(
        body["TooManyStreams"]["limit"],
        "50 open event streams per user"
    );
    drop(open.pop());
    // The freed slot is given back once the server notices the close.
    let mut status = 0;
    for _ in 0..50 {
        tokio::time::sleep(std::time::Duration::from_millis(20)).await;
        let res = admin
            .get(app.url("/api/sessions/events"))
            .send()
            .await
            .unwrap();
        status = res.status().as_u16();
        if status == 200 {
            break;
        }
    }
    assert_eq!(status, 200);
    drop(open);
}
