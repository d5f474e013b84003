//! The bridge's one database, split by job: an [`engine::Engine`] (the
//! embedded SQLite file, [`sqlite`], or PostgreSQL, [`postgres`]) holds
//! the rows and brings its schema up to date; [`write`] records the
//! history's samples (with their hourly and daily sums) and prunes in
//! bounded batches; [`read`] answers `/api/servers/{key}` and the history
//! queries; the webhooks own their rows behind a [`WebhookStore`] and Web
//! Push its key and subscriptions behind a [`PushStore`]; [`notify`] holds
//! the deliveries both channels share. All are written once over the
//! engine's row operations, and each row an engine reads back is decoded
//! once for both ([`decode`]), as each statement the two dialects word
//! alike is written once ([`sql`]). This module holds the open
//! [`Database`], its [`Store`], and the rows that go in and come out.

mod copy;
mod decode;
mod engine;
mod notify;
pub(crate) mod packed;
pub mod postgres;
mod push;
pub mod range;
mod read;
mod sql;
mod sqlite;
mod webhooks;
mod week;
mod write;

use std::{
    path::Path,
    sync::{Arc, Mutex, MutexGuard},
};

use crate::error::Error;

pub use copy::copy;
pub use engine::{ChangeRow, DeliveryRow, DoneDelivery, NewDelivery, Outcome, Settle};
pub use postgres::{DatabaseUrl, Postgres};
pub use push::{PushRow, PushStore, CHANNEL as PUSH_CHANNEL};
pub use sqlite::DB_FILE;
pub use webhooks::{CardClaim, CardRow, WebhookRow, WebhookStore, CHANNEL as WEBHOOK_CHANNEL};
pub use write::Recorded;

/// The current time in Unix milliseconds: the unit of every time the
/// store keeps.
pub fn now_ms() -> i64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_millis() as i64)
}

use engine::Engine;
use sqlite::Sqlite;

const HOUR_MS: i64 = 3_600_000;
const DAY_MS: i64 = 86_400_000;
/// How long each tier is kept (`docs/protocol.md` §2.2).
const KEEP_SAMPLES_MS: i64 = 48 * HOUR_MS;
const KEEP_HOURLY_MS: i64 = 90 * DAY_MS;
const KEEP_DAILY_MS: i64 = 2 * 365 * DAY_MS;
/// A server whose whole life (first to last seen) was shorter than this
/// was seen only briefly ...
const BRIEF_MS: i64 = HOUR_MS;
/// ... and is forgotten (its details and history) once unseen this long
/// (`docs/protocol.md` §2.2).
const FORGET_BRIEF_AFTER_MS: i64 = DAY_MS;

/// One listed server at one sample.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ServerSample {
    pub key: u64,
    pub name: String,
    pub address: Option<String>,
    pub port: Option<u16>,
    pub players: u32,
    pub max: u8,
    pub open: bool,
    pub mode: u8,
}

/// A server's last known state (`GET /api/servers/{key}`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ServerRow {
    pub sample: ServerSample,
    pub first_seen: i64,
    pub last_seen: i64,
}

