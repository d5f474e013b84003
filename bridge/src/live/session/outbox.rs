//! The write side of a browser's WebSocket: everything a session says goes
//! through here, under the write time limit, large texts in fragments, and
//! the closing handshake at the end.
//!
//! Batching is explicit: [`Outbox::queue`] adds a message to the socket's
//! write buffer and [`Outbox::flush`] writes what was queued. The session
//! queues while it handles one event (and the frames that arrived with it)
//! and flushes once after it, so replies that belong together leave in one
//! write.

use std::{
    net::SocketAddr,
    sync::{atomic::Ordering::Relaxed, Arc},
    time::Duration,
};

use bytes::Bytes;
use futures_util::{
    stream::{SplitSink, SplitStream},
    Future, SinkExt, StreamExt,
};
use master::{logtext::cut, throttled};
use tokio_tungstenite::tungstenite::{
    error::Error as WsError,
    protocol::{
        frame::{
            coding::{CloseCode, Data, OpCode},
            Frame as WsFrame,
        },
        CloseFrame,
    },
    Message, Utf8Bytes,
};
use tokio_util::sync::CancellationToken;
use tracing::debug;

use super::{Handle, WebSocket};
use crate::{config::WS_FRAGMENT, metrics::Metrics};

/// How a session ends, when it does.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Close {
    /// Send a close frame with this code and reason.
    With(CloseCode, &'static str),
    /// The browser is gone or already closed; just drop the socket.
    Quietly,
}

/// The socket's write side, owned by one session.
pub(crate) struct Outbox {
    sink: SplitSink<WebSocket, Message>,
    peer: SocketAddr,
    write_timeout: Duration,
    close_wait: Duration,
    cancel: CancellationToken,
    metrics: Arc<Metrics>,
    /// Something was queued since the last flush.
    unflushed: bool,
}

impl Outbox {
    /// The outbox of `peer`'s socket, whose read side the session keeps.
    pub(crate) fn new(
        sink: SplitSink<WebSocket, Message>,
        peer: SocketAddr,
        handle: &Handle,
    ) -> Self {
        Self {
            sink,
            peer,
            write_timeout: handle.config.write_timeout,
            close_wait: handle.config.close_wait,
            cancel: handle.cancel.clone(),
            metrics: handle.metrics.clone(),
            unflushed: false,
        }
    }

    /// Queues `msg` for the next [`Outbox::flush`]; only what overflows the
    /// socket's write buffer is written now. A browser that does not take
    /// that in time, or a shutdown meanwhile, ends the session.
    pub(crate) async fn queue(&mut self, msg: Message) -> Result<(), Close> {
        let counts = matches!(msg, Message::Text(_));
        let sink = &mut self.sink;
        let feed = async {
            // A large text leaves in fragments: tungstenite's write buffer
            // then grows to one fragment, not to the whole message.
            match msg {
                Message::Text(text) if text.len() > WS_FRAGMENT => {
                    for frame in fragments(text) {
                        sink.feed(frame).await?;
                    }
                    Ok(())
                }
                msg => sink.feed(msg).await,
            }
        };
        timed(
            self.write_timeout,
            &self.cancel,
            self.peer,
            &self.metrics,
            feed,
        )
        .await?;
        self.unflushed = true;
        if counts {
            self.metrics.frames_out.fetch_add(1, Relaxed);
        }
        Ok(())
    }

    /// Writes everything queued since the last flush (nothing to write:
    /// nothing happens).
    pub(crate) async fn flush(&mut self) -> Result<(), Close> {
        if !self.unflushed {
            return Ok(());
        }
        timed(
            self.write_timeout,
            &self.cancel,
            self.peer,
            &self.metrics,
            self.sink.flush(),
        )
        .await?;
        self.unflushed = false;
        Ok(())
    }

