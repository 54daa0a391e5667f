//! Check labels and step descriptions: part of the bindings document,
//! validated like the rest of it, and what watchers read instead of keys.

use crate::helpers::{spawn_app, TestApp, ADMIN, TEACHER};
use crate::sessions::{call, idv, open};
use serde_json::{json, Value};
use switchboard::domain::bindings::ToolBindings;
use switchboard::error::ApiError;

fn demo() -> Value {
    serde_json::to_value(ToolBindings::demo()).unwrap()
}

async fn page(app: &TestApp, path: &str) -> String {
    let res = app.client.get(app.url(path)).send().await.unwrap();
    assert_eq!(res.status(), 200, "{path}");
    res.text().await.unwrap()
}

#[tokio::test]
async fn bad_labels_are_refused_naming_the_field_and_the_rule() {
    let app = spawn_app().await;
    let admin = app.signed_in(ADMIN).await;
    let cases: [(&str, Value, &str, &str); 5] = [
        (
            "/labels/checks/teleported",
            json!({"label": "Teleported"}),
            "labels.checks.teleported",
            "unknown check \"teleported\": no catalogue tool's effects set it",
        ),
        (
            "/labels/checks/identity_verified",
            json!({"label": "x".repeat(81)}),
            "labels.checks.identity_verified.label",
            "must be 1-80 characters",
        ),
        (
            "/labels/checks/account_found",
            json!({"label": "Found", "description": "d".repeat(301)}),
            "labels.checks.account_found.description",
            "must be at most 300 characters",
        ),
        (
            "/labels/steps/Not A Key",
            json!("Fine words"),
            "labels.steps.Not A Key",
            "must be 1-64 characters of a-z, 0-9, _ or -",
        ),
        (
            "/labels/steps/ended",
            json!(""),
            "labels.steps.ended",
            "must be 1-300 characters",
        ),
    ];
    for (pointer, value, field, rule) in cases {
        let mut doc = demo();
        let (parent, key) = pointer.rsplit_once('/').unwrap();
        doc.pointer_mut(parent).unwrap()[key] = value;
        let res = app.save_bindings(&admin, 1, &doc).await;
        assert_eq!(res.status(), 422, "{pointer}");
        let err: ApiError = res.json().await.unwrap();
        assert_eq!(err.field(), Some(field), "{err}");
        assert!(err.to_string().contains(rule), "{err} should say {rule}");
    }
    // An unknown field inside labels is refused too (a typo is not ignored).
    let mut doc = demo();
    doc["labels"]["check"] = json!({});
    let res = app.save_bindings(&admin, 1, &doc).await;
    assert_eq!(res.status(), 400);
    let matrix: Value = app
        .rpc_with(&admin, "bindings_matrix", &[])
        .await
        .json()
        .await
        .unwrap();
    assert_eq!(matrix["current"]["meta"]["version"], 1, "nothing was saved");
}

#[tokio::test]
async fn relabelling_is_a_saved_version_and_watchers_read_the_labels() {
    let app = spawn_app().await;
    let key = app.teacher_key().await;
    let s = open(&app, &key, "idv").await;
    call(&app, &s, "perform_idv_check", idv()).await;
    app.login(TEACHER).await;

    let html = page(&app, &format!("/sessions/{}", s.id)).await;
    assert!(
        html.contains("Caller&#x27;s identity verified")
            || html.contains("Caller's identity verified"),
        "step description: {html}"
    );
    assert!(html.contains("Identity verified"), "check label");
    assert!(html.contains("data-step=\"identity_verified\""));
    let list = page(&app, "/sessions").await;
    assert!(list.contains("identity verified"), "{list}");
    assert!(list.contains("ID&amp;V"), "workflow name, not id: {list}");

    let admin = app.signed_in(ADMIN).await;
    let mut doc = demo();
    doc["labels"]["steps"]["identity_verified"] = json!("Caller passed ID&V");
    doc["labels"]["checks"]["identity_verified"] =
        json!({"label": "Caller verified", "description": "Passed the identity check."});
    let res = app.save_bindings(&admin, 1, &doc).await;
    assert_eq!(res.status(), 200);
    let history: Vec<Value> = app
        .rpc_with(&admin, "bindings_history", &[])
        .await
        .json()
        .await
        .unwrap();
    assert_eq!(
        history[0]["summary"],
        "labels changed: check identity_verified, step identity_verified"
    );

    let data: Value = app
        .rpc("session_page", &[("id", &s.id)])
        .await
        .json()
        .await
        .unwrap();
    assert_eq!(
        data["labels"]["steps"]["identity_verified"],
        "Caller passed ID&V"
    );
    let html = page(&app, &format!("/sessions/{}", s.id)).await;
    assert!(html.contains("Caller passed ID&amp;V"), "{html}");
    assert!(html.contains("Caller verified"));
    assert!(html.contains("Passed the identity check."));
}

#[tokio::test]
async fn a_document_without_labels_loads_and_keys_read_as_words() {
    let app = spawn_app().await;
    let admin = app.signed_in(ADMIN).await;
    let mut doc = demo();
    doc.as_object_mut().unwrap().remove("labels");
    let res = app.save_bindings(&admin, 1, &doc).await;
    assert_eq!(res.status(), 200, "{}", res.text().await.unwrap());

    let key = app.teacher_key().await;
    let s = open(&app, &key, "idv").await;
    let wrong =
        json!({"accountNumber": "12345678", "sortCode": "12-34-56", "dateOfBirth": "1990-01-01"});
    call(&app, &s, "perform_idv_check", wrong).await;
    app.login(TEACHER).await;
    let html = page(&app, &format!("/sessions/{}", s.id)).await;
    assert!(html.contains("data-step=\"identity_failed\""), "{html}");
    assert!(html.contains("Identity failed"), "the step key in words");
    assert!(
        !html.contains("Identity check failed"),
        "no demo label left"
    );
    assert!(html.contains("Identity verified"), "the check key in words");
    assert!(
        !html.contains("banking tools need it"),
        "no demo description"
    );
}
