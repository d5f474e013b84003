//! Webhooks for sites and their chat channels (`docs/protocol.md` §2.4):
//! the admin's webhooks, read from the bridge's database (their
//! [`WebhookStore`]) and read again whenever any bridge changes one (see
//! [`crate::notify`]), which events each one gets (with its filters), and
//! how one delivery is sent: a [`Channel`] of the notification engine,
//! which keeps the deliveries, their retries and cooldowns as rows.
//! [`api`] is the admin's HTTP side.

pub mod address;
pub(crate) mod api;
pub mod card;
pub mod deliver;
pub mod payload;

use std::{
    str::FromStr,
    sync::{Arc, Mutex, MutexGuard},
    time::{Duration, SystemTime},
};

use futures_util::future::{BoxFuture, FutureExt};
use master::{logtext::cut, throttled};
use protocol::{
    watch::{Event, Format, WebhookSpec},
    webhook::{Delivery, Kind, Webhook, WebhookState},
    ServerEntry, ServerKey,
};
use reqwest::header::{HeaderMap, HeaderValue};
use serde_json::Value;
use tracing::{info, warn};
use url::Url;

use self::{
    deliver::Sender,
    payload::{Notice, Secret},
};
use crate::{
    db::store::{
        blocking, now_ms, DeliveryRow, DoneDelivery, Outcome, StoreError, WebhookRow, WebhookStore,
    },
    error::Error,
    live::upstream::Shared,
    notify::{
        channel::{Channel, Loading, Names, Planned, Sent},
        engine::{message_id, NotifyCounters},
        watch::Occurrence,
    },
    visibility::Visibility,
};

/// Webhooks one bridge keeps at most.
pub const MAX_WEBHOOKS: usize = 50;
/// Deliveries of one webhook not yet ended at most; more are dropped, and
/// counted (a receiver that is behind holds only its own).
pub const MAX_PENDING: u32 = 32;
/// Failed deliveries in a row that disable a webhook.
pub const DISABLE_AFTER: u32 = 20;
/// Deliveries each webhook shows in the admin's list.
const REMEMBERED: i64 = crate::notify::engine::KEEP_DONE;
/// The name of the webhooks' rows and change notes.
pub use crate::db::store::WEBHOOK_CHANNEL as CHANNEL;
/// What the webhooks need of the bridge's configuration.
#[derive(Debug, Clone)]
pub struct WebhookSettings {
    /// `--webhook-allow-private`: reach loopback and private addresses.
    pub allow_private: bool,
    /// `--public-url`, without a trailing `/`: makes page links absolute.
    pub public_url: Option<String>,
    /// What viewers see, so notifications carry addresses only where they
    /// do (not with `--hide-addresses`).
    pub visibility: Visibility,
}

/// A stored ended delivery as the admin's list shows it.
fn delivery_of(done: DoneDelivery) -> Delivery {
    let event = if done.event == Kind::Test.name() {
        Kind::Test
    } else {
        Event::from_str(&done.event).map_or(Kind::Test, Kind::Event)
    };
    Delivery {
        event,
        ok: done.ok,
        status: done.status.and_then(|s| u16::try_from(s).ok()),
        error: done.error,
        attempts: u32::try_from(done.attempts).unwrap_or(u32::MAX),
        at: done.done_ms,
    }
}

/// A webhook's state that changes.
#[derive(Debug, Clone, Copy)]
struct State {
    enabled: bool,
    failures: u32,
}

/// One webhook, as last read from the database.
#[derive(Debug)]
pub struct Hook {
    id: String,
    spec: WebhookSpec,
    /// `spec.url`, parsed.
    url: Url,
    secret: Secret,
    created_ms: i64,
    state: Mutex<State>,
    /// A card's message as this bridge last posted or edited it, so an
    /// unchanged card is not edited again.
    shown: Mutex<Option<(String, Vec<u8>)>>,
    /// Held while a card is sent: its deliveries claimed together by this
    /// bridge go one after the other, the second seeing the first's edit
    /// (across bridges, the card's slot in the database does this).
    sending: tokio::sync::Mutex<()>,
}

