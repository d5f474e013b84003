//! Webhooks for sites and their chat channels (`docs/protocol.md` §2.4):
//! the admin's webhooks (kept by a [`WebhookStore`]: the bridge's
//! database), which events each one gets
//! (from [`crate::watch`], with its filters and cooldown), and their
//! deliveries: one task per notification, bounded per webhook
//! ([`MAX_PENDING`]) and in attempts at once ([`MAX_ATTEMPTS_AT_ONCE`]),
//! so a receiver that never answers holds only its own notifications.
//! [`api`] is the admin's HTTP side.

pub mod address;
pub(crate) mod api;
pub mod deliver;
pub mod payload;
pub mod store;

use std::{
    collections::VecDeque,
    fmt::Write as _,
    sync::{
        atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering::Relaxed},
        Arc, Mutex, MutexGuard,
    },
    time::{Duration, SystemTime},
};

use master::{logtext::cut, throttled};
use protocol::{
    watch::{Event, Format, WebhookSpec},
    webhook::{Delivery, Kind, Webhook, WebhookState},
    Addresses, ServerEntry, ServerKey,
};
use reqwest::header::{HeaderMap, HeaderValue};
use serde_json::Value;
use tokio::{
    sync::{broadcast::error::RecvError, Semaphore},
    time::Instant,
};
use tokio_util::{sync::CancellationToken, task::TaskTracker};
use tracing::{info, warn};
use url::Url;

use self::{
    deliver::{Attempt, Sender},
    payload::{Notice, Secret},
    store::{Row, WebhookStore},
};
use crate::{
    error::Error,
    history::{now_ms, Leader, StoreError},
    watch::{Cooldowns, Occurrence},
};

/// Webhooks one bridge keeps at most.
pub const MAX_WEBHOOKS: usize = 50;
/// Notifications of one webhook being delivered (or waiting to retry) at
/// most; more are dropped, and counted.
pub const MAX_PENDING: usize = 32;
/// Attempts in flight at once, over all webhooks.
pub const MAX_ATTEMPTS_AT_ONCE: usize = 16;
/// Failed deliveries in a row that disable a webhook.
pub const DISABLE_AFTER: u32 = 20;
/// How often loading the stored webhooks is tried again while it fails.
const RELOAD_EVERY: Duration = Duration::from_secs(5);
/// Deliveries each webhook remembers for the admin's list.
const REMEMBERED: usize = 10;

/// What the webhooks need of the bridge's configuration.
#[derive(Debug, Clone)]
pub struct Settings {
    /// `--webhook-allow-private`: reach loopback and private addresses.
    pub allow_private: bool,
    /// `--public-url`, without a trailing `/`: makes page links absolute.
    pub public_url: Option<String>,
    /// Whether notifications carry addresses (not with `--hide-addresses`).
    pub addresses: Addresses,
}

/// How one delivery (or test) ended, as the admin's list shows it.
fn delivery(kind: Kind, attempts: u32, outcome: Result<u16, (Option<u16>, &str)>) -> Delivery {
    let (ok, status, error) = match outcome {
        Ok(code) => (true, Some(code), None),
        Err((status, why)) => (false, status, Some(why.to_owned())),
    };
    Delivery {
        event: kind,
        ok,
        status,
        error,
        attempts,
        at: now_ms(),
    }
}

/// A webhook's state that changes.
#[derive(Debug)]
struct State {
    enabled: bool,
    failures: u32,
    deleted: bool,
    last: VecDeque<Delivery>,
}

/// One webhook.
#[derive(Debug)]
pub struct Hook {
    id: String,
    /// The id's number, for the cooldowns.
    num: u64,
    spec: WebhookSpec,
    /// `spec.url`, parsed.
    url: Url,
    secret: Secret,
    created_ms: i64,
    state: Mutex<State>,
    /// Notifications in delivery.
    pending: AtomicUsize,
}

impl Hook {
    /// The webhook of a stored `row` (its `id` numbered `num`), with its
    /// request and secret read from it.
    fn new(row: Row, num: u64, spec: WebhookSpec, url: Url, secret: Secret) -> Arc<Self> {
        Arc::new(Self {
            id: row.id,
            num,
            spec,
            url,
            secret,
            created_ms: row.created_ms,
            state: Mutex::new(State {
                enabled: row.enabled,
                failures: row.failures,
                deleted: false,
                last: VecDeque::new(),
            }),
            pending: AtomicUsize::new(0),
        })
    }

