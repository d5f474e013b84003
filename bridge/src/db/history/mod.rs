//! The player history (`docs/protocol.md` §2.2): every
//! `--history-interval` a task reads the published list and hands it,
//! through a bounded channel, to a writer thread that stores it in the
//! bridge's one database ([`crate::db::store`]), so that neither the list's publishing nor any push ever
//! waits for the disk. A sample that finds the writer still busy is
//! skipped; a write error (a full disk, the `--history-max-bytes` cap)
//! pauses the recording with one log line until a write succeeds again,
//! and touches nothing else. Before the store, [`admission`] bounds how
//! many keys one source may have recorded per day. [`RecordingCounters`] are what
//! `/metrics` shows of it.

mod admission;
mod counters;

use std::{
    collections::VecDeque,
    path::Path,
    sync::{
        atomic::{AtomicBool, AtomicU64, Ordering::Relaxed},
        mpsc::{self, SyncSender, TrySendError},
        Arc, Mutex, MutexGuard,
    },
    time::Duration,
};

use master::throttled;
use protocol::delta::Keyed;
use tokio_util::sync::CancellationToken;
use tracing::{error, info};

use crate::{
    config::Config,
    db::store::{
        now_ms,
        postgres::{Election, Vacuum},
        Database, DatabaseUrl, Recorded, ServerSample, Store, StoreError, DB_FILE,
    },
    error::Error,
    live::{feed::FeedState, upstream::Upstream},
};
pub use admission::Admission;
pub use counters::RecordingCounters;

/// Samples waiting for the writer at most; more are skipped.
const QUEUE: usize = 2;
/// Samples a bridge that does not record keeps, the newest: a takeover
/// slower than an interval (the dead recorder's lock is released only
/// once its database session is found dead) still writes every interval
/// the dead one did not.
const KEEP_SKIPPED: usize = 3;
/// Rows each retention round deletes per table at most.
const PRUNE_BATCH: usize = 5_000;
/// Retention rounds after one sample at most (the rest waits for the next).
const PRUNE_ROUNDS: usize = 4;

/// The recorded history and the recording's state, shared by the recorder
/// and the HTTP answers: the history's tables in the bridge's one
/// [`Database`], which it shares with the webhooks and Web Push.
#[derive(Debug)]
pub struct History {
    database: Database,
    interval: Duration,
    /// Writes tried so far (a failed one may still have pruned): cached
    /// answers are as new as this.
    generation: AtomicU64,
    /// Set while writes fail (cleared by the next one that succeeds).
    failing: AtomicBool,
    /// What `/metrics` shows of the recording.
    counters: RecordingCounters,
    /// The election among bridges on one database (`None`: this bridge
    /// alone has its store, and records).
    election: Mutex<Option<Election>>,
    /// PostgreSQL's vacuum after each sample, on its own connection
    /// (`None`: SQLite rewrites rows in place, nothing to reclaim).
    vacuum: Mutex<Option<Vacuum>>,
    /// The growth bound per source, applied by the writer.
    admission: Mutex<Admission>,
}

impl History {
    /// Opens the history in `dir` (in memory when `None`); see
    /// [`Store::open`] for what fails here.
    pub fn open(dir: Option<&Path>, interval: Duration) -> Result<Self, Error> {
        Ok(Self::on(Database::open(dir)?, interval))
    }

    /// The history in the PostgreSQL database at `url`, shared with the
    /// other bridges given it: one of them records at a time. Nothing is
    /// connected here (blocking work happens on the writer thread and in
    /// the answers' blocking tasks), so a database down at start is no
    /// error.
    pub fn connect(url: &DatabaseUrl, interval: Duration) -> Self {
        Self::on(Database::connect(url), interval)
    }

