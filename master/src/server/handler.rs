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
    net::{
        tcp::{OwnedReadHalf, OwnedWriteHalf},
        TcpStream,
    },
    sync::mpsc,
};
use tokio_util::{codec::FramedRead, sync::CancellationToken};
use tracing::debug;

use crate::{
    limits::{address_key, RateVerdict, TokenBucket},
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
    pub(super) state: State,
}

/// What a connection has done so far.
#[derive(Debug, Default)]
pub(super) struct State {
    /// A message of the protocol arrived (the first-message timeout ends).
    greeted: bool,
    /// Its first registration was logged; later ones are DEBUG.
    registered_once: bool,
    /// Going over the message rate was logged once.
    warned_rate: bool,
}

/// How a connection ended, which decides what becomes of queued replies.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum End {
    /// The peer left or was timed out: what is queued is still written (a
    /// client may half-close after its query and wait for the answer).
    Flush,
    /// Flooded, stopped reading, or closed by the master (ban, shutdown):
    /// queued replies are dropped.
    Abort,
}

impl Handler {
    /// Serves `socket` until the peer leaves, floods, stalls or is closed;
    /// its registration goes with it.
    pub(super) async fn run(mut self, socket: TcpStream) {
        let (rd, wr) = socket.into_split();
        let mut frames = FramedRead::new(rd, FrameCodec::default());
        let (tx, rx) = mpsc::channel(self.outbound_queue);
        let writer = tokio::spawn(write_replies(wr, rx, self.cancel.clone()));
        debug!(peer = %self.peer, conn = self.id, "connected");
        let end = self.serve(&mut frames, &tx).await;
        if self.registry.unregister(self.id) {
            throttled!(lines = SERVER_EVENTS; info, peer = %self.peer, "connection closed; its server is removed");
        }
        drop(tx);
        if end == End::Abort {
            writer.abort();
        }
        let _ = writer.await;
        debug!(peer = %self.peer, conn = self.id, "disconnected");
    }

    /// Reads and applies frames within the rate limit, queueing replies,
    /// until the connection ends.
    async fn serve(
        &mut self,
        frames: &mut FramedRead<OwnedReadHalf, FrameCodec>,
        replies: &mpsc::Sender<Bytes>,
    ) -> End {
        let first_deadline = tokio::time::Instant::now() + self.first_message_timeout;
        loop {
            let frame = tokio::select! {
                frame = frames.next() => frame,
                () = self.cancel.cancelled() => return End::Abort,
                // A timer per read until the first valid message, and none
                // after it: one left armed would wake every connection once
                // more when it expires, a burst of work proportional to the
                // whole list some seconds after a burst of registrations.
                () = tokio::time::sleep_until(first_deadline), if !self.state.greeted => {
                    throttled!(info, peer = %self.peer, "no valid message within the first-message timeout; closing");
                    return End::Flush;
                }
            };
            let frame = match frame {
                None => return End::Flush,
                Some(Err(e)) => {
                    debug!(peer = %self.peer, error = %cut(&e), "read failed");
                    return End::Flush;
                }
                Some(Ok(frame)) => frame,
            };
            match self.within_rate() {
                RateVerdict::Pass => {}
                RateVerdict::Excess => continue,
                RateVerdict::Flood => return End::Abort,
            }
            let json = match frame {
                Frame::Message(json) => json,
                Frame::Discarded(reason) => {
                    debug!(peer = %self.peer, %reason, "discarded bytes");
                    continue;
                }
            };
            let Some(reply) = self.apply(&json) else {
                continue;
            };
            match replies.try_send(reply) {
                Ok(()) => {}
                Err(mpsc::error::TrySendError::Full(_)) => {
                    throttled!(warn, peer = %self.peer, "client does not read its replies; closing");
                    return End::Abort;
                }
                Err(mpsc::error::TrySendError::Closed(_)) => return End::Flush,
            }
        }
    }

    /// Takes one message from the rate limit (exempt peers have none);
    /// logs the first excess and a flood.
    fn within_rate(&mut self) -> RateVerdict {
        let Some(bucket) = self.rate.as_mut() else {
            return RateVerdict::Pass;
        };
        let verdict = bucket.take(Instant::now());
        match verdict {
            RateVerdict::Pass => {}
            RateVerdict::Excess => {
                if !std::mem::replace(&mut self.state.warned_rate, true) {
                    throttled!(info, peer = %self.peer, "over the message rate; discarding the excess");
                }
            }
            RateVerdict::Flood => {
                throttled!(warn, peer = %self.peer, "message flood; closing");
            }
        }
        verdict
    }

