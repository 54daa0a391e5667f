//! Join codes: the short, one-use code a person types into a plugin (or a
//! backend hands it) so the plugin can join a session without the session
//! token ever being pasted into it. `POST /api/plugins/join` exchanges a
//! code for a plugin token of its session.
//!
//! Here are the rules both halves share: which characters a code is made
//! of (no look-alikes, so it can be read aloud or off a projector), how
//! what a human typed becomes the code (any case, dashes and spaces
//! ignored), and when a code stops working. Drawing the characters (a
//! CSPRNG) and storing only a code's hash are the server's.

use crate::domain::limits::{JOIN_CODE_LENGTH, JOIN_CODE_LIFETIME_SECS};
use serde::{Deserialize, Serialize};

/// The characters of a code: digits and capital letters without the
/// look-alikes `0`/`O` and `1`/`I`/`L`: 31 of them.
pub const ALPHABET: &[u8] = b"23456789ABCDEFGHJKMNPQRSTUVWXYZ";

/// What `POST /api/sessions/{id}/join-codes` (and the session page's
/// button) answers: the code and when it stops working.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct IssuedJoinCode {
    /// The code, [`JOIN_CODE_LENGTH`] characters of [`ALPHABET`].
    pub code: String,
    /// When it expires, RFC 3339 UTC (`2026-11-18T11:16:40Z`).
    pub expires_at: String,
}

/// Why typed text cannot be a join code (before any lookup).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum NotACode {
    /// It has this many characters (dashes and spaces aside), not
    /// [`JOIN_CODE_LENGTH`]; counting stops just past the length.
    Length(usize),
    /// It holds a character no code has.
    Character(char),
}

impl std::fmt::Display for NotACode {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "must be {JOIN_CODE_LENGTH} characters of 2-9 and A-Z without I, L and O \
             (any case; dashes and spaces are ignored)"
        )?;
        match self {
            NotACode::Length(n) if *n > JOIN_CODE_LENGTH => write!(f, "; got more"),
            NotACode::Length(n) => write!(f, "; got {n}"),
            NotACode::Character(c) => write!(f, "; `{}` is not one of them", c.escape_debug()),
        }
    }
}

/// The code `typed` stands for: uppercase, without the dashes and spaces
/// a human may put in (`abcd-efgh` is `ABCDEFGH`); refused if it is not
/// [`JOIN_CODE_LENGTH`] characters of [`ALPHABET`].
pub fn normalise(typed: &str) -> Result<String, NotACode> {
    let mut code = String::with_capacity(JOIN_CODE_LENGTH);
    let mut count = 0;
    for c in typed.chars().filter(|c| *c != '-' && !c.is_whitespace()) {
        count += 1;
        if count > JOIN_CODE_LENGTH {
            return Err(NotACode::Length(count));
        }
        let upper = c.to_ascii_uppercase();
        if !upper.is_ascii() || !ALPHABET.contains(&(upper as u8)) {
            return Err(NotACode::Character(c));
        }
        code.push(upper);
    }
    if count == JOIN_CODE_LENGTH {
        Ok(code)
    } else {
        Err(NotACode::Length(count))
    }
}

/// A code from [`JOIN_CODE_LENGTH`] positions in [`ALPHABET`] (the server
/// draws them uniformly with its CSPRNG); a position past the alphabet
/// wraps around, so any draw gives a valid code.
pub fn from_positions(positions: impl IntoIterator<Item = usize>) -> String {
    positions
        .into_iter()
        .take(JOIN_CODE_LENGTH)
        .map(|i| char::from(ALPHABET[i % ALPHABET.len()]))
        .collect()
}

/// When a code made at `issued_at` (Unix seconds) expires.
pub fn expires_at(issued_at: i64) -> i64 {
    issued_at + JOIN_CODE_LIFETIME_SECS
}

/// Whether a code that expires at `expires_at` may still be exchanged at
/// `now`: unused, and strictly before its expiry (the store's query reads
/// the same rule: `used_at IS NULL AND expires_at > now`).
pub fn is_live(expires_at: i64, used: bool, now: i64) -> bool {
    !used && now < expires_at
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn the_alphabet_is_uppercase_without_look_alikes_or_repeats() {
        assert_eq!(ALPHABET.len(), 31);
        for look_alike in b"0O1IL" {
            assert!(!ALPHABET.contains(look_alike), "{}", *look_alike as char);
        }
        assert!(ALPHABET
            .iter()
            .all(|c| c.is_ascii_digit() || c.is_ascii_uppercase()));
        let mut sorted = ALPHABET.to_vec();
        sorted.dedup();
        assert_eq!(sorted.len(), ALPHABET.len());
    }

    #[test]
    fn a_typed_code_may_be_lowercase_with_dashes_and_spaces() {
        assert_eq!(normalise("abcd-efgh").as_deref(), Ok("ABCDEFGH"));
        assert_eq!(normalise(" 2345 6789 ").as_deref(), Ok("23456789"));
        assert_eq!(normalise("ZZZZ-ZZZZ\n").as_deref(), Ok("ZZZZZZZZ"));
    }

    #[test]
    fn a_code_of_the_wrong_length_is_refused_saying_so() {
        assert_eq!(normalise("ABC"), Err(NotACode::Length(3)));
        assert_eq!(normalise(""), Err(NotACode::Length(0)));
        assert!(matches!(
            normalise(&"A".repeat(10_000)),
            Err(NotACode::Length(9))
        ));
        assert!(NotACode::Length(3).to_string().ends_with("got 3"));
    }

    #[test]
    fn look_alikes_and_other_characters_are_refused_by_name() {
        assert_eq!(normalise("ABCDEFG0"), Err(NotACode::Character('0')));
        assert_eq!(normalise("oBCDEFGH"), Err(NotACode::Character('o')));
        assert_eq!(normalise("ABCDEFGé"), Err(NotACode::Character('é')));
        let said = NotACode::Character('\u{1b}').to_string();
        assert!(said.contains("`\\u{1b}` is not one of them"), "{said}");
    }

    #[test]
    fn a_code_lives_until_its_lifetime_ends_unless_used() {
        let made = 1_000;
        let end = expires_at(made);
        assert_eq!(end - made, JOIN_CODE_LIFETIME_SECS);
        assert!(is_live(end, false, made));
        assert!(is_live(end, false, end - 1));
        assert!(!is_live(end, false, end));
        assert!(!is_live(end, true, made));
    }

    proptest! {
        #[test]
        fn every_drawn_code_is_its_own_normal_form(
            positions in proptest::collection::vec(0usize..1000, JOIN_CODE_LENGTH),
            dashes in proptest::collection::vec(any::<bool>(), JOIN_CODE_LENGTH),
        ) {
            let code = from_positions(positions);
            prop_assert_eq!(code.len(), JOIN_CODE_LENGTH);
            prop_assert_eq!(normalise(&code), Ok(code.clone()));
            // As a human might type it: lowercase, a dash or a space here and there.
            let typed: String = code
                .chars()
                .zip(dashes)
                .map(|(c, dash)| format!("{}{}", c.to_ascii_lowercase(), if dash { "- " } else { "" }))
                .collect();
            prop_assert_eq!(normalise(&typed), Ok(code));
        }
    }
}
