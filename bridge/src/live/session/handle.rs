//! What a session needs from the rest of the bridge, and nothing more: the
//! server builds one [`Handle`] and every session shares it, so sessions do
//! not depend on the server (nor on how the lists are produced).

use std::{fmt, sync::Arc, time::Duration};

use tokio::sync::watch;
use tokio_util::sync::CancellationToken;

use super::auth_guard::AuthGuard;
use crate::{
    budget::Budget,
    config::Config,
    live::{
        games::GamesWatch,
        upstream::{Shared, Upstream},
    },
    metrics::Metrics,
    token::AdminToken,
    visibility::Visibility,
};

/// The configuration values a session reads.
#[derive(Debug, Clone)]
pub(crate) struct SessionSettings {
    /// Where an admin's own master connection goes.
    pub(crate) master: String,
    pub(crate) master_timeout: Duration,
    pub(crate) admin_token: AdminToken,
    pub(crate) rate_per_sec: u32,
    pub(crate) rate_burst: u32,
    pub(crate) flood_close_after: u32,
    pub(crate) ping_interval: Duration,
    pub(crate) pong_timeout: Duration,
    pub(crate) write_timeout: Duration,
    pub(crate) close_wait: Duration,
    /// What viewers see of the lists; admins see them whole.
    pub(crate) visibility: Visibility,
    /// Shortest time between two list answers to one browser's queries.
    pub(crate) query_interval: Duration,
}

impl SessionSettings {
    /// The settings of `c`, with the bridge's one `visibility` rule.
    pub(crate) fn new(c: &Config, visibility: Visibility) -> Self {
        Self {
            master: c.master.clone(),
            master_timeout: c.master_timeout,
            admin_token: c.admin_token.clone(),
            rate_per_sec: c.rate_per_sec,
            rate_burst: c.rate_burst,
            flood_close_after: c.flood_close_after,
            ping_interval: c.ping_interval,
            pong_timeout: c.pong_timeout,
            write_timeout: c.write_timeout,
            close_wait: c.close_wait,
            visibility,
            query_interval: c.query_interval,
        }
    }
}

/// Everything a session uses of the bridge.
pub(crate) struct Handle {
    pub(crate) config: SessionSettings,
    /// The master's reachability and list (each session clones it).
    pub(crate) shared: watch::Receiver<Shared>,
    /// Other games' servers, when configured.
    pub(crate) games: Option<GamesWatch>,
    /// The shared upstream: asked at each admin command whether the list
    /// is polled (then the bridge queries the list after it), and offered
    /// the list it reads ([`Upstream::offer_admin_list`]).
    pub(crate) upstream: Arc<Upstream>,
    pub(crate) metrics: Arc<Metrics>,
    /// Failed `bridgeAuth` per client address, shared by every session.
    pub(crate) auth: AuthGuard,
    /// What each client address may still be sent on request, shared with
    /// `/api/`: a socket's list answers spend from it.
    pub(crate) budget: Arc<Budget>,
    /// Fires on shutdown: sessions close with 1001.
    pub(crate) cancel: CancellationToken,
}

impl Handle {
    /// A receiver of the shared state that has seen its current value.
    pub(crate) fn subscribe_shared(&self) -> watch::Receiver<Shared> {
        let mut rx = self.shared.clone();
        rx.mark_unchanged();
        rx
    }

    /// A receiver of the other games' servers that has seen the current ones.
    pub(crate) fn subscribe_games(&self) -> Option<GamesWatch> {
        self.games.as_ref().map(|rx| {
            let mut rx = rx.clone();
            rx.mark_unchanged();
            rx
        })
    }
}

impl fmt::Debug for Handle {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Handle")
            .field("config", &self.config)
            .field("games", &self.games.is_some())
            .field("cancel", &self.cancel)
            .finish_non_exhaustive()
    }
}
