//! Connected MCP servers: an upstream MCP server an admin adds (a name, a
//! Streamable HTTP URL, optional headers) and what its tools become in the
//! catalogue.
//!
//! Each value is parsed once at the edge, so the store and the client only
//! ever hold a name that makes valid tool ids, a URL with a scheme they can
//! speak and headers that fit in a request. An upstream `tools/list` entry
//! is outside input too: its name is mapped to a catalogue id that names
//! its server (`everything__echo`), and its description and schema are
//! capped like a plugin's before they reach a model.

use crate::domain::catalogue::CatalogueTool;
use crate::domain::error::FieldError;
use crate::domain::ids::ToolId;
use crate::domain::limits::{
    excerpt, ID_MAX_BYTES, MCP_HEADERS_MAX_BYTES, MCP_HEADERS_MAX_COUNT, MCP_SERVER_NAME_MAX_CHARS,
    MCP_TOOLS_PER_SERVER_MAX, MCP_URL_MAX_BYTES,
};
use crate::domain::plugin::{depth, DESCRIPTION_MAX_CHARS, SCHEMA_MAX_BYTES, SCHEMA_MAX_DEPTH};
use serde::{Deserialize, Serialize};
use serde_json::{json, Value};
use std::collections::{BTreeMap, BTreeSet};
use std::fmt;

/// What joins a server's name and an upstream tool's name in a catalogue
/// id (`everything__echo`): a server name never contains it, so the split
/// is unambiguous.
pub const ID_SEPARATOR: &str = "__";

/// A connected server's name: a slug of 1–[`MCP_SERVER_NAME_MAX_CHARS`]
/// characters (`a-z`, `0-9`, `-`, not starting with `-`), short enough to
/// leave room in a 64-character tool id for the upstream tool's name.
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(try_from = "String", into = "String")]
pub struct McpServerName(String);

impl McpServerName {
    /// Accepts a slug of 1–[`MCP_SERVER_NAME_MAX_CHARS`] characters; refuses
    /// naming the field `name`.
    pub fn parse(raw: &str) -> Result<Self, FieldError> {
        let ok = !raw.is_empty()
            && raw.len() <= MCP_SERVER_NAME_MAX_CHARS
            && !raw.starts_with('-')
            && raw
                .bytes()
                .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'-');
        if ok {
            Ok(Self(raw.to_owned()))
        } else {
            Err(FieldError::new(
                "name",
                format!(
                    "must be a slug of 1-{MCP_SERVER_NAME_MAX_CHARS} characters (a-z, 0-9 and -, \
                     not starting with -), got \"{}\"",
                    excerpt(raw)
                ),
            ))
        }
    }

    /// The name.
    pub fn as_str(&self) -> &str {
        &self.0
    }
}

impl TryFrom<String> for McpServerName {
    type Error = FieldError;
    fn try_from(value: String) -> Result<Self, Self::Error> {
        Self::parse(&value)
    }
}

impl From<McpServerName> for String {
    fn from(value: McpServerName) -> Self {
        value.0
    }
}

impl fmt::Display for McpServerName {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

/// An upstream server's Streamable HTTP endpoint: `http://` or `https://`,
/// a host, at most [`MCP_URL_MAX_BYTES`], no whitespace or control
/// characters, and no credentials in it (they belong in the headers, which
/// are never shown again; a URL is).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(try_from = "String", into = "String")]
pub struct UpstreamUrl(String);

impl UpstreamUrl {
    /// Accepts an absolute http(s) URL with a host; refuses naming `url`.
    pub fn parse(raw: &str) -> Result<Self, FieldError> {
        let refuse = |why: &str| {
            FieldError::new(
                "url",
                format!(
                    "must be an http:// or https:// URL {why} (got \"{}\")",
                    excerpt(raw)
                ),
            )
        };
        if raw.len() > MCP_URL_MAX_BYTES {
            return Err(refuse(&format!("of at most {MCP_URL_MAX_BYTES} bytes")));
        }
        if raw.chars().any(|c| c.is_whitespace() || c.is_control()) {
            return Err(refuse("without spaces or control characters"));
        }
        let lower = raw.to_ascii_lowercase();
        let rest = ["http://", "https://"]
            .iter()
            .find_map(|scheme| lower.strip_prefix(scheme).map(|_| &raw[scheme.len()..]))
            .ok_or_else(|| refuse("(other schemes are not spoken)"))?;
        let authority = rest.split(['/', '?', '#']).next().unwrap_or_default();
        if authority.contains('@') {
            return Err(refuse("without credentials (send them as headers)"));
        }
        let host = match authority.strip_prefix('[') {
            Some(v6) => v6.split(']').next().unwrap_or_default(),
            None => authority.split(':').next().unwrap_or_default(),
        };
        if host.is_empty() {
            return Err(refuse("with a host"));
        }
        Ok(Self(raw.to_owned()))
    }

