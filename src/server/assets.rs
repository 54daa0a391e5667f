//! The browser bundle served like a production site: `/pkg` files are
//! content-hashed (see `domain::assets`), sent precompressed (brotli or
//! gzip, chosen from `Accept-Encoding`, built next to each file by
//! `scripts/bundle.sh`) and cached by the browser for a year, so a second
//! visit loads no bundle at all. Names without a hash are revalidated.
//!
//! Only `/pkg` is served here; the site's other files (`favicon.svg`) and
//! the pages go through Leptos' handlers as before. Pages are never cached
//! (see `router::security_headers`).

use crate::domain::assets::{is_hashed, AssetHashes};
use crate::server::AppState;
use axum::extract::Request;
use axum::http::{header, HeaderValue, StatusCode};
use axum::middleware::{from_fn, Next};
use axum::response::Response;
use axum::Router;
use std::path::{Path, PathBuf};
use tower_http::services::ServeDir;

/// `Cache-Control` of a content-hashed file: it never changes.
pub const IMMUTABLE: &str = "public, max-age=31536000, immutable";
/// `Cache-Control` of a bundle file without a hash: ask every time.
pub const REVALIDATE: &str = "no-cache";
/// The file the bundle script lists the hashes in, in the site root.
pub const HASH_FILE: &str = "hash.txt";

/// Where `hash.txt` is for a site root, as an absolute path (Leptos'
/// hydration scripts join it to the executable's folder, which an absolute
/// path replaces).
pub fn hash_file(site_root: &str) -> PathBuf {
    let path = Path::new(site_root).join(HASH_FILE);
    std::path::absolute(&path).unwrap_or(path)
}

/// The bundle's hashes, read once at start-up; none when the site has no
/// `hash.txt` (a bundle built before hashing, or no bundle at all).
pub fn hashes(site_root: &str) -> AssetHashes {
    std::fs::read_to_string(hash_file(site_root))
        .map(|text| AssetHashes::parse(&text))
        .unwrap_or_default()
}

/// `/pkg/…` from `site_root/pkg`, precompressed variants preferred.
pub fn router(site_root: &str) -> Router<AppState> {
    let files = ServeDir::new(Path::new(site_root).join("pkg"))
        .precompressed_br()
        .precompressed_gzip();
    Router::new()
        .nest_service("/pkg", files)
        .layer(from_fn(cache_control))
}

/// Sets `Cache-Control` on what `/pkg` answers: immutable for hashed names,
/// revalidate for the rest.
async fn cache_control(req: Request, next: Next) -> Response {
    let hashed = req.uri().path().rsplit('/').next().is_some_and(is_hashed);
    let mut response = next.run(req).await;
    if response.status().is_success() || response.status() == StatusCode::NOT_MODIFIED {
        response.headers_mut().insert(
            header::CACHE_CONTROL,
            HeaderValue::from_static(if hashed { IMMUTABLE } else { REVALIDATE }),
        );
    }
    response
}
