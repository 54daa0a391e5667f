//! The todo tools of the Todo Assistant vibe (issue #12): their catalogue
//! entries, their limits, and the pure half of running them — parsing a
//! call's arguments into a typed command, filtering a list, and wording the
//! results and refusals the model reads back.
//!
//! Switchboard runs these tools itself on per-session lists kept in SQLite
//! (`server::agent::execute::todos`), the way it runs the banking demo's. Everything
//! that needs no database lives here, so it is tested without one and the
//! limits the model is told (in the schemas) are the limits enforced.
//!
//! Arguments are parsed once into [`TodoCommand`]: a [`TodoText`] or
//! [`ListName`] is already one trimmed line within its limit and a
//! [`TodoId`] a positive number, so the code that stores them cannot
//! forget a check.

use crate::domain::catalogue::{object, CatalogueTool};
use crate::domain::limits::excerpt;
use serde::Serialize;
use serde_json::{json, Map, Value};

/// The catalogue category (matrix column group) of the todo tools.
pub const TODO_CATEGORY: &str = "todos";

/// The list every session starts with, created on its first todo call.
pub const DEFAULT_LIST: &str = "Inbox";

/// Longest todo text, in characters. One spoken sentence; it also keeps the
/// largest listing (see [`MAX_TODOS_PER_SESSION`]) well under a tool
/// result's size limit.
pub const TODO_TEXT_MAX_CHARS: usize = 200;

/// Longest list name, in characters: a name is said aloud and repeated in
/// every result, so a few words.
pub const LIST_NAME_MAX_CHARS: usize = 40;

/// Most todos one session may hold, over all its lists. A bound on what one
/// caller can store, and on a listing's size: at this many todos of the
/// longest text a `filterTodos` result is still under 64 KiB.
pub const MAX_TODOS_PER_SESSION: usize = 50;

/// Most lists one session may have, [`DEFAULT_LIST`] included; every
/// refusal naming a list names them all, so few enough to read out.
pub const MAX_LISTS_PER_SESSION: usize = 10;

/// Longest `filterTodos` query, in characters: a longer one could match no
/// todo anyway.
pub const QUERY_MAX_CHARS: usize = TODO_TEXT_MAX_CHARS;

/// The seven todo tools' ids (function names), in catalogue order.
pub const TOOL_IDS: [&str; 7] = [
    "createTodo",
    "toggleTodo",
    "updateTodo",
    "removeTodo",
    "filterTodos",
    "createList",
    "switchList",
];

/// The todo tools' catalogue entries (category [`TODO_CATEGORY`]), with
/// model-facing descriptions that say how ids and lists work and schemas
/// that carry the limits, so a model is told them before it hits them.
pub fn todo_tools() -> Vec<CatalogueTool> {
    let todo_id = json!({"type": "integer", "minimum": 1, "description": "The todo's id, as an earlier result gave it"});
    let text = json!({"type": "string", "minLength": 1, "maxLength": TODO_TEXT_MAX_CHARS, "description": "What is to be done, one line"});
    let list = |what: &str| json!({"type": "string", "minLength": 1, "maxLength": LIST_NAME_MAX_CHARS, "description": what});
    vec![
        CatalogueTool::new(
            "createTodo",
            "Add todo",
            TODO_CATEGORY,
            &format!(
                "Adds a todo to the active list, or to the existing list `listName`, and returns it with its id; use that id to toggle, update or remove it. A session holds at most {MAX_TODOS_PER_SESSION} todos."
            ),
            object(
                json!({"text": text, "listName": list("An existing list to add to instead of the active one")}),
                &["text"],
            ),
        ),
        CatalogueTool::new(
            "toggleTodo",
            "Tick todo",
            TODO_CATEGORY,
            "Marks a todo done, or open again if it was done.",
            object(json!({"todoId": todo_id}), &["todoId"]),
        ),
        CatalogueTool::new(
            "updateTodo",
            "Edit todo",
            TODO_CATEGORY,
            "Replaces a todo's text; it keeps its id, list and done state.",
            object(json!({"todoId": todo_id, "text": text}), &["todoId", "text"]),
        ),
        CatalogueTool::new(
            "removeTodo",
            "Remove todo",
            TODO_CATEGORY,
            "Deletes a todo for good.",
            object(json!({"todoId": todo_id}), &["todoId"]),
        ),
        CatalogueTool::new(
            "filterTodos",
            "Show todos",
            TODO_CATEGORY,
            "Lists the active list's todos with their ids: all of them, only the open or only the done ones, and only those whose text contains every word of `query` (any case). Use it to read a list back or to find a todo's id.",
            object(
                json!({
                    "status": {"type": "string", "enum": ["all", "open", "done"], "description": "Which todos: all (when omitted), open or done"},
                    "query": {"type": "string", "maxLength": QUERY_MAX_CHARS, "description": "Words the todo's text must contain"}
                }),
                &[],
            ),
        ),
        CatalogueTool::new(
            "createList",
            "New list",
            TODO_CATEGORY,
            &format!(
                "Creates a new, empty todo list and makes it the active list. Names are unique whatever their case; a session has at most {MAX_LISTS_PER_SESSION} lists."
            ),
            object(json!({"name": list("The new list's name")}), &["name"]),
        ),
        CatalogueTool::new(
            "switchList",
            "Switch list",
            TODO_CATEGORY,
            &format!(
                "Makes an existing list the active one (names match whatever their case) and returns its todos. Every session starts with the list {DEFAULT_LIST}."
            ),
            object(json!({"name": list("The list to switch to")}), &["name"]),
        ),
    ]
}

