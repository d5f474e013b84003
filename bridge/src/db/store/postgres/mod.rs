//! The PostgreSQL engine (`--database-url`): the history and the key
//! secret in one database that several bridges share. Each batch of
//! [`Engine`] is one statement over arrays (`unnest`, `= ANY`), so a
//! sample of 10,000 servers is a handful of round trips.
//!
//! Crate: the synchronous `postgres` client (rust-postgres; it runs
//! `tokio-postgres` on a small runtime of its own). The store is
//! synchronous already — one connection behind the history's mutex, used
//! from the writer thread and from blocking tasks — so the synchronous
//! client fits it without a pool or a second code path. Measured on the
//! write path (release build, a local scratch cluster, 10,000 servers per
//! sample; `loadgen --only history`): about 3 ms of the bridge's CPU per
//! sample against SQLite's 50 ms, the rest of the wall time (about 0.1 s
//! on a busy 2-core machine) being the server's upserts, which an async
//! client or a pool would not shorten. `sqlx` was set aside: it would replace `rusqlite`, whose
//! bundled SQLite conflicts with the one `sqlx` links, for no gain in the
//! store's shape.
//!
//! The connection opens when first needed and again after it is lost,
//! with a growing delay between tries; while there is none, every
//! operation fails at once with [`StoreError::Unavailable`] (the HTTP
//! answers become 503). Only the very first try is made in the caller's
//! thread (at start, before anything is served); a connection lost later
//! is opened again on a thread of its own ([`Opening`]), so the history's
//! mutex is never held while a database that does not answer is waited
//! for: readers get their 503 at once, and the writer waits for the
//! attempt outside the mutex ([`Opening::wait`]). The outage is logged
//! once when it starts and once when it ends.
//!
//! That reconnecting is the hundred lines here (`Opening`, `conn`,
//! `lost`) rather than `r2d2` 0.8 (the pool the `postgres` crate's
//! author keeps for its synchronous client), weighed against its source:
//! the store keeps one connection for its whole life, across the
//! several calls of one transaction ([`Engine::begin`] to
//! [`Engine::commit`]), so of a pool only the background reconnect would
//! be used. That one retries until it connects, at most every
//! `connection_timeout / 2` (a 5 s timeout: every 2.5 s), handing every
//! failure to its error handler, on a thread pool and a reaper of its own; it would save about
//! sixty lines for two dependencies and three threads, and the outage's
//! two log lines and the writer's wait outside the mutex would still be
//! written here.

pub mod election;
mod own;
mod schema;
pub mod vacuum;

use std::{
    collections::HashMap,
    fmt,
    str::FromStr,
    sync::{Arc, Condvar, Mutex},
    time::{Duration, Instant},
};

use postgres::{Client, NoTls, Statement};
use tracing::{error, info};

pub use election::Election;
pub use schema::SECRET_BYTES;
pub use vacuum::Vacuum;

use super::decode::{day_sums, Columns, Decode};
use super::engine::{
    DayRow, DaySums, Engine, Forgotten, HourCounts, Packed, Result, MAX_DAY_BYTES, MAX_HOUR_BYTES,
};
use super::packed::{EMPTY_SLOT, MAX_SLOTS, SAMPLE_BYTES};
use super::sql::{Dialect, Param, Sql};
use super::{ServerSample, StoreError};

/// A statement's parameters, as the client takes them.
type Params<'a> = [&'a (dyn postgres::types::ToSql + Sync)];

/// The first delay before connecting again after a failure.
const FIRST_RETRY: Duration = Duration::from_millis(500);
/// The longest delay between tries.
const LAST_RETRY: Duration = Duration::from_secs(10);
/// How long connecting may take.
const CONNECT_TIMEOUT: Duration = Duration::from_secs(5);

/// The longest a statement may run before the server cancels it.
const STATEMENT_TIMEOUT_MS: u32 = 30_000;

// The append in `append_samples` reads a record's offset as its first two
// bytes of six.
const _: () = assert!(SAMPLE_BYTES == 6);

