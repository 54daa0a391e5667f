//! The JavaScript plugin client (`clients/js/`), served at a stable path so
//! a plugin page on any origin imports it from the Switchboard it talks to:
//! `GET /clients/switchboard.js` (`text/javascript`) and its types,
//! `GET /clients/switchboard.d.ts`.
//!
//! Both files are compiled into the binary (`include_str!`), so they need
//! no site folder and always match the server. Each answer has an ETag (a
//! hash of the file) and a short cache, so a new release reaches pages
//! within minutes and a revalidation is a 304; no cookie or sign-in is
//! needed (cross-origin access is the CORS layer's, `API_ORIGINS`).

use axum::http::{header, HeaderMap, HeaderValue, StatusCode};
use axum::response::{IntoResponse, Response};
use axum::routing::get;
use axum::Router;
use sha2::{Digest, Sha256};
use std::sync::OnceLock;

/// The client module, as in the repository.
pub const CLIENT_JS: &str = include_str!("../../../clients/js/switchboard.js");
/// Its TypeScript types.
pub const CLIENT_TYPES: &str = include_str!("../../../clients/js/switchboard.d.ts");

/// How long a browser may use its copy before revalidating: short, so a
/// server upgrade reaches plugin pages soon; the ETag makes a
/// revalidation cheap.
pub const CLIENT_CACHE: &str = "public, max-age=300";

/// The routes serving the client.
pub fn router<S: Clone + Send + Sync + 'static>() -> Router<S> {
    Router::new()
        .route("/clients/switchboard.js", get(module))
        .route("/clients/switchboard.d.ts", get(types))
}

/// A file's ETag: a quoted hash of its text, computed once.
fn etag(cell: &'static OnceLock<HeaderValue>, text: &str) -> &'static HeaderValue {
    cell.get_or_init(|| {
        let hash = Sha256::digest(text.as_bytes());
        let hex: String = hash[..16].iter().map(|b| format!("{b:02x}")).collect();
        HeaderValue::from_str(&format!("\"{hex}\"")).expect("hex is a valid header")
    })
}

/// `text` as `content_type` with its ETag and cache; 304 when the
/// request's `If-None-Match` names the ETag.
fn serve(
    headers: &HeaderMap,
    text: &'static str,
    content_type: &'static str,
    tag: &HeaderValue,
) -> Response {
    let matches = headers
        .get_all(header::IF_NONE_MATCH)
        .iter()
        .filter_map(|v| v.to_str().ok())
        .flat_map(|v| v.split(','))
        .any(|v| v.trim() == tag.to_str().unwrap_or_default() || v.trim() == "*");
    let common = [
        (header::ETAG, tag.clone()),
        (
            header::CACHE_CONTROL,
            HeaderValue::from_static(CLIENT_CACHE),
        ),
    ];
    if matches {
        return (StatusCode::NOT_MODIFIED, common).into_response();
    }
    let content_type = [(header::CONTENT_TYPE, HeaderValue::from_static(content_type))];
    (common, content_type, text).into_response()
}

/// `GET /clients/switchboard.js`.
async fn module(headers: HeaderMap) -> Response {
    static TAG: OnceLock<HeaderValue> = OnceLock::new();
    let tag = etag(&TAG, CLIENT_JS);
    serve(&headers, CLIENT_JS, "text/javascript; charset=utf-8", tag)
}

/// `GET /clients/switchboard.d.ts`.
async fn types(headers: HeaderMap) -> Response {
    static TAG: OnceLock<HeaderValue> = OnceLock::new();
    let tag = etag(&TAG, CLIENT_TYPES);
    serve(&headers, CLIENT_TYPES, "text/plain; charset=utf-8", tag)
}
