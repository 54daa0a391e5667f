//! The todo tools' catalogue entries: their descriptions and argument
//! schemas, with the limits the model is told.

use super::limits::{
    DEFAULT_LIST, LIST_NAME_MAX_CHARS, MAX_LISTS_PER_SESSION, MAX_TAGS_PER_TODO,
    MAX_TODOS_PER_SESSION, TAGS_ARGUMENT_MAX_CHARS, TAG_MAX_CHARS, TODO_CATEGORY,
    TODO_TEXT_MAX_CHARS,
};
use crate::domain::catalogue::{object, CatalogueTool};
use serde_json::{json, Value};

/// A string parameter's schema: 1–`max` characters, described.
fn text_param(max: usize, description: &str) -> Value {
    json!({"type": "string", "minLength": 1, "maxLength": max, "description": description})
}

/// The todo tools' catalogue entries (category [`TODO_CATEGORY`]): the
/// seed's parameters, with schemas that carry Switchboard's limits so a
/// model is told them before it hits them.
pub fn todo_tools() -> Vec<CatalogueTool> {
    let find = |what: &str| {
        text_param(
            TODO_TEXT_MAX_CHARS,
            &format!("Words of the todo {what} (any case); a todo whose whole text this is wins over todos that only contain it"),
        )
    };
    let list = |what: &str| text_param(LIST_NAME_MAX_CHARS, what);
    let tool = |id: &str, name: &str, description: &str, properties: Value, required: &[&str]| {
        CatalogueTool::new(
            id,
            name,
            TODO_CATEGORY,
            description,
            object(properties, required),
        )
    };
    vec![
        tool(
            "createTodo",
            "Create Todo",
            &format!("Creates a todo with the given text and optional tags on the active list, or on the existing list `listName`. A session holds at most {MAX_TODOS_PER_SESSION} todos."),
            json!({
                "todoText": text_param(TODO_TEXT_MAX_CHARS, "The text of the new todo, one line"),
                "tags": {"type": "string", "maxLength": TAGS_ARGUMENT_MAX_CHARS, "description": format!("Optional comma-separated tags (e.g. 'work,urgent,personal'), at most {MAX_TAGS_PER_TODO} of at most {TAG_MAX_CHARS} characters")},
                "listName": list("An existing list to add the todo to instead of the active one"),
            }),
            &["todoText"],
        ),
        tool(
            "toggleTodo",
            "Toggle Todo",
            "Marks a todo done, or not done again if it was done.",
            json!({"todoText": find("to toggle")}),
            &["todoText"],
        ),
        tool(
            "updateTodo",
            "Update Todo",
            "Replaces the text of a todo; it keeps its list, tags and done state.",
            json!({
                "oldText": find("to change"),
                "newText": text_param(TODO_TEXT_MAX_CHARS, "The todo's new text, one line"),
            }),
            &["oldText", "newText"],
        ),
        tool(
            "removeTodo",
            "Remove Todo",
            "Deletes a todo for good.",
            json!({"todoText": find("to remove")}),
            &["todoText"],
        ),
        tool(
            "filterTodos",
            "Filter Todos",
            "Shows the active list's todos that carry a tag (any case), or every todo of it with the tag 'all'. Use it to read a list back.",
            json!({"tag": text_param(TAG_MAX_CHARS, "The tag to show, or 'all' for every todo")}),
            &["tag"],
        ),
        tool(
            "createList",
            "Create Todo List",
            &format!("Creates a new, empty todo list and makes it the active list. Names are unique whatever their case; a session has at most {MAX_LISTS_PER_SESSION} lists."),
            json!({"listName": list("The new list's name")}),
            &["listName"],
        ),
        tool(
            "switchList",
            "Switch Todo List",
            &format!("Makes an existing list the active one (names match whatever their case) and returns its todos. Every session starts with the list {DEFAULT_LIST}."),
            json!({"listName": list("The list to switch to")}),
            &["listName"],
        ),
    ]
}