    fn state(&self) -> MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// The webhook as the admin's list shows it (never its secret).
    fn view(&self) -> Webhook {
        let state = self.state();
        Webhook {
            id: self.id.clone(),
            request: self.spec.clone(),
            enabled: state.enabled,
            state: match (state.enabled, state.failures >= DISABLE_AFTER) {
                (true, _) => WebhookState::Active,
                (false, true) => WebhookState::DisabledAfterFailures,
                (false, false) => WebhookState::Disabled,
            },
            failures: state.failures,
            created_at: self.created_ms,
            last_deliveries: state.last.iter().rev().cloned().collect(),
            secret: None,
        }
    }

    /// The host the webhook sends to, for log lines (never the whole URL:
    /// Discord's carry their token in the path).
    fn host(&self) -> String {
        cut(self.url.host_str().unwrap_or_default()).to_string()
    }
}

/// What `/metrics` shows of the deliveries.
#[derive(Debug, Default)]
struct Counters {
    delivered: AtomicU64,
    failed: AtomicU64,
    dropped: AtomicU64,
    attempts: AtomicU64,
}

/// Every webhook of this bridge and their deliveries.
#[derive(Debug)]
pub struct Webhooks {
    settings: Settings,
    store: Arc<dyn WebhookStore>,
    hooks: Mutex<Vec<Arc<Hook>>>,
    sender: Sender,
    attempts: Arc<Semaphore>,
    jobs: TaskTracker,
    /// Whether this bridge sends notifications: the one that records the
    /// history (elected among the bridges on one PostgreSQL database;
    /// with the embedded database, always).
    leader: Arc<Leader>,
    /// Whether the stored webhooks have been read (not yet while the
    /// database was unreachable).
    loaded: AtomicBool,
    /// When reading them was last tried, so an unreachable database is
    /// asked at most every [`RELOAD_EVERY`].
    last_load: tokio::sync::Mutex<Option<Instant>>,
    counters: Counters,
    cancel: CancellationToken,
}

/// Why a webhook was not created.
#[derive(Debug, thiserror::Error)]
pub enum CreateError {
    #[error("at most {MAX_WEBHOOKS} webhooks")]
    Full,
    #[error("cannot store it: {0}")]
    Store(String),
    #[error("cannot make a secret")]
    Random,
}

impl Webhooks {
    /// The webhooks `store` keeps, read when first needed; a stored row
    /// that fails validation is skipped with a log line.
    pub fn open(
        store: Arc<dyn WebhookStore>,
        leader: Arc<Leader>,
        settings: Settings,
    ) -> Result<Self, Error> {
        // Read from a blocking thread when first needed (see
        // `ensure_loaded`): the database may be PostgreSQL, unreachable at
        // start, and a bridge without it still serves the list.
        let (hooks, loaded) = (Vec::new(), false);
        let sender = Sender::new(address::Reach::webhooks(settings.allow_private))
            .map_err(|e| Error::Webhooks(format!("cannot build the HTTP client: {e}")))?;
        Ok(Self {
            settings,
            store,
            hooks: Mutex::new(hooks),
            sender,
            attempts: Arc::new(Semaphore::new(MAX_ATTEMPTS_AT_ONCE)),
            jobs: TaskTracker::new(),
            leader,
            loaded: AtomicBool::new(loaded),
            last_load: tokio::sync::Mutex::new(None),
            counters: Counters::default(),
            cancel: CancellationToken::new(),
        })
    }

    /// Whether the stored webhooks are loaded, loading them now if they
    /// are not (at most every [`RELOAD_EVERY`]).
    pub async fn ensure_loaded(self: &Arc<Self>) -> bool {
        if self.loaded.load(Relaxed) {
            return true;
        }
        // One load at a time: others wait for it and see its result.
        let mut last = self.last_load.lock().await;
        if self.loaded.load(Relaxed) {
            return true;
        }
        let now = Instant::now();
        if last.is_some_and(|t| now.duration_since(t) < RELOAD_EVERY) {
            return false;
        }
        *last = Some(now);
        match self.with_store(|s| s.load()).await {
            Ok(rows) => {
                let mut hooks = self.hooks();
                if !self.loaded.swap(true, Relaxed) {
                    *hooks = rows.into_iter().filter_map(hook_of).collect();
                    info!(webhooks = hooks.len(), "the webhooks are loaded");
                }
                true
            }
            Err(e) => {
                throttled!(warn, error = %e, "the webhooks cannot be loaded yet; trying again while they are used");
                false
            }
        }
    }