/// How many records an hour's row `h` holds: those before its first
/// empty slot (`$6`), or all of it when it has none. Six `0xFF` bytes are
/// found only at a slot's start in rows the bridge writes; in any other
/// row the match is not at a record's start, and the row counts as full.
macro_rules! used {
    () => {
        "(CASE WHEN position($6 IN h.samples) % 6 = 1 THEN position($6 IN h.samples) / 6 \
          ELSE length(h.samples) / 6 END)"
    };
}

/// One sample's records written into their servers' rows of hour `$1`
/// (keys `$2`, records `$3`, taken `$4` s into the hour) in one statement,
/// nothing read back: a new row gets the record and the empty slots `$5`;
/// a row with an empty slot gets the record there, in place, so that it
/// keeps its size and the update can stay on its page (HOT); a row without
/// one grows by the record and `$5`. The guard against the same sample
/// twice looks at the last record first (samples come in order, so that
/// settles it) and scans the row's records only when the clock went back.
const APPEND_SAMPLES: &str = concat!(
    "INSERT INTO server_hours AS h (hour, key, samples) \
     SELECT $1, k, s || $5 FROM unnest($2::bigint[], $3::bytea[]) AS u(k, s) \
     ON CONFLICT (hour, key) DO UPDATE SET samples = CASE \
       WHEN position($6 IN h.samples) % 6 = 1 \
       THEN overlay(h.samples PLACING substring(excluded.samples FROM 1 FOR 6) \
            FROM position($6 IN h.samples) FOR 6) \
       ELSE h.samples || excluded.samples END \
     WHERE CASE WHEN ",
    used!(),
    " = 0 THEN true WHEN get_byte(h.samples, (",
    used!(),
    " - 1) * 6) + 256 * get_byte(h.samples, (",
    used!(),
    " - 1) * 6 + 1) < $4 THEN true \
       ELSE NOT EXISTS (SELECT 1 FROM generate_series(0, ",
    used!(),
    " - 1) AS i \
            WHERE get_byte(h.samples, i * 6) + 256 * get_byte(h.samples, i * 6 + 1) = $4) \
     END"
);

/// A PostgreSQL database's address (`postgres://` or `postgresql://`),
/// checked when the command line is read. Its password never appears in
/// `Debug` or the log.
#[derive(Clone)]
pub struct DatabaseUrl {
    config: postgres::Config,
    /// What the log says of it: user, hosts and database, no password.
    shown: String,
}

impl FromStr for DatabaseUrl {
    type Err = String;

    fn from_str(s: &str) -> std::result::Result<Self, String> {
        if !(s.starts_with("postgres://") || s.starts_with("postgresql://")) {
            return Err("a database URL starts with postgres:// or postgresql://".into());
        }
        let mut config: postgres::Config = s
            .parse()
            .map_err(|e| format!("not a PostgreSQL URL: {e}"))?;
        config
            .connect_timeout(CONNECT_TIMEOUT)
            .keepalives(true)
            .keepalives_idle(Duration::from_secs(10))
            .application_name("lobby-bridge")
            .options(&format!("-c statement_timeout={STATEMENT_TIMEOUT_MS}"));
        let hosts: Vec<String> = config
            .get_hosts()
            .iter()
            .map(|h| match h {
                postgres::config::Host::Tcp(name) => name.clone(),
                #[cfg(unix)]
                postgres::config::Host::Unix(path) => path.display().to_string(),
            })
            .collect();
        let ports = config.get_ports();
        let hosts: Vec<String> = hosts
            .into_iter()
            .enumerate()
            .map(|(i, host)| {
                // One port for every host, or one each (libpq's rule).
                let port = ports.get(i).or(ports.first()).copied().unwrap_or(5432);
                if host.contains(':') && !host.starts_with('[') {
                    format!("[{host}]:{port}")
                } else {
                    format!("{host}:{port}")
                }
            })
            .collect();
        let shown = format!(
            "postgresql://{}@{}/{}",
            config.get_user().unwrap_or(""),
            hosts.join(","),
            config.get_dbname().unwrap_or("")
        );
        Ok(Self { config, shown })
    }
}

impl fmt::Debug for DatabaseUrl {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.shown)
    }
}

impl fmt::Display for DatabaseUrl {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.shown)
    }
}

impl DatabaseUrl {
    /// A new connection to the database (no schema work).
    pub fn connect(&self) -> std::result::Result<Client, postgres::Error> {
        self.config.connect(NoTls)
    }
}

