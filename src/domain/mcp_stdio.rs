//! How Switchboard reaches a connected MCP server: a Streamable HTTP URL
//! with headers, or — only where the `MCP_STDIO_ALLOWED` setting allows it
//! — a command it starts, speaking MCP on the process's stdin and stdout,
//! with variables of its own.
//!
//! Each value is parsed once at the edge, with every bound a named
//! constant, so the store and the client only ever hold a command that can
//! be started and variables that fit. The variables, like the headers, are
//! secrets: their `Debug` hides the values. A process's stderr is outside
//! input too: [`StderrTail`] keeps its last lines, bounded, to say why the
//! process ended.

use crate::domain::error::FieldError;
use crate::domain::limits::{
    excerpt, MCP_COMMAND_PARTS_MAX, MCP_COMMAND_PART_MAX_BYTES, MCP_ENV_MAX_BYTES,
    MCP_ENV_MAX_COUNT, MCP_STDERR_LINES_KEPT, MCP_STDERR_LINE_MAX_CHARS,
};
use crate::domain::mcp_server::{UpstreamHeaders, UpstreamUrl};
use serde::{Deserialize, Serialize};
use std::collections::{BTreeMap, VecDeque};
use std::fmt;

/// The setting that allows stdio servers, named in the refusal when it is
/// off.
pub const STDIO_SETTING: &str = "MCP_STDIO_ALLOWED";

/// A stdio server's command: the program (a path, or a name looked up on
/// `PATH`) and its arguments, 1–[`MCP_COMMAND_PARTS_MAX`] parts of at most
/// [`MCP_COMMAND_PART_MAX_BYTES`] each, none holding a NUL (which no
/// process can be given). It is never run through a shell.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(try_from = "Vec<String>", into = "Vec<String>")]
pub struct StdioCommand(Vec<String>);

impl StdioCommand {
    /// Accepts a program and its arguments; refuses naming `command`.
    pub fn parse(parts: Vec<String>) -> Result<Self, FieldError> {
        let refuse = |rule: String| FieldError::new("command", rule);
        if parts.is_empty() || parts[0].trim().is_empty() {
            return Err(refuse(
                "must start with the program to run, e.g. [\"npx\", \"-y\", \"@scope/server\"]"
                    .to_owned(),
            ));
        }
        if parts.len() > MCP_COMMAND_PARTS_MAX {
            return Err(refuse(format!(
                "must be at most {MCP_COMMAND_PARTS_MAX} parts (the program and its arguments)"
            )));
        }
        for (i, part) in parts.iter().enumerate() {
            if part.len() > MCP_COMMAND_PART_MAX_BYTES {
                return Err(refuse(format!(
                    "part {i} must be at most {MCP_COMMAND_PART_MAX_BYTES} bytes"
                )));
            }
            if part.contains('\0') {
                return Err(refuse(format!("part {i} must not contain a NUL character")));
            }
        }
        Ok(Self(parts))
    }

    /// The program to start.
    pub fn program(&self) -> &str {
        &self.0[0]
    }

    /// Its arguments.
    pub fn args(&self) -> &[String] {
        &self.0[1..]
    }

    /// The program and its arguments, as given.
    pub fn parts(&self) -> &[String] {
        &self.0
    }
}

impl TryFrom<Vec<String>> for StdioCommand {
    type Error = FieldError;
    fn try_from(value: Vec<String>) -> Result<Self, Self::Error> {
        Self::parse(value)
    }
}

impl From<StdioCommand> for Vec<String> {
    fn from(value: StdioCommand) -> Self {
        value.0
    }
}

/// The variables a stdio server's process gets besides the few it inherits
/// (a token, options): at most [`MCP_ENV_MAX_COUNT`], names and values at
/// most [`MCP_ENV_MAX_BYTES`] together. Names are `[A-Za-z_][A-Za-z0-9_]*`,
/// values hold no NUL. Their `Debug` hides the values, so a log line never
/// carries a secret.
#[derive(Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(
    try_from = "BTreeMap<String, String>",
    into = "BTreeMap<String, String>"
)]
pub struct StdioEnv(BTreeMap<String, String>);

