//! The limits on input from outside that the edges enforce (request
//! bodies, call arguments and results, pages, streams, sign-in attempts),
//! in one place, so the code that enforces a limit, the message that names
//! it and the API reference agree.
//!
//! Not every named limit is here, and that is deliberate: a limit that is a
//! field rule of one domain type is declared beside that type, so the type
//! and its rule are read together — the `*_MAX*` constants of
//! `state_labels`, `effect`, `plugin`, `todos`, `user`, `account`, `workflow_chat`,
//! `workflow_def`, `workflow_state`, `start_trigger`, `assets`, `student` (a
//! pseudonymous code's length, the facts a lesson carries), `review_queue`
//! (the due items a review lesson offers), `vibe::rules`,
//! `vibe::manifest` and the `lesson` modules, each with a `///` doc saying
//! why (find them all with `grep -rn "pub const .*MAX" src/`). The server's
//! own operational bounds (the model client's timeout and reply size in
//! `server::workflows::llm`, the rate windows' table in `server::platform::windows`, the
//! history pages of `server::http::rest::workflows` and `server::lessons::runs`)
//! stay with the code they bound.
//!
//! Switchboard decides what an agent may do; a caller that can make it store,
//! echo or replay megabytes can starve every other session. Each limit below
//! is enforced before anything is recorded, and each violation names the
//! field and the limit (413 for a whole body, 422 for a field in it).

/// Longest tool name a call may give (the catalogue's id rule: 1–64 ASCII
/// letters, digits, `_` or `-`). Checked before any lookup.
pub const TOOL_NAME_MAX_CHARS: usize = 64;

/// Largest tool-call `arguments`, serialised as JSON.
pub const TOOL_ARGUMENTS_MAX_BYTES: usize = 64 * 1024;

/// Largest tool result a backend may report, serialised as JSON.
pub const TOOL_RESULT_MAX_BYTES: usize = 64 * 1024;

/// Largest request body on the JSON API (`/api/…`), except bindings.
pub const API_BODY_MAX_BYTES: usize = 1024 * 1024;

/// Largest body of a server-function call (`/rpc/…`, the pages' own
/// calls): axum's default limit, which the calls were already read under,
/// named so the 413 can say it.
pub const RPC_BODY_MAX_BYTES: usize = 2 * 1024 * 1024;

/// Largest `tool-bindings.json` accepted by `PUT /api/bindings`: a 100-tool
/// × 30-workflow matrix is about 60 KB, so this leaves two orders of
/// magnitude of room.
pub const BINDINGS_BODY_MAX_BYTES: usize = 4 * 1024 * 1024;

/// Largest JSON Schema an admin may give a catalogue tool, serialised.
pub const TOOL_SCHEMA_MAX_BYTES: usize = 64 * 1024;

/// Most bytes of tool text one session's plugin set may hold: its tools'
/// names, descriptions, schemas and bookkeeping as metadata and snapshots
/// carry them (`domain::plugin::tools_bytes`). Each registration or patch
/// fits in a body, but without a budget on the set a few of them piled
/// megabytes into the session that every metadata answer, snapshot and
/// store write then carried; a change that would take the set past it is
/// refused whole (422 naming `tools`).
pub const PLUGIN_SET_MAX_BYTES: usize = 1024 * 1024;

/// Most characters of caller input quoted back in a refusal reason or error.
pub const ECHO_MAX_CHARS: usize = 80;

/// Most characters of a field's name in an error or a list of problems.
/// A field is often named by caller input (an unknown JSON key, a file in
/// an archive, a header's name) inside a path of our own
/// (`VIBES/{id}/manifest.json: agents[0]`), so it gets a longer bound than
/// a quote, and the same cut.
pub const FIELD_ECHO_MAX_CHARS: usize = 200;

/// Most calls a watch stream's snapshot carries (older ones are paged with
/// `GET /api/sessions/{id}/calls?before=…`).
pub const SNAPSHOT_CALLS: usize = 50;

/// Most calls one page of `GET /api/sessions/{id}/calls` returns.
pub const CALLS_PAGE_MAX: usize = 100;

