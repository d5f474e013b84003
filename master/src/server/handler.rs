//! One connection's life (the `Handler`): read frames within the rate
//! limit, apply them to the [`Registry`], queue replies for the writer task.

use std::{
    net::{IpAddr, SocketAddr},
    sync::Arc,
    time::{Duration, Instant},
};

use bytes::Bytes;
use futures_util::StreamExt;
use protocol::{
    codec::{Frame, FrameCodec},
    Command,
};
use tokio::{
    io::AsyncWriteExt,
    net::{tcp::OwnedWriteHalf, TcpStream},
    sync::mpsc,
};
use tokio_util::{codec::FramedRead, sync::CancellationToken};
use tracing::debug;

use crate::{
    limits::{TokenBucket, Verdict},
    logtext::cut,
    registry::{ConnId, Registry},
    throttled,
};

/// INFO lines per 10 s about servers registering and leaving (the rest,
/// counted, at DEBUG): enough to follow a few servers, while a host that
/// registers and disconnects in a loop writes a few lines, not megabytes.
const SERVER_EVENTS: u32 = 10;

/// Serves one connection: its registration lives exactly as long as it does.
pub(super) struct Handler {
    pub(super) id: ConnId,
    pub(super) peer: SocketAddr,
    pub(super) registry: Arc<Registry>,
    pub(super) cancel: CancellationToken,
    pub(super) outbound_queue: usize,
    pub(super) first_message_timeout: Duration,
    pub(super) require_peer_address: bool,
    /// `None` for exempt peers.
    pub(super) rate: Option<TokenBucket>,
}

/// What became of one message.
struct Applied {
    /// The reply to send, if any.
    reply: Option<Bytes>,
    /// Whether it was a message of the protocol (it ends the first-message
    /// timeout).
    valid: bool,
}

impl Handler {
    /// Serves `socket` until the peer leaves, floods, stalls or is closed.
    pub(super) async fn run(mut self, socket: TcpStream) {
        let (rd, wr) = socket.into_split();
        let mut frames = FramedRead::new(rd, FrameCodec::default());
        let (tx, rx) = mpsc::channel(self.outbound_queue);
        let writer = tokio::spawn(write_replies(wr, rx, self.cancel.clone()));
        debug!(peer = %self.peer, conn = self.id, "connected");
        let first_deadline = tokio::time::sleep(self.first_message_timeout);
        tokio::pin!(first_deadline);
        let mut greeted = false;
        let mut registered_once = false;
        let mut warned_rate = false;
        // Whether the peer stopped reading (then queued replies are dropped),
        // or the master closes the connection on purpose (ban, shutdown).
        let mut abort_writes = false;
        loop {
            let frame = tokio::select! {
                frame = frames.next() => frame,
                () = self.cancel.cancelled() => {
                    abort_writes = true;
                    break;
                }
                () = &mut first_deadline, if !greeted => {
                    throttled!(info, peer = %self.peer, "no valid message within the first-message timeout; closing");
                    break;
                }
            };
            let frame = match frame {
                None => break,
                Some(Err(e)) => {
                    debug!(peer = %self.peer, error = %cut(&e), "read failed");
                    break;
                }
                Some(Ok(frame)) => frame,
            };
            if let Some(bucket) = self.rate.as_mut() {
                match bucket.take(Instant::now()) {
                    Verdict::Pass => {}
                    Verdict::Excess => {
                        if !warned_rate {
                            throttled!(info, peer = %self.peer, "over the message rate; discarding the excess");
                            warned_rate = true;
                        }
                        continue;
                    }
                    Verdict::Flood => {
                        throttled!(warn, peer = %self.peer, "message flood; closing");
                        abort_writes = true;
                        break;
                    }
                }
            }
            match frame {
                Frame::Discarded(reason) => {
                    debug!(peer = %self.peer, %reason, "discarded bytes");
                }
                Frame::Message(json) => {
                    let applied = self.apply(&json, &mut registered_once);
                    greeted |= applied.valid;
                    if let Some(reply) = applied.reply {
                        if let Err(e) = tx.try_send(reply) {
                            if matches!(e, mpsc::error::TrySendError::Full(_)) {
                                throttled!(warn, peer = %self.peer, "client does not read its replies; closing");
                                abort_writes = true;
                            }
                            break;
                        }
                    }
                }
            }
        }
        if self.registry.unregister(self.id) {
            throttled!(lines = SERVER_EVENTS; info, peer = %self.peer, "connection closed; its server is removed");
        }
        drop(tx);
        // The writer flushes what is queued (a client may half-close after
        // its query and still wait for the answer), unless the client stalled,
        // flooded, or the master closes it on purpose.
        if abort_writes {
            writer.abort();
        }
        let _ = writer.await;
        debug!(peer = %self.peer, conn = self.id, "disconnected");
    }