    /// The URL.
    pub fn as_str(&self) -> &str {
        &self.0
    }
}

impl TryFrom<String> for UpstreamUrl {
    type Error = FieldError;
    fn try_from(value: String) -> Result<Self, Self::Error> {
        Self::parse(&value)
    }
}

impl From<UpstreamUrl> for String {
    fn from(value: UpstreamUrl) -> Self {
        value.0
    }
}

/// Header names Switchboard's MCP client sets itself (or HTTP owns): an
/// admin's header must not replace them.
const RESERVED_HEADERS: [&str; 9] = [
    "accept",
    "connection",
    "content-length",
    "content-type",
    "host",
    "mcp-protocol-version",
    "mcp-session-id",
    "last-event-id",
    "transfer-encoding",
];

/// The headers sent with every request to an upstream server (a bearer
/// token, a key): at most [`MCP_HEADERS_MAX_COUNT`], names and values at
/// most [`MCP_HEADERS_MAX_BYTES`] together. Names are lower-cased. Their
/// `Debug` hides the values, so a log line never carries a secret.
#[derive(Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(
    try_from = "BTreeMap<String, String>",
    into = "BTreeMap<String, String>"
)]
pub struct UpstreamHeaders(BTreeMap<String, String>);

impl UpstreamHeaders {
    /// Accepts header names of token characters (not one Switchboard sets)
    /// and values of visible ASCII, spaces and tabs; refuses naming
    /// `headers` or `headers.<name>`.
    pub fn parse(raw: BTreeMap<String, String>) -> Result<Self, FieldError> {
        if raw.len() > MCP_HEADERS_MAX_COUNT {
            return Err(FieldError::new(
                "headers",
                format!("must be at most {MCP_HEADERS_MAX_COUNT} headers"),
            ));
        }
        let bytes: usize = raw.iter().map(|(k, v)| k.len() + v.len()).sum();
        if bytes > MCP_HEADERS_MAX_BYTES {
            return Err(FieldError::new(
                "headers",
                format!("must be at most {MCP_HEADERS_MAX_BYTES} bytes of names and values"),
            ));
        }
        let mut out = BTreeMap::new();
        for (name, value) in raw {
            let lower = name.to_ascii_lowercase();
            let token = !name.is_empty() && name.bytes().all(is_tchar);
            if !token || RESERVED_HEADERS.contains(&lower.as_str()) {
                return Err(FieldError::new(
                    format!("headers.{}", excerpt(&name)),
                    "must be a header name Switchboard does not set itself (token characters)",
                ));
            }
            if !value
                .bytes()
                .all(|b| b == b'\t' || (b' '..=b'~').contains(&b))
            {
                return Err(FieldError::new(
                    format!("headers.{}", excerpt(&name)),
                    "must be visible ASCII, spaces or tabs (no line breaks)",
                ));
            }
            if out.insert(lower, value).is_some() {
                return Err(FieldError::new(
                    format!("headers.{}", excerpt(&name)),
                    "is given twice (names are case-insensitive)",
                ));
            }
        }
        Ok(Self(out))
    }

    /// Each header, name lower-cased.
    pub fn iter(&self) -> impl Iterator<Item = (&str, &str)> {
        self.0.iter().map(|(k, v)| (k.as_str(), v.as_str()))
    }