/// An open connection and the statements prepared on it.
struct Conn {
    client: Client,
    statements: HashMap<&'static str, Statement>,
}

/// A connection being opened (and the schema migrated) on a thread of its
/// own; whoever may block waits for it with [`Opening::wait`], anyone else
/// finds it ready or not at its next operation.
pub struct Opening {
    /// When it started: an attempt that takes longer than [`OPENING_MAX`]
    /// is given up (a server that accepts and never answers holds it).
    started: Instant,
    /// The attempt's outcome once it is over (the error as text).
    outcome: Mutex<Option<std::result::Result<Client, String>>>,
    over: Condvar,
}

/// The longest an attempt to connect (then migrate) may take: the connect
/// timeout bounds only the socket's connection.
const OPENING_MAX: Duration = Duration::from_secs(2 * CONNECT_TIMEOUT.as_secs());

impl Opening {
    /// Starts an attempt to connect to `url`.
    fn start(url: &DatabaseUrl) -> Arc<Self> {
        let opening = Arc::new(Self {
            started: Instant::now(),
            outcome: Mutex::new(None),
            over: Condvar::new(),
        });
        let (theirs, url) = (opening.clone(), url.clone());
        let spawned = std::thread::Builder::new()
            .name("database-connect".into())
            .spawn(move || theirs.finish(open(&url).map_err(|e| reason(&e))));
        if let Err(e) = spawned {
            opening.finish(Err(format!("cannot start a thread to connect: {e}")));
        }
        opening
    }

    fn finish(&self, outcome: std::result::Result<Client, String>) {
        *self.outcome.lock().unwrap_or_else(|p| p.into_inner()) = Some(outcome);
        self.over.notify_all();
    }

    /// Blocks until the attempt is over or given up ([`OPENING_MAX`]).
    pub fn wait(&self) {
        let outcome = self.outcome.lock().unwrap_or_else(|p| p.into_inner());
        let left = OPENING_MAX.saturating_sub(self.started.elapsed());
        let _ = self.over.wait_timeout_while(outcome, left, |o| o.is_none());
    }

    /// The outcome, once the attempt is over.
    fn take(&self) -> Option<std::result::Result<Client, String>> {
        self.outcome
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .take()
    }
}

/// Why a connection could not be opened, in one line an operator can act
/// on: the server's own sentence when it answered (a refused password, a
/// missing database, with its SQLSTATE), else every cause (a refused or
/// timed-out connection, a name that does not resolve).
pub fn reason(e: &StoreError) -> String {
    let StoreError::Postgres(pg) = e else {
        return e.to_string();
    };
    if let Some(db) = pg.as_db_error() {
        return format!(
            "the server refused: {} (SQLSTATE {})",
            db.message(),
            db.code().code()
        );
    }
    let mut text = pg.to_string();
    let mut cause = std::error::Error::source(pg);
    while let Some(c) = cause {
        let said = c.to_string();
        if !text.contains(&said) {
            text.push_str(": ");
            text.push_str(&said);
        }
        cause = c.source();
    }
    text
}

/// A new connection to `url` with the schema brought up to date.
fn open(url: &DatabaseUrl) -> Result<Client> {
    let mut client = url.connect()?;
    schema::migrate(&mut client)?;
    Ok(client)
}

/// The store's connection to PostgreSQL, opened and reopened as needed.
pub struct Postgres {
    url: DatabaseUrl,
    conn: Option<Conn>,
    /// The attempt to connect again going on, if any.
    opening: Option<Arc<Opening>>,
    /// Whether a connection was tried already (the first is made inline).
    tried: bool,
    /// Whether an outage is going on (and was logged).
    down: bool,
    /// No new try before this.
    retry_at: Option<Instant>,
    /// The delay after the next failure.
    backoff: Duration,
}

impl fmt::Debug for Postgres {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Postgres")
            .field("url", &self.url)
            .field("connected", &self.conn.is_some())
            .finish()
    }
}

impl Postgres {
    /// The engine for `url`, not connected yet.
    pub fn new(url: &DatabaseUrl) -> Self {
        Self {
            url: url.clone(),
            conn: None,
            opening: None,
            tried: false,
            down: false,
            retry_at: None,
            backoff: FIRST_RETRY,
        }
    }

