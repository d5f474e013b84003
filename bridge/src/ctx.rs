//! What every request handler and WebSocket session of one bridge shares:
//! its own module so that the router (`server.rs`) and the handlers it
//! routes to (`api.rs`) both depend on it instead of on each other.

use std::sync::Arc;

use tokio::sync::Semaphore;
use tokio_util::{sync::CancellationToken, task::TaskTracker};

use crate::{
    budget::Budget,
    config::Config,
    db::history::History,
    http::{answers::Answers, documents::Pages},
    live::{
        games::Games,
        session::Handle,
        upstream::{Source, Upstream},
    },
    metrics::Metrics,
    notify::{engine::Notify, push::Push, watch::Events, webhooks::Webhooks},
    visibility::Visibility,
};

/// What every request handler and session shares.
#[derive(Debug)]
pub(crate) struct Ctx {
    pub(crate) config: Config,
    pub(crate) upstream: Arc<Upstream>,
    /// Where the list comes from: the embedded master or a remote one.
    pub(crate) source: Source,
    /// Other games' servers; `None` unless `--a2s`/`--gameagent-master`.
    pub(crate) games: Option<Arc<Games>>,
    pub(crate) metrics: Arc<Metrics>,
    /// What each client address may still be sent on request (`/api/` and
    /// the sessions' list answers share it).
    pub(crate) budget: Arc<Budget>,
    /// Fires on shutdown: sessions close with 1001.
    pub(crate) cancel: CancellationToken,
    /// Open WebSocket sessions, so shutdown can wait for them.
    pub(crate) sessions: TaskTracker,
    /// One permit per open WebSocket (`max_connections`).
    pub(crate) slots: Arc<Semaphore>,
    /// What each WebSocket session gets of the above.
    pub(crate) session: Arc<Handle>,
    /// The recorded history, in the database the bridge started on.
    pub(crate) history: Arc<History>,
    /// The history's and badges' answers, cached per change.
    pub(crate) answers: Answers,
    /// The cards' PNGs, drawn once per face.
    pub(crate) cards: crate::http::card::Rendered,
    /// What viewers (and so every `/api/` answer) may see of a server.
    pub(crate) visibility: Visibility,
    /// Events decided from the live list (`docs/protocol.md` §2.4).
    pub(crate) events: Arc<Events>,
    /// The admin's webhooks and their deliveries.
    pub(crate) webhooks: Arc<Webhooks>,
    /// Web Push's subscriptions and their pushes.
    pub(crate) push: Arc<Push>,
    /// The key secret the list was keyed with while the database was
    /// unreachable at start, until the database's is known (`None`: the
    /// database's own, or no shared database).
    pub(crate) provisional_secret: Option<[u8; 32]>,
    /// The notification engine over the webhooks and Web Push.
    pub(crate) notify: Arc<Notify>,
    /// The pages with their facts written in, once per change.
    pub(crate) pages: Pages,
}

impl Ctx {
    /// The Join links' template as viewers get it: the configured one,
    /// and none while addresses are hidden from them (a link would show
    /// the address; the rule is [`Visibility::join`]'s).
    pub(crate) fn join(&self) -> Option<&protocol::join::JoinTemplate> {
        self.visibility.join(self.config.join_url.as_ref())
    }
}
