//! `Server-Timing: app;dur=…` on API answers: present, parseable, never
//! more than the client's own round trip, and absent where it means
//! nothing (event streams, pages).

use crate::helpers::spawn_app;
use crate::sessions::open;
use serde_json::json;
use std::time::Instant;

/// The `app` duration in milliseconds, if the answer has the header.
fn app_ms(res: &reqwest::Response) -> Option<f64> {
    let value = res.headers().get("server-timing")?.to_str().ok()?;
    let metric = value.split(',').find(|m| m.trim().starts_with("app;"))?;
    metric
        .split(';')
        .find_map(|p| p.trim().strip_prefix("dur="))?
        .parse()
        .ok()
}

#[tokio::test]
async fn a_plugin_registration_says_how_long_the_server_took() {
    let app = spawn_app().await;
    let key = app.api_key().await;
    let s = open(&app, &key, "idv").await;
    let tools: Vec<_> = (0..200)
        .map(|i| json!({"name": format!("t{i}"), "description": "A tool.",
            "parameters": {"type": "object", "properties": {"n": {"type": "integer", "maximum": i}}}}))
        .collect();
    let started = Instant::now();
    let res = app
        .client
        .post(app.url(&format!("/api/sessions/{}/register-tools", s.id)))
        .bearer_auth(&s.token)
        .json(&json!({"pluginType": "custom", "pluginVersion": "1", "availableTools": tools}))
        .send()
        .await
        .unwrap();
    let round_trip_ms = started.elapsed().as_secs_f64() * 1000.0;
    assert_eq!(res.status(), 201);
    let server_ms = app_ms(&res).expect("Server-Timing app;dur=…");
    assert!(
        server_ms > 0.0 && server_ms <= round_trip_ms,
        "server {server_ms} ms, round trip {round_trip_ms} ms"
    );
}

#[tokio::test]
async fn plugin_refusals_carry_server_timing_but_streams_and_pages_do_not() {
    let app = spawn_app().await;
    let key = app.api_key().await;
    let s = open(&app, &key, "idv").await;
    let refused = app
        .client
        .post(app.url(&format!("/api/sessions/{}/register-tools", s.id)))
        .bearer_auth("pt_not_a_token")
        .json(&json!({"pluginType": "custom", "pluginVersion": "1", "availableTools": []}))
        .send()
        .await
        .unwrap();
    assert_eq!(refused.status(), 401);
    assert!(app_ms(&refused).is_some_and(|ms| ms >= 0.0));
    let stream = app
        .client
        .get(app.url(&format!("/api/sessions/{}/plugin-events", s.id)))
        .bearer_auth(&s.token)
        .send()
        .await
        .unwrap();
    assert_eq!(stream.status(), 200);
    assert!(stream.headers().get("server-timing").is_none());
    let health = app.client.get(app.url("/healthz")).send().await.unwrap();
    assert_eq!(health.status(), 200);
    assert!(health.headers().get("server-timing").is_none());
}
