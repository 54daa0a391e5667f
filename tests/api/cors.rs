//! Cross-origin access (`API_ORIGINS`): the session and plugin API, the
//! join exchange and the client module answer the listed origins (or any,
//! with `*`), preflights included and answered before any authentication;
//! an origin not listed gets no CORS headers (its preflight is 403); routes
//! a cookie authenticates, and any request carrying the sign-in cookie,
//! never answer another origin; credentials are never allowed. Event
//! streams written on the bare socket carry the same headers.

use crate::helpers::{new_client, spawn_app, spawn_app_with, TestApp, TEACHER};
use crate::sessions::{open, Session};
use reqwest::header::HeaderMap;
use reqwest::Method;
use serde_json::json;
use tokio::io::{AsyncReadExt, AsyncWriteExt};

const CODAP: &str = "https://codap.example";
const ELSEWHERE: &str = "https://elsewhere.example";

async fn listed() -> TestApp {
    spawn_app_with(&[(
        "API_ORIGINS",
        "https://codap.example, http://localhost:9999",
    )])
    .await
}

/// A preflight of `method path` from `origin` asking to send `headers`.
async fn preflight(
    app: &TestApp,
    path: &str,
    origin: &str,
    method: &str,
    headers: &str,
) -> reqwest::Response {
    app.client
        .request(Method::OPTIONS, app.url(path))
        .header("Origin", origin)
        .header("Access-Control-Request-Method", method)
        .header("Access-Control-Request-Headers", headers)
        .send()
        .await
        .unwrap()
}

fn header<'a>(headers: &'a HeaderMap, name: &str) -> &'a str {
    headers
        .get(name)
        .map_or("", |v| v.to_str().unwrap_or_default())
}

fn lists(headers: &HeaderMap, name: &str, wanted: &[&str]) {
    let value = header(headers, name).to_ascii_lowercase();
    let items: Vec<&str> = value.split(',').map(str::trim).collect();
    for w in wanted {
        assert!(
            items.contains(&w.to_ascii_lowercase().as_str()),
            "{name}: {value} lacks {w}"
        );
    }
}

fn varies_by_origin(headers: &HeaderMap) -> bool {
    headers.get_all("vary").iter().any(|v| {
        v.to_str()
            .unwrap_or_default()
            .to_ascii_lowercase()
            .contains("origin")
    })
}

fn no_cors(headers: &HeaderMap, what: &str) {
    assert!(
        headers.get("access-control-allow-origin").is_none(),
        "{what}: {headers:?}"
    );
    assert!(
        headers.get("access-control-allow-credentials").is_none(),
        "{what}: {headers:?}"
    );
}

#[tokio::test]
async fn a_listed_origins_preflight_is_answered_before_any_authentication() {
    let app = listed().await;
    // No such session, no token: the preflight is answered all the same.
    let res = preflight(
        &app,
        "/api/sessions/nope/tool-calls",
        CODAP,
        "POST",
        "authorization, content-type",
    )
    .await;
    assert_eq!(res.status(), 204);
    let h = res.headers();
    assert_eq!(header(h, "access-control-allow-origin"), CODAP);
    lists(
        h,
        "access-control-allow-methods",
        &["GET", "POST", "PATCH", "PUT", "DELETE", "OPTIONS"],
    );
    lists(
        h,
        "access-control-allow-headers",
        &[
            "Authorization",
            "Content-Type",
            "Last-Event-ID",
            "Mcp-Session-Id",
            "Mcp-Protocol-Version",
            "If-Match",
            "If-Modified-Since",
        ],
    );
    assert_eq!(header(h, "access-control-max-age"), "3600");
    assert!(varies_by_origin(h), "{h:?}");
    assert!(h.get("access-control-allow-credentials").is_none());
    // The plugin stream, the session MCP endpoint, the join exchange and
    // the client module too.
    for path in [
        "/api/sessions/nope/plugin-events",
        "/api/sessions/nope/mcp",
        "/api/plugins/join",
        "/clients/switchboard.js",
    ] {
        let res = preflight(&app, path, "http://localhost:9999", "GET", "last-event-id").await;
        assert_eq!(res.status(), 204, "{path}");
        assert_eq!(
            header(res.headers(), "access-control-allow-origin"),
            "http://localhost:9999"
        );
    }
}

