//! The todo tools' data: each agent session's todo lists, its active list
//! and its todos (migrations `0013_todos.sql`, `0024_todo_tags.sql`).
//!
//! Every query is scoped by the session id, so a session can never read or
//! change another's todos, whatever ids it names. A tool call is one
//! transaction ([`begin`], then the functions here on it, then commit), so
//! a refused or failed call leaves nothing half-written.

use crate::domain::todos::{ListName, Tags, Todo, TodoId, TodoText};
use crate::server::platform::db::now;
use crate::server::platform::db::{Conn, Db};
use crate::server::ServerError;
use sqlx::{Any, Transaction};

/// One of a session's lists.
#[derive(Debug, Clone, PartialEq, Eq, sqlx::FromRow)]
pub struct List {
    /// Row id (never shown to the model: lists are named).
    pub id: i64,
    /// The name as created.
    pub name: String,
}

/// Starts a todo call's transaction for `session`, creating its default
/// list and state row on its first call.
///
/// That creation is the transaction's first statement, and a write, so
/// SQLite's write lock is taken at once: the reads that follow see exactly
/// what the call's writes build on, and a second writer waits (busy
/// timeout) instead of failing at commit.
pub async fn begin(db: &Db, session: &str) -> Result<Transaction<'static, Any>, ServerError> {
    let mut tx = db.begin().await?;
    let inbox = ListName::default_list();
    sqlx::query(
        "INSERT INTO todo_lists (session_id, name, name_key, created_at) VALUES ($1, $2, $3, $4)
         ON CONFLICT DO NOTHING",
    )
    .bind(session)
    .bind(inbox.as_str())
    .bind(inbox.key())
    .bind(now())
    .execute(&mut *tx)
    .await?;
    sqlx::query(
        "INSERT INTO todo_sessions (session_id, active_list)
         SELECT session_id, id FROM todo_lists WHERE session_id = $1 AND name_key = $2
         ON CONFLICT DO NOTHING",
    )
    .bind(session)
    .bind(inbox.key())
    .execute(&mut *tx)
    .await?;
    Ok(tx)
}

/// The session's lists, oldest
/// ([`DEFAULT_LIST`](crate::domain::todos::DEFAULT_LIST)) first.
pub async fn lists(conn: &mut Conn, session: &str) -> Result<Vec<List>, ServerError> {
    Ok(
        sqlx::query_as("SELECT id, name FROM todo_lists WHERE session_id = $1 ORDER BY id")
            .bind(session)
            .fetch_all(conn)
            .await?,
    )
}

/// The session's active list (there is always one after [`begin`]).
pub async fn active_list(conn: &mut Conn, session: &str) -> Result<List, ServerError> {
    Ok(sqlx::query_as(
        "SELECT l.id, l.name FROM todo_sessions s JOIN todo_lists l ON l.id = s.active_list
         WHERE s.session_id = $1",
    )
    .bind(session)
    .fetch_one(conn)
    .await?)
}

/// The session's list called `name` (in any case), if it has one.
pub async fn find_list(
    conn: &mut Conn,
    session: &str,
    name: &ListName,
) -> Result<Option<List>, ServerError> {
    Ok(
        sqlx::query_as("SELECT id, name FROM todo_lists WHERE session_id = $1 AND name_key = $2")
            .bind(session)
            .bind(name.key())
            .fetch_optional(conn)
            .await?,
    )
}

/// Adds list `name` to the session (the caller has checked that no list
/// has its key, and the cap).
pub async fn create_list(
    conn: &mut Conn,
    session: &str,
    name: &ListName,
) -> Result<List, ServerError> {
    let id = sqlx::query_scalar::<_, i64>(
        "INSERT INTO todo_lists (session_id, name, name_key, created_at) VALUES ($1, $2, $3, $4) RETURNING id",
    )
    .bind(session)
    .bind(name.as_str())
    .bind(name.key())
    .bind(now())
    .fetch_one(conn)
    .await?
    ;
    Ok(List {
        id,
        name: name.as_str().to_owned(),
    })
}

/// Makes `list` (one of the session's) its active list.
pub async fn set_active_list(
    conn: &mut Conn,
    session: &str,
    list: &List,
) -> Result<(), ServerError> {
    sqlx::query("UPDATE todo_sessions SET active_list = $1 WHERE session_id = $2")
        .bind(list.id)
        .bind(session)
        .execute(conn)
        .await?;
    Ok(())
}

