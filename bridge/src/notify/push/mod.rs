//! Web Push for players, without an account (`docs/protocol.md` §2.4):
//! the browsers' subscriptions (kept by a [`PushStore`]: the bridge's
//! database, read again whenever any bridge changes one, see
//! [`crate::notify`]), which of their watches an event fires, and how one
//! push is sent: a [`Channel`] of the notification engine, which keeps
//! the pushes, their retries and cooldowns as rows. [`api`] is the HTTP
//! side; [`vapid`] the key that signs; [`deliver`] one push; [`table`]
//! the subscriptions held and their indexes.
//!
//! A subscription is named by its endpoint (its id is a hash of it) and
//! can be changed or removed only by who knows its `auth` secret too,
//! compared in constant time.
//!
//! No host can fill the store for everyone: a watch names a key the
//! bridge has listed; a subscription not renewed within
//! [`PushSettings::expire_after`] is deleted (the page renews it on every
//! load); when the store is full, the source holding the most
//! subscriptions gives up its oldest to a new one; the admin sees the
//! count per source and can purge one. Every push carries a contact for
//! the push services ([`PushSettings::contact`]): without one, Web Push is
//! off, and says so.

pub(crate) mod api;
pub mod deliver;
mod table;
pub mod vapid;

use std::{
    collections::HashMap,
    net::IpAddr,
    str::FromStr,
    sync::{Arc, Mutex, MutexGuard, OnceLock},
    time::Duration,
};

use futures_util::future::{BoxFuture, FutureExt};
use master::{limits::address_key, throttled};
use protocol::{
    push::{PushRequest, Schemes, Subscription},
    watch::{Event, DEFAULT_COOLDOWN},
    webhook::Kind,
    ServerKey,
};
use serde_json::Value;
use tokio_util::sync::CancellationToken;
use tracing::{info, warn};
use url::Url;

use self::{
    deliver::Pusher,
    table::{auth_text, sub_id, Sub, Table},
    vapid::Vapid,
};
use crate::{
    db::store::{blocking, now_ms, DeliveryRow, PushRow, PushStore, StoreError},
    error::Error,
    notify::{
        channel::{Channel, Loading, Names, Planned, Sent},
        watch::Occurrence,
        webhooks::{
            address::Reach,
            payload::{page_url, Notice},
        },
    },
    visibility::Visibility,
};

/// Attempts of one push at most.
const MAX_ATTEMPTS: u32 = 2;
/// The longest wait before the second attempt a push service may ask
/// for; a longer one drops the push.
const MAX_RETRY_WAIT: Duration = Duration::from_secs(10);
/// The name of the pushes' rows and change notes.
pub use crate::db::store::PUSH_CHANNEL as CHANNEL;
/// The longest wait between two sweeps for expired subscriptions.
const SWEEP_EVERY: Duration = Duration::from_secs(600);
/// Subscriptions deleted per transaction by a sweep or a purge.
const REMOVE_BATCH: i64 = 1000;
/// Why Web Push is off without a contact (what `/api/push/key` says).
pub const NO_CONTACT: &str = "Web Push is off: this lobby has no contact for the browsers' push services (the operator sets --push-contact, or an https --public-url)";
/// Sources the admin's list shows at most (those holding the most).
pub const MAX_LISTED_SOURCES: usize = 100;

/// What Web Push needs of the bridge's configuration.
#[derive(Debug, Clone)]
pub struct PushSettings {
    /// `--push-allow-insecure`: `http` endpoints on loopback addresses.
    pub allow_insecure: bool,
    /// `--public-url`, without a trailing `/`: page links are absolute
    /// with it.
    pub public_url: Option<String>,
    /// The VAPID contact (`sub`) every push carries, a `mailto:` or
    /// `https:` URI ([`vapid::contact`]); else why Web Push is off.
    pub contact: Result<String, String>,
    /// How long a subscription is kept without being renewed.
    pub expire_after: Duration,
    /// What viewers see, so payloads carry addresses only where they do
    /// (not with `--hide-addresses`).
    pub visibility: Visibility,
    /// Subscriptions kept at most.
    pub max_subscriptions: usize,
    /// Subscriptions per client address (IPv6: per /64).
    pub max_per_address: usize,
}