/// Trims `raw`, turns every run of whitespace (newlines included) into one
/// space, and refuses it empty, with other control characters, or over
/// `max` characters, naming `field`.
fn one_line(field: &str, raw: &str, max: usize) -> Result<String, String> {
    let line = raw.split_whitespace().collect::<Vec<_>>().join(" ");
    if line.is_empty() {
        return Err(format!("`{field}` must not be empty"));
    }
    if line.chars().any(char::is_control) {
        return Err(format!("`{field}` must not contain control characters"));
    }
    let count = line.chars().count();
    if count > max {
        return Err(format!(
            "`{field}` is {count} characters long; at most {max} are allowed"
        ));
    }
    Ok(line)
}

/// A todo's text: one trimmed line of 1–[`TODO_TEXT_MAX_CHARS`] characters.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TodoText(String);

impl TodoText {
    /// Accepts `raw` as one line (whitespace runs become one space) of at
    /// most [`TODO_TEXT_MAX_CHARS`] characters; refusals name `text`.
    pub fn parse(raw: &str) -> Result<Self, String> {
        one_line("text", raw, TODO_TEXT_MAX_CHARS).map(Self)
    }

    /// The text.
    pub fn as_str(&self) -> &str {
        &self.0
    }
}

/// A list's name: one trimmed line of 1–[`LIST_NAME_MAX_CHARS`] characters.
/// Lists are found whatever the case of the name (a voice model rarely
/// repeats the capitals), so each name has a [`key`](Self::key).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ListName(String);

impl ListName {
    /// Accepts `raw` (the argument `field`) as one line of at most
    /// [`LIST_NAME_MAX_CHARS`] characters.
    pub fn parse(field: &str, raw: &str) -> Result<Self, String> {
        one_line(field, raw, LIST_NAME_MAX_CHARS).map(Self)
    }

    /// The default list's name.
    pub fn default_list() -> Self {
        Self(DEFAULT_LIST.to_owned())
    }

    /// The name as given.
    pub fn as_str(&self) -> &str {
        &self.0
    }

    /// What names are compared by: the name in lower case. Two lists of a
    /// session never share a key.
    pub fn key(&self) -> String {
        self.0.to_lowercase()
    }
}

/// A todo's id within its session: numbered from 1 in the order the
/// session created them, never reused, so a model's "todo 3" always means
/// the same todo.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct TodoId(i64);

impl TodoId {
    /// Accepts a whole number of at least 1 (`3` or `3.0`, as JSON Schema's
    /// `integer` does); refusals name `todoId`.
    pub fn parse(value: &Value) -> Result<Self, String> {
        let whole = value.as_i64().or_else(|| {
            value
                .as_f64()
                .filter(|f| f.fract() == 0.0 && f.abs() < 9.0e15)
                .map(|f| f as i64)
        });
        match whole {
            Some(n) if n >= 1 => Ok(Self(n)),
            _ => Err("`todoId` must be a whole number of at least 1, a todo's id".into()),
        }
    }

