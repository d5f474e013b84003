//! Accepting connections (the `Listener`) and serving each one (the
//! `Handler`): admit or refuse the peer, read frames within the rate limit,
//! apply them to the [`Registry`], queue replies.

use std::{
    collections::HashMap,
    future::Future,
    io,
    net::{IpAddr, Ipv4Addr, Ipv6Addr, SocketAddr, SocketAddrV4},
    sync::{Arc, Mutex, MutexGuard},
    time::{Duration, Instant},
};

use bytes::Bytes;
use futures_util::StreamExt;
use ipnet::IpNet;
use protocol::{
    codec::{Frame, FrameCodec},
    Command,
};
use tokio::{
    io::AsyncWriteExt,
    net::{tcp::OwnedWriteHalf, TcpListener, TcpStream},
    sync::mpsc,
};
use tokio_util::{codec::FramedRead, sync::CancellationToken, task::TaskTracker};
use tracing::{debug, error, info, warn};

use crate::{
    bans::BanList,
    limits::{Admission, LogThrottle, Refusal, Slot, TokenBucket, Verdict},
    registry::{ConnId, Registry},
};

/// Tunables of a master; the defaults are what the binary uses.
#[derive(Debug, Clone)]
pub struct Config {
    /// Connections served at once, exempt ones included; a connection
    /// beyond it is closed at once.
    pub max_connections: usize,
    /// Connections served at once from one address (IPv6: one /64), so one
    /// host cannot take every slot; a connection beyond it is closed at once.
    pub max_per_address: usize,
    /// Networks the per-address cap and the message rate limit do not apply
    /// to: hosting providers with many servers behind one address, or an
    /// embedding bridge's own loopback connections.
    pub exempt: Vec<IpNet>,
    /// Replies queued for one connection before it counts as not reading and
    /// is closed. Replies share the cached list, so a full queue costs little.
    pub outbound_queue: usize,
    /// Idle time before TCP keepalive probes start, so vanished peers' servers
    /// are removed even if they never send a FIN.
    pub keepalive: Duration,
    /// How long shutdown waits for connections to finish.
    pub shutdown_grace: Duration,
    /// A connection that has sent no valid message this long after it was
    /// accepted is closed, so silent connections cannot hold slots.
    pub first_message_timeout: Duration,
    /// Messages a connection may send per second on average.
    pub message_rate: u32,
    /// Messages a connection may send at once before the rate applies.
    pub message_burst: u32,
    /// Messages over the rate (discarded) after which the connection is
    /// closed, counted until the peer is quiet long enough to fill its burst.
    pub flood_close_after: u32,
    /// Discard registrations whose `serverAddress` is not the IP address
    /// the connection comes from (hostnames included).
    pub require_peer_address: bool,
}

impl Config {
    /// Where the binary listens unless told: the specification's port, on
    /// loopback (the bridge's embedded master uses it too).
    pub const DEFAULT_LISTEN: SocketAddr = SocketAddr::V4(SocketAddrV4::new(
        Ipv4Addr::LOCALHOST,
        protocol::MASTER_PORT,
    ));
    /// Default of [`Config::max_connections`].
    pub const DEFAULT_MAX_CONNECTIONS: usize = 10_000;
    /// Default of [`Config::keepalive`].
    pub const DEFAULT_KEEPALIVE: Duration = Duration::from_secs(30);
    /// Default of [`Config::max_per_address`], in the spirit of dpmaster's 32.
    pub const DEFAULT_MAX_PER_ADDRESS: usize = 32;
    /// Default of [`Config::first_message_timeout`].
    pub const DEFAULT_FIRST_MESSAGE_TIMEOUT: Duration = Duration::from_secs(10);
    /// [`Config::DEFAULT_FIRST_MESSAGE_TIMEOUT`] as the binary's flag writes it.
    pub const DEFAULT_FIRST_MESSAGE_TIMEOUT_TEXT: &'static str = "10s";
    /// Default of [`Config::message_rate`].
    pub const DEFAULT_MESSAGE_RATE: u32 = 20;
    /// Default of [`Config::message_burst`].
    pub const DEFAULT_MESSAGE_BURST: u32 = 60;
    /// Default of [`Config::flood_close_after`].
    pub const DEFAULT_FLOOD_CLOSE_AFTER: u32 = 200;
}

impl Default for Config {
    fn default() -> Self {
        Self {
            max_connections: Self::DEFAULT_MAX_CONNECTIONS,
            max_per_address: Self::DEFAULT_MAX_PER_ADDRESS,
            exempt: Vec::new(),
            outbound_queue: 16,
            keepalive: Self::DEFAULT_KEEPALIVE,
            shutdown_grace: Duration::from_secs(3),
            first_message_timeout: Self::DEFAULT_FIRST_MESSAGE_TIMEOUT,
            message_rate: Self::DEFAULT_MESSAGE_RATE,
            message_burst: Self::DEFAULT_MESSAGE_BURST,
            flood_close_after: Self::DEFAULT_FLOOD_CLOSE_AFTER,
            require_peer_address: false,
        }
    }
}