impl PushSettings {
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

/// How a `PUT` ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Put {
    Created,
    Replaced,
}

/// Why a `PUT` or `DELETE` was refused.
#[derive(Debug, thiserror::Error)]
pub enum PushRefusal {
    #[error("{0}")]
    Off(String),
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

/// Every subscription and how to push to them.
#[derive(Debug)]
pub struct Push {
    settings: PushSettings,
    store: PushStore,
    table: Mutex<Table>,
    vapid: OnceLock<Arc<Vapid>>,
    /// Whether the key and the subscriptions have been read.
    loading: Loading,
    pusher: Pusher,
}

impl Push {
    /// Web Push over `store`, read when first needed.
    pub fn open(store: PushStore, settings: PushSettings) -> Result<Self, Error> {
        let pusher = Pusher::new(settings.reach())
            .map_err(|e| Error::Webhooks(format!("cannot build the push client: {e}")))?;
        Ok(Self {
            settings,
            store,
            table: Mutex::new(Table::default()),
            vapid: OnceLock::new(),
            loading: Loading::default(),
            pusher,
        })
    }

    /// The settings it runs with.
    pub fn settings(&self) -> &PushSettings {
        &self.settings
    }

    /// Why Web Push is off (no contact for the push services), if it is.
    pub fn off(&self) -> Option<&str> {
        self.settings.contact.as_ref().err().map(String::as_str)
    }

    /// The oldest `updated_ms` a subscription kept now may have.
    fn fresh_since(&self) -> i64 {
        let keep = i64::try_from(self.settings.expire_after.as_millis()).unwrap_or(i64::MAX);
        now_ms().saturating_sub(keep)
    }

    fn table(&self) -> MutexGuard<'_, Table> {
        self.table.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Runs `f` on the store from a blocking thread.
    async fn with_store<T: Send + 'static>(
        &self,
        f: impl FnOnce(&PushStore) -> Result<T, StoreError> + Send + 'static,
    ) -> Result<T, String> {
        blocking(&self.store, f).await.map_err(|e| e.to_string())
    }

    /// The VAPID key, once the key and the subscriptions are read from
    /// the store (also while Web Push is off: the admin still sees and
    /// purges what is stored) (tried again while they cannot be read, see
    /// [`Loading::ensure`]); `None` until then.
    pub async fn ready(&self) -> Option<Arc<Vapid>> {
        if !self.loading.ensure(|| self.load()).await {
            return None;
        }
        self.vapid.get().cloned()
    }

    /// Reads the VAPID key (stored by the first bridge to ask) unless it
    /// is held, then every subscription; whether both were read.
    async fn load(&self) -> bool {
        if self.vapid.get().is_none() {
            let candidate = Vapid::generate_secret();
            let contact = self.settings.contact.clone().ok();
            let read = self.with_store(move |s| s.vapid_secret(&candidate)).await;
            match read.map(|secret| Vapid::from_secret(&secret, contact)) {
                Ok(Ok(v)) => {
                    let _ = self.vapid.set(Arc::new(v));
                }
                Ok(Err(e)) => {
                    throttled!(warn, error = %e, "Web Push is off: its stored key cannot be used");
                    return false;
                }
                Err(e) => {
                    throttled!(warn, error = %e, "the Web Push key cannot be read yet; trying again while it is used");
                    return false;
                }
            }
        }
        self.read_all().await
    }

    /// Reads every stored subscription into the table; false if the
    /// store could not be read. A row that fails validation is skipped
    /// with a log line.
    async fn read_all(&self) -> bool {
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
        if !self.loading.is_loaded() {
            info!(subscriptions = n, "the push subscriptions are loaded");
        }
        true
    }

