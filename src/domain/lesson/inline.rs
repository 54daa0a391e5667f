//! What the prompt builder needs to know of each text it copies in from a
//! lesson, learnt in one reading as it copies it ([`scan_inline`]): how
//! many characters it holds and whether normal mode could change it where
//! it stands.
//!
//! Its own module because it runs on every piece of every prompt build
//! (every keystroke in the editor's preview), and the pieces are short
//! (ids, keywords, a task's text): too short for the compiler's
//! vectorised loops, which handed them to a byte-at-a-time remainder that
//! cost more than the rest of the prompt's copying. So they are read a
//! word or a block at a time, by length, with overlapping last reads
//! instead of remainders.

use crate::domain::lesson::normalise::has_clean_ends;

/// What [`scan_inline`] learns of a piece of text in one reading.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) struct Inline {
    /// Whether the piece, written inside a line the prompt builder makes
    /// (and possibly at its end, or at its start after a line break), can
    /// change nothing normal mode would see: no control character (line
    /// breaks and tabs among them), no double space, no whitespace at
    /// either end, and no `#` that could make a line a header. Stricter
    /// than needed, so that it is cheap and plainly safe: a piece it
    /// refuses only sends the whole prompt through [`normalise_owned`](crate::domain::lesson::normalise).
    pub(super) normal: bool,
    /// Its UTF-8 continuation bytes: its characters are its bytes less
    /// these, so the builder counts a prompt's characters as it copies.
    pub(super) continuation: usize,
}

/// Reads `piece` once for [`Inline`], each byte beside the next (so a
/// double space is seen wherever it stands): up to eight bytes as one
/// padded word; up to sixteen as pairs of words, eight bytes apart;
/// longer ones sixteen bytes at a time ([`scan_blocks`]). The last read
/// ends at the piece's end, overlapping the one before it, whose
/// continuation bytes are not counted twice.
pub(super) fn scan_inline(piece: &str) -> Inline {
    let bytes = piece.as_bytes();
    let (Some(&first), Some(&last_byte)) = (bytes.first(), bytes.last()) else {
        return Inline {
            normal: true,
            continuation: 0,
        };
    };
    let ends = if first.is_ascii_graphic() && last_byte.is_ascii_graphic() {
        first != b'#'
    } else {
        first != b'#' && first >= CONTROL_BELOW && has_clean_ends(piece)
    };
    let Some(last) = bytes.len().checked_sub(9) else {
        // Fewer than nine bytes: one word, padded with a plain letter.
        let word = short_word(bytes);
        let next = (word >> 8) | (u64::from(b'a') << 56);
        return Inline {
            normal: ends && plain_pair(word, next) == 0,
            continuation: continuation_bytes(next),
        };
    };
    if bytes.len() > BLOCK {
        let (seen, continuation) = scan_blocks(bytes);
        return Inline {
            normal: ends && seen == 0,
            continuation,
        };
    }
    // A text starts at a character's start, so its first byte never
    // continues one: the words one byte on cover every other byte.
    let (mut seen, mut continuation) = (0, 0);
    let mut at = 0;
    loop {
        let from = at.min(last);
        let word = word_at(bytes, from);
        let next = word_at(bytes, from + 1);
        seen |= plain_pair(word, next);
        // In the last pair, the bytes the pair before it read already.
        let fresh = !0u64 << (8 * (at - from));
        continuation += continuation_bytes(next & fresh);
        if from == last {
            return Inline {
                normal: ends && seen == 0,
                continuation,
            };
        }
        at += 8;
    }
}

/// Bytes a block of [`scan_blocks`] reads.
const BLOCK: usize = 16;

/// `BLOCK` zeros then `BLOCK` ones: from `BLOCK - n`, a mask of a block's
/// lanes without its first `n`.
const FRESH: [u8; 2 * BLOCK] = {
    let mut mask = [1; 2 * BLOCK];
    let mut lane = 0;
    while lane < BLOCK {
        mask[lane] = 0;
        lane += 1;
    }
    mask
};

