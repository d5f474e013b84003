//! Both engines side by side: the synthetic history written again, with
//! the same plan, into PostgreSQL (a scratch cluster started for the run),
//! against the embedded SQLite file as the baseline: what a sample costs,
//! what a server's month costs to read through the store, and what the
//! history takes on disk.
//!
//! The month's reads go through the store itself (no HTTP, no cache), so
//! both engines answer exactly the same calls.

use std::{path::Path, time::Instant};

use bridge::db::{history::History, store::DatabaseUrl};
use hdrhistogram::Histogram;
use lobby_testkit::postgres::Cluster;
use protocol::api::HistoryRange;

use super::synth::{self, Generated, Plan, Target};
use crate::{
    error::{Error, Result},
    report::{count, histogram, ms, q, record, times, Row, Verdict},
};

const MB: f64 = 1_000_000.0;

/// The per-sample targets on PostgreSQL (µs).
const WALL_TARGET_US: u64 = 100_000;
const CPU_TARGET_US: u64 = 50_000;
/// `range=30d` and `range=1y` uncached p50 target (µs).
const READ_TARGET_US: u64 = 5_000;
/// One server's week, uncached, p50 target (µs).
const WEEK_TARGET_US: u64 = 10_000;
/// The lobby's week, uncached, p50 target (µs).
const LOBBY_WEEK_TARGET_US: u64 = 50_000;
/// Times the lobby's week is read (it has one answer).
const LOBBY_WEEKS: usize = 20;

/// Writes `plan` into a scratch PostgreSQL cluster and compares it with
/// the SQLite history `sqlite` already written in `sqlite_dir`; one
/// skipped row when PostgreSQL is missing (as the handover phase's).
/// Blocking.
pub(super) fn compare(
    plan: Plan,
    sqlite_dir: &Path,
    sqlite: &Generated,
    requests: usize,
) -> Result<Vec<Row>> {
    if let Err(why) = lobby_testkit::postgres::find_bin() {
        return Ok(vec![Row::skipped(
            "history on PostgreSQL beside SQLite (write, read, storage)",
            why.to_string(),
        )]);
    }
    let unexpected = |e: lobby_testkit::Error| Error::Unexpected(format!("PostgreSQL: {e}"));
    let cluster = Cluster::start().map_err(unexpected)?;
    let url: DatabaseUrl = cluster
        .create_database("history_bench")
        .map_err(unexpected)?
        .parse()
        .map_err(Error::Unexpected)?;
    eprintln!("[loadgen] history: the same plan written into PostgreSQL");
    let pg = synth::generate(Target::Postgres(&url), plan)?;
    let interval = std::time::Duration::from_millis(plan.interval_ms as u64);
    let pg_history = History::connect(&url, interval);
    let pg_reads = month_reads(&pg_history, plan, pg.end_ms, requests)?;
    let pg_more = more_reads(&pg_history, plan, pg.end_ms, requests)?;
    drop(pg_history);
    let lite =
        History::open(Some(sqlite_dir), interval).map_err(|e| Error::Unexpected(e.to_string()))?;
    let lite_reads = month_reads(&lite, plan, sqlite.end_ms, requests)?;
    let lite_more = more_reads(&lite, plan, sqlite.end_ms, requests)?;
    drop(lite);
    drop(cluster);
    let mut out = rows(plan, sqlite, &pg, &lite_reads, &pg_reads);
    out.extend(more_rows(plan, &lite_more, &pg_more));
    Ok(out)
}

/// The year's and the week's reads through the store, uncached.
struct MoreReads {
    /// A server's `range=1y`.
    year: Histogram<u64>,
    /// A server's week.
    week: Histogram<u64>,
    /// The lobby's week.
    lobby_week: Histogram<u64>,
}