    /// The history in `database`: recorded by one bridge at a time when
    /// it is a shared PostgreSQL database (nothing connected here), by
    /// this one alone when it is the embedded file.
    pub fn on(database: Database, interval: Duration) -> Self {
        let election = database.url().map(Election::new);
        let vacuum = database.url().map(Vacuum::new);
        let counters = RecordingCounters::default();
        {
            let mut store = database.lock();
            store.set_interval(i64::try_from(interval.as_millis()).unwrap_or(i64::MAX));
            if election.is_none() {
                counters
                    .database_bytes
                    .store(store.size_bytes().unwrap_or(0), Relaxed);
            }
        }
        counters.recording.store(election.is_none(), Relaxed);
        Self {
            database,
            interval,
            generation: AtomicU64::new(0),
            failing: AtomicBool::new(false),
            counters,
            election: Mutex::new(election),
            vacuum: Mutex::new(vacuum),
            admission: Mutex::new(Admission::new(Config::DEFAULT_HISTORY_KEYS_PER_SOURCE)),
        }
    }

    /// The history with at most `per_source` keys recorded per source and
    /// day (`--history-keys-per-source`; see [`admission`]).
    pub fn with_keys_per_source(self, per_source: usize) -> Self {
        Self {
            admission: Mutex::new(Admission::new(per_source)),
            ..self
        }
    }

    /// Caps the database at `max_bytes` (see [`Store::cap`]); the cap as
    /// applied, in bytes.
    pub fn cap(&self, max_bytes: u64) -> Result<u64, StoreError> {
        self.store().cap(max_bytes)
    }

    /// Stands for the election now (blocking): whether this bridge is to
    /// record. Without an election, always. Gaining the lead makes the
    /// store forget what another bridge may have changed since.
    pub fn campaign(&self) -> bool {
        let mut election = self.election.lock().unwrap_or_else(|p| p.into_inner());
        let Some(election) = election.as_mut() else {
            return true;
        };
        let lead = election.campaign();
        let was = self.counters.recording.swap(lead, Relaxed);
        if lead && !was {
            self.store().forget();
            info!(
                "this bridge records the history now (elected among the bridges on its database)"
            );
        } else if was && !lead {
            info!("this bridge no longer records the history (another bridge does, or the database is unreachable)");
        }
        lead
    }

    /// The recording's counters, for `/metrics`.
    pub fn counters(&self) -> &RecordingCounters {
        &self.counters
    }

