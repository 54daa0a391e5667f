//! Sign-in throttling: the sixth attempt within 15 minutes for one account
//! from one address is answered 429 with `Retry-After`, counted as attempts
//! start (a concurrent burst gets five password checks); another address
//! is not locked out with it; `X-Forwarded-For` is believed only from
//! `TRUSTED_PROXIES`.

use crate::helpers::{new_client, spawn_app, spawn_app_with, TestApp, ADMIN, TEACHER};
use serde_json::{json, Value};
use switchboard::domain::limits::{
    LOGIN_ADDRESS_ATTEMPTS, LOGIN_PAIR_ATTEMPTS, LOGIN_PAIR_WINDOW_SECS,
};

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
    for n in 0..LOGIN_ADDRESS_ATTEMPTS {
        let email = format!("nobody{n}@example.com");
        assert_eq!(attempt(&app, &email, "guess").await.status(), 401);
    }
    assert_eq!(attempt(&app, ADMIN.0, ADMIN.1).await.status(), 429);
}

/// A sign-in attempt as if from `address`, through a proxy at 127.0.0.1.
async fn attempt_from(
    app: &TestApp,
    address: &str,
    email: &str,
    password: &str,
) -> reqwest::Response {
    new_client()
        .post(app.url("/rpc/login"))
        .header("Origin", &app.address)
        .header("X-Forwarded-For", address)
        .form(&[("email", email), ("password", password)])
        .send()
        .await
        .expect("request")
}

#[tokio::test]
async fn a_burst_of_forty_wrong_passwords_gets_five_checks_and_429s() {
    let app = spawn_app().await;
    let burst = (0..40).map(|_| attempt(&app, ADMIN.0, "wrong"));
    let answers = futures_util::future::join_all(burst).await;
    let mut checked = 0;
    for res in &answers {
        match res.status().as_u16() {
            401 => checked += 1,
            429 => {
                let wait: u64 = res.headers()["retry-after"]
                    .to_str()
                    .unwrap()
                    .parse()
                    .unwrap();
                assert!((1..=900).contains(&wait), "{wait}");
            }
            other => panic!("unexpected {other}"),
        }
    }
    assert!(
        checked <= LOGIN_PAIR_ATTEMPTS,
        "{checked} passwords checked"
    );
    assert_eq!(checked, LOGIN_PAIR_ATTEMPTS, "the first five are checked");
    // The clock moves on, not the test: a window later, the owner gets in.
    app.state.clock.advance(LOGIN_PAIR_WINDOW_SECS);
    assert_eq!(attempt(&app, ADMIN.0, ADMIN.1).await.status(), 200);
}

#[tokio::test]
async fn a_stranger_at_one_address_does_not_lock_the_owner_out_at_another() {
    let app = spawn_app_with(&[("TRUSTED_PROXIES", "127.0.0.1")]).await;
    for _ in 0..LOGIN_PAIR_ATTEMPTS {
        let res = attempt_from(&app, "203.0.113.66", ADMIN.0, "guess").await;
        assert_eq!(res.status(), 401);
    }
    let res = attempt_from(&app, "203.0.113.66", ADMIN.0, ADMIN.1).await;
    assert_eq!(res.status(), 429, "the stranger's address is locked");
    assert!(res.headers().contains_key("retry-after"));
    let res = attempt_from(&app, "198.51.100.7", ADMIN.0, ADMIN.1).await;
    assert_eq!(res.status(), 200, "the owner, elsewhere, is not");
}

#[tokio::test]
async fn x_forwarded_for_is_ignored_unless_the_peer_is_a_trusted_proxy() {
    let app = spawn_app().await;
    for n in 0..LOGIN_PAIR_ATTEMPTS {
        let res = attempt_from(&app, &format!("203.0.113.{n}"), ADMIN.0, "guess").await;
        assert_eq!(res.status(), 401);
    }
    let res = attempt_from(&app, "198.51.100.7", ADMIN.0, ADMIN.1).await;
    assert_eq!(res.status(), 429, "a claimed address changes nothing");
}
