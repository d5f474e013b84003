//! The connection's message rate, shared by the session (text messages,
//! pings, pongs) and by the socket's read side, where [`FrameMeter`] counts
//! continuation frames: tungstenite gathers those into messages without
//! showing them, so a peer sending empty continuations would otherwise
//! keep the bridge parsing for free.

use std::{
    fmt, io,
    pin::Pin,
    sync::{Arc, Mutex, PoisonError},
    task::{Context, Poll},
    time::Instant,
};

use tokio::io::{AsyncRead, AsyncWrite, ReadBuf};

use master::limits::{Forgive, TokenBucket};

use super::SessionSettings;

/// What spending one frame's token came to: over the rate the frame is
/// refused (or dropped), and `flood_close_after` refusals in a row close
/// with 1008.
pub(crate) use master::limits::RateVerdict as Spend;

/// One connection's token bucket, forgiving its refusals at the next frame
/// within the rate.
#[derive(Debug)]
pub(crate) struct Rate(Mutex<TokenBucket>);

impl Rate {
    /// A full bucket with the configured rate, burst and flood threshold.
    pub(crate) fn new(config: &SessionSettings) -> Arc<Self> {
        let bucket = TokenBucket::new(
            config.rate_per_sec,
            config.rate_burst,
            config.flood_close_after,
            Instant::now(),
        );
        Arc::new(Self(Mutex::new(bucket.forgiving(Forgive::OnPass))))
    }

    /// Spends one frame's token.
    pub(crate) fn spend(&self) -> Spend {
        self.0
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .take(Instant::now())
    }
}

/// The read error [`FrameMeter`] gives once continuation frames flooded.
#[derive(Debug)]
pub(crate) struct FrameFlood;

impl fmt::Display for FrameFlood {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("continuation frame flood")
    }
}

impl std::error::Error for FrameFlood {}

/// Whether a read error is [`FrameFlood`].
pub(crate) fn is_flood(e: &io::Error) -> bool {
    e.get_ref().is_some_and(|inner| inner.is::<FrameFlood>())
}

/// Where the parser is in the browser's frames.
#[derive(Debug, Clone, Copy)]
enum Parse {
    Header { buf: [u8; 14], have: usize },
    Payload(u64),
}

impl Parse {
    const START: Self = Parse::Header {
        buf: [0; 14],
        have: 0,
    };

    /// Follows `data` (the next bytes from the browser); returns how many
    /// continuation frames' headers it completed.
    fn feed(&mut self, mut data: &[u8]) -> u32 {
        let mut continuations = 0;
        while !data.is_empty() {
            match self {
                Parse::Payload(left) => {
                    let take = usize::try_from(*left).map_or(data.len(), |l| l.min(data.len()));
                    data = &data[take..];
                    *left -= take as u64;
                    if *left == 0 {
                        *self = Self::START;
                    }
                }
                Parse::Header { buf, have } => {
                    while *have < header_len(&buf[..*have]) && !data.is_empty() {
                        buf[*have] = data[0];
                        *have += 1;
                        data = &data[1..];
                    }
                    if *have < header_len(&buf[..*have]) {
                        continue;
                    }
                    if buf[0] & 0x0f == 0 {
                        continuations += 1;
                    }
                    let len = payload_len(buf);
                    *self = if len == 0 {
                        Self::START
                    } else {
                        Parse::Payload(len)
                    };
                }
            }
        }
        continuations
    }
}

/// A frame header's length, as far as its first bytes tell.
fn header_len(head: &[u8]) -> usize {
    match head {
        [_, b1, ..] => {
            let ext = match b1 & 0x7f {
                126 => 2,
                127 => 8,
                _ => 0,
            };
            2 + ext + if b1 & 0x80 != 0 { 4 } else { 0 }
        }
        _ => 2,
    }
}