    /// The database, for a query (callers are on a blocking thread).
    pub fn store(&self) -> MutexGuard<'_, Store> {
        self.database.lock()
    }

    /// The bridge's database the history is kept in.
    pub fn database(&self) -> &Database {
        &self.database
    }

    /// The sample interval in milliseconds (the resolution of the newest tier).
    pub fn sample_ms(&self) -> i64 {
        self.interval.as_millis() as i64
    }

    /// Writes tried so far: an answer computed at another generation may
    /// be out of date.
    pub fn generation(&self) -> u64 {
        self.generation.load(Relaxed)
    }

    /// Samples `upstream`'s list every interval until `cancel` fires.
    pub async fn record(self: Arc<Self>, upstream: Arc<Upstream>, cancel: CancellationToken) {
        let (tx, rx) = mpsc::sync_channel::<(i64, Arc<FeedState>)>(QUEUE);
        let writer = self.clone();
        let spawned = std::thread::Builder::new()
            .name("history-writer".into())
            .spawn(move || writer.write_all(rx));
        if let Err(e) = spawned {
            error!(error = %e, "cannot start the history writer; nothing is recorded");
            return;
        }
        let first = first_sample_delay(self.interval, now_ms());
        let mut ticks =
            tokio::time::interval_at(tokio::time::Instant::now() + first, self.interval);
        ticks.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Skip);
        loop {
            tokio::select! {
                () = cancel.cancelled() => return,
                _ = ticks.tick() => {}
            }
            let Some(feed) = upstream.current().feed else {
                continue; // no list yet: nothing known to record
            };
            // The interval's middle, whichever bridge takes it: a sample
            // of one interval has one time, which the store records once.
            let t = mid_interval(self.interval, now_ms());
            if !self.offer(&tx, t, feed) {
                return;
            }
        }
    }

    /// Hands one sample to the writer (the published list itself, shared:
    /// the writer reads its entries in place); `false` once the writer is
    /// gone.
    fn offer(&self, tx: &SyncSender<(i64, Arc<FeedState>)>, t: i64, list: Arc<FeedState>) -> bool {
        match tx.try_send((t, list)) {
            Ok(()) => true,
            Err(TrySendError::Full(_)) => {
                self.counters.dropped.fetch_add(1, Relaxed);
                throttled!(warn, "the history writer is behind; a sample was skipped");
                true
            }
            Err(TrySendError::Disconnected(_)) => false,
        }
    }

    /// The writer thread: stores each sample (prunes a few batches after
    /// it) and keeps the counters; a failed write pauses the recording
    /// with one ERROR line, the next that succeeds resumes it with an INFO.
    /// A bridge that does not record keeps the last [`KEEP_SKIPPED`]
    /// samples it skipped (the published lists, shared): when it takes
    /// over, it writes those too, oldest first (the store's guard makes
    /// each a no-op if the bridge that recorded before had written it), so
    /// a recorder killed in the middle of a write loses no interval.
    fn write_all(&self, rx: mpsc::Receiver<(i64, Arc<FeedState>)>) {
        let mut skipped: VecDeque<(i64, Arc<FeedState>)> = VecDeque::new();
        while let Ok((t, list)) = rx.recv() {
            if !self.campaign() {
                // Another bridge records: what it wrote makes cached
                // answers as old as this interval.
                self.generation.fetch_add(1, Relaxed);
                if skipped.len() == KEEP_SKIPPED {
                    skipped.pop_front();
                }
                skipped.push_back((t, list));
                continue;
            }
            for (before, skipped) in skipped.drain(..).filter(|(before, _)| *before < t) {
                self.write_sample(before, &skipped);
            }
            self.write_sample(t, &list);
        }
    }

    /// Admits and writes one sample of the list, saying in the log when
    /// writing fails and when it works again.
    fn write_sample(&self, t: i64, list: &FeedState) {
        let (admitted, refused) = self
            .admission
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .admit(t, list.list().iter());
        self.counters.refused.fetch_add(refused as u64, Relaxed);
        let samples: Vec<ServerSample> = admitted.into_iter().filter_map(sample_of).collect();
        let written = self.write(t, &samples);
        if matches!(written, Ok(Recorded::Written)) {
            // Best effort: what it leaves is reclaimed after the next
            // sample (or by autovacuum); a lost connection is said by
            // the next write.
            let _ = self.tidy();
        }
        match written {
            Ok(_) if self.failing.swap(false, Relaxed) => {
                info!("the history is written again; recording resumed");
            }
            Ok(_) => {}
            // The store logs the outage (once) and its end.
            Err(StoreError::Unavailable) => {}
            Err(e) if !self.failing.swap(true, Relaxed) => {
                throttled!(error, error = %e, "writing the history failed; recording paused until a write succeeds (the list is unaffected)");
            }
            Err(_) => {} // counted; said once already
        }
    }

    /// Records one sample taken at `t` (Unix ms) and prunes what expired
    /// by then, counting both in [`RecordingCounters`]: what the writer thread does
    /// with each sample, and what tests and benchmarks drive with their own
    /// clock. Pruning runs even when recording failed: it frees pages for
    /// the next sample.
    pub fn write(&self, t: i64, samples: &[ServerSample]) -> Result<Recorded, StoreError> {
        let started = std::time::Instant::now();
        let mut store = self.store();
        let mut recorded = store.record(t, samples);
        // The database is being reached again: wait for it without holding
        // the store (readers meanwhile get their 503 at once), then write.
        if let (Err(StoreError::Unavailable), Some(opening)) = (&recorded, store.opening()) {
            drop(store);
            opening.wait();
            store = self.store();
            recorded = store.record(t, samples);
        }
        let mut pruned = Ok(0);
        for _ in 0..PRUNE_ROUNDS {
            match store.prune(t, PRUNE_BATCH) {
                Ok(n) if n < PRUNE_BATCH => break,
                Ok(_) => {}
                Err(e) => {
                    pruned = Err(e);
                    break;
                }
            }
        }
        let size = store.size_bytes();
        drop(store);
        let result = pruned.and(recorded);
        self.generation.fetch_add(1, Relaxed);
        match &result {
            Ok(Recorded::Written) => self.counters.written(started.elapsed(), now_ms()),
            Ok(Recorded::Already) => {}
            Err(_) => {
                self.counters.errors.fetch_add(1, Relaxed);
            }
        }
        if let Ok(bytes) = size {
            self.counters.database_bytes.store(bytes, Relaxed);
        }
        result
    }

    /// Reclaims the room the last sample left behind (PostgreSQL's dead
    /// row versions; see [`Vacuum`]), counted apart from the sample's
    /// write time: the sample is committed and visible before, and the
    /// next one is an interval away. It runs on a connection of its own,
    /// so history reads do not wait for it. The writer thread runs it
    /// after each sample; benchmarks that write samples back to back run
    /// it themselves. Nothing to do on SQLite.
    pub fn tidy(&self) -> Result<(), StoreError> {
        let mut vacuum = self.vacuum.lock().unwrap_or_else(|p| p.into_inner());
        let Some(vacuum) = vacuum.as_mut() else {
            return Ok(());
        };
        let started = std::time::Instant::now();
        let result = vacuum.run();
        self.counters.tidied(started.elapsed());
        Ok(result?)
    }
}