/// Most versions one page of `GET /api/catalogue/history` lists (older ones
/// are paged with `?before=`): each entry is one line, but the history only
/// grows, so an answer must not grow with it.
pub const CATALOGUE_HISTORY_PAGE_MAX: i64 = 100;

/// Largest `arguments` or `result` a snapshot's call carries; a larger one
/// is cut to an excerpt and the call is flagged `truncated`.
pub const SNAPSHOT_VALUE_MAX_BYTES: usize = 2 * 1024;

/// Most checks a session may hold that nothing declares (no catalogue
/// tool's effects or requirements, no label in the bindings, not one of
/// the checks every session lists): a backend's own checks. Declared checks
/// are bounded by the catalogue; without this cap, `PATCH …/state` adding
/// new names grew a session's state, every snapshot and the session list
/// without end. Names are keys of at most 64 characters
/// (`effect::label_problem`).
pub const SESSION_OWN_CHECKS_MAX: usize = 64;

/// Most bytes of events a session keeps for `Last-Event-ID` replay, beside
/// the count (`hub::REPLAY`): one large frame evicts older ones, so a
/// session's ring never holds more than this whatever its events weigh.
pub const REPLAY_MAX_BYTES: usize = 4 * 1024 * 1024;

/// Default of `SESSION_WRITES_PER_MINUTE`: tool calls, reported results,
/// state changes and turns one session may store in any 60 s. A voice
/// conversation makes a few a minute; a script filling the database makes
/// thousands.
pub const SESSION_WRITES_PER_MINUTE: usize = 600;

/// Default of `SESSION_CALLS_MAX`: tool calls one session may record in
/// all (refused ones included); past it the session answers 429 and its
/// backend opens a new one.
pub const SESSION_CALLS_MAX: usize = 10_000;

/// Default of `SESSION_STORED_MAX_BYTES`: bytes of call arguments and
/// results one session may store in all (each call is at most
/// [`TOOL_ARGUMENTS_MAX_BYTES`] + [`TOOL_RESULT_MAX_BYTES`]).
pub const SESSION_STORED_MAX_BYTES: usize = 32 * 1024 * 1024;

/// Playground sessions one signed-in user may open in any hour: each is an
/// agent session with a plugin, opened without an API key.
pub const PLAYGROUND_SESSIONS_PER_HOUR: usize = 30;

/// Failed identity checks (`perform_idv_check`) for one account, across
/// all sessions, in any hour. A session locks itself after
/// `MAX_FAILED_IDENTITY_CHECKS`; without a count per account a caller
/// guessing a customer's date of birth would open session after session.
pub const IDV_FAILURES_PER_ACCOUNT_PER_HOUR: usize = 10;

/// A short, escaped excerpt of caller input for an error message: at most
/// [`ECHO_MAX_CHARS`] characters, control characters escaped (`\n`,
/// `\u{1b}`), `…` when cut. Never echoes more than a line's worth, whatever
/// was sent.
pub fn excerpt(input: &str) -> String {
    excerpt_of(input, ECHO_MAX_CHARS)
}

/// A field's name as an error may carry it: [`excerpt`] cut at
/// [`FIELD_ECHO_MAX_CHARS`].
pub fn field_excerpt(field: &str) -> String {
    excerpt_of(field, FIELD_ECHO_MAX_CHARS)
}

/// What a one-line name or label may not hold, in words: see
/// [`unprintable`].
pub const PRINTABLE_RULE: &str = "must not contain control characters or text-direction overrides";

/// The first character of `text` that a name or label shown in lists may
/// not hold: a control character (a NUL, a bell, a line break: printed as
/// a box, or not at all) or a bidirectional override or isolate
/// (U+202A–U+202E, U+2066–U+2069), which makes the text after it read in
/// another order, so one name can pass for another. Account and student
/// names have refused control characters from the start; agents, tools,
/// labels, steps and lessons are named under the same rule.
pub fn unprintable(text: &str) -> Option<char> {
    text.chars().find(|&c| {
        c.is_control()
            || ('\u{202A}'..='\u{202E}').contains(&c)
            || ('\u{2066}'..='\u{2069}').contains(&c)
    })
}

