//! The prompt optimiser: removes whitespace and structure that cost tokens
//! without telling the model anything.
//!
//! The normal mode only touches whitespace and empty headers, so it can run
//! on every prompt; the aggressive mode also rewrites wording and is opt-in.

use crate::domain::lesson::normalise::{header_level, normalise, normalise_owned};
use serde::{Deserialize, Serialize};

/// How hard to squeeze.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum OptimiseMode {
    /// Whitespace and empty headers only; never changes wording.
    #[default]
    Normal,
    /// Normal, plus flattened headers, `•` bullets and shorter phrasings.
    Aggressive,
}

/// The quick token estimate: one token per four characters, rounded up.
/// Good to within ~20% for English prose; the server also has a real count.
pub fn estimate_tokens(text: &str) -> usize {
    char_count(text).div_ceil(4)
}

/// `text.chars().count()`, a third faster on a prompt: the bytes that do not
/// continue a character, summed in a `u8` per 255-byte chunk, which the
/// compiler adds up sixteen at a time. The prompt builder counts every
/// prompt it builds.
pub fn char_count(text: &str) -> usize {
    text.as_bytes()
        .chunks(255)
        .map(|chunk| {
            let starts = chunk
                .iter()
                .fold(0u8, |n, &b| n + u8::from((b as i8) >= -64));
            usize::from(starts)
        })
        .sum()
}

/// `text.trim()`, without decoding a character when both ends are
/// visible ASCII (the usual case, so the prompt builder, which trims
/// every text it copies in, seldom pays for the general trim).
pub fn trimmed(text: &str) -> &str {
    match (text.as_bytes().first(), text.as_bytes().last()) {
        (Some(first), Some(last)) if first.is_ascii_graphic() && last.is_ascii_graphic() => text,
        _ => text.trim(),
    }
}

/// What optimising saved.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct OptimisationStats {
    /// Characters before.
    pub original_chars: usize,
    /// Characters after.
    pub optimised_chars: usize,
    /// Estimated tokens before.
    pub original_tokens: usize,
    /// Estimated tokens after.
    pub optimised_tokens: usize,
    /// Estimated tokens saved.
    pub saved_tokens: usize,
    /// Saved tokens as a percentage of the original, one decimal.
    pub saved_percent: f64,
}

impl OptimisationStats {
    /// Compares an original text with its optimised form.
    pub fn compare(original: &str, optimised: &str) -> Self {
        Self::from_chars(char_count(original), char_count(optimised))
    }

    /// The same from the two texts' character counts, for a caller that
    /// has counted them already (each count is a pass over the text).
    pub fn from_chars(original_chars: usize, optimised_chars: usize) -> Self {
        let original_tokens = original_chars.div_ceil(4);
        let optimised_tokens = optimised_chars.div_ceil(4);
        let saved_tokens = original_tokens.saturating_sub(optimised_tokens);
        let saved_percent = if original_tokens == 0 {
            0.0
        } else {
            (saved_tokens as f64 * 1000.0 / original_tokens as f64).round() / 10.0
        };
        Self {
            original_chars,
            optimised_chars,
            original_tokens,
            optimised_tokens,
            saved_tokens,
            saved_percent,
        }
    }
}

/// Optimises `text` in `mode`. Normal mode (`normalise`): unify line
/// endings, strip trailing spaces, collapse inner runs of spaces (keeping
/// indentation), drop headers with nothing under them, collapse blank runs
/// to one blank line, trim.
pub fn optimise(text: &str, mode: OptimiseMode) -> String {
    let normal = normalise(text);
    match mode {
        OptimiseMode::Normal => normal,
        OptimiseMode::Aggressive => normalise(&squeeze(&normal)),
    }
}

/// [`optimise`] for a text the caller owns and no longer needs: a text
/// normal mode leaves as it is comes back without a copy.
pub fn optimise_owned(text: String, mode: OptimiseMode) -> String {
    let normal = normalise_owned(text);
    match mode {
        OptimiseMode::Normal => normal,
        OptimiseMode::Aggressive => normalise(&squeeze(&normal)),
    }
}

/// Phrasings the aggressive mode shortens, matched as whole words.
const SHORTER: [(&str, &str); 14] = [
    ("Do NOT", "Don't"),
    ("do NOT", "don't"),
    ("DO NOT", "DON'T"),
    ("Do not", "Don't"),
    ("do not", "don't"),
    ("Should not", "Shouldn't"),
    ("should not", "shouldn't"),
    ("Will not", "Won't"),
    ("will not", "won't"),
    ("For example", "E.g."),
    ("for example", "e.g."),
    ("Such as", "Like"),
    ("such as", "like"),
    ("In order to", "To"),
];

/// Aggressive extras on already-normalised text: headers become `Title:`,
/// `-`/`*` bullets become `•`, and long phrasings get shorter.
fn squeeze(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for (i, line) in text.split('\n').enumerate() {
        if i > 0 {
            out.push('\n');
        }
        let body = line.trim_start();
        let indent = &line[..line.len() - body.len()];
        let line = if let Some(level) = header_level(line) {
            let title = line[level..].trim();
            if title.is_empty() || title.ends_with(':') {
                title.to_owned()
            } else {
                format!("{title}:")
            }
        } else if let Some(rest) = body.strip_prefix("- ").or_else(|| body.strip_prefix("* ")) {
            format!("{indent}• {rest}")
        } else {
            line.to_owned()
        };
        let mut line = line;
        for (long, short) in SHORTER {
            line = replace_words(&line, long, short);
        }
        out.push_str(&line);
    }
    out
}

