//! The browser bundles as a browser gets them: each page linking its own
//! group's hashed bundle and no other, precompressed bodies chosen from
//! `Accept-Encoding`, a year's immutable caching for hashed files, pages
//! that are never stored, and pages and JSON compressed as they are sent,
//! event streams never.

use crate::helpers::{spawn_app, spawn_app_with, ADMIN};
use crate::sessions::open;
use switchboard::domain::assets::Bundle;

const WASM: &[u8] = b"\0asm\x01\0\0\0 the module";
const HASH: &str = "0a1b2c3d4e5f6071";

/// A bundle's hash in the fixture: its own, so a page linking another
/// group's bundle would show.
fn bundle_hash(bundle: Bundle) -> String {
    format!("{:016x}", bundle.position() + 0xb0)
}

/// Writes `pkg/NAME.HASH.EXT` with `.br` / `.gz` copies, each marked so
/// the test sees which was sent.
fn publish(pkg: &std::path::Path, name: &str, hash: &str, ext: &str) {
    let file = pkg.join(format!("{name}.{hash}.{ext}"));
    std::fs::write(&file, WASM).unwrap();
    std::fs::write(format!("{}.br", file.display()), b"brotli body").unwrap();
    std::fs::write(format!("{}.gz", file.display()), b"gzip body").unwrap();
}

/// A site root as `scripts/bundle.sh` leaves it: each bundle's hashed glue
/// and module and `hash-NAME.txt`, the hashed stylesheet and `hash.txt`.
fn site() -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    let pkg = dir.path().join("pkg");
    std::fs::create_dir_all(&pkg).unwrap();
    for bundle in Bundle::ALL {
        let hash = bundle_hash(bundle);
        for ext in ["js", "wasm"] {
            publish(&pkg, bundle.name(), &hash, ext);
        }
        std::fs::write(
            dir.path().join(bundle.hash_file()),
            format!("js: {hash}\nwasm: {hash}\n"),
        )
        .unwrap();
    }
    publish(&pkg, "switchboard", HASH, "css");
    std::fs::write(pkg.join("switchboard.css"), b"body{}").unwrap();
    std::fs::write(dir.path().join("hash.txt"), format!("css: {HASH}\n")).unwrap();
    dir
}

#[tokio::test]
async fn each_page_links_its_groups_hashed_bundle_and_is_never_stored() {
    let site = site();
    let app = spawn_app_with(&[("SITE_ROOT", site.path().to_str().unwrap())]).await;
    let page = |path: String| {
        let req = app.client.get(app.url(&path));
        async move {
            let res = req.send().await.unwrap();
            assert_eq!(res.status(), 200, "{path}");
            assert_eq!(res.headers()["cache-control"], "no-store", "{path}");
            res.text().await.unwrap()
        }
    };
    let links_only = |path: &str, html: &str, bundle: Bundle| {
        let css = format!("/pkg/switchboard.{HASH}.css");
        assert!(html.contains(&css), "{path}: {css} missing: {html}");
        for other in Bundle::ALL {
            let (name, hash) = (other.name(), bundle_hash(other));
            for file in [
                format!("/pkg/{name}.{hash}.js"),
                format!("/pkg/{name}.{hash}.wasm"),
            ] {
                assert_eq!(html.contains(&file), other == bundle, "{path}: {file}");
            }
        }
        assert!(!html.contains("_bg.wasm"), "{path}: {html}");
    };
    links_only("/login", &page("/login".into()).await, Bundle::Start);
    app.login(ADMIN).await;
    let lesson = crate::lesson_sessions::full_lesson(&app).await;
    for (path, bundle) in [
        ("/".to_owned(), Bundle::Start),
        ("/lessons".to_owned(), Bundle::Start),
        (format!("/lessons/{lesson}/sessions"), Bundle::Start),
        (format!("/lessons/{lesson}"), Bundle::Editor),
        ("/sessions".to_owned(), Bundle::Sessions),
        ("/bindings".to_owned(), Bundle::Admin),
        ("/workflows/idv".to_owned(), Bundle::Workflows),
    ] {
        links_only(&path, &page(path.clone()).await, bundle);
    }
    // A page that is not there (its own status) links one bundle too.
    let res = app
        .client
        .get(app.url("/no/such/page"))
        .send()
        .await
        .unwrap();
    assert_eq!(res.status(), 404);
    links_only("/no/such/page", &res.text().await.unwrap(), Bundle::Start);
}