    /// The database's key secret: `candidate` if it had none yet.
    pub fn key_secret(&mut self, candidate: &[u8; SECRET_BYTES]) -> Result<[u8; SECRET_BYTES]> {
        let conn = self.conn()?;
        let secret = schema::key_secret(&mut conn.client, candidate);
        self.checked(secret)
    }

    /// The connection's client (opened if needed), for work beyond the
    /// engine's operations (copying a history in).
    pub(super) fn client(&mut self) -> Result<&mut Client> {
        Ok(&mut self.conn()?.client)
    }

    /// Runs raw SQL (tests).
    #[cfg(test)]
    pub fn execute_raw(&mut self, sql: &str) -> Result<()> {
        self.batch(sql)
    }

    /// The attempt to connect again going on, if any: a caller that may
    /// block waits for it (outside the history's mutex) and tries again.
    pub fn opening(&self) -> Option<Arc<Opening>> {
        self.opening.clone()
    }

    /// The open connection. Without one, the first time ever it connects
    /// (and migrates the schema) here; later, once the delay after the last
    /// failure is over, it starts an [`Opening`] and fails at once with
    /// [`StoreError::Unavailable`], as it does until that attempt is over.
    fn conn(&mut self) -> Result<&mut Conn> {
        if self.conn.as_ref().is_some_and(|c| c.client.is_closed()) {
            self.lost("the connection closed");
        }
        if self.conn.is_none() {
            let opened = match self.opening.take() {
                Some(opening) => match opening.take() {
                    Some(outcome) => outcome,
                    // Given up: the thread ends when the server answers or
                    // closes, and drops what it got.
                    None if opening.started.elapsed() > OPENING_MAX => {
                        Err(format!("no answer within {OPENING_MAX:?}"))
                    }
                    None => {
                        self.opening = Some(opening);
                        return Err(StoreError::Unavailable);
                    }
                },
                None if self.retry_at.is_some_and(|at| Instant::now() < at) => {
                    return Err(StoreError::Unavailable);
                }
                None if !self.tried => {
                    self.tried = true;
                    open(&self.url).map_err(|e| reason(&e))
                }
                None => {
                    self.opening = Some(Opening::start(&self.url));
                    return Err(StoreError::Unavailable);
                }
            };
            match opened {
                Ok(client) => {
                    if self.down {
                        info!(database = %self.url, "the history database is reachable again");
                    }
                    self.down = false;
                    self.retry_at = None;
                    self.backoff = FIRST_RETRY;
                    self.conn = Some(Conn {
                        client,
                        statements: HashMap::new(),
                    });
                }
                Err(why) => {
                    self.lost(&why);
                    return Err(StoreError::Unavailable);
                }
            }
        }
        self.conn.as_mut().ok_or(StoreError::Unavailable)
    }

    /// Drops the connection and waits before the next try; the first
    /// failure of an outage is logged.
    fn lost(&mut self, why: &str) {
        self.conn = None;
        if !self.down {
            error!(
                database = %self.url,
                error = %why,
                "the history database is unreachable; history, details and badges answer 503 until it is back (the list is unaffected)"
            );
            self.down = true;
        }
        self.retry_at = Some(Instant::now() + self.backoff);
        self.backoff = (self.backoff * 2).min(LAST_RETRY);
    }

    /// `r`, with a lost connection turned into [`StoreError::Unavailable`]
    /// (and the start of an outage).
    fn checked<T>(&mut self, r: Result<T>) -> Result<T> {
        match r {
            Err(StoreError::Postgres(e)) if connection_lost(&e) => {
                self.lost(&e.to_string());
                Err(StoreError::Unavailable)
            }
            Err(StoreError::Postgres(e))
                if self.conn.as_ref().is_some_and(|c| c.client.is_closed()) =>
            {
                self.lost(&e.to_string());
                Err(StoreError::Unavailable)
            }
            r => r,
        }
    }

    /// Runs `sql` (prepared once per connection) with `params`.
    fn query(&mut self, sql: &'static str, params: &Params<'_>) -> Result<Vec<postgres::Row>> {
        let r = self.conn().and_then(|c| {
            let statement = c.statement(sql)?;
            Ok(c.client.query(&statement, params)?)
        });
        self.checked(r)
    }