/// Why a JSON body (or a JSON file in an archive) holding U+0000 is
/// refused, at every door alike.
pub const NUL_RULE: &str = "must not contain U+0000 (NUL): no text Switchboard stores may hold it";

/// Where a JSON body holds U+0000 in a string or a key (`body`,
/// `availableTools[1].description`, the path serde would name), if it does.
/// JSON can carry it only escaped, so a body without `\u0000` is not read
/// twice; PostgreSQL's text cannot store it, and no prompt, name or
/// argument needs it.
pub fn nul_at(bytes: &[u8]) -> Option<String> {
    bytes.windows(6).position(|w| w == b"\\u0000")?;
    let value: serde_json::Value = serde_json::from_slice(bytes).ok()?;
    fn walk(value: &serde_json::Value, path: String) -> Option<String> {
        let child = |at: &str, key: &str| {
            if at == "body" {
                key.to_owned()
            } else {
                format!("{at}.{key}")
            }
        };
        match value {
            serde_json::Value::String(s) if s.contains('\0') => Some(path),
            serde_json::Value::Array(items) => items
                .iter()
                .enumerate()
                .find_map(|(i, v)| walk(v, format!("{path}[{i}]"))),
            serde_json::Value::Object(map) => map.iter().find_map(|(k, v)| {
                if k.contains('\0') {
                    Some(child(&path, &k.escape_debug().to_string()))
                } else {
                    walk(v, child(&path, k))
                }
            }),
            _ => None,
        }
    }
    walk(&value, "body".into())
}

/// [`excerpt`] with `max` characters kept.
fn excerpt_of(input: &str, max: usize) -> String {
    let mut out = String::new();
    let mut chars = input.chars();
    for c in chars.by_ref().take(max) {
        if c.is_control() {
            out.extend(c.escape_debug());
        } else {
            out.push(c);
        }
    }
    if chars.next().is_some() {
        out.push('…');
    }
    out
}

/// `n` bytes in words, for messages ("64 KiB", "1 MiB", "500 bytes").
pub fn bytes_in_words(n: usize) -> String {
    const KIB: usize = 1024;
    const MIB: usize = 1024 * 1024;
    if n >= MIB && n.is_multiple_of(MIB) {
        format!("{} MiB", n / MIB)
    } else if n >= KIB && n.is_multiple_of(KIB) {
        format!("{} KiB", n / KIB)
    } else {
        format!("{n} bytes")
    }
}

/// Sign-in attempts one account may have from one client address within
/// [`LOGIN_PAIR_WINDOW_SECS`]. An attempt counts when it starts, before the
/// password is hashed, so a burst of concurrent guesses gets this many
/// checks and no more; a right password forgives the pair.
pub const LOGIN_PAIR_ATTEMPTS: usize = 5;

/// The window of [`LOGIN_PAIR_ATTEMPTS`]: 15 minutes.
pub const LOGIN_PAIR_WINDOW_SECS: i64 = 15 * 60;

/// Sign-in attempts one account may have from all addresses together
/// within [`LOGIN_ACCOUNT_WINDOW_SECS`]: slows a guesser that spreads over
/// many addresses. More than one address can make in that window under
/// [`LOGIN_PAIR_ATTEMPTS`] (20 an hour), so a stranger at one address
/// cannot keep the account locked for its owner at another.
pub const LOGIN_ACCOUNT_ATTEMPTS: usize = 30;

/// The window of [`LOGIN_ACCOUNT_ATTEMPTS`]: an hour.
pub const LOGIN_ACCOUNT_WINDOW_SECS: i64 = 60 * 60;

/// Sign-in attempts one client address may make, whatever the accounts,
/// within [`LOGIN_ADDRESS_WINDOW_SECS`]: one address guessing across many
/// accounts is slowed too, with room for a school behind one address.
pub const LOGIN_ADDRESS_ATTEMPTS: usize = 30;

