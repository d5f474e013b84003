//! What a peer can put into the log, and how often. Text a peer chose (an
//! `Origin`, a server name, a command, an error that quotes its input) is
//! logged through [`cut`]: at most [`MAX_CHARS`] characters, control
//! characters escaped, so one request cannot write kilobytes or forge a
//! second line. Lines a peer can repeat at will (a refusal, a flood, a
//! timeout) go through [`throttled!`](crate::throttled): a few per
//! [`WINDOW`] per call site, with the count of those held back.

use std::fmt::{self, Write};

#[doc(hidden)]
pub use tracing;

/// Characters of peer-chosen text a log line shows at most.
pub const MAX_CHARS: usize = 100;

/// The window of [`throttled!`](crate::throttled).
pub const WINDOW: std::time::Duration = std::time::Duration::from_secs(10);

/// `value` as a log line may show it: its first [`MAX_CHARS`] characters
/// with control characters escaped, then how many bytes were left out.
pub fn cut<T: fmt::Display>(value: T) -> Cut<T> {
    Cut(value)
}

/// Raw bytes (a header that is not UTF-8) as [`cut`] shows text; invalid
/// sequences become U+FFFD.
pub fn cut_bytes(bytes: &[u8]) -> CutBytes {
    // Four bytes per character at most: enough for the cut and its tail.
    let head = &bytes[..bytes.len().min(MAX_CHARS * 4 + 4)];
    CutBytes {
        head: String::from_utf8_lossy(head).into_owned(),
        rest: bytes.len() - head.len(),
    }
}

/// See [`cut`].
#[derive(Debug, Clone, Copy)]
pub struct Cut<T>(T);

impl<T: fmt::Display> fmt::Display for Cut<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write_cut(f, &self.0, 0)
    }
}

/// See [`cut_bytes`].
#[derive(Debug, Clone)]
pub struct CutBytes {
    head: String,
    /// Bytes not even decoded.
    rest: usize,
}

impl fmt::Display for CutBytes {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write_cut(f, &self.head, self.rest)
    }
}

/// Writes `value` cut, then the mark with the bytes left out (`more` of
/// them left out already).
fn write_cut(f: &mut fmt::Formatter<'_>, value: &dyn fmt::Display, more: usize) -> fmt::Result {
    let mut out = Limited {
        out: f,
        left: MAX_CHARS,
        dropped: more,
    };
    write!(out, "{value}")?;
    let dropped = out.dropped;
    if dropped > 0 {
        write!(f, "{}", Tail(dropped))?;
    }
    Ok(())
}

/// The mark after a cut text.
struct Tail(usize);

impl fmt::Display for Tail {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "…[{} more bytes]", self.0)
    }
}

/// Passes on the first `left` characters, escaping control characters,
/// and counts the bytes of the rest.
struct Limited<'a, 'b> {
    out: &'a mut fmt::Formatter<'b>,
    left: usize,
    dropped: usize,
}

impl Write for Limited<'_, '_> {
    fn write_str(&mut self, s: &str) -> fmt::Result {
        for c in s.chars() {
            if self.left == 0 {
                self.dropped += c.len_utf8();
                continue;
            }
            self.left -= 1;
            if c.is_control() {
                write!(self.out, "{}", c.escape_default())?;
            } else {
                self.out.write_char(c)?;
            }
        }
        Ok(())
    }
}

/// Logs like `tracing`'s `$level!(…)`, but from each call site at most one
/// line per [`WINDOW`] (or `lines = N` of them), with a `held_back` field
/// counting the lines left out since the last; those go to DEBUG instead.
///
/// ```
/// # let peer = "192.0.2.1:1";
/// master::throttled!(warn, %peer, "message flood; closing");
/// master::throttled!(lines = 10; info, %peer, "registered");
/// ```
#[macro_export]
macro_rules! throttled {
    (lines = $lines:expr; $level:ident, $($arg:tt)+) => {{
        static THROTTLE: $crate::limits::LogThrottle =
            $crate::limits::LogThrottle::new($crate::logtext::WINDOW, $lines);
        match THROTTLE.allow(::std::time::Instant::now()) {
            Some(held_back) => $crate::logtext::tracing::$level!(held_back, $($arg)+),
            None => $crate::logtext::tracing::debug!($($arg)+),
        }
    }};
    ($level:ident, $($arg:tt)+) => {
        $crate::throttled!(lines = 1; $level, $($arg)+)
    };
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn short_text_passes_and_long_text_is_cut() {
        assert_eq!(
            cut("http://lobby.example").to_string(),
            "http://lobby.example"
        );
        let long = format!("http://{}", "a".repeat(8192));
        let shown = cut(&long).to_string();
        assert!(shown.starts_with("http://aaa"), "{shown}");
        assert!(shown.ends_with("…[8099 more bytes]"), "{shown}");
        assert!(shown.chars().count() < MAX_CHARS + 30, "{shown}");
    }

    #[test]
    fn control_characters_cannot_start_a_line() {
        let shown = cut("a\nINFO forged line\r\u{1b}[31m").to_string();
        assert!(!shown.contains('\n') && !shown.contains('\r') && !shown.contains('\u{1b}'));
        assert!(shown.starts_with("a\\nINFO forged"), "{shown}");
    }

    #[test]
    fn errors_are_cut_without_being_written_whole() {
        let error = std::io::Error::other("x".repeat(1000));
        assert_eq!(
            cut(&error)
                .to_string()
                .chars()
                .filter(|c| *c == 'x')
                .count(),
            100
        );
    }

    #[test]
    fn bytes_that_are_not_utf8_are_shown_lossily_and_cut() {
        assert_eq!(cut_bytes(b"http://\xff").to_string(), "http://\u{fffd}");
        let long = vec![b'b'; 9000];
        let shown = cut_bytes(&long).to_string();
        assert!(shown.len() < 200, "{shown}");
        assert!(shown.contains("more bytes"), "{shown}");
    }
}
