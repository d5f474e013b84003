//! The master's stream framing, `[decimal length][JSON][0x0A]`, where the
//! length counts the JSON bytes plus the newline (`docs/protocol.md` §1).
//!
//! [`FrameDecoder`] is a plain state machine over a byte buffer so that it is
//! usable without tokio; the `codec` feature wraps it as a tokio-util codec.
//! It never asks for more than `max_digits + max_len` buffered bytes: oversize
//! frames and garbage are skipped as they arrive.

use std::ops::Range;

use crate::MAX_FRAME_LEN;

/// Digits allowed in the length field of frames sent to the master.
pub const MAX_LENGTH_DIGITS: usize = 6;

/// Appends one framed message to `out`.
pub fn encode_frame(json: &[u8], out: &mut Vec<u8>) {
    out.reserve(json.len() + 12);
    out.extend_from_slice((json.len() + 1).to_string().as_bytes());
    out.extend_from_slice(json);
    out.push(b'\n');
}

/// One framed message as a new buffer.
pub fn frame(json: &[u8]) -> Vec<u8> {
    let mut out = Vec::new();
    encode_frame(json, &mut out);
    out
}

/// Why bytes on the stream were dropped. Logged by readers, never answered.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum DiscardReason {
    #[error("frame of {0} bytes exceeds the limit; skipped")]
    Oversize(usize),
    #[error("length field is not 1-{0} ASCII digits or is zero")]
    BadLength(usize),
    #[error("frame does not end with a newline")]
    BadTerminator,
    #[error("line without a length prefix is not a {{...}} message")]
    Garbage,
    #[error("bare JSON line longer than the frame limit")]
    LineTooLong,
}

/// The outcome of one [`FrameDecoder::step`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Step {
    /// Drop `consumed` bytes from the front of the buffer and read more.
    NeedMore { consumed: usize },
    /// `json` (a range of the buffer given) is one message; then drop `consumed`.
    Frame { consumed: usize, json: Range<usize> },
    /// Drop `consumed` bytes; the reader is resynchronising for `reason`.
    Discarded {
        consumed: usize,
        reason: DiscardReason,
    },
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum State {
    Start,
    /// Drop everything up to and including the next 0x0A.
    SkipLine,
    /// Drop this many more bytes of an oversize frame.
    SkipBytes(usize),
    /// The buffer starts with a bare `{...}` line whose first `scanned`
    /// bytes hold no newline: the next step searches only what came after,
    /// so a long unterminated line costs linear, not quadratic, time.
    BareLine {
        scanned: usize,
    },
}

/// Incremental decoder for the length-prefixed stream, with the contract's
/// resynchronisation rules and the terminal-friendly bare `{...}` line.
#[derive(Debug, Clone)]
pub struct FrameDecoder {
    max_len: usize,
    max_digits: usize,
    state: State,
    /// Bytes searched for a newline so far (the linear-time test reads it).
    #[cfg(test)]
    searched: usize,
}

impl Default for FrameDecoder {
    /// The limits of the master's inbound side: 64 KiB frames, 6 digits.
    fn default() -> Self {
        Self::new(MAX_FRAME_LEN, MAX_LENGTH_DIGITS)
    }
}

impl FrameDecoder {
    /// A decoder for frames of at most `max_len` bytes (JSON plus newline)
    /// whose length field has at most `max_digits` digits. Readers of the
    /// master's replies need larger limits than the master's 64 KiB.
    pub fn new(max_len: usize, max_digits: usize) -> Self {
        Self {
            max_len,
            max_digits,
            state: State::Start,
            #[cfg(test)]
            searched: 0,
        }
    }

    /// The most bytes the decoder may need buffered at once.
    pub fn max_buffered(&self) -> usize {
        self.max_len + self.max_digits
    }

