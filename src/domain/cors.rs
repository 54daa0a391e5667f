//! Cross-origin access to the token-authenticated API (CORS): which
//! origins may call it (`API_ORIGINS`), which paths answer them, and the
//! headers a preflight allows and a response exposes.
//!
//! A plugin living in another site's page (a CODAP plugin in CODAP's
//! iframe) calls the session and plugin API from that site's origin; the
//! browser lets it read the answers only if they say so. Only routes a
//! bearer token authenticates (a session's `st_…`/`pt_…` token, or none:
//! the join exchange) ever say so, and never with credentials: a page on
//! another origin can hold a token it was given, but must never ride on a
//! signed-in user's cookie. The server's middleware
//! (`server::http::cors`) applies these rules.

/// Methods a preflight allows.
pub const ALLOWED_METHODS: &str = "GET, POST, PATCH, PUT, DELETE, OPTIONS";

/// Request headers a preflight allows: the token, JSON bodies, an event
/// stream's resume point, MCP's session and version, conditional requests.
pub const ALLOWED_HEADERS: &str = "Authorization, Content-Type, Last-Event-ID, Mcp-Session-Id, \
                                   Mcp-Protocol-Version, If-Match, If-Modified-Since";

/// Response headers another origin's script may read.
pub const EXPOSED_HEADERS: &str =
    "Mcp-Session-Id, Retry-After, ETag, Last-Modified, API-Version, Session-ID, Server-Timing";

/// How long a browser may reuse a preflight's answer, seconds (sent as
/// `Access-Control-Max-Age`): an hour saves a round trip before each
/// call of a busy plugin; browsers cap it lower (Chromium: 2 hours), and
/// a changed `API_ORIGINS` reaches every browser within the hour.
pub const PREFLIGHT_MAX_AGE_SECS: u32 = 3600;

/// Which origins may call the token-authenticated API from a browser
/// (`API_ORIGINS`).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub enum ApiOrigins {
    /// Unset: no cross-origin access (the default).
    #[default]
    None,
    /// `*`: any origin (answered `Access-Control-Allow-Origin: *`).
    Any,
    /// These origins only (`https://codap.concord.org`), as browsers send
    /// them: lowercase, no trailing slash.
    List(Vec<String>),
}

/// How a response answers an origin that may call.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Allowed {
    /// `Access-Control-Allow-Origin: *`.
    Any,
    /// The request's own `Origin` echoed, with `Vary: Origin`.
    Echo,
}

impl ApiOrigins {
    /// Reads `API_ORIGINS`: `*` alone, or origins (`scheme://host[:port]`,
    /// http or https, no path) separated by commas or spaces; empty is
    /// [`ApiOrigins::None`]. `Err` carries the entry that is not one.
    pub fn parse(raw: &str) -> Result<Self, String> {
        let entries: Vec<&str> = raw
            .split([',', ' ', '\t'])
            .filter(|e| !e.is_empty())
            .collect();
        if entries.is_empty() {
            return Ok(ApiOrigins::None);
        }
        if entries.contains(&"*") {
            return match entries.as_slice() {
                ["*"] => Ok(ApiOrigins::Any),
                _ => Err("* together with other origins (use * alone)".into()),
            };
        }
        let origins = entries
            .iter()
            .map(|e| origin(e).ok_or_else(|| (*e).to_owned()))
            .collect::<Result<Vec<_>, _>>()?;
        Ok(ApiOrigins::List(origins))
    }

    /// Whether a request from `origin` may read the answer, and how to
    /// say so; `None` for an origin not listed (and always when unset).
    pub fn allows(&self, origin: &str) -> Option<Allowed> {
        match self {
            ApiOrigins::None => None,
            ApiOrigins::Any => Some(Allowed::Any),
            ApiOrigins::List(list) => list.iter().any(|o| o == origin).then_some(Allowed::Echo),
        }
    }

    /// Whether any cross-origin access is configured.
    pub fn is_set(&self) -> bool {
        *self != ApiOrigins::None
    }
}

