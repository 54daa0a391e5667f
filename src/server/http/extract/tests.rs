//! The extractors' refusals, as a handler's caller sees them.

use super::*;
use crate::domain::limits::bytes_in_words;
use crate::error::ApiError;
use axum::body::Body;
use axum::http::Request as HttpRequest;
use axum::http::{header, HeaderMap};
use serde::Deserialize;

#[test]
fn a_wrong_shape_names_the_field_and_the_rule() {
    let (field, rule) = data_error("Failed to deserialize the JSON body into the target type: messages[0].role: unknown variant `system`, expected one of `user`, `assistant`, `tool` at line 1 column 60");
    assert_eq!(field, "messages[0].role");
    assert_eq!(
        rule,
        "unknown variant `system`, expected one of `user`, `assistant`, `tool`"
    );
    let (field, rule) = data_error("Failed to deserialize the JSON body into the target type: missing field `name` at line 1 column 2");
    assert_eq!(
        (field.as_str(), rule.as_str()),
        ("body", "missing field `name`")
    );
}

#[derive(Debug, Deserialize)]
struct Named {
    name: String,
}

/// What a route taking `JsonBody<Named, 100>` (or `FastJsonBody`) under
/// a 100-byte body limit answers `body` sent as `content_type`.
async fn answer(fast: bool, content_type: Option<&str>, body: &str) -> (u16, serde_json::Value) {
    use axum::extract::DefaultBodyLimit;
    use axum::routing::post;
    use tower::ServiceExt;
    let route = if fast {
        post(|FastJsonBody(n): FastJsonBody<Named, 100>| async move { n.name })
    } else {
        post(|JsonBody(n): JsonBody<Named, 100>| async move { n.name })
    };
    let app = axum::Router::new()
        .route("/", route)
        .layer(DefaultBodyLimit::max(100));
    let mut req = HttpRequest::builder().method("POST").uri("/");
    if let Some(ct) = content_type {
        req = req.header(header::CONTENT_TYPE, ct);
    }
    let req = req.body(Body::from(body.to_owned())).expect("request");
    let response = app.oneshot(req).await.expect("answered");
    let status = response.status().as_u16();
    let bytes = axum::body::to_bytes(response.into_body(), 1 << 16)
        .await
        .expect("body");
    let value = serde_json::from_slice(&bytes)
        .unwrap_or(serde_json::json!(String::from_utf8_lossy(&bytes)));
    (status, value)
}

#[tokio::test]
async fn a_body_of_the_wrong_shape_is_422_naming_the_field() {
    for fast in [false, true] {
        for (text, field) in [(r#"{"name": 3}"#, "name"), ("{}", "body")] {
            let (status, body) = answer(fast, Some("application/json"), text).await;
            assert_eq!(status, 422, "{body}");
            match serde_json::from_value::<ApiError>(body) {
                Ok(ApiError::Invalid(e)) => assert_eq!(e.field, field),
                other => panic!("not a field error: {other:?}"),
            }
        }
    }
}

#[tokio::test]
async fn a_body_that_is_not_json_or_not_sent_as_json_is_400() {
    for fast in [false, true] {
        for (ct, text) in [
            (Some("application/json"), "{not json"),
            (Some("text/plain"), r#"{"name": "a"}"#),
            (None, r#"{"name": "a"}"#),
        ] {
            let (status, body) = answer(fast, ct, text).await;
            assert_eq!(status, 400, "{ct:?} {text}: {body}");
            let err = serde_json::from_value::<ApiError>(body);
            assert!(matches!(err, Ok(ApiError::BadRequest(_))), "{err:?}");
        }
    }
}

#[tokio::test]
async fn a_body_over_its_limit_is_413_naming_the_limit() {
    let big = format!(r#"{{"name": "{}"}}"#, "a".repeat(200));
    for fast in [false, true] {
        let (status, body) = answer(fast, Some("application/json"), &big).await;
        assert_eq!(status, 413, "{body}");
        let expected = serde_json::to_value(ApiError::TooLarge {
            field: "body".into(),
            limit: bytes_in_words(100),
        })
        .unwrap();
        assert_eq!(body, expected);
    }
}

#[tokio::test]
async fn an_archive_over_its_limit_is_413_naming_the_limit() {
    use axum::extract::DefaultBodyLimit;
    use axum::routing::post;
    use tower::ServiceExt;
    let app = axum::Router::new()
        .route(
            "/",
            post(|BytesBody(b): BytesBody<100>| async move { b.len().to_string() }),
        )
        .layer(DefaultBodyLimit::max(100));
    let send = |len: usize| {
        let req = HttpRequest::builder()
            .method("POST")
            .uri("/")
            .body(Body::from(vec![0u8; len]))
            .expect("request");
        app.clone().oneshot(req)
    };
    assert_eq!(send(100).await.expect("answered").status(), 200);
    let refused = send(101).await.expect("answered");
    assert_eq!(refused.status(), 413);
    let bytes = axum::body::to_bytes(refused.into_body(), 1 << 16)
        .await
        .expect("body");
    let err: ApiError = serde_json::from_slice(&bytes).expect("an ApiError");
    assert_eq!(
        err,
        ApiError::TooLarge {
            field: "body".into(),
            limit: bytes_in_words(100)
        }
    );
}

#[tokio::test]
async fn a_good_body_is_taken_by_both_readers() {
    for fast in [false, true] {
        let ct = Some("application/json; charset=utf-8");
        let (status, body) = answer(fast, ct, r#"{"name":"a"}"#).await;
        assert_eq!((status, body), (200, serde_json::json!("a")));
        let ct = Some("application/vnd.x+json");
        assert_eq!(answer(fast, ct, r#"{"name":"b"}"#).await.0, 200);
    }
}

#[test]
fn if_match_takes_strong_and_weak_tags_and_refuses_a_star() {
    let mut headers = HeaderMap::new();
    assert!(matches!(
        if_match(&headers),
        Err(ApiError::PreconditionRequired)
    ));
    headers.insert(header::IF_MATCH, "W/\"3\"".parse().unwrap());
    assert_eq!(if_match(&headers).unwrap(), 3);
    headers.insert(header::IF_MATCH, "*".parse().unwrap());
    assert!(matches!(
        if_match(&headers),
        Err(ApiError::PreconditionFailed(_))
    ));
    headers.remove(header::IF_MATCH);
    headers.insert(header::IF_NONE_MATCH, "*".parse().unwrap());
    assert_eq!(expected(&headers).unwrap(), None);
}

#[test]
fn a_stream_token_comes_from_the_header_before_the_query() {
    let parts = |uri: &str, auth: Option<&str>| {
        let mut b = HttpRequest::builder().uri(uri);
        if let Some(a) = auth {
            b = b.header(header::AUTHORIZATION, a);
        }
        b.body(()).unwrap().into_parts().0
    };
    assert_eq!(
        stream_token(&parts("/s?token=q", None)).as_deref(),
        Some("q")
    );
    assert_eq!(
        stream_token(&parts("/s?token=q", Some("Bearer h"))).as_deref(),
        Some("h")
    );
    assert_eq!(stream_token(&parts("/s?token=", Some("Bearer  "))), None);
}