/// Replaces `from` with `to` where it stands as whole words.
fn replace_words(text: &str, from: &str, to: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(pos) = rest.find(from) {
        let before = rest[..pos].chars().next_back();
        let after = rest[pos + from.len()..].chars().next();
        let is_word = |c: Option<char>| c.is_some_and(|c| c.is_alphanumeric() || c == '\'');
        out.push_str(&rest[..pos]);
        if is_word(before) || is_word(after) {
            out.push_str(from);
        } else {
            out.push_str(to);
        }
        rest = &rest[pos + from.len()..];
    }
    out.push_str(rest);
    out
}

/// The optimisation a preview choice stands for: `off` shows the prompt as
/// written (`None`), `aggressive` squeezes hardest, anything else is normal.
pub fn optimise_choice(raw: &str) -> Option<OptimiseMode> {
    match raw {
        "off" => None,
        "aggressive" => Some(OptimiseMode::Aggressive),
        _ => Some(OptimiseMode::Normal),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn normal(text: &str) -> String {
        optimise(text, OptimiseMode::Normal)
    }

    #[test]
    fn line_endings_are_unified() {
        assert_eq!(normal("a\r\nb\rc"), "a\nb\nc");
    }

    #[test]
    fn trailing_spaces_are_stripped() {
        assert_eq!(normal("a  \t\nb "), "a\nb");
    }

    #[test]
    fn three_or_more_newlines_become_one_blank_line() {
        assert_eq!(normal("a\n\n\n\nb\n\nc"), "a\n\nb\n\nc");
    }

    #[test]
    fn inner_space_runs_collapse_but_indentation_stays() {
        assert_eq!(normal("x\n    a   b\t\tc"), "x\n    a b c");
    }

    #[test]
    fn empty_headers_are_dropped_including_cascades() {
        assert_eq!(normal("# A\n\n## B\n\n# C\ntext"), "# C\ntext");
        assert_eq!(
            normal("## Kept\n### Sub\nbody\n## Empty"),
            "## Kept\n### Sub\nbody"
        );
        assert_eq!(
            normal("#hashtag is not a header"),
            "#hashtag is not a header"
        );
    }

    #[test]
    fn the_result_is_trimmed() {
        assert_eq!(normal("\n\n  hello  \n\n"), "hello");
    }

    #[test]
    fn aggressive_mode_flattens_headers_and_bullets() {
        let out = optimise("## Rules\n- one\n  * two\n", OptimiseMode::Aggressive);
        assert_eq!(out, "Rules:\n• one\n  • two");
    }

    #[test]
    fn aggressive_mode_shortens_phrasings_as_whole_words_only() {
        let out = optimise(
            "Do NOT interrupt. You should not correct, for example, accents such as these. It will not. Undo nothing.",
            OptimiseMode::Aggressive,
        );
        assert_eq!(
            out,
            "Don't interrupt. You shouldn't correct, e.g., accents like these. It won't. Undo nothing."
        );
    }

    proptest! {
        #[test]
        fn trimmed_trims_what_trim_trims(text in "[a-zé\u{a0}\u{2003} \t\n\r\x0b\x0c\x01]{0,12}") {
            prop_assert_eq!(trimmed(&text), text.trim());
        }

        #[test]
        fn char_count_counts_what_chars_counts(text in "[a-zé€𝄞\n ]{0,600}") {
            prop_assert_eq!(char_count(&text), text.chars().count());
        }
    }

    #[test]
    fn stats_report_saved_tokens_and_percent() {
        let stats = OptimisationStats::compare(&"a".repeat(400), &"a".repeat(300));
        assert_eq!(
            (
                stats.original_tokens,
                stats.optimised_tokens,
                stats.saved_tokens
            ),
            (100, 75, 25)
        );
        assert_eq!(stats.saved_percent, 25.0);
        assert_eq!(OptimisationStats::compare("", "").saved_percent, 0.0);
        assert_eq!(estimate_tokens("abcde"), 2);
    }

    fn non_whitespace(text: &str) -> String {
        text.chars().filter(|c| !c.is_whitespace()).collect()
    }

    proptest! {
        #[test]
        fn normal_mode_is_idempotent(text in "[a-z #\\-\t\r\n]{0,200}") {
            let once = normal(&text);
            prop_assert_eq!(normal(&once), once);
        }

        #[test]
        fn normal_mode_never_lengthens(text in "[a-z #\\-\t\r\n]{0,200}") {
            prop_assert!(normal(&text).chars().count() <= text.chars().count());
        }

        #[test]
        fn normal_mode_keeps_every_non_whitespace_character_in_order(text in "[a-zé.,:\\- \t\r\n]{0,200}") {
            // Without header lines nothing but whitespace may be removed.
            prop_assert_eq!(non_whitespace(&normal(&text)), non_whitespace(&text));
        }

        #[test]
        fn aggressive_mode_is_stable_after_one_pass(text in "[a-zDNOT #\\-*\n]{0,120}") {
            let once = optimise(&text, OptimiseMode::Aggressive);
            prop_assert_eq!(normal(&once), once.clone());
        }
    }

    #[test]
    fn the_preview_choices_map_to_optimise_modes() {
        assert_eq!(optimise_choice("off"), None);
        assert_eq!(
            optimise_choice("aggressive"),
            Some(OptimiseMode::Aggressive)
        );
        assert_eq!(optimise_choice("normal"), Some(OptimiseMode::Normal));
        assert_eq!(optimise_choice(""), Some(OptimiseMode::Normal));
    }
}
