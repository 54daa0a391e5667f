//! The built-in todo tools against the real application's database, with
//! seed 003's contracts (issue #36): each test opens real agent sessions
//! over the API (the todos' foreign key) and runs the tools through
//! `server::agent::execute::todos::run`, the function the built-in
//! dispatch calls. Every answer is `{"success": true, "message",
//! "toolResultText", …}` or `{"success": false, "error",
//! "toolResultText"}`.

use crate::helpers::{spawn_app, TestApp};
use crate::sessions::{open, Session};
use serde_json::{json, Value};
use switchboard::domain::todos::{MAX_LISTS_PER_SESSION, MAX_TODOS_PER_SESSION};
use switchboard::server::agent::execute::todos;

/// Runs `tool`; its success or failure answer. A server failure fails the
/// test.
async fn run(app: &TestApp, s: &Session, tool: &str, arguments: Value) -> Result<Value, Value> {
    todos::run(&app.state, &s.id, tool, &arguments)
        .await
        .expect("no server failure")
}

/// Runs `tool`, which must succeed; its answer.
async fn ok(app: &TestApp, s: &Session, tool: &str, arguments: Value) -> Value {
    let answer = run(app, s, tool, arguments.clone())
        .await
        .unwrap_or_else(|failure| panic!("{tool} {arguments} failed: {failure}"));
    assert_eq!(answer["success"], true, "{answer}");
    assert!(answer["message"].is_string() && answer["toolResultText"].is_string());
    answer
}

/// Runs `tool`, which must fail; its `error`.
async fn failed(app: &TestApp, s: &Session, tool: &str, arguments: Value) -> String {
    match run(app, s, tool, arguments.clone()).await {
        Ok(answer) => panic!("{tool} {arguments} succeeded: {answer}"),
        Err(failure) => {
            assert_eq!(failure["success"], false, "{failure}");
            assert!(failure["toolResultText"].is_string(), "{failure}");
            failure["error"].as_str().unwrap().to_owned()
        }
    }
}

