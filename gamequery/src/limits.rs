//! How much of a stranger's reply the decoders keep. A server decides how
//! long its name is, how many players and rules it lists and what bytes its
//! text holds; whoever shows that text to many viewers must not let it grow
//! without bound. The decoders cut every text field to a number of
//! characters, replace control characters, and keep a bounded number of
//! players and rules ([`Limits`]); [`clean_text`] is the one rule for text,
//! also for callers that build their own messages from the results.

/// What the decoders keep of one reply. Text is counted in characters
/// (`char`s), so a field takes at most four bytes per character in UTF-8.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Limits {
    /// Characters kept of a server's name, map, game, folder, version, a
    /// player's name and any other text field but rules.
    pub text_chars: usize,
    /// Characters kept of a rule's (or GameAgent status key's) name.
    pub rule_name_chars: usize,
    /// Characters kept of a rule's (or status key's) value.
    pub rule_value_chars: usize,
    /// Players kept per reply: the best-scoring ones, in the server's order.
    pub players: usize,
    /// Rules (status keys) kept per reply: the first ones, in the server's
    /// order.
    pub rules: usize,
}

impl Limits {
    /// The limits [`Limits::default`] gives: room for any real server's
    /// names (Source caps its hostname at 63 bytes) and cvar names, 64
    /// players (GameAgent servers have at most 16; an A2S count byte can say
    /// 255) and 256 rules (busy Source servers send a couple of hundred).
    pub const DEFAULT: Self = Self {
        text_chars: 64,
        rule_name_chars: 48,
        rule_value_chars: 96,
        players: 64,
        rules: 256,
    };
}

impl Default for Limits {
    fn default() -> Self {
        Self::DEFAULT
    }
}

/// What a cut field ends with.
pub const ELLIPSIS: char = '…';

/// `text` made fit to show: every control character (Unicode `Cc`: C0,
/// DEL, C1) replaced, tab, line feed and carriage return by a space, the
/// others by U+FFFD, and cut to at most `max_chars` characters on a
/// character boundary, the last of them then [`ELLIPSIS`]. Idempotent:
/// cleaning clean text changes nothing. Reads at most `max_chars + 1`
/// characters of `text`, however long it is.
pub fn clean_text(text: &str, max_chars: usize) -> String {
    clean_chars(text.chars(), max_chars)
}

/// Like [`clean_text`] for raw bytes, invalid UTF-8 replaced by U+FFFD; only
/// the bytes that can make the first `max_chars + 1` characters are decoded.
pub fn clean_bytes(bytes: &[u8], max_chars: usize) -> String {
    // A character takes at most 4 bytes, and an invalid sequence becomes
    // one U+FFFD per at least one byte: the first `max_chars + 1`
    // characters lie within this prefix (a character cut at its end starts
    // after them).
    let prefix = bytes
        .get(..max_chars.saturating_add(1).saturating_mul(4))
        .unwrap_or(bytes);
    clean_text(&String::from_utf8_lossy(prefix), max_chars)
}

/// The `max` items of `items` that score highest (the earlier one first
/// among equal scores), in their original order: which players a list cut
/// to `max` keeps.
pub fn best_scoring<T>(items: Vec<T>, max: usize, score: impl Fn(&T) -> i64) -> Vec<T> {
    if items.len() <= max {
        return items;
    }
    let mut ranked: Vec<(i64, usize)> = items
        .iter()
        .enumerate()
        .map(|(i, t)| (score(t), i))
        .collect();
    ranked.sort_by_key(|&(s, i)| (std::cmp::Reverse(s), i));
    let mut keep = vec![false; items.len()];
    for &(_, i) in ranked.iter().take(max) {
        if let Some(k) = keep.get_mut(i) {
            *k = true;
        }
    }
    items
        .into_iter()
        .zip(keep)
        .filter_map(|(t, k)| k.then_some(t))
        .collect()
}

fn clean_chars(chars: impl Iterator<Item = char>, max_chars: usize) -> String {
    let mut out = String::new();
    for (kept, c) in chars.enumerate() {
        if kept == max_chars {
            out.pop();
            if max_chars > 0 {
                out.push(ELLIPSIS);
            }
            break;
        }
        out.push(clean_char(c));
    }
    out
}

fn clean_char(c: char) -> char {
    match c {
        '\t' | '\n' | '\r' => ' ',
        c if c.is_control() => char::REPLACEMENT_CHARACTER,
        c => c,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn short_text_is_kept() {
        assert_eq!(clean_text("de_dust", 64), "de_dust");
        assert_eq!(clean_text("", 64), "");
        assert_eq!(clean_text("Köln ☃ 🦀", 9), "Köln ☃ 🦀");
    }

    #[test]
    fn long_text_is_cut_on_a_char_boundary_with_an_ellipsis() {
        assert_eq!(clean_text("abcdef", 4), "abc…");
        assert_eq!(clean_text("abcd", 4), "abcd");
        assert_eq!(clean_text("🦀🦀🦀🦀🦀", 3), "🦀🦀…");
        assert_eq!(clean_text("abc", 0), "");
        assert_eq!(clean_text("abc", 1), "…");
        let long = "ж".repeat(10_000);
        let cut = clean_text(&long, 64);
        assert_eq!(cut.chars().count(), 64);
        assert!(cut.ends_with(ELLIPSIS));
        // Idempotent, so a second cut (the bridge's) changes nothing.
        assert_eq!(clean_text(&cut, 64), cut);
    }

    #[test]
    fn control_characters_are_replaced() {
        assert_eq!(clean_text("a\tb\nc\rd", 64), "a b c d");
        assert_eq!(
            clean_text("\u{1f}\u{0}\u{7f}\u{85}x", 64),
            "\u{fffd}\u{fffd}\u{fffd}\u{fffd}x"
        );
        // Not control characters: kept (the page isolates bidi controls).
        assert_eq!(clean_text("\u{202e}\u{200b}", 64), "\u{202e}\u{200b}");
        let hostile = "\u{1f}".repeat(100_000);
        let clean = clean_text(&hostile, 64);
        assert_eq!(clean.chars().count(), 64);
        assert!(!clean.chars().any(char::is_control));
    }

    #[test]
    fn best_scoring_keeps_the_top_in_order() {
        let items = vec![("a", 1), ("b", 9), ("c", 5), ("d", 9), ("e", -3)];
        let top = best_scoring(items.clone(), 3, |&(_, s)| s);
        assert_eq!(top, [("b", 9), ("c", 5), ("d", 9)]);
        let tie = best_scoring(vec![("x", 0), ("y", 0), ("z", 0)], 2, |&(_, s)| s);
        assert_eq!(tie, [("x", 0), ("y", 0)]);
        assert_eq!(best_scoring(items.clone(), 10, |&(_, s)| s), items);
        assert!(best_scoring(items, 0, |&(_, s)| s).is_empty());
    }

    #[test]
    fn bytes_are_decoded_lossily_and_only_as_far_as_needed() {
        assert_eq!(clean_bytes(b"K\xF6ln", 64), "K\u{fffd}ln");
        assert_eq!(clean_bytes("ab🦀".as_bytes(), 64), "ab🦀");
        for len in 0..40 {
            let s = "a🦀ö".repeat(len);
            for max in 0..12 {
                assert_eq!(
                    clean_bytes(s.as_bytes(), max),
                    clean_text(&s, max),
                    "{s} {max}"
                );
            }
        }
        assert_eq!(clean_bytes(&vec![0x1f; 1 << 20], 8).chars().count(), 8);
    }
}
