//! What the engine asks of a channel (a webhook, a push subscription;
//! a Discord status card): which deliveries an occurrence makes,
//! one attempt of a delivery, how long to wait before the next, what to
//! do once one ended, and reading its targets again when they change.
//! The engine keeps every row, retry and counter; a channel keeps only
//! its targets (read from the database) and how to send to them.

use std::{
    future::Future,
    sync::atomic::{AtomicBool, Ordering::Relaxed},
    time::Duration,
};

use futures_util::future::BoxFuture;
use tokio::time::Instant;

use crate::{db::store::DeliveryRow, notify::watch::Occurrence};

/// One delivery an occurrence makes, before it is written.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Planned {
    /// The webhook's or subscription's id.
    pub target: String,
    /// The event's name (the cooldown's and the row's).
    pub event: &'static str,
    /// The payload, as the channel sends it (JSON text).
    pub body: String,
    /// The watch fires at most once per key and event per this.
    pub cooldown: Duration,
    /// Deliveries of the target not yet done past which this one is
    /// dropped (`None`: no bound beyond the cooldown's).
    pub max_pending: Option<u32>,
}

/// What one attempt came to.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Sent {
    /// Taken (a 2xx).
    Delivered(u16),
    /// Worth another attempt, no sooner than `after` if the receiver said.
    Retry {
        status: Option<u16>,
        after: Option<Duration>,
        why: &'static str,
    },
    /// Refused for good.
    Failed {
        status: Option<u16>,
        why: &'static str,
    },
    /// The receiver says the target is gone for good (a push service's
    /// 404 or 410): the channel forgets it.
    Gone(u16),
    /// Not sent: the target is deleted or disabled here.
    Dropped(&'static str),
    /// Not sent yet, by the channel's own pacing (a status card edits at
    /// most so often): due again after this wait, which is neither an
    /// attempt nor a failure.
    Later(Duration),
}

/// How `/metrics` names a channel's counters (the names the bridge has
/// always used).
#[derive(Debug, Clone, Copy)]
pub struct Names {
    /// The counter of ended deliveries by `result`.
    pub outcomes: &'static str,
    pub outcomes_help: &'static str,
    /// The counter of requests sent.
    pub attempts: &'static str,
    pub attempts_help: &'static str,
    /// The gauge of targets.
    pub targets: &'static str,
    pub targets_help: &'static str,
    /// Whether the outcomes show `gone`.
    pub gone: bool,
}

/// One way of telling someone, behind the one engine.
pub trait Channel: Send + Sync + std::fmt::Debug {
    /// The name its rows carry (`"webhook"`, `"push"`).
    fn name(&self) -> &'static str;
    /// How `/metrics` names its counters.
    fn names(&self) -> Names;
    /// Targets held now (a gauge).
    fn targets(&self) -> usize;
    /// The deliveries `occurrence` makes: its targets whose watches it
    /// fires (cooldowns are the engine's).
    fn decide(&self, occurrence: &Occurrence) -> Vec<Planned>;
    /// Reads every target again; false if the database could not be read.
    fn reload(&self) -> BoxFuture<'_, bool>;
    /// Reads the target `id` again (another bridge, or this one, changed
    /// it).
    fn changed<'a>(&'a self, id: &'a str) -> BoxFuture<'a, ()>;
    /// One attempt of a claimed delivery.
    fn send<'a>(&'a self, delivery: &'a DeliveryRow) -> BoxFuture<'a, Sent>;
    /// The wait before attempt `next` (2, 3, …) after a retryable answer
    /// that asked for `after`; `None` when no attempt is left.
    fn retry_wait(&self, next: u32, after: Option<Duration>) -> Option<Duration>;
    /// Whether an ended delivery is kept (for the admin's list) rather
    /// than deleted at once.
    fn keeps_done(&self) -> bool;
    /// The channel's own bookkeeping once a delivery ended (not for a
    /// retry): a webhook's failures in a row, a gone subscription.
    fn ended<'a>(&'a self, delivery: &'a DeliveryRow, sent: &'a Sent) -> BoxFuture<'a, ()>;
}

/// How often a channel tries again to read its targets while the
/// database cannot be read.
pub const RELOAD_EVERY: Duration = Duration::from_secs(5);

/// Whether a channel's targets have been read from the database, and
/// when reading them was last tried: while the database cannot be read
/// it is asked at most every [`RELOAD_EVERY`], by one caller at a time
/// (the others wait for it and see its result).
#[derive(Debug, Default)]
pub struct Loading {
    loaded: AtomicBool,
    last_try: tokio::sync::Mutex<Option<Instant>>,
}

impl Loading {
    /// Whether the targets have been read.
    pub fn is_loaded(&self) -> bool {
        self.loaded.load(Relaxed)
    }

    /// Notes that the targets were read; true the first time.
    pub fn mark_loaded(&self) -> bool {
        !self.loaded.swap(true, Relaxed)
    }

    /// Whether the targets are read, running `load` (which says whether
    /// it read them) if they are not and it was not tried within
    /// [`RELOAD_EVERY`].
    pub async fn ensure<F: Future<Output = bool>>(&self, load: impl FnOnce() -> F) -> bool {
        if self.is_loaded() {
            return true;
        }
        let mut last = self.last_try.lock().await;
        if self.is_loaded() {
            return true;
        }
        let now = Instant::now();
        if last.is_some_and(|t| now.duration_since(t) < RELOAD_EVERY) {
            return false;
        }
        *last = Some(now);
        let read = load().await;
        if read {
            self.mark_loaded();
        }
        read
    }
}
