//! Open event streams counted across two instances on one PostgreSQL
//! database (issue #39): a session's stream cap and an account's hold
//! whichever instance each stream is opened on (each instance leases its
//! slots in the database), a slot freed on one instance is free on the
//! other within a heartbeat, and the leases of an instance killed (its
//! listener's connection gone) or that stopped refreshing them stop
//! counting. Each test needs `TEST_POSTGRES_URL`.

use crate::helpers::{two_instances, TestApp, TEACHER};
use crate::sessions::{open, Session};
use sqlx::postgres::{PgConnectOptions, PgConnection};
use sqlx::Connection;
use std::str::FromStr;
use std::time::Duration;
use switchboard::server::http::streams::lease::{ALIVE_WITHIN_MS, HEARTBEAT};
use switchboard::server::store::stream_leases::LISTENER_PREFIX;

/// Asks `app` for session `s`'s event stream: the answer once its head is in.
async fn watch(app: &TestApp, s: &Session) -> reqwest::Response {
    app.client
        .get(app.url(&format!("/api/sessions/{}/events", s.id)))
        .bearer_auth(&s.token)
        .header("Accept", "text/event-stream")
        .send()
        .await
        .unwrap()
}

/// A stream the cap let in (200) or refused (429 naming it).
async fn status_of(res: reqwest::Response) -> (u16, String) {
    let status = res.status().as_u16();
    if status == 200 {
        return (200, String::new());
    }
    (status, res.text().await.unwrap_or_default())
}

#[tokio::test]
async fn a_sessions_stream_cap_holds_across_two_instances_and_a_freed_slot_moves() {
    let test = "a_sessions_stream_cap_holds_across_two_instances_and_a_freed_slot_moves";
    let Some((a, b)) = two_instances(test, &[("MAX_STREAMS_PER_SESSION", "3")]).await else {
        return;
    };
    let s = open(&a, &a.api_key().await, "idv").await;
    let first = watch(&a, &s).await;
    let second = watch(&b, &s).await;
    let third = watch(&a, &s).await;
    for res in [&first, &second, &third] {
        assert_eq!(res.status(), 200);
    }
    for app in [&a, &b] {
        let (status, body) = status_of(watch(app, &s).await).await;
        assert_eq!(status, 429, "a fourth stream anywhere is over the cap");
        assert!(body.contains("3 open event streams per session"), "{body}");
    }
    // Freed on A: A's own lease has room at once; B gets it once A gave
    // it back (a heartbeat).
    drop(first);
    let again = wait_for_200(&a, &s, Duration::from_secs(2)).await;
    drop(again);
    let moved = wait_for_200(&b, &s, HEARTBEAT * 2 + Duration::from_secs(1)).await;
    let (status, _) = status_of(watch(&a, &s).await).await;
    assert_eq!(status, 429, "the cap still holds after the slot moved");
    drop((second, third, moved));
}