    /// The number.
    pub fn get(self) -> i64 {
        self.0
    }
}

/// Which todos `filterTodos` keeps by their state.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum StatusFilter {
    /// Every todo.
    #[default]
    All,
    /// Only those not done yet.
    Open,
    /// Only those done.
    Done,
}

impl StatusFilter {
    /// Accepts `all`, `open` or `done`; refusals name `status`.
    pub fn parse(raw: &str) -> Result<Self, String> {
        match raw.trim() {
            "all" => Ok(Self::All),
            "open" => Ok(Self::Open),
            "done" => Ok(Self::Done),
            other => Err(format!(
                "`status` must be all, open or done (got \"{}\")",
                excerpt(other)
            )),
        }
    }

    /// The argument's spelling.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::All => "all",
            Self::Open => "open",
            Self::Done => "done",
        }
    }
}

/// What `filterTodos` keeps: todos in `status` whose text contains every
/// word of the query, ignoring case.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct TodoFilter {
    /// By state.
    pub status: StatusFilter,
    /// The query as given (trimmed), if any, to echo in the result.
    query: Option<String>,
    /// The query's words in lower case; empty keeps every text.
    words: Vec<String>,
}

impl TodoFilter {
    /// A filter by `status` and `query` (blank means none); a query over
    /// [`QUERY_MAX_CHARS`] is refused naming `query`.
    pub fn new(status: StatusFilter, query: Option<&str>) -> Result<Self, String> {
        let query = query.map(str::trim).filter(|q| !q.is_empty());
        if let Some(q) = query {
            let count = q.chars().count();
            if count > QUERY_MAX_CHARS {
                return Err(format!(
                    "`query` is {count} characters long; at most {QUERY_MAX_CHARS} are allowed"
                ));
            }
        }
        Ok(Self {
            status,
            query: query.map(str::to_owned),
            words: query
                .map(|q| q.split_whitespace().map(str::to_lowercase).collect())
                .unwrap_or_default(),
        })
    }

    /// The query as given, if any.
    pub fn query(&self) -> Option<&str> {
        self.query.as_deref()
    }

    /// Whether `todo` passes the filter.
    pub fn matches(&self, todo: &Todo) -> bool {
        let state = match self.status {
            StatusFilter::All => true,
            StatusFilter::Open => !todo.done,
            StatusFilter::Done => todo.done,
        };
        if !state {
            return false;
        }
        let text = todo.text.to_lowercase();
        self.words.iter().all(|w| text.contains(w.as_str()))
    }

    /// The todos of `todos` that pass, in their order.
    pub fn apply(&self, todos: &[Todo]) -> Vec<Todo> {
        todos.iter().filter(|t| self.matches(t)).cloned().collect()
    }
}

/// One call of a todo tool, its arguments parsed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum TodoCommand {
    /// `createTodo`: add `text` to `list`, or to the active list.
    CreateTodo {
        /// What to do.
        text: TodoText,
        /// The list to add to, if not the active one.
        list: Option<ListName>,
    },
    /// `toggleTodo`: flip done / open.
    ToggleTodo {
        /// Which todo.
        id: TodoId,
    },
    /// `updateTodo`: replace the text.
    UpdateTodo {
        /// Which todo.
        id: TodoId,
        /// Its new text.
        text: TodoText,
    },
    /// `removeTodo`: delete.
    RemoveTodo {
        /// Which todo.
        id: TodoId,
    },
    /// `filterTodos`: list the active list's todos that pass.
    FilterTodos(TodoFilter),
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

/// The required `todoId`.
fn todo_id(map: &Map<String, Value>) -> Result<TodoId, String> {
    TodoId::parse(map.get("todoId").ok_or("`todoId` is required")?)
}

