//! The one string a prompt is assembled in, which learns what the builder
//! needs to know of it while copying: how many characters it holds and
//! whether normal mode would leave it as it is.
//!
//! The builder's own wording is ASCII and written normal, so only the
//! teacher's and the student's texts it copies in need reading. Each is
//! read once, as it is copied ([`scan_inline`]): the prompt's characters
//! are its bytes less the continuation bytes those texts hold, and the
//! prompt needs normal mode's scan only if one of them could change under
//! it. A build reads no template at all, and each piece of a line once
//! (the conversation prompt, a text of many lines, is counted here and
//! judged by normal mode's own test).
//!
//! [`Text`] lets the same code write a tool's line into this writer or
//! into a plain `String` (the nudges' and the editor's one-line texts).

use crate::domain::lesson::inline::scan_inline;
use crate::domain::lesson::optimise::char_count;

/// Where some text is written: the builder's [`Writer`], or a `String`.
pub(super) trait Text {
    /// Writes the builder's own wording (ASCII, normal as it stands).
    fn fixed(&mut self, text: &'static str);
    /// Copies in a text from the lesson, written inside a line.
    fn copied(&mut self, text: &str);
    /// Writes `n` in decimal.
    fn number(&mut self, n: u32);
    /// Bytes written so far.
    fn written(&self) -> usize;
    /// Takes back what was written after `len` bytes: only the builder's
    /// own wording, so nothing counted is lost.
    fn take_back(&mut self, len: usize);
}

impl Text for String {
    fn fixed(&mut self, text: &'static str) {
        self.push_str(text);
    }

    fn copied(&mut self, text: &str) {
        self.push_str(text);
    }

    fn number(&mut self, n: u32) {
        push_number(self, n);
    }

    fn written(&self) -> usize {
        self.len()
    }

    fn take_back(&mut self, len: usize) {
        self.truncate(len);
    }
}

/// The prompt being assembled, with its count of continuation bytes and
/// whether every copied text was plain.
pub(super) struct Writer {
    out: String,
    /// UTF-8 continuation bytes written: every character but the first
    /// byte of each is one, so the characters are the bytes less these.
    continuation: usize,
    /// Whether every text copied in so far is one normal mode would leave
    /// as it stands where it was written ([`scan_inline`]).
    plain: bool,
}

/// A point in the writing, to count the characters written since.
#[derive(Clone, Copy)]
pub(super) struct Mark {
    len: usize,
    continuation: usize,
}

impl Writer {
    /// A writer with room for `capacity` bytes, so the prompt is
    /// allocated once.
    pub(super) fn with_capacity(capacity: usize) -> Self {
        Self {
            out: String::with_capacity(capacity),
            continuation: 0,
            plain: true,
        }
    }

    /// Copies in a text that ends its line: as [`Text::copied`], and an
    /// empty one would leave the space before it at the line's end.
    pub(super) fn line_end(&mut self, text: &str) {
        self.plain &= !text.is_empty();
        self.copied(text);
    }

    /// Copies in the teacher's conversation prompt, a text of many lines
    /// whose normality the builder judges on its own
    /// ([`is_normal`](crate::domain::lesson::normalise)): only counted here.
    pub(super) fn block(&mut self, text: &str) {
        self.continuation += text.len() - char_count(text);
        self.out.push_str(text);
    }

    /// Writes a student's recorded text on one line (its whitespace runs
    /// as single spaces), so recorded words cannot start a section of their
    /// own; `ends_line` when nothing follows it on its line, where a blank
    /// one would leave a space at the line's end.
    pub(super) fn one_line(&mut self, text: &str, ends_line: bool) {
        let start = self.out.len();
        for (i, word) in text.split_whitespace().enumerate() {
            if i > 0 {
                self.out.push(' ');
            }
            self.out.push_str(word);
        }
        let written = &self.out[start..];
        self.plain &= !(ends_line && written.is_empty());
        self.continuation += written.len() - char_count(written);
    }

    /// Separates a new section from what came before (nothing before the
    /// first).
    pub(super) fn start_section(&mut self) {
        if !self.out.is_empty() {
            self.out.push_str("\n\n");
        }
    }

    /// The point reached, for [`Writer::chars_since`].
    pub(super) fn mark(&self) -> Mark {
        Mark {
            len: self.out.len(),
            continuation: self.continuation,
        }
    }

    /// Characters written since `mark`.
    pub(super) fn chars_since(&self, mark: Mark) -> usize {
        (self.out.len() - mark.len) - (self.continuation - mark.continuation)
    }

    /// The prompt, its characters, and whether every copied text was plain.
    pub(super) fn finish(self) -> (String, usize, bool) {
        let chars = self.out.len() - self.continuation;
        (self.out, chars, self.plain)
    }
}

impl Text for Writer {
    fn fixed(&mut self, text: &'static str) {
        debug_assert!(text.is_ascii(), "the builder's wording is ASCII: {text}");
        self.out.push_str(text);
    }

    fn copied(&mut self, text: &str) {
        let scan = scan_inline(text);
        self.plain &= scan.normal;
        self.continuation += scan.continuation;
        self.out.push_str(text);
    }

    fn number(&mut self, n: u32) {
        push_number(&mut self.out, n);
    }

    fn written(&self) -> usize {
        self.out.len()
    }

    fn take_back(&mut self, len: usize) {
        self.out.truncate(len);
    }
}

/// Writes `n` in decimal onto `out`, without the formatting machinery,
/// which costs more than the rest of writing a prompt's number or two: the
/// higher digits first, then the last, each pushed as the ASCII character
/// it is (a prompt's numbers have a digit or two).
pub(super) fn push_number(out: &mut String, n: u32) {
    if n >= 10 {
        push_number(out, n / 10);
    }
    out.push(char::from(b'0' + (n % 10) as u8));
}