    /// Applies one message. Per-message events log at DEBUG, except a
    /// connection's first registration (throttled), so a flood cannot flood
    /// the log.
    fn apply(&self, json: &[u8], registered_once: &mut bool) -> Applied {
        let command = match Command::parse(json) {
            Ok(c) => c,
            Err(e) => {
                debug!(peer = %self.peer, error = %cut(&e), "discarded message");
                return Applied {
                    reply: None,
                    valid: false,
                };
            }
        };
        let mut reply = None;
        match command {
            Command::Register(reg) => {
                if self.require_peer_address && !is_peer_address(reg.address.as_str(), self.peer) {
                    debug!(peer = %self.peer, address = %cut(&reg.address), "registration for another address discarded");
                } else {
                    if *registered_once {
                        debug!(peer = %self.peer, name = %cut(&reg.name), address = %cut(&reg.address), port = reg.port.get(), "registered again");
                    } else {
                        throttled!(lines = SERVER_EVENTS; info, peer = %self.peer, name = %cut(&reg.name), address = %cut(&reg.address), port = reg.port.get(), "registered");
                        *registered_once = true;
                    }
                    self.registry.register(self.id, reg);
                }
            }
            Command::UpdateStats(stats) => {
                if !self.registry.update_stats(self.id, stats) {
                    debug!(peer = %self.peer, "stats before registration discarded");
                }
            }
            Command::Unregister => {
                if self.registry.unregister(self.id) {
                    debug!(peer = %self.peer, "unregistered");
                }
            }
            Command::Query => reply = Some(self.registry.query_reply()),
            Command::QueryReply(_) => {
                debug!(peer = %self.peer, "a reply sent to the master is discarded");
            }
        }
        Applied { reply, valid: true }
    }
}

/// Whether a registration's `serverAddress` is the connection's own address.
/// Hostnames never are: resolving them would let the peer make the master
/// wait on DNS, and their answer may change after the check anyway.
fn is_peer_address(address: &str, peer: SocketAddr) -> bool {
    address
        .parse::<IpAddr>()
        .is_ok_and(|ip| ip.to_canonical() == peer.ip().to_canonical())
}

async fn write_replies(
    mut wr: OwnedWriteHalf,
    mut rx: mpsc::Receiver<Bytes>,
    cancel: CancellationToken,
) {
    loop {
        let reply = tokio::select! {
            reply = rx.recv() => reply,
            () = cancel.cancelled() => None,
        };
        let Some(reply) = reply else { break };
        let written = tokio::select! {
            r = wr.write_all(&reply) => r,
            () = cancel.cancelled() => break,
        };
        if written.is_err() {
            break;
        }
    }
    let _ = wr.shutdown().await;
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn peer_address_must_be_the_same_ip() {
        let peer: SocketAddr = "127.0.0.2:5000".parse().unwrap();
        assert!(is_peer_address("127.0.0.2", peer));
        assert!(!is_peer_address("127.0.0.3", peer));
        assert!(!is_peer_address("localhost", peer));
        let mapped: SocketAddr = "[::ffff:127.0.0.2]:5000".parse().unwrap();
        assert!(is_peer_address("127.0.0.2", mapped));
        let v6: SocketAddr = "[2001:db8::1]:5000".parse().unwrap();
        assert!(is_peer_address("2001:db8:0::1", v6));
    }
}
