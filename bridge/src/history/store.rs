//! The history's SQLite file: schema migrations, writing one sample (with
//! its hourly and daily sums), retention in bounded batches, and the
//! queries behind `/api/servers/{key}` and the history answers.

use std::path::{Path, PathBuf};

use std::collections::HashSet;

use rusqlite::{params, Connection, OpenFlags, OptionalExtension};

use super::packed::{HourSums, Sample};
use super::range::{Range, Tier};
use crate::error::Error;

/// What brings the schema from one version to the next: its SQL file, then
/// the rows it converts (in the same transaction).
type Migration = (&'static str, fn(&Connection) -> rusqlite::Result<()>);

/// The schema, one step per version, applied in order; the database's
/// `user_version` counts those applied.
const MIGRATIONS: &[Migration] = &[
    (include_str!("../../migrations/001_history.sql"), |_| Ok(())),
    (
        include_str!("../../migrations/002_packed_history.sql"),
        convert_v1,
    ),
];

/// The database's file in the data directory.
pub const DB_FILE: &str = "history.sqlite3";

const HOUR_MS: i64 = 3_600_000;
const DAY_MS: i64 = 86_400_000;
/// How long each tier is kept (`docs/protocol.md` §2.2).
const KEEP_SAMPLES_MS: i64 = 48 * HOUR_MS;
const KEEP_HOURLY_MS: i64 = 90 * DAY_MS;
const KEEP_DAILY_MS: i64 = 2 * 365 * DAY_MS;

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

/// One point of a server's history: `[t, players, max, online, open]`.
#[derive(Debug, Clone, PartialEq)]
pub struct ServerPoint {
    pub t: i64,
    pub players: Option<f64>,
    pub max: Option<u32>,
    pub online: f64,
    pub open: f64,
}

/// One point of the lobby's history: `[t, servers, players]`.
#[derive(Debug, Clone, PartialEq)]
pub struct LobbyPoint {
    pub t: i64,
    pub servers: f64,
    pub players: f64,
}

/// The open database.
#[derive(Debug)]
pub struct Store {
    conn: Connection,
    /// The database's file (`None` in memory), whose `-wal` file counts
    /// towards [`Store::size_bytes`].
    file: Option<PathBuf>,
    /// Days before this have had their hourly sums dropped already, so
    /// pruning does not scan them again.
    hours_dropped_before: i64,
    /// Hours before this have been folded into `server_days`; `None` until
    /// the first write looks it up (the newest hour recorded: each write
    /// folds every hour before its own).
    folded_before: Option<i64>,
}

fn db_error(path: &Path, e: impl std::fmt::Display) -> Error {
    Error::Database {
        path: path.to_owned(),
        reason: e.to_string(),
    }
}

impl Store {
    /// Opens (or creates) the database in `dir`, in memory when `None`,
    /// and brings its schema up to date. A file that is not a database,
    /// is read-only, or comes from a newer bridge is an error here, at
    /// start, not at the first sample.
    pub fn open(dir: Option<&Path>) -> Result<Self, Error> {
        let (conn, path, file) = match dir {
            Some(dir) => {
                let path = dir.join(DB_FILE);
                let flags = OpenFlags::SQLITE_OPEN_READ_WRITE
                    | OpenFlags::SQLITE_OPEN_CREATE
                    | OpenFlags::SQLITE_OPEN_NO_MUTEX;
                let conn =
                    Connection::open_with_flags(&path, flags).map_err(|e| db_error(&path, e))?;
                (conn, path.clone(), Some(path))
            }
            None => {
                let path = PathBuf::from(":memory:");
                let conn = Connection::open_in_memory().map_err(|e| db_error(&path, e))?;
                (conn, path, None)
            }
        };
        if conn.is_readonly(rusqlite::MAIN_DB).unwrap_or(true) {
            return Err(db_error(
                &path,
                "opened read-only; the bridge must be able to write it",
            ));
        }
        let mut store = Self {
            conn,
            file,
            hours_dropped_before: i64::MIN,
            folded_before: None,
        };
        store.prepare().map_err(|e| db_error(&path, e))?;
        Ok(store)
    }

    fn prepare(&mut self) -> Result<(), String> {
        let conn = &mut self.conn;
        conn.busy_timeout(std::time::Duration::from_secs(5))
            .map_err(|e| e.to_string())?;
        // Reading the header: a file that is not a database fails here.
        let _: String = conn
            .query_row("PRAGMA journal_mode = WAL", [], |r| r.get(0))
            .map_err(|e| e.to_string())?;
        conn.execute_batch("PRAGMA synchronous = NORMAL; PRAGMA foreign_keys = ON;")
            .map_err(|e| e.to_string())?;
        // Under an immediate transaction: two bridges starting on one file
        // migrate it once.
        let tx = conn
            .transaction_with_behavior(rusqlite::TransactionBehavior::Immediate)
            .map_err(|e| e.to_string())?;
        let version: i64 = tx
            .query_row("PRAGMA user_version", [], |r| r.get(0))
            .map_err(|e| e.to_string())?;
        let known = MIGRATIONS.len() as i64;
        if version > known {
            return Err(format!(
                "its schema version {version} is newer than this bridge's ({known})"
            ));
        }
        for (i, (sql, convert)) in MIGRATIONS.iter().enumerate().skip(version as usize) {
            tx.execute_batch(sql)
                .and_then(|()| convert(&tx))
                .and_then(|()| tx.pragma_update(None, "user_version", (i + 1) as i64))
                .map_err(|e| format!("migration {} failed: {e}", i + 1))?;
        }
        tx.commit().map_err(|e| e.to_string())?;
        // A migration that dropped tables leaves their pages free: give
        // them back, so the file is as small as its rows (and a cap taken
        // from its size holds).
        let free: i64 = conn
            .query_row("PRAGMA freelist_count", [], |r| r.get(0))
            .map_err(|e| e.to_string())?;
        if version < known && free > 0 {
            conn.execute_batch("VACUUM").map_err(|e| e.to_string())?;
        }
        // A damaged file may open and still fail on its first page read.
        let check: String = conn
            .query_row("PRAGMA quick_check(1)", [], |r| r.get(0))
            .map_err(|e| e.to_string())?;
        if check != "ok" {
            return Err(format!("integrity check failed: {check}"));
        }
        Ok(())
    }

    /// Caps the database at about `max_bytes` (SQLite's `max_page_count`,
    /// never below what the file holds already): past it, writes fail with
    /// `SQLITE_FULL` exactly as on a full disk, while pruning still frees
    /// pages for later samples. Returns the cap in bytes as applied.
    pub fn cap(&mut self, max_bytes: u64) -> rusqlite::Result<u64> {
        let page = self.pragma("page_size")?.max(1);
        let pages = (max_bytes / page).clamp(1, i64::MAX as u64);
        let applied: i64 =
            self.conn
                .query_row(&format!("PRAGMA max_page_count = {pages}"), [], |r| {
                    r.get(0)
                })?;
        Ok(applied.max(0) as u64 * page)
    }

    /// An integer pragma's value (none is negative).
    fn pragma(&self, name: &str) -> rusqlite::Result<u64> {
        let v: i64 = self
            .conn
            .query_row(&format!("PRAGMA {name}"), [], |r| r.get(0))?;
        Ok(v.max(0) as u64)
    }

    /// What the history takes on disk now: the database file (its pages,
    /// free ones included) plus its write-ahead log.
    pub fn size_bytes(&self) -> rusqlite::Result<u64> {
        let pages = self.pragma("page_count")?;
        let page = self.pragma("page_size")?;
        let wal = self.file.as_ref().map_or(0, |f| {
            let mut wal = f.clone().into_os_string();
            wal.push("-wal");
            std::fs::metadata(wal).map_or(0, |m| m.len())
        });
        Ok(pages * page + wal)
    }

    /// Copies the write-ahead log into the database file and truncates the
    /// log, so the file alone holds the history (SQLite's automatic
    /// checkpoints do this in passing; a measurement or a backup wants it
    /// done now).
    pub fn checkpoint(&self) -> rusqlite::Result<()> {
        self.conn
            .query_row("PRAGMA wal_checkpoint(TRUNCATE)", [], |_| Ok(()))
    }

    /// Records one sample taken at `t` (Unix ms): each listed server (one
    /// record per key: the first of twins counts) appended to its hour's
    /// row and added to its day's sums, the lobby's totals, in one
    /// transaction. A server already recorded at `t` is not counted again.
    pub fn record(&mut self, t: i64, servers: &[ServerSample]) -> rusqlite::Result<()> {
        let hour = floor(t, HOUR_MS);
        let day = floor(t, DAY_MS);
        let folded = self.folded_before(hour)?;
        let tx = self.conn.transaction()?;
        if folded < hour {
            fold(&tx, folded, hour)?;
        }
        let offset_s = u16::try_from((t - hour) / 1000).unwrap_or(u16::MAX);
        let (mut count, mut players) = (0i64, 0i64);
        {
            let mut get_hour =
                tx.prepare_cached("SELECT samples FROM server_hours WHERE hour = ?1 AND key = ?2")?;
            let mut put_hour = tx.prepare_cached(
                "INSERT INTO server_hours (hour, key, samples) VALUES (?1, ?2, ?3) \
                 ON CONFLICT (hour, key) DO UPDATE SET samples = excluded.samples",
            )?;
            let mut state = tx.prepare_cached(
                "INSERT INTO servers (key, name, address, port, players, max, open, mode, first_seen, last_seen) \
                 VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?9) \
                 ON CONFLICT (key) DO UPDATE SET name = ?2, address = ?3, port = ?4, players = ?5, \
                 max = ?6, open = ?7, mode = ?8, last_seen = ?9",
            )?;
            let mut seen = HashSet::with_capacity(servers.len());
            for s in servers {
                if !seen.insert(s.key) {
                    continue; // a twin of a server already in this sample
                }
                let key = s.key as i64;
                let mut samples: Vec<u8> = get_hour
                    .query_row(params![hour, key], |r| r.get(0))
                    .optional()?
                    .unwrap_or_default();
                if Sample::taken_at(&samples, offset_s) {
                    continue; // this sample was recorded already
                }
                Sample {
                    offset_s,
                    players: u16::try_from(s.players).unwrap_or(u16::MAX),
                    max: s.max,
                    open: s.open,
                    mode: s.mode,
                }
                .encode(&mut samples);
                put_hour.execute(params![hour, key, samples])?;
                count += 1;
                players += i64::from(s.players);
                state.execute(params![
                    key, s.name, s.address, s.port, s.players, s.max, s.open, s.mode, t
                ])?;
            }
        }
        tx.execute(
            "INSERT OR REPLACE INTO lobby_samples (t, servers, players) VALUES (?1, ?2, ?3)",
            params![t, count, players],
        )?;
        for (table, at) in [("lobby_hourly", hour), ("lobby_daily", day)] {
            tx.execute(
                &format!(
                    "INSERT INTO {table} (t, n, servers_sum, players_sum) VALUES (?1, 1, ?2, ?3) \
                     ON CONFLICT (t) DO UPDATE SET n = n + 1, servers_sum = servers_sum + ?2, \
                     players_sum = players_sum + ?3"
                ),
                params![at, count, players],
            )?;
        }
        if hour < folded {
            fold(&tx, hour, hour + HOUR_MS)?; // a clock set back: fold again
        }
        tx.commit()?;
        self.folded_before = Some(folded.max(hour));
        Ok(())
    }

    /// Before which hour everything is folded into `server_days` (looked up
    /// once: the newest hour recorded, `hour` in an empty table).
    fn folded_before(&mut self, hour: i64) -> rusqlite::Result<i64> {
        if let Some(folded) = self.folded_before {
            return Ok(folded);
        }
        let newest: Option<i64> =
            self.conn
                .query_row("SELECT MAX(hour) FROM server_hours", [], |r| r.get(0))?;
        let folded = newest.unwrap_or(hour);
        self.folded_before = Some(folded);
        Ok(folded)
    }

    /// Deletes at most `batch` rows of each table that are older than its
    /// tier keeps them (an hour's samples once the whole hour is past 48
    /// hours; servers unseen for the daily tier's time too), and drops the
    /// hourly sums of at most `batch` days past 90 days; returns how many
    /// rows went or lost their hours, so a caller can come back for more.
    /// Every table is ordered by time, so each delete is a range at its
    /// front.
    pub fn prune(&mut self, now: i64, batch: usize) -> rusqlite::Result<usize> {
        // Hours are deleted only once folded into their day.
        let hour = floor(now, HOUR_MS);
        let folded = self.folded_before(hour)?;
        if folded < hour {
            let tx = self.conn.transaction()?;
            fold(&tx, folded, hour)?;
            tx.commit()?;
            self.folded_before = Some(hour);
        }
        let batch = batch as i64;
        let mut deleted = self.conn.execute(
            "DELETE FROM server_hours WHERE (hour, key) IN \
             (SELECT hour, key FROM server_hours WHERE hour <= ?1 ORDER BY hour, key LIMIT ?2)",
            params![now - KEEP_SAMPLES_MS - HOUR_MS, batch],
        )?;
        deleted += self.conn.execute(
            "DELETE FROM server_days WHERE (day, key) IN \
             (SELECT day, key FROM server_days WHERE day < ?1 ORDER BY day, key LIMIT ?2)",
            params![now - KEEP_DAILY_MS, batch],
        )?;
        // A day's hourly sums go when its last hour is past 90 days.
        let hours_before = now - KEEP_HOURLY_MS - DAY_MS + HOUR_MS;
        let nulled = self.conn.execute(
            "UPDATE server_days SET hours = NULL WHERE (day, key) IN \
             (SELECT day, key FROM server_days WHERE day >= ?1 AND day < ?2 \
              AND hours IS NOT NULL ORDER BY day, key LIMIT ?3)",
            params![self.hours_dropped_before, hours_before, batch],
        )?;
        if (nulled as i64) < batch {
            self.hours_dropped_before = self.hours_dropped_before.max(hours_before);
        }
        deleted += nulled;
        let limits = [
            ("lobby_samples", "t", now - KEEP_SAMPLES_MS, "t"),
            ("lobby_hourly", "t", now - KEEP_HOURLY_MS, "t"),
            ("lobby_daily", "t", now - KEEP_DAILY_MS, "t"),
            ("servers", "key", now - KEEP_DAILY_MS, "last_seen"),
        ];
        for (table, id, before, column) in limits {
            deleted += self.conn.execute(
                &format!(
                    "DELETE FROM {table} WHERE {id} IN \
                     (SELECT {id} FROM {table} WHERE {column} < ?1 LIMIT ?2)"
                ),
                params![before, batch],
            )?;
        }
        Ok(deleted)
    }

    /// The last known state of `key`; `None` if it was never recorded.
    pub fn server(&self, key: u64) -> rusqlite::Result<Option<ServerRow>> {
        self.conn
            .query_row(
                "SELECT name, address, port, players, max, open, mode, first_seen, last_seen \
                 FROM servers WHERE key = ?1",
                [key as i64],
                |r| {
                    Ok(ServerRow {
                        sample: ServerSample {
                            key,
                            name: r.get(0)?,
                            address: r.get(1)?,
                            port: r.get(2)?,
                            players: r.get(3)?,
                            max: r.get(4)?,
                            open: r.get(5)?,
                            mode: r.get(6)?,
                        },
                        first_seen: r.get(7)?,
                        last_seen: r.get(8)?,
                    })
                },
            )
            .optional()
    }

    /// The lobby's intervals of `step_ms` from `from` on: `(t, samples,
    /// servers summed, players summed)`, oldest first.
    fn lobby_buckets(
        &self,
        tier: Tier,
        step_ms: i64,
        from: i64,
    ) -> rusqlite::Result<Vec<(i64, i64, i64, i64)>> {
        let sql = match tier {
            Tier::Samples => {
                "SELECT (t / ?1) * ?1 AS b, COUNT(*), SUM(servers), SUM(players) \
                              FROM lobby_samples WHERE t >= ?2 GROUP BY b ORDER BY b"
            }
            Tier::Hourly => {
                "SELECT (t / ?1) * ?1 AS b, SUM(n), SUM(servers_sum), SUM(players_sum) \
                             FROM lobby_hourly WHERE t >= ?2 GROUP BY b ORDER BY b"
            }
            Tier::Daily => {
                "SELECT (t / ?1) * ?1 AS b, SUM(n), SUM(servers_sum), SUM(players_sum) \
                            FROM lobby_daily WHERE t >= ?2 GROUP BY b ORDER BY b"
            }
        };
        let mut stmt = self.conn.prepare_cached(sql)?;
        let rows = stmt.query_map(params![step_ms, from], |r| {
            Ok((r.get(0)?, r.get(1)?, r.get(2)?, r.get(3)?))
        })?;
        rows.collect()
    }

    /// The lobby's points over `range` up to `now`.
    pub fn lobby_history(
        &self,
        range: Range,
        sample_ms: i64,
        now: i64,
    ) -> rusqlite::Result<(i64, Vec<LobbyPoint>)> {
        let (tier, step, from) = range.window(sample_ms, now);
        let points = self
            .lobby_buckets(tier, step, from)?
            .into_iter()
            .filter(|&(_, n, _, _)| n > 0)
            .map(|(t, n, servers, players)| LobbyPoint {
                t,
                servers: round(servers as f64 / n as f64),
                players: round(players as f64 / n as f64),
            })
            .collect();
        Ok((step, points))
    }

    /// `key`'s points over `range` up to `now`: one for each interval the
    /// bridge sampled since the key was first seen.
    pub fn server_history(
        &self,
        key: u64,
        first_seen: i64,
        range: Range,
        sample_ms: i64,
        now: i64,
    ) -> rusqlite::Result<(i64, Vec<ServerPoint>)> {
        let (tier, step, from) = range.window(sample_ms, now);
        let lobby = self.lobby_buckets(tier, step, from)?;
        let mut own = self
            .server_buckets(key, tier, step, from, now)?
            .into_iter()
            .peekable();
        let first_bucket = first_seen - first_seen.rem_euclid(step);
        let mut points = Vec::with_capacity(lobby.len());
        for (t, n, _, _) in lobby {
            while own.next_if(|o| o.0 < t).is_some() {}
            if t < first_bucket || n <= 0 {
                continue;
            }
            let point = match own.next_if(|o| o.0 == t) {
                Some((_, online_n, players_sum, max, open_n)) if online_n > 0 => ServerPoint {
                    t,
                    players: Some(round(players_sum as f64 / online_n as f64)),
                    max: Some(max),
                    online: round((online_n as f64 / n as f64).min(1.0)),
                    open: round((open_n as f64 / n as f64).min(1.0)),
                },
                _ => ServerPoint {
                    t,
                    players: None,
                    max: None,
                    online: 0.0,
                    open: 0.0,
                },
            };
            points.push(point);
        }
        Ok((step, points))
    }
}

/// One interval of a server's history: `(t, samples listed, players
/// summed, max, samples open)`.
type Bucket = (i64, i64, i64, u32, i64);

impl Store {
    /// `key`'s intervals of `step_ms` from `from` up to `now`: `(t, samples
    /// listed, players summed, max, samples open)`, oldest first, read
    /// from its rows of each hour (samples) or day (sums) in the window:
    /// point lookups, never a scan over other servers' rows.
    fn server_buckets(
        &self,
        key: u64,
        tier: Tier,
        step_ms: i64,
        from: i64,
        now: i64,
    ) -> rusqlite::Result<Vec<Bucket>> {
        let key = key as i64;
        let mut buckets: Vec<Bucket> = Vec::new();
        let mut add = |t: i64, sums: HourSums| {
            if t < from || sums.n == 0 {
                return;
            }
            let b = floor(t, step_ms);
            let (n, players, max, open) = (
                i64::from(sums.n),
                i64::from(sums.players),
                u32::from(sums.max),
                i64::from(sums.open_n),
            );
            match buckets.last_mut() {
                Some(last) if last.0 == b => {
                    last.1 += n;
                    last.2 += players;
                    last.3 = last.3.max(max);
                    last.4 += open;
                }
                _ => buckets.push((b, n, players, max, open)),
            }
        };
        match tier {
            Tier::Samples => {
                let mut stmt = self.conn.prepare_cached(
                    "SELECT samples FROM server_hours WHERE hour = ?1 AND key = ?2",
                )?;
                let mut hour = floor(from, HOUR_MS);
                while hour <= now {
                    let blob: Option<Vec<u8>> = stmt
                        .query_row(params![hour, key], |r| r.get(0))
                        .optional()?;
                    let mut samples: Vec<Sample> =
                        Sample::decode_all(blob.as_deref().unwrap_or_default()).collect();
                    samples.sort_by_key(|s| s.offset_s);
                    for s in samples {
                        let mut one = HourSums::default();
                        one.add(u32::from(s.players), s.max, s.open);
                        add(hour + i64::from(s.offset_s) * 1000, one);
                    }
                    hour += HOUR_MS;
                }
            }
            Tier::Hourly => {
                let live = self.live_hour(key)?;
                let mut stmt = self
                    .conn
                    .prepare_cached("SELECT hours FROM server_days WHERE day = ?1 AND key = ?2")?;
                let mut day = floor(from, DAY_MS);
                while day <= now {
                    let blob: Option<Option<Vec<u8>>> =
                        stmt.query_row(params![day, key], |r| r.get(0)).optional()?;
                    for (t, sums) in day_hours(day, blob.flatten().as_deref(), live) {
                        add(t, sums);
                    }
                    day += DAY_MS;
                }
            }
            Tier::Daily => {
                let live = self.live_hour(key)?;
                let mut stmt = self.conn.prepare_cached(
                    "SELECT n, players_sum, max, open_n, hours FROM server_days \
                     WHERE day = ?1 AND key = ?2",
                )?;
                let mut day = floor(from, DAY_MS);
                while day <= now {
                    type DayRow = (i64, i64, u32, i64, Option<Vec<u8>>);
                    let row: Option<DayRow> = stmt
                        .query_row(params![day, key], |r| {
                            Ok((r.get(0)?, r.get(1)?, r.get(2)?, r.get(3)?, r.get(4)?))
                        })
                        .optional()?;
                    let sums = match (row, live) {
                        // The day of the hour not folded yet: its hours'.
                        (row, Some((hour, _))) if floor(hour, DAY_MS) == day => {
                            let hours = row.and_then(|r| r.4);
                            Some(day_hours(day, hours.as_deref(), live).into_iter().fold(
                                (0, 0, 0, 0),
                                |(n, p, m, o), (_, s)| {
                                    (
                                        n + i64::from(s.n),
                                        p + i64::from(s.players),
                                        m.max(u32::from(s.max)),
                                        o + i64::from(s.open_n),
                                    )
                                },
                            ))
                        }
                        (row, _) => row.map(|(n, p, m, o, _)| (n, p, m, o)),
                    };
                    if let Some((n, players, max, open)) = sums.filter(|r| r.0 > 0 && day >= from) {
                        let b = floor(day, step_ms);
                        match buckets.last_mut() {
                            Some(last) if last.0 == b => {
                                last.1 += n;
                                last.2 += players;
                                last.3 = last.3.max(max);
                                last.4 += open;
                            }
                            _ => buckets.push((b, n, players, max, open)),
                        }
                    }
                    day += DAY_MS;
                }
            }
        }
        Ok(buckets)
    }
}

impl Store {
    /// The newest hour recorded and `key`'s sums over it, which may not be
    /// folded into its day yet (`None` in an empty table).
    fn live_hour(&self, key: i64) -> rusqlite::Result<Option<(i64, HourSums)>> {
        let newest: Option<i64> =
            self.conn
                .query_row("SELECT MAX(hour) FROM server_hours", [], |r| r.get(0))?;
        let Some(hour) = newest else {
            return Ok(None);
        };
        let mut stmt = self
            .conn
            .prepare_cached("SELECT samples FROM server_hours WHERE hour = ?1 AND key = ?2")?;
        let blob: Option<Vec<u8>> = stmt
            .query_row(params![hour, key], |r| r.get(0))
            .optional()?;
        Ok(Some((hour, hour_sums(blob.as_deref().unwrap_or_default()))))
    }
}

/// The hours of `day` with sums, oldest first, as `(t, sums)`: its row's
/// (`hours`), the `live` hour's in place of the row's for that hour.
fn day_hours(
    day: i64,
    hours: Option<&[u8]>,
    live: Option<(i64, HourSums)>,
) -> Vec<(i64, HourSums)> {
    let live = live.filter(|&(hour, _)| floor(hour, DAY_MS) == day);
    let mut out: Vec<(i64, HourSums)> = HourSums::decode_all(hours.unwrap_or_default())
        .map(|(h, sums)| (day + i64::from(h) * HOUR_MS, sums))
        .filter(|&(t, _)| live.is_none_or(|(hour, _)| hour != t))
        .collect();
    out.extend(live);
    out.sort_by_key(|&(t, _)| t);
    out
}

/// A server's sums over the samples of one hour's blob.
fn hour_sums(samples: &[u8]) -> HourSums {
    let mut sums = HourSums::default();
    for s in Sample::decode_all(samples) {
        sums.add(u32::from(s.players), s.max, s.open);
    }
    sums
}

/// Folds the hours from `from` to before `to` of `server_hours` into
/// `server_days`: each hour's sums replace that hour's record, and the
/// day's sums are those of its hours, so folding an hour again changes
/// nothing.
fn fold(conn: &Connection, from: i64, to: i64) -> rusqlite::Result<()> {
    let mut read = conn.prepare_cached(
        "SELECT hour, key, samples FROM server_hours WHERE hour >= ?1 AND hour < ?2",
    )?;
    let mut get_day =
        conn.prepare_cached("SELECT hours FROM server_days WHERE day = ?1 AND key = ?2")?;
    let mut put_day = conn.prepare_cached(
        "INSERT INTO server_days (day, key, n, players_sum, max, open_n, hours) \
         VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7) ON CONFLICT (day, key) DO UPDATE SET \
         n = excluded.n, players_sum = excluded.players_sum, max = excluded.max, \
         open_n = excluded.open_n, hours = excluded.hours",
    )?;
    let mut rows = read.query(params![from, to])?;
    while let Some(r) = rows.next()? {
        let (hour, key): (i64, i64) = (r.get(0)?, r.get(1)?);
        let sums = hour_sums(r.get_ref(2)?.as_blob().unwrap_or_default());
        let day = floor(hour, DAY_MS);
        let mut hours: Vec<u8> = get_day
            .query_row(params![day, key], |r| r.get::<_, Option<Vec<u8>>>(0))
            .optional()?
            .flatten()
            .unwrap_or_default();
        sums.write(&mut hours, ((hour - day) / HOUR_MS) as u8);
        let (mut n, mut players, mut max, mut open) = (0i64, 0i64, 0u8, 0i64);
        for (_, s) in HourSums::decode_all(&hours) {
            n += i64::from(s.n);
            players += i64::from(s.players);
            max = max.max(s.max);
            open += i64::from(s.open_n);
        }
        put_day.execute(params![day, key, n, players, max, open, hours])?;
    }
    Ok(())
}

/// The start of the interval of `every` ms holding `t`.
fn floor(t: i64, every: i64) -> i64 {
    t - t.rem_euclid(every.max(1))
}

/// Packs version-1 rows, read in `(key, t)` order with the key and time
/// first, into one blob per key and interval of `every` ms: `encode`
/// appends a row's record given how far into its interval it was taken,
/// and `put` stores each finished blob as `(interval start, key, blob)`.
fn pack_by(
    rows: &mut rusqlite::Rows<'_>,
    every: i64,
    put: &mut rusqlite::Statement<'_>,
    mut encode: impl FnMut(&rusqlite::Row<'_>, i64, &mut Vec<u8>) -> rusqlite::Result<()>,
) -> rusqlite::Result<()> {
    let mut current: Option<(i64, i64)> = None;
    let mut blob = Vec::new();
    while let Some(r) = rows.next()? {
        let (key, t): (i64, i64) = (r.get(0)?, r.get(1)?);
        let start = floor(t, every);
        if current != Some((start, key)) {
            if let Some((s, k)) = current {
                put.execute(params![s, k, blob])?;
            }
            blob.clear();
            current = Some((start, key));
        }
        encode(r, t - start, &mut blob)?;
    }
    if let Some((s, k)) = current {
        put.execute(params![s, k, blob])?;
    }
    Ok(())
}

/// Converts the server rows of schema version 1 (one row per server per
/// sample, hour and day) into the packed rows of version 2, then drops the
/// old tables: part of migration 2, in its transaction.
fn convert_v1(conn: &Connection) -> rusqlite::Result<()> {
    {
        let mut read = conn.prepare(
            "SELECT key, t, players, max, open, mode FROM server_samples ORDER BY key, t",
        )?;
        let mut put =
            conn.prepare("INSERT INTO server_hours (hour, key, samples) VALUES (?1, ?2, ?3)")?;
        pack_by(&mut read.query([])?, HOUR_MS, &mut put, |r, since, blob| {
            let offset_s = u16::try_from(since / 1000).unwrap_or(u16::MAX);
            if !Sample::taken_at(blob, offset_s) {
                Sample {
                    offset_s,
                    players: u16::try_from(r.get::<_, i64>(2)?).unwrap_or(u16::MAX),
                    max: r.get::<_, i64>(3)?.clamp(0, 255) as u8,
                    open: r.get::<_, i64>(4)? != 0,
                    mode: r.get::<_, i64>(5)?.clamp(0, 127) as u8,
                }
                .encode(blob);
            }
            Ok(())
        })?;
    }
    conn.execute(
        "INSERT INTO server_days (day, key, n, players_sum, max, open_n, hours) \
         SELECT t, key, online_n, players_sum, max, open_n, NULL FROM server_daily",
        [],
    )?;
    {
        let mut read = conn.prepare(
            "SELECT key, t, online_n, players_sum, max, open_n FROM server_hourly ORDER BY key, t",
        )?;
        let mut put = conn.prepare(
            "INSERT INTO server_days (day, key, n, players_sum, max, open_n, hours) \
             VALUES (?1, ?2, 0, 0, 0, 0, ?3) ON CONFLICT (day, key) DO UPDATE SET hours = excluded.hours",
        )?;
        pack_by(&mut read.query([])?, DAY_MS, &mut put, |r, since, blob| {
            let sums = HourSums {
                n: u16::try_from(r.get::<_, i64>(2)?).unwrap_or(u16::MAX),
                players: u32::try_from(r.get::<_, i64>(3)?).unwrap_or(u32::MAX),
                max: r.get::<_, i64>(4)?.clamp(0, 255) as u8,
                open_n: u16::try_from(r.get::<_, i64>(5)?).unwrap_or(u16::MAX),
            };
            sums.write(blob, (since / HOUR_MS) as u8);
            Ok(())
        })?;
    }
    conn.execute_batch(
        "DROP TABLE server_samples; DROP TABLE server_hourly; DROP TABLE server_daily;",
    )
}

/// Three decimals: enough for a graph, short on the wire.
fn round(x: f64) -> f64 {
    (x * 1000.0).round() / 1000.0
}
