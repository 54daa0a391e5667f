//! The built-in todo tools against the real application's database: each
//! test opens real agent sessions over the API (the todos' foreign key)
//! and runs the tools through `server::agent::execute::todos::run`, the function
//! the built-in dispatch calls.

use crate::helpers::{spawn_app, TestApp};
use crate::sessions::{open, Session};
use serde_json::{json, Value};
use switchboard::domain::todos::{MAX_LISTS_PER_SESSION, MAX_TODOS_PER_SESSION};
use switchboard::server::agent::execute::todos;

/// Runs `tool`; the result, or the refusal. A server failure fails the test.
async fn run(app: &TestApp, s: &Session, tool: &str, arguments: Value) -> Result<Value, String> {
    todos::run(&app.state, &s.id, tool, &arguments)
        .await
        .expect("no server failure")
}

/// Runs `tool`, which must run; its result.
async fn ok(app: &TestApp, s: &Session, tool: &str, arguments: Value) -> Value {
    run(app, s, tool, arguments.clone())
        .await
        .unwrap_or_else(|reason| panic!("{tool} {arguments} was refused: {reason}"))
}

/// Runs `tool`, which must be refused; the reason.
async fn refused(app: &TestApp, s: &Session, tool: &str, arguments: Value) -> String {
    match run(app, s, tool, arguments.clone()).await {
        Ok(result) => panic!("{tool} {arguments} ran: {result}"),
        Err(reason) => reason,
    }
}

/// `(id, text, done)` of the todos in a listing.
fn shown(result: &Value) -> Vec<(i64, String, bool)> {
    result["todos"]
        .as_array()
        .expect("a list of todos")
        .iter()
        .map(|t| {
            (
                t["id"].as_i64().unwrap(),
                t["text"].as_str().unwrap().to_owned(),
                t["done"].as_bool().unwrap(),
            )
        })
        .collect()
}

fn todo(id: i64, text: &str, done: bool) -> (i64, String, bool) {
    (id, text.to_owned(), done)
}

/// Everything stored for session `s`, as comparable lines.
async fn stored(app: &TestApp, s: &Session) -> Vec<String> {
    sqlx::query_scalar(
        "SELECT 'list ' || id || ' ' || name || ' ' || name_key FROM todo_lists WHERE session_id = ?
         UNION ALL SELECT 'state ' || active_list || ' ' || last_number FROM todo_sessions WHERE session_id = ?
         UNION ALL SELECT 'todo ' || number || ' ' || list_id || ' ' || text || ' ' || done || ' ' || updated_at
                   FROM todos WHERE session_id = ?
         ORDER BY 1",
    )
    .bind(&s.id)
    .bind(&s.id)
    .bind(&s.id)
    .fetch_all(&app.state.db)
    .await
    .unwrap()
}

async fn two_sessions(app: &TestApp) -> (Session, Session) {
    let key = app.api_key().await;
    (open(app, &key, "idv").await, open(app, &key, "idv").await)
}