/// `entry` as a browser sends it in `Origin` (lowercase, no trailing
/// slash), if it is an http(s) origin without a path.
fn origin(entry: &str) -> Option<String> {
    let entry = entry.trim_end_matches('/').to_ascii_lowercase();
    let host = entry
        .strip_prefix("https://")
        .or_else(|| entry.strip_prefix("http://"))?;
    let fine = !host.is_empty()
        && !host.starts_with(':')
        && host
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b".-:[]".contains(&b));
    fine.then_some(entry)
}

/// Whether the route at `path` may answer another origin: the session and
/// plugin API under `/api/sessions/{id}/…` (a session's own token
/// authenticates it, the event streams and the session MCP endpoint
/// included), the plugin API's `/api/plugins/…` (the join exchange), and
/// the client module under `/clients/`. Not the session list and its
/// stream (`/api/sessions`, `/api/sessions/events`: API keys and signed-in
/// users), not pages, server functions or anything else a cookie or an
/// API key authenticates.
pub fn serves_other_origins(path: &str) -> bool {
    if path.starts_with("/clients/") || path.starts_with("/api/plugins/") {
        return true;
    }
    let Some(rest) = path.strip_prefix("/api/sessions/") else {
        return false;
    };
    match rest.split_once('/') {
        Some((id, tail)) => !id.is_empty() && id != "events" && !tail.is_empty(),
        None => false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn unset_or_blank_means_no_cross_origin_access() {
        assert_eq!(ApiOrigins::parse(""), Ok(ApiOrigins::None));
        assert_eq!(ApiOrigins::parse(" , "), Ok(ApiOrigins::None));
        assert_eq!(ApiOrigins::None.allows("https://codap.concord.org"), None);
        assert!(!ApiOrigins::None.is_set());
    }

    #[test]
    fn a_list_is_read_as_browsers_send_origins() {
        let list = ApiOrigins::parse("https://CODAP.concord.org/, http://localhost:8080").unwrap();
        assert_eq!(
            list,
            ApiOrigins::List(vec![
                "https://codap.concord.org".into(),
                "http://localhost:8080".into()
            ])
        );
        assert_eq!(
            list.allows("https://codap.concord.org"),
            Some(Allowed::Echo)
        );
        assert_eq!(list.allows("http://localhost:8080"), Some(Allowed::Echo));
        assert_eq!(list.allows("http://localhost:8081"), None);
        assert_eq!(list.allows("https://codap.concord.org.evil.example"), None);
        assert_eq!(list.allows("null"), None);
    }

    #[test]
    fn a_star_alone_allows_any_origin() {
        let any = ApiOrigins::parse("*").unwrap();
        assert_eq!(any.allows("https://anywhere.example"), Some(Allowed::Any));
        assert!(ApiOrigins::parse("*, https://a.example").is_err());
    }

    #[test]
    fn entries_that_are_not_origins_are_refused_by_name() {
        for bad in [
            "codap.concord.org",
            "https://",
            "https://a.example/path",
            "ftp://a.example",
            "https://a.example?x",
            "null",
        ] {
            assert_eq!(
                ApiOrigins::parse(&format!("https://ok.example, {bad}")),
                Err(bad.to_owned()),
                "{bad}"
            );
        }
    }

    #[test]
    fn only_token_authenticated_paths_answer_other_origins() {
        for yes in [
            "/api/sessions/abc/tool-calls",
            "/api/sessions/abc/events",
            "/api/sessions/abc/plugin-events",
            "/api/sessions/abc/mcp",
            "/api/sessions/abc/join-codes",
            "/api/sessions/abc/tool-results/7",
            "/api/plugins/join",
            "/clients/switchboard.js",
            "/clients/switchboard.d.ts",
        ] {
            assert!(serves_other_origins(yes), "{yes}");
        }
        for no in [
            "/api/sessions",
            "/api/sessions/",
            "/api/sessions/events",
            "/api/sessions/abc",
            "/api/sessions/abc/",
            "/api/bindings",
            "/api/workflows/idv/start",
            "/rpc/login",
            "/sessions/abc",
            "/agents/manifests",
            "/mcp",
            "/",
        ] {
            assert!(!serves_other_origins(no), "{no}");
        }
    }
}