    /// Runs `sql` with `params`; the rows it changed.
    fn execute(&mut self, sql: &'static str, params: &Params<'_>) -> Result<u64> {
        let r = self.conn().and_then(|c| {
            let statement = c.statement(sql)?;
            Ok(c.client.execute(&statement, params)?)
        });
        self.checked(r)
    }

    /// Every row `sql` gives for `params`, decoded as `T`.
    fn all<T: Decode>(&mut self, sql: &'static str, params: &Params<'_>) -> Result<Vec<T>> {
        self.query(sql, params)?.iter().map(T::decode).collect()
    }

    /// The first row `sql` gives for `params`, if any, decoded as `T`.
    fn first<T: Decode>(&mut self, sql: &'static str, params: &Params<'_>) -> Result<Option<T>> {
        self.query(sql, params)?.first().map(T::decode).transpose()
    }

    /// Runs statements without parameters (transaction control).
    fn batch(&mut self, sql: &str) -> Result<()> {
        let r = self.conn().and_then(|c| Ok(c.client.batch_execute(sql)?));
        self.checked(r)
    }
}

impl Drop for Postgres {
    fn drop(&mut self) {
        if let Some(conn) = self.conn.take() {
            drop_off_runtime(conn);
        }
        if let Some(Some(Ok(client))) = self.opening.take().map(|o| o.take()) {
            drop_off_runtime(client);
        }
    }
}

/// Drops `value` (a client, which blocks to close its connection) on a
/// thread of its own: the last owner of a store may be an async task,
/// where blocking is not allowed.
pub(super) fn drop_off_runtime<T: Send + 'static>(value: T) {
    if tokio::runtime::Handle::try_current().is_err() {
        drop(value);
        return;
    }
    let _ = std::thread::Builder::new()
        .name("database-close".into())
        .spawn(move || drop(value));
}

impl Conn {
    fn statement(&mut self, sql: &'static str) -> Result<Statement> {
        if let Some(s) = self.statements.get(sql) {
            return Ok(s.clone());
        }
        let s = self.client.prepare(&dollars(sql))?;
        self.statements.insert(sql, s.clone());
        Ok(s)
    }
}

/// Whether `e` means the connection is gone (rather than a statement
/// failing): an I/O error, a closed connection, or the server's "connection
/// exception" and "operator intervention" classes (a shutdown).
fn connection_lost(e: &postgres::Error) -> bool {
    if e.is_closed() {
        return true;
    }
    if let Some(db) = e.as_db_error() {
        let code = db.code().code();
        return code.starts_with("08") || code.starts_with("57");
    }
    std::error::Error::source(e).is_some_and(|s| s.is::<std::io::Error>())
}

/// SQL written with SQLite's `?N` parameters in PostgreSQL's `$N`.
fn dollars(sql: &str) -> String {
    let mut out = String::with_capacity(sql.len());
    let mut chars = sql.chars().peekable();
    while let Some(c) = chars.next() {
        if c == '?' && chars.peek().is_some_and(char::is_ascii_digit) {
            out.push('$');
        } else {
            out.push(c);
        }
    }
    out
}

impl Engine for Postgres {
    fn begin(&mut self) -> Result<()> {
        self.batch("BEGIN")
    }

    fn commit(&mut self) -> Result<()> {
        self.batch("COMMIT")
    }

    fn rollback(&mut self) {
        if let Some(c) = self.conn.as_mut() {
            if !c.client.is_closed() {
                let _ = c.client.batch_execute("ROLLBACK");
            }
        }
    }

    fn slot_counts(&mut self, hour: i64) -> Result<Option<HourCounts>> {
        let before = hour - super::HOUR_MS;
        let rows = self.query(
            "SELECT t, n FROM lobby_hourly WHERE t = $1 OR t = $2",
            &[&before, &hour],
        )?;
        let mut counts = HourCounts::default();
        for r in &rows {
            let (t, n): (i64, i64) = (r.col(0)?, r.col(1)?);
            if t == hour {
                counts.this = n;
            } else {
                counts.before = n;
            }
        }
        Ok(Some(counts))
    }

