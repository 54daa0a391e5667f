//! Every size limit on input from outside, in one place, so the code that
//! enforces a limit, the message that names it and the API reference agree.
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

/// Largest `tool-bindings.json` accepted by `PUT /api/bindings`: a 100-tool
/// × 30-workflow matrix is about 60 KB, so this leaves two orders of
/// magnitude of room.
pub const BINDINGS_BODY_MAX_BYTES: usize = 4 * 1024 * 1024;

/// Largest JSON Schema an admin may give a catalogue tool, serialised.
pub const TOOL_SCHEMA_MAX_BYTES: usize = 64 * 1024;

/// Most characters of caller input quoted back in a refusal reason or error.
pub const ECHO_MAX_CHARS: usize = 80;

/// Most calls a watch stream's snapshot carries (older ones are paged with
/// `GET /api/sessions/{id}/calls?before=…`).
pub const SNAPSHOT_CALLS: usize = 50;

/// Most calls one page of `GET /api/sessions/{id}/calls` returns.
pub const CALLS_PAGE_MAX: usize = 100;

/// Largest `arguments` or `result` a snapshot's call carries; a larger one
/// is cut to an excerpt and the call is flagged `truncated`.
pub const SNAPSHOT_VALUE_MAX_BYTES: usize = 2 * 1024;

/// A short, escaped excerpt of caller input for an error message: at most
/// [`ECHO_MAX_CHARS`] characters, control characters escaped (`\n`,
/// `\u{1b}`), `…` when cut. Never echoes more than a line's worth, whatever
/// was sent.
pub fn excerpt(input: &str) -> String {
    let mut out = String::new();
    let mut chars = input.chars();
    for c in chars.by_ref().take(ECHO_MAX_CHARS) {
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

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

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
    fn limits_read_as_words() {
        assert_eq!(bytes_in_words(TOOL_ARGUMENTS_MAX_BYTES), "64 KiB");
        assert_eq!(bytes_in_words(API_BODY_MAX_BYTES), "1 MiB");
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
