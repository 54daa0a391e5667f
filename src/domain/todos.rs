//! The todo tools of the Todo Assistant vibe (issue #12), with the
//! contracts of the seed they come from (seed 003, issue #36): their
//! catalogue entries, their limits, and the pure half of running them —
//! parsing a call's arguments into a typed command, finding the todo a
//! text means, and wording the answers the model reads back.
//!
//! The seed's tools take words, not ids: `createTodo {todoText, tags?,
//! listName?}`, `toggleTodo {todoText}`, `updateTodo {oldText, newText}`,
//! `removeTodo {todoText}`, `filterTodos {tag}`, `createList {listName}`,
//! `switchList {listName}`. Every answer has the seed's shape: success is
//! `{"success": true, "message", "toolResultText", …}` (the todo or list it
//! acted on beside), failure `{"success": false, "error",
//! "toolResultText"}`; `toolResultText` is what a voice agent says.
//!
//! Switchboard runs these tools itself on per-session lists kept in SQLite
//! (`server::agent::execute::todos`). Everything that needs no database
//! lives here, so it is tested without one and the limits the model is
//! told (in the schemas) are the limits enforced.

use crate::domain::catalogue::{object, CatalogueTool};
use crate::domain::limits::excerpt;
use serde::Serialize;
use serde_json::{json, Map, Value};

/// The catalogue category (matrix column group) of the todo tools.
pub const TODO_CATEGORY: &str = "todos";

/// The list every session starts with, created on its first todo call.
pub const DEFAULT_LIST: &str = "Inbox";

/// Longest todo text (and text to find a todo by), in characters. One
/// spoken sentence; it also keeps the largest listing (see
/// [`MAX_TODOS_PER_SESSION`]) well under a tool result's size limit.
pub const TODO_TEXT_MAX_CHARS: usize = 200;

/// Longest list name, in characters: a name is said aloud and repeated in
/// every result, so a few words.
pub const LIST_NAME_MAX_CHARS: usize = 40;

/// Most todos one session may hold, over all its lists. A bound on what one
/// caller can store, and on a listing's size: at this many todos of the
/// longest text and tags a `filterTodos` result is still under 64 KiB.
pub const MAX_TODOS_PER_SESSION: usize = 50;

/// Most lists one session may have, [`DEFAULT_LIST`] included; every
/// refusal naming a list names them all, so few enough to read out.
pub const MAX_LISTS_PER_SESSION: usize = 10;

/// Longest tag, in characters: a word or two ("urgent", "groceries").
pub const TAG_MAX_CHARS: usize = 16;

/// Most tags one todo may carry. With [`TAG_MAX_CHARS`] it bounds a todo's
/// size in every listing.
pub const MAX_TAGS_PER_TODO: usize = 5;

/// Longest `tags` argument (the comma-separated string the seed's
/// `createTodo` takes), in characters: room for [`MAX_TAGS_PER_TODO`]
/// tags of [`TAG_MAX_CHARS`] with separators and spaces.
pub const TAGS_ARGUMENT_MAX_CHARS: usize = 100;

/// The `filterTodos` tag that shows every todo again (the seed's reset).
pub const ALL_TAGS: &str = "all";

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

/// Why a todo tool did not do what was asked: `error` for the model and
/// the timeline, `spoken` (the answer's `toolResultText`) for a voice
/// agent to say.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Failure {
    /// What went wrong, naming what exists where that helps.
    pub error: String,
    /// The same for the user's ears.
    pub spoken: String,
}

impl Failure {
    fn new(error: impl Into<String>, spoken: impl Into<String>) -> Self {
        Self {
            error: error.into(),
            spoken: spoken.into(),
        }
    }

    /// The seed's failure answer: `{"success": false, "error",
    /// "toolResultText"}`.
    pub fn answer(&self) -> Value {
        json!({"success": false, "error": self.error, "toolResultText": self.spoken})
    }
}