/// The window of [`LOGIN_ADDRESS_ATTEMPTS`]: 15 minutes.
pub const LOGIN_ADDRESS_WINDOW_SECS: i64 = 15 * 60;

// One address at the pair limit must stay under the account limit.
const _: () = assert!(
    LOGIN_PAIR_ATTEMPTS * ((LOGIN_ACCOUNT_WINDOW_SECS / LOGIN_PAIR_WINDOW_SECS) as usize)
        < LOGIN_ACCOUNT_ATTEMPTS
);

/// Open MCP sessions one credential (a session token, an API key, a
/// signed-in admin) may hold on an MCP endpoint: each is a task, buffers
/// and a tool-change listener, so `initialize` in a loop must not pile
/// them up. Past it, 429 with `Retry-After`.
pub const MCP_SESSIONS_PER_CREDENTIAL: usize = 20;

/// How long an MCP session may be idle (no request, no notification)
/// before it is closed and its slot freed; a client re-initialises.
pub const MCP_SESSION_IDLE_SECS: u64 = 5 * 60;

/// Bytes a client may send on an event-stream connection after its request
/// head (an `EventSource` sends none): past it the connection is closed,
/// so a client that keeps writing cannot keep the server reading.
pub const STREAM_CLIENT_BYTES_MAX: usize = 4 * 1024;

/// Longest id (tool, workflow, agent, vibe), in bytes: the limit Gemini,
/// OpenAI and Anthropic all enforce on function names, used for every id
/// so one rule reads the same (`domain::ids`).
pub const ID_MAX_BYTES: usize = 64;

/// Longest student name or id a tutor session may carry (it is shown on
/// every row of the lesson's runs).
pub const STUDENT_MAX_CHARS: usize = 80;

/// Sessions one workflow's start triggers (hooks, chat messages, calls,
/// schedules, manual starts) may open in any 60 s unless
/// `WORKFLOW_STARTS_PER_MINUTE` says otherwise; past it a start is
/// refused (429 with `Retry-After`) and nothing is opened.
pub const WORKFLOW_STARTS_PER_MINUTE: usize = 120;

/// Open trials one user may have: opening another ends their oldest, so
/// trying a configuration again and again never piles up live sessions.
pub const OPEN_TRIALS_PER_USER: usize = 5;

/// Largest agent or vibe body: a 20,000-character template with room to
/// spare.
pub const MANIFEST_BODY_MAX_BYTES: usize = 128 * 1024;

/// Largest archive an import may send.
pub const MANIFEST_ARCHIVE_MAX_BYTES: usize = 4 * 1024 * 1024;

/// Characters in a join code (`domain::join_code`): 8 drawn from 31 is
/// about 40 bits, far out of reach of guessing in a code's lifetime at
/// [`JOIN_GUESSES_PER_ADDRESS`], and still short enough to read off a
/// projector and type into a plugin.
pub const JOIN_CODE_LENGTH: usize = 8;

/// How long a join code may be exchanged after it is made: time enough to
/// type it into a plugin; one left on a screen is soon dead.
pub const JOIN_CODE_LIFETIME_SECS: i64 = 10 * 60;

/// Live join codes (neither used nor expired) one session may have at
/// once: a class joining one session needs a few; a backend making codes
/// in a loop would otherwise fill the table and widen the space a guesser
/// hits. Past it, 429 with `Retry-After` (until the oldest expires).
pub const JOIN_CODES_LIVE_PER_SESSION: usize = 20;

/// Largest body of `POST /api/plugins/join`: `{"code": "…"}` needs a few
/// dozen bytes; anything bigger is not a code.
pub const JOIN_BODY_MAX_BYTES: usize = 1024;

/// Wrong join codes (unknown, used, expired) one client address may send
/// within [`JOIN_GUESS_WINDOW_SECS`] before `POST /api/plugins/join`
/// answers 429 to it; each also counts against the address's sign-in limit
/// ([`LOGIN_ADDRESS_ATTEMPTS`]), like a wrong password. Room for a class
/// behind one address mistyping; nowhere near enough to guess a code.
pub const JOIN_GUESSES_PER_ADDRESS: usize = 20;