/// A [`Config`] value the master cannot work with.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ConfigError {
    #[error("{0} must be at least 1")]
    Zero(&'static str),
    #[error("{0} must not be zero")]
    ZeroDuration(&'static str),
}

impl Config {
    /// The defaults for a master embedded in a program (the bridge) that
    /// connects to it at `listen`: the address those connections come from
    /// is exempt, since the program holds one connection per admin and
    /// limits its own clients. Game servers on that address are exempt too.
    pub fn embedded(listen: SocketAddr) -> Self {
        let own = match listen.ip() {
            IpAddr::V4(ip) if ip.is_unspecified() => IpAddr::V4(Ipv4Addr::LOCALHOST),
            IpAddr::V6(ip) if ip.is_unspecified() => IpAddr::V6(Ipv6Addr::LOCALHOST),
            ip => ip.to_canonical(),
        };
        Self {
            exempt: vec![IpNet::from(own)],
            ..Self::default()
        }
    }

    /// Checks the values a program took from its user; [`Master::run`]
    /// refuses to start with a configuration that fails this.
    pub fn validate(&self) -> Result<(), ConfigError> {
        let counts = [
            (
                self.max_connections,
                "the connection cap (--max-connections)",
            ),
            (
                self.max_per_address,
                "the per-address cap (--max-per-address)",
            ),
            (self.outbound_queue, "the reply queue"),
            (
                self.message_rate as usize,
                "the message rate (--message-rate)",
            ),
            (
                self.message_burst as usize,
                "the message burst (--message-burst)",
            ),
            (
                self.flood_close_after as usize,
                "the flood limit (--flood-close-after)",
            ),
        ];
        if let Some((_, what)) = counts.iter().find(|(n, _)| *n == 0) {
            return Err(ConfigError::Zero(what));
        }
        let durations = [
            (self.keepalive, "the keepalive time (--keepalive-secs)"),
            (
                self.first_message_timeout,
                "the first-message timeout (--first-message-timeout)",
            ),
        ];
        if let Some((_, what)) = durations.iter().find(|(d, _)| d.is_zero()) {
            return Err(ConfigError::ZeroDuration(what));
        }
        Ok(())
    }
}

/// A master server: its registry plus configuration. Cloning shares the
/// registry, the connection counts and the ban list.
#[derive(Debug, Clone)]
pub struct Master {
    registry: Arc<Registry>,
    config: Config,
    shared: Arc<Shared>,
}

/// What the listener and the ban-list reloads share.
#[derive(Debug)]
struct Shared {
    admission: Arc<Admission>,
    /// The ban list and the connections it is checked against, under one
    /// lock: a connection is either checked against the new list when
    /// accepted, or found by the reload that installs it.
    guarded: Mutex<Guarded>,
    /// One WARN per interval about refused connections.
    refusals: LogThrottle,
}

#[derive(Debug, Default)]
struct Guarded {
    bans: BanList,
    live: HashMap<ConnId, Live>,
}

#[derive(Debug)]
struct Live {
    ip: IpAddr,
    cancel: CancellationToken,
}

impl Shared {
    fn lock(&self) -> MutexGuard<'_, Guarded> {
        self.guarded.lock().unwrap_or_else(|p| p.into_inner())
    }
}

impl Master {
    pub fn new(config: Config) -> Self {
        let admission = Admission::new(
            config.max_connections,
            config.max_per_address,
            config.exempt.clone(),
        );
        Self {
            registry: Arc::new(Registry::new()),
            config,
            shared: Arc::new(Shared {
                admission,
                guarded: Mutex::default(),
                refusals: LogThrottle::new(Duration::from_secs(10)),
            }),
        }
    }

    /// The live registry, for embedding programs and tests.
    pub fn registry(&self) -> Arc<Registry> {
        self.registry.clone()
    }

    /// Connections served now.
    pub fn connections(&self) -> usize {
        self.shared.admission.total()
    }

    /// Installs a new ban list and closes the connections it now bans;
    /// everyone else stays connected. Returns how many were closed.
    pub fn set_bans(&self, bans: BanList) -> usize {
        let mut guarded = self.shared.lock();
        let mut closed = 0;
        for live in guarded.live.values() {
            if let Some(ban) = bans.find(live.ip) {
                info!(peer = %live.ip, %ban, "closing a connection that is now banned");
                live.cancel.cancel();
                closed += 1;
            }
        }
        guarded.bans = bans;
        closed
    }