/// A success answer: `{"success": true, "message", "toolResultText"}` and
/// the fields of `extra`.
fn success(message: String, spoken: String, extra: Value) -> Value {
    let mut answer = json!({"success": true, "message": message, "toolResultText": spoken});
    if let (Some(answer), Value::Object(extra)) = (answer.as_object_mut(), extra) {
        answer.extend(extra);
    }
    answer
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
    /// Accepts `raw` (the argument `field`) as one line (whitespace runs
    /// become one space) of at most [`TODO_TEXT_MAX_CHARS`] characters.
    pub fn parse(field: &str, raw: &str) -> Result<Self, String> {
        one_line(field, raw, TODO_TEXT_MAX_CHARS).map(Self)
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

/// A todo's tags, parsed from the seed's comma-separated `tags` string:
/// each one line of 1–[`TAG_MAX_CHARS`] characters, at most
/// [`MAX_TAGS_PER_TODO`], each once whatever its case, in the order given.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Tags(Vec<String>);

impl Tags {
    /// Splits `raw` at commas; blank pieces are dropped (`"work,,"` is
    /// one tag), a repeated tag is kept once. Refusals name `tags`.
    pub fn parse(raw: &str) -> Result<Self, String> {
        let count = raw.chars().count();
        if count > TAGS_ARGUMENT_MAX_CHARS {
            return Err(format!(
                "`tags` is {count} characters long; at most {TAGS_ARGUMENT_MAX_CHARS} are allowed"
            ));
        }
        let mut tags: Vec<String> = Vec::new();
        for piece in raw.split(',').filter(|p| !p.trim().is_empty()) {
            let tag = one_line("tags", piece, TAG_MAX_CHARS).map_err(|_| {
                format!(
                    "each of `tags` must be one line of at most {TAG_MAX_CHARS} characters (got \"{}\")",
                    excerpt(piece.trim())
                )
            })?;
            if !tags.iter().any(|t| t.to_lowercase() == tag.to_lowercase()) {
                tags.push(tag);
            }
        }
        if tags.len() > MAX_TAGS_PER_TODO {
            return Err(format!(
                "`tags` names {} tags; at most {MAX_TAGS_PER_TODO} are allowed",
                tags.len()
            ));
        }
        Ok(Self(tags))
    }

    /// The tags.
    pub fn as_slice(&self) -> &[String] {
        &self.0
    }
}

/// The text a todo is found by (`todoText`, `oldText`): the seed's match,
/// any case, by substring.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TodoMatch(String);

impl TodoMatch {
    /// Accepts `raw` (the argument `field`) as one line of at most
    /// [`TODO_TEXT_MAX_CHARS`] characters.
    pub fn parse(field: &str, raw: &str) -> Result<Self, String> {
        one_line(field, raw, TODO_TEXT_MAX_CHARS).map(Self)
    }

    /// The text as given.
    pub fn as_str(&self) -> &str {
        &self.0
    }

    /// The one todo of `todos` this text means, or why there is none.
    /// Todos whose whole text it is (any case) win over todos that only
    /// contain it, and of several, those on the `active` list win; more
    /// than one left is a failure naming them all.
    pub fn pick<'a>(&self, todos: &'a [Todo], active: &str) -> Result<&'a Todo, Failure> {
        let wanted = self.0.to_lowercase();
        let exact: Vec<&Todo> = todos
            .iter()
            .filter(|t| t.text.to_lowercase() == wanted)
            .collect();
        let candidates = if exact.is_empty() {
            todos
                .iter()
                .filter(|t| t.text.to_lowercase().contains(&wanted))
                .collect()
        } else {
            exact
        };
        let on_active: Vec<&Todo> = candidates
            .iter()
            .copied()
            .filter(|t| t.list == active)
            .collect();
        match (candidates.as_slice(), on_active.as_slice()) {
            ([], _) => Err(no_match(&self.0)),
            ([one], _) | (_, [one]) => Ok(one),
            (several, _) => Err(several_match(&self.0, several)),
        }
    }
}

/// The refusal for a text no todo contains.
fn no_match(text: &str) -> Failure {
    Failure::new(
        format!("no todo matches \"{text}\""),
        format!("I couldn't find a todo matching \"{text}\". Please try a different description or check that it exists."),
    )
}

