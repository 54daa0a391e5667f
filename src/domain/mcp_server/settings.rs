//! What an admin sets for a connected server, each parsed once at the edge:
//! its name (which makes valid tool ids), its URL, its headers.

use crate::domain::error::FieldError;
use crate::domain::limits::{
    excerpt, MCP_HEADERS_MAX_BYTES, MCP_HEADERS_MAX_COUNT, MCP_SERVER_NAME_MAX_CHARS,
    MCP_URL_MAX_BYTES,
};
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
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
