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

/// What a route taking `JsonBody<Named, 100>` under a 100-byte body limit
/// answers `body` sent as `content_type`.
async fn answer(content_type: Option<&str>, body: &str) -> (u16, serde_json::Value) {
    use axum::extract::DefaultBodyLimit;
    use axum::routing::post;
    use tower::ServiceExt;
    let route = post(|JsonBody(n): JsonBody<Named, 100>| async move { n.name });
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
    {
        for (text, field) in [(r#"{"name": 3}"#, "name"), ("{}", "body")] {
            let (status, body) = answer(Some("application/json"), text).await;
            assert_eq!(status, 422, "{body}");
            match serde_json::from_value::<ApiError>(body) {
                Ok(ApiError::Invalid(e)) => assert_eq!(e.field, field),
                other => panic!("not a field error: {other:?}"),
            }
        }
    }
}

#[derive(Debug, Deserialize)]
#[serde(rename_all = "lowercase")]
#[allow(dead_code)]
enum Kind {
    Codap,
}

#[tokio::test]
async fn a_value_of_the_wrong_kind_for_an_enum_is_422_not_400() {
    use axum::routing::post;
    use tower::ServiceExt;
    #[derive(Debug, Deserialize)]
    #[allow(dead_code)]
    struct Typed {
        kind: Kind,
    }
    let app = axum::Router::new().route(
        "/",
        post(|JsonBody(_): JsonBody<Typed>| async move { "taken" }),
    );
    for (text, field, status) in [
        (r#"{"kind": 1}"#, "kind", 422),
        ("[1, 2, 3]", "[0]", 422),
        (r#"{"kind": nope}"#, "", 400),
    ] {
        let req = HttpRequest::builder()
            .method("POST")
            .uri("/")
            .header(header::CONTENT_TYPE, "application/json")
            .body(Body::from(text))
            .unwrap();
        let response = app.clone().oneshot(req).await.unwrap();
        assert_eq!(response.status(), status, "{text}");
        let bytes = axum::body::to_bytes(response.into_body(), 1 << 16)
            .await
            .unwrap();
        match serde_json::from_slice::<ApiError>(&bytes).unwrap() {
            ApiError::Invalid(e) => assert_eq!(e.field, field, "{text}"),
            ApiError::BadRequest(_) => assert_eq!(status, 400, "{text}"),
            other => panic!("{text}: {other:?}"),
        }
    }
}

#[tokio::test]
async fn a_body_that_is_not_json_or_not_sent_as_json_is_400() {
    {
        for (ct, text) in [
            (Some("application/json"), "{not json"),
            (Some("text/plain"), r#"{"name": "a"}"#),
            (None, r#"{"name": "a"}"#),
        ] {
            let (status, body) = answer(ct, text).await;
            assert_eq!(status, 400, "{ct:?} {text}: {body}");
            let err = serde_json::from_value::<ApiError>(body);
            assert!(matches!(err, Ok(ApiError::BadRequest(_))), "{err:?}");
        }
    }
}

#[tokio::test]
async fn a_body_over_its_limit_is_413_naming_the_limit() {
    let big = format!(r#"{{"name": "{}"}}"#, "a".repeat(200));
    {
        let (status, body) = answer(Some("application/json"), &big).await;
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
async fn a_good_body_is_taken_as_json_of_any_json_type() {
    {
        let ct = Some("application/json; charset=utf-8");
        let (status, body) = answer(ct, r#"{"name":"a"}"#).await;
        assert_eq!((status, body), (200, serde_json::json!("a")));
        let ct = Some("application/vnd.x+json");
        assert_eq!(answer(ct, r#"{"name":"b"}"#).await.0, 200);
    }
}

#[test]
fn if_match_takes_strong_and_weak_tags_and_refuses_a_star() {
    let mut headers = HeaderMap::new();
    let missing = if_match(&headers).unwrap_err();
    assert!(matches!(missing, ApiError::PreconditionRequired { .. }));
    assert_eq!(
        serde_json::to_value(&missing).unwrap(),
        serde_json::json!({"PreconditionRequired": {"send": "If-Match with the ETag you read"}}),
        "the body names the header"
    );
    assert!(expected(&headers)
        .unwrap_err()
        .to_string()
        .contains("If-None-Match: *"));
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

#[test]
fn the_bearer_scheme_is_read_in_any_case() {
    let token = |value: &str| {
        let mut headers = HeaderMap::new();
        headers.insert(header::AUTHORIZATION, value.parse().unwrap());
        bearer(&headers).map(str::to_owned)
    };
    for value in [
        "Bearer st_x",
        "bearer st_x",
        "BEARER  st_x ",
        " Bearer st_x",
    ] {
        assert_eq!(token(value).as_deref(), Some("st_x"), "{value:?}");
    }
    for value in ["Basic st_x", "Bearerst_x", "Bearer", "Bearer   ", "st_x"] {
        assert_eq!(token(value), None, "{value:?}");
    }
}

#[tokio::test]
async fn an_unknown_field_is_named_in_at_most_a_line() {
    #[derive(Debug, Deserialize)]
    #[serde(deny_unknown_fields)]
    #[allow(dead_code)]
    struct Strict {
        name: Option<String>,
    }
    use axum::routing::post;
    use tower::ServiceExt;
    let app = axum::Router::new().route(
        "/",
        post(|JsonBody(_): JsonBody<Strict>| async move { "taken" }),
    );
    let body = format!(r#"{{"{}": 1}}"#, "k".repeat(100_000));
    let req = HttpRequest::builder()
        .method("POST")
        .uri("/")
        .header(header::CONTENT_TYPE, "application/json")
        .body(Body::from(body))
        .unwrap();
    let response = app.oneshot(req).await.unwrap();
    assert_eq!(response.status(), 422);
    let bytes = axum::body::to_bytes(response.into_body(), 1 << 20)
        .await
        .unwrap();
    assert!(bytes.len() < 1024, "{} bytes echoed", bytes.len());
    match serde_json::from_slice::<ApiError>(&bytes) {
        Ok(ApiError::Invalid(e)) => {
            assert!(
                e.field.starts_with("kkk") && e.field.ends_with('…'),
                "{}",
                e.field
            );
        }
        other => panic!("not a field error: {other:?}"),
    }
}

#[test]
fn a_query_parameter_of_the_wrong_type_or_given_twice_is_named() {
    #[derive(Debug, Deserialize)]
    #[allow(dead_code)]
    struct Page {
        limit: Option<usize>,
        format: Option<String>,
    }
    let refused = |uri: &str| match query_params::<Page>(&uri.parse().unwrap()) {
        Err(crate::server::ServerError::Api(ApiError::Invalid(e))) => (e.field, e.rule),
        other => panic!("{uri}: {other:?}"),
    };
    assert_eq!(
        refused("/c?limit=abc"),
        ("limit".into(), "invalid digit found in string".into())
    );
    assert_eq!(refused("/c?limit=-1").0, "limit");
    assert_eq!(
        refused("/c?format=a&format=b"),
        ("format".into(), "may be given once".into())
    );
    let page = query_params::<Page>(&"/c?limit=5&token=x".parse().unwrap()).unwrap();
    assert_eq!((page.limit, page.format), (Some(5), None));
}

#[test]
fn a_nul_anywhere_in_a_body_is_found_by_its_path_and_an_escaped_backslash_is_not_one() {
    use crate::domain::limits::nul_at;
    let at = |v: serde_json::Value| nul_at(v.to_string().as_bytes());
    assert_eq!(at(serde_json::json!("a\u{0}")), Some("body".into()));
    assert_eq!(
        at(serde_json::json!({"availableTools": [{"name": "a"}, {"description": "b\u{0}"}]})),
        Some("availableTools[1].description".into())
    );
    assert_eq!(
        at(serde_json::json!({"checks": {"k\u{0}": true}})),
        Some("checks.k\\0".into())
    );
    assert_eq!(
        at(serde_json::json!({"text": "C:\\u0000"})),
        None,
        "a backslash, then u0000"
    );
    assert_eq!(at(serde_json::json!({"text": "plain"})), None);
    assert_eq!(
        nul_at(br#"{"broken": "\u0000"#),
        None,
        "not JSON: left to the reader"
    );
}
