//! The browser bundles served like a production site: `/pkg` files are
//! content-hashed (see `domain::assets`), sent precompressed (brotli or
//! gzip, chosen from `Accept-Encoding`, built next to each file by
//! `scripts/bundle.sh`) and cached by the browser for a year, so a second
//! visit loads no bundle at all. Names without a hash are revalidated.
//! `SiteAssets` is what a page links: the stylesheet and its group's bundle.
//!
//! Only `/pkg` is served here; the site's other files (`favicon.svg`) and
//! the pages go through Leptos' handlers as before. Pages are never cached
//! (see `router::security_headers`).

use crate::domain::assets::{is_hashed, AssetHashes, Bundle};
use crate::server::AppState;
use axum::extract::Request;
use axum::http::{header, HeaderValue, StatusCode};
use axum::middleware::{from_fn, Next};
use axum::response::Response;
use axum::Router;
use leptos::config::LeptosOptions;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use tower_http::services::ServeDir;

/// `Cache-Control` of a content-hashed file: it never changes.
pub const IMMUTABLE: &str = "public, max-age=31536000, immutable";
/// `Cache-Control` of a bundle file without a hash: ask every time.
pub const REVALIDATE: &str = "no-cache";
/// The file the bundle script lists the stylesheet's hash in, in the site
/// root (each bundle's scripts are in `Bundle::hash_file`).
pub const HASH_FILE: &str = "hash.txt";
/// The stylesheet's name under `/pkg` (before its hash).
pub const STYLESHEET_NAME: &str = "switchboard";

/// Where a hash file is for a site root, as an absolute path (Leptos'
/// hydration scripts join it to the executable's folder, which an absolute
/// path replaces).
fn hash_file(site_root: &str, file: &str) -> PathBuf {
    let path = Path::new(site_root).join(file);
    std::path::absolute(&path).unwrap_or(path)
}

/// A hash file's hashes; none when the site has no such file (a bundle
/// built before hashing, or no bundle at all).
fn hashes(path: &Path) -> AssetHashes {
    std::fs::read_to_string(path)
        .map(|text| AssetHashes::parse(&text))
        .unwrap_or_default()
}

/// What a page links, read once at start-up: the stylesheet's URL, and
/// per bundle the Leptos options whose hydration scripts load that
/// bundle's (hashed) glue and module.
#[derive(Debug, Clone)]
pub struct SiteAssets {
    /// The stylesheet's URL, shared by every page.
    pub stylesheet: Arc<str>,
    /// Each bundle's options, in `Bundle::ALL`'s order.
    bundles: [LeptosOptions; Bundle::ALL.len()],
}

impl SiteAssets {
    /// Reads the site's hash files. Each bundle's options are `base` with
    /// the bundle's name as output name and, when both of its scripts are
    /// hashed, its hash file (else the plain `pkg/{name}.js`).
    pub fn read(base: &LeptosOptions, site_root: &str) -> Self {
        let stylesheet = hashes(&hash_file(site_root, HASH_FILE)).stylesheet(STYLESHEET_NAME);
        let bundles = Bundle::ALL.map(|bundle| {
            let file = hash_file(site_root, &bundle.hash_file());
            let mut options = base.clone();
            options.output_name = Arc::from(bundle.name());
            options.hash_files = hashes(&file).scripts_hashed();
            options.hash_file = Arc::from(file.to_string_lossy());
            options
        });
        Self {
            stylesheet: Arc::from(stylesheet),
            bundles,
        }
    }

    /// The options whose hydration scripts load `bundle`.
    pub fn scripts(&self, bundle: Bundle) -> &LeptosOptions {
        &self.bundles[bundle.position()]
    }
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