    /// Whether there are none.
    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }
}

/// Whether `b` is an HTTP token character (RFC 9110 `tchar`).
fn is_tchar(b: u8) -> bool {
    b.is_ascii_alphanumeric() || b"!#$%&'*+-.^_`|~".contains(&b)
}

impl TryFrom<BTreeMap<String, String>> for UpstreamHeaders {
    type Error = FieldError;
    fn try_from(value: BTreeMap<String, String>) -> Result<Self, Self::Error> {
        Self::parse(value)
    }
}

impl From<UpstreamHeaders> for BTreeMap<String, String> {
    fn from(value: UpstreamHeaders) -> Self {
        value.0
    }
}

impl fmt::Debug for UpstreamHeaders {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_map()
            .entries(self.0.keys().map(|k| (k, "…")))
            .finish()
    }
}

/// The catalogue id of upstream tool `upstream` of server `server`:
/// `<server>__<upstream>`, each character of `upstream` that a tool id
/// cannot hold (`.`, `/`, a space, anything not ASCII) written as `_`, so
/// the same name always maps to the same id. Refused when the id would be
/// longer than a tool id may be.
pub fn imported_id(server: &McpServerName, upstream: &str) -> Result<ToolId, String> {
    if upstream.is_empty() {
        return Err("an upstream tool has an empty name".to_owned());
    }
    let mapped: String = upstream
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '_' || c == '-' {
                c
            } else {
                '_'
            }
        })
        .collect();
    let id = format!("{server}{ID_SEPARATOR}{mapped}");
    if id.len() > ID_MAX_BYTES {
        return Err(format!(
            "upstream tool \"{}\" makes an id longer than {ID_MAX_BYTES} characters",
            excerpt(upstream)
        ));
    }
    ToolId::parse(&id).map_err(|e| e.rule)
}

/// One entry of an upstream `tools/list`, as the client read it.
#[derive(Debug, Clone, PartialEq)]
pub struct UpstreamTool {
    /// Its name upstream (what `tools/call` takes).
    pub name: String,
    /// Its title, if it gives one (what people see).
    pub title: Option<String>,
    /// Its description, if any.
    pub description: Option<String>,
    /// Its `inputSchema`.
    pub input_schema: Value,
}

/// An upstream tool as a catalogue tool, with the name to call it by.
#[derive(Debug, Clone, PartialEq)]
pub struct ImportedTool {
    /// The catalogue tool (`<server>__<name>`, category `mcp:<server>`).
    pub tool: CatalogueTool,
    /// Its name upstream.
    pub upstream_name: String,
    /// The description the upstream gave (cut to fit), to tell an admin's
    /// own description from the upstream's on the next import.
    pub upstream_description: String,
}

impl ImportedTool {
    /// This import over the tool already in the catalogue, if any: an
    /// admin's requirements and effects are kept, and so is their
    /// description when it differs from what the upstream said last time
    /// (`last_upstream`); everything else follows the upstream.
    pub fn over(mut self, existing: Option<&CatalogueTool>, last_upstream: Option<&str>) -> Self {
        if let Some(existing) = existing {
            self.tool.requires = existing.requires.clone();
            self.tool.effects = existing.effects.clone();
            if last_upstream.is_some_and(|last| last != existing.description) {
                self.tool.description = existing.description.clone();
            }
        }
        self
    }
}

/// What one `tools/list` gives the catalogue: the tools imported (by
/// upstream name, in that order) and, for each entry left out, why.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Import {
    /// The tools to import.
    pub tools: Vec<ImportedTool>,
    /// Why each entry left out was left out, for the server's last error.
    pub skipped: Vec<String>,
}