    /// A stored row as a subscription, if it is valid.
    fn sub_of(&self, row: PushRow) -> Option<Sub> {
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
            updated_ms: row.updated_ms,
        })
    }

    /// Creates or replaces the subscription of `req` (already validated,
    /// its endpoint parsed as `url` and checked) made from `client`.
    /// A new one takes the place of a squatter's oldest when the store
    /// is full ([`Table::squatter`]); a known one is renewed.
    pub async fn put(
        &self,
        req: PushRequest,
        url: Url,
        client: IpAddr,
    ) -> Result<Put, PushRefusal> {
        if let Some(why) = self.off() {
            return Err(PushRefusal::Off(why.to_owned()));
        }
        let id = sub_id(&req.subscription.endpoint);
        let source = address_key(client).to_string();
        let now = now_ms();
        let (sub, old, evicted) = {
            let mut table = self.table();
            let old = table.subs.get(&id).cloned();
            let mut evicted = None;
            let (source, created_ms) = match &old {
                Some(old) if !old.is(&req.subscription) => return Err(PushRefusal::NotYours),
                // A replacement counts where it was made.
                Some(old) => (old.source.clone(), old.created_ms),
                None => {
                    if table.count(&source) >= self.settings.max_per_address {
                        return Err(PushRefusal::PerAddress);
                    }
                    if table.subs.len() >= self.settings.max_subscriptions {
                        let victim = table.squatter().ok_or(PushRefusal::Full)?;
                        evicted = table.remove(victim);
                    }
                    (source, now)
                }
            };
            let sub = Arc::new(Sub {
                id,
                subscription: req.subscription,
                url,
                watches: req.watches,
                source,
                created_ms,
                updated_ms: now,
            });
            table.insert(sub.clone());
            (sub, old, evicted)
        };
        // The one making room goes first: the other bridges read the
        // changes in order, and one that is full takes the new one only
        // once the room is made.
        let mut evicted_kept = None;
        if let Some(evicted) = evicted {
            throttled!(
                warn,
                source = %evicted.source,
                "the push subscriptions are at their limit: the source holding the most gave up its oldest for a new one"
            );
            let text = format!("{:016x}", evicted.id);
            if let Err(e) = self.with_store(move |s| s.delete(&text, None)).await {
                throttled!(warn, error = %e, "cannot delete a push subscription that made room");
                evicted_kept = Some(evicted);
            }
        }
        let row = sub.row(now);
        // The store checks the auth secret too: another bridge on the same
        // database may hold the subscription this one has not read yet.
        let written = self.with_store(move |s| s.put(&row)).await;
        if written != Ok(true) {
            let mut table = self.table();
            table.remove(id);
            if let Some(old) = old {
                table.insert(old);
            }
            if let Some(evicted) = evicted_kept {
                table.insert(evicted);
            }
            return Err(match written {
                Err(e) => PushRefusal::Store(e),
                Ok(_) => PushRefusal::NotYours,
            });
        }
        Ok(if old.is_some() {
            Put::Replaced
        } else {
            Put::Created
        })
    }

    /// Removes the subscription `sub` names (endpoint and auth secret).
    pub async fn remove(&self, sub: &Subscription) -> Result<(), PushRefusal> {
        if let Some(why) = self.off() {
            return Err(PushRefusal::Off(why.to_owned()));
        }
        let id = sub_id(&sub.endpoint);
        let held = {
            let mut table = self.table();
            match table.subs.get(&id) {
                Some(stored) if stored.is(sub) => table.remove(id).is_some(),
                Some(_) => return Err(PushRefusal::Unknown),
                None => false,
            }
        };
        // Also when this bridge does not hold it: another on the same
        // database may have taken it (the store checks the auth secret).
        let text = format!("{id:016x}");
        let auth = auth_text(sub);
        match self.with_store(move |s| s.delete(&text, Some(&auth))).await {
            Ok(deleted) if deleted || held => Ok(()),
            Ok(_) => Err(PushRefusal::Unknown),
            Err(e) => Err(PushRefusal::Store(e)),
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

    /// The sources holding the most subscriptions (at most
    /// [`MAX_LISTED_SOURCES`], the most first): each source, its count
    /// and its oldest subscription's creation time (Unix ms).
    pub fn sources(&self) -> Vec<(String, usize, i64)> {
        let table = self.table();
        let mut all: Vec<(String, usize, i64)> = table
            .per_source
            .iter()
            .filter_map(|(source, set)| Some((source.clone(), set.len(), set.first()?.0)))
            .collect();
        all.sort_by(|a, b| b.1.cmp(&a.1).then(a.2.cmp(&b.2)).then(a.0.cmp(&b.0)));
        all.truncate(MAX_LISTED_SOURCES);
        all
    }

    /// Deletes every subscription made from `source` (an address, or an
    /// IPv6 /64 as [`address_key`] spells it): how many went.
    pub async fn purge(&self, source: IpAddr) -> Result<usize, String> {
        let source = address_key(source).to_string();
        let mut n = 0;
        loop {
            let wanted = source.clone();
            let ids = self
                .with_store(move |s| s.purge(&wanted, REMOVE_BATCH))
                .await?;
            n += ids.len();
            self.forget_all(&ids);
            if ids.len() < REMOVE_BATCH as usize {
                break;
            }
        }
        // Any this bridge held that the store no longer had.
        let held: Vec<u64> = self
            .table()
            .per_source
            .get(&source)
            .map(|set| set.iter().map(|(_, id)| *id).collect())
            .unwrap_or_default();
        let mut table = self.table();
        for id in held {
            table.remove(id);
        }
        Ok(n)
    }

    /// Removes the subscriptions `ids` (as the store names them) from the
    /// table.
    fn forget_all(&self, ids: &[String]) {
        let mut table = self.table();
        for id in ids {
            if let Ok(id) = u64::from_str_radix(id, 16) {
                table.remove(id);
            }
        }
    }

    /// Deletes the subscriptions not renewed within
    /// [`PushSettings::expire_after`]: how many went.
    pub async fn expire(&self) -> Result<usize, String> {
        let before = self.fresh_since();
        let mut n = 0;
        loop {
            let ids = self
                .with_store(move |s| s.expire(before, REMOVE_BATCH))
                .await?;
            n += ids.len();
            self.forget_all(&ids);
            if ids.len() < REMOVE_BATCH as usize {
                break;
            }
        }
        Ok(n)
    }

    /// Deletes expired subscriptions now and then until `cancel` fires.
    pub async fn sweep(self: Arc<Self>, cancel: CancellationToken) {
        let every = (self.settings.expire_after / 4).clamp(Duration::from_millis(100), SWEEP_EVERY);
        let mut tick = tokio::time::interval(every);
        tick.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
        loop {
            tokio::select! {
                () = cancel.cancelled() => return,
                _ = tick.tick() => {}
            }
            if !self.loading.is_loaded() {
                continue;
            }
            match self.expire().await {
                Ok(0) => {}
                Ok(n) => info!(
                    expired = n,
                    "push subscriptions not renewed in time were deleted"
                ),
                Err(e) => {
                    throttled!(warn, error = %e, "expired push subscriptions cannot be deleted yet");
                }
            }
        }
    }

    /// Subscriptions held.
    pub(crate) fn len(&self) -> usize {
        self.table().subs.len()
    }

    /// Reads the subscription `id` again: changed, added or gone.
    async fn load_one(&self, id: &str) {
        if id.len() != 16 || !id.bytes().all(|b| b.is_ascii_hexdigit()) {
            return;
        }
        let Ok(num) = u64::from_str_radix(id, 16) else {
            return;
        };
        let wanted = id.to_owned();
        let row = match self.with_store(move |s| s.get(&wanted)).await {
            Ok(row) => row,
            Err(e) => {
                throttled!(warn, error = %e, "a changed push subscription cannot be read");
                return;
            }
        };
        let sub = row.and_then(|r| self.sub_of(r));
        let mut table = self.table();
        table.remove(num);
        if let Some(sub) = sub {
            if table.subs.len() < self.settings.max_subscriptions {
                table.insert(Arc::new(sub));
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
            visibility: self.settings.visibility,
        }
        .standard()
    }
}

impl Channel for Push {
    fn name(&self) -> &'static str {
        CHANNEL
    }

    fn names(&self) -> Names {
        Names {
            outcomes: "bridge_push_sent_total",
            outcomes_help:
                "Web Push notifications by outcome (gone: the subscription was deleted).",
            attempts: "bridge_push_attempts_total",
            attempts_help: "Web Push requests sent.",
            targets: "bridge_push_subscriptions",
            targets_help: "Web Push subscriptions held.",
            gone: true,
        }
    }

    fn targets(&self) -> usize {
        self.len()
    }

    /// A push for every subscription with a watch `occurrence` fires
    /// (one per subscription, the first watch that fires).
    fn decide(&self, occurrence: &Occurrence) -> Vec<Planned> {
        if self.off().is_some() {
            return Vec::new();
        }
        let fresh_since = self.fresh_since();
        let mut bodies: HashMap<Event, String> = HashMap::new();
        let fired: Vec<(u64, Event)> = {
            let table = self.table();
            let Some(ids) = table.by_key.get(&occurrence.key) else {
                return Vec::new();
            };
            ids.iter()
                .filter_map(|id| {
                    let sub = table.subs.get(id).filter(|s| s.updated_ms >= fresh_since)?;
                    sub.watches
                        .iter()
                        .filter(|w| w.key == occurrence.key)
                        .find_map(|w| occurrence.fires_on_key(&w.events, w.threshold))
                        .map(|e| (*id, e))
                })
                .collect()
        };
        fired
            .into_iter()
            .map(|(id, event)| Planned {
                target: format!("{id:016x}"),
                event: event.name(),
                body: bodies
                    .entry(event)
                    .or_insert_with(|| {
                        String::from_utf8_lossy(&self.body(event, occurrence)).into_owned()
                    })
                    .clone(),
                cooldown: Duration::from_secs(DEFAULT_COOLDOWN),
                max_pending: None,
            })
            .collect()
    }

    fn reload(&self) -> BoxFuture<'_, bool> {
        async move {
            if self.loading.is_loaded() {
                self.read_all().await
            } else {
                // The first load reads every subscription itself.
                self.ready().await.is_some()
            }
        }
        .boxed()
    }

    fn changed<'a>(&'a self, id: &'a str) -> BoxFuture<'a, ()> {
        self.load_one(id).boxed()
    }

    fn send<'a>(&'a self, delivery: &'a DeliveryRow) -> BoxFuture<'a, Sent> {
        async move {
            let Ok(id) = u64::from_str_radix(&delivery.target, 16) else {
                return Sent::Dropped("not a subscription");
            };
            let mut sub = self.table().subs.get(&id).cloned();
            if sub.is_none() {
                // Maybe made on another bridge a moment ago.
                self.load_one(&delivery.target).await;
                sub = self.table().subs.get(&id).cloned();
            }
            let Some(sub) = sub else {
                return Sent::Dropped("deleted");
            };
            let Some(vapid) = self.vapid.get() else {
                return Sent::Retry {
                    status: None,
                    after: None,
                    why: "the push key is not read yet",
                };
            };
            let authorization = match vapid.authorization(&sub.url) {
                Ok(a) => a,
                Err(e) => {
                    throttled!(warn, error = %e, "a push could not be signed");
                    return Sent::Failed {
                        status: None,
                        why: "cannot sign",
                    };
                }
            };
            let Ok(event) = Event::from_str(&delivery.event) else {
                return Sent::Dropped("not an event");
            };
            let key = ServerKey(delivery.key as u64);
            let outcome = self
                .pusher
                .send(
                    &sub.subscription,
                    &sub.url,
                    &authorization,
                    delivery.body.as_bytes(),
                    deliver::ttl(event),
                    &deliver::topic(key, event),
                )
                .await;
            if let Sent::Failed { status, why } = &outcome {
                throttled!(warn, ?status, why, "a push service refused a push");
            }
            outcome
        }
        .boxed()
    }

    fn retry_wait(&self, next: u32, after: Option<Duration>) -> Option<Duration> {
        let wait = after
            .unwrap_or(Duration::from_secs(1))
            .max(Duration::from_secs(1));
        (next <= MAX_ATTEMPTS && wait <= MAX_RETRY_WAIT).then_some(wait)
    }

    fn keeps_done(&self) -> bool {
        false
    }

    fn ended<'a>(&'a self, delivery: &'a DeliveryRow, sent: &'a Sent) -> BoxFuture<'a, ()> {
        async move {
            match sent {
                Sent::Gone(_) => {
                    if let Ok(id) = u64::from_str_radix(&delivery.target, 16) {
                        self.forget(id).await;
                    }
                }
                Sent::Retry { .. } => {
                    throttled!(warn, "a push service did not take a push after retrying");
                }
                _ => {}
            }
        }
        .boxed()
    }
}

/// Whether the subscription's `p256dh` is a point on P-256 (the protocol
/// checks only its form).
pub fn point_ok(sub: &Subscription) -> bool {
    web_push_native::p256::PublicKey::from_sec1_bytes(&sub.p256dh).is_ok()
}
