//! Web Push for players, without an account (`docs/protocol.md` §2.4):
//! the browsers' subscriptions (kept by a [`PushStore`]: the bridge's
//! database), which of their watches an event fires (from
//! [`crate::watch`], with a cooldown per subscription, key and event), and
//! the pushes: queued (at most [`MAX_QUEUED`]), sent by tasks of their own
//! with at most [`MAX_IN_FLIGHT`] requests at once, so one event for ten
//! thousand subscriptions never holds the list's path or an unbounded
//! number of connections. [`api`] is the HTTP side; [`vapid`] the key
//! that signs; [`deliver`] one push.
//!
//! A subscription is named by its endpoint (its id is a hash of it) and
//! can be changed or removed only by who knows its `auth` secret too,
//! compared in constant time.

pub(crate) mod api;
pub mod deliver;
pub mod store;
pub mod vapid;

use std::{
    collections::{HashMap, HashSet},
    fmt::Write as _,
    net::IpAddr,
    sync::{
        atomic::{AtomicBool, AtomicU64, Ordering::Relaxed},
        Arc, Mutex, MutexGuard, OnceLock,
    },
    time::Duration,
};

use master::{limits::address_key, throttled};
use protocol::{
    push::{PushRequest, PushWatch, Schemes, Subscription},
    watch::{Event, DEFAULT_COOLDOWN},
    webhook::Kind,
    Addresses, ServerKey,
};
use serde_json::Value;
use sha2::{Digest, Sha256};
use subtle::ConstantTimeEq;
use tokio::{
    sync::{broadcast::error::RecvError, mpsc, Semaphore},
    time::Instant,
};
use tokio_util::{sync::CancellationToken, task::TaskTracker};
use tracing::{info, warn};
use url::Url;

use self::{
    deliver::{Outcome, Pusher},
    store::{PushStore, Row},
    vapid::Vapid,
};
use crate::{
    error::Error,
    history::{now_ms, Leader, StoreError},
    watch::{Cooldowns, Occurrence, MAX_COOLDOWN_ENTRIES},
    webhooks::{
        address::Reach,
        payload::{page_url, Notice},
    },
};

/// Push requests in flight at once, over all subscriptions.
pub const MAX_IN_FLIGHT: usize = 64;
/// Pushes waiting for their turn at most; more are dropped, and counted.
pub const MAX_QUEUED: usize = 200_000;
/// Deliveries (waiting to retry or sending) at once; past it the queue
/// waits.
const MAX_DELIVERIES: usize = 1024;
/// Attempts of one push at most.
const MAX_ATTEMPTS: u32 = 2;
/// The longest wait before the second attempt a push service may ask
/// for; a longer one drops the push.
const MAX_RETRY_WAIT: Duration = Duration::from_secs(10);
/// How often loading the key and subscriptions is tried again while the
/// database cannot be read.
const RELOAD_EVERY: Duration = Duration::from_secs(5);
/// How often a bridge reads the subscriptions again when other bridges
/// share its database (they take subscriptions too: the sending bridge
/// must watch them, and every bridge's limits count them).
const SHARED_RELOAD_EVERY: Duration = Duration::from_secs(10);

/// What Web Push needs of the bridge's configuration.
#[derive(Debug, Clone)]
pub struct Settings {
    /// `--push-allow-insecure`: `http` endpoints on loopback addresses.
    pub allow_insecure: bool,
    /// `--public-url`, without a trailing `/`: page links are absolute,
    /// and it is the VAPID contact.
    pub public_url: Option<String>,
    /// Whether payloads carry addresses (not with `--hide-addresses`).
    pub addresses: Addresses,
    /// Subscriptions kept at most.
    pub max_subscriptions: usize,
    /// Subscriptions per client address (IPv6: per /64).
    pub max_per_address: usize,
}

impl Settings {
    /// Which endpoint schemes requests may name.
    pub fn schemes(&self) -> Schemes {
        if self.allow_insecure {
            Schemes::AlsoHttp
        } else {
            Schemes::Https
        }
    }

    /// Which addresses endpoints may resolve to.
    pub fn reach(&self) -> Reach {
        if self.allow_insecure {
            Reach::AlsoLoopback
        } else {
            Reach::Public
        }
    }
}

