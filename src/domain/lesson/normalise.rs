//! The optimiser's normal mode: unify line endings, strip trailing spaces,
//! collapse inner runs of spaces (keeping indentation), drop headers with
//! nothing under them, collapse blank runs to one blank line, trim.
//!
//! Its own module because it runs on every prompt build (every keystroke
//! in the editor's preview) and is built for that: most of a prompt is
//! lines that need no change, so those are found with vectorised searches
//! (`memchr`: double spaces over the whole text, then line ends, tabs and
//! carriage returns in one search) and copied in runs — or, when the whole text is such a
//! run, handed back without a copy. Only lines with a tab, a carriage
//! return, a double space or whitespace at an end, runs of blank lines and
//! headers not confirmed by the next line go through the line-by-line
//! rules.

use memchr::{memchr, memchr2, memchr3_iter, memmem};
use std::sync::OnceLock;

/// Whether normal mode leaves `text` exactly as it stands: the prompt
/// builder asks this of the teacher's conversation prompt alone, so that
/// a prompt whose other parts it wrote itself (normal by construction)
/// need not be scanned whole.
pub(super) fn is_normal(text: &str) -> bool {
    text.is_empty() || (has_clean_ends(text) && Scan::new(text).clean_run(0) == text.len())
}

/// Normal mode on `text`, into a new string.
pub(super) fn normalise(text: &str) -> String {
    // Trim first, so the first line's indentation cannot hide a header that
    // the final trim would reveal (which would break idempotence).
    let text = text.trim();
    let mut scan = Scan::new(text);
    let run = scan.clean_run(0);
    finish(text, run, &mut scan)
}

/// Normal mode on an owned `text`: a text that is already normal comes
/// back as it is, without a copy (the prompt builder's assembled prompt
/// usually is, its templates being written normal).
pub(super) fn normalise_owned(text: String) -> String {
    let trimmed = text.trim();
    let mut scan = Scan::new(trimmed);
    let run = scan.clean_run(0);
    if run == trimmed.len() {
        return if trimmed.len() == text.len() {
            text
        } else {
            trimmed.to_owned()
        };
    }
    finish(trimmed, run, &mut scan)
}

/// Normalises trimmed `text`, whose lines up to `run` (a line's end, or 0)
/// are already known to need no change.
fn finish(text: &str, mut run: usize, scan: &mut Scan) -> String {
    let mut out = Normalised::with_capacity(text.len());
    let has_cr = memchr(b'\r', text.as_bytes()).is_some();
    let mut at = 0;
    while at < text.len() {
        if run > at {
            out.unchanged_lines(&text[at..run]);
            at = run + 1;
        } else {
            let (line, next) = split_line(&text[at..], has_cr);
            out.line(line);
            at = text.len() - next.len();
        }
        if at < text.len() {
            run = scan.clean_run(at);
        }
    }
    out.finish()
}

/// Where, in a trimmed text, the next double space is: with tabs and
/// carriage returns (found while looking for line ends), what rules out a
/// line-for-line copy. Searched for again only once the scan has passed
/// it.
struct Scan<'a> {
    text: &'a str,
    /// The next double space at or after the last search (the text's
    /// length when there is none).
    double_space: usize,
}

impl<'a> Scan<'a> {
    fn new(text: &'a str) -> Self {
        let bytes = text.as_bytes();
        Self {
            text,
            double_space: double_spaces().find(bytes).unwrap_or(bytes.len()),
        }
    }