impl Hook {
    /// The webhook `row` stores, with its spec, URL and secret as read
    /// from it: one constructor for a new webhook and a stored one.
    fn new(row: WebhookRow, spec: WebhookSpec, url: Url, secret: Secret) -> Arc<Self> {
        Arc::new(Self {
            id: row.id,
            spec,
            url,
            secret,
            created_ms: row.created_ms,
            state: Mutex::new(State {
                enabled: row.enabled,
                failures: row.failures,
            }),
            shown: Mutex::new(None),
            sending: tokio::sync::Mutex::new(()),
        })
    }

    fn state(&self) -> MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// The webhook as the admin's list shows it (never its secret), with
    /// its `last` deliveries, newest first.
    fn view(&self, last: Vec<Delivery>) -> Webhook {
        let state = *self.state();
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
            last_deliveries: last,
            secret: None,
        }
    }

    /// The host the webhook sends to, for log lines (never the whole URL:
    /// Discord's carry their token in the path).
    fn host(&self) -> String {
        cut(self.url.host_str().unwrap_or_default()).to_string()
    }
}

/// Every webhook and how to send to them.
#[derive(Debug)]
pub struct Webhooks {
    settings: WebhookSettings,
    store: WebhookStore,
    hooks: Mutex<Vec<Arc<Hook>>>,
    sender: Sender,
    /// Whether the stored webhooks have been read (not yet while the
    /// database was unreachable).
    loading: Loading,
    counters: Arc<NotifyCounters>,
    /// The list as published, read when a status card is sent.
    list: std::sync::OnceLock<tokio::sync::watch::Receiver<Shared>>,
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
    /// that fails validation is skipped with a log line. Requests sent
    /// are counted in `counters`.
    pub fn open(
        store: WebhookStore,
        settings: WebhookSettings,
        counters: Arc<NotifyCounters>,
    ) -> Result<Self, Error> {
        let sender = Sender::new(address::Reach::webhooks(settings.allow_private))
            .map_err(|e| Error::Webhooks(format!("cannot build the HTTP client: {e}")))?;
        Ok(Self {
            settings,
            store,
            hooks: Mutex::new(Vec::new()),
            sender,
            loading: Loading::default(),
            counters,
            list: std::sync::OnceLock::new(),
        })
    }

    /// Status cards show the list `list` publishes (until this is called,
    /// an empty one).
    pub fn show_list(&self, list: tokio::sync::watch::Receiver<Shared>) {
        let _ = self.list.set(list);
    }

    /// Whether the stored webhooks are loaded, loading them now if they
    /// are not (see [`Loading::ensure`]).
    pub async fn ensure_loaded(&self) -> bool {
        self.loading.ensure(|| self.load_all()).await
    }

    /// Reads every stored webhook; false if the database cannot be read.
    async fn load_all(&self) -> bool {
        match self.with_store(|s| s.load()).await {
            Ok(rows) => {
                let hooks: Vec<_> = rows.into_iter().filter_map(hook_of).collect();
                if self.loading.mark_loaded() {
                    info!(webhooks = hooks.len(), "the webhooks are loaded");
                }
                *self.hooks() = hooks;
                true
            }
            Err(e) => {
                throttled!(warn, error = %e, "the webhooks cannot be loaded yet; trying again while they are used");
                false
            }
        }
    }

    /// Reads the webhook `id` again: changed, added or gone.
    async fn load_one(&self, id: &str) {
        if !protocol::watch::is_webhook_id(id) {
            return;
        }
        let wanted = id.to_owned();
        let row = match self.with_store(move |s| s.get(&wanted)).await {
            Ok(row) => row,
            Err(e) => {
                throttled!(warn, error = %e, "a changed webhook cannot be read");
                return;
            }
        };
        let hook = row.and_then(hook_of);
        let mut hooks = self.hooks();
        hooks.retain(|h| h.id != id);
        if let Some(hook) = hook {
            hooks.push(hook);
            hooks.sort_by(|a, b| (a.created_ms, &a.id).cmp(&(b.created_ms, &b.id)));
        }
    }

