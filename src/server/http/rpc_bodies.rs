//! Server-function bodies, checked before Leptos decodes them: at most
//! [`RPC_BODY_MAX_BYTES`], and no U+0000 in a field, as the JSON API's
//! bodies (`limits::nul_at`). A NUL reached PostgreSQL's text columns
//! from a page's call (an API key's name) and failed there as a 500.

use crate::domain::limits::{bytes_in_words, excerpt, nul_at, NUL_RULE, RPC_BODY_MAX_BYTES};
use crate::error::ApiError;
use crate::server::http::extract::is_json;
use crate::server::ServerError;
use crate::RPC_PREFIX;
use axum::body::Body;
use axum::extract::Request;
use axum::http::{header, Method};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};

/// The middleware: a `POST /rpc/…` whose JSON or form body holds a NUL is
/// 422 naming the field; one over the limit 413; anything else goes on
/// with its body as it came.
pub async fn checked(req: Request, next: Next) -> Response {
    if req.method() != Method::POST || !req.uri().path().starts_with(&format!("{RPC_PREFIX}/")) {
        return next.run(req).await;
    }
    let too_large = || {
        ServerError::from(ApiError::TooLarge {
            field: "body".into(),
            limit: bytes_in_words(RPC_BODY_MAX_BYTES),
        })
        .into_response()
    };
    let declared = req
        .headers()
        .get(header::CONTENT_LENGTH)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.parse::<usize>().ok());
    if declared.is_some_and(|n| n > RPC_BODY_MAX_BYTES) {
        return too_large();
    }
    let (parts, body) = req.into_parts();
    let bytes = match axum::body::to_bytes(body, RPC_BODY_MAX_BYTES).await {
        Ok(bytes) => bytes,
        Err(e) => {
            return ServerError::from(ApiError::BadRequest(excerpt(&format!(
                "The request could not be read: {e}"
            ))))
            .into_response()
        }
    };
    let form = parts
        .headers
        .get(header::CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .is_some_and(|v| v.starts_with("application/x-www-form-urlencoded"));
    let nul = if is_json(&parts.headers) {
        nul_at(&bytes)
    } else if form {
        nul_in_form(&bytes)
    } else {
        None
    };
    if let Some(field) = nul {
        return ServerError::from(ApiError::invalid(field, NUL_RULE)).into_response();
    }
    next.run(Request::from_parts(parts, Body::from(bytes)))
        .await
}

/// The field of a form body (`name=a%00b&…`) whose name or value holds a
/// NUL (`%00`, or the byte itself), by its name (`scopes[0]`).
pub fn nul_in_form(bytes: &[u8]) -> Option<String> {
    let has_nul = |part: &[u8]| part.contains(&0) || part.windows(3).any(|w| w == b"%00");
    bytes.split(|b| *b == b'&').find_map(|pair| {
        let (name, value) = match pair.iter().position(|b| *b == b'=') {
            Some(at) => (&pair[..at], &pair[at + 1..]),
            None => (pair, &[][..]),
        };
        (has_nul(name) || has_nul(value)).then(|| {
            String::from_utf8_lossy(name)
                .replace("%5B", "[")
                .replace("%5D", "]")
                .replace("%00", "\\0")
                .replace('+', " ")
        })
    })
}

#[cfg(test)]
mod tests {
    use super::nul_in_form;

    #[test]
    fn a_nul_in_a_form_field_is_found_by_its_name() {
        assert_eq!(
            nul_in_form(b"name=key%00&scopes%5B0%5D=sessions"),
            Some("name".into())
        );
        assert_eq!(
            nul_in_form(b"name=key&scopes%5B0%5D=ses%00"),
            Some("scopes[0]".into())
        );
        assert_eq!(nul_in_form(b"na%00me=key"), Some("na\\0me".into()));
        assert_eq!(
            nul_in_form(b"name=100%2500"),
            None,
            "a percent sign, then 00"
        );
        assert_eq!(nul_in_form(b"name=key&password=x"), None);
    }
}