    /// Sends a close frame (after whatever is queued) and waits briefly for
    /// the browser's answer on `reader`, so the close frame is not lost to
    /// a connection reset.
    pub(crate) async fn close(
        mut self,
        reader: &mut SplitStream<WebSocket>,
        code: CloseCode,
        reason: &'static str,
    ) {
        let frame = CloseFrame {
            code,
            reason: Utf8Bytes::from_static(reason),
        };
        let sent = tokio::time::timeout(
            self.write_timeout.min(Duration::from_secs(1)),
            self.sink.send(Message::Close(Some(frame))),
        )
        .await;
        if !matches!(sent, Ok(Ok(()))) {
            return;
        }
        let _ = tokio::time::timeout(self.close_wait, async {
            while let Some(Ok(_)) = reader.next().await {}
        })
        .await;
        if matches!(code, CloseCode::Size | CloseCode::Policy) {
            // The oversized frame's (or the flood's) bytes may still be
            // unread: closing now would reset the connection before the
            // browser reads our close.
            tokio::time::sleep(Duration::from_millis(200)).await;
        }
    }
}

/// Runs one write under the time limit, giving up at shutdown.
async fn timed(
    limit: Duration,
    cancel: &CancellationToken,
    peer: SocketAddr,
    metrics: &Metrics,
    write: impl Future<Output = Result<(), WsError>>,
) -> Result<(), Close> {
    let written = tokio::select! {
        r = tokio::time::timeout(limit, write) => r,
        () = cancel.cancelled() => return Err(Close::Quietly),
    };
    match written {
        Ok(Ok(())) => Ok(()),
        Ok(Err(e)) => {
            debug!(%peer, error = %cut(&e), "write failed");
            Err(Close::Quietly)
        }
        Err(_) => {
            metrics.closed_not_reading.fetch_add(1, Relaxed);
            throttled!(info, %peer, "browser does not read; dropping it");
            Err(Close::Quietly)
        }
    }
}

/// `text` as fragments of at most [`WS_FRAGMENT`] bytes (cut at character
/// boundaries) sharing its buffer.
fn fragments(text: Utf8Bytes) -> Vec<Message> {
    let mut cuts = Vec::with_capacity(text.len() / WS_FRAGMENT + 2);
    let mut start = 0;
    while start < text.len() {
        let mut end = (start + WS_FRAGMENT).min(text.len());
        while !text.is_char_boundary(end) {
            end -= 1;
        }
        cuts.push((start, end));
        start = end;
    }
    let bytes = Bytes::from(text);
    let last = cuts.len() - 1;
    cuts.into_iter()
        .enumerate()
        .map(|(i, (start, end))| {
            let opcode = if i == 0 { Data::Text } else { Data::Continue };
            Message::Frame(WsFrame::message(
                bytes.slice(start..end),
                OpCode::Data(opcode),
                i == last,
            ))
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn payload(msg: &Message) -> (&[u8], OpCode, bool) {
        match msg {
            Message::Frame(f) => (f.payload(), f.header().opcode, f.header().is_final),
            other => panic!("not a frame: {other:?}"),
        }
    }

    #[test]
    fn fragments_cover_the_text_at_char_boundaries() {
        // Two-byte characters, so some cuts fall inside one.
        let text = format!("x{}", "é".repeat(WS_FRAGMENT * 2));
        let frames = fragments(Utf8Bytes::from(text.clone()));
        assert_eq!(frames.len(), 5);
        let mut joined = Vec::new();
        for (i, frame) in frames.iter().enumerate() {
            let (bytes, opcode, fin) = payload(frame);
            assert!(bytes.len() <= WS_FRAGMENT && !bytes.is_empty());
            assert!(std::str::from_utf8(bytes).is_ok());
            let want = if i == 0 { Data::Text } else { Data::Continue };
            assert_eq!(opcode, OpCode::Data(want));
            assert_eq!(fin, i == frames.len() - 1);
            joined.extend_from_slice(bytes);
        }
        assert_eq!(joined, text.as_bytes());
    }

    #[test]
    fn an_exact_multiple_has_no_empty_fragment() {
        let frames = fragments(Utf8Bytes::from("y".repeat(WS_FRAGMENT * 2)));
        assert_eq!(frames.len(), 2);
        assert!(payload(&frames[1]).2);
    }
}
