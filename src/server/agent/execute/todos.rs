//! The todo tools, run by Switchboard itself: `createTodo`, `toggleTodo`,
//! `updateTodo`, `removeTodo`, `filterTodos`, `createList` and
//! `switchList`, acting on the calling session's own lists in SQLite, with
//! seed 003's contracts (`domain::todos`).
//!
//! They are built in, like the banking demo's tools, so the Todo Assistant
//! vibe works with no backend of its own, and their answers are recorded
//! and shown in the session's timeline like any call's. The pure half
//! (arguments, limits, matching, wording) is `domain::todos`; this module
//! is the half that needs the database.
//!
//! A call answers `Ok(Ok(success))` (`{"success": true, …}`) or
//! `Ok(Err(failure))` (`{"success": false, "error", "toolResultText"}`:
//! no todo matches, several do, an unknown list, a cap reached, an
//! argument the tool cannot take); `Err` is a server failure. A failure is
//! an answer the model reads, and the call is recorded as `failed` — it
//! ran, and did not do what was asked (`execute::Declined::Failed`).
//!
//! A call is one transaction, committed only when the tool succeeded: a
//! failure leaves the session's todos exactly as they were, even where a
//! change takes several statements (a new list is also made active; a new
//! todo also advances the session's numbering).

use super::{Ctx, Declined, Family};
use crate::domain::lesson::outcome::Recorded;
use crate::domain::todos::{
    self as rules, Failure, ListName, Tags, TodoCommand, TodoId, TodoMatch, TodoText,
};
use crate::server::platform::db::Conn;
use crate::server::store::todos as store;
use crate::server::{AppState, ServerError};
use futures_util::future::BoxFuture;
use serde_json::Value;

/// The todo tools, run for vibe sessions (the Todo Assistant's).
pub const FAMILY: Family = Family {
    name: "todos",
    tools: || TODO_TOOLS.to_vec(),
    runs_for: |kind| kind.vibe,
    claims: super::by_id_only,
    run: |cx: Ctx<'_>| -> BoxFuture<'_, super::Outcome> {
        Box::pin(async move {
            Ok(
                match run(cx.state, &cx.row.id, cx.tool, cx.arguments).await? {
                    Ok(result) => Ok(Recorded::plain(result)),
                    Err(failure) => Err(Declined::Failed(failure)),
                },
            )
        })
    },
};

/// What a todo tool call answered (its success or its failure, both in
/// the seed's shape), or a server failure.
pub type Outcome = Result<Result<Value, Value>, ServerError>;

/// A step of a call: done, or the tool's failure.
type Step<T> = Result<Result<T, Failure>, ServerError>;

/// The todo tools' ids, the tools [`run`] executes.
pub const TODO_TOOLS: [&str; 7] = rules::TOOL_IDS;

/// Whether `tool` is one of the [`TODO_TOOLS`].
pub fn is_todo_tool(tool: &str) -> bool {
    TODO_TOOLS.contains(&tool)
}

/// Runs todo tool `tool` with `arguments` on the lists of agent session
/// `session` (an existing session: its id is a foreign key). Arguments
/// that do not parse fail before the database is touched.
pub async fn run(state: &AppState, session: &str, tool: &str, arguments: &Value) -> Outcome {
    let command = match TodoCommand::parse(tool, arguments) {
        Ok(command) => command,
        Err(reason) => return Ok(Err(rules::invalid_arguments(&reason).answer())),
    };
    let mut tx = store::begin(&state.db, session).await?;
    let outcome = execute(&mut tx, session, command).await?;
    if outcome.is_ok() {
        tx.commit().await?;
    }
    // A failure drops `tx`, which rolls it back.
    Ok(outcome.map_err(|failure| failure.answer()))
}

/// The names of the session's lists, oldest first, for failures.
async fn list_names(conn: &mut Conn, session: &str) -> Result<Vec<String>, ServerError> {
    Ok(store::lists(conn, session)
        .await?
        .into_iter()
        .map(|l| l.name)
        .collect())
}

/// The session's list `name`, or the failure naming the lists it has.
async fn existing_list(conn: &mut Conn, session: &str, name: &ListName) -> Step<store::List> {
    Ok(match store::find_list(conn, session, name).await? {
        Some(list) => Ok(list),
        None => Err(rules::no_such_list(name, &list_names(conn, session).await?)),
    })
}

/// The session's todo that `text` means (see `TodoMatch::pick`), with all
/// the session's todos, or the failure.
async fn matched(
    conn: &mut Conn,
    session: &str,
    text: &TodoMatch,
) -> Step<(rules::Todo, Vec<rules::Todo>)> {
    let todos = store::all(conn, session).await?;
    let active = store::active_list(conn, session).await?;
    let picked = text.pick(&todos, &active.name).cloned();
    Ok(picked.map(|todo| (todo, todos)))
}

/// Unwraps a [`Step`]'s result, or returns its failure from the caller.
macro_rules! step {
    ($step:expr) => {
        match $step? {
            Ok(value) => value,
            Err(failure) => return Ok(Err(failure)),
        }
    };
}