/// The sum of a block's lanes: added in pairs into sixteen-bit lanes, then
/// by one multiply into the top lane (at most 16 × 255, which fits).
fn lane_sum(lanes: [u8; BLOCK]) -> usize {
    const LOW_BYTES: u128 = u128::from_le_bytes([
        0xff, 0, 0xff, 0, 0xff, 0, 0xff, 0, 0xff, 0, 0xff, 0, 0xff, 0, 0xff, 0,
    ]);
    const ONE_PER_LANE: u128 =
        u128::from_le_bytes([1, 0, 1, 0, 1, 0, 1, 0, 1, 0, 1, 0, 1, 0, 1, 0]);
    let bytes = u128::from_le_bytes(lanes);
    let pairs = (bytes & LOW_BYTES) + ((bytes >> 8) & LOW_BYTES);
    (pairs.wrapping_mul(ONE_PER_LANE) >> 112) as usize
}

/// The pairs test of [`scan_inline`] sixteen bytes at a time, for pieces
/// longer than a block: written lane by lane over arrays, which the
/// compiler turns into vector compares. Non-zero when a pair failed, and
/// the continuation bytes.
fn scan_blocks(bytes: &[u8]) -> (u8, usize) {
    let last = bytes.len() - BLOCK - 1;
    let mut seen = [0u8; BLOCK];
    // Counted per lane, each emptied into the total before it can wrap.
    let (mut continuation, mut counted, mut total) = ([0u8; BLOCK], 0u8, 0);
    let mut at = 0;
    loop {
        let from = at.min(last);
        let (here, next) = (block_at(bytes, from), block_at(bytes, from + 1));
        // In the last pair of blocks, the lanes the pair before it read
        // are not counted again: the mask's first `at - from` lanes are 0.
        let stale = at - from;
        let fresh = &FRESH[BLOCK - stale..2 * BLOCK - stale];
        for lane in 0..BLOCK {
            let (a, b) = (here[lane], next[lane]);
            seen[lane] |= u8::from(b < CONTROL_BELOW) | u8::from(a == b' ' && b == b' ');
            continuation[lane] += u8::from((b as i8) < -64) & fresh[lane];
        }
        counted += 1;
        if from == last || counted == u8::MAX {
            total += lane_sum(continuation);
            (continuation, counted) = ([0; BLOCK], 0);
        }
        if from == last {
            return (seen.iter().fold(0, |all, lane| all | lane), total);
        }
        at += BLOCK;
    }
}
/// Non-zero when `next` (the bytes of `word` one on) holds a control
/// character or the two hold a double space.
fn plain_pair(word: u64, next: u64) -> u64 {
    bytes_below(next, CONTROL_BELOW) | zero_bytes((word ^ SPACES) | (next ^ SPACES))
}

/// The one to eight `bytes` as a word (first byte lowest), the bytes past
/// them a plain letter: read as two overlapping halves, whose shared bytes
/// are the same bytes, so or-ing them changes nothing.
fn short_word(bytes: &[u8]) -> u64 {
    let len = bytes.len();
    let word = match len {
        4.. => {
            let half = |at: usize| {
                let mut four = [0; 4];
                four.copy_from_slice(&bytes[at..at + 4]);
                u64::from(u32::from_le_bytes(four))
            };
            half(0) | (half(len - 4) << (8 * (len - 4)))
        }
        2.. => {
            let half = |at: usize| u64::from(u16::from_le_bytes([bytes[at], bytes[at + 1]]));
            half(0) | (half(len - 2) << (8 * (len - 2)))
        }
        _ => u64::from(bytes[0]),
    };
    word | u64::from_le_bytes([b'a'; 8])
        .checked_shl(8 * len as u32)
        .unwrap_or(0)
}

/// Bytes below this are control characters (tab, line feed, carriage
/// return and the rest) that [`scan_inline`] refuses in a piece.
const CONTROL_BELOW: u8 = 0x0e;
/// Every byte of a word a space.
const SPACES: u64 = u64::from_le_bytes([b' '; 8]);
/// Every byte of a word 1.
const ONES: u64 = u64::from_le_bytes([1; 8]);
/// Every byte of a word 0x80, its high bit.
const HIGHS: u64 = u64::from_le_bytes([0x80; 8]);

