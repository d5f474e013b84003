//! The embedded engine: the history in one SQLite file in the data
//! directory (or in memory), the default, which needs no database server.
//! In process, a lookup costs microseconds, so batches are loops of
//! cached point lookups.

mod schema;

use std::path::PathBuf;

use rusqlite::{params, params_from_iter, Connection, OptionalExtension, Params};

pub use schema::DB_FILE;

use super::decode::{day_sums, Decode};
use super::engine::{
    by_at, DayRow, DaySums, Engine, Forgotten, Packed, Result, MAX_DAY_BYTES, MAX_HOUR_BYTES,
};
use super::packed::Sample;
use super::sql::{Dialect, Param, Sql};
use super::{ServerSample, DAY_MS};

/// The open SQLite database.
#[derive(Debug)]
pub struct Sqlite {
    pub(super) conn: Connection,
    /// The database's file (`None` in memory), whose `-wal` file counts
    /// towards its size.
    file: Option<PathBuf>,
}

impl Sqlite {
    /// One point lookup of `sql` (`?1`, `?2` a row's key, `?3` the most
    /// bytes read) per `(first, second, at)`: the rows found (not NULL),
    /// each named by its `at`.
    fn lookups(
        &self,
        sql: &str,
        rows: impl Iterator<Item = (i64, i64, i64)>,
        max_bytes: i32,
    ) -> Result<Vec<Packed>> {
        let mut get = self.conn.prepare_cached(sql)?;
        let mut out = Vec::new();
        for (first, second, at) in rows {
            let bytes: Option<Option<Vec<u8>>> = get
                .query_row(params![first, second, max_bytes], |r| r.get(0))
                .optional()?;
            out.extend(bytes.flatten().map(|bytes| Packed { at, bytes }));
        }
        Ok(out)
    }

    /// Every row `sql` gives for `params`, decoded as `T`.
    fn all<T: Decode>(&self, sql: &str, params: impl Params) -> Result<Vec<T>> {
        let mut stmt = self.conn.prepare_cached(sql)?;
        let rows = stmt.query_map(params, |r| T::decode(r))?;
        Ok(rows.collect::<rusqlite::Result<_>>()?)
    }

    /// The first row `sql` gives for `params`, if any, decoded as `T`.
    fn first<T: Decode>(&self, sql: &str, params: impl Params) -> Result<Option<T>> {
        Ok(self
            .conn
            .prepare_cached(sql)?
            .query_row(params, |r| T::decode(r))
            .optional()?)
    }

    /// Of `keys`, those `sql` finds a row for, one cached point lookup
    /// each (`args` gives a key's parameters), in process as cheap as one
    /// statement over them all.
    fn found_keys<P: Params>(
        &self,
        sql: &str,
        keys: &[i64],
        args: impl Fn(i64) -> P,
    ) -> Result<Vec<i64>> {
        let mut get = self.conn.prepare_cached(sql)?;
        let mut out = Vec::new();
        for &key in keys {
            out.extend(
                get.query_row(args(key), |r| r.get::<_, i64>(0))
                    .optional()?,
            );
        }
        Ok(out)
    }

    /// Runs raw SQL (tests).
    #[cfg(test)]
    pub fn execute_raw(&mut self, sql: &str) -> Result<()> {
        Ok(self.conn.execute_batch(sql)?)
    }
}

impl Engine for Sqlite {
    fn begin(&mut self) -> Result<()> {
        Ok(self.conn.execute_batch("BEGIN")?)
    }

    fn commit(&mut self) -> Result<()> {
        Ok(self.conn.execute_batch("COMMIT")?)
    }

    fn rollback(&mut self) {
        if !self.conn.is_autocommit() {
            let _ = self.conn.execute_batch("ROLLBACK");
        }
    }

    fn append_samples(
        &mut self,
        hour: i64,
        offset_s: u16,
        spare: usize,
        records: &[Packed],
    ) -> Result<()> {
        // In process, reading each row before writing it costs no round
        // trip.
        let keys: Vec<i64> = records.iter().map(|r| r.at).collect();
        let mut blobs = by_at(self.lookups(
            "SELECT substr(samples, 1, ?3) FROM server_hours WHERE hour = ?1 AND key = ?2",
            keys.iter().map(|&key| (hour, key, key)),
            MAX_HOUR_BYTES,
        )?);
        let mut put = self.conn.prepare_cached(
            "INSERT INTO server_hours (hour, key, samples) VALUES (?1, ?2, ?3) \
             ON CONFLICT (hour, key) DO UPDATE SET samples = excluded.samples",
        )?;
        for record in records {
            let mut bytes = blobs.remove(&record.at).unwrap_or_default();
            if Sample::taken_at(&bytes, offset_s) {
                continue;
            }
            Sample::place(&mut bytes, &record.bytes, spare);
            put.execute(params![hour, record.at, bytes])?;
        }
        Ok(())
    }

