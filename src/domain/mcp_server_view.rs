//! A connected MCP server as its admins see it: the view the REST API
//! answers, the `/mcp-servers` page shows and its event stream sends whole
//! on every change, defined once so the server and the page cannot
//! disagree on its shape; the times of its forwarded calls, kept to give
//! their median; and the add form's headers, typed as `Name: value` lines.

use crate::domain::error::FieldError;
use crate::domain::limits::MCP_CALL_TIMES_KEPT;
use crate::domain::mcp_server::McpServerStatus;
use serde::{Deserialize, Serialize};
use std::collections::{BTreeMap, VecDeque};

/// The name of the event `GET /api/mcp-servers/events` sends: every frame
/// is the whole [`ServerList`].
pub const SERVERS_EVENT: &str = "servers";

/// One imported tool as admins see it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ServerTool {
    /// Its catalogue id.
    pub id: String,
    /// Its name upstream.
    pub upstream_name: String,
    /// What the model is told (an admin's description, if they gave one).
    pub description: String,
    /// Whether the upstream still lists it.
    pub available: bool,
}

/// A connected server as admins see it: never its headers nor its
/// variables.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ServerView {
    /// Its id.
    pub id: i64,
    /// Its name.
    pub name: String,
    /// Its Streamable HTTP endpoint (absent for a stdio server).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub url: Option<String>,
    /// A stdio server's program and arguments, never its variables
    /// (absent for an HTTP one).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub command: Option<Vec<String>>,
    /// `connecting`, `connected` or `error`.
    pub status: McpServerStatus,
    /// Why the last attempt failed, or which tools were left out.
    pub last_error: Option<String>,
    /// Its imported tools.
    pub tools: Vec<ServerTool>,
    /// How many of its tools the upstream lists now.
    pub tool_count: usize,
    /// Calls forwarded to it since this Switchboard started.
    pub calls: u64,
    /// The median time of its last [`MCP_CALL_TIMES_KEPT`] calls, in
    /// milliseconds (to 0.1 ms); `None` before its first.
    pub median_call_ms: Option<f64>,
}

impl ServerView {
    /// Sets the call figures from `times` (none yet: zero calls, no
    /// median), and the tool count from its tools.
    pub fn with_health(mut self, times: Option<&CallTimes>) -> Self {
        self.tool_count = self.tools.iter().filter(|t| t.available).count();
        self.calls = times.map_or(0, CallTimes::count);
        self.median_call_ms = times.and_then(CallTimes::median_ms);
        self
    }
}

/// Puts `added` (the answer to an add) into `list`, in name order, unless
/// the list already has it: the event stream may have brought a newer
/// view of it (connected, its tools imported) before the answer, which
/// says only `connecting` and must not replace it. A frame read before the
/// add may still arrive without it; the add's own frame, always later,
/// brings it back.
pub fn with_added(list: &mut Vec<ServerView>, added: ServerView) {
    if list.iter().any(|s| s.id == added.id) {
        return;
    }
    let at = list.partition_point(|s| s.name < added.name);
    list.insert(at, added);
}

/// Takes server `id` out of `list` (after removing it): shown at once,
/// whether or not the event stream is up.
pub fn without(list: &mut Vec<ServerView>, id: i64) {
    list.retain(|s| s.id != id);
}

/// Every server, by name: `GET /api/mcp-servers`'s answer and each frame
/// of its event stream.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
pub struct ServerList {
    /// The servers.
    pub servers: Vec<ServerView>,
}

/// The durations of one server's forwarded calls: the last
/// [`MCP_CALL_TIMES_KEPT`] (older ones dropped, so memory stays bounded
/// however many calls it serves) and how many there were in all.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CallTimes {
    recent: VecDeque<u64>,
    kept: usize,
    count: u64,
}

impl Default for CallTimes {
    fn default() -> Self {
        Self::keeping(MCP_CALL_TIMES_KEPT)
    }
}