/// Returns a rule's failure from the caller, if it has one.
macro_rules! check {
    ($rule:expr) => {
        if let Err(failure) = $rule {
            return Ok(Err(failure));
        }
    };
}

async fn execute(conn: &mut Conn, session: &str, command: TodoCommand) -> Step<Value> {
    Ok(Ok(match command {
        TodoCommand::CreateTodo { text, tags, list } => {
            return create_todo(conn, session, &text, &tags, list).await;
        }
        TodoCommand::ToggleTodo { todo } => {
            let (mut todo, _) = step!(matched(conn, session, &todo).await);
            todo.done = !todo.done;
            store::set_done(conn, session, TodoId::of(&todo), todo.done).await?;
            rules::toggled(&todo)
        }
        TodoCommand::UpdateTodo { todo, text } => {
            let (mut todo, all) = step!(matched(conn, session, &todo).await);
            check!(rules::room_for_text(&text, &todo.list, &all, Some(todo.id)));
            store::set_text(conn, session, TodoId::of(&todo), &text).await?;
            let before = std::mem::replace(&mut todo.text, text.as_str().to_owned());
            rules::updated(&before, &todo)
        }
        TodoCommand::RemoveTodo { todo } => {
            let (todo, _) = step!(matched(conn, session, &todo).await);
            store::remove(conn, session, TodoId::of(&todo)).await?;
            rules::removed(&todo)
        }
        TodoCommand::FilterTodos(filter) => {
            let list = store::active_list(conn, session).await?;
            let todos = store::in_list(conn, &list).await?;
            rules::listing(&list.name, &filter, &todos)
        }
        TodoCommand::CreateList { name } => return create_list(conn, session, &name).await,
        TodoCommand::SwitchList { name } => {
            let list = step!(existing_list(conn, session, &name).await);
            store::set_active_list(conn, session, &list).await?;
            let todos = store::in_list(conn, &list).await?;
            rules::switched(&list.name, &todos)
        }
    }))
}

/// `createTodo`: a todo on `list` (default: the active one), within the
/// session's cap and not a second todo of that text on the list; an
/// unknown list fails naming the lists.
async fn create_todo(
    conn: &mut Conn,
    session: &str,
    text: &TodoText,
    tags: &Tags,
    list: Option<ListName>,
) -> Step<Value> {
    let todos = store::all(conn, session).await?;
    check!(rules::room_for_todo(todos.len()));
    let list = match list {
        None => store::active_list(conn, session).await?,
        Some(name) => step!(existing_list(conn, session, &name).await),
    };
    check!(rules::room_for_text(text, &list.name, &todos, None));
    Ok(Ok(rules::created(
        &store::add(conn, session, &list, text, tags).await?,
    )))
}

/// `createList`: a new list, made active, within the session's cap; a
/// name taken (any case) fails naming the lists.
async fn create_list(conn: &mut Conn, session: &str, name: &ListName) -> Step<Value> {
    let mut lists = list_names(conn, session).await?;
    if store::find_list(conn, session, name).await?.is_some() {
        return Ok(Err(rules::list_exists(name, &lists)));
    }
    check!(rules::room_for_list(&lists));
    let list = store::create_list(conn, session, name).await?;
    store::set_active_list(conn, session, &list).await?;
    lists.push(list.name.clone());
    Ok(Ok(rules::list_created(&list.name, &lists)))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::domain::todos::{todo_tools, TODO_TEXT_MAX_CHARS};
    use crate::server::agent::rules::compile_schema;
    use serde_json::json;

    /// The schema a model is given and the parser [`run`] uses agree: what
    /// the schema accepts parses, and an over-long text fails both.
    #[test]
    fn the_schemas_and_the_parser_agree() {
        let valid = [
            json!({"todoText": "Buy milk", "tags": "shop, urgent", "listName": "Groceries"}),
            json!({"todoText": "milk"}),
            json!({"oldText": "milk", "newText": "Buy oat milk"}),
            json!({"todoText": "milk"}),
            json!({"tag": "all"}),
            json!({"listName": "Work"}),
            json!({"listName": "work"}),
        ];
        for (tool, arguments) in todo_tools().iter().zip(valid) {
            let schema = compile_schema(&tool.parameters).unwrap();
            assert!(schema.is_valid(&arguments), "{}: {arguments}", tool.id);
            assert!(is_todo_tool(tool.id.as_str()));
            TodoCommand::parse(tool.id.as_str(), &arguments).unwrap();
            let mut extra = arguments.clone();
            extra["colour"] = json!("red");
            assert!(!schema.is_valid(&extra), "{}", tool.id);
            assert!(TodoCommand::parse(tool.id.as_str(), &extra).is_err());
        }
        let long = json!({"todoText": "x".repeat(TODO_TEXT_MAX_CHARS + 1)});
        let schema = compile_schema(&todo_tools()[0].parameters).unwrap();
        assert!(!schema.is_valid(&long));
        assert!(TodoCommand::parse("createTodo", &long).is_err());
        assert!(!is_todo_tool("check_balance"));
    }
}