    /// The end of the longest run of lines from `start` (a line's start)
    /// that normal mode writes out exactly as they stand: lines without a
    /// tab, a carriage return or a double space, and with nothing to trim
    /// at either end, that start (unless at the text's start) and end with
    /// a content line and have between two content lines at most one
    /// header (which the second confirms) and no two blank lines in a row.
    /// `start` itself when its line does not begin such a run.
    fn clean_run(&mut self, start: usize) -> usize {
        let bytes = self.text.as_bytes();
        if self.double_space < start {
            self.double_space = double_spaces()
                .find(&bytes[start..])
                .map_or(bytes.len(), |i| start + i);
        }
        let mut end = start;
        let mut at = start;
        // Since the last content line: a header, and whether the line
        // before was blank.
        let (mut header, mut blank) = (false, false);
        // Line ends, and the tabs and carriage returns that end a run.
        let mut stops = memchr3_iter(b'\n', b'\t', b'\r', &bytes[start..]).map(|i| start + i);
        while at < bytes.len() {
            let line_end = stops.next().unwrap_or(bytes.len());
            if line_end > self.double_space || (line_end < bytes.len() && bytes[line_end] != b'\n')
            {
                break;
            }
            let line = &self.text[at..line_end];
            // Nothing is pending before the text's first line.
            let gap_allowed = end > start || start == 0;
            if line.is_empty() {
                if blank || !gap_allowed {
                    break;
                }
                blank = true;
            } else if !has_clean_ends(line) {
                break;
            } else if header_level(line).is_some() {
                if header || !gap_allowed {
                    break;
                }
                (header, blank) = (true, false);
            } else {
                end = line_end;
                (header, blank) = (false, false);
            }
            at = line_end + 1;
        }
        end
    }
}

/// Whether neither end of the non-empty `line` is whitespace, so the line
/// is not blank and has no indentation or trailing space to trim. An ASCII
/// end is judged by its byte; only another character is decoded.
pub(super) fn has_clean_ends(line: &str) -> bool {
    let clean = |byte: u8, decoded: fn(&str) -> Option<char>| {
        if byte.is_ascii() {
            !matches!(byte, b' ' | b'\t' | b'\n' | 0x0b | 0x0c | b'\r')
        } else {
            decoded(line).is_some_and(|c| !c.is_whitespace())
        }
    };
    match (line.as_bytes().first(), line.as_bytes().last()) {
        (Some(&first), Some(&last)) => {
            clean(first, |l| l.chars().next()) && clean(last, |l| l.chars().next_back())
        }
        _ => false,
    }
}

/// The searcher for double spaces, built once.
fn double_spaces() -> &'static memmem::Finder<'static> {
    static FINDER: OnceLock<memmem::Finder<'static>> = OnceLock::new();
    FINDER.get_or_init(|| memmem::Finder::new(b"  "))
}

/// A header written to the output that no content has followed yet.
#[derive(Clone, Copy, Default)]
struct Pending {
    /// Where it begins in the output, separator included.
    start: usize,
    /// Its level (`##` → 2).
    level: usize,
    /// Whether a blank line stood before it.
    blank_before: bool,
}

/// The output being written, line by line, with no allocation per line:
/// each cleaned line goes straight into one pre-sized `String`. A header is
/// written too but stays *pending* until content follows it; a header of
/// the same or a higher level (or the end) arriving first drops it again
/// by truncating the output to where it began. Pending headers are
/// strictly increasing in level, so at most six are ever pending.
struct Normalised {
    out: String,
    pending: [Pending; 6],
    depth: usize,
    /// A blank line since the last line written: one blank line if more
    /// content follows, nothing otherwise.
    blank: bool,
}

impl Normalised {
    fn with_capacity(capacity: usize) -> Self {
        Self {
            out: String::with_capacity(capacity),
            pending: [Pending::default(); 6],
            depth: 0,
            blank: false,
        }
    }

    /// Starts a line: its separator from what came before.
    fn separate(&mut self) {
        if !self.out.is_empty() {
            self.out.push_str(if self.blank { "\n\n" } else { "\n" });
        }
        self.blank = false;
    }

    /// Writes content lines that need no change ([`Scan::clean_run`]).
    fn unchanged_lines(&mut self, lines: &str) {
        self.separate();
        self.out.push_str(lines);
        self.depth = 0;
    }