/// How long until the first sample: samples are taken in the middle of the
/// intervals the history API counts (multiples of the interval since the
/// Unix epoch), so a tick up to half an interval late still lands in its
/// own interval. Taken at a boundary, a few milliseconds of jitter would put
/// two samples in one interval and leave the next empty: a gap in a graph.
fn first_sample_delay(interval: Duration, now_ms: i64) -> Duration {
    let every = i64::try_from(interval.as_millis())
        .unwrap_or(i64::MAX)
        .max(1);
    let wait = (every / 2 - now_ms).rem_euclid(every);
    Duration::from_millis(wait.unsigned_abs())
}

/// Copies the embedded history in `dir` and its key secret into the
/// PostgreSQL database at `url` (`bridge copy-history`), so bridges on the
/// database keep the keys, badges and graphs of the bridge that had it.
/// The database must have no key secret yet, or the same one. Returns
/// what was copied, per table.
pub fn copy_into(dir: &Path, url: &DatabaseUrl) -> Result<Vec<(&'static str, u64)>, Error> {
    let failed = |reason: String| Error::Database {
        path: dir.join(DB_FILE),
        reason,
    };
    if !dir.join(crate::live::keys::SECRET_FILE).exists() || !dir.join(DB_FILE).exists() {
        return Err(failed(format!(
            "no embedded history here (expected {} and {})",
            crate::live::keys::SECRET_FILE,
            DB_FILE
        )));
    }
    let secret = crate::live::keys::secret_in(dir)?;
    let mut from = Store::open(Some(dir))?;
    let mut to = Store::connect(url);
    let unreachable = |e: StoreError| failed(format!("the database {url}: {e}"));
    let kept = to
        .postgres()
        .ok_or_else(|| failed("not a PostgreSQL store".into()))?
        .key_secret(&secret)
        .map_err(unreachable)?;
    if kept != secret {
        return Err(failed(format!(
            "the database {url} has another key secret already: bridges used it, and its keys \
             would not be this history's (copy into an empty database)"
        )));
    }
    crate::db::store::copy(&mut from, &mut to).map_err(unreachable)
}

/// The middle of the interval of `interval` (since the Unix epoch) that
/// holds `now_ms`: the time a sample taken then is recorded at.
fn mid_interval(interval: Duration, now_ms: i64) -> i64 {
    let every = i64::try_from(interval.as_millis())
        .unwrap_or(i64::MAX)
        .max(1);
    now_ms - now_ms.rem_euclid(every) + every / 2
}

/// What is recorded of one listed entry; `None` without a key.
pub fn sample_of(keyed: &Keyed) -> Option<ServerSample> {
    let e = &keyed.entry;
    Some(ServerSample {
        key: keyed.key?.0,
        name: e.name.clone(),
        address: e.address.clone(),
        port: e.port,
        players: e.stats.players.current,
        max: e.stats.players.max,
        open: e.stats.is_lobby_open,
        mode: e.stats.gameplay_mode.to_wire(),
    })
}

#[cfg(test)]
mod tests;