    /// Serves `listener` until `shutdown` resolves, then closes every
    /// connection and returns once they are gone (or the grace time is up).
    ///
    /// Every connection is accepted at once and then admitted or closed:
    /// banned peers, peers at their per-address cap and anyone while the
    /// master is full are closed right away, so one host at a cap never
    /// leaves others waiting in the accept backlog.
    pub async fn run(&self, listener: TcpListener, shutdown: impl Future<Output = ()>) {
        if let Err(e) = self.config.validate() {
            error!(error = %e, "the master cannot start");
            return;
        }
        let cancel = CancellationToken::new();
        let tracker = TaskTracker::new();
        tokio::pin!(shutdown);
        loop {
            let (socket, peer) = tokio::select! {
                accepted = accept(&listener) => accepted,
                () = &mut shutdown => break,
            };
            let id = self.registry.next_conn_id();
            let Some((slot, conn_cancel)) = self.admit(id, peer, &cancel) else {
                refuse(socket);
                continue;
            };
            if let Err(e) = configure(&socket, self.config.keepalive, id) {
                debug!(%peer, error = %e, "cannot set socket options");
            }
            let rate = (!slot.exempt()).then(|| {
                TokenBucket::new(
                    self.config.message_rate,
                    self.config.message_burst,
                    self.config.flood_close_after,
                    Instant::now(),
                )
            });
            let handler = Handler {
                id,
                peer,
                registry: self.registry.clone(),
                cancel: conn_cancel,
                outbound_queue: self.config.outbound_queue,
                first_message_timeout: self.config.first_message_timeout,
                require_peer_address: self.config.require_peer_address,
                rate,
            };
            let admitted = Admitted {
                id,
                shared: self.shared.clone(),
                _slot: slot,
            };
            tracker.spawn(async move {
                handler.run(socket).await;
                drop(admitted);
            });
        }
        info!("master stops accepting; closing connections");
        cancel.cancel();
        tracker.close();
        if tokio::time::timeout(self.config.shutdown_grace, tracker.wait())
            .await
            .is_err()
        {
            warn!("some connections did not close within the grace time");
        }
    }

    /// Checks a new connection against the ban list and the caps; on
    /// admission it is counted and registered for ban-list reloads.
    fn admit(
        &self,
        id: ConnId,
        peer: SocketAddr,
        cancel: &CancellationToken,
    ) -> Option<(Slot, CancellationToken)> {
        let ip = peer.ip().to_canonical();
        let mut guarded = self.shared.lock();
        let refusal = if let Some(ban) = guarded.bans.find(ip) {
            debug!(%peer, %ban, "refused: banned");
            "banned"
        } else {
            match self.shared.admission.admit(ip) {
                Ok(slot) => {
                    let conn_cancel = cancel.child_token();
                    guarded.live.insert(
                        id,
                        Live {
                            ip,
                            cancel: conn_cancel.clone(),
                        },
                    );
                    return Some((slot, conn_cancel));
                }
                Err(Refusal::Full) => "the master serves --max-connections already",
                Err(Refusal::PerAddress) => "the address holds --max-per-address already",
            }
        };
        drop(guarded);
        debug!(%peer, reason = refusal, "connection refused");
        if let Some(held_back) = self.shared.refusals.allow(Instant::now()) {
            warn!(%peer, reason = refusal, "refusing connections (one line per 10 s; {held_back} more refused since the last)");
        }
        None
    }
}

/// An admitted connection's entries in the counts and in the list that ban
/// reloads check; dropped when its task ends, even by a panic.
struct Admitted {
    id: ConnId,
    shared: Arc<Shared>,
    _slot: Slot,
}

impl Drop for Admitted {
    fn drop(&mut self) {
        self.shared.lock().live.remove(&self.id);
    }
}

/// Closes a refused connection with a reset: nothing is owed to it, and the
/// master keeps no TIME_WAIT state for a flood of them.
fn refuse(socket: TcpStream) {
    let _ = socket2::SockRef::from(&socket).set_linger(Some(Duration::ZERO));
    drop(socket);
}

/// Binds a listener with a deep accept backlog: when thousands of game servers
/// reconnect at once (after a master restart), a short backlog would drop
/// handshakes the kernel already acknowledged.
pub fn bind(addr: SocketAddr) -> io::Result<TcpListener> {
    let socket = if addr.is_ipv4() {
        tokio::net::TcpSocket::new_v4()?
    } else {
        tokio::net::TcpSocket::new_v6()?
    };
    socket.set_reuseaddr(true)?;
    socket.bind(addr)?;
    socket.listen(4096)
}

/// Runs a master with `config` on `listener` until `shutdown` resolves.
pub async fn run(listener: TcpListener, config: Config, shutdown: impl Future<Output = ()>) {
    Master::new(config).run(listener, shutdown).await;
}