    /// Writes one line by the rules.
    fn line(&mut self, line: &str) {
        let line = line.trim_end();
        if line.is_empty() {
            self.blank = true;
            return;
        }
        let level = header_level(line);
        if let Some(level) = level {
            // Pending headers at or below this level had nothing under
            // them: drop them, keeping the blank lines around them.
            while self.depth > 0 && self.pending[self.depth - 1].level >= level {
                self.depth -= 1;
                self.blank |= self.pending[self.depth].blank_before;
                self.out.truncate(self.pending[self.depth].start);
            }
        }
        let start = self.out.len();
        let blank_before = self.blank;
        self.separate();
        push_clean(&mut self.out, line);
        match level {
            Some(level) => {
                self.pending[self.depth] = Pending {
                    start,
                    level,
                    blank_before,
                };
                self.depth += 1;
            }
            None => self.depth = 0,
        }
    }

    /// The text, without headers still pending at the end.
    fn finish(mut self) -> String {
        if self.depth > 0 {
            self.out.truncate(self.pending[0].start);
        }
        self.out
    }
}

/// The first line of `text` and what follows its line break (`\n`, `\r\n`
/// or a lone `\r`). `has_cr` says whether `\r` occurs at all, so text
/// without it is split by the fast `\n` search alone.
fn split_line(text: &str, has_cr: bool) -> (&str, &str) {
    let bytes = text.as_bytes();
    let end = if has_cr {
        memchr2(b'\n', b'\r', bytes)
    } else {
        memchr(b'\n', bytes)
    };
    match end {
        None => (text, ""),
        Some(i) if bytes[i..].starts_with(b"\r\n") => (&text[..i], &text[i + 2..]),
        Some(i) => (&text[..i], &text[i + 1..]),
    }
}

/// Writes `line` (already trimmed at the end) with every run of spaces and
/// tabs after its indentation collapsed to one space.
fn push_clean(out: &mut String, line: &str) {
    let body = line.trim_start();
    out.push_str(&line[..line.len() - body.len()]);
    if !body.contains('\t') && !body.contains("  ") {
        out.push_str(body);
        return;
    }
    let bytes = body.as_bytes();
    let mut copied = 0;
    let mut i = 0;
    while i < bytes.len() {
        if bytes[i] == b' ' || bytes[i] == b'\t' {
            let mut j = i + 1;
            while j < bytes.len() && (bytes[j] == b' ' || bytes[j] == b'\t') {
                j += 1;
            }
            if j - i > 1 || bytes[i] == b'\t' {
                // Spaces and tabs are ASCII: these are character boundaries.
                out.push_str(&body[copied..i]);
                out.push(' ');
                copied = j;
            }
            i = j;
        } else {
            i += 1;
        }
    }
    out.push_str(&body[copied..]);
}