    fn hooks(&self) -> MutexGuard<'_, Vec<Arc<Hook>>> {
        self.hooks.lock().unwrap_or_else(|p| p.into_inner())
    }

    fn find(&self, id: &str) -> Option<Arc<Hook>> {
        self.hooks().iter().find(|h| h.id == id).cloned()
    }

    /// The webhook `id` as the database has it now (read again: another
    /// bridge may have changed it a moment ago); `None` if it is gone.
    async fn fresh(&self, id: &str) -> Option<Arc<Hook>> {
        self.load_one(id).await;
        self.find(id)
    }

    /// Runs `write` on the store from a blocking thread.
    async fn with_store<T: Send + 'static>(
        &self,
        write: impl FnOnce(&WebhookStore) -> Result<T, StoreError> + Send + 'static,
    ) -> Result<T, String> {
        blocking(&self.store, write)
            .await
            .map_err(|e| e.to_string())
    }

    /// The last deliveries of `hook`, newest first (none while the
    /// database cannot be read).
    async fn last(&self, hook: &Hook) -> Vec<Delivery> {
        let id = hook.id.clone();
        self.with_store(move |s| s.recent(&id, REMEMBERED))
            .await
            .unwrap_or_default()
            .into_iter()
            .map(delivery_of)
            .collect()
    }

    /// Adds a webhook (its URL, `url`, already checked); the answer holds
    /// its secret, the only time it is shown.
    pub async fn create(&self, spec: WebhookSpec, url: Url) -> Result<Webhook, CreateError> {
        if self.hooks().len() >= MAX_WEBHOOKS {
            return Err(CreateError::Full);
        }
        let secret = Secret::generate().map_err(|_| CreateError::Random)?;
        let mut raw = [0u8; 8];
        getrandom::fill(&mut raw).map_err(|_| CreateError::Random)?;
        let num = u64::from_be_bytes(raw);
        let row = WebhookRow {
            id: format!("wh_{num:016x}"),
            spec: spec.to_json().to_string(),
            secret: secret.expose().to_owned(),
            enabled: true,
            failures: 0,
            created_ms: now_ms(),
        };
        let stored = row.clone();
        let count = self
            .with_store(move |s| s.insert(&stored, MAX_WEBHOOKS))
            .await
            .map_err(CreateError::Store)?;
        if !count {
            return Err(CreateError::Full);
        }
        let hook = Hook::new(row, spec, url, secret);
        {
            let mut hooks = self.hooks();
            hooks.retain(|h| h.id != hook.id);
            hooks.push(hook.clone());
        }
        info!(id = %hook.id, host = %hook.host(), "webhook created");
        let mut view = hook.view(Vec::new());
        view.secret = Some(hook.secret.expose().to_owned());
        Ok(view)
    }

    /// Every webhook as the admin's list shows it (read from the
    /// database now, or as last read while it cannot be).
    pub async fn list(&self) -> Vec<Webhook> {
        self.load_all().await;
        let hooks = self.hooks().clone();
        let mut out = Vec::with_capacity(hooks.len());
        for hook in hooks {
            let last = self.last(&hook).await;
            out.push(hook.view(last));
        }
        out
    }

    /// Enables (failures forgotten) or disables one (its deliveries not
    /// yet sent dropped); `None` if unknown.
    pub async fn set_enabled(&self, id: &str, enabled: bool) -> Option<Result<Webhook, String>> {
        let hook = self.fresh(id).await?;
        let failures = if enabled { 0 } else { hook.state().failures };
        let stored = hook.id.clone();
        match self
            .with_store(move |s| s.set_state(&stored, enabled, failures))
            .await
        {
            Ok(true) => {}
            Ok(false) => {
                self.hooks().retain(|h| h.id != hook.id);
                return None;
            }
            Err(e) => return Some(Err(e)),
        }
        *hook.state() = State { enabled, failures };
        let last = self.last(&hook).await;
        Some(Ok(hook.view(last)))
    }

    /// Removes one (and its deliveries not yet sent); `None` if unknown.
    pub async fn delete(&self, id: &str) -> Option<Result<(), String>> {
        let hook = self.fresh(id).await?;
        let stored = hook.id.clone();
        let deleted = self.with_store(move |s| s.delete(&stored)).await;
        if deleted.is_ok() {
            self.hooks().retain(|h| h.id != hook.id);
            info!(id = %hook.id, "webhook deleted");
        }
        Some(deleted.map(drop))
    }

    /// "Send a test": one attempt now with a made-up server, through the
    /// same signing and sending as every delivery, its outcome stored like
    /// a delivery's (but not counted towards disabling).
    pub async fn test(&self, id: &str) -> Option<Delivery> {
        let hook = self.fresh(id).await?;
        let server = ServerEntry {
            registrant: None,
            name: "Test server".into(),
            address: Some("203.0.113.1".into()),
            port: Some(51963),
            stats: protocol::Stats::default(),
        };
        let body = self.body(&hook, Kind::Test, ServerKey(0), &server, SystemTime::now());
        self.counters.attempt(CHANNEL);
        let attempt = if hook.spec.format == Format::DiscordCard {
            // The card itself, posted or edited as any change would.
            self.send_card(&hook).await
        } else {
            self.attempt(&hook, &message_id(), &body).await
        };
        let (ok, status, error) = match attempt {
            Sent::Delivered(code) => (true, Some(code), None),
            Sent::Retry { status, why, .. } | Sent::Failed { status, why } => {
                (false, status, Some(why))
            }
            Sent::Later(_) => (false, None, Some("edited less than 10 s ago")),
            Sent::Gone(_) | Sent::Dropped(_) => (false, None, Some("deleted")),
        };
        let error = error.map(str::to_owned);
        let done = DoneDelivery {
            event: Kind::Test.name().to_owned(),
            ok,
            status: status.map(i64::from),
            error,
            attempts: 1,
            done_ms: now_ms(),
        };
        let stored = (hook.id.clone(), done.clone());
        if let Err(e) = self
            .with_store(move |s| s.record(&stored.0, &stored.1))
            .await
        {
            throttled!(warn, error = %e, "a webhook's test cannot be stored");
        }
        Some(delivery_of(done))
    }

    /// One attempt of `body` to `hook`, signed with the message id `msg`.
    async fn attempt(&self, hook: &Hook, msg: &str, body: &[u8]) -> Sent {
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
            visibility: self.settings.visibility,
        };
        match hook.spec.format {
            Format::Standard => notice.standard(),
            // A card's body is made when it is sent ([`Self::send_card`]).
            Format::Discord | Format::DiscordCard => notice.discord(),
        }
    }

    /// Counts an ended delivery towards the webhook's failures in a row,
    /// disabling it after [`DISABLE_AFTER`].
    async fn count_outcome(&self, id: &str, ok: bool) {
        let Some(hook) = self.find(id) else { return };
        let before = *hook.state();
        if ok && before.failures == 0 {
            return;
        }
        let stored = id.to_owned();
        match self
            .with_store(move |s| s.outcome(&stored, ok, DISABLE_AFTER))
            .await
        {
            Ok(Some(Outcome { enabled, failures })) => {
                *hook.state() = State { enabled, failures };
                if before.enabled && !enabled {
                    warn!(id = %hook.id, host = %hook.host(), "a webhook failed {DISABLE_AFTER} deliveries in a row and is disabled until an admin enables it");
                }
            }
            Ok(None) => {}
            Err(e) => throttled!(warn, error = %e, "cannot store a webhook's state"),
        }
    }
}