impl StdioEnv {
    /// Accepts variable names and values; refuses naming `env` or
    /// `env.<NAME>`.
    pub fn parse(raw: BTreeMap<String, String>) -> Result<Self, FieldError> {
        if raw.len() > MCP_ENV_MAX_COUNT {
            return Err(FieldError::new(
                "env",
                format!("must be at most {MCP_ENV_MAX_COUNT} variables"),
            ));
        }
        let bytes: usize = raw.iter().map(|(k, v)| k.len() + v.len()).sum();
        if bytes > MCP_ENV_MAX_BYTES {
            return Err(FieldError::new(
                "env",
                format!("must be at most {MCP_ENV_MAX_BYTES} bytes of names and values"),
            ));
        }
        for (name, value) in &raw {
            let named = name
                .bytes()
                .next()
                .is_some_and(|b| b.is_ascii_alphabetic() || b == b'_')
                && name.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'_');
            if !named {
                return Err(FieldError::new(
                    format!("env.{}", excerpt(name)),
                    "must be a variable name of letters, digits and _ (not starting with a digit)",
                ));
            }
            if value.contains('\0') {
                return Err(FieldError::new(
                    format!("env.{name}"),
                    "must not contain a NUL character",
                ));
            }
        }
        Ok(Self(raw))
    }

    /// Each variable.
    pub fn iter(&self) -> impl Iterator<Item = (&str, &str)> {
        self.0.iter().map(|(k, v)| (k.as_str(), v.as_str()))
    }

    /// Whether there are none.
    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }
}

impl TryFrom<BTreeMap<String, String>> for StdioEnv {
    type Error = FieldError;
    fn try_from(value: BTreeMap<String, String>) -> Result<Self, Self::Error> {
        Self::parse(value)
    }
}

impl From<StdioEnv> for BTreeMap<String, String> {
    fn from(value: StdioEnv) -> Self {
        value.0
    }
}

impl fmt::Debug for StdioEnv {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_map()
            .entries(self.0.keys().map(|k| (k, "…")))
            .finish()
    }
}

/// Where a connected server is: what admins see of how it is reached.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Endpoint {
    /// A Streamable HTTP endpoint.
    Url(UpstreamUrl),
    /// A command Switchboard starts and speaks to on stdio.
    Command(StdioCommand),
}

/// How to reach a server being added: its endpoint and the secrets that
/// go with it (headers for a URL, variables for a command; the other is
/// empty).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Reach {
    /// The URL or the command.
    pub endpoint: Endpoint,
    /// Headers sent with every request (a URL's only).
    pub headers: UpstreamHeaders,
    /// Variables the process gets (a command's only).
    pub env: StdioEnv,
}

impl Reach {
    /// Exactly one of `url` and `command`, the command only when
    /// `stdio_allowed`; headers only with a URL, variables only with a
    /// command. Refuses naming the field (`url`, `command`, `headers…`,
    /// `env…`).
    pub fn parse(
        url: Option<String>,
        headers: BTreeMap<String, String>,
        command: Option<Vec<String>>,
        env: BTreeMap<String, String>,
        stdio_allowed: bool,
    ) -> Result<Self, FieldError> {
        match (url, command) {
            (Some(_), Some(_)) => Err(FieldError::new(
                "command",
                "give either url (a Streamable HTTP server) or command (a stdio server), not both",
            )),
            (None, None) => Err(FieldError::new(
                "url",
                "is required: a Streamable HTTP URL (or, for a stdio server, a command)",
            )),
            (Some(url), None) => {
                if !env.is_empty() {
                    return Err(FieldError::new(
                        "env",
                        "is for a stdio server's command; send an HTTP server's secrets as headers",
                    ));
                }
                Ok(Self {
                    endpoint: Endpoint::Url(UpstreamUrl::parse(&url)?),
                    headers: UpstreamHeaders::parse(headers)?,
                    env: StdioEnv::default(),
                })
            }
            (None, Some(command)) => {
                if !stdio_allowed {
                    return Err(FieldError::new(
                        "command",
                        format!(
                            "stdio MCP servers are off on this Switchboard: its admin may set \
                             {STDIO_SETTING}=true to let it start commands"
                        ),
                    ));
                }
                if !headers.is_empty() {
                    return Err(FieldError::new(
                        "headers",
                        "are sent over HTTP; give a stdio server's secrets as env",
                    ));
                }
                Ok(Self {
                    endpoint: Endpoint::Command(StdioCommand::parse(command)?),
                    headers: UpstreamHeaders::default(),
                    env: StdioEnv::parse(env)?,
                })
            }
        }
    }
}