/// Accepts the next connection, backing off on errors such as running out of
/// file descriptors instead of spinning or giving up.
async fn accept(listener: &TcpListener) -> (TcpStream, SocketAddr) {
    let mut backoff = Duration::from_millis(10);
    loop {
        match listener.accept().await {
            Ok(accepted) => return accepted,
            Err(e) => {
                warn!(error = %e, "accept failed; retrying in {backoff:?}");
                tokio::time::sleep(backoff).await;
                backoff = (backoff * 2).min(Duration::from_secs(1));
            }
        }
    }
}

/// Sets TCP_NODELAY (replies are single writes) and keepalive. The idle time
/// is spread over [keepalive, 1.5 × keepalive) by connection id: servers that
/// registered in one burst would otherwise be probed in one burst, and on
/// loopback a burst of thousands of probes overflows the kernel's backlog
/// queue (`netdev_max_backlog`), so healthy peers were dropped as dead.
fn configure(socket: &TcpStream, keepalive: Duration, id: ConnId) -> io::Result<()> {
    socket.set_nodelay(true)?;
    let spread_ms = (keepalive.as_millis() as u64 / 2).max(1);
    let jitter = Duration::from_millis(id.wrapping_mul(7919) % spread_ms);
    let ka = socket2::TcpKeepalive::new()
        .with_time(keepalive + jitter)
        .with_interval(Duration::from_secs(10) + jitter / 4)
        .with_retries(6);
    socket2::SockRef::from(socket).set_tcp_keepalive(&ka)
}

/// Serves one connection: its registration lives exactly as long as it does.
struct Handler {
    id: ConnId,
    peer: SocketAddr,
    registry: Arc<Registry>,
    cancel: CancellationToken,
    outbound_queue: usize,
    first_message_timeout: Duration,
    require_peer_address: bool,
    /// `None` for exempt peers.
    rate: Option<TokenBucket>,
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
    async fn run(mut self, socket: TcpStream) {
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
                    info!(peer = %self.peer, "no valid message within the first-message timeout; closing");
                    break;
                }
            };
            let frame = match frame {
                None => break,
                Some(Err(e)) => {
                    debug!(peer = %self.peer, error = %e, "read failed");
                    break;
                }
                Some(Ok(frame)) => frame,
            };
            if let Some(bucket) = self.rate.as_mut() {
                match bucket.take(Instant::now()) {
                    Verdict::Pass => {}
                    Verdict::Excess => {
                        if !warned_rate {
                            info!(peer = %self.peer, "over the message rate; discarding the excess");
                            warned_rate = true;
                        }
                        continue;
                    }
                    Verdict::Flood => {
                        warn!(peer = %self.peer, "message flood; closing");
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
                                warn!(peer = %self.peer, "client does not read its replies; closing");
                                abort_writes = true;
                            }
                            break;
                        }
                    }
                }
            }
        }
        if self.registry.unregister(self.id) {
            info!(peer = %self.peer, "connection closed; its server is removed");
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
    /// connection's first registration, so a flood cannot flood the log.
    fn apply(&self, json: &[u8], registered_once: &mut bool) -> Applied {
        let command = match Command::parse(json) {
            Ok(c) => c,
            Err(e) => {
                debug!(peer = %self.peer, error = %e, "discarded message");
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
                    debug!(peer = %self.peer, address = %reg.address, "registration for another address discarded");
                } else {
                    if *registered_once {
                        debug!(peer = %self.peer, name = %reg.name, address = %reg.address, port = reg.port.get(), "registered again");
                    } else {
                        info!(peer = %self.peer, name = %reg.name, address = %reg.address, port = reg.port.get(), "registered");
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

    #[test]
    fn an_embedded_master_exempts_the_address_its_host_dials_from() {
        let exempt = |listen: &str| Config::embedded(listen.parse().unwrap()).exempt;
        assert_eq!(exempt("127.0.0.1:51963"), ["127.0.0.1/32".parse().unwrap()]);
        assert_eq!(exempt("0.0.0.0:51963"), ["127.0.0.1/32".parse().unwrap()]);
        assert_eq!(exempt("[::]:51963"), ["::1/128".parse().unwrap()]);
        assert_eq!(exempt("192.0.2.1:51963"), ["192.0.2.1/32".parse().unwrap()]);
    }

    #[test]
    fn zero_values_are_refused_with_their_flag() {
        assert_eq!(Config::default().validate(), Ok(()));
        let err = Config {
            max_per_address: 0,
            ..Config::default()
        }
        .validate()
        .unwrap_err();
        assert!(err.to_string().contains("--max-per-address"), "{err}");
        let err = Config {
            first_message_timeout: Duration::ZERO,
            ..Config::default()
        }
        .validate()
        .unwrap_err();
        assert!(err.to_string().contains("--first-message-timeout"), "{err}");
        assert!(Config {
            outbound_queue: 0,
            ..Config::default()
        }
        .validate()
        .is_err());
    }
}
