//! The synthetic history: thousands of servers over weeks of samples,
//! written through the bridge's own history store
//! ([`bridge::db::history::History::write`], retention included) with a clock
//! of its own, so a month takes minutes instead of a month.
//!
//! Every sample the generator writes is one the bridge would write; only
//! their spacing differs before the last `dense` span: there one sample per
//! hour stands for the hour's sixty (the hourly and daily rows are the same
//! rows, their sums smaller), and the samples tier, which keeps 48 h, is
//! filled densely, retention running over it as it would, before the end.

use std::{
    path::Path,
    time::{Duration, Instant},
};

use bridge::db::{
    history::History,
    store::{DatabaseUrl, ServerSample},
};
use hdrhistogram::Histogram;

use crate::{
    error::{Error, Result},
    report::histogram,
};

const MINUTE_MS: i64 = 60_000;
const HOUR_MS: i64 = 60 * MINUTE_MS;
const DAY_MS: i64 = 24 * HOUR_MS;
/// What the bridge keeps every sample for: writes after this much dense
/// history run with full tables and pruning in step (the steady state).
const SAMPLES_KEPT_MS: i64 = 48 * HOUR_MS;

/// What to generate.
#[derive(Debug, Clone, Copy)]
pub(super) struct Plan {
    /// Servers (keys) ever listed.
    pub(super) servers: usize,
    /// Days of history, ending now.
    pub(super) days: i64,
    /// The last hours written at the sample interval; before them, one
    /// sample per hour (equal to `days * 24`: every sample written).
    pub(super) dense_hours: i64,
    /// The last days written one sample per hour (or denser); before them
    /// one sample per day, whose rows past the hourly tier hold what a
    /// day of hourly samples would leave (equal to `days`: every hour).
    pub(super) hourly_days: i64,
    /// The bridge's sample interval (its default, 60 s).
    pub(super) interval_ms: i64,
}