#[tokio::test]
async fn todos_are_added_ticked_edited_filtered_and_removed() {
    let app = spawn_app().await;
    let (s, _) = two_sessions(&app).await;

    let empty = ok(&app, &s, "filterTodos", json!({})).await;
    assert_eq!(
        empty,
        json!({"list": "Inbox", "status": "all", "count": 0, "todos": []})
    );

    let milk = ok(&app, &s, "createTodo", json!({"text": " Buy\nmilk "})).await;
    assert_eq!(
        milk,
        json!({
            "todo": {"id": 1, "text": "Buy milk", "done": false, "list": "Inbox"},
            "message": "Added \"Buy milk\" to Inbox as todo 1."
        })
    );
    ok(&app, &s, "createTodo", json!({"text": "Call Sam"})).await;
    ok(&app, &s, "createTodo", json!({"text": "Pay rent"})).await;

    let ticked = ok(&app, &s, "toggleTodo", json!({"todoId": 2})).await;
    assert_eq!(ticked["todo"]["done"], true);
    assert_eq!(ticked["message"], "Marked \"Call Sam\" as done.");

    let edited = ok(
        &app,
        &s,
        "updateTodo",
        json!({"todoId": 1, "text": "Buy oat milk"}),
    )
    .await;
    assert_eq!(
        edited["todo"],
        json!({"id": 1, "text": "Buy oat milk", "done": false, "list": "Inbox"})
    );
    assert_eq!(
        edited["message"],
        "Changed todo 1 from \"Buy milk\" to \"Buy oat milk\"."
    );

    let all = ok(&app, &s, "filterTodos", json!({"status": "all"})).await;
    assert_eq!(all["count"], 3);
    assert_eq!(
        shown(&all),
        [
            todo(1, "Buy oat milk", false),
            todo(2, "Call Sam", true),
            todo(3, "Pay rent", false)
        ]
    );
    let open_ones = ok(&app, &s, "filterTodos", json!({"status": "open"})).await;
    assert_eq!(
        shown(&open_ones),
        [todo(1, "Buy oat milk", false), todo(3, "Pay rent", false)]
    );
    let done = ok(&app, &s, "filterTodos", json!({"status": "done"})).await;
    assert_eq!(shown(&done), [todo(2, "Call Sam", true)]);
    let found = ok(&app, &s, "filterTodos", json!({"query": "OAT"})).await;
    assert_eq!(found["query"], "OAT");
    assert_eq!(shown(&found), [todo(1, "Buy oat milk", false)]);

    let untick = ok(&app, &s, "toggleTodo", json!({"todoId": 2})).await;
    assert_eq!(untick["message"], "Marked \"Call Sam\" as not done.");

    let gone = ok(&app, &s, "removeTodo", json!({"todoId": 3})).await;
    assert_eq!(
        gone,
        json!({
            "removed": {"id": 3, "text": "Pay rent", "done": false, "list": "Inbox"},
            "message": "Removed \"Pay rent\" from Inbox."
        })
    );
    // A removed todo's number is never handed out again.
    let next = ok(&app, &s, "createTodo", json!({"text": "Water plants"})).await;
    assert_eq!(next["todo"]["id"], 4);
    let all = ok(&app, &s, "filterTodos", json!({})).await;
    assert_eq!(
        shown(&all),
        [
            todo(1, "Buy oat milk", false),
            todo(2, "Call Sam", false),
            todo(4, "Water plants", false)
        ]
    );
}

#[tokio::test]
async fn lists_are_created_switched_and_found_whatever_the_case() {
    let app = spawn_app().await;
    let (s, _) = two_sessions(&app).await;
    ok(&app, &s, "createTodo", json!({"text": "Buy milk"})).await;

    let work = ok(&app, &s, "createList", json!({"name": "Work"})).await;
    assert_eq!(
        work,
        json!({"list": "Work", "lists": ["Inbox", "Work"], "message": "Created the list Work and switched to it."})
    );
    // The new list is active: todos go there and filters read it.
    let report = ok(&app, &s, "createTodo", json!({"text": "Send report"})).await;
    assert_eq!(report["todo"]["list"], "Work");
    let listed = ok(&app, &s, "filterTodos", json!({})).await;
    assert_eq!(listed["list"], "Work");
    assert_eq!(shown(&listed), [todo(2, "Send report", false)]);

    // `listName` adds to another list without switching.
    let bread = ok(
        &app,
        &s,
        "createTodo",
        json!({"text": "Buy bread", "listName": "INBOX"}),
    )
    .await;
    assert_eq!(bread["todo"]["list"], "Inbox");
    assert_eq!(ok(&app, &s, "filterTodos", json!({})).await["list"], "Work");

    // Ids are the session's, whatever list a todo is on.
    let ticked = ok(&app, &s, "toggleTodo", json!({"todoId": 1})).await;
    assert_eq!(ticked["todo"]["list"], "Inbox");

    let inbox = ok(&app, &s, "switchList", json!({"name": "inbox"})).await;
    assert_eq!(
        inbox,
        json!({
            "list": "Inbox",
            "count": 2,
            "todos": [
                {"id": 1, "text": "Buy milk", "done": true, "list": "Inbox"},
                {"id": 3, "text": "Buy bread", "done": false, "list": "Inbox"}
            ],
            "message": "Switched to Inbox: 2 todos, 1 open."
        })
    );
    assert_eq!(ok(&app, &s, "filterTodos", json!({})).await["count"], 2);
    // Switching to the list already active is harmless.
    let again = ok(&app, &s, "switchList", json!({"name": "Inbox"})).await;
    assert_eq!(again["count"], 2);
}