    fn hooks(&self) -> MutexGuard<'_, Vec<Arc<Hook>>> {
        self.hooks.lock().unwrap_or_else(|p| p.into_inner())
    }

    fn find(&self, id: &str) -> Option<Arc<Hook>> {
        self.hooks().iter().find(|h| h.id == id).cloned()
    }

    /// Runs `write` on the store from a blocking thread.
    async fn with_store<T: Send + 'static>(
        &self,
        write: impl FnOnce(&dyn WebhookStore) -> Result<T, StoreError> + Send + 'static,
    ) -> Result<T, String> {
        let store = self.store.clone();
        tokio::task::spawn_blocking(move || write(store.as_ref()).map_err(|e| e.to_string()))
            .await
            .map_err(|e| e.to_string())?
    }

    /// Adds a webhook (its URL, `url`, already checked); the answer holds
    /// its secret, the only time it is shown.
    pub async fn create(
        self: &Arc<Self>,
        spec: WebhookSpec,
        url: Url,
    ) -> Result<Webhook, CreateError> {
        if self.hooks().len() >= MAX_WEBHOOKS {
            return Err(CreateError::Full);
        }
        let secret = Secret::generate().map_err(|_| CreateError::Random)?;
        let mut raw = [0u8; 8];
        getrandom::fill(&mut raw).map_err(|_| CreateError::Random)?;
        let num = u64::from_be_bytes(raw);
        let row = Row {
            id: format!("wh_{num:016x}"),
            spec: spec.to_json().to_string(),
            secret: secret.expose().to_owned(),
            enabled: true,
            failures: 0,
            created_ms: now_ms(),
        };
        let stored = row.clone();
        self.with_store(move |s| s.insert(&stored))
            .await
            .map_err(CreateError::Store)?;
        let hook = Hook::new(row, num, spec, url, secret);
        let added = {
            let mut hooks = self.hooks();
            let room = hooks.len() < MAX_WEBHOOKS;
            if room {
                hooks.push(hook.clone());
            }
            room
        };
        if !added {
            // Others were created meanwhile.
            let id = hook.id.clone();
            let _ = self.with_store(move |s| s.delete(&id)).await;
            return Err(CreateError::Full);
        }
        info!(id = %hook.id, host = %hook.host(), "webhook created");
        let mut view = hook.view();
        view.secret = Some(hook.secret.expose().to_owned());
        Ok(view)
    }

    /// Every webhook as the admin's list shows it.
    pub fn list(&self) -> Vec<Webhook> {
        let hooks = self.hooks().clone();
        hooks.iter().map(|h| h.view()).collect()
    }

    /// Enables (failures forgotten) or disables one; `None` if unknown.
    pub async fn set_enabled(
        self: &Arc<Self>,
        id: &str,
        enabled: bool,
    ) -> Option<Result<Webhook, String>> {
        let hook = self.find(id)?;
        let failures = {
            let mut state = hook.state();
            state.enabled = enabled;
            if enabled {
                state.failures = 0;
            }
            state.failures
        };
        let id = hook.id.clone();
        Some(
            self.with_store(move |s| s.set_state(&id, enabled, failures))
                .await
                .map(|_| hook.view()),
        )
    }

    /// Removes one; `None` if unknown. Its deliveries stop before their
    /// next attempt.
    pub async fn delete(self: &Arc<Self>, id: &str) -> Option<Result<(), String>> {
        let hook = self.find(id)?;
        hook.state().deleted = true;
        self.hooks().retain(|h| h.id != hook.id);
        let id = hook.id.clone();
        info!(id = %id, "webhook deleted");
        Some(self.with_store(move |s| s.delete(&id)).await.map(drop))
    }

    /// "Send a test": one attempt now with a made-up server, through the
    /// same signing and sending as every delivery, its outcome remembered
    /// like a delivery's (but not counted towards disabling).
    pub async fn test(self: &Arc<Self>, id: &str) -> Option<Delivery> {
        let hook = self.find(id)?;
        let server = ServerEntry {
            registrant: None,
            name: "Test server".into(),
            address: Some("203.0.113.1".into()),
            port: Some(51963),
            stats: protocol::Stats::default(),
        };
        let body = self.body(&hook, Kind::Test, ServerKey(0), &server, SystemTime::now());
        let msg = message_id();
        let attempt = self.attempt(&hook, &msg, &body).await;
        let record = match attempt {
            Attempt::Delivered(code) => delivery(Kind::Test, 1, Ok(code)),
            Attempt::Retry { status, why, .. } | Attempt::Failed { status, why } => {
                delivery(Kind::Test, 1, Err((status, why)))
            }
        };
        remember(&mut hook.state(), record.clone());
        Some(record)
    }

    /// Delivers what `events` brings until `cancel` fires; then waits a
    /// moment for deliveries in flight.
    pub async fn run(
        self: Arc<Self>,
        mut events: tokio::sync::broadcast::Receiver<Arc<Occurrence>>,
        cancel: CancellationToken,
    ) {
        let mut cooldowns = Cooldowns::<u64>::default();
        self.ensure_loaded().await;
        loop {
            let occurrence = tokio::select! {
                () = cancel.cancelled() => break,
                got = events.recv() => match got {
                    Ok(o) => o,
                    Err(RecvError::Lagged(n)) => {
                        self.counters.dropped.fetch_add(n, Relaxed);
                        throttled!(warn, lost = n, "webhooks fell behind the list's events; some were dropped");
                        continue;
                    }
                    Err(RecvError::Closed) => break,
                },
            };
            if !self.leader.is_leader() || !self.ensure_loaded().await {
                continue;
            }
            let hooks = self.hooks().clone();
            let now = Instant::now();
            for hook in hooks {
                if !hook.state().enabled {
                    continue;
                }
                let spec = &hook.spec;
                let Some(event) = occurrence.fires(&spec.events, &spec.servers, spec.threshold)
                else {
                    continue;
                };
                let cooldown = Duration::from_secs(spec.cooldown);
                if cooldowns.allow(&hook.num, occurrence.key, event, cooldown, now) {
                    self.enqueue(hook, event, occurrence.clone());
                }
            }
        }
        self.cancel.cancel();
        self.jobs.close();
        let _ = tokio::time::timeout(Duration::from_secs(1), self.jobs.wait()).await;
    }

    fn enqueue(self: &Arc<Self>, hook: Arc<Hook>, event: Event, occurrence: Arc<Occurrence>) {
        if hook.pending.fetch_add(1, Relaxed) >= MAX_PENDING {
            hook.pending.fetch_sub(1, Relaxed);
            self.counters.dropped.fetch_add(1, Relaxed);
            throttled!(warn, id = %hook.id, host = %hook.host(), "a webhook's receiver is behind; a notification was dropped");
            return;
        }
        let this = self.clone();
        self.jobs.spawn(async move {
            this.deliver(&hook, event, &occurrence).await;
            hook.pending.fetch_sub(1, Relaxed);
        });
    }

    /// One notification: attempts until one is delivered, one fails for
    /// good, none is left, or the webhook is disabled or deleted.
    async fn deliver(self: &Arc<Self>, hook: &Arc<Hook>, event: Event, occurrence: &Occurrence) {
        let body = self.body(
            hook,
            Kind::Event(event),
            occurrence.key,
            &occurrence.server,
            occurrence.at,
        );
        let msg = message_id();
        let mut n = 1;
        let (status, why) = loop {
            {
                let state = hook.state();
                if state.deleted || !state.enabled {
                    self.counters.dropped.fetch_add(1, Relaxed);
                    return;
                }
            }
            match self.attempt(hook, &msg, &body).await {
                Attempt::Delivered(code) => {
                    self.counters.delivered.fetch_add(1, Relaxed);
                    self.finish(hook, event, n, Ok(code)).await;
                    return;
                }
                Attempt::Failed { status, why } => break (status, why),
                Attempt::Retry { status, after, why } => {
                    let Some(wait) = deliver::wait_before(n + 1, after) else {
                        break (status, why);
                    };
                    n += 1;
                    tokio::select! {
                        () = self.cancel.cancelled() => return,
                        () = tokio::time::sleep(wait) => {}
                    }
                }
            }
        };
        self.counters.failed.fetch_add(1, Relaxed);
        self.finish(hook, event, n, Err((status, why))).await;
    }

    /// One attempt, under the global bound of attempts at once.
    async fn attempt(&self, hook: &Hook, msg: &str, body: &[u8]) -> Attempt {
        let Ok(_permit) = self.attempts.acquire().await else {
            return Attempt::Failed {
                status: None,
                why: "shutting down",
            };
        };
        self.counters.attempts.fetch_add(1, Relaxed);
        let mut headers = HeaderMap::new();
        if hook.spec.format == Format::Standard {
            let timestamp = deliver::unix_now();
            let signature = hook.secret.sign(msg, timestamp, body);
            for (name, value) in [
                ("webhook-id", msg.to_owned()),
                ("webhook-timestamp", timestamp.to_string()),
                ("webhook-signature", signature),
            ] {
                if let Ok(value) = HeaderValue::from_str(&value) {
                    headers.insert(name, value);
                }
            }
        }
        self.sender.attempt(&hook.url, headers, body.to_vec()).await
    }

    /// Remembers a delivery's outcome and keeps the count of failures in
    /// a row: [`DISABLE_AFTER`] disable the webhook (stored).
    async fn finish(
        self: &Arc<Self>,
        hook: &Arc<Hook>,
        event: Event,
        attempts: u32,
        outcome: Result<u16, (Option<u16>, &'static str)>,
    ) {
        let (store, enabled, failures) = {
            let mut state = hook.state();
            let before = (state.enabled, state.failures);
            if outcome.is_ok() {
                state.failures = 0;
            } else {
                state.failures = state.failures.saturating_add(1);
                if state.failures >= DISABLE_AFTER && state.enabled {
                    state.enabled = false;
                    warn!(id = %hook.id, host = %hook.host(), "a webhook failed {DISABLE_AFTER} deliveries in a row and is disabled until an admin enables it");
                }
            }
            remember(&mut state, delivery(Kind::Event(event), attempts, outcome));
            let changed = before != (state.enabled, state.failures);
            (changed && !state.deleted, state.enabled, state.failures)
        };
        if store {
            let id = hook.id.clone();
            if let Err(e) = self
                .with_store(move |s| s.set_state(&id, enabled, failures))
                .await
            {
                throttled!(warn, error = %e, "cannot store a webhook's state");
            }
        }
    }

    fn body(
        &self,
        hook: &Hook,
        kind: Kind,
        key: ServerKey,
        server: &ServerEntry,
        at: SystemTime,
    ) -> Vec<u8> {
        let page = payload::page_url(self.settings.public_url.as_deref(), key);
        let notice = Notice {
            kind,
            key,
            server,
            at,
            page,
            addresses: self.settings.addresses,
        };
        match hook.spec.format {
            Format::Standard => notice.standard(),
            Format::Discord => notice.discord(),
        }
    }

    /// Appends the deliveries' lines to `/metrics`' text.
    pub fn render(&self, out: &mut String) {
        let c = &self.counters;
        let _ = write!(
            out,
            "# HELP bridge_webhook_deliveries_total Webhook notifications by outcome.\n\
             # TYPE bridge_webhook_deliveries_total counter\n\
             bridge_webhook_deliveries_total{{result=\"delivered\"}} {}\n\
             bridge_webhook_deliveries_total{{result=\"failed\"}} {}\n\
             bridge_webhook_deliveries_total{{result=\"dropped\"}} {}\n\
             # HELP bridge_webhook_attempts_total Webhook requests sent (retries and tests included).\n\
             # TYPE bridge_webhook_attempts_total counter\nbridge_webhook_attempts_total {}\n\
             # HELP bridge_webhooks Webhooks configured.\n# TYPE bridge_webhooks gauge\nbridge_webhooks {}\n",
            c.delivered.load(Relaxed),
            c.failed.load(Relaxed),
            c.dropped.load(Relaxed),
            c.attempts.load(Relaxed),
            self.hooks().len(),
        );
    }
}