impl CallTimes {
    /// No calls yet, keeping the last `kept` (at least one).
    pub fn keeping(kept: usize) -> Self {
        let kept = kept.max(1);
        Self {
            recent: VecDeque::with_capacity(kept),
            kept,
            count: 0,
        }
    }

    /// Records one call that took `micros` microseconds.
    pub fn record(&mut self, micros: u64) {
        if self.recent.len() == self.kept {
            self.recent.pop_front();
        }
        self.recent.push_back(micros);
        self.count += 1;
    }

    /// How many calls were recorded in all.
    pub fn count(&self) -> u64 {
        self.count
    }

    /// The median of the kept calls, in milliseconds rounded to 0.1 (the
    /// mean of the middle two for an even number); `None` without calls.
    pub fn median_ms(&self) -> Option<f64> {
        let mut sorted: Vec<u64> = self.recent.iter().copied().collect();
        sorted.sort_unstable();
        let n = sorted.len();
        let micros = match n {
            0 => return None,
            _ if n % 2 == 1 => sorted[n / 2] as f64,
            _ => (sorted[n / 2 - 1] + sorted[n / 2]) as f64 / 2.0,
        };
        Some((micros / 100.0).round() / 10.0)
    }
}

/// The add form's headers: one `Name: value` per line, blank lines
/// skipped, each name once. The map goes to `UpstreamHeaders::parse`,
/// which applies the header rules; a line without a colon or with an
/// empty name is refused here, naming `headers` and the line's number.
pub fn header_lines(text: &str) -> Result<BTreeMap<String, String>, FieldError> {
    let mut headers = BTreeMap::new();
    for (i, line) in text.lines().enumerate() {
        if line.trim().is_empty() {
            continue;
        }
        let refuse = |rule: &str| FieldError::new("headers", format!("line {}: {rule}", i + 1));
        let (name, value) = line
            .split_once(':')
            .ok_or_else(|| refuse("must be `Name: value`"))?;
        let name = name.trim();
        if name.is_empty() {
            return Err(refuse("must start with a header name"));
        }
        if headers
            .insert(name.to_owned(), value.trim().to_owned())
            .is_some()
        {
            return Err(refuse("names a header given on an earlier line"));
        }
    }
    Ok(headers)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn server(id: i64, name: &str, status: McpServerStatus) -> ServerView {
        ServerView {
            id,
            name: name.to_owned(),
            url: Some("http://127.0.0.1:1/mcp".to_owned()),
            command: None,
            status,
            last_error: None,
            tools: Vec::new(),
            tool_count: 0,
            calls: 0,
            median_call_ms: None,
        }
    }

    #[test]
    fn an_added_server_goes_in_name_order() {
        let mut list = vec![
            server(1, "alpha", McpServerStatus::Connected),
            server(2, "gamma", McpServerStatus::Connected),
        ];
        with_added(&mut list, server(3, "beta", McpServerStatus::Connecting));
        let names: Vec<_> = list.iter().map(|s| s.name.as_str()).collect();
        assert_eq!(names, ["alpha", "beta", "gamma"]);
    }

    #[test]
    fn an_add_answer_never_replaces_what_the_stream_brought() {
        // The stream's frame (connected) arrived before the add's answer
        // (connecting): the answer is older and is dropped.
        let mut list = vec![server(7, "everything", McpServerStatus::Connected)];
        with_added(
            &mut list,
            server(7, "everything", McpServerStatus::Connecting),
        );
        assert_eq!(list.len(), 1);
        assert_eq!(list[0].status, McpServerStatus::Connected);
    }

    #[test]
    fn a_removed_server_leaves_the_list() {
        let mut list = vec![
            server(1, "alpha", McpServerStatus::Connected),
            server(2, "beta", McpServerStatus::Error),
        ];
        without(&mut list, 1);
        assert_eq!(list.iter().map(|s| s.id).collect::<Vec<_>>(), [2]);
        without(&mut list, 9);
        assert_eq!(list.len(), 1);
    }

    #[test]
    fn no_calls_have_no_median() {
        let times = CallTimes::default();
        assert_eq!(times.count(), 0);
        assert_eq!(times.median_ms(), None);
    }

    #[test]
    fn the_median_is_the_middle_call_or_the_mean_of_the_middle_two() {
        let mut times = CallTimes::default();
        for micros in [9_000, 1_000, 2_500] {
            times.record(micros);
        }
        assert_eq!(times.median_ms(), Some(2.5));
        times.record(3_000);
        assert_eq!(times.median_ms(), Some(2.8));
        assert_eq!(times.count(), 4);
    }

    #[test]
    fn the_median_is_rounded_to_a_tenth_of_a_millisecond() {
        let mut times = CallTimes::default();
        times.record(1_234);
        assert_eq!(times.median_ms(), Some(1.2));
        times.record(1_266);
        assert_eq!(times.median_ms(), Some(1.3));
    }

    #[test]
    fn only_the_last_calls_are_kept_but_all_are_counted() {
        let mut times = CallTimes::keeping(3);
        for micros in [50_000, 50_000, 50_000, 1_000, 2_000, 3_000] {
            times.record(micros);
        }
        assert_eq!(times.count(), 6);
        assert_eq!(times.median_ms(), Some(2.0));
    }

    #[test]
    fn the_default_keeps_the_named_limit() {
        let mut times = CallTimes::default();
        times.record(100_000);
        for _ in 0..MCP_CALL_TIMES_KEPT {
            times.record(1_000);
        }
        assert_eq!(times.median_ms(), Some(1.0));
        assert_eq!(times.count(), MCP_CALL_TIMES_KEPT as u64 + 1);
    }

    fn view(tools: &[bool]) -> ServerView {
        ServerView {
            id: 1,
            name: "everything".into(),
            url: Some("http://127.0.0.1:3001/mcp".into()),
            command: None,
            status: McpServerStatus::Connected,
            last_error: None,
            tools: tools
                .iter()
                .enumerate()
                .map(|(i, &available)| ServerTool {
                    id: format!("everything__t{i}"),
                    upstream_name: format!("t{i}"),
                    description: String::new(),
                    available,
                })
                .collect(),
            tool_count: 0,
            calls: 0,
            median_call_ms: None,
        }
    }

    #[test]
    fn the_tool_count_is_of_available_tools_and_calls_come_from_the_times() {
        let plain = view(&[true, false, true]).with_health(None);
        assert_eq!(
            (plain.tool_count, plain.calls, plain.median_call_ms),
            (2, 0, None)
        );
        let mut times = CallTimes::default();
        times.record(4_000);
        let busy = view(&[true]).with_health(Some(&times));
        assert_eq!((busy.calls, busy.median_call_ms), (1, Some(4.0)));
        let json = serde_json::to_value(&busy).unwrap();
        assert_eq!(json["medianCallMs"], 4.0);
        assert_eq!(json["toolCount"], 1);
        assert!(serde_json::to_value(&plain).unwrap()["medianCallMs"].is_null());
    }

    #[test]
    fn header_lines_are_name_colon_value_with_blank_lines_skipped() {
        let headers = header_lines("Authorization: Bearer a:b\n\n  X-Tenant :  acme \r\n").unwrap();
        assert_eq!(headers["Authorization"], "Bearer a:b");
        assert_eq!(headers["X-Tenant"], "acme");
        assert_eq!(headers.len(), 2);
        assert!(header_lines("").unwrap().is_empty());
    }

    #[test]
    fn a_header_line_without_a_name_or_colon_or_given_twice_is_refused_by_its_number() {
        for (text, rule) in [
            ("X-Key abc", "line 1: must be `Name: value`"),
            ("\n: abc", "line 2: must start with a header name"),
            (
                "X-Key: a\nX-Key: b",
                "line 2: names a header given on an earlier line",
            ),
        ] {
            let e = header_lines(text).unwrap_err();
            assert_eq!((e.field.as_str(), e.rule.as_str()), ("headers", rule));
        }
    }
}