/// A subscription's id: the first 8 bytes of the SHA-256 of its endpoint.
fn sub_id(endpoint: &str) -> u64 {
    let digest = Sha256::digest(endpoint.as_bytes());
    let mut first = [0u8; 8];
    first.copy_from_slice(&digest[..8]);
    u64::from_be_bytes(first)
}

/// A subscription's `auth` secret as the store keeps it (base64url).
fn auth_text(sub: &Subscription) -> String {
    use base64::{engine::general_purpose::URL_SAFE_NO_PAD, Engine as _};
    URL_SAFE_NO_PAD.encode(sub.auth)
}

/// One browser's subscription and its watches.
#[derive(Debug)]
struct Sub {
    id: u64,
    subscription: Subscription,
    /// Its endpoint, parsed.
    url: Url,
    watches: Vec<PushWatch>,
    /// The network it was made from.
    source: String,
    created_ms: i64,
}

impl Sub {
    /// Whether `other` names this subscription: the same endpoint and
    /// `auth` secret (compared in constant time).
    fn is(&self, other: &Subscription) -> bool {
        self.subscription.endpoint == other.endpoint
            && bool::from(self.subscription.auth.ct_eq(&other.auth))
    }

    fn row(&self, updated_ms: i64) -> Row {
        Row {
            id: format!("{:016x}", self.id),
            subscription: self.subscription.to_json().to_string(),
            watches: PushRequest::watches_json(&self.watches).to_string(),
            source: self.source.clone(),
            auth: auth_text(&self.subscription),
            created_ms: self.created_ms,
            updated_ms,
        }
    }
}

/// Every subscription, and the indexes that keep an event's work and the
/// limits' counts small.
#[derive(Debug, Default)]
struct Table {
    subs: HashMap<u64, Arc<Sub>>,
    /// The subscriptions watching each key.
    by_key: HashMap<ServerKey, HashSet<u64>>,
    /// Subscriptions per source.
    per_source: HashMap<String, usize>,
}

impl Table {
    /// Puts `sub` in, replacing the one with its id; the one replaced.
    fn insert(&mut self, sub: Arc<Sub>) -> Option<Arc<Sub>> {
        let old = self.remove(sub.id);
        for w in &sub.watches {
            self.by_key.entry(w.key).or_default().insert(sub.id);
        }
        *self.per_source.entry(sub.source.clone()).or_default() += 1;
        self.subs.insert(sub.id, sub);
        old
    }

    fn remove(&mut self, id: u64) -> Option<Arc<Sub>> {
        let old = self.subs.remove(&id)?;
        for w in &old.watches {
            if let Some(ids) = self.by_key.get_mut(&w.key) {
                ids.remove(&id);
                if ids.is_empty() {
                    self.by_key.remove(&w.key);
                }
            }
        }
        if let Some(n) = self.per_source.get_mut(&old.source) {
            *n -= 1;
            if *n == 0 {
                self.per_source.remove(&old.source);
            }
        }
        Some(old)
    }
}

/// One push waiting for its turn.
#[derive(Debug)]
struct Job {
    sub: Arc<Sub>,
    event: Event,
    key: ServerKey,
    /// The payload, the same for every subscription of one event.
    body: Arc<[u8]>,
}

/// What `/metrics` shows of the pushes.
#[derive(Debug, Default)]
struct Counters {
    delivered: AtomicU64,
    gone: AtomicU64,
    failed: AtomicU64,
    dropped: AtomicU64,
    attempts: AtomicU64,
}

/// How a `PUT` ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Put {
    Created,
    Replaced,
}

/// Why a `PUT` or `DELETE` was refused.
#[derive(Debug, thiserror::Error)]
pub enum Refusal {
    #[error("subscription.keys.auth: does not match the stored subscription")]
    NotYours,
    #[error("too many push subscriptions from your address")]
    PerAddress,
    #[error("the bridge holds as many push subscriptions as it takes")]
    Full,
    #[error("no such subscription")]
    Unknown,
    #[error("cannot store it: {0}")]
    Store(String),
}