fn remember(state: &mut State, record: Delivery) {
    if state.last.len() >= REMEMBERED {
        state.last.pop_front();
    }
    state.last.push_back(record);
}

/// A new `webhook-id`: `msg_` and 32 hex digits (the same on every
/// attempt of one notification).
fn message_id() -> String {
    let mut raw = [0u8; 16];
    // Without randomness the id is still unique enough per notification:
    // the time in nanoseconds.
    if getrandom::fill(&mut raw).is_err() {
        let t = SystemTime::now()
            .duration_since(SystemTime::UNIX_EPOCH)
            .map_or(0, |d| d.as_nanos());
        raw = t.to_be_bytes();
    }
    let mut id = String::from("msg_");
    for b in raw {
        let _ = write!(id, "{b:02x}");
    }
    id
}

/// A stored row as a webhook, if it is valid (a row is trusted no more
/// than a request).
fn hook_of(row: Row) -> Option<Arc<Hook>> {
    let id_ok = protocol::watch::is_webhook_id(&row.id);
    let spec = serde_json::from_str::<Value>(&row.spec)
        .ok()
        .and_then(|v| WebhookSpec::from_value(&v).ok());
    let url = spec.as_ref().and_then(|s| Url::parse(&s.url).ok());
    let secret = Secret::parse(&row.secret);
    let num = row
        .id
        .strip_prefix("wh_")
        .and_then(|h| u64::from_str_radix(h, 16).ok());
    match (id_ok, spec, url, secret, num) {
        (true, Some(spec), Some(url), Some(secret), Some(num)) => {
            Some(Hook::new(row, num, spec, url, secret))
        }
        _ => {
            warn!(id = %cut(&row.id), "a stored webhook is not valid and is skipped");
            None
        }
    }
}