#[tokio::test]
async fn a_listed_origin_reads_answers_and_their_exposed_headers() {
    let app = listed().await;
    let key = app.api_key().await;
    let s = open(&app, &key, "idv").await;
    let res = app
        .client
        .post(app.url(&format!("/api/sessions/{}/tool-calls", s.id)))
        .header("Origin", CODAP)
        .bearer_auth(&s.token)
        .json(&json!({"name": "get_server_time"}))
        .send()
        .await
        .unwrap();
    assert_eq!(res.status(), 200);
    let h = res.headers();
    assert_eq!(header(h, "access-control-allow-origin"), CODAP);
    lists(
        h,
        "access-control-expose-headers",
        &[
            "Mcp-Session-Id",
            "Retry-After",
            "ETag",
            "Last-Modified",
            "API-Version",
            "Session-ID",
            "Server-Timing",
        ],
    );
    assert!(varies_by_origin(h));
    assert!(h.get("access-control-allow-credentials").is_none());
    // Refusals are readable too (a plugin shows them).
    let res = app
        .client
        .post(app.url("/api/plugins/join"))
        .header("Origin", CODAP)
        .json(&json!({"code": "22222222"}))
        .send()
        .await
        .unwrap();
    assert_eq!(res.status(), 404);
    assert_eq!(header(res.headers(), "access-control-allow-origin"), CODAP);
}

#[tokio::test]
async fn an_origin_not_listed_gets_no_cors_headers() {
    let app = listed().await;
    let key = app.api_key().await;
    let s = open(&app, &key, "idv").await;
    let res = preflight(
        &app,
        &format!("/api/sessions/{}/tool-calls", s.id),
        ELSEWHERE,
        "POST",
        "authorization",
    )
    .await;
    assert_eq!(res.status(), 403);
    no_cors(res.headers(), "preflight");
    assert!(res.headers().get("access-control-allow-methods").is_none());
    let res = app
        .client
        .get(app.url(&format!("/api/sessions/{}/calls", s.id)))
        .header("Origin", ELSEWHERE)
        .bearer_auth(&s.token)
        .send()
        .await
        .unwrap();
    assert_eq!(res.status(), 200);
    no_cors(res.headers(), "answer");
    assert!(varies_by_origin(res.headers()));
}

#[tokio::test]
async fn a_star_answers_any_origin_with_a_star_and_never_credentials() {
    let app = spawn_app_with(&[("API_ORIGINS", "*")]).await;
    let key = app.api_key().await;
    let s = open(&app, &key, "idv").await;
    let res = preflight(
        &app,
        &format!("/api/sessions/{}/register-tools", s.id),
        ELSEWHERE,
        "POST",
        "authorization, content-type",
    )
    .await;
    assert_eq!(res.status(), 204);
    assert_eq!(header(res.headers(), "access-control-allow-origin"), "*");
    assert!(res
        .headers()
        .get("access-control-allow-credentials")
        .is_none());
    let res = app
        .client
        .get(app.url(&format!("/api/sessions/{}/calls", s.id)))
        .header("Origin", ELSEWHERE)
        .bearer_auth(&s.token)
        .send()
        .await
        .unwrap();
    assert_eq!(header(res.headers(), "access-control-allow-origin"), "*");
    assert!(res
        .headers()
        .get("access-control-allow-credentials")
        .is_none());
}

#[tokio::test]
async fn cookie_routes_and_cookie_requests_never_answer_another_origin() {
    let app = spawn_app_with(&[("API_ORIGINS", "*")]).await;
    let key = app.teacher_key().await;
    let s = open(&app, &key, "idv").await;
    app.login(TEACHER).await;
    // Server functions, pages and the session list: no preflight answer, no headers.
    for path in [
        "/rpc/list_sessions",
        "/rpc/issue_join_code",
        "/sessions",
        "/api/sessions",
        "/api/sessions/events",
        "/agents/manifests",
    ] {
        let res = preflight(&app, path, CODAP, "POST", "content-type").await;
        assert_ne!(res.status(), 204, "{path}");
        no_cors(res.headers(), path);
    }
    let res = app
        .client
        .post(app.url("/rpc/list_sessions"))
        .header("Origin", CODAP)
        .send()
        .await
        .unwrap();
    assert_eq!(res.status(), 403);
    no_cors(res.headers(), "server function");
    let res = app
        .client
        .get(app.url(&format!("/sessions/{}", s.id)))
        .header("Origin", CODAP)
        .send()
        .await
        .unwrap();
    assert_eq!(res.status(), 200);
    no_cors(res.headers(), "page");
    let res = app
        .client
        .get(app.url("/api/sessions"))
        .header("Origin", CODAP)
        .send()
        .await
        .unwrap();
    assert_eq!(res.status(), 200);
    no_cors(res.headers(), "session list");
    // A session route a signed-in user may read with the cookie: not
    // across origins, though a token route would answer without it.
    let res = app
        .client
        .get(app.url(&format!("/api/sessions/{}/calls", s.id)))
        .header("Origin", CODAP)
        .send()
        .await
        .unwrap();
    assert_eq!(res.status(), 200);
    no_cors(res.headers(), "session route with the cookie");
}