/// Opens `s`'s stream on `app` until it is let in, for at most `within`.
async fn wait_for_200(app: &TestApp, s: &Session, within: Duration) -> reqwest::Response {
    let deadline = tokio::time::Instant::now() + within;
    loop {
        let res = watch(app, s).await;
        if res.status() == 200 {
            return res;
        }
        assert!(
            tokio::time::Instant::now() < deadline,
            "no slot within {within:?}: {}",
            res.status()
        );
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
}

#[tokio::test]
async fn an_accounts_stream_cap_holds_across_two_instances() {
    let test = "an_accounts_stream_cap_holds_across_two_instances";
    let Some((a, b)) = two_instances(test, &[("MAX_STREAMS_PER_USER", "2")]).await else {
        return;
    };
    let teacher = a.signed_in(TEACHER).await;
    let list = |app: &TestApp| {
        teacher
            .get(app.url("/api/sessions/events"))
            .header("Accept", "text/event-stream")
            .send()
    };
    let one = list(&a).await.unwrap();
    let two = list(&b).await.unwrap();
    assert_eq!((one.status().as_u16(), two.status().as_u16()), (200, 200));
    for app in [&a, &b] {
        let (status, body) = status_of(list(app).await.unwrap()).await;
        assert_eq!(status, 429);
        assert!(body.contains("2 open event streams per user"), "{body}");
    }
}

#[tokio::test]
async fn the_leases_of_an_instance_killed_or_no_longer_seen_stop_counting() {
    let test = "the_leases_of_an_instance_killed_or_no_longer_seen_stop_counting";
    let Some((a, _b)) = two_instances(test, &[("MAX_STREAMS_PER_SESSION", "2")]).await else {
        return;
    };
    let key = a.api_key().await;
    let now = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_millis() as i64;
    // Listener connections of two more instances, as `cluster::listener`
    // names them: "hung" (connected, not seen for long) and "alive".
    let mut listeners = Vec::new();
    for instance in ["hung", "alive"] {
        let options = PgConnectOptions::from_str(a.database_url())
            .unwrap()
            .application_name(&format!("{LISTENER_PREFIX}{instance}"));
        listeners.push(PgConnection::connect_with(&options).await.unwrap());
    }
    // A further instance holding a session's whole cap: it counts only
    // while its listener is connected and it was seen lately.
    for (instance, seen, expected) in [
        ("killed", now + 60_000, 200),
        ("hung", now - ALIVE_WITHIN_MS - 1_000, 200),
        ("alive", now + 60_000, 429),
    ] {
        let s = open(&a, &key, "idv").await;
        sqlx::query(
            "INSERT INTO stream_leases (holder, instance, slots, seen_at_ms) VALUES ($1, $2, 2, $3)",
        )
        .bind(format!("session:{}", s.id))
        .bind(instance)
        .bind(seen)
        .execute(&a.state.db)
        .await
        .unwrap();
        let (status, _) = status_of(watch(&a, &s).await).await;
        assert_eq!(status, expected, "{instance}");
    }
    drop(listeners);
}

/// A raw MCP `initialize` on `app`'s workflow endpoint with `key`: the
/// status and the session id it opened.
async fn initialize(app: &TestApp, key: &str) -> (u16, Option<String>) {
    let res = app
        .client
        .post(app.url("/mcp"))
        .bearer_auth(key)
        .header("accept", "application/json, text/event-stream")
        .json(&serde_json::json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
            "protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "x", "version": "1"}}}))
        .send()
        .await
        .unwrap();
    let id = res
        .headers()
        .get("mcp-session-id")
        .and_then(|v| v.to_str().ok())
        .map(str::to_owned);
    (res.status().as_u16(), id)
}

#[tokio::test]
async fn a_credentials_mcp_sessions_are_capped_across_two_instances() {
    use switchboard::domain::api_key::Scope;
    use switchboard::domain::limits::MCP_SESSIONS_PER_CREDENTIAL;
    let test = "a_credentials_mcp_sessions_are_capped_across_two_instances";
    let Some((a, b)) = two_instances(test, &[]).await else {
        return;
    };
    let key = a.api_key_with(&[Scope::WorkflowsWrite]).await;
    let mut on_a = Vec::new();
    for n in 0..MCP_SESSIONS_PER_CREDENTIAL {
        let app = if n % 2 == 0 { &a } else { &b };
        let (status, id) = initialize(app, &key).await;
        assert_eq!(status, 200, "initialize {n}");
        if n % 2 == 0 {
            on_a.push(id.unwrap());
        }
    }
    for app in [&a, &b] {
        let (status, _) = initialize(app, &key).await;
        assert_eq!(status, 429, "one past the cap, on either instance");
    }
    // Ending one on A frees its slot.
    let res = a
        .client
        .delete(a.url("/mcp"))
        .bearer_auth(&key)
        .header("mcp-session-id", &on_a[0])
        .send()
        .await
        .unwrap();
    assert!(res.status().is_success(), "DELETE: {}", res.status());
    assert_eq!(initialize(&a, &key).await.0, 200);
}