/// The last [`MCP_STDERR_LINES_KEPT`] lines a process wrote to stderr,
/// each cut to [`MCP_STDERR_LINE_MAX_CHARS`] characters with control
/// characters (colour codes) dropped, and lines without a letter or digit
/// (blank lines, `-----` rules) skipped: fed bytes as they come, it never
/// holds more than that, however much the process writes.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct StderrTail {
    lines: VecDeque<String>,
    partial: Vec<u8>,
}

impl StderrTail {
    /// Takes the next bytes of stderr.
    pub fn feed(&mut self, bytes: &[u8]) {
        let mut rest = bytes;
        while let Some(end) = rest.iter().position(|&b| b == b'\n') {
            self.take_partial(&rest[..end]);
            self.end_line();
            rest = &rest[end + 1..];
        }
        self.take_partial(rest);
    }

    /// Ends the last line, if the process ended without a newline.
    pub fn finish(&mut self) {
        if !self.partial.is_empty() {
            self.end_line();
        }
    }

    /// The lines kept, oldest first, joined with ` | `; `None` when it
    /// wrote nothing worth keeping.
    pub fn render(&self) -> Option<String> {
        (!self.lines.is_empty()).then(|| Vec::from(self.lines.clone()).join(" | "))
    }

    /// Keeps what fits of `bytes` in the line being read (four bytes a
    /// character at most, so a cut never loses a character that fits).
    fn take_partial(&mut self, bytes: &[u8]) {
        let room = (MCP_STDERR_LINE_MAX_CHARS * 4).saturating_sub(self.partial.len());
        self.partial
            .extend_from_slice(&bytes[..bytes.len().min(room)]);
    }

    fn end_line(&mut self) {
        let text = String::from_utf8_lossy(&self.partial);
        let line: String = strip_escapes(&text)
            .chars()
            .filter(|c| !c.is_control())
            .take(MCP_STDERR_LINE_MAX_CHARS)
            .collect();
        self.partial.clear();
        let line = line.trim();
        // Blank lines and rules (`-----`) say nothing.
        if !line.chars().any(char::is_alphanumeric) {
            return;
        }
        if self.lines.len() == MCP_STDERR_LINES_KEPT {
            self.lines.pop_front();
        }
        self.lines.push_back(line.to_owned());
    }
}

