//! A call's arguments parsed into a typed command, refused naming the
//! field and the rule.

use super::text::{ListName, TagFilter, Tags, TodoMatch, TodoText};
use crate::domain::limits::excerpt;
use serde_json::{Map, Value};

/// One call of a todo tool, its arguments parsed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum TodoCommand {
    /// `createTodo`: add `text` with `tags` to `list`, or to the active
    /// list.
    CreateTodo {
        /// What to do.
        text: TodoText,
        /// Its tags.
        tags: Tags,
        /// The list to add to, if not the active one.
        list: Option<ListName>,
    },
    /// `toggleTodo`: flip done / not done.
    ToggleTodo {
        /// Which todo.
        todo: TodoMatch,
    },
    /// `updateTodo`: replace the text.
    UpdateTodo {
        /// Which todo.
        todo: TodoMatch,
        /// Its new text.
        text: TodoText,
    },
    /// `removeTodo`: delete.
    RemoveTodo {
        /// Which todo.
        todo: TodoMatch,
    },
    /// `filterTodos`: show the active list's todos that pass.
    FilterTodos(TagFilter),
    /// `createList`: add a list and make it active.
    CreateList {
        /// Its name.
        name: ListName,
    },
    /// `switchList`: make a list active.
    SwitchList {
        /// Its name (any case).
        name: ListName,
    },
}

/// The arguments as an object holding only `allowed` names.
fn fields<'a>(arguments: &'a Value, allowed: &[&str]) -> Result<&'a Map<String, Value>, String> {
    let Value::Object(map) = arguments else {
        return Err("the arguments must be a JSON object".into());
    };
    if let Some(unknown) = map.keys().find(|k| !allowed.contains(&k.as_str())) {
        return Err(format!(
            "unknown argument `{}`; it takes {}",
            excerpt(unknown),
            allowed.join(", ")
        ));
    }
    Ok(map)
}

/// The string argument `name`, if given (a JSON `null` counts as not given).
fn optional_str<'a>(map: &'a Map<String, Value>, name: &str) -> Result<Option<&'a str>, String> {
    match map.get(name) {
        None | Some(Value::Null) => Ok(None),
        Some(Value::String(s)) => Ok(Some(s)),
        Some(_) => Err(format!("`{name}` must be a string")),
    }
}

/// The required string argument `name`.
fn required_str<'a>(map: &'a Map<String, Value>, name: &str) -> Result<&'a str, String> {
    optional_str(map, name)?.ok_or_else(|| format!("`{name}` is required"))
}

/// The required `todoText` of toggle and remove.
fn todo_text(map: &Map<String, Value>) -> Result<TodoMatch, String> {
    TodoMatch::parse("todoText", required_str(map, "todoText")?)
}

/// The required `listName` of createList and switchList.
fn list_name(map: &Map<String, Value>) -> Result<ListName, String> {
    ListName::parse("listName", required_str(map, "listName")?)
}

impl TodoCommand {
    /// Parses a call of todo tool `tool`, or says why not: not a todo
    /// tool, an unknown or missing argument, a wrong type, a value over
    /// its limit (each naming the argument), prefixed "invalid arguments
    /// for `tool`" like the schema check's refusals.
    pub fn parse(tool: &str, arguments: &Value) -> Result<Self, String> {
        let none = Value::Object(Map::new());
        let arguments = if arguments.is_null() {
            &none
        } else {
            arguments
        };
        let parsed = match tool {
            "createTodo" => fields(arguments, &["todoText", "tags", "listName"]).and_then(|m| {
                Ok(Self::CreateTodo {
                    text: TodoText::parse("todoText", required_str(m, "todoText")?)?,
                    tags: optional_str(m, "tags")?
                        .map(Tags::parse)
                        .transpose()?
                        .unwrap_or_default(),
                    list: optional_str(m, "listName")?
                        .map(|l| ListName::parse("listName", l))
                        .transpose()?,
                })
            }),
            "toggleTodo" => fields(arguments, &["todoText"]).and_then(|m| {
                Ok(Self::ToggleTodo {
                    todo: todo_text(m)?,
                })
            }),
            "removeTodo" => fields(arguments, &["todoText"]).and_then(|m| {
                Ok(Self::RemoveTodo {
                    todo: todo_text(m)?,
                })
            }),
            "updateTodo" => fields(arguments, &["oldText", "newText"]).and_then(|m| {
                Ok(Self::UpdateTodo {
                    todo: TodoMatch::parse("oldText", required_str(m, "oldText")?)?,
                    text: TodoText::parse("newText", required_str(m, "newText")?)?,
                })
            }),
            "filterTodos" => fields(arguments, &["tag"]).and_then(|m| {
                Ok(Self::FilterTodos(TagFilter::parse(required_str(
                    m, "tag",
                )?)?))
            }),
            "createList" => fields(arguments, &["listName"]).and_then(|m| {
                Ok(Self::CreateList {
                    name: list_name(m)?,
                })
            }),
            "switchList" => fields(arguments, &["listName"]).and_then(|m| {
                Ok(Self::SwitchList {
                    name: list_name(m)?,
                })
            }),
            _ => return Err(format!("`{}` is not a todo tool", excerpt(tool))),
        };
        parsed.map_err(|problem| format!("invalid arguments for `{tool}`: {problem}"))
    }
}