#[tokio::test]
async fn hashed_files_come_precompressed_and_immutable() {
    let site = site();
    let app = spawn_app_with(&[("SITE_ROOT", site.path().to_str().unwrap())]).await;
    let editor = bundle_hash(Bundle::Editor);
    let url = app.url(&format!("/pkg/editor.{editor}.wasm"));
    for (accept, encoding, body) in [
        ("br, gzip", Some("br"), &b"brotli body"[..]),
        ("gzip", Some("gzip"), &b"gzip body"[..]),
        ("identity", None, WASM),
    ] {
        let res = app
            .client
            .get(&url)
            .header("accept-encoding", accept)
            .send()
            .await
            .unwrap();
        assert_eq!(res.status(), 200, "{accept}");
        assert_eq!(
            res.headers()
                .get("content-encoding")
                .map(|v| v.to_str().unwrap()),
            encoding,
            "{accept}"
        );
        assert_eq!(res.headers()["content-type"], "application/wasm");
        assert_eq!(
            res.headers()["cache-control"],
            "public, max-age=31536000, immutable"
        );
        assert_eq!(res.bytes().await.unwrap(), body, "{accept}");
    }
    // A revalidation of a file the browser has is a 304 with no body.
    let first = app.client.get(&url).send().await.unwrap();
    let modified = first.headers()["last-modified"].clone();
    let again = app
        .client
        .get(&url)
        .header("if-modified-since", modified)
        .send()
        .await
        .unwrap();
    assert_eq!(again.status(), 304);
    assert!(again.bytes().await.unwrap().is_empty());
}

#[tokio::test]
async fn unhashed_and_missing_bundle_files_are_not_cached_for_good() {
    let site = site();
    let app = spawn_app_with(&[("SITE_ROOT", site.path().to_str().unwrap())]).await;
    let res = app
        .client
        .get(app.url("/pkg/switchboard.css"))
        .send()
        .await
        .unwrap();
    assert_eq!(res.status(), 200);
    assert_eq!(res.headers()["cache-control"], "no-cache");
    for missing in [
        "/pkg/switchboard.ffffffffffffffff.wasm",
        "/pkg/..%2Fhash.txt",
    ] {
        let res = app.client.get(app.url(missing)).send().await.unwrap();
        assert_eq!(res.status(), 404, "{missing}");
        assert!(res.headers().get("cache-control").is_none(), "{missing}");
    }
}

#[tokio::test]
async fn pages_and_json_are_compressed_when_asked_and_event_streams_never() {
    let app = spawn_app().await;
    let get = |path: String, accept: &'static str| {
        let req = app.client.get(app.url(&path));
        async move { req.header("accept-encoding", accept).send().await.unwrap() }
    };
    let encoding = |res: &reqwest::Response| {
        res.headers()
            .get("content-encoding")
            .map(|v| v.to_str().unwrap().to_owned())
    };

    // A page: brotli or gzip as asked, and as it is for a client that
    // asks for neither.
    let plain = get("/login".into(), "identity").await;
    assert_eq!(encoding(&plain), None);
    let plain = plain.bytes().await.unwrap();
    assert!(plain.starts_with(b"<!DOCTYPE html>"));
    for accept in ["br", "gzip"] {
        let res = get("/login".into(), accept).await;
        assert_eq!(res.status(), 200);
        assert_eq!(encoding(&res).as_deref(), Some(accept));
        assert!(res.headers()["vary"]
            .to_str()
            .unwrap()
            .to_ascii_lowercase()
            .contains("accept-encoding"));
        let body = res.bytes().await.unwrap();
        assert!(
            body.len() * 2 < plain.len(),
            "{accept}: {} of {}",
            body.len(),
            plain.len()
        );
        if accept == "gzip" {
            assert_eq!(&body[..2], b"\x1f\x8b");
        }
    }

    // JSON from the API, for a backend that accepts gzip.
    let key = app.api_key().await;
    let s = open(&app, &key, "idv").await;
    let res = app
        .client
        .get(app.url(&format!("/api/sessions/{}/tools?format=openai", s.id)))
        .bearer_auth(&s.token)
        .header("accept-encoding", "gzip")
        .send()
        .await
        .unwrap();
    assert_eq!(res.status(), 200);
    assert_eq!(encoding(&res).as_deref(), Some("gzip"));

    // The event stream is never compressed: each event must leave at once.
    let res = get(
        format!("/api/sessions/{}/events?token={}", s.id, s.token),
        "br, gzip",
    )
    .await;
    assert_eq!(res.status(), 200);
    assert_eq!(res.headers()["content-type"], "text/event-stream");
    assert_eq!(encoding(&res), None);
}
