//! Choosing the database by `DATABASE_URL`, and keeping a second process
//! off a SQLite file: the real binary, started as an operator would.

use crate::helpers::{on_postgres, spawn_app};
use std::process::Command;

/// Runs the server binary with `url` in `cwd` and returns its exit status
/// and what it printed (it must stop on its own: a refused start-up).
fn start_with(url: &str, cwd: &std::path::Path) -> (std::process::ExitStatus, String) {
    let out = Command::new(env!("CARGO_BIN_EXE_switchboard"))
        .current_dir(cwd)
        .env("DATABASE_URL", url)
        .env("PORT", "0")
        .env("SWITCHBOARD_DEMO_LESSONS", "0")
        .output()
        .expect("the server binary runs");
    let text = format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    (out.status, text)
}

#[tokio::test]
async fn a_second_process_on_a_running_instances_sqlite_file_is_refused_naming_the_way_out() {
    if on_postgres().is_some() {
        return; // several instances are what PostgreSQL is for
    }
    let app = spawn_app().await;
    let dir = tempfile::tempdir().unwrap();
    let (status, text) = start_with(app.database_url(), dir.path());
    assert!(!status.success(), "a second instance started: {text}");
    assert!(
        text.contains("another Switchboard instance") && text.contains("postgres://"),
        "{text}"
    );
    // The first instance still serves.
    let res = app.client.get(app.url("/healthz")).send().await.unwrap();
    assert_eq!(res.status(), 200);
}

#[tokio::test]
async fn a_database_url_of_another_kind_stops_start_up_naming_the_setting_and_writes_nothing() {
    let dir = tempfile::tempdir().unwrap();
    for url in ["mysql://sb@127.0.0.1/sb", "data/switchboard.db"] {
        let (status, text) = start_with(url, dir.path());
        assert!(!status.success(), "{url} started: {text}");
        assert!(text.contains("DATABASE_URL"), "{text}");
    }
    let left: Vec<_> = std::fs::read_dir(dir.path()).unwrap().collect();
    assert!(left.is_empty(), "start-up wrote {left:?}");
}
