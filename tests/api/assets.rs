//! The browser bundle as a browser gets it: hashed names in the page,
//! precompressed bodies chosen from `Accept-Encoding`, a year's immutable
//! caching for hashed files, and pages that are never stored.

use crate::helpers::spawn_app_with;

const WASM: &[u8] = b"\0asm\x01\0\0\0 the module";
const HASH: &str = "0a1b2c3d4e5f6071";

/// A site root as `scripts/bundle.sh` leaves it: hashed files with their
/// `.br` / `.gz` copies (here marked so the test sees which was sent) and
/// `hash.txt`.
fn site() -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    let pkg = dir.path().join("pkg");
    std::fs::create_dir_all(&pkg).unwrap();
    for ext in ["js", "wasm", "css"] {
        let file = pkg.join(format!("switchboard.{HASH}.{ext}"));
        std::fs::write(&file, WASM).unwrap();
        std::fs::write(format!("{}.br", file.display()), b"brotli body").unwrap();
        std::fs::write(format!("{}.gz", file.display()), b"gzip body").unwrap();
    }
    std::fs::write(pkg.join("switchboard.css"), b"body{}").unwrap();
    std::fs::write(
        dir.path().join("hash.txt"),
        format!("js: {HASH}\nwasm: {HASH}\ncss: {HASH}\n"),
    )
    .unwrap();
    dir
}

#[tokio::test]
async fn pages_link_the_hashed_bundle_and_are_never_stored() {
    let site = site();
    let app = spawn_app_with(&[("SITE_ROOT", site.path().to_str().unwrap())]).await;
    let res = app.client.get(app.url("/login")).send().await.unwrap();
    assert_eq!(res.status(), 200);
    assert_eq!(res.headers()["cache-control"], "no-store");
    let html = res.text().await.unwrap();
    for name in [
        format!("/pkg/switchboard.{HASH}.css"),
        format!("/pkg/switchboard.{HASH}.js"),
        format!("/pkg/switchboard.{HASH}.wasm"),
    ] {
        assert!(html.contains(&name), "{name} missing: {html}");
    }
    assert!(!html.contains("switchboard_bg.wasm"), "{html}");
}

#[tokio::test]
async fn hashed_files_come_precompressed_and_immutable() {
    let site = site();
    let app = spawn_app_with(&[("SITE_ROOT", site.path().to_str().unwrap())]).await;
    let url = app.url(&format!("/pkg/switchboard.{HASH}.wasm"));
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
