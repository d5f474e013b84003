//! Notifications, durable in the database (`docs/protocol.md` §2.4): one
//! engine for every channel ([`Channel`]: webhooks, Web Push).
//!
//! - **Deciding.** Every bridge decides the same events from the list
//!   ([`crate::notify::watch`]). Each occurrence goes into a bounded journal
//!   ([`MAX_JOURNAL`]); the engine asks each channel which deliveries it
//!   makes and writes them as rows, with each watch's cooldown, in one
//!   transaction. The cooldown row is the deduplication: the first bridge
//!   to write an event wins; the others find its cooldown, or (a cooldown
//!   of 0) its write by another bridge within [`DEDUPE`], and write
//!   nothing. While the database is unreachable
//!   the occurrences wait in the journal and are written when it is back,
//!   with the time they were decided.
//! - **Sending.** Any bridge claims due rows (a lease of [`LEASE`]: a
//!   bridge that dies mid-attempt leaves its rows due again), sends at most
//!   [`MAX_IN_FLIGHT`] at once, and records the outcome: a retry is a new
//!   due time and a count of attempts in the row, never a task, so a
//!   delivery waiting for its `Retry-After` is sent by whichever bridge is
//!   alive when it is due, with the same `webhook-id` (kept in the row).
//! - **Seeing changes.** Webhooks and subscriptions are read from the
//!   database: every change is noted in `notify_changes` in its own
//!   transaction, and each bridge reads the notes every [`SYNC_EVERY`]
//!   (the embedded database's and PostgreSQL's alike), reading the changed
//!   rows again; after an outage it reads them all.
//! - **Bounds.** Ended deliveries are pruned (a webhook keeps its last
//!   [`KEEP_DONE`] for the admin's list; a push's row goes when it ends);
//!   any row older than [`MAX_AGE`] goes; cooldowns go when over.

use std::{
    collections::{HashSet, VecDeque},
    fmt::Write as _,
    sync::{
        atomic::{AtomicBool, AtomicU64, Ordering::Relaxed},
        Arc, Mutex, MutexGuard,
    },
    time::{Duration, SystemTime, UNIX_EPOCH},
};

use master::throttled;
use tokio::{
    sync::{
        broadcast::error::{RecvError, TryRecvError},
        Semaphore,
    },
    time::Instant,
};
use tokio_util::{sync::CancellationToken, task::TaskTracker};

use super::channel::{Channel, Sent};
use crate::{
    db::store::{
        blocking, now_ms, Database, DeliveryRow, DoneDelivery, NewDelivery, Settle, Store,
        StoreError,
    },
    metrics::{family, Kind},
    notify::watch::Occurrence,
};

/// Occurrences kept while the database cannot take them (and for at most
/// one read of the change notes otherwise: a master that restarts brings
/// back thousands of servers at once); past it the oldest go, counted.
pub const MAX_JOURNAL: usize = 50_000;
/// Deliveries in flight at once, over every channel.
pub const MAX_IN_FLIGHT: usize = 64;
/// How long a claim holds a row: longer than an attempt (5 s) and its
/// settling; a row whose bridge died is due again after it.
pub const LEASE: Duration = Duration::from_secs(15);
/// Several bridges deciding one event within this write it once (their
/// lists arrive within milliseconds of each other; a bridge's own events
/// are never merged).
pub const DEDUPE: Duration = Duration::from_secs(2);
/// How often the change notes are read and due rows claimed.
pub const SYNC_EVERY: Duration = Duration::from_millis(250);
/// How far back each read of the change notes looks (a transaction
/// noted earlier may commit later); notes already seen are skipped.
const LOOK_BACK_MS: i64 = 5_000;
/// Change notes read at most at once (more: the rest on the next read).
const MAX_CHANGES: i64 = 10_000;
/// Change notes are kept this long (a bridge away longer reads all).
const KEEP_CHANGES_MS: i64 = 60_000;
/// Ended deliveries a target keeps (the admin's list shows them).
pub const KEEP_DONE: i64 = 10;
/// Any delivery row older than this is pruned, done or not.
pub const MAX_AGE: Duration = Duration::from_secs(24 * 3600);
/// How often rows are pruned.
const PRUNE_EVERY: Duration = Duration::from_secs(30);

/// The counters of one channel.
#[derive(Debug, Default)]
struct ChannelCounters {
    delivered: AtomicU64,
    failed: AtomicU64,
    gone: AtomicU64,
    dropped: AtomicU64,
    attempts: AtomicU64,
}