#[tokio::test]
async fn without_api_origins_nothing_answers_another_origin() {
    let app = spawn_app().await;
    let key = app.api_key().await;
    let s = open(&app, &key, "idv").await;
    let res = preflight(
        &app,
        &format!("/api/sessions/{}/tool-calls", s.id),
        CODAP,
        "POST",
        "authorization",
    )
    .await;
    // Refused as from an origin not listed, in the same words.
    assert_eq!(res.status(), 403);
    no_cors(res.headers(), "preflight");
    assert_eq!(
        res.headers()["x-content-type-options"],
        "nosniff",
        "a refused preflight carries the security headers"
    );
    let body: serde_json::Value = res.json().await.unwrap();
    assert_eq!(
        body,
        json!({"Forbidden": {"needed": "an origin listed in API_ORIGINS"}})
    );
    let res = app
        .client
        .get(app.url(&format!("/api/sessions/{}/calls", s.id)))
        .header("Origin", CODAP)
        .bearer_auth(&s.token)
        .send()
        .await
        .unwrap();
    no_cors(res.headers(), "answer");
}

/// The head of an event stream asked for from `origin` as the first
/// request of a new connection (answered on the bare socket).
async fn stream_head(app: &TestApp, path: &str, origin: &str) -> String {
    let mut tcp = tokio::net::TcpStream::connect(app.address.trim_start_matches("http://"))
        .await
        .unwrap();
    let request = format!(
        "GET {path} HTTP/1.1\r\nHost: x\r\nAccept: text/event-stream\r\nOrigin: {origin}\r\n\r\n"
    );
    tcp.write_all(request.as_bytes()).await.unwrap();
    let mut raw = Vec::new();
    let mut buf = [0u8; 1024];
    while !raw.windows(4).any(|w| w == b"\r\n\r\n") {
        let n = tokio::time::timeout(std::time::Duration::from_secs(5), tcp.read(&mut buf))
            .await
            .expect("a head within 5 s")
            .unwrap();
        assert!(
            n > 0,
            "closed before the head: {}",
            String::from_utf8_lossy(&raw)
        );
        raw.extend_from_slice(&buf[..n]);
    }
    let text = String::from_utf8_lossy(&raw).to_ascii_lowercase();
    text[..text.find("\r\n\r\n").unwrap()].to_owned()
}

#[tokio::test]
async fn event_streams_on_the_bare_socket_carry_the_cors_headers() {
    let app = listed().await;
    let key = app.api_key().await;
    let s: Session = open(&app, &key, "idv").await;
    for path in [
        format!("/api/sessions/{}/events?token={}", s.id, s.token),
        format!("/api/sessions/{}/plugin-events?token={}", s.id, s.token),
    ] {
        let head = stream_head(&app, &path, CODAP).await;
        assert!(head.starts_with("http/1.1 200"), "{head}");
        // Written by `serve::direct`, which always closes after the stream.
        assert!(head.contains("connection: close"), "{head}");
        assert!(head.contains("content-type: text/event-stream"), "{head}");
        assert!(
            head.contains(&format!("access-control-allow-origin: {CODAP}")),
            "{head}"
        );
        assert!(!head.contains("access-control-allow-credentials"), "{head}");
        let head = stream_head(&app, &path, ELSEWHERE).await;
        assert!(!head.contains("access-control-allow-origin"), "{head}");
    }
    // The same through hyper: a stream asked for on a kept-alive connection.
    let client = new_client();
    let first = client.get(app.url("/healthz")).send().await.unwrap();
    first.text().await.unwrap();
    let res = client
        .get(app.url(&format!("/api/sessions/{}/events?token={}", s.id, s.token)))
        .header("Origin", CODAP)
        .header("Accept", "text/event-stream")
        .send()
        .await
        .unwrap();
    assert_eq!(header(res.headers(), "access-control-allow-origin"), CODAP);
}
