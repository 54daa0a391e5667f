//! The answers the model reads back after a todo tool ran: what was
//! done, and why not where it could not be.

use super::limits::{MAX_LISTS_PER_SESSION, MAX_TODOS_PER_SESSION};
use super::outcome::{success, Failure, Todo};
use super::text::{ListName, TagFilter, TodoText};
use serde::Serialize;
use serde_json::{json, Value};

/// A todo in a listing of one list (which the listing names once).
#[derive(Serialize)]
struct Listed<'a> {
    id: i64,
    text: &'a str,
    done: bool,
    tags: &'a [String],
}

fn listed(todos: &[&Todo]) -> Vec<Value> {
    todos
        .iter()
        .map(|t| {
            json!(Listed {
                id: t.id,
                text: &t.text,
                done: t.done,
                tags: &t.tags,
            })
        })
        .collect()
}

/// `items` joined with ", ", or "none".
fn names(items: &[String]) -> String {
    if items.is_empty() {
        "none".into()
    } else {
        items.join(", ")
    }
}

/// "1 todo", "3 todos".
fn count_of(n: usize, what: &str) -> String {
    format!("{n} {what}{}", if n == 1 { "" } else { "s" })
}

/// The failure for a list the session does not have, naming its `lists`.
pub fn no_such_list(name: &ListName, lists: &[String]) -> Failure {
    Failure::new(
        format!(
            "list \"{}\" does not exist; lists: {}",
            name.as_str(),
            names(lists)
        ),
        format!(
            "I couldn't find a list called \"{}\". Your lists are: {}.",
            name.as_str(),
            names(lists)
        ),
    )
}

/// The failure for a second list of the same name (in any case).
pub fn list_exists(name: &ListName, lists: &[String]) -> Failure {
    Failure::new(
        format!(
            "list \"{}\" already exists; lists: {}",
            name.as_str(),
            names(lists)
        ),
        format!(
            "You already have a list named \"{}\". You can switch to it or create a list with a different name.",
            name.as_str()
        ),
    )
}

/// Whether `text` may go on list `list` beside `todos` (the session's,
/// `except` the todo being edited): two todos of one text on one list
/// could never be told apart by their text.
pub fn room_for_text(
    text: &TodoText,
    list: &str,
    todos: &[Todo],
    except: Option<i64>,
) -> Result<(), Failure> {
    let key = text.as_str().to_lowercase();
    match todos
        .iter()
        .find(|t| t.list == list && Some(t.id) != except && t.text.to_lowercase() == key)
    {
        Some(t) => Err(Failure::new(
            format!("\"{}\" is already on {list}", t.text),
            format!("\"{}\" is already on your {list} list.", t.text),
        )),
        None => Ok(()),
    }
}

/// Whether a session holding `count` todos may add one; if not, the
/// failure, which says how to make room.
pub fn room_for_todo(count: usize) -> Result<(), Failure> {
    if count >= MAX_TODOS_PER_SESSION {
        Err(Failure::new(
            format!("this session already has {MAX_TODOS_PER_SESSION} todos, the most it may hold; remove one first"),
            format!("Your lists already hold {MAX_TODOS_PER_SESSION} todos, the most I can keep. Please remove one first."),
        ))
    } else {
        Ok(())
    }
}

/// Whether a session with `lists` may create another; if not, the
/// failure naming them.
pub fn room_for_list(lists: &[String]) -> Result<(), Failure> {
    if lists.len() >= MAX_LISTS_PER_SESSION {
        Err(Failure::new(
            format!(
                "this session already has {MAX_LISTS_PER_SESSION} lists, the most it may have; lists: {}",
                names(lists)
            ),
            format!("You already have {MAX_LISTS_PER_SESSION} lists, the most I can keep."),
        ))
    } else {
        Ok(())
    }
}

/// `createTodo`'s answer.
pub fn created(todo: &Todo) -> Value {
    let with_tags = if todo.tags.is_empty() {
        String::new()
    } else {
        format!(" with tags: {}", todo.tags.join(", "))
    };
    success(
        format!("Created todo \"{}\" on {}.", todo.text, todo.list),
        format!(
            "I've added \"{}\" to your {} list{with_tags}.",
            todo.text, todo.list
        ),
        json!({"todo": todo}),
    )
}

/// `toggleTodo`'s answer, `todo` as it is now.
pub fn toggled(todo: &Todo) -> Value {
    let state = if todo.done { "done" } else { "not done" };
    success(
        format!("Marked \"{}\" as {state}.", todo.text),
        format!("I've marked \"{}\" as {state}.", todo.text),
        json!({"todo": todo}),
    )
}

/// `updateTodo`'s answer: `todo` as it is now, and its text `before`.
pub fn updated(before: &str, todo: &Todo) -> Value {
    success(
        format!("Updated todo \"{before}\" to \"{}\".", todo.text),
        format!("I've updated \"{before}\" to \"{}\".", todo.text),
        json!({"todo": todo}),
    )
}

/// `removeTodo`'s answer: the todo as it was.
pub fn removed(todo: &Todo) -> Value {
    success(
        format!("Removed todo \"{}\" from {}.", todo.text, todo.list),
        format!(
            "I've removed \"{}\" from your {} list.",
            todo.text, todo.list
        ),
        json!({"removed": todo}),
    )
}

/// `filterTodos`' answer: the todos of `list` (all of them, in order) that
/// pass `filter`, and how many.
pub fn listing(list: &str, filter: &TagFilter, todos: &[Todo]) -> Value {
    let kept: Vec<&Todo> = todos.iter().filter(|t| filter.matches(t)).collect();
    let (message, spoken) = match filter {
        TagFilter::All => (
            format!("Showing all todos on {list}: {}.", kept.len()),
            format!(
                "I've reset the filter: your {list} list has {}.",
                count_of(kept.len(), "todo")
            ),
        ),
        TagFilter::Tag(tag) => (
            format!(
                "Filtered todos on {list} by tag \"{tag}\": {} of {}.",
                kept.len(),
                todos.len()
            ),
            format!(
                "I've filtered your {list} list to the todos tagged \"{tag}\": {}.",
                count_of(kept.len(), "todo")
            ),
        ),
    };
    success(
        message,
        spoken,
        json!({"list": list, "tag": filter.as_str(), "count": kept.len(), "todos": listed(&kept)}),
    )
}

/// `createList`'s answer: the new list (now active) and every list.
pub fn list_created(list: &str, lists: &[String]) -> Value {
    success(
        format!("Created the list {list} and switched to it."),
        format!("I've created a new todo list called \"{list}\" and switched to it."),
        json!({"list": list, "lists": lists}),
    )
}

/// `switchList`'s answer: the list now active and all its todos.
pub fn switched(list: &str, todos: &[Todo]) -> Value {
    let open = todos.iter().filter(|t| !t.done).count();
    let summary = format!("{}, {open} open", count_of(todos.len(), "todo"));
    let all: Vec<&Todo> = todos.iter().collect();
    success(
        format!("Switched to {list}: {summary}."),
        format!("I've switched to the \"{list}\" list: {summary}."),
        json!({"list": list, "count": todos.len(), "todos": listed(&all)}),
    )
}
