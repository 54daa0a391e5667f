//! The words a call names things with, parsed once: a todo's text, a
//! list's name, tags, the text that finds a todo, and a tag filter.

use super::limits::{
    ALL_TAGS, DEFAULT_LIST, LIST_NAME_MAX_CHARS, MAX_TAGS_PER_TODO, TAGS_ARGUMENT_MAX_CHARS,
    TAG_MAX_CHARS, TODO_TEXT_MAX_CHARS,
};
use super::outcome::{Failure, Todo};
use crate::domain::limits::excerpt;

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
pub struct TodoText(pub(super) String);

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
pub struct ListName(pub(super) String);

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
pub struct Tags(pub(super) Vec<String>);

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