impl TodoCommand {
    /// Parses a call of todo tool `tool`, or says why not: not a todo
    /// tool, an unknown or missing argument, a wrong type, a value over
    /// its limit (each naming the argument), prefixed "invalid arguments
    /// for `tool`" like the schema check's refusals.
    pub fn parse(tool: &str, arguments: &Value) -> Result<Self, String> {
        // A tool without required arguments may be called with none at all.
        let none = Value::Object(Map::new());
        let arguments = if arguments.is_null() {
            &none
        } else {
            arguments
        };
        let parsed = match tool {
            "createTodo" => fields(arguments, &["text", "listName"]).and_then(|m| {
                Ok(Self::CreateTodo {
                    text: TodoText::parse(required_str(m, "text")?)?,
                    list: optional_str(m, "listName")?
                        .map(|l| ListName::parse("listName", l))
                        .transpose()?,
                })
            }),
            "toggleTodo" => fields(arguments, &["todoId"])
                .and_then(|m| Ok(Self::ToggleTodo { id: todo_id(m)? })),
            "updateTodo" => fields(arguments, &["todoId", "text"]).and_then(|m| {
                Ok(Self::UpdateTodo {
                    id: todo_id(m)?,
                    text: TodoText::parse(required_str(m, "text")?)?,
                })
            }),
            "removeTodo" => fields(arguments, &["todoId"])
                .and_then(|m| Ok(Self::RemoveTodo { id: todo_id(m)? })),
            "filterTodos" => fields(arguments, &["status", "query"]).and_then(|m| {
                let status = optional_str(m, "status")?
                    .map(StatusFilter::parse)
                    .transpose()?
                    .unwrap_or_default();
                Ok(Self::FilterTodos(TodoFilter::new(
                    status,
                    optional_str(m, "query")?,
                )?))
            }),
            "createList" | "switchList" => fields(arguments, &["name"]).and_then(|m| {
                let name = ListName::parse("name", required_str(m, "name")?)?;
                Ok(if tool == "createList" {
                    Self::CreateList { name }
                } else {
                    Self::SwitchList { name }
                })
            }),
            _ => return Err(format!("`{}` is not a todo tool", excerpt(tool))),
        };
        parsed.map_err(|problem| format!("invalid arguments for `{tool}`: {problem}"))
    }
}

/// A todo as results show it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Todo {
    /// Its [`TodoId`] number in the session.
    pub id: i64,
    /// What is to be done.
    pub text: String,
    /// Whether it is done.
    pub done: bool,
    /// The name of the list it is on.
    pub list: String,
}

/// `items` joined with ", ", or "none".
fn names<T: std::fmt::Display>(items: &[T]) -> String {
    if items.is_empty() {
        "none".into()
    } else {
        items
            .iter()
            .map(ToString::to_string)
            .collect::<Vec<_>>()
            .join(", ")
    }
}

/// "1 todo", "3 todos".
fn count_of(n: usize, what: &str) -> String {
    format!("{n} {what}{}", if n == 1 { "" } else { "s" })
}

/// The refusal for a todo id the session does not have, naming the ids it
/// has (`ids`, at most [`MAX_TODOS_PER_SESSION`]).
pub fn no_such_todo(id: TodoId, ids: &[i64]) -> String {
    format!(
        "there is no todo {} in this session; todos: {}",
        id.get(),
        names(ids)
    )
}

/// The refusal for a list the session does not have, naming its `lists`.
pub fn no_such_list(name: &ListName, lists: &[String]) -> String {
    format!(
        "list \"{}\" does not exist; lists: {}",
        name.as_str(),
        names(lists)
    )
}

/// The refusal for a second list of the same name (in any case).
pub fn list_exists(name: &ListName, lists: &[String]) -> String {
    format!(
        "list \"{}\" already exists; lists: {}",
        name.as_str(),
        names(lists)
    )
}

/// Whether a session holding `count` todos may add one; if not, the
/// refusal, which says how to make room.
pub fn room_for_todo(count: usize) -> Result<(), String> {
    if count >= MAX_TODOS_PER_SESSION {
        Err(format!(
            "this session already has {MAX_TODOS_PER_SESSION} todos, the most it may hold; remove one first"
        ))
    } else {
        Ok(())
    }
}

