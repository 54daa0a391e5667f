//! The todo tools' limits and fixed names: what the schemas tell the model
//! and what running the tools enforces.

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
