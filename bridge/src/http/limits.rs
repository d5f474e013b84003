//! What each HTTP connection is allowed and holds: the caps and timeouts
//! every connection shares ([`Limits`]), the slots one connection holds
//! while it lives ([`ConnSlot`]), and who sent a request ([`Client`]).
//! Beneath the accept loop (`accept.rs`) and each connection
//! (`connection.rs`), which both read them.

use std::{
    net::SocketAddr,
    sync::{atomic::Ordering::Relaxed, Arc},
    time::Duration,
};

use ipnet::IpNet;
use master::limits::{AddressSlot, PerAddress};
use tokio::sync::{OwnedSemaphorePermit, Semaphore};

use crate::{config::Config, http::forwarded::ForwardedHeader, metrics::Metrics};

/// The caps and timeouts of the accept loop, shared by every connection.
#[derive(Debug)]
pub(crate) struct Limits {
    pub(super) trusted: Vec<IpNet>,
    pub(super) header: ForwardedHeader,
    pub(super) total: Arc<Semaphore>,
    pub(super) http: Arc<PerAddress>,
    pub(super) ws: Arc<PerAddress>,
    pub(super) header_read_timeout: Duration,
    pub(super) idle_timeout: Duration,
    pub(super) metrics: Arc<Metrics>,
}

impl Limits {
    /// The limits `config` asks for.
    pub(crate) fn new(config: &Config, metrics: Arc<Metrics>) -> Arc<Self> {
        Arc::new(Self {
            trusted: config.trusted_proxies.clone(),
            header: config.forwarded_header,
            total: Arc::new(Semaphore::new(config.max_http_connections)),
            http: PerAddress::new(config.max_http_per_address),
            ws: PerAddress::new(config.max_ws_per_address),
            header_read_timeout: config.header_read_timeout,
            idle_timeout: config.idle_timeout,
            metrics,
        })
    }
}

/// Who sent a request, put into its extensions by the accept loop (next to
/// axum's `ConnectInfo`, which holds the same client address).
#[derive(Debug, Clone)]
pub(crate) struct Client {
    /// The client address: the peer, or the forwarded one from a trusted proxy.
    pub(crate) addr: SocketAddr,
    pub(super) ws: Arc<PerAddress>,
}

impl Client {
    /// One of the client address's WebSocket slots, held for the socket's
    /// life; `None` when the address has all of them.
    pub(crate) fn ws_slot(&self) -> Option<AddressSlot> {
        self.ws.try_acquire(self.addr.ip())
    }
}

/// The slots one client connection holds; kept inside its socket (see
/// [`Held`]) so an upgraded WebSocket keeps them too.
#[derive(Debug)]
pub(super) struct ConnSlot {
    pub(super) _permit: OwnedSemaphorePermit,
    pub(super) _address: Option<AddressSlot>,
    pub(super) metrics: Arc<Metrics>,
}

impl Drop for ConnSlot {
    fn drop(&mut self) {
        self.metrics.http_connections.fetch_sub(1, Relaxed);
    }
}
