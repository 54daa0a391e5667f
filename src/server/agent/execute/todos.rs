//! The todo tools, run by Switchboard itself: `createTodo`, `toggleTodo`,
//! `updateTodo`, `removeTodo`, `filterTodos`, `createList` and
//! `switchList`, acting on the calling session's own lists in SQLite.
//!
//! They are built in, like the banking demo's tools, so the Todo Assistant
//! vibe works with no backend of its own, and their results are recorded
//! and shown in the session's timeline like any call's. The pure half
//! (arguments, limits, filtering, wording) is `domain::todos`; this module
//! is the half that needs the database.
//!
//! Same convention as every built-in (`execute`): `Ok(Ok(result))` ran;
//! `Ok(Err(reason))` is a refusal the model is told (an unknown todo or
//! list, naming the ones that exist; a cap reached; an argument over its
//! limit, naming it); `Err` is a server failure.
//!
//! A call is one transaction, committed only when the tool ran: a refusal
//! or failure leaves the session's todos exactly as they were, even where
//! a change takes several statements (a new list is also made active; a
//! new todo also advances the session's numbering).

use super::{plain, Ctx, Family};
use crate::domain::todos::{self as rules, ListName, Todo, TodoCommand, TodoId, TodoText};
use crate::server::store::todos as store;
use crate::server::{AppState, ServerError};
use futures_util::future::BoxFuture;
use serde_json::Value;
use sqlx::SqliteConnection;

/// The todo tools, run for vibe sessions (the Todo Assistant's).
pub const FAMILY: Family = Family {
    name: "todos",
    tools: || TODO_TOOLS.to_vec(),
    runs_for: |kind| kind.vibe,
    run: |cx: Ctx<'_>| -> BoxFuture<'_, super::Outcome> {
        Box::pin(async move {
            Ok(plain(
                run(cx.state, &cx.row.id, cx.tool, cx.arguments).await?,
            ))
        })
    },
};

/// What a todo tool call gave: its result, a refusal, or a server failure.
type Outcome = Result<Result<Value, String>, ServerError>;

/// The todo tools' ids, the tools [`run`] executes.
pub const TODO_TOOLS: [&str; 7] = rules::TOOL_IDS;

/// Whether `tool` is one of the [`TODO_TOOLS`].
pub fn is_todo_tool(tool: &str) -> bool {
    TODO_TOOLS.contains(&tool)
}

/// Runs todo tool `tool` with `arguments` on the lists of agent session
/// `session` (an existing session: its id is a foreign key). Arguments
/// that do not parse are refused before the database is touched.
pub async fn run(state: &AppState, session: &str, tool: &str, arguments: &Value) -> Outcome {
    let command = match TodoCommand::parse(tool, arguments) {
        Ok(command) => command,
        Err(reason) => return Ok(Err(reason)),
    };
    let mut tx = store::begin(&state.db, session).await?;
    let outcome = execute(&mut tx, session, command).await?;
    if outcome.is_ok() {
        tx.commit().await?;
    }
    // A refusal drops `tx`, which rolls it back.
    Ok(outcome)
}

/// The names of the session's lists, oldest first, for refusals.
async fn list_names(
    conn: &mut SqliteConnection,
    session: &str,
) -> Result<Vec<String>, ServerError> {
    Ok(store::lists(conn, session)
        .await?
        .into_iter()
        .map(|l| l.name)
        .collect())
}

/// The session's todo `id`, or the refusal naming the ids it has.
async fn existing(
    conn: &mut SqliteConnection,
    session: &str,
    id: TodoId,
) -> Result<Result<Todo, String>, ServerError> {
    Ok(match store::get(conn, session, id).await? {
        Some(todo) => Ok(todo),
        None => Err(rules::no_such_todo(id, &store::ids(conn, session).await?)),
    })
}