/// Turns server `server`'s `tools/list` into catalogue tools. Entries are
/// taken in upstream-name order, so the outcome does not depend on the
/// order the upstream listed them: past [`MCP_TOOLS_PER_SERVER_MAX`], or
/// whose id another entry already took (`a.b` and `a_b` map alike), or
/// whose schema is too big, too deep or not an object, an entry is left
/// out and said why.
pub fn import(server: &McpServerName, listed: &[UpstreamTool]) -> Import {
    let mut sorted: Vec<&UpstreamTool> = listed.iter().collect();
    sorted.sort_by(|a, b| a.name.cmp(&b.name));
    let mut out = Import::default();
    let mut taken = BTreeSet::new();
    for entry in sorted {
        if out.tools.len() == MCP_TOOLS_PER_SERVER_MAX {
            out.skipped.push(format!(
                "only the first {MCP_TOOLS_PER_SERVER_MAX} tools (by name) are imported"
            ));
            break;
        }
        match one(server, entry) {
            Ok(imported) if !taken.insert(imported.tool.id.clone()) => out.skipped.push(format!(
                "upstream tool \"{}\" maps to id {}, which another tool took",
                excerpt(&entry.name),
                imported.tool.id
            )),
            Ok(imported) => out.tools.push(imported),
            Err(why) => out.skipped.push(why),
        }
    }
    out
}

/// One entry as a catalogue tool, or why not.
fn one(server: &McpServerName, entry: &UpstreamTool) -> Result<ImportedTool, String> {
    let id = imported_id(server, &entry.name)?;
    let schema = &entry.input_schema;
    let why = |rule: String| format!("upstream tool \"{}\": {rule}", excerpt(&entry.name));
    let bytes = schema.to_string().len();
    if bytes > SCHEMA_MAX_BYTES {
        return Err(why(format!(
            "its inputSchema is over {SCHEMA_MAX_BYTES} bytes"
        )));
    }
    if depth(schema) > SCHEMA_MAX_DEPTH {
        return Err(why(format!(
            "its inputSchema nests over {SCHEMA_MAX_DEPTH} levels"
        )));
    }
    if schema.get("type").and_then(Value::as_str) != Some("object") {
        return Err(why("its inputSchema is not an object schema".to_owned()));
    }
    let description = entry
        .description
        .as_deref()
        .map(str::trim)
        .filter(|d| !d.is_empty())
        .map_or_else(
            || format!("Tool {} of MCP server {server}.", entry.name),
            str::to_owned,
        );
    let description = cut(&description, DESCRIPTION_MAX_CHARS);
    let title = entry
        .title
        .as_deref()
        .map(str::trim)
        .filter(|t| !t.is_empty());
    let tool = CatalogueTool {
        id,
        name: cut(title.unwrap_or(&entry.name), 80),
        description: description.clone(),
        category: format!("mcp:{server}"),
        parameters: schema.clone(),
        requires: Vec::new(),
        effects: Vec::new(),
        ultravox_builtin: false,
    };
    Ok(ImportedTool {
        tool,
        upstream_name: entry.name.clone(),
        upstream_description: description,
    })
}

/// `text` cut to `max` characters.
fn cut(text: &str, max: usize) -> String {
    text.chars().take(max).collect()
}

/// Whether a connected server is in use, for its admins.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum McpServerStatus {
    /// Added; the first connection is being made.
    Connecting,
    /// Connected; its tools are imported.
    Connected,
    /// The last attempt failed (`lastError` says why); retrying with
    /// back-off.
    Error,
}

impl McpServerStatus {
    /// Its stored and JSON word.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Connecting => "connecting",
            Self::Connected => "connected",
            Self::Error => "error",
        }
    }

    /// The status a stored word names (`error` for an unknown one).
    pub fn parse(word: &str) -> Self {
        match word {
            "connecting" => Self::Connecting,
            "connected" => Self::Connected,
            _ => Self::Error,
        }
    }
}