/// The level of a Markdown ATX header line (`## Title` → 2; a tab after
/// the hashes counts as the space it becomes).
pub(super) fn header_level(line: &str) -> Option<usize> {
    let hashes = line.bytes().take_while(|b| *b == b'#').count();
    let rest = &line[hashes..];
    ((1..=6).contains(&hashes)
        && (rest.is_empty() || rest.starts_with(' ') || rest.starts_with('\t')))
    .then_some(hashes)
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn normal(text: &str) -> String {
        normalise(text)
    }

    /// The normaliser as it was before the single pass (lines collected,
    /// cleaned into their own strings, headers dropped walking backwards):
    /// the single pass must match it byte for byte.
    fn reference_normal(text: &str) -> String {
        fn clean_line(line: &str) -> String {
            let line = line.trim_end();
            let body = line.trim_start();
            let (indent, body) = line.split_at(line.len() - body.len());
            let mut out = String::from(indent);
            let mut in_space = false;
            for c in body.chars() {
                if c == ' ' || c == '\t' {
                    if !in_space {
                        out.push(' ');
                    }
                    in_space = true;
                } else {
                    out.push(c);
                    in_space = false;
                }
            }
            out
        }
        fn level(line: &str) -> Option<usize> {
            let hashes = line.bytes().take_while(|b| *b == b'#').count();
            let rest = &line[hashes..];
            ((1..=6).contains(&hashes) && (rest.is_empty() || rest.starts_with(' ')))
                .then_some(hashes)
        }
        let unified = text.replace("\r\n", "\n").replace('\r', "\n");
        let unified = unified.trim();
        let lines: Vec<String> = unified.split('\n').map(clean_line).collect();
        enum Next {
            End,
            Header(usize),
            Content,
        }
        let mut next = Next::End;
        let mut kept = Vec::new();
        for line in lines.into_iter().rev() {
            if line.trim().is_empty() {
                kept.push(line);
                continue;
            }
            if let Some(l) = level(&line) {
                let empty = match next {
                    Next::End => true,
                    Next::Header(below) => below <= l,
                    Next::Content => false,
                };
                if empty {
                    continue;
                }
                next = Next::Header(l);
            } else {
                next = Next::Content;
            }
            kept.push(line);
        }
        kept.reverse();
        let mut out = String::new();
        let mut blank_run = 0;
        for line in &kept {
            if line.is_empty() {
                blank_run += 1;
                if blank_run > 1 {
                    continue;
                }
            } else {
                blank_run = 0;
            }
            out.push_str(line);
            out.push('\n');
        }
        out.trim().to_owned()
    }

    /// Lines of the kinds the rules treat differently, plain ones most.
    fn mixed_text() -> impl Strategy<Value = String> {
        let line = prop_oneof![
            6 => "[A-Za-zé¿.,:`*\\-][a-zé .,:`*\\-]{0,20}[a-zé.,:`*\\-]",
            1 => "#{1,7}[ \t]?[a-z ]{0,6}",
            1 => "[ \t\u{a0}]{0,2}",
            1 => "[a-z]{1,4}[ \t]{1,3}[a-z]{0,4}[ \t\u{a0}]?",
            1 => "[ \t]{1,2}[a-z]{1,6}",
        ];
        let line_break = prop_oneof![8 => Just("\n"), 1 => Just("\r\n"), 1 => Just("\r")];
        proptest::collection::vec((line, line_break), 0..16).prop_map(|lines| {
            let mut text = String::new();
            for (line, line_break) in lines {
                text.push_str(&line);
                text.push_str(line_break);
            }
            text
        })
    }

    #[test]
    fn a_normal_text_comes_back_without_a_copy() {
        let text = String::from("# Title\nA line.\n\n## Part\n- item one\n- item two");
        let at = text.as_ptr();
        let out = normalise_owned(text);
        assert_eq!(out.as_ptr(), at);
        assert_eq!(out, "# Title\nA line.\n\n## Part\n- item one\n- item two");
        assert_eq!(normalise_owned("  padded  ".into()), "padded");
    }

    proptest! {
        #[test]
        fn the_single_pass_matches_the_line_by_line_normaliser(
            text in "([#]{0,7}[ \t]{0,2}[a-zé\u{a0}\u{3000} \t]{0,12}(\r\n|\r|\n){0,3}){0,24}"
        ) {
            prop_assert_eq!(normal(&text), reference_normal(&text));
        }

        #[test]
        fn copying_unchanged_runs_gives_what_the_line_rules_give(text in mixed_text()) {
            prop_assert_eq!(normal(&text), reference_normal(&text));
            prop_assert_eq!(normalise_owned(text.clone()), reference_normal(&text));
        }

        #[test]
        fn the_same_length_means_the_same_characters(text in mixed_text()) {
            // What the prompt builder relies on to count a prompt's
            // characters only when optimising changed its length.
            let out = normal(&text);
            if out.len() == text.len() {
                prop_assert_eq!(out.chars().count(), text.chars().count());
            }
            prop_assert!(out.len() <= text.len());
        }
    }
}