async fn execute(conn: &mut SqliteConnection, session: &str, command: TodoCommand) -> Outcome {
    Ok(Ok(match command {
        TodoCommand::CreateTodo { text, list } => {
            return create_todo(conn, session, &text, list).await;
        }
        TodoCommand::ToggleTodo { id } => {
            let mut todo = match existing(conn, session, id).await? {
                Ok(todo) => todo,
                Err(reason) => return Ok(Err(reason)),
            };
            todo.done = !todo.done;
            store::set_done(conn, session, id, todo.done).await?;
            rules::toggled(&todo)
        }
        TodoCommand::UpdateTodo { id, text } => {
            let mut todo = match existing(conn, session, id).await? {
                Ok(todo) => todo,
                Err(reason) => return Ok(Err(reason)),
            };
            store::set_text(conn, session, id, &text).await?;
            let before = std::mem::replace(&mut todo.text, text.as_str().to_owned());
            rules::updated(&before, &todo)
        }
        TodoCommand::RemoveTodo { id } => {
            let todo = match existing(conn, session, id).await? {
                Ok(todo) => todo,
                Err(reason) => return Ok(Err(reason)),
            };
            store::remove(conn, session, id).await?;
            rules::removed(&todo)
        }
        TodoCommand::FilterTodos(filter) => {
            let list = store::active_list(conn, session).await?;
            let todos = store::in_list(conn, &list).await?;
            rules::listing(&list.name, &filter, &todos)
        }
        TodoCommand::CreateList { name } => return create_list(conn, session, &name).await,
        TodoCommand::SwitchList { name } => {
            let Some(list) = store::find_list(conn, session, &name).await? else {
                let lists = list_names(conn, session).await?;
                return Ok(Err(rules::no_such_list(&name, &lists)));
            };
            store::set_active_list(conn, session, &list).await?;
            let todos = store::in_list(conn, &list).await?;
            rules::switched(&list.name, &todos)
        }
    }))
}

/// `createTodo`: a todo in list `list` (default: the active one), within
/// the session's cap; an unknown list is refused naming the lists.
async fn create_todo(
    conn: &mut SqliteConnection,
    session: &str,
    text: &TodoText,
    list: Option<ListName>,
) -> Outcome {
    if let Err(reason) = rules::room_for_todo(store::ids(conn, session).await?.len()) {
        return Ok(Err(reason));
    }
    let list = match list {
        None => store::active_list(conn, session).await?,
        Some(name) => match store::find_list(conn, session, &name).await? {
            Some(list) => list,
            None => {
                let lists = list_names(conn, session).await?;
                return Ok(Err(rules::no_such_list(&name, &lists)));
            }
        },
    };
    Ok(Ok(rules::created(
        &store::add(conn, session, &list, text).await?,
    )))
}

/// `createList`: a new list, made active, within the session's cap; a
/// name taken (any case) is refused naming the lists.
async fn create_list(conn: &mut SqliteConnection, session: &str, name: &ListName) -> Outcome {
    let mut lists = list_names(conn, session).await?;
    if store::find_list(conn, session, name).await?.is_some() {
        return Ok(Err(rules::list_exists(name, &lists)));
    }
    if let Err(reason) = rules::room_for_list(&lists) {
        return Ok(Err(reason));
    }
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
            json!({"text": "Buy milk", "listName": "Groceries"}),
            json!({"todoId": 1}),
            json!({"todoId": 2, "text": "Buy oat milk"}),
            json!({"todoId": 3}),
            json!({"status": "done", "query": "milk"}),
            json!({"name": "Work"}),
            json!({"name": "work"}),
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
        let long = json!({"text": "x".repeat(TODO_TEXT_MAX_CHARS + 1)});
        let schema = compile_schema(&todo_tools()[0].parameters).unwrap();
        assert!(!schema.is_valid(&long));
        assert!(TodoCommand::parse("createTodo", &long).is_err());
        assert!(!is_todo_tool("check_balance"));
    }
}