/// Where the history is written: the embedded SQLite file in a directory,
/// or a PostgreSQL database.
#[derive(Debug, Clone, Copy)]
pub(super) enum Target<'a> {
    Sqlite(&'a Path),
    Postgres(&'a DatabaseUrl),
}

/// What the generation left and what its writes cost.
pub(super) struct Generated {
    /// Whether the timed writes ran at the steady state (48 h of dense
    /// samples before them); if not, every dense write is timed.
    pub(super) steady: bool,
    /// Samples written.
    pub(super) samples: u64,
    /// Server rows written (one per listed server per sample).
    pub(super) rows: u64,
    /// Bytes on disk after a checkpoint: the database file and its
    /// (truncated) write-ahead log; in PostgreSQL, the tables with their
    /// indexes and TOAST after `VACUUM`.
    pub(super) bytes: u64,
    /// The write-ahead log before that checkpoint (0 in PostgreSQL).
    pub(super) wal_before: u64,
    /// Thread CPU time of each write at the steady state (µs).
    pub(super) cpu: Histogram<u64>,
    /// Wall time of the same writes (µs).
    pub(super) wall: Histogram<u64>,
    /// Wall time of the tidying after each of them (µs; PostgreSQL's
    /// vacuum, which the bridge's writer runs after the sample is
    /// committed).
    pub(super) tidy: Histogram<u64>,
    /// How long the whole generation took.
    pub(super) took: Duration,
    /// The last sample's time (Unix ms).
    pub(super) end_ms: i64,
    /// Bytes of each table and index (SQLite's `dbstat`; PostgreSQL's
    /// tables with their indexes), largest first.
    pub(super) tables: Vec<(String, u64)>,
}

/// One server of the synthetic lobby.
pub(super) struct Synthetic {
    /// The bridge's key of the server (any 64-bit value does).
    pub(super) key: u64,
    name: String,
    address: String,
    port: u16,
    max: u8,
    /// Hours of each day the server is not listed.
    off_hours: i64,
}

/// A name as long as the protocol allows, of characters that need
/// escaping in XML and JSON, bidirectional marks and four-byte ones.
pub(super) fn hostile_name(i: usize) -> String {
    let mut name = format!("<&\"'>{i} \u{202E}");
    while name.chars().count() < 100 {
        name.push_str("𝕏<&>\"'");
    }
    name.chars().take(100).collect()
}

/// A deterministic scramble of `i` (splitmix64): keys spread like hashes.
fn scramble(i: u64) -> u64 {
    let mut z = i.wrapping_add(0x9E37_79B9_7F4A_7C15);
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}

/// The lobby: every thousandth server has a hostile name.
pub(super) fn lobby(servers: usize) -> Vec<Synthetic> {
    (0..servers)
        .map(|i| Synthetic {
            key: scramble(i as u64),
            name: if i % 1000 == 0 {
                hostile_name(i)
            } else {
                format!("Community server {i}")
            },
            address: format!("10.{}.{}.{}", i / 65_536 % 256, i / 256 % 256, i % 256),
            port: 20_000 + (i % 30_000) as u16,
            max: 2 + (i % 3) as u8,
            off_hours: (i % 6) as i64,
        })
        .collect()
}

impl Synthetic {
    /// The server at `t`: listed except `off_hours` of each day, players
    /// rising and falling through the day.
    fn at(&self, t: i64) -> Option<ServerSample> {
        let hour = t.rem_euclid(DAY_MS) / HOUR_MS;
        let shift = (self.key % 24) as i64;
        if (hour + shift) % 24 < self.off_hours {
            return None;
        }
        let minute = t / MINUTE_MS;
        let wave = ((minute as u64).wrapping_mul(7) ^ self.key) % 6;
        let players = wave.min(u64::from(self.max) + 1) as u32;
        Some(ServerSample {
            key: self.key,
            name: self.name.clone(),
            address: Some(self.address.clone()),
            port: Some(self.port),
            players,
            max: self.max,
            open: players < u32::from(self.max),
            mode: 1 + (self.key % 2) as u8,
        })
    }
}

/// The listed servers at `t`.
pub(super) fn sample(lobby: &[Synthetic], t: i64) -> Vec<ServerSample> {
    lobby.iter().filter_map(|s| s.at(t)).collect()
}

/// CPU time this thread has used.
pub(super) fn thread_cpu() -> Duration {
    let mut ts = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: clock_gettime writes only the timespec it is given.
    unsafe {
        libc::clock_gettime(libc::CLOCK_THREAD_CPUTIME_ID, &mut ts);
    }
    Duration::new(ts.tv_sec as u64, ts.tv_nsec as u32)
}

fn file_len(path: &Path) -> u64 {
    std::fs::metadata(path).map_or(0, |m| m.len())
}

/// Writes `plan`'s history into a new database at `target`, ending now.
/// Blocking: run it on a blocking thread.
pub(super) fn generate(target: Target<'_>, plan: Plan) -> Result<Generated> {
    let started = Instant::now();
    let db_err = |e: rusqlite::Error| Error::Unexpected(format!("history store: {e}"));
    let store_err =
        |e: bridge::db::store::StoreError| Error::Unexpected(format!("history store: {e}"));
    let interval = Duration::from_millis(plan.interval_ms as u64);
    let history = match target {
        Target::Sqlite(dir) => {
            History::open(Some(dir), interval).map_err(|e| Error::Unexpected(e.to_string()))?
        }
        Target::Postgres(url) => History::connect(url, interval),
    };
    let lobby = lobby(plan.servers);
    let now = bridge::db::store::now_ms();
    let end = now - now.rem_euclid(plan.interval_ms);
    let start = end - plan.days * DAY_MS;
    let dense_from = end - plan.dense_hours * HOUR_MS;
    let hourly_from = end - plan.hourly_days * DAY_MS;
    // Below 48 h of dense samples there is no steady state: every dense
    // write is timed.
    let steady = plan.dense_hours * HOUR_MS > SAMPLES_KEPT_MS;
    let timed_from = if steady {
        dense_from + SAMPLES_KEPT_MS
    } else {
        dense_from
    };
    let (mut cpu, mut wall, mut tidy) = (histogram(), histogram(), histogram());
    let (mut samples, mut rows) = (0u64, 0u64);
    let mut t = start;
    let mut next_report = start + DAY_MS;
    while t <= end {
        let listed = sample(&lobby, t);
        let (c0, w0) = (thread_cpu(), Instant::now());
        history.write(t, &listed).map_err(store_err)?;
        if t >= timed_from {
            crate::report::record(&mut cpu, thread_cpu().saturating_sub(c0));
            crate::report::record(&mut wall, w0.elapsed());
        }
        let t0 = Instant::now();
        history.tidy().map_err(store_err)?;
        if t >= timed_from {
            crate::report::record(&mut tidy, t0.elapsed());
        }
        samples += 1;
        rows += listed.len() as u64;
        if t >= next_report {
            eprintln!(
                "[loadgen] history: day {} of {} written ({:.0?}, {} MB so far)",
                (t - start) / DAY_MS,
                plan.days,
                started.elapsed(),
                history
                    .counters()
                    .database_bytes
                    .load(std::sync::atomic::Ordering::Relaxed)
                    / 1_000_000
            );
            next_report += DAY_MS;
        }
        t += if t < hourly_from {
            DAY_MS
        } else if t < dense_from {
            HOUR_MS
        } else {
            plan.interval_ms
        };
    }
    let (bytes, wal_before, tables) = match target {
        Target::Sqlite(dir) => {
            let db = dir.join(bridge::db::store::DB_FILE);
            let wal = dir.join(format!("{}-wal", bridge::db::store::DB_FILE));
            let wal_before = file_len(&wal);
            history.store().checkpoint().map_err(store_err)?;
            let bytes = file_len(&db) + file_len(&wal);
            drop(history);
            (bytes, wal_before, breakdown(&db).map_err(db_err)?)
        }
        Target::Postgres(url) => {
            drop(history);
            let tables = postgres_tables(url)
                .map_err(|e| Error::Unexpected(format!("history in PostgreSQL: {e}")))?;
            (tables.iter().map(|(_, b)| b).sum(), 0, tables)
        }
    };
    Ok(Generated {
        steady,
        samples,
        rows,
        bytes,
        wal_before,
        cpu,
        wall,
        tidy,
        took: started.elapsed(),
        end_ms: end,
        tables,
    })
}

/// Each history table's bytes in PostgreSQL (`pg_total_relation_size`:
/// heap, indexes and TOAST) after `VACUUM`, largest first.
fn postgres_tables(url: &DatabaseUrl) -> std::result::Result<Vec<(String, u64)>, postgres::Error> {
    let mut client = url.connect()?;
    client.batch_execute("VACUUM")?;
    let rows = client.query(
        "SELECT c.relname::text, pg_total_relation_size(c.oid) FROM pg_class c \
         JOIN pg_namespace n ON n.oid = c.relnamespace \
         WHERE n.nspname = 'public' AND c.relkind = 'r' ORDER BY 2 DESC",
        &[],
    )?;
    rows.iter()
        .map(|r| Ok((r.try_get(0)?, r.try_get::<_, i64>(1)?.max(0) as u64)))
        .collect()
}

/// Where the bytes are: each table's and index's pages.
fn breakdown(db: &Path) -> rusqlite::Result<Vec<(String, u64)>> {
    let conn =
        rusqlite::Connection::open_with_flags(db, rusqlite::OpenFlags::SQLITE_OPEN_READ_ONLY)?;
    let mut stmt = conn.prepare(
        "SELECT name, SUM(pgsize) AS bytes FROM dbstat GROUP BY name ORDER BY bytes DESC",
    )?;
    let rows = stmt.query_map([], |r| {
        Ok((r.get::<_, String>(0)?, r.get::<_, i64>(1)?.max(0) as u64))
    })?;
    rows.collect()
}
