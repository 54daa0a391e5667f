//! The JavaScript plugin client is served at a stable path, as the file in
//! the repository, with an ETag, a short cache and no sign-in.

use crate::helpers::spawn_app;

#[tokio::test]
async fn the_client_module_and_its_types_are_served_as_in_the_repository() {
    let app = spawn_app().await;
    let files = [
        (
            "/clients/switchboard.js",
            "text/javascript",
            include_str!("../../clients/js/switchboard.js"),
        ),
        (
            "/clients/switchboard.d.ts",
            "text/plain",
            include_str!("../../clients/js/switchboard.d.ts"),
        ),
    ];
    for (path, content_type, text) in files {
        // A fresh client: no cookie, no sign-in.
        let client = reqwest::Client::new();
        let res = client.get(app.url(path)).send().await.unwrap();
        assert_eq!(res.status(), 200, "{path}");
        let headers = res.headers().clone();
        assert!(headers["content-type"]
            .to_str()
            .unwrap()
            .starts_with(content_type));
        assert_eq!(headers["cache-control"], "public, max-age=300");
        assert!(headers.get("set-cookie").is_none());
        let etag = headers["etag"].to_str().unwrap().to_owned();
        assert!(etag.starts_with('"') && etag.len() > 10, "{etag}");
        assert_eq!(res.text().await.unwrap(), text, "{path} is the file");

        let again = client
            .get(app.url(path))
            .header("if-none-match", &etag)
            .send()
            .await
            .unwrap();
        assert_eq!(again.status(), 304);
        assert_eq!(again.headers()["etag"], etag.as_str());
        let other = client
            .get(app.url(path))
            .header("if-none-match", "\"stale\"")
            .send()
            .await
            .unwrap();
        assert_eq!(other.status(), 200);
    }
}