/// An upstream `tools/call` result as the call's result: its text
/// content joined, its structured content and whether it is an error,
/// in the shape every export format carries.
pub fn call_result(texts: &[String], structured: Option<Value>, is_error: bool) -> Value {
    let mut out = json!({"text": texts.join("\n"), "isError": is_error});
    if let Some(structured) = structured {
        out["structuredContent"] = structured;
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn server() -> McpServerName {
        McpServerName::parse("everything").unwrap()
    }

    fn listed(name: &str) -> UpstreamTool {
        UpstreamTool {
            name: name.to_owned(),
            title: None,
            description: Some(format!("Does {name}")),
            input_schema: json!({"type": "object", "properties": {}}),
        }
    }

    #[test]
    fn a_server_name_is_a_short_slug() {
        assert!(McpServerName::parse("everything-2").is_ok());
        for bad in ["", "-lead", "Upper", "a_b", "a b", &"a".repeat(25)] {
            assert_eq!(
                McpServerName::parse(bad).unwrap_err().field,
                "name",
                "{bad}"
            );
        }
    }

    #[test]
    fn an_upstream_url_is_http_or_https_with_a_host_and_no_credentials() {
        assert!(UpstreamUrl::parse("http://127.0.0.1:3001/mcp").is_ok());
        assert!(UpstreamUrl::parse("HTTPS://mcp.example.com").is_ok());
        assert!(UpstreamUrl::parse("http://[::1]:8080/mcp").is_ok());
        for bad in [
            "ftp://x",
            "http://",
            "http:///mcp",
            "http://user:pw@host/mcp",
            "http://a b",
            "mcp.example.com",
        ] {
            assert_eq!(UpstreamUrl::parse(bad).unwrap_err().field, "url", "{bad}");
        }
    }

    #[test]
    fn headers_are_capped_checked_and_never_shown_in_debug() {
        let ok = UpstreamHeaders::parse(BTreeMap::from([(
            "Authorization".to_owned(),
            "Bearer s3cret".to_owned(),
        )]))
        .unwrap();
        assert_eq!(ok.iter().next(), Some(("authorization", "Bearer s3cret")));
        assert!(!format!("{ok:?}").contains("s3cret"));
        let big = BTreeMap::from([("x-key".to_owned(), "k".repeat(MCP_HEADERS_MAX_BYTES))]);
        assert_eq!(UpstreamHeaders::parse(big).unwrap_err().field, "headers");
        let reserved = BTreeMap::from([("Host".to_owned(), "evil".to_owned())]);
        assert_eq!(
            UpstreamHeaders::parse(reserved).unwrap_err().field,
            "headers.Host"
        );
        let broken = BTreeMap::from([("x-a".to_owned(), "a\r\nx-b: c".to_owned())]);
        assert_eq!(
            UpstreamHeaders::parse(broken).unwrap_err().field,
            "headers.x-a"
        );
        let twice = BTreeMap::from([
            ("X-A".to_owned(), "1".to_owned()),
            ("x-a".to_owned(), "2".to_owned()),
        ]);
        assert!(UpstreamHeaders::parse(twice).is_err());
    }

    #[test]
    fn an_imported_id_names_its_server_and_maps_odd_characters_alike() {
        assert_eq!(
            imported_id(&server(), "echo").unwrap().as_str(),
            "everything__echo"
        );
        assert_eq!(
            imported_id(&server(), "get-sum").unwrap().as_str(),
            "everything__get-sum"
        );
        assert_eq!(
            imported_id(&server(), "fs.read file").unwrap().as_str(),
            "everything__fs_read_file"
        );
        assert!(imported_id(&server(), &"x".repeat(60)).is_err());
        assert!(imported_id(&server(), "").is_err());
    }

    #[test]
    fn an_import_takes_names_in_order_and_refuses_the_later_of_a_collision() {
        let got = import(&server(), &[listed("a_b"), listed("echo"), listed("a.b")]);
        let ids: Vec<&str> = got.tools.iter().map(|t| t.tool.id.as_str()).collect();
        assert_eq!(ids, ["everything__a_b", "everything__echo"]);
        assert_eq!(got.tools[0].upstream_name, "a.b");
        assert_eq!(got.skipped.len(), 1);
        assert!(got.skipped[0].contains("\"a_b\""), "{}", got.skipped[0]);
    }

    #[test]
    fn an_imported_tool_keeps_its_schema_and_describes_itself_when_upstream_does_not() {
        let mut entry = listed("echo");
        entry.description = None;
        entry.input_schema =
            json!({"type": "object", "properties": {"message": {"type": "string"}}});
        let got = import(&server(), &[entry.clone()]);
        let tool = &got.tools[0].tool;
        assert_eq!(tool.parameters, entry.input_schema);
        assert_eq!(tool.category, "mcp:everything");
        assert_eq!(tool.description, "Tool echo of MCP server everything.");
        assert!(tool.problems().is_empty(), "{:?}", tool.problems());
    }

    #[test]
    fn schemas_too_big_too_deep_or_not_objects_are_left_out_saying_why() {
        let mut deep = json!({"type": "string"});
        for _ in 0..SCHEMA_MAX_DEPTH {
            deep = json!({"type": "object", "properties": {"x": deep}});
        }
        let mut big = listed("big");
        big.input_schema = json!({"type": "object", "description": "d".repeat(SCHEMA_MAX_BYTES)});
        let mut nested = listed("deep");
        nested.input_schema = deep;
        let mut flat = listed("flat");
        flat.input_schema = json!({"type": "string"});
        let got = import(&server(), &[big, nested, flat]);
        assert!(got.tools.is_empty());
        assert_eq!(got.skipped.len(), 3, "{:?}", got.skipped);
    }

    #[test]
    fn an_import_stops_at_the_tools_per_server_limit() {
        let many: Vec<UpstreamTool> = (0..MCP_TOOLS_PER_SERVER_MAX + 3)
            .map(|i| listed(&format!("t{i:04}")))
            .collect();
        let got = import(&server(), &many);
        assert_eq!(got.tools.len(), MCP_TOOLS_PER_SERVER_MAX);
        assert_eq!(got.skipped.len(), 1);
    }

    #[test]
    fn a_reimport_keeps_an_admins_description_requirements_and_effects() {
        let fresh = import(&server(), &[listed("echo")]).tools.remove(0);
        let mut edited = fresh.tool.clone();
        edited.description = "Say it back, politely.".to_owned();
        edited.requires = vec!["identity_verified".to_owned()];
        let merged = fresh.clone().over(Some(&edited), Some("Does echo"));
        assert_eq!(merged.tool.description, "Say it back, politely.");
        assert_eq!(merged.tool.requires, edited.requires);
        let untouched = fresh.clone().over(Some(&fresh.tool), Some("Does echo"));
        assert_eq!(untouched.tool.description, "Does echo");
    }

    #[test]
    fn a_call_result_carries_text_structured_content_and_the_error_flag() {
        let got = call_result(&["a".into(), "b".into()], Some(json!({"sum": 3})), false);
        assert_eq!(
            got,
            json!({"text": "a\nb", "isError": false, "structuredContent": {"sum": 3}})
        );
    }

    proptest! {
        #[test]
        fn a_parsed_name_always_makes_valid_ids(name in "[a-z0-9-]{0,30}", tool in "\\PC{0,70}") {
            if let Ok(server) = McpServerName::parse(&name) {
                prop_assert!(name.len() <= MCP_SERVER_NAME_MAX_CHARS && !name.starts_with('-'));
                if let Ok(id) = imported_id(&server, &tool) {
                    let prefix = format!("{name}__");
                    prop_assert!(id.as_str().starts_with(&prefix));
                    prop_assert_eq!(imported_id(&server, &tool).unwrap(), id);
                }
            }
        }

        #[test]
        fn a_parsed_url_is_http_without_spaces(raw in "\\PC{0,60}") {
            if let Ok(url) = UpstreamUrl::parse(&raw) {
                let lower = url.as_str().to_ascii_lowercase();
                prop_assert!(lower.starts_with("http://") || lower.starts_with("https://"));
                prop_assert!(!url.as_str().contains(' '));
            }
        }

        #[test]
        fn parsed_headers_never_hold_a_line_break(name in "[A-Za-z-]{1,10}", value in "\\PC{0,40}") {
            if let Ok(h) = UpstreamHeaders::parse(BTreeMap::from([(name, value)])) {
                prop_assert!(h.iter().all(|(_, v)| !v.contains(['\r', '\n'])));
            }
        }
    }
}