/// The refusal for a text several todos match, naming them.
fn several_match(text: &str, todos: &[&Todo]) -> Failure {
    let named: Vec<String> = todos
        .iter()
        .map(|t| format!("\"{}\" ({})", t.text, t.list))
        .collect();
    let spoken: Vec<String> = todos.iter().map(|t| format!("\"{}\"", t.text)).collect();
    Failure::new(
        format!(
            "\"{text}\" matches {} todos: {}",
            todos.len(),
            named.join(", ")
        ),
        format!(
            "I found several todos that match: {}. Please be more specific about which one you mean.",
            spoken.join(", ")
        ),
    )
}

/// Which todos `filterTodos` shows: all, or those carrying one tag.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum TagFilter {
    /// Every todo ([`ALL_TAGS`]).
    All,
    /// Todos with this tag, compared in lower case.
    Tag(String),
}

impl TagFilter {
    /// Accepts [`ALL_TAGS`] (any case) or one tag; refusals name `tag`.
    pub fn parse(raw: &str) -> Result<Self, String> {
        let tag = one_line("tag", raw, TAG_MAX_CHARS)?;
        Ok(if tag.eq_ignore_ascii_case(ALL_TAGS) {
            Self::All
        } else {
            Self::Tag(tag)
        })
    }

    /// Whether `todo` passes.
    pub fn matches(&self, todo: &Todo) -> bool {
        match self {
            Self::All => true,
            Self::Tag(tag) => {
                let tag = tag.to_lowercase();
                todo.tags.iter().any(|t| t.to_lowercase() == tag)
            }
        }
    }

    /// The argument's spelling.
    pub fn as_str(&self) -> &str {
        match self {
            Self::All => ALL_TAGS,
            Self::Tag(tag) => tag,
        }
    }
}

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

/// What a call whose arguments did not parse answers: `reason` from
/// [`TodoCommand::parse`].
pub fn invalid_arguments(reason: &str) -> Failure {
    Failure::new(
        reason,
        format!(
            "Sorry, I couldn't do that: {}.",
            reason
                .split_once(": ")
                .map_or(reason, |(_, problem)| problem)
                .replace('`', "")
        ),
    )
}

/// A todo's number in its session: numbered from 1 in the order the
/// session created them, never reused.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct TodoId(i64);

impl TodoId {
    /// The id of `todo`.
    pub fn of(todo: &Todo) -> Self {
        Self(todo.id)
    }

    /// The number.
    pub fn get(self) -> i64 {
        self.0
    }
}