/// What `/metrics` shows of the notifications: one set for every channel.
#[derive(Debug, Default)]
pub struct NotifyCounters {
    webhook: ChannelCounters,
    push: ChannelCounters,
    /// Deliveries this bridge wrote.
    written: AtomicU64,
    /// Occurrences lost because the journal was full.
    lost: AtomicU64,
    /// Changes of webhooks and subscriptions read again.
    changes: AtomicU64,
    /// Reads of the change notes.
    syncs: AtomicU64,
}

impl NotifyCounters {
    fn of(&self, channel: &str) -> &ChannelCounters {
        match channel {
            "push" => &self.push,
            _ => &self.webhook,
        }
    }

    /// Counts a request sent on `channel` (the admin's tests too).
    pub fn attempt(&self, channel: &str) {
        self.of(channel).attempts.fetch_add(1, Relaxed);
    }

    /// Counts an ended delivery of `channel`.
    fn ended(&self, channel: &str, sent: &Sent) {
        let c = self.of(channel);
        let n = match sent {
            Sent::Delivered(_) => &c.delivered,
            Sent::Gone(_) => &c.gone,
            Sent::Dropped(_) => &c.dropped,
            Sent::Failed { .. } | Sent::Retry { .. } | Sent::Later(_) => &c.failed,
        };
        n.fetch_add(1, Relaxed);
    }
}

/// A new `webhook-id`: `msg_` and 32 hex digits, made once per delivery
/// row and sent on each of its attempts.
pub fn message_id() -> String {
    let mut raw = [0u8; 16];
    if getrandom::fill(&mut raw).is_err() {
        let t = SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .map_or(0, |d| d.as_nanos());
        raw = t.to_be_bytes();
    }
    let mut id = String::from("msg_");
    for b in raw {
        let _ = write!(id, "{b:02x}");
    }
    id
}

/// Unix milliseconds of `t`.
fn ms_of(t: SystemTime) -> i64 {
    t.duration_since(UNIX_EPOCH)
        .map_or(0, |d| i64::try_from(d.as_millis()).unwrap_or(i64::MAX))
}

/// The engine: the journal, the claims and the counters.
#[derive(Debug)]
pub struct Notify {
    database: Database,
    channels: Vec<Arc<dyn Channel>>,
    counters: Arc<NotifyCounters>,
    journal: Mutex<VecDeque<(Arc<Occurrence>, Instant)>>,
    /// When the last read of the change notes that succeeded began: an
    /// occurrence kept after it waits for the next, so that it is decided
    /// with every change made before it happened.
    read_at: Mutex<Option<Instant>>,
    /// This bridge's id in the cooldown rows it writes.
    writer: String,
    in_flight: Arc<Semaphore>,
    /// Woken when an attempt ends: its slot is claimed again at once, not
    /// on the next tick (one bridge sends more than [`MAX_IN_FLIGHT`] per
    /// tick when rows are due).
    freed: Arc<tokio::sync::Notify>,
    jobs: TaskTracker,
    /// Whether every channel's targets were read since the database was
    /// last unreachable.
    synced: AtomicBool,
    cancel: CancellationToken,
}

impl Notify {
    /// The engine over `channels`, its rows in `database`.
    pub fn new(
        database: Database,
        channels: Vec<Arc<dyn Channel>>,
        counters: Arc<NotifyCounters>,
    ) -> Self {
        Self {
            database,
            channels,
            counters,
            journal: Mutex::new(VecDeque::new()),
            read_at: Mutex::new(None),
            writer: message_id(),
            in_flight: Arc::new(Semaphore::new(MAX_IN_FLIGHT)),
            freed: Arc::new(tokio::sync::Notify::new()),
            jobs: TaskTracker::new(),
            synced: AtomicBool::new(false),
            cancel: CancellationToken::new(),
        }
    }