    /// Examines `buf` (unconsumed bytes, oldest first) and says what to do.
    /// Between calls `buf` must start with the bytes the previous step did
    /// not consume (new bytes appended after them): the decoder remembers
    /// how far it has already looked.
    pub fn step(&mut self, buf: &[u8]) -> Step {
        let mut pos = 0;
        loop {
            let rest = &buf[pos..];
            match self.state {
                State::SkipBytes(remaining) => {
                    let n = remaining.min(rest.len());
                    pos += n;
                    if n == remaining {
                        self.state = State::Start;
                    } else {
                        self.state = State::SkipBytes(remaining - n);
                        return Step::NeedMore { consumed: pos };
                    }
                }
                State::SkipLine => match memchr(b'\n', rest) {
                    Some(i) => {
                        pos += i + 1;
                        self.state = State::Start;
                    }
                    None => {
                        return Step::NeedMore {
                            consumed: buf.len(),
                        }
                    }
                },
                State::BareLine { scanned } => return self.bare_line(buf, pos, scanned),
                State::Start => {
                    let Some(&first) = rest.first() else {
                        return Step::NeedMore { consumed: pos };
                    };
                    match first {
                        b' ' | b'\t' | b'\r' | b'\n' => pos += 1,
                        b'0'..=b'9' => return self.length_prefixed(buf, pos),
                        b'{' => return self.bare_line(buf, pos, 0),
                        _ => {
                            self.state = State::SkipLine;
                            return Step::Discarded {
                                consumed: pos,
                                reason: DiscardReason::Garbage,
                            };
                        }
                    }
                }
            }
        }
    }

    fn length_prefixed(&mut self, buf: &[u8], start: usize) -> Step {
        let rest = &buf[start..];
        let digits = rest
            .iter()
            .take(self.max_digits + 1)
            .take_while(|b| b.is_ascii_digit())
            .count();
        if digits > self.max_digits {
            self.state = State::SkipLine;
            return Step::Discarded {
                consumed: start,
                reason: DiscardReason::BadLength(self.max_digits),
            };
        }
        if digits == rest.len() {
            return Step::NeedMore { consumed: start };
        }
        // At most `max_digits` ASCII digits: parsing cannot fail for sane limits.
        let len = std::str::from_utf8(&rest[..digits])
            .ok()
            .and_then(|s| s.parse::<usize>().ok())
            .unwrap_or(0);
        if len == 0 {
            self.state = State::SkipLine;
            return Step::Discarded {
                consumed: start,
                reason: DiscardReason::BadLength(self.max_digits),
            };
        }
        if len > self.max_len {
            self.state = State::SkipBytes(len);
            return Step::Discarded {
                consumed: start + digits,
                reason: DiscardReason::Oversize(len),
            };
        }
        let body = &rest[digits..];
        if body.len() < len {
            return Step::NeedMore { consumed: start };
        }
        let json_start = start + digits;
        if body[len - 1] == b'\n' {
            return Step::Frame {
                consumed: json_start + len,
                json: json_start..json_start + len - 1,
            };
        }
        // Wrong length: resynchronise at the first newline after the digits,
        // which usually ends the message the length was meant for.
        let consumed = match memchr(b'\n', &body[..len]) {
            Some(i) => json_start + i + 1,
            None => {
                self.state = State::SkipLine;
                json_start + len
            }
        };
        Step::Discarded {
            consumed,
            reason: DiscardReason::BadTerminator,
        }
    }

    /// A bare line starting at `start`, of which the first `scanned` bytes
    /// are known to hold no newline.
    fn bare_line(&mut self, buf: &[u8], start: usize, scanned: usize) -> Step {
        let rest = &buf[start..];
        let window = &rest[..rest.len().min(self.max_len)];
        let from = scanned.min(window.len());
        #[cfg(test)]
        {
            self.searched += window.len() - from;
        }
        self.state = State::Start;
        match memchr(b'\n', &window[from..]) {
            Some(i) => Step::Frame {
                consumed: start + from + i + 1,
                json: start..start + from + i,
            },
            None if rest.len() >= self.max_len => {
                self.state = State::SkipLine;
                Step::Discarded {
                    consumed: start + window.len(),
                    reason: DiscardReason::LineTooLong,
                }
            }
            None => {
                self.state = State::BareLine {
                    scanned: window.len(),
                };
                Step::NeedMore { consumed: start }
            }
        }
    }
}

