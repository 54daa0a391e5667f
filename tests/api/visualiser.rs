//! The visualiser draws the session's own definition: a tutor session's
//! page lists its lesson's tasks and review items as checks under the
//! lesson's title (never the banking demo's checks or `lesson-N`), and a
//! task the tutor records turns true for watchers; a workflow session's
//! lists what its workflow's tools declare, or says there is nothing.

use crate::helpers::{spawn_app, TestApp, TEACHER};
use crate::lesson_sessions::full_lesson;
use crate::sessions::{call, open, open_with, read_events, subscribe};
use serde_json::{json, Value};

async fn page_data(app: &TestApp, id: &str) -> Value {
    let res = app.rpc("session_page", &[("id", id)]).await;
    assert_eq!(res.status(), 200);
    res.json().await.unwrap()
}

async fn html(app: &TestApp, path: &str) -> String {
    let res = app.client.get(app.url(path)).send().await.unwrap();
    assert_eq!(res.status(), 200, "{path}");
    res.text().await.unwrap()
}

/// The rendered part of `page` from `marker` to the next `end` (the
/// island's props, serialised into the page too, left out).
fn part<'a>(page: &'a str, marker: &str, end: &str) -> &'a str {
    let from = page
        .find(marker)
        .unwrap_or_else(|| panic!("{marker}: {page}"));
    let rest = &page[from..];
    &rest[..rest.find(end).unwrap_or(rest.len())]
}

/// The checks panel's list.
fn checks_list(page: &str) -> &str {
    part(page, r#"data-testid="checks""#, "</ul>")
}

/// The badge's text (without Leptos' `<!>` markers).
fn badge(page: &str) -> String {
    let at = part(page, r#"data-testid="workflow-badge""#, "</span>");
    at[at.find('>').unwrap() + 1..].replace("<!>", "")
}

fn check_keys(outline: &Value) -> Vec<&str> {
    outline["checks"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| c["key"].as_str().unwrap())
        .collect()
}

#[tokio::test]
async fn a_tutor_sessions_page_shows_its_lessons_tasks_and_title_and_a_recorded_task_live() {
    let app = spawn_app().await;
    app.login(TEACHER).await;
    let lesson = full_lesson(&app).await;
    let key = app.api_key().await;
    let s = open_with(&app, &key, json!({"lessonId": lesson, "student": "Ana"})).await;

    let data = page_data(&app, &s.id).await;
    let outline = &data["outline"];
    assert_eq!(outline["kind"], "lesson", "{outline}");
    assert_eq!(outline["title"], "Past tense review");
    assert_eq!(
        check_keys(outline),
        ["task:weekend", "task:ill", "mastered:fui", "mastered:comi"]
    );
    assert_eq!(data["workflowSteps"], json!({}));
    let page = html(&app, &format!("/sessions/{}", s.id)).await;
    let list = checks_list(&page);
    assert!(list.contains("Say what you did last weekend"), "{list}");
    assert!(list.contains("Ayer fui al mercado"), "{list}");
    assert!(!list.contains("Identity verified") && !list.contains("Account found"));
    assert!(!list.contains("identity_verified"), "{list}");
    assert_eq!(badge(&page).trim(), "Past tense review");
    assert!(page.contains("Tasks done: 0 of 2"), "{page}");

    let events = subscribe(&app, &s, None).await;
    let (_, done) = call(&app, &s, "mark_task_complete", json!({"taskId": "ill"})).await;
    assert_eq!(done["allowed"], true, "{done}");
    assert_eq!(done["state"]["checks"]["task:ill"], true, "{done}");
    let events = read_events(events, 3).await;
    let update = events
        .iter()
        .find(|(_, e)| e["type"] == "workflow_update")
        .expect("a workflow_update");
    assert_eq!(update.1["data"]["checks"], json!({"task:ill": true}));

    let page = html(&app, &format!("/sessions/{}", s.id)).await;
    let at = page
        .find(r#"data-check="task:ill""#)
        .expect("the task's check");
    let start = page[..at].rfind("<li").unwrap();
    let li = &page[start..start + page[start..].find('>').unwrap()];
    assert!(li.contains("check-true"), "{li}");
    assert!(page.contains("Tasks done: 1 of 2"), "{page}");
    // Marking it again records nothing new and changes nothing.
    let (_, again) = call(&app, &s, "mark_task_complete", json!({"taskId": "ill"})).await;
    assert_eq!(again["result"]["alreadyCompleted"], true, "{again}");
    assert_eq!(again["state"]["checks"], json!({"task:ill": true}));
}

#[tokio::test]
async fn a_backend_cannot_set_a_lessons_check_itself() {
    let app = spawn_app().await;
    app.login(TEACHER).await;
    let lesson = full_lesson(&app).await;
    let key = app.api_key().await;
    let s = open_with(&app, &key, json!({"lessonId": lesson})).await;
    let res = app
        .client
        .patch(app.url(&format!("/api/sessions/{}/state", s.id)))
        .bearer_auth(&s.token)
        .json(&json!({"checks": {"task:ill": true}}))
        .send()
        .await
        .unwrap();
    assert_eq!(res.status(), 422, "only the tutor tool records a task");
}

#[tokio::test]
async fn a_workflow_sessions_page_lists_what_its_tools_declare_or_says_there_is_none() {
    let app = spawn_app().await;
    app.login(TEACHER).await;
    let key = app.teacher_key().await;

    let idv = open(&app, &key, "idv").await;
    let data = page_data(&app, &idv.id).await;
    let workflows = data["outline"]["workflows"].as_array().unwrap();
    let of = |id: &str| {
        workflows
            .iter()
            .find(|w| w["id"] == id)
            .unwrap_or_else(|| panic!("workflow {id}: {workflows:?}"))
    };
    assert_eq!(
        check_keys(of("idv")),
        ["identity_verified", "account_found"]
    );
    assert_eq!(check_keys(of("banking-master")), ["identity_verified"]);
    assert!(check_keys(of("mortgage")).is_empty());
    let page = html(&app, &format!("/sessions/{}", idv.id)).await;
    assert!(checks_list(&page).contains("Identity verified"));
    assert_eq!(badge(&page).trim(), "ID&amp;V");

    let mortgage = open(&app, &key, "mortgage").await;
    let page = html(&app, &format!("/sessions/{}", mortgage.id)).await;
    assert_eq!(badge(&page).trim(), "Mortgages");
    assert!(
        part(&page, r#"data-testid="checks-none""#, "</p>")
            .contains("No tool of this workflow requires or sets a check."),
        "{page}"
    );
    assert!(!checks_list(&page).contains("<li"), "{page}");
}
