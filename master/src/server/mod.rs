//! Accepting connections (the `Listener`, [`Master::run`]): admit or refuse
//! each peer (bans, total and per-address caps), then hand it to its
//! `handler::Handler`. Modelled on tokio's mini-redis.

mod config;
mod handler;

use std::{
    collections::HashMap,
    future::Future,
    io,
    net::{IpAddr, SocketAddr},
    sync::{Arc, Mutex, MutexGuard},
    time::{Duration, Instant},
};

use tokio::net::{TcpListener, TcpStream};
use tokio_util::{sync::CancellationToken, task::TaskTracker};
use tracing::{debug, info, warn};

pub use self::config::{Config, ConfigError};
use self::handler::Handler;
use crate::{
    bans::BanList,
    limits::{Admission, LogThrottle, NotAdmitted, Slot, TokenBucket},
    registry::{ConnId, Registry},
};

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
                refusals: LogThrottle::new(crate::logtext::WINDOW, 1),
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
    ///
    /// A configuration that [`Config::validate`] refuses is an error before
    /// anything is accepted.
    pub async fn run(
        &self,
        listener: TcpListener,
        shutdown: impl Future<Output = ()>,
    ) -> Result<(), ConfigError> {
        self.config.validate()?;
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
                state: Default::default(),
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
        Ok(())
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
                Err(NotAdmitted::Full) => "the master serves --max-connections already",
                Err(NotAdmitted::PerAddress) => "the address holds --max-per-address already",
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
pub(crate) fn refuse(socket: TcpStream) {
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

/// Runs a master with `config` on `listener` until `shutdown` resolves
/// (see [`Master::run`]).
pub async fn run(
    listener: TcpListener,
    config: Config,
    shutdown: impl Future<Output = ()>,
) -> Result<(), ConfigError> {
    Master::new(config).run(listener, shutdown).await
}

/// Accepts the next connection, backing off on errors such as running out of
/// file descriptors instead of spinning or giving up (the feed's listener
/// uses it too).
pub(crate) async fn accept(listener: &TcpListener) -> (TcpStream, SocketAddr) {
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