/// Whether a session with `lists` may create another; if not, the
/// refusal naming them.
pub fn room_for_list(lists: &[String]) -> Result<(), String> {
    if lists.len() >= MAX_LISTS_PER_SESSION {
        Err(format!(
            "this session already has {MAX_LISTS_PER_SESSION} lists, the most it may have; lists: {}",
            names(lists)
        ))
    } else {
        Ok(())
    }
}

/// `createTodo`'s result.
pub fn created(todo: &Todo) -> Value {
    json!({
        "todo": todo,
        "message": format!("Added \"{}\" to {} as todo {}.", todo.text, todo.list, todo.id),
    })
}

/// `toggleTodo`'s result, `todo` as it is now.
pub fn toggled(todo: &Todo) -> Value {
    json!({
        "todo": todo,
        "message": format!(
            "Marked \"{}\" as {}.",
            todo.text,
            if todo.done { "done" } else { "not done" }
        ),
    })
}

/// `updateTodo`'s result: `todo` as it is now, and its text `before`.
pub fn updated(before: &str, todo: &Todo) -> Value {
    json!({
        "todo": todo,
        "message": format!("Changed todo {} from \"{before}\" to \"{}\".", todo.id, todo.text),
    })
}

/// `removeTodo`'s result: the todo as it was.
pub fn removed(todo: &Todo) -> Value {
    json!({
        "removed": todo,
        "message": format!("Removed \"{}\" from {}.", todo.text, todo.list),
    })
}

/// `filterTodos`'s result: the todos of `list` (all of them, in order) that
/// pass `filter`, and how many.
pub fn listing(list: &str, filter: &TodoFilter, todos: &[Todo]) -> Value {
    let kept = filter.apply(todos);
    let mut result = json!({
        "list": list,
        "status": filter.status.as_str(),
        "count": kept.len(),
        "todos": kept,
    });
    if let Some(query) = filter.query() {
        result["query"] = json!(query);
    }
    result
}

/// `createList`'s result: the new list (now active) and every list.
pub fn list_created(list: &str, lists: &[String]) -> Value {
    json!({
        "list": list,
        "lists": lists,
        "message": format!("Created the list {list} and switched to it."),
    })
}

