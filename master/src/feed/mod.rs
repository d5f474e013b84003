//! The change feed: bridges started with `--master` subscribe here instead
//! of polling, and are pushed each change of the registry as a delta
//! (`protocol::feed` for the handshake, `protocol::delta` for the lists).
//!
//! The Listener ([`FeedServer::run`]) admits connections up to a cap per
//! address (IPv6: per /64) and as many waiting to subscribe as there are
//! subscriber slots, and hands each to its `handler::Handler`, which takes
//! one of the slots only once a valid subscribe was read (its token
//! checked) within the first-message timeout: a host that connects and
//! says nothing, or says something wrong, holds no slot, and one host
//! cannot hold more than its own few. One task follows the registry's
//! change watch, gathering changes within [`crate::registry::COALESCE`]
//! into one delta that is encoded once for every subscriber (`state`). While nobody subscribes
//! the registry is not followed at all: the first subscriber brings the
//! feed up to date (one delta for everything that changed meanwhile).
//!
//! The feed listens on a port of its own, not on the specification's
//! 51963: who may reach it (loopback by default, a private network with a
//! token) is the operator's decision.

mod config;
mod handler;
mod state;
mod stats;
mod token;

use std::{future::Future, sync::Arc, time::Duration};

use tokio::{
    net::{TcpListener, TcpStream},
    sync::Semaphore,
};
use tokio_util::{sync::CancellationToken, task::TaskTracker};
use tracing::{debug, error, warn};

pub use self::config::{FeedConfig, FeedConfigError, FeedListen};
use self::handler::Handler;
pub use self::state::{FeedList, FeedPublisher, Sending};
pub use self::stats::FeedStats;
pub use self::token::{FeedToken, TokenError, MIN_TOKEN_LEN};
use crate::{
    limits::{LogThrottle, PerAddress},
    registry::{next_changes, Registry},
    server::accept,
    throttled,
};

/// The feed of one registry. Cloning shares it.
#[derive(Debug, Clone)]
pub struct FeedServer {
    registry: Arc<Registry>,
    publisher: Arc<FeedPublisher>,
    config: FeedConfig,
    stats: Arc<FeedStats>,
}

impl FeedServer {
    /// A feed of `registry` in a new epoch (random: a restarted master
    /// must not continue an earlier run's numbering).
    pub fn new(registry: Arc<Registry>, config: FeedConfig) -> Self {
        Self::with_epoch(registry, config, &new_epoch())
    }

    /// A feed with a given epoch (tests).
    pub fn with_epoch(registry: Arc<Registry>, config: FeedConfig, epoch: &str) -> Self {
        Self {
            publisher: Arc::new(FeedPublisher::new(registry.clone(), epoch, config.ring)),
            registry,
            config,
            stats: Arc::default(),
        }
    }

    /// What the feed has done so far.
    pub fn stats(&self) -> Arc<FeedStats> {
        self.stats.clone()
    }

    /// The feed's list now (as the last subscriber was sent it).
    pub fn current(&self) -> Arc<FeedList> {
        self.publisher.current()
    }

    /// Serves subscribers on `listener` until `shutdown` resolves, then
    /// closes them (they fall back to polling and retry).
    pub async fn run(&self, listener: TcpListener, shutdown: impl Future<Output = ()>) {
        if let Err(e) = self.config.validate() {
            error!(error = %e, "the feed cannot start");
            return;
        }
        let cancel = CancellationToken::new();
        let tracker = TaskTracker::new();
        tracker.spawn(follow(
            self.publisher.clone(),
            self.registry.changes(),
            cancel.clone(),
        ));
        let slots = Arc::new(Semaphore::new(self.config.max_subscribers));
        let waiting = Arc::new(Semaphore::new(self.config.max_subscribers));
        let per_address = PerAddress::new(self.config.max_per_address);
        let refusals = Arc::new(LogThrottle::new(Duration::from_secs(10), 1));
        tokio::pin!(shutdown);
        loop {
            let (socket, peer) = tokio::select! {
                accepted = accept(&listener) => accepted,
                () = &mut shutdown => break,
            };
            let Some(address) = per_address.try_acquire(peer.ip()) else {
                self.stats.count(&self.stats.per_address);
                throttled!(warn, %peer, "feed connections from this address at their cap (--feed-max-per-address); refusing");
                crate::server::refuse(socket);
                continue;
            };
            let Ok(waiting) = waiting.clone().try_acquire_owned() else {
                self.stats.count(&self.stats.full);
                throttled!(warn, %peer, "too many feed connections waiting to subscribe (--feed-max-subscribers); refusing");
                crate::server::refuse(socket);
                continue;
            };
            if let Err(e) = configure(&socket) {
                debug!(%peer, error = %e, "cannot set socket options");
            }
            let handler = Handler {
                peer,
                publisher: self.publisher.clone(),
                token: self.config.token.clone(),
                first_message_timeout: self.config.first_message_timeout,
                write_timeout: self.config.write_timeout,
                stats: self.stats.clone(),
                refusals: refusals.clone(),
                slots: slots.clone(),
                cancel: cancel.clone(),
            };
            tracker.spawn(async move {
                handler.run(socket, waiting).await;
                drop(address);
            });
        }
        cancel.cancel();
        tracker.close();
        if tokio::time::timeout(Duration::from_secs(3), tracker.wait())
            .await
            .is_err()
        {
            warn!("some feed subscribers did not close within the grace time");
        }
    }
}

/// Follows the registry's change watch while anyone subscribes: changes
/// gathered by [`next_changes`] go out as one delta.
async fn follow(
    publisher: Arc<FeedPublisher>,
    mut registry: tokio::sync::watch::Receiver<u64>,
    cancel: CancellationToken,
) {
    while next_changes(&mut registry, &cancel).await {
        registry.borrow_and_update();
        if publisher.has_subscribers() {
            publisher.refresh();
        }
    }
}

/// TCP_NODELAY (a delta is one small write) and keepalive, so a vanished
/// bridge's connection is noticed even between writes.
fn configure(socket: &TcpStream) -> std::io::Result<()> {
    socket.set_nodelay(true)?;
    let ka = socket2::TcpKeepalive::new()
        .with_time(Duration::from_secs(30))
        .with_interval(Duration::from_secs(10))
        .with_retries(6);
    socket2::SockRef::from(socket).set_tcp_keepalive(&ka)
}

/// A fresh epoch: 8 random bytes as hex (the clock, should the system's
/// randomness fail).
pub fn new_epoch() -> String {
    let mut bytes = [0u8; 8];
    if getrandom::fill(&mut bytes).is_err() {
        let nanos = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| d.as_nanos());
        bytes = (nanos as u64).to_le_bytes();
    }
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}