/// A todo as answers show it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Todo {
    /// Its [`TodoId`] number in the session.
    pub id: i64,
    /// What is to be done.
    pub text: String,
    /// Whether it is done.
    pub done: bool,
    /// Its tags, as given.
    pub tags: Vec<String>,
    /// The name of the list it is on.
    pub list: String,
}

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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::domain::limits::TOOL_RESULT_MAX_BYTES;
    use proptest::prelude::*;

    fn todo(id: i64, text: &str, done: bool, list: &str) -> Todo {
        Todo {
            id,
            text: text.into(),
            done,
            tags: vec![],
            list: list.into(),
        }
    }

    fn find(text: &str) -> TodoMatch {
        TodoMatch::parse("todoText", text).unwrap()
    }

    #[test]
    fn the_catalogue_entries_are_the_seven_tools_with_the_seeds_parameters() {
        let tools = todo_tools();
        let ids: Vec<&str> = tools.iter().map(|t| t.id.as_str()).collect();
        assert_eq!(ids, TOOL_IDS);
        let parameters: Vec<Vec<&str>> = tools
            .iter()
            .map(|t| {
                t.parameters["properties"]
                    .as_object()
                    .unwrap()
                    .keys()
                    .map(String::as_str)
                    .collect()
            })
            .collect();
        // The seed's parameter names (serde_json sorts the keys).
        assert_eq!(
            parameters,
            [
                vec!["listName", "tags", "todoText"],
                vec!["todoText"],
                vec!["newText", "oldText"],
                vec!["todoText"],
                vec!["tag"],
                vec!["listName"],
                vec!["listName"],
            ]
        );
        for t in &tools {
            assert!(t.problems().is_empty(), "{}: {:?}", t.id, t.problems());
            assert_eq!(t.category, TODO_CATEGORY);
            assert_eq!(t.parameters["additionalProperties"], false, "{}", t.id);
            // Every property the schema declares is one the parser takes.
            let all: Map<String, Value> = t.parameters["properties"]
                .as_object()
                .unwrap()
                .keys()
                .map(|k| (k.clone(), Value::Null))
                .collect();
            let problem = TodoCommand::parse(t.id.as_str(), &Value::Object(all))
                .err()
                .unwrap_or_default();
            assert!(!problem.contains("unknown argument"), "{problem}");
        }
        assert_eq!(tools[0].parameters["required"], json!(["todoText"]));
        assert_eq!(
            tools[0].parameters["properties"]["todoText"]["maxLength"],
            TODO_TEXT_MAX_CHARS
        );
    }

    #[test]
    fn every_tool_parses_the_seeds_arguments() {
        let text = |s: &str| TodoText(s.into());
        let cases = [
            (
                "createTodo",
                json!({"todoText": "  Buy\n milk ", "tags": "work, urgent,,Work", "listName": "Groceries"}),
                TodoCommand::CreateTodo {
                    text: text("Buy milk"),
                    tags: Tags(vec!["work".into(), "urgent".into()]),
                    list: Some(ListName("Groceries".into())),
                },
            ),
            (
                "createTodo",
                json!({"todoText": "Call Sam", "listName": null}),
                TodoCommand::CreateTodo {
                    text: text("Call Sam"),
                    tags: Tags::default(),
                    list: None,
                },
            ),
            (
                "toggleTodo",
                json!({"todoText": "milk"}),
                TodoCommand::ToggleTodo { todo: find("milk") },
            ),
            (
                "updateTodo",
                json!({"oldText": "milk", "newText": "Buy oat milk"}),
                TodoCommand::UpdateTodo {
                    todo: find("milk"),
                    text: text("Buy oat milk"),
                },
            ),
            (
                "removeTodo",
                json!({"todoText": "rent"}),
                TodoCommand::RemoveTodo { todo: find("rent") },
            ),
            (
                "filterTodos",
                json!({"tag": "ALL"}),
                TodoCommand::FilterTodos(TagFilter::All),
            ),
            (
                "filterTodos",
                json!({"tag": " work "}),
                TodoCommand::FilterTodos(TagFilter::Tag("work".into())),
            ),
            (
                "createList",
                json!({"listName": "Work"}),
                TodoCommand::CreateList {
                    name: ListName("Work".into()),
                },
            ),
            (
                "switchList",
                json!({"listName": "work"}),
                TodoCommand::SwitchList {
                    name: ListName("work".into()),
                },
            ),
        ];
        for (tool, arguments, expected) in cases {
            assert_eq!(TodoCommand::parse(tool, &arguments), Ok(expected), "{tool}");
        }
    }

    #[test]
    fn bad_arguments_are_refused_naming_the_argument() {
        let long = "x".repeat(TODO_TEXT_MAX_CHARS + 1);
        let cases = [
            ("createTodo", json!({}), "`todoText` is required"),
            (
                "createTodo",
                json!({"todoText": "  \n "}),
                "`todoText` must not be empty",
            ),
            (
                "createTodo",
                json!({"todoText": 5}),
                "`todoText` must be a string",
            ),
            (
                "createTodo",
                json!({"todoText": "a\u{1b}b"}),
                "`todoText` must not contain control characters",
            ),
            (
                "createTodo",
                json!({"todoText": long}),
                "`todoText` is 201 characters long; at most 200 are allowed",
            ),
            (
                "createTodo",
                json!({"todoText": "a", "listName": "ü".repeat(41)}),
                "`listName` is 41 characters long; at most 40 are allowed",
            ),
            (
                "createTodo",
                json!({"todoText": "a", "tags": "a,b,c,d,e,f"}),
                "`tags` names 6 tags; at most 5 are allowed",
            ),
            (
                "createTodo",
                json!({"todoText": "a", "tags": "x".repeat(17)}),
                "each of `tags` must be one line of at most 16 characters",
            ),
            (
                "createTodo",
                json!({"todoText": "a", "tags": "x,".repeat(51)}),
                "`tags` is 102 characters long; at most 100 are allowed",
            ),
            (
                "createTodo",
                json!({"text": "a"}),
                "unknown argument `text`; it takes todoText, tags, listName",
            ),
            (
                "createTodo",
                json!(["a"]),
                "the arguments must be a JSON object",
            ),
            ("toggleTodo", json!({}), "`todoText` is required"),
            (
                "toggleTodo",
                json!({"todoId": 1}),
                "unknown argument `todoId`; it takes todoText",
            ),
            (
                "removeTodo",
                json!({"todoText": ""}),
                "`todoText` must not be empty",
            ),
            (
                "updateTodo",
                json!({"oldText": "a"}),
                "`newText` is required",
            ),
            (
                "updateTodo",
                json!({"newText": "a"}),
                "`oldText` is required",
            ),
            ("filterTodos", json!({}), "`tag` is required"),
            (
                "filterTodos",
                json!({"tag": "t".repeat(17)}),
                "`tag` is 17 characters long",
            ),
            (
                "createList",
                json!({"listName": ""}),
                "`listName` must not be empty",
            ),
            (
                "switchList",
                json!({"name": "Work"}),
                "unknown argument `name`; it takes listName",
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
        let failure =
            invalid_arguments("invalid arguments for `createTodo`: `todoText` is required");
        assert_eq!(
            failure.answer(),
            json!({
                "success": false,
                "error": "invalid arguments for `createTodo`: `todoText` is required",
                "toolResultText": "Sorry, I couldn't do that: todoText is required."
            })
        );
    }

    #[test]
    fn a_text_means_one_todo_the_whole_text_first_then_the_active_list() {
        let todos = [
            todo(1, "Buy milk", false, "Inbox"),
            todo(2, "Buy milk and eggs", false, "Inbox"),
            todo(3, "Call Sam", false, "Inbox"),
            todo(4, "Call Sam", false, "Work"),
            todo(5, "Pay rent", false, "Work"),
        ];
        let id = |text: &str, active: &str| find(text).pick(&todos, active).map(|t| t.id);
        assert_eq!(id("RENT", "Inbox"), Ok(5), "any case, any list");
        assert_eq!(id("buy milk", "Inbox"), Ok(1), "the whole text wins");
        assert_eq!(id("eggs", "Inbox"), Ok(2));
        assert_eq!(id("call sam", "Work"), Ok(4), "the active list wins");
        let several = find("milk").pick(&todos, "Inbox").unwrap_err();
        assert_eq!(
            several.error,
            "\"milk\" matches 2 todos: \"Buy milk\" (Inbox), \"Buy milk and eggs\" (Inbox)"
        );
        assert!(several
            .spoken
            .contains("\"Buy milk\", \"Buy milk and eggs\""));
        let sam = find("Sam").pick(&todos, "Groceries").unwrap_err();
        assert!(
            sam.error.starts_with("\"Sam\" matches 2 todos"),
            "{}",
            sam.error
        );
        let none = find("bread").pick(&todos, "Inbox").unwrap_err();
        assert_eq!(none.error, "no todo matches \"bread\"");
        assert_eq!(
            find("x").pick(&[], "Inbox").unwrap_err().error,
            "no todo matches \"x\""
        );
    }

    #[test]
    fn tags_filter_in_any_case_and_all_shows_everything() {
        let mut work = todo(1, "Send report", false, "Inbox");
        work.tags = vec!["Work".into(), "urgent".into()];
        let home = todo(2, "Water plants", true, "Inbox");
        let todos = [work.clone(), home];
        let kept = |tag: &str| {
            let answer = listing("Inbox", &TagFilter::parse(tag).unwrap(), &todos);
            answer["todos"]
                .as_array()
                .unwrap()
                .iter()
                .map(|t| t["id"].as_i64().unwrap())
                .collect::<Vec<_>>()
        };
        assert_eq!(kept("work"), [1]);
        assert_eq!(kept("URGENT"), [1]);
        assert_eq!(kept("all"), [1, 2]);
        assert_eq!(kept("home"), Vec::<i64>::new());
        let answer = listing("Inbox", &TagFilter::parse("work").unwrap(), &todos);
        assert_eq!(
            answer,
            json!({
                "success": true,
                "message": "Filtered todos on Inbox by tag \"work\": 1 of 2.",
                "toolResultText": "I've filtered your Inbox list to the todos tagged \"work\": 1 todo.",
                "list": "Inbox",
                "tag": "work",
                "count": 1,
                "todos": [{"id": 1, "text": "Send report", "done": false, "tags": ["Work", "urgent"]}]
            })
        );
    }

    #[test]
    fn answers_have_the_seeds_shape() {
        let mut milk = todo(4, "Buy milk", false, "Inbox");
        milk.tags = vec!["shop".into()];
        assert_eq!(
            created(&milk),
            json!({
                "success": true,
                "message": "Created todo \"Buy milk\" on Inbox.",
                "toolResultText": "I've added \"Buy milk\" to your Inbox list with tags: shop.",
                "todo": {"id": 4, "text": "Buy milk", "done": false, "tags": ["shop"], "list": "Inbox"}
            })
        );
        let done = Todo {
            done: true,
            ..milk.clone()
        };
        assert_eq!(toggled(&done)["message"], "Marked \"Buy milk\" as done.");
        assert_eq!(
            toggled(&milk)["toolResultText"],
            "I've marked \"Buy milk\" as not done."
        );
        assert_eq!(
            updated("Buy mlk", &milk)["message"],
            "Updated todo \"Buy mlk\" to \"Buy milk\"."
        );
        assert_eq!(removed(&milk)["removed"]["id"], 4);
        assert_eq!(
            switched("Inbox", &[milk.clone(), done])["message"],
            "Switched to Inbox: 2 todos, 1 open."
        );
        assert_eq!(
            list_created("Work", &["Inbox".into(), "Work".into()]),
            json!({
                "success": true,
                "message": "Created the list Work and switched to it.",
                "toolResultText": "I've created a new todo list called \"Work\" and switched to it.",
                "list": "Work",
                "lists": ["Inbox", "Work"]
            })
        );
        for answer in [
            created(&milk),
            toggled(&milk),
            removed(&milk),
            switched("Work", &[]),
        ] {
            assert_eq!(answer["success"], true);
            assert!(answer["message"].is_string() && answer["toolResultText"].is_string());
        }
    }

    #[test]
    fn failures_name_what_exists() {
        let groceries = ListName::parse("listName", "Groceries").unwrap();
        let lists = ["Inbox".to_owned(), "Work".to_owned()];
        assert_eq!(
            no_such_list(&groceries, &lists).answer(),
            json!({
                "success": false,
                "error": "list \"Groceries\" does not exist; lists: Inbox, Work",
                "toolResultText": "I couldn't find a list called \"Groceries\". Your lists are: Inbox, Work."
            })
        );
        assert_eq!(
            list_exists(&groceries, &lists).error,
            "list \"Groceries\" already exists; lists: Inbox, Work"
        );
        assert!(room_for_todo(MAX_TODOS_PER_SESSION - 1).is_ok());
        assert_eq!(
            room_for_todo(MAX_TODOS_PER_SESSION).unwrap_err().error,
            "this session already has 50 todos, the most it may hold; remove one first"
        );
        let full: Vec<String> = (0..MAX_LISTS_PER_SESSION)
            .map(|i| format!("L{i}"))
            .collect();
        assert!(room_for_list(&full[1..]).is_ok());
        assert!(room_for_list(&full)
            .unwrap_err()
            .error
            .starts_with("this session already has 10 lists, the most it may have; lists: L0, L1"));
        let todos = [
            todo(1, "Buy milk", false, "Inbox"),
            todo(2, "Pay rent", false, "Work"),
        ];
        let milk = TodoText::parse("todoText", "BUY MILK").unwrap();
        assert_eq!(
            room_for_text(&milk, "Inbox", &todos, None)
                .unwrap_err()
                .error,
            "\"Buy milk\" is already on Inbox"
        );
        assert!(room_for_text(&milk, "Work", &todos, None).is_ok());
        assert!(
            room_for_text(&milk, "Inbox", &todos, Some(1)).is_ok(),
            "a todo may keep its text"
        );
    }

    #[test]
    fn the_largest_listing_fits_in_a_tool_result() {
        // Four bytes per character is the most UTF-8 (and JSON, which
        // escapes a quote in two) takes.
        let wide = |n: usize| "𝄞".repeat(n);
        let list = wide(LIST_NAME_MAX_CHARS);
        let todos: Vec<Todo> = (1..=MAX_TODOS_PER_SESSION as i64)
            .map(|id| Todo {
                id: i64::MAX - id,
                text: wide(TODO_TEXT_MAX_CHARS),
                done: false,
                tags: vec![wide(TAG_MAX_CHARS); MAX_TAGS_PER_TODO],
                list: list.clone(),
            })
            .collect();
        let tag = TagFilter::Tag(wide(TAG_MAX_CHARS));
        for answer in [
            listing(&list, &TagFilter::All, &todos),
            listing(&list, &tag, &todos),
            switched(&list, &todos),
        ] {
            let size = answer.to_string().len();
            assert!(size < TOOL_RESULT_MAX_BYTES, "{size}");
        }
    }

    proptest! {
        #[test]
        fn parsed_text_is_one_trimmed_line_within_the_limit(raw in "\\PC{0,260}|[ \t\r\n]{0,5}[a-z\n ]{0,20}") {
            match TodoText::parse("todoText", &raw) {
                Ok(text) => {
                    let s = text.as_str();
                    prop_assert!(!s.is_empty() && s.chars().count() <= TODO_TEXT_MAX_CHARS);
                    prop_assert_eq!(s.trim(), s);
                    prop_assert!(!s.contains("  ") && !s.chars().any(char::is_control));
                    // Parsing is idempotent: a parsed text parses to itself.
                    prop_assert_eq!(TodoText::parse("todoText", s), Ok(text.clone()));
                }
                Err(reason) => prop_assert!(reason.starts_with("`todoText` "), "{}", reason),
            }
        }

        #[test]
        fn parsed_tags_are_few_short_and_distinct(raw in "[a-zA-Z ,]{0,120}") {
            match Tags::parse(&raw) {
                Ok(tags) => {
                    let tags = tags.as_slice();
                    prop_assert!(tags.len() <= MAX_TAGS_PER_TODO);
                    prop_assert!(tags.iter().all(|t| !t.is_empty() && t.chars().count() <= TAG_MAX_CHARS && !t.contains(',')));
                    let mut keys: Vec<String> = tags.iter().map(|t| t.to_lowercase()).collect();
                    keys.sort();
                    keys.dedup();
                    prop_assert_eq!(keys.len(), tags.len());
                }
                Err(reason) => prop_assert!(reason.contains("`tags`"), "{}", reason),
            }
        }

        #[test]
        fn a_todo_is_found_by_its_whole_text_in_any_case(texts in prop::collection::vec("[a-zA-Z ]{1,12}", 1..8), pick in any::<prop::sample::Index>()) {
            let todos: Vec<Todo> = texts
                .iter()
                .enumerate()
                .filter_map(|(i, t)| TodoText::parse("todoText", t).ok().map(|t| todo(i as i64 + 1, t.as_str(), false, "Inbox")))
                .collect();
            prop_assume!(!todos.is_empty());
            let wanted = pick.get(&todos);
            let same = todos.iter().filter(|t| t.text.to_lowercase() == wanted.text.to_lowercase()).count();
            let found = find(&wanted.text.to_uppercase()).pick(&todos, "Inbox");
            if same == 1 {
                prop_assert_eq!(found.map(|t| t.id), Ok(wanted.id));
            } else {
                prop_assert!(found.is_err());
            }
        }
    }
}