/// `(id, text, done)` of the todos in a listing.
fn shown(answer: &Value) -> Vec<(i64, String, bool)> {
    answer["todos"]
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
        "SELECT 'list ' || id || ' ' || name || ' ' || name_key FROM todo_lists WHERE session_id = $1
         UNION ALL SELECT 'state ' || active_list || ' ' || last_number FROM todo_sessions WHERE session_id = $2
         UNION ALL SELECT 'todo ' || number || ' ' || list_id || ' ' || text || ' ' || tags || ' ' || done || ' ' || updated_at
                   FROM todos WHERE session_id = $3
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
async fn todos_are_created_with_tags_toggled_updated_filtered_and_removed_by_their_text() {
    let app = spawn_app().await;
    let (s, _) = two_sessions(&app).await;

    let empty = ok(&app, &s, "filterTodos", json!({"tag": "all"})).await;
    assert_eq!(
        (&empty["list"], &empty["count"]),
        (&json!("Inbox"), &json!(0))
    );

    let milk = ok(
        &app,
        &s,
        "createTodo",
        json!({"todoText": " Buy\nmilk ", "tags": "shop, urgent,,Shop"}),
    )
    .await;
    assert_eq!(
        milk,
        json!({
            "success": true,
            "message": "Created todo \"Buy milk\" on Inbox.",
            "toolResultText": "I've added \"Buy milk\" to your Inbox list with tags: shop, urgent.",
            "todo": {"id": 1, "text": "Buy milk", "done": false, "tags": ["shop", "urgent"], "list": "Inbox"}
        })
    );
    ok(
        &app,
        &s,
        "createTodo",
        json!({"todoText": "Call Sam", "tags": "work"}),
    )
    .await;
    ok(&app, &s, "createTodo", json!({"todoText": "Pay rent"})).await;

    let ticked = ok(&app, &s, "toggleTodo", json!({"todoText": "SAM"})).await;
    assert_eq!(ticked["todo"]["done"], true);
    assert_eq!(ticked["message"], "Marked \"Call Sam\" as done.");

    let edited = ok(
        &app,
        &s,
        "updateTodo",
        json!({"oldText": "milk", "newText": "Buy oat milk"}),
    )
    .await;
    assert_eq!(
        edited["todo"],
        json!({"id": 1, "text": "Buy oat milk", "done": false, "tags": ["shop", "urgent"], "list": "Inbox"})
    );
    assert_eq!(
        edited["message"],
        "Updated todo \"Buy milk\" to \"Buy oat milk\"."
    );

    let all = ok(&app, &s, "filterTodos", json!({"tag": "all"})).await;
    assert_eq!(all["count"], 3);
    assert_eq!(
        shown(&all),
        [
            todo(1, "Buy oat milk", false),
            todo(2, "Call Sam", true),
            todo(3, "Pay rent", false)
        ]
    );
    let urgent = ok(&app, &s, "filterTodos", json!({"tag": "URGENT"})).await;
    assert_eq!(urgent["tag"], "URGENT");
    assert_eq!(shown(&urgent), [todo(1, "Buy oat milk", false)]);
    assert_eq!(
        urgent["toolResultText"],
        "I've filtered your Inbox list to the todos tagged \"URGENT\": 1 todo."
    );
    let none = ok(&app, &s, "filterTodos", json!({"tag": "garden"})).await;
    assert_eq!(none["count"], 0);

    let untick = ok(&app, &s, "toggleTodo", json!({"todoText": "call sam"})).await;
    assert_eq!(untick["message"], "Marked \"Call Sam\" as not done.");

    let gone = ok(&app, &s, "removeTodo", json!({"todoText": "rent"})).await;
    assert_eq!(
        gone,
        json!({
            "success": true,
            "message": "Removed todo \"Pay rent\" from Inbox.",
            "toolResultText": "I've removed \"Pay rent\" from your Inbox list.",
            "removed": {"id": 3, "text": "Pay rent", "done": false, "tags": [], "list": "Inbox"}
        })
    );
    // A removed todo's number is never handed out again.
    let next = ok(&app, &s, "createTodo", json!({"todoText": "Water plants"})).await;
    assert_eq!(next["todo"]["id"], 4);
}

#[tokio::test]
async fn a_text_several_todos_match_fails_naming_them_and_the_whole_text_wins() {
    let app = spawn_app().await;
    let (s, _) = two_sessions(&app).await;
    ok(&app, &s, "createTodo", json!({"todoText": "Buy milk"})).await;
    ok(
        &app,
        &s,
        "createTodo",
        json!({"todoText": "Buy milk and eggs"}),
    )
    .await;

    assert_eq!(
        failed(&app, &s, "toggleTodo", json!({"todoText": "milk"})).await,
        "\"milk\" matches 2 todos: \"Buy milk\" (Inbox), \"Buy milk and eggs\" (Inbox)"
    );
    let answer = run(&app, &s, "removeTodo", json!({"todoText": "MILK"}))
        .await
        .unwrap_err();
    assert_eq!(
        answer["toolResultText"],
        "I found several todos that match: \"Buy milk\", \"Buy milk and eggs\". Please be more specific about which one you mean."
    );
    // The todo whose whole text it is can always be named.
    let ticked = ok(&app, &s, "toggleTodo", json!({"todoText": "buy milk"})).await;
    assert_eq!(ticked["todo"]["id"], 1);
    assert_eq!(
        failed(
            &app,
            &s,
            "updateTodo",
            json!({"oldText": "bread", "newText": "x"})
        )
        .await,
        "no todo matches \"bread\""
    );
    // Two todos of one text on one list could never be told apart.
    assert_eq!(
        failed(&app, &s, "createTodo", json!({"todoText": "BUY MILK"})).await,
        "\"Buy milk\" is already on Inbox"
    );
    assert_eq!(
        failed(
            &app,
            &s,
            "updateTodo",
            json!({"oldText": "eggs", "newText": "buy milk"})
        )
        .await,
        "\"Buy milk\" is already on Inbox"
    );
}

#[tokio::test]
async fn lists_are_created_switched_and_found_whatever_the_case() {
    let app = spawn_app().await;
    let (s, _) = two_sessions(&app).await;
    ok(&app, &s, "createTodo", json!({"todoText": "Buy milk"})).await;

    let work = ok(&app, &s, "createList", json!({"listName": "Work"})).await;
    assert_eq!(
        work,
        json!({
            "success": true,
            "message": "Created the list Work and switched to it.",
            "toolResultText": "I've created a new todo list called \"Work\" and switched to it.",
            "list": "Work",
            "lists": ["Inbox", "Work"]
        })
    );
    // The new list is active: todos go there and filters read it.
    let report = ok(&app, &s, "createTodo", json!({"todoText": "Send report"})).await;
    assert_eq!(report["todo"]["list"], "Work");
    let listed = ok(&app, &s, "filterTodos", json!({"tag": "all"})).await;
    assert_eq!(listed["list"], "Work");
    assert_eq!(shown(&listed), [todo(2, "Send report", false)]);

    // `listName` adds to another list without switching.
    let bread = ok(
        &app,
        &s,
        "createTodo",
        json!({"todoText": "Buy bread", "listName": "INBOX"}),
    )
    .await;
    assert_eq!(bread["todo"]["list"], "Inbox");
    assert_eq!(
        ok(&app, &s, "filterTodos", json!({"tag": "all"})).await["list"],
        "Work"
    );

    // A todo is found by its text whatever list it is on.
    let ticked = ok(&app, &s, "toggleTodo", json!({"todoText": "milk"})).await;
    assert_eq!(ticked["todo"]["list"], "Inbox");

    let inbox = ok(&app, &s, "switchList", json!({"listName": "inbox"})).await;
    assert_eq!(
        inbox,
        json!({
            "success": true,
            "message": "Switched to Inbox: 2 todos, 1 open.",
            "toolResultText": "I've switched to the \"Inbox\" list: 2 todos, 1 open.",
            "list": "Inbox",
            "count": 2,
            "todos": [
                {"id": 1, "text": "Buy milk", "done": true, "tags": []},
                {"id": 3, "text": "Buy bread", "done": false, "tags": []}
            ]
        })
    );
    // Switching to the list already active is harmless.
    let again = ok(&app, &s, "switchList", json!({"listName": "Inbox"})).await;
    assert_eq!(again["count"], 2);
}

#[tokio::test]
async fn unknown_todos_lists_and_bad_arguments_fail_naming_what_exists() {
    let app = spawn_app().await;
    let (s, _) = two_sessions(&app).await;

    assert_eq!(
        failed(&app, &s, "toggleTodo", json!({"todoText": "milk"})).await,
        "no todo matches \"milk\""
    );
    ok(&app, &s, "createList", json!({"listName": "Work"})).await;
    assert_eq!(
        failed(&app, &s, "switchList", json!({"listName": "Groceries"})).await,
        "list \"Groceries\" does not exist; lists: Inbox, Work"
    );
    assert_eq!(
        failed(
            &app,
            &s,
            "createTodo",
            json!({"todoText": "Apples", "listName": "Groceries"})
        )
        .await,
        "list \"Groceries\" does not exist; lists: Inbox, Work"
    );
    assert_eq!(
        failed(&app, &s, "createList", json!({"listName": "work"})).await,
        "list \"work\" already exists; lists: Inbox, Work"
    );

    let long = "x".repeat(201);
    let cases = [
        (
            "createTodo",
            json!({"todoText": long}),
            "invalid arguments for `createTodo`: `todoText` is 201 characters long; at most 200 are allowed",
        ),
        (
            "updateTodo",
            json!({"oldText": "a", "newText": long}),
            "invalid arguments for `updateTodo`: `newText` is 201 characters long; at most 200 are allowed",
        ),
        (
            "createList",
            json!({"listName": "n".repeat(41)}),
            "invalid arguments for `createList`: `listName` is 41 characters long; at most 40 are allowed",
        ),
        (
            "createTodo",
            json!({"todoText": "   "}),
            "invalid arguments for `createTodo`: `todoText` must not be empty",
        ),
        (
            "createTodo",
            json!({"todoText": "a", "tags": "a,b,c,d,e,f"}),
            "invalid arguments for `createTodo`: `tags` names 6 tags; at most 5 are allowed",
        ),
        (
            "createTodo",
            json!({"text": "Buy milk"}),
            "invalid arguments for `createTodo`: unknown argument `text`; it takes todoText, tags, listName",
        ),
        (
            "toggleTodo",
            json!({"todoId": 1}),
            "invalid arguments for `toggleTodo`: unknown argument `todoId`; it takes todoText",
        ),
        ("check_balance", json!({}), "`check_balance` is not a todo tool"),
    ];
    for (tool, arguments, error) in cases {
        assert_eq!(failed(&app, &s, tool, arguments).await, error);
    }
}

#[tokio::test]
async fn a_session_holds_at_most_its_caps_of_todos_and_lists() {
    let app = spawn_app().await;
    let (s, _) = two_sessions(&app).await;

    for n in 1..=MAX_TODOS_PER_SESSION {
        ok(
            &app,
            &s,
            "createTodo",
            json!({"todoText": format!("Task {n}")}),
        )
        .await;
    }
    let full = format!(
        "this session already has {MAX_TODOS_PER_SESSION} todos, the most it may hold; remove one first"
    );
    assert_eq!(
        failed(&app, &s, "createTodo", json!({"todoText": "One more"})).await,
        full
    );
    // The cap is over all lists, not per list.
    ok(&app, &s, "createList", json!({"listName": "Other"})).await;
    assert_eq!(
        failed(&app, &s, "createTodo", json!({"todoText": "One more"})).await,
        full
    );
    ok(&app, &s, "removeTodo", json!({"todoText": "Task 1"})).await;
    let added = ok(&app, &s, "createTodo", json!({"todoText": "One more"})).await;
    assert_eq!(added["todo"]["id"], MAX_TODOS_PER_SESSION as i64 + 1);

    // Inbox and Other exist; fill up to the cap.
    for n in 3..=MAX_LISTS_PER_SESSION {
        ok(
            &app,
            &s,
            "createList",
            json!({"listName": format!("List {n}")}),
        )
        .await;
    }
    let error = failed(&app, &s, "createList", json!({"listName": "Too many"})).await;
    assert!(
        error.starts_with(&format!(
            "this session already has {MAX_LISTS_PER_SESSION} lists, the most it may have; lists: Inbox, Other, List 3"
        )),
        "{error}"
    );
    // Switching among them still works at the cap.
    ok(&app, &s, "switchList", json!({"listName": "other"})).await;
}

#[tokio::test]
async fn sessions_never_see_each_others_todos() {
    let app = spawn_app().await;
    let (a, b) = two_sessions(&app).await;
    ok(
        &app,
        &a,
        "createTodo",
        json!({"todoText": "A's secret", "tags": "private"}),
    )
    .await;
    ok(&app, &a, "createTodo", json!({"todoText": "A's other"})).await;
    ok(&app, &a, "createList", json!({"listName": "Work"})).await;
    let a_before = stored(&app, &a).await;

    // B starts with its own empty Inbox and its own numbering.
    let b_inbox = ok(&app, &b, "filterTodos", json!({"tag": "all"})).await;
    assert_eq!(
        (&b_inbox["list"], &b_inbox["count"]),
        (&json!("Inbox"), &json!(0))
    );
    assert_eq!(
        ok(&app, &b, "filterTodos", json!({"tag": "private"})).await["count"],
        0
    );
    for tool in ["toggleTodo", "removeTodo"] {
        assert_eq!(
            failed(&app, &b, tool, json!({"todoText": "secret"})).await,
            "no todo matches \"secret\""
        );
    }
    assert_eq!(
        failed(&app, &b, "switchList", json!({"listName": "Work"})).await,
        "list \"Work\" does not exist; lists: Inbox"
    );
    let mine = ok(&app, &b, "createTodo", json!({"todoText": "A's secret"})).await;
    assert_eq!(
        mine["todo"]["id"], 1,
        "B's own numbering, and its own texts"
    );
    // B may have a list of the same name as A's.
    ok(&app, &b, "createList", json!({"listName": "Work"})).await;
    ok(
        &app,
        &b,
        "updateTodo",
        json!({"oldText": "secret", "newText": "B's, edited"}),
    )
    .await;
    ok(&app, &b, "toggleTodo", json!({"todoText": "edited"})).await;
    ok(&app, &b, "removeTodo", json!({"todoText": "edited"})).await;

    assert_eq!(stored(&app, &a).await, a_before);
    let a_inbox = ok(&app, &a, "switchList", json!({"listName": "Inbox"})).await;
    assert_eq!(
        shown(&a_inbox),
        [todo(1, "A's secret", false), todo(2, "A's other", false)]
    );
}

#[tokio::test]
async fn a_failed_call_writes_nothing() {
    let app = spawn_app().await;
    let (fresh, s) = two_sessions(&app).await;

    // Not even the default list a session's first call would create.
    failed(
        &app,
        &fresh,
        "createTodo",
        json!({"todoText": "x", "listName": "Nope"}),
    )
    .await;
    failed(&app, &fresh, "toggleTodo", json!({"todoText": "x"})).await;
    failed(&app, &fresh, "createTodo", json!({"todoText": ""})).await;
    assert_eq!(stored(&app, &fresh).await, Vec::<String>::new());

    ok(&app, &s, "createTodo", json!({"todoText": "Buy milk"})).await;
    ok(&app, &s, "createList", json!({"listName": "Work"})).await;
    for n in 2..=MAX_TODOS_PER_SESSION {
        ok(
            &app,
            &s,
            "createTodo",
            json!({"todoText": format!("Task {n}")}),
        )
        .await;
    }
    for n in 3..=MAX_LISTS_PER_SESSION {
        ok(
            &app,
            &s,
            "createList",
            json!({"listName": format!("List {n}")}),
        )
        .await;
    }
    ok(&app, &s, "switchList", json!({"listName": "Work"})).await;
    let before = stored(&app, &s).await;
    let failures = [
        ("createTodo", json!({"todoText": "over the cap"})),
        ("createList", json!({"listName": "over the cap"})),
        ("createList", json!({"listName": "work"})),
        ("switchList", json!({"listName": "Groceries"})),
        ("toggleTodo", json!({"todoText": "nothing like it"})),
        ("toggleTodo", json!({"todoText": "Task"})),
        ("updateTodo", json!({"oldText": "nothing", "newText": "x"})),
        (
            "updateTodo",
            json!({"oldText": "milk", "newText": "x".repeat(201)}),
        ),
        ("removeTodo", json!({"todoText": "nothing"})),
    ];
    for (tool, arguments) in failures {
        failed(&app, &s, tool, arguments).await;
        assert_eq!(stored(&app, &s).await, before, "after {tool}");
    }
    // The active list and the numbering are as they were.
    assert_eq!(
        ok(&app, &s, "filterTodos", json!({"tag": "all"})).await["list"],
        "Work"
    );
    ok(&app, &s, "removeTodo", json!({"todoText": "Task 2"})).await;
    let next = ok(&app, &s, "createTodo", json!({"todoText": "next"})).await;
    assert_eq!(next["todo"]["id"], MAX_TODOS_PER_SESSION as i64 + 1);
}