/// Every subscription of this bridge and their pushes.
#[derive(Debug)]
pub struct Push {
    settings: Settings,
    store: Arc<dyn PushStore>,
    table: Mutex<Table>,
    vapid: OnceLock<Arc<Vapid>>,
    /// Whether other bridges share the store (read once with the key).
    shared: AtomicBool,
    loaded: AtomicBool,
    last_load: tokio::sync::Mutex<Option<Instant>>,
    pusher: Pusher,
    in_flight: Arc<Semaphore>,
    deliveries: Arc<Semaphore>,
    queue: mpsc::Sender<Job>,
    queued: Mutex<Option<mpsc::Receiver<Job>>>,
    jobs: TaskTracker,
    /// Whether this bridge sends: the one that records the history.
    leader: Arc<Leader>,
    counters: Counters,
    cancel: CancellationToken,
}

impl Push {
    /// Web Push over `store`, read when first needed.
    pub fn open(
        store: Arc<dyn PushStore>,
        leader: Arc<Leader>,
        settings: Settings,
    ) -> Result<Self, Error> {
        let pusher = Pusher::new(settings.reach())
            .map_err(|e| Error::Webhooks(format!("cannot build the push client: {e}")))?;
        let (queue, queued) = mpsc::channel(MAX_QUEUED);
        Ok(Self {
            settings,
            store,
            table: Mutex::new(Table::default()),
            vapid: OnceLock::new(),
            shared: AtomicBool::new(false),
            loaded: AtomicBool::new(false),
            last_load: tokio::sync::Mutex::new(None),
            pusher,
            in_flight: Arc::new(Semaphore::new(MAX_IN_FLIGHT)),
            deliveries: Arc::new(Semaphore::new(MAX_DELIVERIES)),
            queue,
            queued: Mutex::new(Some(queued)),
            jobs: TaskTracker::new(),
            leader,
            counters: Counters::default(),
            cancel: CancellationToken::new(),
        })
    }

    /// The settings it runs with.
    pub fn settings(&self) -> &Settings {
        &self.settings
    }