    /// Applies one message and returns its reply, if any. Per-message
    /// events log at DEBUG, except a connection's first registration
    /// (throttled), so a flood cannot flood the log.
    fn apply(&mut self, json: &[u8]) -> Option<Bytes> {
        let command = match Command::parse(json) {
            Ok(c) => c,
            Err(e) => {
                debug!(peer = %self.peer, error = %cut(&e), "discarded message");
                return None;
            }
        };
        self.state.greeted = true;
        match command {
            Command::Register(reg) => {
                let registrant = registrant(reg.address.as_str(), self.peer);
                if self.require_peer_address && registrant.is_some() {
                    debug!(peer = %self.peer, address = %cut(&reg.address), "registration for another address discarded");
                    return None;
                }
                if std::mem::replace(&mut self.state.registered_once, true) {
                    debug!(peer = %self.peer, name = %cut(&reg.name), address = %cut(&reg.address), port = reg.port.get(), "registered again");
                } else {
                    throttled!(lines = SERVER_EVENTS; info, peer = %self.peer, name = %cut(&reg.name), address = %cut(&reg.address), port = reg.port.get(), "registered");
                }
                self.registry.register_by(self.id, reg, registrant);
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
            Command::Query => return Some(self.registry.query_reply()),
            Command::QueryReply(_) => {
                debug!(peer = %self.peer, "a reply sent to the master is discarded");
            }
        }
        None
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

/// Who a registration claiming `address` from `peer` is registered by:
/// `None` when the address is the peer's own ([`is_peer_address`]), else
/// the peer's network, which bridges fold into the key of such a claim
/// (`docs/protocol.md`, "Server keys") and count the history it adds
/// against.
fn registrant(address: &str, peer: SocketAddr) -> Option<IpAddr> {
    (!is_peer_address(address, peer)).then(|| address_key(peer.ip()))
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
    use std::{
        future::Future,
        pin::pin,
        sync::atomic::{AtomicUsize, Ordering},
        task::{Context, Wake, Waker},
    };

    use protocol::{frame::frame, Registration};

    use super::*;

    /// Counts the wake-ups of the future it is given to.
    #[derive(Default)]
    struct Wakes(AtomicUsize);

    impl Wake for Wakes {
        fn wake(self: Arc<Self>) {
            self.0.fetch_add(1, Ordering::SeqCst);
        }
    }

    /// A connection that has sent its registration is not woken when the
    /// first-message timeout passes: a timer left armed would wake every
    /// connection of a burst of registrations again, work in proportion to
    /// the whole list.
    #[tokio::test(start_paused = true)]
    async fn the_first_message_timer_is_gone_once_greeted() {
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let mut client = TcpStream::connect(listener.local_addr().unwrap())
            .await
            .unwrap();
        let (socket, peer) = listener.accept().await.unwrap();
        let registry = Arc::new(Registry::new());
        let timeout = Duration::from_secs(10);
        let mut handler = Handler {
            id: 1,
            peer,
            registry: registry.clone(),
            cancel: CancellationToken::new(),
            outbound_queue: 4,
            first_message_timeout: timeout,
            require_peer_address: false,
            rate: None,
            state: State::default(),
        };
        let (rd, _wr) = socket.into_split();
        let mut frames = FramedRead::new(rd, FrameCodec::default());
        let (tx, _rx) = mpsc::channel(4);
        let mut serve = pin!(handler.serve(&mut frames, &tx));
        let wakes = Arc::new(Wakes::default());
        let waker = Waker::from(wakes.clone());
        let mut poll = || serve.as_mut().poll(&mut Context::from_waker(&waker));
        assert!(poll().is_pending(), "waiting for the first message");
        let reg = Registration::new("a", &peer.ip().to_string(), 20000).unwrap();
        client
            .write_all(&frame(Command::Register(reg).to_json().as_bytes()))
            .await
            .unwrap();
        for _ in 0..1000 {
            if registry.len() == 1 {
                break;
            }
            tokio::task::yield_now().await;
            assert!(poll().is_pending());
        }
        assert_eq!(registry.len(), 1, "registered");
        let before = wakes.0.load(Ordering::SeqCst);
        tokio::time::sleep(timeout * 2).await;
        assert_eq!(
            wakes.0.load(Ordering::SeqCst),
            before,
            "woken by the expired first-message timer"
        );
        assert!(poll().is_pending(), "the connection is still served");
    }

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

    #[test]
    fn a_claim_on_another_address_names_its_registrants_network() {
        let peer: SocketAddr = "127.0.0.2:5000".parse().unwrap();
        assert_eq!(registrant("127.0.0.2", peer), None, "its own");
        assert_eq!(
            registrant("127.0.0.1", peer),
            Some("127.0.0.2".parse().unwrap())
        );
        assert_eq!(
            registrant("game.example", peer),
            Some("127.0.0.2".parse().unwrap()),
            "hostnames are never its own"
        );
        let v6: SocketAddr = "[2001:db8::1:2:3:4]:5000".parse().unwrap();
        assert_eq!(
            registrant("2001:db8::9", v6),
            Some("2001:db8::".parse().unwrap()),
            "an IPv6 registrant is its /64"
        );
    }
}