/// A server's year and week read through the store for `requests` keys
/// spread over the lobby (each once), and the lobby's week
/// [`LOBBY_WEEKS`] times.
fn more_reads(history: &History, plan: Plan, end_ms: i64, requests: usize) -> Result<MoreReads> {
    let (mut year, mut week, mut lobby_week) = (histogram(), histogram(), histogram());
    for key in spread_keys(plan, requests) {
        range_read(history, key, HistoryRange::Year, plan, end_ms, &mut year)?;
        let started = Instant::now();
        let mut store = history.store();
        store.server(key).map_err(store_err)?;
        let hours = store.server_week(key, end_ms).map_err(store_err)?;
        drop(store);
        record(&mut week, started.elapsed());
        if hours.iter().all(|h| h.0.is_none()) {
            return Err(Error::Unexpected(format!(
                "server {key:016x}: a week without players"
            )));
        }
    }
    for _ in 0..LOBBY_WEEKS {
        let started = Instant::now();
        let hours = history.store().lobby_week(end_ms).map_err(store_err)?;
        record(&mut lobby_week, started.elapsed());
        if hours.iter().all(|h| h.0.is_none()) {
            return Err(Error::Unexpected("the lobby's week is empty".into()));
        }
    }
    Ok(MoreReads {
        year,
        week,
        lobby_week,
    })
}

/// The rows of [`more_reads`]: PostgreSQL's figure, SQLite's beside it,
/// each held to its target.
fn more_rows(plan: Plan, lite: &MoreReads, pg: &MoreReads) -> Vec<Row> {
    let size = format!(
        "{} servers × {} days",
        count(plan.servers as u64),
        plan.days
    );
    let p50 = |h: &Histogram<u64>| h.value_at_quantile(0.5);
    let row = |what: String, pg: &Histogram<u64>, lite: &Histogram<u64>, target: u64| {
        Row::new(
            what,
            format!("PostgreSQL: p50 {} p99 {}", q(pg, 0.5), q(pg, 0.99)),
            format!("SQLite: p50 {} p99 {}", q(lite, 0.5), q(lite, 0.99)),
            times(p50(pg) as f64, p50(lite) as f64),
            format!("p50 ≤ {} on both", ms(target)),
            Verdict::of(
                !pg.is_empty() && !lite.is_empty() && p50(pg) <= target && p50(lite) <= target,
            ),
        )
    };
    vec![
        row(
            format!(
                "a server's range=1y read through the store, uncached ({size}; {} keys once each)",
                pg.year.len()
            ),
            &pg.year,
            &lite.year,
            READ_TARGET_US,
        ),
        row(
            format!(
                "a server's /week (28 days into 168 hours) read through the store, uncached ({size}; {} keys once each)",
                pg.week.len()
            ),
            &pg.week,
            &lite.week,
            WEEK_TARGET_US,
        ),
        row(
            format!(
                "the lobby's /week read through the store, uncached ({size}; {} times)",
                pg.lobby_week.len()
            ),
            &pg.lobby_week,
            &lite.lobby_week,
            LOBBY_WEEK_TARGET_US,
        ),
    ]
}

/// A server's month read through the store (its row, then its points),
/// for `requests` keys spread over the lobby, each once.
fn month_reads(
    history: &History,
    plan: Plan,
    end_ms: i64,
    requests: usize,
) -> Result<Histogram<u64>> {
    let mut h = histogram();
    for key in spread_keys(plan, requests) {
        range_read(history, key, HistoryRange::Month, plan, end_ms, &mut h)?;
    }
    Ok(h)
}

/// The keys of `requests` reads spread over the lobby, each once.
fn spread_keys(plan: Plan, requests: usize) -> Vec<u64> {
    let servers = synth::lobby(plan.servers);
    // 7919 is prime: coprime with any lobby size it does not divide.
    let stride = if servers.len().is_multiple_of(7919) {
        1
    } else {
        7919
    };
    (0..requests.min(servers.len()))
        .map(|i| servers[(i * stride + 1) % servers.len()].key)
        .collect()
}