/// The sixteen bytes of `bytes` from `at`.
fn block_at(bytes: &[u8], at: usize) -> [u8; BLOCK] {
    let mut block = [0; BLOCK];
    block.copy_from_slice(&bytes[at..at + BLOCK]);
    block
}

/// The eight bytes of `bytes` from `at`, as a word (first byte lowest).
fn word_at(bytes: &[u8], at: usize) -> u64 {
    let mut word = [0; 8];
    word.copy_from_slice(&bytes[at..at + 8]);
    u64::from_le_bytes(word)
}

/// Non-zero when a byte of `word` is zero (exact as a yes or no: the
/// borrow that can mark a byte above a zero byte needs that zero byte).
fn zero_bytes(word: u64) -> u64 {
    word.wrapping_sub(ONES) & !word & HIGHS
}

/// Non-zero when a byte of `word` is below `n` (at most 128).
fn bytes_below(word: u64, n: u8) -> u64 {
    word.wrapping_sub(ONES * u64::from(n)) & !word & HIGHS
}

/// How many bytes of `word` continue a character (`10xxxxxx`).
fn continuation_bytes(word: u64) -> usize {
    let marks = (word & !(word << 1) & HIGHS) >> 7;
    // Each byte 0 or 1: the multiply sums them into the top byte.
    (marks.wrapping_mul(ONES) >> 56) as usize
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    /// [`scan_inline`]'s rules, one by one.
    fn plain_inline(piece: &str) -> bool {
        let bytes = piece.as_bytes();
        bytes.is_empty()
            || (bytes[0] != b'#'
                && has_clean_ends(piece)
                && !bytes.iter().any(|&b| b < CONTROL_BELOW)
                && !bytes.windows(2).any(|w| w == b"  "))
    }

    /// What [`scan_inline`] should find in `piece`.
    fn expected_inline(piece: &str) -> Inline {
        Inline {
            normal: plain_inline(piece),
            continuation: piece.len() - piece.chars().count(),
        }
    }

    proptest! {
        #[test]
        fn the_inline_check_refuses_exactly_what_the_rules_name(
            piece in "[ a\t\n\r#é\u{0}\u{b}]{0,40}"
        ) {
            prop_assert_eq!(scan_inline(&piece), expected_inline(&piece));
        }

        #[test]
        fn one_stray_byte_in_a_plain_piece_is_seen_wherever_it_stands(
            words in "[a-zé€𝄞]{1,9}( [a-zé#]{1,9}){0,5}",
            stray in proptest::sample::select(vec![" ", "  ", "\t", "\n", "\r", "\u{0}", "#", "\u{3000}"]),
            at in any::<proptest::sample::Index>(),
        ) {
            // Plain pieces of every length, so that each way of reading
            // (a padded word, pairs of words, blocks) and its overlapping
            // last read are all taken.
            prop_assert_eq!(scan_inline(&words), expected_inline(&words));
            prop_assert!(scan_inline(&words).normal);
            let boundaries: Vec<usize> =
                (0..=words.len()).filter(|&i| words.is_char_boundary(i)).collect();
            let at = boundaries[at.index(boundaries.len())];
            let piece = format!("{}{stray}{}", &words[..at], &words[at..]);
            prop_assert_eq!(scan_inline(&piece), expected_inline(&piece));
        }
    }

    #[test]
    fn a_piece_of_many_blocks_is_counted_past_what_a_lane_can_hold() {
        // 9,001 bytes: 562 blocks, so each lane's count is emptied twice.
        let long = format!("a{}", "é".repeat(4_500));
        assert_eq!(scan_inline(&long), expected_inline(&long));
        let spaced = format!("{}  b", &long[..long.len() - 2]);
        assert_eq!(scan_inline(&spaced), expected_inline(&spaced));
        assert!(!scan_inline(&spaced).normal, "a double space at the end");
    }
}