    fn put_servers(&mut self, t: i64, servers: &[&ServerSample]) -> Result<()> {
        let mut state = self.conn.prepare_cached(
            "INSERT INTO servers (key, name, address, port, players, max, open, mode, first_seen, last_seen) \
             VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?9) \
             ON CONFLICT (key) DO UPDATE SET name = ?2, address = ?3, port = ?4, players = ?5, \
             max = ?6, open = ?7, mode = ?8, last_seen = ?9",
        )?;
        for s in servers {
            state.execute(params![
                s.key as i64,
                s.name,
                s.address,
                s.port,
                s.players,
                s.max,
                s.open,
                s.mode,
                t
            ])?;
        }
        Ok(())
    }

    fn day_hours(&mut self, day: i64, keys: &[i64]) -> Result<Vec<Packed>> {
        self.lookups(
            "SELECT substr(hours, 1, ?3) FROM server_days WHERE day = ?1 AND key = ?2",
            keys.iter().map(|&key| (day, key, key)),
            MAX_DAY_BYTES,
        )
    }

    fn put_days(&mut self, day: i64, rows: &[DaySums]) -> Result<()> {
        let mut put = self.conn.prepare_cached(
            "INSERT INTO server_days (day, key, n, players_sum, max, open_n, hours, peak) \
             VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8) ON CONFLICT (day, key) DO UPDATE SET \
             n = excluded.n, players_sum = excluded.players_sum, max = excluded.max, \
             open_n = excluded.open_n, hours = excluded.hours, peak = excluded.peak",
        )?;
        for r in rows {
            put.execute(params![
                day,
                r.key,
                r.n,
                r.players_sum,
                r.max,
                r.open_n,
                r.hours,
                r.peak
            ])?;
        }
        Ok(())
    }

    fn known(&mut self, keys: &[i64]) -> Result<Vec<i64>> {
        self.found_keys("SELECT key FROM servers WHERE key = ?1", keys, |key| (key,))
    }

    fn forget(&mut self, rows: &Forgotten) -> Result<usize> {
        let mut n = 0;
        let mut hours = self
            .conn
            .prepare_cached("DELETE FROM server_hours WHERE hour = ?1 AND key = ?2")?;
        for (hour, key) in &rows.hours {
            n += hours.execute(params![hour, key])?;
        }
        let mut days = self
            .conn
            .prepare_cached("DELETE FROM server_days WHERE day = ?1 AND key = ?2")?;
        for (day, key) in &rows.days {
            n += days.execute(params![day, key])?;
        }
        let mut servers = self
            .conn
            .prepare_cached("DELETE FROM servers WHERE key = ?1")?;
        for key in &rows.keys {
            n += servers.execute(params![key])?;
        }
        Ok(n)
    }

    fn hours_of(&mut self, key: i64, hours: &[i64]) -> Result<Vec<Packed>> {
        self.lookups(
            "SELECT substr(samples, 1, ?3) FROM server_hours WHERE hour = ?1 AND key = ?2",
            hours.iter().map(|&hour| (hour, key, hour)),
            MAX_HOUR_BYTES,
        )
    }

    fn days_of(&mut self, key: i64, first: i64, last: i64) -> Result<Vec<DayRow>> {
        let mut get = self.conn.prepare_cached(
            "SELECT n, players_sum, max, open_n, substr(hours, 1, ?3), peak FROM server_days \
             WHERE day = ?1 AND key = ?2",
        )?;
        let mut out = Vec::new();
        // The table is keyed (day, key): a probe per day.
        for day in (first..=last).step_by(DAY_MS as usize) {
            let row = get
                .query_row(params![day, key, MAX_DAY_BYTES], |r| {
                    Ok(DayRow {
                        day,
                        sums: day_sums(r, key, 0)?,
                    })
                })
                .optional()?;
            out.extend(row);
        }
        Ok(out)
    }

    fn size_bytes(&mut self) -> Result<u64> {
        Ok(self.file_bytes()?)
    }

    fn seen_since(&mut self, keys: &[i64], since: i64) -> Result<Vec<i64>> {
        self.found_keys(
            "SELECT key FROM servers WHERE key = ?1 AND last_seen >= ?2",
            keys,
            |key| (key, since),
        )
    }
}

/// `params` as rusqlite binds them.
fn bound<'a>(params: &'a [&'a dyn Param]) -> impl Params + 'a {
    params_from_iter(params.iter().map(|p| *p as &dyn rusqlite::ToSql))
}

impl Sql for Sqlite {
    const DIALECT: Dialect = Dialect::Sqlite;

    fn run(&mut self, sql: &'static str, params: &[&dyn Param]) -> Result<u64> {
        let n = self.conn.prepare_cached(sql)?.execute(bound(params))?;
        Ok(n as u64)
    }

    fn rows<T: Decode>(&mut self, sql: &'static str, params: &[&dyn Param]) -> Result<Vec<T>> {
        self.all(sql, bound(params))
    }

    fn row<T: Decode>(&mut self, sql: &'static str, params: &[&dyn Param]) -> Result<Option<T>> {
        self.first(sql, bound(params))
    }
}