#[derive(sqlx::FromRow)]
struct TodoRow {
    number: i64,
    text: String,
    #[sqlx(try_from = "crate::server::platform::db::Flag")]
    done: bool,
    tags: String,
    list: String,
}

impl From<TodoRow> for Todo {
    fn from(row: TodoRow) -> Self {
        Todo {
            id: row.number,
            text: row.text,
            done: row.done,
            // Written by `add` from parsed tags; a row from before tags
            // has the column's default, `[]`.
            tags: serde_json::from_str(&row.tags).unwrap_or_default(),
            list: row.list,
        }
    }
}

/// The columns a [`Todo`] is read from, `t` the todo and `l` its list.
const TODO_COLUMNS: &str = "SELECT t.number, t.text, t.done, t.tags, l.name AS list
     FROM todos t JOIN todo_lists l ON l.id = t.list_id";

/// All the session's todos, over all its lists, oldest first: what a
/// text is matched against.
pub async fn all(conn: &mut Conn, session: &str) -> Result<Vec<Todo>, ServerError> {
    Ok(sqlx::query_as::<_, TodoRow>(&format!(
        "{TODO_COLUMNS} WHERE t.session_id = $1 ORDER BY t.number"
    ))
    .bind(session)
    .fetch_all(conn)
    .await?
    .into_iter()
    .map(Todo::from)
    .collect())
}

/// Adds `text` with `tags` to `list` (one of the session's) with the
/// session's next number; returns the new todo. The caller has checked
/// the cap.
pub async fn add(
    conn: &mut Conn,
    session: &str,
    list: &List,
    text: &TodoText,
    tags: &Tags,
) -> Result<Todo, ServerError> {
    let number: i64 = sqlx::query_scalar(
        "UPDATE todo_sessions SET last_number = last_number + 1 WHERE session_id = $1 RETURNING last_number",
    )
    .bind(session)
    .fetch_one(&mut *conn)
    .await?;
    let t = now();
    sqlx::query(
        "INSERT INTO todos (session_id, number, list_id, text, tags, done, created_at, updated_at) VALUES ($1, $2, $3, $4, $5, 0, $6, $7)",
    )
    .bind(session)
    .bind(number)
    .bind(list.id)
    .bind(text.as_str())
    .bind(serde_json::json!(tags.as_slice()).to_string())
    .bind(t)
    .bind(t)
    .execute(&mut *conn)
    .await?;
    Ok(Todo {
        id: number,
        text: text.as_str().to_owned(),
        done: false,
        tags: tags.as_slice().to_vec(),
        list: list.name.clone(),
    })
}

/// The todos on `list`, oldest first.
pub async fn in_list(conn: &mut Conn, list: &List) -> Result<Vec<Todo>, ServerError> {
    Ok(sqlx::query_as::<_, TodoRow>(&format!(
        "{TODO_COLUMNS} WHERE t.list_id = $1 ORDER BY t.number"
    ))
    .bind(list.id)
    .fetch_all(conn)
    .await?
    .into_iter()
    .map(Todo::from)
    .collect())
}

/// Sets whether the session's todo `id` is done.
pub async fn set_done(
    conn: &mut Conn,
    session: &str,
    id: TodoId,
    done: bool,
) -> Result<(), ServerError> {
    sqlx::query(
        "UPDATE todos SET done = $1, updated_at = $2 WHERE session_id = $3 AND number = $4",
    )
    .bind(i64::from(done))
    .bind(now())
    .bind(session)
    .bind(id.get())
    .execute(conn)
    .await?;
    Ok(())
}

/// Replaces the text of the session's todo `id`.
pub async fn set_text(
    conn: &mut Conn,
    session: &str,
    id: TodoId,
    text: &TodoText,
) -> Result<(), ServerError> {
    sqlx::query(
        "UPDATE todos SET text = $1, updated_at = $2 WHERE session_id = $3 AND number = $4",
    )
    .bind(text.as_str())
    .bind(now())
    .bind(session)
    .bind(id.get())
    .execute(conn)
    .await?;
    Ok(())
}

/// Deletes the session's todo `id` (its number is not handed out again).
pub async fn remove(conn: &mut Conn, session: &str, id: TodoId) -> Result<(), ServerError> {
    sqlx::query("DELETE FROM todos WHERE session_id = $1 AND number = $2")
        .bind(session)
        .bind(id.get())
        .execute(conn)
        .await?;
    Ok(())
}