    fn append_samples(
        &mut self,
        hour: i64,
        offset_s: u16,
        spare: usize,
        records: &[Packed],
    ) -> Result<()> {
        let keys: Vec<i64> = records.iter().map(|r| r.at).collect();
        let blobs: Vec<&[u8]> = records.iter().map(|r| r.bytes.as_slice()).collect();
        let spare = EMPTY_SLOT.repeat(spare.min(MAX_SLOTS));
        self.execute(
            APPEND_SAMPLES,
            &[
                &hour,
                &keys,
                &blobs,
                &i32::from(offset_s),
                &spare,
                &&EMPTY_SLOT[..],
            ],
        )?;
        Ok(())
    }

    fn put_servers(&mut self, t: i64, servers: &[&ServerSample]) -> Result<()> {
        let keys: Vec<i64> = servers.iter().map(|s| s.key as i64).collect();
        let names: Vec<&str> = servers.iter().map(|s| s.name.as_str()).collect();
        let addresses: Vec<Option<&str>> = servers.iter().map(|s| s.address.as_deref()).collect();
        let ports: Vec<Option<i32>> = servers.iter().map(|s| s.port.map(i32::from)).collect();
        let players: Vec<i64> = servers.iter().map(|s| i64::from(s.players)).collect();
        let max: Vec<i16> = servers.iter().map(|s| i16::from(s.max)).collect();
        let open: Vec<bool> = servers.iter().map(|s| s.open).collect();
        let mode: Vec<i16> = servers.iter().map(|s| i16::from(s.mode)).collect();
        self.execute(
            "INSERT INTO servers (key, name, address, port, players, max, open, mode, first_seen, last_seen) \
             SELECT k, n, a, p, pl, m, o, md, $1, $1 FROM unnest($2::bigint[], $3::text[], \
             $4::text[], $5::int[], $6::bigint[], $7::smallint[], $8::bool[], $9::smallint[]) \
             AS u(k, n, a, p, pl, m, o, md) \
             ON CONFLICT (key) DO UPDATE SET name = excluded.name, address = excluded.address, \
             port = excluded.port, players = excluded.players, max = excluded.max, \
             open = excluded.open, mode = excluded.mode, last_seen = excluded.last_seen",
            &[&t, &keys, &names, &addresses, &ports, &players, &max, &open, &mode],
        )?;
        Ok(())
    }

    fn day_hours(&mut self, day: i64, keys: &[i64]) -> Result<Vec<Packed>> {
        self.all(
            "SELECT key, substring(hours from 1 for $3) FROM server_days \
             WHERE day = $1 AND key = ANY($2) AND hours IS NOT NULL",
            &[&day, &keys, &MAX_DAY_BYTES],
        )
    }

    fn put_days(&mut self, day: i64, rows: &[DaySums]) -> Result<()> {
        let keys: Vec<i64> = rows.iter().map(|r| r.key).collect();
        let n: Vec<i64> = rows.iter().map(|r| r.n).collect();
        let players: Vec<i64> = rows.iter().map(|r| r.players_sum).collect();
        let max: Vec<i16> = rows
            .iter()
            .map(|r| i16::try_from(r.max).unwrap_or(i16::MAX))
            .collect();
        let open: Vec<i64> = rows.iter().map(|r| r.open_n).collect();
        let hours: Vec<Option<&[u8]>> = rows.iter().map(|r| r.hours.as_deref()).collect();
        let peaks: Vec<Option<i32>> = rows
            .iter()
            .map(|r| r.peak.map(|p| i32::try_from(p).unwrap_or(i32::MAX)))
            .collect();
        self.execute(
            "INSERT INTO server_days (day, key, n, players_sum, max, open_n, hours, peak) \
             SELECT $1, k, n, p, m, o, h, pk FROM unnest($2::bigint[], $3::bigint[], $4::bigint[], \
             $5::smallint[], $6::bigint[], $7::bytea[], $8::int[]) AS u(k, n, p, m, o, h, pk) \
             ON CONFLICT (day, key) DO UPDATE SET n = excluded.n, \
             players_sum = excluded.players_sum, max = excluded.max, \
             open_n = excluded.open_n, hours = excluded.hours, peak = excluded.peak",
            &[&day, &keys, &n, &players, &max, &open, &hours, &peaks],
        )?;
        Ok(())
    }

