//! Sign-in throttling: the sixth wrong password within 15 minutes, for one
//! account or from one address, is answered 429 with `Retry-After`.

use crate::helpers::{new_client, spawn_app, TestApp, ADMIN, TEACHER};
use serde_json::{json, Value};

async fn attempt(app: &TestApp, email: &str, password: &str) -> reqwest::Response {
    app.rpc_with(
        &new_client(),
        "login",
        &[("email", email), ("password", password)],
    )
    .await
}

#[tokio::test]
async fn the_sixth_wrong_password_is_429_with_retry_after_even_if_right() {
    let app = spawn_app().await;
    for _ in 0..5 {
        assert_eq!(attempt(&app, ADMIN.0, "wrong").await.status(), 401);
    }
    let res = attempt(&app, ADMIN.0, ADMIN.1).await;
    assert_eq!(res.status(), 429);
    let wait: u64 = res.headers()["retry-after"]
        .to_str()
        .unwrap()
        .parse()
        .unwrap();
    assert!((840..=900).contains(&wait), "{wait}");
    let body: Value = res.json().await.unwrap();
    assert_eq!(body, json!({"TooManyAttempts": {"retry_after_secs": wait}}));
    assert_eq!(app.session_rows().await, 0);
}

#[tokio::test]
async fn a_success_forgives_earlier_failures() {
    let app = spawn_app().await;
    for _ in 0..4 {
        assert_eq!(attempt(&app, TEACHER.0, "wrong").await.status(), 401);
    }
    assert_eq!(attempt(&app, TEACHER.0, TEACHER.1).await.status(), 200);
    for _ in 0..5 {
        assert_eq!(attempt(&app, TEACHER.0, "wrong").await.status(), 401);
    }
    assert_eq!(attempt(&app, TEACHER.0, "wrong").await.status(), 429);
}

#[tokio::test]
async fn one_address_guessing_many_accounts_is_throttled_too() {
    let app = spawn_app().await;
    for n in 0..5 {
        let email = format!("nobody{n}@example.com");
        assert_eq!(attempt(&app, &email, "guess").await.status(), 401);
    }
    assert_eq!(attempt(&app, ADMIN.0, ADMIN.1).await.status(), 429);
}