    fn table(&self) -> MutexGuard<'_, Table> {
        self.table.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Runs `f` on the store from a blocking thread.
    async fn with_store<T: Send + 'static>(
        &self,
        f: impl FnOnce(&dyn PushStore) -> Result<T, StoreError> + Send + 'static,
    ) -> Result<T, String> {
        let store = self.store.clone();
        tokio::task::spawn_blocking(move || f(store.as_ref()).map_err(|e| e.to_string()))
            .await
            .map_err(|e| e.to_string())?
    }

    /// The VAPID key, once the key and the subscriptions are read from
    /// the store (tried again at most every [`RELOAD_EVERY`] while it
    /// cannot be read); `None` until then.
    pub async fn ready(&self) -> Option<Arc<Vapid>> {
        if self.loaded.load(Relaxed) {
            return self.vapid.get().cloned();
        }
        let mut last = self.last_load.lock().await;
        if self.loaded.load(Relaxed) {
            return self.vapid.get().cloned();
        }
        let now = Instant::now();
        if last.is_some_and(|t| now.duration_since(t) < RELOAD_EVERY) {
            return None;
        }
        *last = Some(now);
        if self.vapid.get().is_none() {
            let candidate = Vapid::generate_secret();
            let contact = self.settings.public_url.clone();
            let read = self
                .with_store(move |s| Ok((s.vapid_secret(&candidate)?, s.shared())))
                .await;
            match read {
                Ok((secret, shared)) => match Vapid::from_secret(&secret, contact) {
                    Ok(v) => {
                        self.shared.store(shared, Relaxed);
                        let _ = self.vapid.set(Arc::new(v));
                    }
                    Err(e) => {
                        throttled!(warn, error = %e, "Web Push is off: its stored key cannot be used");
                        return None;
                    }
                },
                Err(e) => {
                    throttled!(warn, error = %e, "the Web Push key cannot be read yet; trying again while it is used");
                    return None;
                }
            }
        }
        if !self.reload().await {
            return None;
        }
        self.loaded.store(true, Relaxed);
        self.vapid.get().cloned()
    }

    /// Reads every stored subscription into the table; false if the
    /// store could not be read. A row that fails validation is skipped
    /// with a log line.
    async fn reload(&self) -> bool {
        let rows = match self.with_store(|s| s.load()).await {
            Ok(rows) => rows,
            Err(e) => {
                throttled!(warn, error = %e, "the push subscriptions cannot be read yet");
                return false;
            }
        };
        let mut table = Table::default();
        let mut skipped = 0usize;
        for row in rows {
            if table.subs.len() >= self.settings.max_subscriptions {
                skipped += 1;
                continue;
            }
            match self.sub_of(row) {
                Some(sub) => {
                    table.insert(Arc::new(sub));
                }
                None => skipped += 1,
            }
        }
        if skipped > 0 {
            warn!(
                skipped,
                "stored push subscriptions that are not valid (or past the limit) are skipped"
            );
        }
        let n = table.subs.len();
        *self.table() = table;
        if !self.loaded.load(Relaxed) {
            info!(subscriptions = n, "the push subscriptions are loaded");
        }
        true
    }

    /// A stored row as a subscription, if it is valid.
    fn sub_of(&self, row: Row) -> Option<Sub> {
        let subscription = serde_json::from_str::<Value>(&row.subscription)
            .ok()
            .and_then(|v| Subscription::from_value(Some(&v), self.settings.schemes()).ok())?;
        let watches = serde_json::from_str::<Value>(&row.watches)
            .ok()
            .and_then(|v| PushRequest::watches_from_value(&v).ok())?;
        let id = sub_id(&subscription.endpoint);
        let url = Url::parse(&subscription.endpoint).ok()?;
        if row.id != format!("{id:016x}") || !point_ok(&subscription) {
            return None;
        }
        let source = row.source.parse::<IpAddr>().ok()?.to_string();
        Some(Sub {
            id,
            subscription,
            url,
            watches,
            source,
            created_ms: row.created_ms,
        })
    }

    /// Creates or replaces the subscription of `req` (already validated,
    /// its endpoint parsed as `url` and checked) made from `client`.
    pub async fn put(&self, req: PushRequest, url: Url, client: IpAddr) -> Result<Put, Refusal> {
        let id = sub_id(&req.subscription.endpoint);
        let source = address_key(client).to_string();
        let (sub, old) = {
            let mut table = self.table();
            let old = table.subs.get(&id).cloned();
            let (source, created_ms) = match &old {
                Some(old) if !old.is(&req.subscription) => return Err(Refusal::NotYours),
                // A replacement counts where it was made.
                Some(old) => (old.source.clone(), old.created_ms),
                None => {
                    if table.subs.len() >= self.settings.max_subscriptions {
                        return Err(Refusal::Full);
                    }
                    if table.per_source.get(&source).copied().unwrap_or(0)
                        >= self.settings.max_per_address
                    {
                        return Err(Refusal::PerAddress);
                    }
                    (source, now_ms())
                }
            };
            let sub = Arc::new(Sub {
                id,
                subscription: req.subscription,
                url,
                watches: req.watches,
                source,
                created_ms,
            });
            table.insert(sub.clone());
            (sub, old)
        };
        let row = sub.row(now_ms());
        // The store checks the auth secret too: another bridge on the same
        // database may hold the subscription this one has not read yet.
        let written = self.with_store(move |s| s.put(&row)).await;
        if written != Ok(true) {
            let mut table = self.table();
            table.remove(id);
            if let Some(old) = old {
                table.insert(old);
            }
            return Err(match written {
                Err(e) => Refusal::Store(e),
                Ok(_) => Refusal::NotYours,
            });
        }
        Ok(if old.is_some() {
            Put::Replaced
        } else {
            Put::Created
        })
    }

    /// Removes the subscription `sub` names (endpoint and auth secret).
    pub async fn remove(&self, sub: &Subscription) -> Result<(), Refusal> {
        let id = sub_id(&sub.endpoint);
        let held = {
            let mut table = self.table();
            match table.subs.get(&id) {
                Some(stored) if stored.is(sub) => table.remove(id).is_some(),
                Some(_) => return Err(Refusal::Unknown),
                None => false,
            }
        };
        // Also when this bridge does not hold it: another on the same
        // database may have taken it (the store checks the auth secret).
        let text = format!("{id:016x}");
        let auth = auth_text(sub);
        match self.with_store(move |s| s.delete(&text, Some(&auth))).await {
            Ok(deleted) if deleted || held => Ok(()),
            Ok(_) => Err(Refusal::Unknown),
            Err(e) => Err(Refusal::Store(e)),
        }
    }

    /// Forgets a subscription its push service says is gone.
    async fn forget(&self, id: u64) {
        if self.table().remove(id).is_none() {
            return;
        }
        let text = format!("{id:016x}");
        if let Err(e) = self.with_store(move |s| s.delete(&text, None)).await {
            throttled!(warn, error = %e, "cannot delete a push subscription that is gone");
        }
    }

    /// Subscriptions held.
    pub fn len(&self) -> usize {
        self.table().subs.len()
    }

    /// Whether none is held.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Pushes what `events` brings until `cancel` fires.
    pub async fn run(
        self: Arc<Self>,
        mut events: tokio::sync::broadcast::Receiver<Arc<Occurrence>>,
        cancel: CancellationToken,
    ) {
        let cap = MAX_COOLDOWN_ENTRIES.max(self.settings.max_subscriptions.saturating_mul(4));
        let mut cooldowns = Cooldowns::<u64>::with_cap(cap);
        let queued = self.queued.lock().unwrap_or_else(|p| p.into_inner()).take();
        let dispatcher = queued.map(|rx| tokio::spawn(self.clone().dispatch(rx)));
        let mut reload = tokio::time::interval(SHARED_RELOAD_EVERY);
        reload.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
        self.ready().await;
        loop {
            let occurrence = tokio::select! {
                () = cancel.cancelled() => break,
                _ = reload.tick() => {
                    if self.loaded.load(Relaxed) && self.shared.load(Relaxed) {
                        self.reload().await;
                    }
                    continue;
                }
                got = events.recv() => match got {
                    Ok(o) => o,
                    Err(RecvError::Lagged(n)) => {
                        self.counters.dropped.fetch_add(n, Relaxed);
                        throttled!(warn, lost = n, "Web Push fell behind the list's events; some were dropped");
                        continue;
                    }
                    Err(RecvError::Closed) => break,
                },
            };
            if !self.leader.is_leader() || self.ready().await.is_none() {
                continue;
            }
            self.fire(&occurrence, &mut cooldowns);
        }
        self.cancel.cancel();
        if let Some(d) = dispatcher {
            d.abort();
        }
        self.jobs.close();
        let _ = tokio::time::timeout(Duration::from_secs(1), self.jobs.wait()).await;
    }

    /// Queues a push for every watch `occurrence` fires, past its
    /// cooldown.
    fn fire(&self, occurrence: &Occurrence, cooldowns: &mut Cooldowns<u64>) {
        let now = Instant::now();
        let cooldown = Duration::from_secs(DEFAULT_COOLDOWN);
        let mut bodies: HashMap<Event, Arc<[u8]>> = HashMap::new();
        let targets: Vec<(Arc<Sub>, Event)> = {
            let table = self.table();
            let Some(ids) = table.by_key.get(&occurrence.key) else {
                return;
            };
            let mut out = Vec::new();
            for id in ids {
                let Some(sub) = table.subs.get(id) else {
                    continue;
                };
                let mut fired: Option<Event> = None;
                for w in sub.watches.iter().filter(|w| w.key == occurrence.key) {
                    if let Some(e) = occurrence.fires_on_key(&w.events, w.threshold) {
                        fired = Some(e);
                        break;
                    }
                }
                if let Some(event) = fired {
                    if cooldowns.allow(&sub.id, occurrence.key, event, cooldown, now) {
                        out.push((sub.clone(), event));
                    }
                }
            }
            out
        };
        for (sub, event) in targets {
            let body = bodies
                .entry(event)
                .or_insert_with(|| self.body(event, occurrence).into())
                .clone();
            let job = Job {
                sub,
                event,
                key: occurrence.key,
                body,
            };
            if self.queue.try_send(job).is_err() {
                self.counters.dropped.fetch_add(1, Relaxed);
                throttled!(warn, "the push queue is full; a push was dropped");
            }
        }
    }

    /// The payload: the same body a `"standard"` webhook gets.
    fn body(&self, event: Event, occurrence: &Occurrence) -> Vec<u8> {
        Notice {
            kind: Kind::Event(event),
            key: occurrence.key,
            server: &occurrence.server,
            at: occurrence.at,
            page: page_url(self.settings.public_url.as_deref(), occurrence.key),
            addresses: self.settings.addresses,
        }
        .standard()
    }

    /// Takes queued pushes in order, at most [`MAX_DELIVERIES`] at once.
    async fn dispatch(self: Arc<Self>, mut queued: mpsc::Receiver<Job>) {
        while let Some(job) = queued.recv().await {
            let Ok(slot) = self.deliveries.clone().acquire_owned().await else {
                return;
            };
            let this = self.clone();
            self.jobs.spawn(async move {
                this.deliver(job).await;
                drop(slot);
            });
        }
    }

    /// One push: at most [`MAX_ATTEMPTS`] attempts, each under the bound
    /// of requests in flight.
    async fn deliver(&self, job: Job) {
        let Some(vapid) = self.vapid.get() else {
            self.counters.dropped.fetch_add(1, Relaxed);
            return;
        };
        let authorization = match vapid.authorization(&job.sub.url) {
            Ok(a) => a,
            Err(e) => {
                self.counters.failed.fetch_add(1, Relaxed);
                throttled!(warn, error = %e, "a push could not be signed");
                return;
            }
        };
        let ttl = deliver::ttl(job.event);
        let topic = deliver::topic(job.key, job.event);
        for n in 1..=MAX_ATTEMPTS {
            if !self.table().subs.contains_key(&job.sub.id) {
                self.counters.dropped.fetch_add(1, Relaxed);
                return;
            }
            let outcome = {
                let Ok(_permit) = self.in_flight.acquire().await else {
                    return;
                };
                self.counters.attempts.fetch_add(1, Relaxed);
                self.pusher
                    .send(
                        &job.sub.subscription,
                        &job.sub.url,
                        &authorization,
                        &job.body,
                        ttl,
                        &topic,
                    )
                    .await
            };
            match outcome {
                Outcome::Delivered(_) => {
                    self.counters.delivered.fetch_add(1, Relaxed);
                    return;
                }
                Outcome::Gone(_) => {
                    self.counters.gone.fetch_add(1, Relaxed);
                    self.forget(job.sub.id).await;
                    return;
                }
                Outcome::Failed { status, why } => {
                    self.counters.failed.fetch_add(1, Relaxed);
                    throttled!(warn, ?status, why, "a push service refused a push");
                    return;
                }
                Outcome::Retry { after, .. } => {
                    let wait = after
                        .unwrap_or(Duration::from_secs(1))
                        .max(Duration::from_secs(1));
                    if n == MAX_ATTEMPTS || wait > MAX_RETRY_WAIT {
                        break;
                    }
                    tokio::select! {
                        () = self.cancel.cancelled() => return,
                        () = tokio::time::sleep(wait) => {}
                    }
                }
            }
        }
        self.counters.failed.fetch_add(1, Relaxed);
        throttled!(warn, "a push service did not take a push after retrying");
    }

    /// Appends the pushes' lines to `/metrics`' text.
    pub fn render(&self, out: &mut String) {
        let c = &self.counters;
        let _ = write!(
            out,
            "# HELP bridge_push_sent_total Web Push notifications by outcome (gone: the \
             subscription was deleted).\n\
             # TYPE bridge_push_sent_total counter\n\
             bridge_push_sent_total{{result=\"delivered\"}} {}\n\
             bridge_push_sent_total{{result=\"gone\"}} {}\n\
             bridge_push_sent_total{{result=\"failed\"}} {}\n\
             bridge_push_sent_total{{result=\"dropped\"}} {}\n\
             # HELP bridge_push_attempts_total Web Push requests sent.\n\
             # TYPE bridge_push_attempts_total counter\nbridge_push_attempts_total {}\n\
             # HELP bridge_push_subscriptions Web Push subscriptions held.\n\
             # TYPE bridge_push_subscriptions gauge\nbridge_push_subscriptions {}\n",
            c.delivered.load(Relaxed),
            c.gone.load(Relaxed),
            c.failed.load(Relaxed),
            c.dropped.load(Relaxed),
            c.attempts.load(Relaxed),
            self.len(),
        );
    }
}

/// Whether the subscription's `p256dh` is a point on P-256 (the protocol
/// checks only its form).
pub fn point_ok(sub: &Subscription) -> bool {
    web_push_native::p256::PublicKey::from_sec1_bytes(&sub.p256dh).is_ok()
}