/// A server's `range` read through the store (its row, then its points),
/// timed into `h`; an error if the server or its points are missing.
fn range_read(
    history: &History,
    key: u64,
    range: HistoryRange,
    plan: Plan,
    end_ms: i64,
    h: &mut Histogram<u64>,
) -> Result<()> {
    let started = Instant::now();
    let mut store = history.store();
    let row = store
        .server(key)
        .map_err(store_err)?
        .ok_or_else(|| Error::Unexpected(format!("server {key:016x} not in the history")))?;
    let (_, points) = store
        .server_history(key, row.first_seen, range, plan.interval_ms, end_ms)
        .map_err(store_err)?;
    drop(store);
    record(h, started.elapsed());
    if points.is_empty() {
        return Err(Error::Unexpected(format!(
            "server {key:016x}: a {} without points",
            format!("{range:?}").to_lowercase()
        )));
    }
    Ok(())
}

/// A store's error as the phase's.
fn store_err(e: bridge::db::store::StoreError) -> Error {
    Error::Unexpected(format!("history: {e}"))
}

fn rows(
    plan: Plan,
    lite: &Generated,
    pg: &Generated,
    lite_reads: &Histogram<u64>,
    pg_reads: &Histogram<u64>,
) -> Vec<Row> {
    let size = format!(
        "{} servers × {} days, the last {} h at 60 s{}",
        count(plan.servers as u64),
        plan.days,
        plan.dense_hours,
        if pg.steady {
            ", at the steady state"
        } else {
            ", before the steady state (48 h of samples)"
        }
    );
    let p50 = |h: &Histogram<u64>| h.value_at_quantile(0.5);
    let (wall, cpu) = (p50(&pg.wall), p50(&pg.cpu));
    vec![
        Row::new(
            format!(
                "history write on PostgreSQL, one sample ({size}; {} writes timed), SQLite as the baseline",
                pg.wall.len()
            ),
            format!(
                "wall p50 {} p99 {}, CPU p50 {} p99 {}; then the vacuum, off the sample's time: wall p50 {} p99 {}",
                ms(wall),
                q(&pg.wall, 0.99),
                ms(cpu),
                q(&pg.cpu, 0.99),
                q(&pg.tidy, 0.5),
                q(&pg.tidy, 0.99)
            ),
            format!(
                "SQLite: wall p50 {} p99 {}, CPU p50 {} p99 {}",
                q(&lite.wall, 0.5),
                q(&lite.wall, 0.99),
                q(&lite.cpu, 0.5),
                q(&lite.cpu, 0.99)
            ),
            times(wall as f64, p50(&lite.wall) as f64),
            "wall ≤ 100 ms, CPU ≤ 50 ms",
            Verdict::of(!pg.wall.is_empty() && wall <= WALL_TARGET_US && cpu <= CPU_TARGET_US),
        ),
        Row::new(
            format!(
                "a server's range=30d read through the store on PostgreSQL, uncached ({size}; {} keys once each)",
                pg_reads.len()
            ),
            format!("p50 {} p99 {}", q(pg_reads, 0.5), q(pg_reads, 0.99)),
            format!(
                "SQLite: p50 {} p99 {}",
                q(lite_reads, 0.5),
                q(lite_reads, 0.99)
            ),
            times(p50(pg_reads) as f64, p50(lite_reads) as f64),
            "p50 ≤ 5 ms",
            Verdict::of(!pg_reads.is_empty() && p50(pg_reads) <= READ_TARGET_US),
        ),
        Row::new(
            format!("history on disk in PostgreSQL after VACUUM ({size})"),
            format!("{:.1} MB", pg.bytes as f64 / MB),
            format!("SQLite: {:.1} MB", lite.bytes as f64 / MB),
            times(pg.bytes as f64, lite.bytes as f64),
            "≤ 2× SQLite",
            Verdict::of(pg.bytes <= 2 * lite.bytes),
        ),
        Row::new(
            "history in PostgreSQL by table (with its indexes and TOAST, largest first)",
            super::largest_tables(&pg.tables),
            "-",
            "-",
            "-",
            Verdict::Info,
        ),
    ]
}