impl Channel for Webhooks {
    fn name(&self) -> &'static str {
        CHANNEL
    }

    fn names(&self) -> Names {
        Names {
            outcomes: "bridge_webhook_deliveries_total",
            outcomes_help: "Webhook notifications by outcome.",
            attempts: "bridge_webhook_attempts_total",
            attempts_help: "Webhook requests sent (retries and tests included).",
            targets: "bridge_webhooks",
            targets_help: "Webhooks configured.",
            gone: false,
        }
    }

    fn targets(&self) -> usize {
        self.hooks().len()
    }

    fn decide(&self, occurrence: &Occurrence) -> Vec<Planned> {
        let hooks = self.hooks().clone();
        let mut out = Vec::new();
        for hook in hooks {
            if !hook.state().enabled {
                continue;
            }
            let spec = &hook.spec;
            if spec.format == Format::DiscordCard {
                // Any change of a server it shows: one delivery (the
                // pending bound coalesces the rest) that shows the list
                // as it is when sent.
                if spec
                    .servers
                    .matches(occurrence.key, &occurrence.server.name)
                {
                    out.push(Planned {
                        target: hook.id.clone(),
                        event: card::EVENT,
                        body: String::new(),
                        cooldown: Duration::ZERO,
                        max_pending: Some(card::PENDING),
                    });
                }
                continue;
            }
            let Some(event) = occurrence.fires(&spec.events, &spec.servers, spec.threshold) else {
                continue;
            };
            let body = self.body(
                &hook,
                Kind::Event(event),
                occurrence.key,
                &occurrence.server,
                occurrence.at,
            );
            out.push(Planned {
                target: hook.id.clone(),
                event: event.name(),
                body: String::from_utf8_lossy(&body).into_owned(),
                cooldown: Duration::from_secs(spec.cooldown),
                max_pending: Some(MAX_PENDING),
            });
        }
        out
    }

    fn reload(&self) -> BoxFuture<'_, bool> {
        self.load_all().boxed()
    }

    fn changed<'a>(&'a self, id: &'a str) -> BoxFuture<'a, ()> {
        self.load_one(id).boxed()
    }

    fn send<'a>(&'a self, delivery: &'a DeliveryRow) -> BoxFuture<'a, Sent> {
        async move {
            let mut hook = self.find(&delivery.target);
            if !hook.as_ref().is_some_and(|h| h.state().enabled) {
                // Maybe changed on another bridge a moment ago.
                self.load_one(&delivery.target).await;
                hook = self.find(&delivery.target);
            }
            let Some(hook) = hook else {
                return Sent::Dropped("deleted");
            };
            if !hook.state().enabled {
                return Sent::Dropped("disabled");
            }
            if hook.spec.format == Format::DiscordCard {
                return self.send_card(&hook).await;
            }
            self.attempt(&hook, &delivery.msg_id, delivery.body.as_bytes())
                .await
        }
        .boxed()
    }

    fn retry_wait(&self, next: u32, after: Option<Duration>) -> Option<Duration> {
        deliver::wait_before(next, after)
    }

    fn keeps_done(&self) -> bool {
        true
    }

    fn ended<'a>(&'a self, delivery: &'a DeliveryRow, sent: &'a Sent) -> BoxFuture<'a, ()> {
        async move {
            match sent {
                Sent::Delivered(_) => self.count_outcome(&delivery.target, true).await,
                Sent::Dropped(_) | Sent::Later(_) => {}
                Sent::Retry { .. } | Sent::Failed { .. } | Sent::Gone(_) => {
                    self.count_outcome(&delivery.target, false).await;
                }
            }
        }
        .boxed()
    }
}

/// A stored row as a webhook, if it is valid (a row is trusted no more
/// than a request).
fn hook_of(row: WebhookRow) -> Option<Arc<Hook>> {
    let id_ok = protocol::watch::is_webhook_id(&row.id);
    let spec = serde_json::from_str::<Value>(&row.spec)
        .ok()
        .and_then(|v| WebhookSpec::from_value(&v).ok());
    let url = spec.as_ref().and_then(|s| Url::parse(&s.url).ok());
    let secret = Secret::parse(&row.secret);
    match (id_ok, spec, url, secret) {
        (true, Some(spec), Some(url), Some(secret)) => Some(Hook::new(row, spec, url, secret)),
        _ => {
            warn!(id = %cut(&row.id), "a stored webhook is not valid and is skipped");
            None
        }
    }
}