fn memchr(needle: u8, hay: &[u8]) -> Option<usize> {
    hay.iter().position(|&b| b == needle)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Feeds `input` in the given chunks, the way a socket might deliver it,
    /// and returns every message and discard in order.
    pub(crate) fn run(
        dec: &mut FrameDecoder,
        chunks: &[&[u8]],
    ) -> Vec<Result<String, DiscardReason>> {
        let mut out = Vec::new();
        let mut buf: Vec<u8> = Vec::new();
        for chunk in chunks {
            buf.extend_from_slice(chunk);
            loop {
                match dec.step(&buf) {
                    Step::NeedMore { consumed } => {
                        buf.drain(..consumed);
                        break;
                    }
                    Step::Frame { consumed, json } => {
                        out.push(Ok(String::from_utf8_lossy(&buf[json]).into_owned()));
                        buf.drain(..consumed);
                    }
                    Step::Discarded { consumed, reason } => {
                        out.push(Err(reason));
                        buf.drain(..consumed);
                    }
                }
                assert!(buf.len() <= dec.max_buffered() + chunk.len());
            }
        }
        out
    }

    fn whole(input: &[u8]) -> Vec<Result<String, DiscardReason>> {
        run(&mut FrameDecoder::default(), &[input])
    }

    #[test]
    fn contract_examples() {
        assert_eq!(
            whole(b"17{\"Hallo\":\"Welt\"}\n"),
            vec![Ok(r#"{"Hallo":"Welt"}"#.to_string())]
        );
        let uni = "31{\"universität\":\"TU Chemnitz\"}\n";
        assert_eq!(
            whole(uni.as_bytes()),
            vec![Ok(r#"{"universität":"TU Chemnitz"}"#.to_string())]
        );
    }

    #[test]
    fn encode_counts_bytes_not_chars() {
        assert_eq!(
            frame("{\"universität\":\"TU Chemnitz\"}".as_bytes()),
            "31{\"universität\":\"TU Chemnitz\"}\n".as_bytes()
        );
    }

    #[test]
    fn multi_line_json() {
        let json = "{\n  \"command\": \"msQueryGameServers\"\n}";
        let framed = frame(json.as_bytes());
        assert_eq!(whole(&framed), vec![Ok(json.to_string())]);
    }

    #[test]
    fn bare_lines_and_blank_lines() {
        assert_eq!(
            whole(b"\r\n{\"command\":\"msQueryGameServers\"}\r\n\n"),
            vec![Ok("{\"command\":\"msQueryGameServers\"}\r".to_string())]
        );
    }

    #[test]
    fn garbage_resyncs_at_newline() {
        let got = whole(b"hello world\n17{\"Hallo\":\"Welt\"}\n");
        assert_eq!(
            got,
            vec![
                Err(DiscardReason::Garbage),
                Ok(r#"{"Hallo":"Welt"}"#.into())
            ]
        );
    }

    #[test]
    fn seven_digits_is_a_bad_length() {
        let got = whole(b"1000000{}\n17{\"Hallo\":\"Welt\"}\n");
        assert_eq!(
            got,
            vec![
                Err(DiscardReason::BadLength(6)),
                Ok(r#"{"Hallo":"Welt"}"#.into())
            ]
        );
        let got = whole(b"0\n3{}\n");
        assert_eq!(got, vec![Err(DiscardReason::BadLength(6)), Ok("{}".into())]);
    }

    #[test]
    fn wrong_terminator_resyncs() {
        // Length too short: the declared region ends inside the JSON.
        let got = whole(b"10{\"Hallo\":\"Welt\"}\n3{}\n");
        assert_eq!(
            got,
            vec![Err(DiscardReason::BadTerminator), Ok("{}".into())]
        );
        // Length too long: the next message is recovered from the region.
        let got = whole(b"20{\"Hallo\":\"Welt\"}\n3{}\n");
        assert_eq!(
            got,
            vec![Err(DiscardReason::BadTerminator), Ok("{}".into())]
        );
    }

    #[test]
    fn oversize_is_skipped_without_buffering() {
        let mut dec = FrameDecoder::default();
        let len = 100_000usize;
        let mut chunks: Vec<Vec<u8>> = vec![format!("{len}").into_bytes()];
        let body = vec![b'x'; len];
        chunks.extend(body.chunks(4096).map(<[u8]>::to_vec));
        chunks.push(b"3{}\n".to_vec());
        let refs: Vec<&[u8]> = chunks.iter().map(Vec::as_slice).collect();
        let got = run(&mut dec, &refs);
        assert_eq!(
            got,
            vec![Err(DiscardReason::Oversize(len)), Ok("{}".into())]
        );
        // Exactly at the limit is accepted.
        let json = format!("{{\"a\":\"{}\"}}", "y".repeat(MAX_FRAME_LEN - 9));
        let framed = frame(json.as_bytes());
        assert!(framed.starts_with(b"65536{"));
        assert_eq!(whole(&framed), vec![Ok(json)]);
    }

    /// An unterminated bare line delivered a byte at a time is searched once,
    /// not once per read (which cost the square of its length).
    #[test]
    fn bare_line_is_scanned_once_however_it_arrives() {
        let mut dec = FrameDecoder::default();
        let mut line = vec![b'{'];
        line.extend(std::iter::repeat_n(b'x', MAX_FRAME_LEN - 2));
        line.push(b'\n');
        let chunks: Vec<&[u8]> = line.chunks(1).collect();
        let got = run(&mut dec, &chunks);
        assert_eq!(got.len(), 1);
        assert!(got[0].is_ok());
        assert!(
            dec.searched <= 2 * line.len(),
            "searched {} bytes for a line of {}",
            dec.searched,
            line.len()
        );
        // The same holds for a line too long to keep: skipped after one pass.
        let mut dec = FrameDecoder::new(4096, MAX_LENGTH_DIGITS);
        let long = vec![b'{'; 10_000];
        let mut chunks: Vec<&[u8]> = long.chunks(3).collect();
        chunks.push(b"\n3{}\n");
        let got = run(&mut dec, &chunks);
        assert_eq!(got, vec![Err(DiscardReason::LineTooLong), Ok("{}".into())]);
        assert!(dec.searched <= 2 * 4096, "searched {}", dec.searched);
    }

    #[test]
    fn bare_line_too_long() {
        let mut input = vec![b'{'; MAX_FRAME_LEN + 10];
        input.extend_from_slice(b"\n3{}\n");
        assert_eq!(
            whole(&input),
            vec![Err(DiscardReason::LineTooLong), Ok("{}".into())]
        );
    }

    mod props {
        use super::*;
        use proptest::prelude::*;

        /// Small limits keep the every-split test quadratic in a small number.
        fn decoder() -> FrameDecoder {
            FrameDecoder::new(1024, MAX_LENGTH_DIGITS)
        }

        fn stream() -> (Vec<u8>, Vec<Result<String, DiscardReason>>) {
            let mut bytes = Vec::new();
            let mut expected = Vec::new();
            for json in [
                r#"{"command":"msQueryGameServers"}"#,
                "{\"name\":\"轰炸机人\",\n\"x\":[1,2]}",
                r#"{"universität":"TU Chemnitz"}"#,
            ] {
                encode_frame(json.as_bytes(), &mut bytes);
                expected.push(Ok(json.to_string()));
            }
            bytes.extend_from_slice(b"junk line\n");
            expected.push(Err(DiscardReason::Garbage));
            bytes.extend_from_slice(b"{\"bare\":true}\n");
            expected.push(Ok("{\"bare\":true}".into()));
            bytes.extend_from_slice(b"2000");
            bytes.extend(std::iter::repeat_n(b'z', 2000));
            expected.push(Err(DiscardReason::Oversize(2000)));
            encode_frame(b"{}", &mut bytes);
            expected.push(Ok("{}".into()));
            (bytes, expected)
        }

        #[test]
        fn every_single_split_position() {
            let (bytes, expected) = stream();
            for cut in 0..=bytes.len() {
                let got = run(&mut decoder(), &[&bytes[..cut], &bytes[cut..]]);
                assert_eq!(got, expected, "split at {cut}");
            }
        }

        proptest! {
            #[test]
            fn any_chunking(cuts in proptest::collection::vec(0usize..4_000, 0..12)) {
                let (bytes, expected) = stream();
                let mut cuts: Vec<usize> = cuts.into_iter().map(|c| c % (bytes.len() + 1)).collect();
                cuts.sort_unstable();
                let mut chunks = Vec::new();
                let mut prev = 0;
                for c in cuts {
                    chunks.push(&bytes[prev..c]);
                    prev = c;
                }
                chunks.push(&bytes[prev..]);
                prop_assert_eq!(run(&mut decoder(), &chunks), expected);
            }

            #[test]
            fn arbitrary_bytes_never_panic_or_overbuffer(
                data in proptest::collection::vec(any::<u8>(), 0..4096),
                split in 0usize..4096,
            ) {
                let split = split.min(data.len());
                // `run` asserts the buffer bound after every step.
                let _ = run(&mut FrameDecoder::default(), &[&data[..split], &data[split..]]);
            }
        }
    }
}