/// The window of [`JOIN_GUESSES_PER_ADDRESS`]: 15 minutes.
pub const JOIN_GUESS_WINDOW_SECS: i64 = 15 * 60;
/// How far an Ultravox webhook's `X-Ultravox-Webhook-Timestamp` may be
/// from now, either way, in seconds: Ultravox advises "within the last
/// minute", so a recorded webhook cannot be replayed later.
pub const ULTRAVOX_WEBHOOK_MAX_AGE_SECONDS: i64 = 60;

/// Largest Ultravox webhook body: the event and the call object (its
/// prompt, tools and summary), far under this.
pub const ULTRAVOX_WEBHOOK_BODY_MAX_BYTES: usize = 512 * 1024;

/// Longest name of a connected MCP server (`domain::mcp_server`): its
/// tools' ids are `<server>__<tool>`, and a tool id has 64 characters at
/// most, so the server's name leaves 38 for the upstream tool's.
pub const MCP_SERVER_NAME_MAX_CHARS: usize = 24;

/// Longest URL of a connected MCP server, in bytes: any real endpoint fits;
/// a URL is shown on every status answer.
pub const MCP_URL_MAX_BYTES: usize = 2048;

/// Most headers an admin may give a connected MCP server (a bearer token,
/// a key, a tenant): each is sent with every request upstream.
pub const MCP_HEADERS_MAX_COUNT: usize = 16;

/// Most bytes of header names and values a connected MCP server may have:
/// they are sent with every request upstream, and servers refuse request
/// heads much over 8 KiB.
pub const MCP_HEADERS_MAX_BYTES: usize = 8 * 1024;

/// Most tools imported from one connected MCP server: each becomes a
/// catalogue tool (a matrix column, a compiled schema in the rules), so an
/// upstream listing thousands must not flood the catalogue. Past it the
/// rest (by name) are left out and the server's `lastError` says so.
pub const MCP_TOOLS_PER_SERVER_MAX: usize = 200;

/// Most connected MCP servers: each keeps a connection and a task.
pub const MCP_SERVERS_MAX: usize = 50;

/// How long a forwarded call of an upstream tool may take, in seconds,
/// before the agent is told it timed out: under the 30 s request timeout,
/// so the answer is a readable refusal rather than a bare 408.
pub const MCP_CALL_DEADLINE_SECS: u64 = 20;

/// How long connecting to an upstream server and listing its tools may
/// take, in seconds, before the attempt counts as failed.
pub const MCP_CONNECT_DEADLINE_SECS: u64 = 10;

/// Longest wait between reconnection attempts to an upstream server, in
/// seconds: the back-off doubles from one second up to this.
pub const MCP_RECONNECT_MAX_SECS: u64 = 60;

/// Most parts of a stdio MCP server's `command` (the program and its
/// arguments): a launcher line (`npx -y @scope/server --flag value`) needs
/// a handful; the command is shown on every status answer.
pub const MCP_COMMAND_PARTS_MAX: usize = 64;

/// Longest part of a stdio MCP server's `command`, in bytes: a file path
/// fits (Linux's `PATH_MAX` is 4096).
pub const MCP_COMMAND_PART_MAX_BYTES: usize = 4096;

/// Most variables an admin may give a stdio MCP server's process (`env`):
/// a token or two and some options.
pub const MCP_ENV_MAX_COUNT: usize = 32;

/// Most bytes of a stdio MCP server's `env` names and values: they are
/// stored and handed to the process at each start.
pub const MCP_ENV_MAX_BYTES: usize = 16 * 1024;

/// Last lines of a stdio MCP server's stderr kept to say, in its
/// `lastError`, why its process ended: a stack trace's head fits.
pub const MCP_STDERR_LINES_KEPT: usize = 10;

/// Longest stderr line kept, in characters (the rest is cut): a process
/// writing megabytes without a newline holds no more memory than this.
pub const MCP_STDERR_LINE_MAX_CHARS: usize = 200;

