//! `SWITCHBOARD_BINDINGS_FILE` after the first start: the database's
//! bindings stay in force, start-up says whether the file differs, and an
//! admin can review the file's version and import it as a new version.

use crate::helpers::{spawn_app, spawn_app_with, TestApp, ADMIN, TEACHER};
use reqwest::Client;
use serde_json::{json, Value};
use std::io::Write;
use std::sync::{Arc, Mutex};
use switchboard::domain::bindings::ToolBindings;
use switchboard::error::ApiError;

fn demo() -> Value {
    serde_json::to_value(ToolBindings::demo()).unwrap()
}

async fn file_status(app: &TestApp, client: &Client) -> Value {
    let res = app.rpc_with(client, "bindings_file", &[]).await;
    assert_eq!(res.status(), 200);
    res.json().await.unwrap()
}

async fn import(app: &TestApp, client: &Client, current: i64) -> reqwest::Response {
    app.rpc_with(
        client,
        "import_bindings_file",
        &[("current", &current.to_string())],
    )
    .await
}

/// The log lines written while it is alive, on this test's thread (the
/// test runtime is single-threaded, so the start-up it wraps logs here).
#[derive(Clone, Default)]
struct Captured(Arc<Mutex<Vec<u8>>>);

impl Write for Captured {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        self.0.lock().unwrap().extend_from_slice(buf);
        Ok(buf.len())
    }
    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

impl Captured {
    fn text(&self) -> String {
        String::from_utf8_lossy(&self.0.lock().unwrap()).into_owned()
    }
}

#[tokio::test]
async fn a_database_with_bindings_keeps_them_and_the_differing_file_can_be_imported() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("tool-bindings.json");
    std::fs::write(&file, demo().to_string()).unwrap();
    let path = file.to_str().unwrap();
    let app = spawn_app_with(&[("SWITCHBOARD_BINDINGS_FILE", path)]).await;
    let admin = app.signed_in(ADMIN).await;
    assert_eq!(
        file_status(&app, &admin).await,
        json!({"path": path, "version": 1, "comparison": {"state": "same"}})
    );

    // An admin binds the mortgage calculator: the file no longer matches.
    let mut doc = demo();
    doc["workflows"]["mortgage"] = json!(["mortgage_calculator"]);
    assert_eq!(app.save_bindings(&admin, 1, &doc).await.status(), 200);

    // Restarted, the database's bindings stay in force and the log says so.
    let log = Captured::default();
    let writer = log.clone();
    let subscriber = tracing_subscriber::fmt()
        .with_writer(move || writer.clone())
        .with_ansi(false)
        .finish();
    let restarted = {
        let _guard = tracing::subscriber::set_default(subscriber);
        app.restart().await
    };
    let logged = log.text();
    assert!(
        logged.contains("WARN")
            && logged.contains(&format!("SWITCHBOARD_BINDINGS_FILE {path} is set but the database already has bindings: using the database's (version 2); the file differs (+0 / −1: removed mortgage_calculator in mortgage)")),
        "{logged}"
    );
    assert!(restarted
        .state
        .rules()
        .bindings
        .has("mortgage", "mortgage_calculator"));

    let admin = restarted.signed_in(ADMIN).await;
    let status = file_status(&restarted, &admin).await;
    assert_eq!(status["version"], 2);
    assert_eq!(status["comparison"]["state"], "differs");
    assert_eq!(
        status["comparison"]["diff"]["removed"],
        json!([["mortgage", "mortgage_calculator"]])
    );

    // Importing on top of a stale version is refused like any stale save.
    let res = import(&restarted, &admin, 1).await;
    assert_eq!(res.status(), 409);
    let res = import(&restarted, &admin, 2).await;
    assert_eq!(res.status(), 200, "{}", res.text().await.unwrap());
    let history: Vec<Value> = restarted
        .rpc_with(&admin, "bindings_history", &[])
        .await
        .json()
        .await
        .unwrap();
    assert_eq!(history[0]["version"], 3);
    assert_eq!(
        history[0]["summary"],
        format!("Imported from {path}: removed mortgage_calculator in mortgage")
    );
    assert_eq!(history[0]["author"], "Ada Admin");
    assert!(!restarted
        .state
        .rules()
        .bindings
        .has("mortgage", "mortgage_calculator"));
    assert_eq!(
        file_status(&restarted, &admin).await["comparison"]["state"],
        "same"
    );
}

#[tokio::test]
async fn a_file_that_cannot_be_used_is_reported_and_not_imported() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("tool-bindings.json");
    std::fs::write(&file, demo().to_string()).unwrap();
    let path = file.to_str().unwrap();
    let app = spawn_app_with(&[("SWITCHBOARD_BINDINGS_FILE", path)]).await;
    let admin = app.signed_in(ADMIN).await;

    std::fs::write(&file, "{\"global\": 1}").unwrap();
    let status = file_status(&app, &admin).await;
    assert_eq!(status["comparison"]["state"], "unreadable");
    assert!(status["comparison"]["problem"]
        .as_str()
        .unwrap()
        .starts_with("it is not a tool-bindings document"));
    let res = import(&app, &admin, 1).await;
    assert_eq!(res.status(), 422);
    let err: ApiError = res.json().await.unwrap();
    assert_eq!(err.field(), Some("file"));

    // A well-formed file naming a tool the catalogue lacks is refused by
    // the same validation as any save.
    let mut doc = demo();
    doc["global"]
        .as_array_mut()
        .unwrap()
        .push(json!("teleport"));
    std::fs::write(&file, doc.to_string()).unwrap();
    assert_eq!(
        file_status(&app, &admin).await["comparison"]["state"],
        "differs"
    );
    let res = import(&app, &admin, 1).await;
    assert_eq!(res.status(), 422);
    let err: ApiError = res.json().await.unwrap();
    assert!(
        err.to_string().contains("unknown tool \"teleport\""),
        "{err}"
    );

    std::fs::remove_file(&file).unwrap();
    let status = file_status(&app, &admin).await;
    assert!(status["comparison"]["problem"]
        .as_str()
        .unwrap()
        .starts_with("it cannot be read"));
}

#[tokio::test]
async fn without_a_file_there_is_nothing_to_compare_or_import() {
    let app = spawn_app().await;
    let admin = app.signed_in(ADMIN).await;
    assert_eq!(file_status(&app, &admin).await, Value::Null);
    assert_eq!(import(&app, &admin, 1).await.status(), 404);
}

#[tokio::test]
async fn teachers_can_neither_see_nor_import_the_file() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("tool-bindings.json");
    std::fs::write(&file, demo().to_string()).unwrap();
    let app = spawn_app_with(&[("SWITCHBOARD_BINDINGS_FILE", file.to_str().unwrap())]).await;
    let teacher = app.signed_in(TEACHER).await;
    assert_eq!(
        app.rpc_with(&teacher, "bindings_file", &[]).await.status(),
        403
    );
    assert_eq!(import(&app, &teacher, 1).await.status(), 403);
}