/// `switchList`'s result: the list now active and all its todos.
pub fn switched(list: &str, todos: &[Todo]) -> Value {
    let open = todos.iter().filter(|t| !t.done).count();
    json!({
        "list": list,
        "count": todos.len(),
        "todos": todos,
        "message": format!(
            "Switched to {list}: {}, {open} open.",
            count_of(todos.len(), "todo")
        ),
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::domain::limits::TOOL_RESULT_MAX_BYTES;
    use proptest::prelude::*;

    fn todo(id: i64, text: &str, done: bool) -> Todo {
        Todo {
            id,
            text: text.into(),
            done,
            list: DEFAULT_LIST.into(),
        }
    }

    #[test]
    fn the_catalogue_entries_are_the_seven_tools_and_valid() {
        let tools = todo_tools();
        let ids: Vec<&str> = tools.iter().map(|t| t.id.as_str()).collect();
        assert_eq!(ids, TOOL_IDS);
        for t in &tools {
            assert!(t.problems().is_empty(), "{}: {:?}", t.id, t.problems());
            assert_eq!(t.category, TODO_CATEGORY);
            assert_eq!(t.parameters["additionalProperties"], false, "{}", t.id);
            let properties = t.parameters["properties"].as_object().unwrap();
            for required in t.parameters["required"].as_array().unwrap() {
                assert!(properties.contains_key(required.as_str().unwrap()));
            }
            // Every property the schema declares is one the parser takes.
            let all: Map<String, Value> = properties
                .keys()
                .map(|k| (k.clone(), Value::Null))
                .collect();
            let problem = TodoCommand::parse(t.id.as_str(), &Value::Object(all))
                .err()
                .unwrap_or_default();
            assert!(!problem.contains("unknown argument"), "{problem}");
        }
        assert_eq!(
            tools[0].parameters["properties"]["text"]["maxLength"],
            TODO_TEXT_MAX_CHARS
        );
    }

    #[test]
    fn every_tool_parses_its_documented_arguments() {
        let cases = [
            (
                "createTodo",
                json!({"text": "  Buy\n milk ", "listName": "Groceries"}),
                TodoCommand::CreateTodo {
                    text: TodoText("Buy milk".into()),
                    list: Some(ListName("Groceries".into())),
                },
            ),
            (
                "createTodo",
                json!({"text": "Call Sam", "listName": null}),
                TodoCommand::CreateTodo {
                    text: TodoText("Call Sam".into()),
                    list: None,
                },
            ),
            (
                "toggleTodo",
                json!({"todoId": 3}),
                TodoCommand::ToggleTodo { id: TodoId(3) },
            ),
            (
                "updateTodo",
                json!({"todoId": 2.0, "text": "Buy oat milk"}),
                TodoCommand::UpdateTodo {
                    id: TodoId(2),
                    text: TodoText("Buy oat milk".into()),
                },
            ),
            (
                "removeTodo",
                json!({"todoId": 1}),
                TodoCommand::RemoveTodo { id: TodoId(1) },
            ),
            (
                "filterTodos",
                json!({}),
                TodoCommand::FilterTodos(TodoFilter::default()),
            ),
            (
                "filterTodos",
                json!({"status": "open", "query": " Milk "}),
                TodoCommand::FilterTodos(
                    TodoFilter::new(StatusFilter::Open, Some("Milk")).unwrap(),
                ),
            ),
            (
                "createList",
                json!({"name": "Work"}),
                TodoCommand::CreateList {
                    name: ListName("Work".into()),
                },
            ),
            (
                "switchList",
                json!({"name": "work"}),
                TodoCommand::SwitchList {
                    name: ListName("work".into()),
                },
            ),
        ];
        for (tool, arguments, expected) in cases {
            assert_eq!(TodoCommand::parse(tool, &arguments), Ok(expected), "{tool}");
        }
        assert_eq!(
            TodoCommand::parse("filterTodos", &Value::Null),
            Ok(TodoCommand::FilterTodos(TodoFilter::default()))
        );
    }

    #[test]
    fn bad_arguments_are_refused_naming_the_argument() {
        let long = "x".repeat(TODO_TEXT_MAX_CHARS + 1);
        let long_name = "ü".repeat(LIST_NAME_MAX_CHARS + 1);
        let cases = [
            ("createTodo", json!({}), "`text` is required"),
            (
                "createTodo",
                json!({"text": "  \n "}),
                "`text` must not be empty",
            ),
            ("createTodo", json!({"text": 5}), "`text` must be a string"),
            (
                "createTodo",
                json!({"text": "a\u{1b}b"}),
                "`text` must not contain control characters",
            ),
            (
                "createTodo",
                json!({"text": long}),
                "`text` is 201 characters long; at most 200 are allowed",
            ),
            (
                "createTodo",
                json!({"text": "a", "listName": long_name}),
                "`listName` is 41 characters long; at most 40 are allowed",
            ),
            (
                "createTodo",
                json!({"text": "a", "list": "Work"}),
                "unknown argument `list`; it takes text, listName",
            ),
            (
                "createTodo",
                json!(["a"]),
                "the arguments must be a JSON object",
            ),
            ("toggleTodo", json!({}), "`todoId` is required"),
            (
                "toggleTodo",
                json!({"todoId": 0}),
                "`todoId` must be a whole number of at least 1, a todo's id",
            ),
            ("removeTodo", json!({"todoId": 1.5}), "`todoId` must be"),
            ("removeTodo", json!({"todoId": "1"}), "`todoId` must be"),
            ("updateTodo", json!({"todoId": 1}), "`text` is required"),
            (
                "filterTodos",
                json!({"status": "pending"}),
                "`status` must be all, open or done (got \"pending\")",
            ),
            (
                "filterTodos",
                json!({"query": "q".repeat(QUERY_MAX_CHARS + 1)}),
                "`query` is 201 characters long",
            ),
            (
                "createList",
                json!({"name": ""}),
                "`name` must not be empty",
            ),
            (
                "switchList",
                json!({"name": "a".repeat(41)}),
                "`name` is 41 characters long",
            ),
        ];
        for (tool, arguments, expected) in cases {
            let reason = TodoCommand::parse(tool, &arguments).unwrap_err();
            let prefix = format!("invalid arguments for `{tool}`: ");
            assert!(reason.starts_with(&prefix), "{reason}");
            assert!(reason[prefix.len()..].starts_with(expected), "{reason}");
        }
        assert_eq!(
            TodoCommand::parse("check_balance", &json!({})).unwrap_err(),
            "`check_balance` is not a todo tool"
        );
    }

    #[test]
    fn list_names_are_compared_whatever_their_case() {
        let a = ListName::parse("name", "Groceries").unwrap();
        let b = ListName::parse("name", "  GROCERIES ").unwrap();
        assert_eq!(a.key(), b.key());
        assert_eq!(b.as_str(), "GROCERIES");
        assert_eq!(ListName::default_list().key(), "inbox");
    }

    #[test]
    fn filters_keep_by_state_and_words_in_order() {
        let todos = [
            todo(1, "Buy oat milk", false),
            todo(2, "Call Sam about the milk", true),
            todo(3, "Pay rent", false),
        ];
        let ids = |status, query| {
            TodoFilter::new(status, query)
                .unwrap()
                .apply(&todos)
                .iter()
                .map(|t| t.id)
                .collect::<Vec<_>>()
        };
        assert_eq!(ids(StatusFilter::All, None), [1, 2, 3]);
        assert_eq!(ids(StatusFilter::Open, None), [1, 3]);
        assert_eq!(ids(StatusFilter::Done, None), [2]);
        assert_eq!(ids(StatusFilter::All, Some("MILK")), [1, 2]);
        assert_eq!(ids(StatusFilter::All, Some("milk sam")), [2]);
        assert_eq!(ids(StatusFilter::Open, Some("milk")), [1]);
        assert_eq!(ids(StatusFilter::All, Some("bread")), Vec::<i64>::new());
        assert_eq!(ids(StatusFilter::All, Some("   ")), [1, 2, 3]);
    }

    #[test]
    fn results_say_what_happened() {
        let milk = todo(4, "Buy milk", false);
        assert_eq!(
            created(&milk),
            json!({"todo": {"id": 4, "text": "Buy milk", "done": false, "list": "Inbox"}, "message": "Added \"Buy milk\" to Inbox as todo 4."})
        );
        let done = Todo {
            done: true,
            ..milk.clone()
        };
        assert_eq!(toggled(&done)["message"], "Marked \"Buy milk\" as done.");
        assert_eq!(
            toggled(&milk)["message"],
            "Marked \"Buy milk\" as not done."
        );
        assert_eq!(
            updated("Buy mlk", &milk)["message"],
            "Changed todo 4 from \"Buy mlk\" to \"Buy milk\"."
        );
        assert_eq!(removed(&milk)["removed"]["id"], 4);
        let filter = TodoFilter::new(StatusFilter::Open, Some("milk")).unwrap();
        assert_eq!(
            listing("Inbox", &filter, &[milk.clone(), done.clone()]),
            json!({"list": "Inbox", "status": "open", "query": "milk", "count": 1, "todos": [milk]})
        );
        assert_eq!(
            switched("Inbox", &[milk.clone(), done])["message"],
            "Switched to Inbox: 2 todos, 1 open."
        );
        assert_eq!(
            switched("Work", &[])["message"],
            "Switched to Work: 0 todos, 0 open."
        );
        assert_eq!(
            list_created("Work", &["Inbox".into(), "Work".into()]),
            json!({"list": "Work", "lists": ["Inbox", "Work"], "message": "Created the list Work and switched to it."})
        );
    }

    #[test]
    fn refusals_name_what_exists() {
        assert_eq!(
            no_such_todo(TodoId(7), &[1, 2]),
            "there is no todo 7 in this session; todos: 1, 2"
        );
        assert_eq!(
            no_such_todo(TodoId(1), &[]),
            "there is no todo 1 in this session; todos: none"
        );
        let groceries = ListName::parse("name", "Groceries").unwrap();
        let lists = ["Inbox".to_owned(), "Work".to_owned()];
        assert_eq!(
            no_such_list(&groceries, &lists),
            "list \"Groceries\" does not exist; lists: Inbox, Work"
        );
        assert_eq!(
            list_exists(&groceries, &lists),
            "list \"Groceries\" already exists; lists: Inbox, Work"
        );
        assert!(room_for_todo(MAX_TODOS_PER_SESSION - 1).is_ok());
        assert_eq!(
            room_for_todo(MAX_TODOS_PER_SESSION).unwrap_err(),
            "this session already has 50 todos, the most it may hold; remove one first"
        );
        let full: Vec<String> = (0..MAX_LISTS_PER_SESSION)
            .map(|i| format!("L{i}"))
            .collect();
        assert!(room_for_list(&full[1..]).is_ok());
        assert!(room_for_list(&full)
            .unwrap_err()
            .starts_with("this session already has 10 lists, the most it may have; lists: L0, L1"));
    }

    #[test]
    fn the_largest_listing_fits_in_a_tool_result() {
        // Four bytes per character is the most UTF-8 (and JSON, which
        // escapes a quote in two) takes.
        let list = "𝄞".repeat(LIST_NAME_MAX_CHARS);
        let todos: Vec<Todo> = (1..=MAX_TODOS_PER_SESSION as i64)
            .map(|id| Todo {
                id: i64::MAX - id,
                text: "𝄞".repeat(TODO_TEXT_MAX_CHARS),
                done: false,
                list: list.clone(),
            })
            .collect();
        let size = listing(&list, &TodoFilter::default(), &todos)
            .to_string()
            .len();
        assert!(size < TOOL_RESULT_MAX_BYTES, "{size}");
        assert!(switched(&list, &todos).to_string().len() < TOOL_RESULT_MAX_BYTES);
    }

    fn todos() -> impl Strategy<Value = Vec<Todo>> {
        prop::collection::vec(("[a-zA-Z ÄÖé]{1,30}", any::<bool>()), 0..20).prop_map(|items| {
            items
                .into_iter()
                .enumerate()
                .map(|(i, (text, done))| todo(i as i64 + 1, &text, done))
                .collect()
        })
    }

    proptest! {
        #[test]
        fn open_and_done_split_all(todos in todos(), query in "[a-zA-Z ]{0,6}") {
            let by = |status| TodoFilter::new(status, Some(&query)).unwrap().apply(&todos);
            let (all, open, done) = (by(StatusFilter::All), by(StatusFilter::Open), by(StatusFilter::Done));
            prop_assert_eq!(open.len() + done.len(), all.len());
            prop_assert!(open.iter().all(|t| !t.done) && done.iter().all(|t| t.done));
            // A filter keeps a subsequence: ids stay in order.
            prop_assert!(all.windows(2).all(|w| w[0].id < w[1].id));
            prop_assert!(all.iter().all(|t| todos.contains(t)));
        }

        #[test]
        fn a_todo_matches_any_word_of_its_own_text_in_any_case(todos in todos(), pick in any::<prop::sample::Index>()) {
            prop_assume!(!todos.is_empty());
            let t = pick.get(&todos);
            for word in t.text.split_whitespace() {
                let shouted = TodoFilter::new(StatusFilter::All, Some(&word.to_uppercase())).unwrap();
                let quiet = TodoFilter::new(StatusFilter::All, Some(&word.to_lowercase())).unwrap();
                prop_assert!(quiet.matches(t), "{} in {:?}", word, t.text);
                prop_assert_eq!(shouted.matches(t), quiet.matches(t));
            }
        }

        #[test]
        fn parsed_text_is_one_trimmed_line_within_the_limit(raw in "\\PC{0,260}|[ \t\r\n]{0,5}[a-z\n ]{0,20}") {
            match TodoText::parse(&raw) {
                Ok(text) => {
                    let s = text.as_str();
                    prop_assert!(!s.is_empty() && s.chars().count() <= TODO_TEXT_MAX_CHARS);
                    prop_assert_eq!(s.trim(), s);
                    prop_assert!(!s.contains("  ") && !s.chars().any(char::is_control));
                    // Parsing is idempotent: a parsed text parses to itself.
                    prop_assert_eq!(TodoText::parse(s), Ok(text.clone()));
                }
                Err(reason) => prop_assert!(reason.starts_with("`text` "), "{}", reason),
            }
        }
    }
}