/// How many of a connected MCP server's latest forwarded calls are kept
/// to give their median time on its admin page: enough for a steady
/// median, few enough that a server that has served millions of calls
/// holds a fixed, small buffer (the count of all calls is kept apart).
pub const MCP_CALL_TIMES_KEPT: usize = 200;

/// Shortest gap between two frames of `GET /api/mcp-servers/events`, in
/// milliseconds: a burst of forwarded calls changes the figures on every
/// call, and the watching page needs a few updates a second, not one per
/// call (changes in between are sent together in the next frame).
pub const MCP_SERVERS_FRAME_GAP_MS: u64 = 250;

/// Sessions one retention batch purges in one write transaction: each
/// takes its calls, outcomes and plugin rows with it (up to
/// `SESSION_CALLS_MAX` calls apiece), so a sweep of a year's sessions is
/// many short transactions, with other writers let in between, instead of
/// one that locks the database for minutes.
pub const RETENTION_BATCH_SESSIONS: usize = 50;

/// Rows one read of a student's export fetches (calls of a session,
/// review items): the export is streamed session by session and page by
/// page, so a student with years of sessions costs the server one page of
/// memory at a time, never the whole file.
pub const STUDENT_EXPORT_PAGE_ROWS: usize = 500;
/// How long a password-reset link works (it also works only once, and a
/// newer link for the same account replaces it): a day, long enough for an
/// admin to pass it on and a teacher to open it, short enough that a link
/// left in a mailbox or a chat is soon worth nothing.
pub const PASSWORD_RESET_LIFETIME_SECS: i64 = 24 * 60 * 60;

/// How long sending one reset link by mail (`SMTP_URL`) may take, connect
/// included, before the admin is shown the link instead: well under the
/// 30 s request timeout, so the page answers either way.
pub const SMTP_DEADLINE_SECS: u64 = 10;

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn names_may_not_hold_control_characters_or_direction_overrides() {
        assert_eq!(unprintable("Identity verified · Café"), None);
        for bad in [
            "Raj\u{0}esh",
            "ring\u{7}",
            "two\nlines",
            "evil\u{202E}txt",
            "iso\u{2067}late",
        ] {
            assert!(unprintable(bad).is_some(), "{bad:?}");
        }
    }

    #[test]
    fn a_short_input_is_quoted_whole_with_control_characters_escaped() {
        assert_eq!(excerpt("get_time"), "get_time");
        assert_eq!(excerpt("a\"b\nc\u{1b}"), "a\"b\\nc\\u{1b}");
    }

    #[test]
    fn a_long_input_is_cut_with_an_ellipsis() {
        let long = "x".repeat(900_000);
        let quoted = excerpt(&long);
        assert_eq!(quoted.chars().count(), ECHO_MAX_CHARS + 1);
        assert!(quoted.ends_with('…'));
    }

    #[test]
    fn a_field_keeps_a_path_of_ours_and_cuts_a_flood() {
        let path = format!("VIBES/{}/manifest.json: agents[0]", "v".repeat(64));
        assert_eq!(field_excerpt(&path), path);
        let flood = field_excerpt(&"k".repeat(100_000));
        assert_eq!(flood.chars().count(), FIELD_ECHO_MAX_CHARS + 1);
        assert!(flood.ends_with('…'));
    }

    #[test]
    fn limits_read_as_words() {
        assert_eq!(bytes_in_words(TOOL_ARGUMENTS_MAX_BYTES), "64 KiB");
        assert_eq!(bytes_in_words(API_BODY_MAX_BYTES), "1 MiB");
        assert_eq!(bytes_in_words(PLUGIN_SET_MAX_BYTES), "1 MiB");
        assert_eq!(bytes_in_words(500), "500 bytes");
    }

    proptest! {
        #[test]
        fn an_excerpt_is_never_longer_than_its_bound(input in ".{0,400}") {
            // Each character escapes to at most 10 (`\u{10ffff}`).
            prop_assert!(excerpt(&input).chars().count() <= ECHO_MAX_CHARS * 10 + 1);
            prop_assert!(!excerpt(&input).contains('\n'));
        }
    }
}
