//! Accepting connections (the `Listener`) and serving each one (the
//! `Handler`): read frames, apply them to the [`Registry`], queue replies.

use std::{
    future::Future,
    io,
    net::{Ipv4Addr, SocketAddr, SocketAddrV4},
    sync::Arc,
    time::Duration,
};

use bytes::Bytes;
use futures_util::StreamExt;
use protocol::{
    codec::{Frame, FrameCodec},
    Command,
};
use tokio::{
    io::AsyncWriteExt,
    net::{tcp::OwnedWriteHalf, TcpListener, TcpStream},
    sync::{mpsc, Semaphore},
};
use tokio_util::{codec::FramedRead, sync::CancellationToken, task::TaskTracker};
use tracing::{debug, info, warn};

use crate::registry::{ConnId, Registry};

/// Tunables of a master; the defaults are what the binary uses.
#[derive(Debug, Clone)]
pub struct Config {
    /// Connections served at once; further clients wait in the accept backlog.
    pub max_connections: usize,
    /// Replies queued for one connection before it counts as not reading and
    /// is closed. Replies share the cached list, so a full queue costs little.
    pub outbound_queue: usize,
    /// Idle time before TCP keepalive probes start, so vanished peers' servers
    /// are removed even if they never send a FIN.
    pub keepalive: Duration,
    /// How long shutdown waits for connections to finish.
    pub shutdown_grace: Duration,
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
}

impl Default for Config {
    fn default() -> Self {
        Self {
            max_connections: Self::DEFAULT_MAX_CONNECTIONS,
            outbound_queue: 16,
            keepalive: Self::DEFAULT_KEEPALIVE,
            shutdown_grace: Duration::from_secs(3),
        }
    }
}

/// A master server: its registry plus configuration. Cloning shares the registry.
#[derive(Debug, Clone)]
pub struct Master {
    registry: Arc<Registry>,
    config: Config,
}

impl Master {
    pub fn new(config: Config) -> Self {
        Self {
            registry: Arc::new(Registry::new()),
            config,
        }
    }

    /// The live registry, for embedding programs and tests.
    pub fn registry(&self) -> Arc<Registry> {
        self.registry.clone()
    }

    /// Serves `listener` until `shutdown` resolves, then closes every
    /// connection and returns once they are gone (or the grace time is up).
    pub async fn run(&self, listener: TcpListener, shutdown: impl Future<Output = ()>) {
        let limit = Arc::new(Semaphore::new(self.config.max_connections));
        let cancel = CancellationToken::new();
        let tracker = TaskTracker::new();
        tokio::pin!(shutdown);
        loop {
            let permit = tokio::select! {
                permit = limit.clone().acquire_owned() => match permit {
                    Ok(p) => p,
                    Err(_) => break, // the semaphore is never closed
                },
                () = &mut shutdown => break,
            };
            let (socket, peer) = tokio::select! {
                accepted = accept(&listener) => accepted,
                () = &mut shutdown => break,
            };
            let id = self.registry.next_conn_id();
            if let Err(e) = configure(&socket, self.config.keepalive, id) {
                debug!(%peer, error = %e, "cannot set socket options");
            }
            let handler = Handler {
                id,
                peer,
                registry: self.registry.clone(),
                cancel: cancel.child_token(),
                outbound_queue: self.config.outbound_queue,
            };
            tracker.spawn(async move {
                handler.run(socket).await;
                drop(permit);
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
}

impl Handler {
    async fn run(self, socket: TcpStream) {
        let (rd, wr) = socket.into_split();
        let mut frames = FramedRead::new(rd, FrameCodec::default());
        let (tx, rx) = mpsc::channel(self.outbound_queue);
        let writer = tokio::spawn(write_replies(wr, rx, self.cancel.clone()));
        debug!(peer = %self.peer, conn = self.id, "connected");
        // Whether the peer stopped reading: then queued replies are dropped.
        let mut stalled = false;
        loop {
            let frame = tokio::select! {
                frame = frames.next() => frame,
                () = self.cancel.cancelled() => break,
            };
            match frame {
                None => break,
                Some(Err(e)) => {
                    debug!(peer = %self.peer, error = %e, "read failed");
                    break;
                }
                Some(Ok(Frame::Discarded(reason))) => {
                    debug!(peer = %self.peer, %reason, "discarded bytes");
                }
                Some(Ok(Frame::Message(json))) => {
                    if let Some(reply) = self.apply(&json) {
                        if let Err(e) = tx.try_send(reply) {
                            if matches!(e, mpsc::error::TrySendError::Full(_)) {
                                warn!(peer = %self.peer, "client does not read its replies; closing");
                                stalled = true;
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
        // its query and still wait for the answer), unless the client stalled
        // or the master is shutting down.
        if stalled {
            writer.abort();
        }
        let _ = writer.await;
        debug!(peer = %self.peer, conn = self.id, "disconnected");
    }

    /// Applies one message; returns the reply to send, if any.
    fn apply(&self, json: &[u8]) -> Option<Bytes> {
        let command = match Command::parse(json) {
            Ok(c) => c,
            Err(e) => {
                debug!(peer = %self.peer, error = %e, "discarded message");
                return None;
            }
        };
        match command {
            Command::Register(reg) => {
                info!(peer = %self.peer, name = %reg.name, address = %reg.address, port = reg.port.get(), "registered");
                self.registry.register(self.id, reg);
            }
            Command::UpdateStats(stats) => {
                if !self.registry.update_stats(self.id, stats) {
                    debug!(peer = %self.peer, "stats before registration discarded");
                }
            }
            Command::Unregister => {
                if self.registry.unregister(self.id) {
                    info!(peer = %self.peer, "unregistered");
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