    fn journal(&self) -> MutexGuard<'_, VecDeque<(Arc<Occurrence>, Instant)>> {
        self.journal.lock().unwrap_or_else(|p| p.into_inner())
    }

    fn channel(&self, name: &str) -> Option<&Arc<dyn Channel>> {
        self.channels.iter().find(|c| c.name() == name)
    }

    /// Runs `f` on the store from a blocking thread.
    async fn with_store<T: Send + 'static>(
        &self,
        f: impl FnOnce(&mut Store) -> Result<T, StoreError> + Send + 'static,
    ) -> Result<T, StoreError> {
        blocking(&self.database, move |d| f(&mut d.lock())).await
    }

    /// Decides, writes and sends until `cancel` fires; then waits a moment
    /// for attempts in flight (what they leave unsettled is due again
    /// after its lease, on any bridge).
    pub async fn run(
        self: Arc<Self>,
        mut events: tokio::sync::broadcast::Receiver<Arc<Occurrence>>,
        cancel: CancellationToken,
    ) {
        let mut tick = tokio::time::interval(SYNC_EVERY);
        tick.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
        let mut sync = SyncState::default();
        let mut last_prune = Instant::now();
        loop {
            tokio::select! {
                () = cancel.cancelled() => break,
                got = events.recv() => {
                    // A burst (a master bringing thousands of servers back)
                    // goes into the journal whole before any database
                    // work, so the events' channel never overflows.
                    let mut next = got;
                    loop {
                        match next {
                            Ok(o) => self.keep(o),
                            Err(RecvError::Lagged(n)) => self.lagged(n),
                            Err(RecvError::Closed) => break,
                        }
                        next = match events.try_recv() {
                            Ok(o) => Ok(o),
                            Err(TryRecvError::Lagged(n)) => Err(RecvError::Lagged(n)),
                            Err(TryRecvError::Empty | TryRecvError::Closed) => break,
                        };
                    }
                    if self.flush().await {
                        self.claim().await;
                    }
                }
                () = self.freed.notified() => self.claim().await,
                _ = tick.tick() => {
                    self.sync(&mut sync).await;
                    self.flush().await;
                    self.claim().await;
                    if last_prune.elapsed() >= PRUNE_EVERY {
                        last_prune = Instant::now();
                        self.prune().await;
                    }
                }
            }
        }
        self.cancel.cancel();
        self.jobs.close();
        let _ = tokio::time::timeout(Duration::from_secs(1), self.jobs.wait()).await;
    }

    /// Counts occurrences the events' channel dropped before they reached
    /// the journal.
    fn lagged(&self, n: u64) {
        self.counters.lost.fetch_add(n, Relaxed);
        throttled!(
            warn,
            lost = n,
            "notifications fell behind the list's events; some were dropped"
        );
    }

    /// Puts an occurrence in the journal (the oldest goes when it is full).
    fn keep(&self, occurrence: Arc<Occurrence>) {
        let mut journal = self.journal();
        if journal.len() >= MAX_JOURNAL {
            journal.pop_front();
            self.counters.lost.fetch_add(1, Relaxed);
            throttled!(warn, "the notification journal is full (the database has been unreachable long); the oldest event was dropped");
        }
        journal.push_back((occurrence, Instant::now()));
    }

    /// Writes the journal's occurrences, oldest first, until the database
    /// refuses one (it stays, and is tried again on the next tick) or one
    /// happened after the targets were last read (it waits for the next
    /// read: a webhook created a moment before the event on another bridge
    /// gets it too). Whether it wrote any delivery.
    async fn flush(&self) -> bool {
        if !self.synced.load(Relaxed) {
            // Targets not read yet: deciding now would miss some.
            return false;
        }
        let Some(read_at) = *self.read_at.lock().unwrap_or_else(|p| p.into_inner()) else {
            return false;
        };
        let mut wrote = false;
        loop {
            let Some((occurrence, kept)) = self.journal().front().cloned() else {
                return wrote;
            };
            if kept > read_at {
                return wrote;
            }
            let rows = self.plan(&occurrence);
            if !rows.is_empty() {
                match self.with_store(move |s| s.enqueue(&rows)).await {
                    Ok(n) => {
                        self.counters.written.fetch_add(n as u64, Relaxed);
                        wrote |= n > 0;
                    }
                    Err(e) => {
                        throttled!(warn, error = %e, "notifications cannot be written yet; they wait in the journal");
                        return wrote;
                    }
                }
            }
            let mut journal = self.journal();
            if journal
                .front()
                .is_some_and(|(o, _)| Arc::ptr_eq(o, &occurrence))
            {
                journal.pop_front();
            }
        }
    }

    /// The rows `occurrence` makes on every channel, in one order on every
    /// bridge (so that bridges writing one event at once take its
    /// cooldown rows in the same order).
    fn plan(&self, occurrence: &Occurrence) -> Vec<NewDelivery> {
        let at_ms = ms_of(occurrence.at);
        let key = occurrence.key.0 as i64;
        let mut rows: Vec<NewDelivery> = self
            .channels
            .iter()
            .flat_map(|c| {
                let name = c.name();
                c.decide(occurrence).into_iter().map(move |p| {
                    let cooldown = i64::try_from(p.cooldown.as_millis()).unwrap_or(i64::MAX);
                    NewDelivery {
                        channel: name,
                        target: p.target,
                        msg_id: message_id(),
                        event: p.event.to_owned(),
                        key,
                        body: p.body,
                        at_ms,
                        until_ms: at_ms.saturating_add(cooldown),
                        dedupe_ms: at_ms + DEDUPE.as_millis() as i64,
                        writer: self.writer.clone(),
                        max_pending: p.max_pending.map_or(i64::MAX, i64::from),
                    }
                })
            })
            .collect();
        rows.sort_by(|a, b| {
            (a.channel, &a.target, &a.event).cmp(&(b.channel, &b.target, &b.event))
        });
        rows
    }

    /// Reads the change notes and the changed targets again (all of them
    /// after an outage).
    async fn sync(&self, sync: &mut SyncState) {
        let since = sync.since;
        let started = Instant::now();
        let read = self
            .with_store(move |s| s.changes(since, MAX_CHANGES))
            .await;
        let (now, changes) = match read {
            Ok(r) => r,
            Err(e) => {
                // An unreachable database is the store's to log, once for
                // the whole outage (docs/protocol.md §2.3); another failure
                // is this engine's.
                if self.synced.swap(false, Relaxed) {
                    if matches!(e, StoreError::Unavailable) {
                        tracing::debug!("webhooks and push subscriptions wait for the database");
                    } else {
                        throttled!(warn, error = %e, "webhooks and push subscriptions cannot be read; notifications wait until the database is back");
                    }
                }
                return;
            }
        };
        if !self.synced.load(Relaxed) {
            let mut all = true;
            for channel in &self.channels {
                all &= channel.reload().await;
            }
            if !all {
                return;
            }
            // Everything up to now is read; notes from here on matter.
            sync.seen.clear();
            sync.seen.extend(changes.iter().map(|c| c.seq));
            sync.since = now - LOOK_BACK_MS;
            self.synced.store(true, Relaxed);
            *self.read_at.lock().unwrap_or_else(|p| p.into_inner()) = Some(started);
            return;
        }
        self.counters.syncs.fetch_add(1, Relaxed);
        let mut seen = HashSet::with_capacity(changes.len());
        for change in &changes {
            seen.insert(change.seq);
            if sync.seen.contains(&change.seq) {
                continue;
            }
            if let Some(channel) = self.channel(&change.kind) {
                self.counters.changes.fetch_add(1, Relaxed);
                channel.changed(&change.id).await;
            }
        }
        // Only the notes the next read can return again are remembered.
        sync.seen = seen;
        sync.since = now - LOOK_BACK_MS;
        *self.read_at.lock().unwrap_or_else(|p| p.into_inner()) = Some(started);
    }

    /// Claims as many due rows as there is room to send, and sends them.
    async fn claim(self: &Arc<Self>) {
        let room = self.in_flight.available_permits();
        if room == 0 {
            return;
        }
        let limit = room as i64;
        let lease = LEASE.as_millis() as i64;
        let rows = match self
            .with_store(move |s| s.claim(now_ms(), lease, limit))
            .await
        {
            Ok(rows) => rows,
            Err(_) => return,
        };
        for row in rows {
            let Ok(permit) = self.in_flight.clone().try_acquire_owned() else {
                // Not sent: due again after its lease.
                break;
            };
            let this = self.clone();
            self.jobs.spawn(async move {
                this.deliver(row).await;
                drop(permit);
                this.freed.notify_one();
            });
        }
    }

    /// One attempt of a claimed row, and what becomes of the row.
    async fn deliver(&self, row: DeliveryRow) {
        let Some(channel) = self.channel(&row.channel).cloned() else {
            // A channel this bridge does not run (off here): another may.
            let settle = Settle::Retry {
                due_ms: now_ms() + LEASE.as_millis() as i64,
            };
            let _ = self.with_store(move |s| s.settle(row.id, &settle)).await;
            return;
        };
        let sent = tokio::select! {
            () = self.cancel.cancelled() => return,
            sent = channel.send(&row) => sent,
        };
        if !matches!(sent, Sent::Dropped(_) | Sent::Later(_)) {
            self.counters.attempt(channel.name());
        }
        let next = u32::try_from(row.attempts)
            .unwrap_or(u32::MAX)
            .saturating_add(1);
        let settle = match &sent {
            Sent::Retry { after, .. } => match channel.retry_wait(next, *after) {
                Some(wait) => Settle::Retry {
                    due_ms: now_ms() + wait.as_millis() as i64,
                },
                None => self.done(&*channel, &row, &sent),
            },
            Sent::Later(wait) => Settle::Later {
                due_ms: now_ms() + i64::try_from(wait.as_millis()).unwrap_or(i64::MAX / 2),
            },
            _ => self.done(&*channel, &row, &sent),
        };
        let retried = matches!(settle, Settle::Retry { .. } | Settle::Later { .. });
        let id = row.id;
        if let Err(e) = self.with_store(move |s| s.settle(id, &settle)).await {
            // Due again after its lease: sent again, with the same id.
            throttled!(warn, error = %e, "a delivery's outcome cannot be stored; it will be sent again");
            return;
        }
        if !retried {
            // Counted once the channel's bookkeeping is done (a gone
            // subscription deleted, a webhook's failures stored), so that
            // `/metrics` never says a delivery ended before the database
            // shows what its end changed.
            channel.ended(&row, &sent).await;
            self.counters.ended(channel.name(), &sent);
        }
    }

    /// How an ended delivery is kept.
    fn done(&self, channel: &dyn Channel, row: &DeliveryRow, sent: &Sent) -> Settle {
        if !channel.keeps_done() {
            return Settle::Forget;
        }
        let (ok, status, error) = match sent {
            Sent::Delivered(code) => (true, Some(*code), None),
            Sent::Gone(code) => (false, Some(*code), Some("gone")),
            Sent::Dropped(why) => (false, None, Some(*why)),
            Sent::Later(_) => (false, None, Some("not sent")),
            Sent::Retry { status, why, .. } | Sent::Failed { status, why } => {
                (false, *status, Some(*why))
            }
        };
        Settle::Done(DoneDelivery {
            event: row.event.clone(),
            ok,
            status: status.map(i64::from),
            error: error.map(str::to_owned),
            attempts: row.attempts,
            done_ms: now_ms(),
        })
    }

    /// Deletes what the tables need no more.
    async fn prune(&self) {
        let now = now_ms();
        let before = now - MAX_AGE.as_millis() as i64;
        if let Err(e) = self
            .with_store(move |s| s.prune_notify(now, before, KEEP_DONE, KEEP_CHANGES_MS))
            .await
        {
            throttled!(warn, error = %e, "the notification rows cannot be pruned now");
        }
    }

    /// Occurrences waiting in the journal.
    pub fn journal_len(&self) -> usize {
        self.journal().len()
    }

    /// Appends the notifications' lines to `/metrics`' text.
    pub fn render(&self, out: &mut String) {
        for channel in &self.channels {
            let names = channel.names();
            let c = self.counters.of(channel.name());
            let outcomes = [
                ("delivered", Some(&c.delivered)),
                ("gone", names.gone.then_some(&c.gone)),
                ("failed", Some(&c.failed)),
                ("dropped", Some(&c.dropped)),
            ];
            family(
                out,
                names.outcomes,
                Kind::Counter,
                names.outcomes_help,
                outcomes.into_iter().filter_map(|(result, n)| {
                    Some((format!("{{result=\"{result}\"}}"), n?.load(Relaxed)))
                }),
            );
            family(
                out,
                names.attempts,
                Kind::Counter,
                names.attempts_help,
                [("", c.attempts.load(Relaxed))],
            );
            family(
                out,
                names.targets,
                Kind::Gauge,
                names.targets_help,
                [("", channel.targets())],
            );
        }
        let c = &self.counters;
        let families: [(&str, Kind, &str, u64); 6] = [
            (
                "bridge_notify_written_total",
                Kind::Counter,
                "Deliveries this bridge wrote (one per event and watch over every bridge).",
                c.written.load(Relaxed),
            ),
            (
                "bridge_notify_journal",
                Kind::Gauge,
                "Events waiting for the database to be written.",
                self.journal_len() as u64,
            ),
            (
                "bridge_notify_lost_total",
                Kind::Counter,
                "Events lost (the journal was full, or the events fell behind).",
                c.lost.load(Relaxed),
            ),
            (
                "bridge_notify_changes_total",
                Kind::Counter,
                "Webhooks and subscriptions read again because a bridge changed them.",
                c.changes.load(Relaxed),
            ),
            (
                "bridge_notify_syncs_total",
                Kind::Counter,
                "Reads of the database's change notes.",
                c.syncs.load(Relaxed),
            ),
            (
                "bridge_notify_synced",
                Kind::Gauge,
                "Whether the webhooks and subscriptions are read from the database (0 while it \
                 is unreachable).",
                u64::from(self.synced.load(Relaxed)),
            ),
        ];
        for (name, kind, help, value) in families {
            family(out, name, kind, help, [("", value)]);
        }
    }
}

/// Where reading the change notes is.
#[derive(Debug, Default)]
struct SyncState {
    /// The next read starts here (the database's clock, Unix ms).
    since: i64,
    /// The notes the last read returned (handled already).
    seen: HashSet<i64>,
}

#[cfg(test)]
mod tests;
