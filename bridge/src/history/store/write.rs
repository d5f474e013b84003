//! Writing: one sample appended to each server's hour row and added to
//! the lobby's sums, hours folded into their days once over, and
//! retention in bounded batches.

use std::collections::HashSet;

use rusqlite::{params, Connection, OptionalExtension};

use super::super::packed::{HourSums, Sample};
use super::{
    floor, ServerSample, Store, DAY_MS, HOUR_MS, KEEP_DAILY_MS, KEEP_HOURLY_MS, KEEP_SAMPLES_MS,
};

impl Store {
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
}

/// A server's sums over the samples of one hour's blob.
pub(super) fn hour_sums(samples: &[u8]) -> HourSums {
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