/// The payload length of a complete header.
fn payload_len(h: &[u8; 14]) -> u64 {
    match h[1] & 0x7f {
        126 => u64::from(u16::from_be_bytes([h[2], h[3]])),
        127 => u64::from_be_bytes([h[2], h[3], h[4], h[5], h[6], h[7], h[8], h[9]]),
        n => u64::from(n),
    }
}

/// The browser's socket, counting its continuation frames against the
/// connection's [`Rate`]; after a flood the next read fails with
/// [`FrameFlood`] (the bytes already read are handed on first, so the
/// frames stay in step).
#[derive(Debug)]
pub(crate) struct FrameMeter<S> {
    inner: S,
    rate: Arc<Rate>,
    parse: Parse,
    flooded: bool,
}

impl<S> FrameMeter<S> {
    pub(crate) fn new(inner: S, rate: Arc<Rate>) -> Self {
        Self {
            inner,
            rate,
            parse: Parse::START,
            flooded: false,
        }
    }
}

impl<S: AsyncRead + Unpin> AsyncRead for FrameMeter<S> {
    fn poll_read(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<io::Result<()>> {
        if self.flooded {
            return Poll::Ready(Err(io::Error::other(FrameFlood)));
        }
        let before = buf.filled().len();
        let this = &mut *self;
        let polled = Pin::new(&mut this.inner).poll_read(cx, buf);
        if let Poll::Ready(Ok(())) = polled {
            for _ in 0..this.parse.feed(&buf.filled()[before..]) {
                if this.rate.spend() == Spend::Flood {
                    this.flooded = true;
                }
            }
        }
        polled
    }
}

impl<S: AsyncWrite + Unpin> AsyncWrite for FrameMeter<S> {
    fn poll_write(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &[u8],
    ) -> Poll<io::Result<usize>> {
        Pin::new(&mut self.inner).poll_write(cx, buf)
    }

    fn poll_write_vectored(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        bufs: &[io::IoSlice<'_>],
    ) -> Poll<io::Result<usize>> {
        Pin::new(&mut self.inner).poll_write_vectored(cx, bufs)
    }

    fn is_write_vectored(&self) -> bool {
        self.inner.is_write_vectored()
    }

    fn poll_flush(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Pin::new(&mut self.inner).poll_flush(cx)
    }

    fn poll_shutdown(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Pin::new(&mut self.inner).poll_shutdown(cx)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A masked client frame.
    fn frame(opcode: u8, fin: bool, payload: &[u8]) -> Vec<u8> {
        let mut f = vec![opcode | if fin { 0x80 } else { 0 }];
        match payload.len() {
            n if n < 126 => f.push(0x80 | n as u8),
            n if n <= 0xffff => {
                f.push(0x80 | 126);
                f.extend_from_slice(&(n as u16).to_be_bytes());
            }
            n => {
                f.push(0x80 | 127);
                f.extend_from_slice(&(n as u64).to_be_bytes());
            }
        }
        f.extend_from_slice(&[1, 2, 3, 4]);
        f.extend_from_slice(payload);
        f
    }

    #[test]
    fn counts_continuations_however_the_bytes_are_split() {
        let mut stream = frame(1, false, b"{\"com");
        for _ in 0..5 {
            stream.extend(frame(0, false, b""));
        }
        stream.extend(frame(0, false, &[b'x'; 300]));
        stream.extend(frame(9, true, b"ping"));
        stream.extend(frame(0, false, &[b'y'; 70_000]));
        stream.extend(frame(0, true, b"}"));
        stream.extend(frame(1, true, b"text"));
        for chunk in [1, 2, 3, 7, 64, 4096, stream.len()] {
            let mut parse = Parse::START;
            let counted: u32 = stream.chunks(chunk).map(|c| parse.feed(c)).sum();
            assert_eq!(counted, 8, "chunks of {chunk}");
            assert!(matches!(parse, Parse::Header { have: 0, .. }));
        }
    }
}