#[tokio::test]
async fn unknown_todos_lists_and_bad_arguments_are_refused_naming_what_exists() {
    let app = spawn_app().await;
    let (s, _) = two_sessions(&app).await;

    assert_eq!(
        refused(&app, &s, "toggleTodo", json!({"todoId": 1})).await,
        "there is no todo 1 in this session; todos: none"
    );
    ok(&app, &s, "createTodo", json!({"text": "Buy milk"})).await;
    ok(&app, &s, "createTodo", json!({"text": "Call Sam"})).await;
    for tool in ["toggleTodo", "removeTodo"] {
        assert_eq!(
            refused(&app, &s, tool, json!({"todoId": 7})).await,
            "there is no todo 7 in this session; todos: 1, 2"
        );
    }
    assert_eq!(
        refused(&app, &s, "updateTodo", json!({"todoId": 7, "text": "x"})).await,
        "there is no todo 7 in this session; todos: 1, 2"
    );

    ok(&app, &s, "createList", json!({"name": "Work"})).await;
    assert_eq!(
        refused(&app, &s, "switchList", json!({"name": "Groceries"})).await,
        "list \"Groceries\" does not exist; lists: Inbox, Work"
    );
    assert_eq!(
        refused(
            &app,
            &s,
            "createTodo",
            json!({"text": "Apples", "listName": "Groceries"})
        )
        .await,
        "list \"Groceries\" does not exist; lists: Inbox, Work"
    );
    assert_eq!(
        refused(&app, &s, "createList", json!({"name": "work"})).await,
        "list \"work\" already exists; lists: Inbox, Work"
    );
    assert_eq!(
        refused(&app, &s, "createList", json!({"name": "INBOX"})).await,
        "list \"INBOX\" already exists; lists: Inbox, Work"
    );

    let long = "x".repeat(201);
    assert_eq!(
        refused(&app, &s, "createTodo", json!({"text": long})).await,
        "invalid arguments for `createTodo`: `text` is 201 characters long; at most 200 are allowed"
    );
    assert_eq!(
        refused(&app, &s, "updateTodo", json!({"todoId": 1, "text": long})).await,
        "invalid arguments for `updateTodo`: `text` is 201 characters long; at most 200 are allowed"
    );
    assert_eq!(
        refused(&app, &s, "createList", json!({"name": "n".repeat(41)})).await,
        "invalid arguments for `createList`: `name` is 41 characters long; at most 40 are allowed"
    );
    assert_eq!(
        refused(
            &app,
            &s,
            "createTodo",
            json!({"text": "a", "listName": "n".repeat(41)})
        )
        .await,
        "invalid arguments for `createTodo`: `listName` is 41 characters long; at most 40 are allowed"
    );
    assert_eq!(
        refused(&app, &s, "createTodo", json!({"text": "   "})).await,
        "invalid arguments for `createTodo`: `text` must not be empty"
    );
    assert_eq!(
        refused(&app, &s, "filterTodos", json!({"status": "later"})).await,
        "invalid arguments for `filterTodos`: `status` must be all, open or done (got \"later\")"
    );
    assert_eq!(
        refused(&app, &s, "check_balance", json!({})).await,
        "`check_balance` is not a todo tool"
    );
}

#[tokio::test]
async fn a_session_holds_at_most_its_caps_of_todos_and_lists() {
    let app = spawn_app().await;
    let (s, _) = two_sessions(&app).await;

    for n in 1..=MAX_TODOS_PER_SESSION {
        ok(&app, &s, "createTodo", json!({"text": format!("Task {n}")})).await;
    }
    let full = format!(
        "this session already has {MAX_TODOS_PER_SESSION} todos, the most it may hold; remove one first"
    );
    assert_eq!(
        refused(&app, &s, "createTodo", json!({"text": "One more"})).await,
        full
    );
    // The cap is over all lists, not per list.
    ok(&app, &s, "createList", json!({"name": "Other"})).await;
    assert_eq!(
        refused(&app, &s, "createTodo", json!({"text": "One more"})).await,
        full
    );
    ok(&app, &s, "removeTodo", json!({"todoId": 1})).await;
    let added = ok(&app, &s, "createTodo", json!({"text": "One more"})).await;
    assert_eq!(added["todo"]["id"], MAX_TODOS_PER_SESSION as i64 + 1);

    // Inbox and Other exist; fill up to the cap.
    for n in 3..=MAX_LISTS_PER_SESSION {
        ok(&app, &s, "createList", json!({"name": format!("List {n}")})).await;
    }
    let reason = refused(&app, &s, "createList", json!({"name": "Too many"})).await;
    assert!(
        reason.starts_with(&format!(
            "this session already has {MAX_LISTS_PER_SESSION} lists, the most it may have; lists: Inbox, Other, List 3"
        )),
        "{reason}"
    );
    // Switching among them still works at the cap.
    ok(&app, &s, "switchList", json!({"name": "other"})).await;
}