/// `text` without ANSI escape sequences (`ESC [ … letter`), which
/// coloured output is full of.
fn strip_escapes(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut chars = text.chars().peekable();
    while let Some(c) = chars.next() {
        if c == '\u{1b}' && chars.peek() == Some(&'[') {
            chars.next();
            for d in chars.by_ref() {
                if d.is_ascii_alphabetic() {
                    break;
                }
            }
        } else {
            out.push(c);
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn strings(parts: &[&str]) -> Vec<String> {
        parts.iter().map(|p| (*p).to_owned()).collect()
    }

    fn env(pairs: &[(&str, &str)]) -> BTreeMap<String, String> {
        pairs
            .iter()
            .map(|(k, v)| ((*k).to_owned(), (*v).to_owned()))
            .collect()
    }

    #[test]
    fn a_command_is_a_program_and_its_arguments_within_the_limits() {
        let c = StdioCommand::parse(strings(&["npx", "-y", "@scope/server"])).unwrap();
        assert_eq!(c.program(), "npx");
        assert_eq!(c.args(), ["-y", "@scope/server"]);
        let long = "a".repeat(MCP_COMMAND_PART_MAX_BYTES + 1);
        let many = vec!["x".to_owned(); MCP_COMMAND_PARTS_MAX + 1];
        for bad in [
            vec![],
            strings(&[" "]),
            strings(&["node", "a\0b"]),
            vec!["node".to_owned(), long],
            many,
        ] {
            assert_eq!(StdioCommand::parse(bad).unwrap_err().field, "command");
        }
    }

    #[test]
    fn env_names_are_variable_names_and_values_never_show_in_debug() {
        let ok = StdioEnv::parse(env(&[("API_TOKEN", "s3cret"), ("_X1", "")])).unwrap();
        assert!(!format!("{ok:?}").contains("s3cret"));
        assert_eq!(ok.iter().count(), 2);
        for (name, field) in [("1ST", "env.1ST"), ("A-B", "env.A-B"), ("", "env.")] {
            let got = StdioEnv::parse(env(&[(name, "v")])).unwrap_err();
            assert_eq!(got.field, field);
        }
        let nul = StdioEnv::parse(env(&[("A", "x\0y")])).unwrap_err();
        assert_eq!(nul.field, "env.A");
        let big = env(&[("A", &"v".repeat(MCP_ENV_MAX_BYTES))]);
        assert_eq!(StdioEnv::parse(big).unwrap_err().field, "env");
        let many: BTreeMap<String, String> = (0..=MCP_ENV_MAX_COUNT)
            .map(|i| (format!("V{i}"), String::new()))
            .collect();
        assert_eq!(StdioEnv::parse(many).unwrap_err().field, "env");
    }

    #[test]
    fn a_server_is_reached_by_exactly_one_of_url_and_command() {
        let url = || Some("http://127.0.0.1:1/mcp".to_owned());
        let cmd = || Some(strings(&["node", "server.js"]));
        let none = BTreeMap::new;
        let both = Reach::parse(url(), none(), cmd(), none(), true).unwrap_err();
        assert_eq!(both.field, "command");
        let neither = Reach::parse(None, none(), None, none(), true).unwrap_err();
        assert_eq!(neither.field, "url");
        let http = Reach::parse(url(), none(), None, none(), false).unwrap();
        assert!(matches!(http.endpoint, Endpoint::Url(_)));
        let stdio = Reach::parse(None, none(), cmd(), env(&[("K", "v")]), true).unwrap();
        assert!(matches!(stdio.endpoint, Endpoint::Command(_)));
        assert!(!stdio.env.is_empty() && stdio.headers.is_empty());
    }

    #[test]
    fn a_command_is_refused_naming_the_setting_when_stdio_is_off() {
        let got = Reach::parse(
            None,
            BTreeMap::new(),
            Some(strings(&["node"])),
            BTreeMap::new(),
            false,
        )
        .unwrap_err();
        assert_eq!(got.field, "command");
        assert!(got.rule.contains(STDIO_SETTING), "{}", got.rule);
    }

    #[test]
    fn headers_go_with_a_url_and_env_with_a_command() {
        let h = env(&[("authorization", "Bearer x")]);
        let e = env(&[("TOKEN", "x")]);
        let url = Some("http://127.0.0.1:1/mcp".to_owned());
        let cmd = Some(strings(&["node"]));
        let got = Reach::parse(None, h, cmd, BTreeMap::new(), true).unwrap_err();
        assert_eq!(got.field, "headers");
        let got = Reach::parse(url, BTreeMap::new(), None, e, true).unwrap_err();
        assert_eq!(got.field, "env");
    }

    #[test]
    fn the_stderr_tail_keeps_the_last_lines_cut_and_without_colour_codes() {
        let mut tail = StderrTail::default();
        assert_eq!(tail.render(), None);
        for i in 0..MCP_STDERR_LINES_KEPT + 5 {
            tail.feed(format!("line {i}\n").as_bytes());
        }
        tail.feed(b"\x1b[31mError:\x1b[0m bad to");
        tail.feed(b"ken\n\n   \n-----\nlast words");
        tail.finish();
        let got = tail.render().unwrap();
        assert!(got.starts_with("line 7 | "), "{got}");
        assert!(got.ends_with("Error: bad token | last words"), "{got}");
        let mut long = StderrTail::default();
        long.feed(&vec![b'x'; 100_000]);
        long.feed(b"\n");
        assert_eq!(
            long.render().unwrap().chars().count(),
            MCP_STDERR_LINE_MAX_CHARS
        );
    }

    proptest! {
        #[test]
        fn the_stderr_tail_stays_bounded_whatever_is_written(chunks in proptest::collection::vec(proptest::collection::vec(any::<u8>(), 0..2000), 0..20)) {
            let mut tail = StderrTail::default();
            for chunk in &chunks {
                tail.feed(chunk);
                prop_assert!(tail.partial.len() <= MCP_STDERR_LINE_MAX_CHARS * 4);
            }
            tail.finish();
            prop_assert!(tail.lines.len() <= MCP_STDERR_LINES_KEPT);
            prop_assert!(tail.lines.iter().all(|l| l.chars().count() <= MCP_STDERR_LINE_MAX_CHARS && !l.is_empty()));
        }
    }
}