    fn known(&mut self, keys: &[i64]) -> Result<Vec<i64>> {
        self.all("SELECT key FROM servers WHERE key = ANY($1)", &[&keys])
    }

    fn forget(&mut self, rows: &Forgotten) -> Result<usize> {
        let (hours, hour_keys): (Vec<i64>, Vec<i64>) = rows.hours.iter().copied().unzip();
        let (days, day_keys): (Vec<i64>, Vec<i64>) = rows.days.iter().copied().unzip();
        let mut n = self.execute(
            "DELETE FROM server_hours WHERE (hour, key) IN \
             (SELECT * FROM unnest($1::bigint[], $2::bigint[]))",
            &[&hours, &hour_keys],
        )?;
        n += self.execute(
            "DELETE FROM server_days WHERE (day, key) IN \
             (SELECT * FROM unnest($1::bigint[], $2::bigint[]))",
            &[&days, &day_keys],
        )?;
        n += self.execute("DELETE FROM servers WHERE key = ANY($1)", &[&rows.keys])?;
        Ok(usize::try_from(n).unwrap_or(usize::MAX))
    }

    fn hours_of(&mut self, key: i64, hours: &[i64]) -> Result<Vec<Packed>> {
        self.all(
            "SELECT hour, substring(samples from 1 for $3) FROM server_hours \
             WHERE key = $1 AND hour = ANY($2)",
            &[&key, &hours, &MAX_HOUR_BYTES],
        )
    }

    fn days_of(&mut self, key: i64, first: i64, last: i64) -> Result<Vec<DayRow>> {
        // One range of the index by key (migration 10), not a probe of the
        // primary key per day.
        let rows = self.query(
            "SELECT day, n, players_sum, max::bigint, open_n, substring(hours from 1 for $4), \
             peak::bigint \
             FROM server_days WHERE key = $1 AND day >= $2 AND day <= $3",
            &[&key, &first, &last, &MAX_DAY_BYTES],
        )?;
        rows.iter()
            .map(|r| {
                Ok(DayRow {
                    day: r.col(0)?,
                    sums: day_sums(r, key, 1)?,
                })
            })
            .collect()
    }

    fn size_bytes(&mut self) -> Result<u64> {
        let bytes: i64 = self
            .first("SELECT pg_database_size(current_database())", &[])?
            .unwrap_or(0);
        Ok(u64::try_from(bytes).unwrap_or(0))
    }

    fn seen_since(&mut self, keys: &[i64], since: i64) -> Result<Vec<i64>> {
        self.all(
            "SELECT key FROM servers WHERE key = ANY($1) AND last_seen >= $2",
            &[&keys, &since],
        )
    }
}

/// `params` as the PostgreSQL client binds them.
fn bound<'a>(params: &[&'a dyn Param]) -> Vec<&'a (dyn postgres::types::ToSql + Sync)> {
    params
        .iter()
        .map(|p| *p as &(dyn postgres::types::ToSql + Sync))
        .collect()
}

impl Sql for Postgres {
    const DIALECT: Dialect = Dialect::Postgres;

    fn run(&mut self, sql: &'static str, params: &[&dyn Param]) -> Result<u64> {
        self.execute(sql, &bound(params))
    }

    fn rows<T: Decode>(&mut self, sql: &'static str, params: &[&dyn Param]) -> Result<Vec<T>> {
        self.all(sql, &bound(params))
    }

    fn row<T: Decode>(&mut self, sql: &'static str, params: &[&dyn Param]) -> Result<Option<T>> {
        self.first(sql, &bound(params))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_shown_url_keeps_the_port_and_never_the_password() {
        for (given, shown) in [
            (
                "postgres://lobby:s3cret@db.example:6543/history",
                "postgresql://lobby@db.example:6543/history",
            ),
            (
                "postgresql://lobby:s3cret@db.example/history",
                "postgresql://lobby@db.example:5432/history",
            ),
            (
                "postgres://lobby:s3cret@[::1]:5433/history",
                "postgresql://lobby@[::1]:5433/history",
            ),
        ] {
            let url: DatabaseUrl = given.parse().unwrap();
            assert_eq!(url.to_string(), shown);
            assert_eq!(format!("{url:?}"), shown);
        }
    }
}