/// Why the store could not do what it was asked.
#[derive(Debug, thiserror::Error)]
pub enum StoreError {
    #[error(transparent)]
    Sqlite(#[from] rusqlite::Error),
    #[error(transparent)]
    Postgres(#[from] ::postgres::Error),
    /// The database cannot be reached now (it was said once in the log);
    /// the store connects again by itself.
    #[error("the history database is unreachable")]
    Unavailable,
    /// A row read back is not one the bridge writes.
    #[error("an invalid row in {table}: {reason}")]
    InvalidRow { table: &'static str, reason: String },
    /// Asked of an engine that does not do it.
    #[error("{0}")]
    Unsupported(&'static str),
}

impl StoreError {
    /// Whether the database is full (SQLite's `SQLITE_FULL`: a full disk
    /// or the `--history-max-bytes` cap; PostgreSQL's `disk_full`).
    pub fn is_full(&self) -> bool {
        match self {
            Self::Sqlite(rusqlite::Error::SqliteFailure(e, _)) => {
                e.code == rusqlite::ErrorCode::DiskFull
            }
            Self::Postgres(e) => e.code() == Some(&::postgres::error::SqlState::DISK_FULL),
            _ => false,
        }
    }
}

/// The engine the history is kept in.
#[derive(Debug)]
enum Engines {
    Sqlite(Sqlite),
    Postgres(Box<Postgres>),
}

/// The bridge's one open database, shared by what keeps rows in it (the
/// history, the webhooks, Web Push, the notification engine), each
/// through its own type: cloning it shares the one connection (or file)
/// and the one [`Store`] behind it, whose calls take turns.
#[derive(Debug, Clone)]
pub struct Database {
    store: Arc<Mutex<Store>>,
    /// Where it is, when it is PostgreSQL: what the election and the
    /// vacuum connect to on their own connections.
    url: Option<DatabaseUrl>,
}

impl Database {
    /// Opens (or creates) the embedded database in `dir`, in memory when
    /// `None` (see [`Store::open`] for what fails here).
    pub fn open(dir: Option<&Path>) -> Result<Self, Error> {
        Ok(Self {
            store: Arc::new(Mutex::new(Store::open(dir)?)),
            url: None,
        })
    }

    /// The PostgreSQL database at `url`, connected when first used (see
    /// [`Store::connect`]).
    pub fn connect(url: &DatabaseUrl) -> Self {
        Self {
            store: Arc::new(Mutex::new(Store::connect(url))),
            url: Some(url.clone()),
        }
    }

    /// The store, for a query (callers are on a blocking thread).
    pub fn lock(&self) -> MutexGuard<'_, Store> {
        self.store.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// The PostgreSQL database's address; `None` for the embedded one.
    pub fn url(&self) -> Option<&DatabaseUrl> {
        self.url.as_ref()
    }
}

/// Runs `f` on `owner` (a handle on the database: a [`Database`], a
/// [`WebhookStore`], a [`PushStore`]) from a blocking thread, so that an
/// async task never waits on the database's mutex or its I/O; a task
/// that did not finish is [`StoreError::Unavailable`].
pub async fn blocking<O, T>(
    owner: &O,
    f: impl FnOnce(&O) -> Result<T, StoreError> + Send + 'static,
) -> Result<T, StoreError>
where
    O: Clone + Send + 'static,
    T: Send + 'static,
{
    let owner = owner.clone();
    tokio::task::spawn_blocking(move || f(&owner))
        .await
        .unwrap_or(Err(StoreError::Unavailable))
}

/// The open store: the engine and what the history's writes remember
/// between samples.
#[derive(Debug)]
pub struct Store {
    engine: Engines,
    /// Days before this have had their hourly sums dropped already, so
    /// pruning does not scan them again.
    hours_dropped_before: i64,
    /// Hours before this have been folded into `server_days`; `None` until
    /// the first write looks it up (the newest hour recorded: each write
    /// folds every hour before its own).
    folded_before: Option<i64>,
    /// Servers last seen up to this (last seen, key) have been checked for
    /// being brief already.
    brief_checked: (i64, i64),
    /// The sample interval, when known: how many samples an hour's row is
    /// made for when the hour before has none.
    interval_ms: Option<i64>,
}

impl Store {
    /// Opens (or creates) the embedded database in `dir`, in memory when
    /// `None`, and brings its schema up to date. A file that is not a
    /// database, is read-only, or comes from a newer bridge is an error
    /// here, at start, not at the first sample.
    pub fn open(dir: Option<&Path>) -> Result<Self, Error> {
        Ok(Self::with(Engines::Sqlite(Sqlite::open(dir)?)))
    }

    /// The store in the PostgreSQL database at `url`. It connects (and
    /// migrates the schema) when first used and again after losing the
    /// database, so a database that is down at start is not an error here.
    pub fn connect(url: &DatabaseUrl) -> Self {
        Self::with(Engines::Postgres(Box::new(Postgres::new(url))))
    }

    fn with(engine: Engines) -> Self {
        Self {
            engine,
            hours_dropped_before: i64::MIN,
            folded_before: None,
            brief_checked: (i64::MIN, i64::MIN),
            interval_ms: None,
        }
    }

    /// Tells the store the sample interval (see [`Store::record`]).
    pub fn set_interval(&mut self, interval_ms: i64) {
        self.interval_ms = Some(interval_ms);
    }

    fn engine(&mut self) -> &mut dyn Engine {
        match &mut self.engine {
            Engines::Sqlite(e) => e,
            Engines::Postgres(e) => &mut **e,
        }
    }

    /// The PostgreSQL engine, when the store is in one.
    pub fn postgres(&mut self) -> Option<&mut Postgres> {
        match &mut self.engine {
            Engines::Postgres(e) => Some(&mut **e),
            Engines::Sqlite(_) => None,
        }
    }

    /// The attempt to reach the database again that is going on, if any
    /// (PostgreSQL): a caller that may block waits for it after letting go
    /// of the store, then tries again.
    pub fn opening(&self) -> Option<std::sync::Arc<postgres::Opening>> {
        match &self.engine {
            Engines::Postgres(e) => e.opening(),
            Engines::Sqlite(_) => None,
        }
    }

    /// Forgets what this store remembers of the rows between writes (how
    /// far hours are folded), because another bridge may have written
    /// since: when this one starts recording after another did.
    pub fn forget(&mut self) {
        self.folded_before = None;
        self.hours_dropped_before = i64::MIN;
        self.brief_checked = (i64::MIN, i64::MIN);
    }

    /// Caps the embedded database at about `max_bytes` (SQLite's
    /// `max_page_count`, never below what the file holds already): past
    /// it, writes fail with `SQLITE_FULL` exactly as on a full disk, while
    /// pruning still frees pages for later samples. Returns the cap in
    /// bytes as applied. A PostgreSQL database is sized by its operator.
    pub fn cap(&mut self, max_bytes: u64) -> Result<u64, StoreError> {
        match &mut self.engine {
            Engines::Sqlite(e) => Ok(e.cap(max_bytes)?),
            Engines::Postgres(_) => Err(StoreError::Unsupported(
                "--history-max-bytes caps the embedded database only; size a PostgreSQL database with its own limits",
            )),
        }
    }

    /// What the history takes in its database now, in bytes (the file
    /// plus its write-ahead log; PostgreSQL's database size).
    pub fn size_bytes(&mut self) -> Result<u64, StoreError> {
        self.engine().size_bytes()
    }

    /// Copies the embedded database's write-ahead log into its file (see
    /// `Sqlite::checkpoint`); nothing to do in PostgreSQL.
    pub fn checkpoint(&mut self) -> Result<(), StoreError> {
        match &mut self.engine {
            Engines::Sqlite(e) => Ok(e.checkpoint()?),
            Engines::Postgres(_) => Ok(()),
        }
    }

    /// Runs `f` in one transaction: committed if it succeeds, rolled back
    /// if not.
    fn in_transaction<T>(
        &mut self,
        f: impl FnOnce(&mut dyn Engine) -> Result<T, StoreError>,
    ) -> Result<T, StoreError> {
        let engine = self.engine();
        engine.begin()?;
        match f(&mut *engine).and_then(|v| engine.commit().map(|()| v)) {
            Ok(v) => Ok(v),
            Err(e) => {
                engine.rollback();
                Err(e)
            }
        }
    }
}

/// The start of the interval of `every` ms holding `t`.
fn floor(t: i64, every: i64) -> i64 {
    t - t.rem_euclid(every.max(1))
}

/// What only the tests ask of a store: its rows as stored and the
/// engine's SQL for values a test writes to damage it on purpose.
#[cfg(test)]
mod test_support {
    use super::{Engines, Store, StoreError};

    impl Store {
        /// Whether its engine keeps an hour's row at one size, written in
        /// place (see [`Engine::slot_counts`]; tests).
        pub(crate) fn keeps_rows_in_place(&mut self) -> bool {
            matches!(self.engine().slot_counts(0), Ok(Some(_)))
        }

        /// Runs raw SQL, for tests that damage the database on purpose.
        pub(crate) fn execute_raw(&mut self, sql: &str) -> Result<(), StoreError> {
            match &mut self.engine {
                Engines::Sqlite(e) => e.execute_raw(sql),
                Engines::Postgres(e) => e.execute_raw(sql),
            }
        }

        /// `key`'s `server_hours` row of `hour`, its bytes as stored (tests).
        pub(crate) fn hour_row(
            &mut self,
            key: u64,
            hour: i64,
        ) -> Result<Option<Vec<u8>>, StoreError> {
            let rows = self.engine().hours_of(key as i64, &[hour])?;
            Ok(rows.into_iter().next().map(|r| r.bytes))
        }

        /// The engine's SQL for `false` (tests).
        pub(crate) fn false_literal(&self) -> &'static str {
            match &self.engine {
                Engines::Sqlite(_) => "0",
                Engines::Postgres(_) => "false",
            }
        }

        /// The engine's SQL for a blob of `n` zero bytes (tests).
        pub(crate) fn repeat_blob(&self, n: usize) -> String {
            match &self.engine {
                Engines::Sqlite(_) => format!("zeroblob({n})"),
                Engines::Postgres(_) => format!("decode(repeat('00', {n}), 'hex')"),
            }
        }

        /// The engine's SQL for a blob holding `bytes` (tests).
        pub(crate) fn blob_literal(&self, bytes: &[u8]) -> String {
            let hex: String = bytes.iter().map(|b| format!("{b:02x}")).collect();
            match &self.engine {
                Engines::Sqlite(_) => format!("X'{hex}'"),
                Engines::Postgres(_) => format!("'\\x{hex}'::bytea"),
            }
        }
    }
}
