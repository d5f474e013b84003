//! Events from the live list (`docs/protocol.md` §2.4), decided in one
//! place: a task reads each list the upstream publishes (a `watch`
//! receiver of its own, so nobody who pushes lists to viewers ever waits
//! for it), hands what changed since the list it saw last to the
//! [`Tracker`] (the two lists share all the rest, which is never walked),
//! and broadcasts what happened to
//! the notification engine ([`crate::notify`]). Every
//! bridge decides the same events from the same list; the engine writes
//! each one once, whichever bridge is first.
//!
//! Per-watch rules (which events and servers, the threshold) are
//! [`Occurrence::fires`]; "once per key and event per cooldown" is the
//! engine's (a row per watch, key and event in the database).

mod tracker;

use std::{
    sync::{
        atomic::{AtomicBool, AtomicU64, Ordering::Relaxed},
        Arc,
    },
    time::{Duration, SystemTime},
};

use protocol::watch::Event;
use tokio::{sync::broadcast, time::Instant};
use tokio_util::sync::CancellationToken;

pub use tracker::{Occurrence, ServerChange, Tracker};

use crate::{
    db::{
        history::History,
        store::{blocking, now_ms},
    },
    live::{feed::FeedState, upstream::Upstream},
    metrics::{family, Kind},
};

/// Occurrences a slow consumer may fall behind by before it loses some.
const BACKLOG: usize = 4096;

/// The events task's output and what `/metrics` shows of it.
#[derive(Debug)]
pub struct Events {
    tx: broadcast::Sender<Arc<Occurrence>>,
    grace: Duration,
    /// The `seq` of the last list events were decided from.
    seen_seq: AtomicU64,
    /// Whether keys that appear are announced yet (see [`Tracker::new`]).
    warm: AtomicBool,
    /// Occurrences decided, by [`ServerChange`] kind.
    decided: [AtomicU64; 5],
    /// What the history knows of servers last seen, which settles the
    /// `server-online`s of the start-up window.
    history: Arc<History>,
}

impl Events {
    /// Events declaring a key offline after `grace` unlisted, asking
    /// `history` which servers appearing in the start-up window were
    /// listed lately (those are not announced; the others are).
    pub fn new(grace: Duration, history: Arc<History>) -> Self {
        Self {
            tx: broadcast::channel(BACKLOG).0,
            grace,
            seen_seq: AtomicU64::new(0),
            warm: AtomicBool::new(false),
            decided: Default::default(),
            history,
        }
    }

    /// The `server-online`s of the start-up window whose keys the history
    /// did not see listed within the grace and one sample interval
    /// (with 5 s to spare): a restart neither announces every listed
    /// server nor hides one that came online meanwhile. None while the
    /// database cannot say.
    async fn settle(&self, unsure: Vec<Occurrence>) -> Vec<Occurrence> {
        let keys: Vec<i64> = unsure.iter().map(|o| o.key.0 as i64).collect();
        let window = self.grace.as_millis() as i64 + self.history.sample_ms() + 5_000;
        let since = now_ms() - window;
        let seen = blocking(self.history.database(), move |d| {
            d.lock().seen_since(&keys, since)
        })
        .await;
        match seen {
            Ok(seen) => unsure
                .into_iter()
                .filter(|o| !seen.contains(&(o.key.0 as i64)))
                .collect(),
            _ => {
                master::throttled!(
                    warn,
                    "the history cannot say which servers were listed before this start; servers appearing now are not announced"
                );
                Vec::new()
            }
        }
    }

    /// A receiver of every occurrence from now on.
    pub fn subscribe(&self) -> broadcast::Receiver<Arc<Occurrence>> {
        self.tx.subscribe()
    }

    /// Decides events from `upstream`'s lists until `cancel` fires.
    pub async fn run(self: Arc<Self>, upstream: Arc<Upstream>, cancel: CancellationToken) {
        let mut lists = upstream.subscribe();
        // A list published before this task first ran (a server that
        // registered as the bridge started) is the first one compared
        // with; else its first change would be taken as its first sight.
        lists.mark_changed();
        let start = Instant::now();
        let mut tracker = Tracker::new(self.grace, start);
        let warm_at = start + self.grace;
        let mut last: Option<Arc<FeedState>> = None;
        loop {
            let expiry = tracker.next_expiry();
            let wake = match expiry {
                Some(t) if !self.warm.load(Relaxed) => t.min(warm_at),
                Some(t) => t,
                None if !self.warm.load(Relaxed) => warm_at,
                None => Instant::now() + Duration::from_secs(3600),
            };
            tokio::select! {
                () = cancel.cancelled() => return,
                changed = lists.changed() => {
                    if changed.is_err() {
                        return;
                    }
                    let feed = lists.borrow_and_update().feed.clone();
                    let Some(feed) = feed else { continue };
                    if last.as_ref().is_some_and(|l| l.seq == feed.seq) {
                        continue;
                    }
                    let list = feed.list();
                    let changes = list.changes_from(last.as_ref().map(|l| l.list()));
                    let out = tracker.observe(changes, |id| list.get(id), Instant::now(), SystemTime::now());
                    self.emit(out);
                    let unsure = tracker.take_unsure();
                    if !unsure.is_empty() {
                        let settled = self.settle(unsure).await;
                        self.emit(settled);
                    }
                    self.seen_seq.store(feed.seq, Relaxed);
                    last = Some(feed);
                }
                () = tokio::time::sleep_until(wake) => {
                    let now = Instant::now();
                    self.warm.store(tracker.warm(now), Relaxed);
                    let out = tracker.expire(now, SystemTime::now());
                    self.emit(out);
                }
            }
        }
    }

    fn emit(&self, out: Vec<Occurrence>) {
        for occurrence in out {
            let i = match occurrence.change {
                ServerChange::Online => 0,
                ServerChange::Offline => 1,
                ServerChange::LobbyOpened => 2,
                ServerChange::PlayersRose { .. } => 3,
                ServerChange::Shown => 4,
            };
            self.decided[i].fetch_add(1, Relaxed);
            // No receiver: nobody notifies (yet); nothing to keep.
            let _ = self.tx.send(Arc::new(occurrence));
        }
    }

    /// Appends the events' lines to `/metrics`' text.
    pub fn render(&self, out: &mut String) {
        let names = [
            Event::ServerOnline.name(),
            Event::ServerOffline.name(),
            Event::LobbyOpened.name(),
            "players-rose",
            "shown",
        ];
        family(
            out,
            "bridge_watch_changes_total",
            Kind::Counter,
            "Changes of listed servers the bridge decided (before any watch's rules; players \
             counts each rise).",
            names
                .iter()
                .zip(&self.decided)
                .map(|(name, n)| (format!("{{change=\"{name}\"}}"), n.load(Relaxed))),
        );
        family(
            out,
            "bridge_watch_list_seq",
            Kind::Gauge,
            "The seq of the last list events were decided from.",
            [("", self.seen_seq.load(Relaxed))],
        );
        family(
            out,
            "bridge_watch_warm",
            Kind::Gauge,
            "Whether servers that appear are announced at once (0 for the offline grace after \
             start, when the history says which of them were listed lately).",
            [("", u8::from(self.warm.load(Relaxed)))],
        );
    }
}