#[tokio::test]
async fn sessions_never_see_each_others_todos() {
    let app = spawn_app().await;
    let (a, b) = two_sessions(&app).await;
    ok(&app, &a, "createTodo", json!({"text": "A's secret"})).await;
    ok(&app, &a, "createTodo", json!({"text": "A's other"})).await;
    ok(&app, &a, "createList", json!({"name": "Work"})).await;
    let a_before = stored(&app, &a).await;

    // B starts with its own empty Inbox and its own numbering.
    let b_inbox = ok(&app, &b, "filterTodos", json!({})).await;
    assert_eq!(b_inbox["list"], "Inbox");
    assert_eq!(b_inbox["count"], 0);
    let secret = ok(&app, &b, "filterTodos", json!({"query": "secret"})).await;
    assert_eq!(secret["count"], 0);
    for tool in ["toggleTodo", "removeTodo"] {
        assert_eq!(
            refused(&app, &b, tool, json!({"todoId": 1})).await,
            "there is no todo 1 in this session; todos: none"
        );
    }
    assert_eq!(
        refused(&app, &b, "switchList", json!({"name": "Work"})).await,
        "list \"Work\" does not exist; lists: Inbox"
    );
    let mine = ok(&app, &b, "createTodo", json!({"text": "B's own"})).await;
    assert_eq!(mine["todo"]["id"], 1);
    // B may have a list of the same name as A's.
    ok(&app, &b, "createList", json!({"name": "Work"})).await;
    ok(
        &app,
        &b,
        "updateTodo",
        json!({"todoId": 1, "text": "B's, edited"}),
    )
    .await;
    ok(&app, &b, "toggleTodo", json!({"todoId": 1})).await;
    ok(&app, &b, "removeTodo", json!({"todoId": 1})).await;

    assert_eq!(stored(&app, &a).await, a_before);
    let a_inbox = ok(&app, &a, "switchList", json!({"name": "Inbox"})).await;
    assert_eq!(
        shown(&a_inbox),
        [todo(1, "A's secret", false), todo(2, "A's other", false)]
    );
}

#[tokio::test]
async fn a_refused_call_writes_nothing() {
    let app = spawn_app().await;
    let (fresh, s) = two_sessions(&app).await;

    // Not even the default list a session's first call would create.
    refused(
        &app,
        &fresh,
        "createTodo",
        json!({"text": "x", "listName": "Nope"}),
    )
    .await;
    refused(&app, &fresh, "toggleTodo", json!({"todoId": 1})).await;
    refused(&app, &fresh, "createTodo", json!({"text": ""})).await;
    assert_eq!(stored(&app, &fresh).await, Vec::<String>::new());

    ok(&app, &s, "createTodo", json!({"text": "Buy milk"})).await;
    ok(&app, &s, "createList", json!({"name": "Work"})).await;
    for n in 2..=MAX_TODOS_PER_SESSION {
        ok(&app, &s, "createTodo", json!({"text": format!("Task {n}")})).await;
    }
    for n in 3..=MAX_LISTS_PER_SESSION {
        ok(&app, &s, "createList", json!({"name": format!("List {n}")})).await;
    }
    ok(&app, &s, "switchList", json!({"name": "Work"})).await;
    let before = stored(&app, &s).await;
    let refusals = [
        ("createTodo", json!({"text": "over the cap"})),
        ("createList", json!({"name": "over the cap"})),
        ("createList", json!({"name": "work"})),
        ("switchList", json!({"name": "Groceries"})),
        ("toggleTodo", json!({"todoId": 99})),
        ("updateTodo", json!({"todoId": 99, "text": "x"})),
        ("updateTodo", json!({"todoId": 1, "text": "x".repeat(201)})),
        ("removeTodo", json!({"todoId": 99})),
    ];
    for (tool, arguments) in refusals {
        refused(&app, &s, tool, arguments).await;
        assert_eq!(stored(&app, &s).await, before, "after {tool}");
    }
    // The active list and the numbering are as they were.
    assert_eq!(ok(&app, &s, "filterTodos", json!({})).await["list"], "Work");
    ok(&app, &s, "removeTodo", json!({"todoId": 2})).await;
    let next = ok(&app, &s, "createTodo", json!({"text": "next"})).await;
    assert_eq!(next["todo"]["id"], MAX_TODOS_PER_SESSION as i64 + 1);
}
