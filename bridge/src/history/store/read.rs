//! Reading: a server's last known state and the points of the history
//! answers, from point lookups of one server's rows per hour or day.

use rusqlite::{params, OptionalExtension};

use super::super::packed::{HourSums, Sample};
use super::super::range::{Range, Tier};
use super::write::hour_sums;
use super::{floor, LobbyPoint, ServerPoint, ServerRow, ServerSample, Store, DAY_MS, HOUR_MS};

impl Store {
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

    /// The lobby's intervals of `step_ms` from `from` on, oldest first.
    fn lobby_buckets(
        &self,
        tier: Tier,
        step_ms: i64,
        from: i64,
    ) -> rusqlite::Result<Vec<LobbyBucket>> {
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
            Ok(LobbyBucket {
                t: r.get(0)?,
                n: r.get(1)?,
                servers_sum: r.get(2)?,
                players_sum: r.get(3)?,
            })
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
            .filter(|b| b.n > 0)
            .map(|b| LobbyPoint {
                t: b.t,
                servers: round(b.servers_sum as f64 / b.n as f64),
                players: round(b.players_sum as f64 / b.n as f64),
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
        for LobbyBucket { t, n, .. } in lobby {
            while own.next_if(|o| o.t < t).is_some() {}
            if t < first_bucket || n <= 0 {
                continue;
            }
            let point = match own.next_if(|o| o.t == t) {
                Some(o) if o.n > 0 => ServerPoint {
                    t,
                    players: Some(round(o.players_sum as f64 / o.n as f64)),
                    max: Some(o.max),
                    online: round((o.n as f64 / n as f64).min(1.0)),
                    open: round((o.open_n as f64 / n as f64).min(1.0)),
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

/// One interval of the lobby's history: its samples and their sums.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct LobbyBucket {
    /// The interval's start (Unix ms).
    t: i64,
    /// Samples taken in it.
    n: i64,
    servers_sum: i64,
    players_sum: i64,
}

/// One interval of a server's history: the samples that listed it and
/// their sums.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct ServerBucket {
    /// The interval's start (Unix ms).
    t: i64,
    /// Samples in which it was listed.
    n: i64,
    players_sum: i64,
    max: u32,
    /// Samples in which its lobby was open.
    open_n: i64,
}

/// A server's sums over one day, as its `server_days` row holds them
/// (`hours`: the packed sums of each hour, `None` once dropped).
struct DayRow {
    sums: ServerBucket,
    hours: Option<Vec<u8>>,
}

/// Adds `sums` taken at `t` to the interval of `step_ms` holding it: the
/// last of `buckets` when it is that interval, a new one after it if not
/// (sums arrive oldest first).
fn add_to(buckets: &mut Vec<ServerBucket>, step_ms: i64, sums: ServerBucket) {
    let t = floor(sums.t, step_ms);
    match buckets.last_mut() {
        Some(last) if last.t == t => {
            last.n += sums.n;
            last.players_sum += sums.players_sum;
            last.max = last.max.max(sums.max);
            last.open_n += sums.open_n;
        }
        _ => buckets.push(ServerBucket { t, ..sums }),
    }
}

impl ServerBucket {
    /// One hour's (or sample's) sums taken at `t`.
    fn of(t: i64, sums: HourSums) -> Self {
        Self {
            t,
            n: i64::from(sums.n),
            players_sum: i64::from(sums.players),
            max: u32::from(sums.max),
            open_n: i64::from(sums.open_n),
        }
    }
}

impl Store {
    /// `key`'s intervals of `step_ms` from `from` up to `now`, oldest
    /// first, read from its rows of each hour (samples) or day (sums) in
    /// the window: point lookups, never a scan over other servers' rows.
    fn server_buckets(
        &self,
        key: u64,
        tier: Tier,
        step_ms: i64,
        from: i64,
        now: i64,
    ) -> rusqlite::Result<Vec<ServerBucket>> {
        let key = key as i64;
        let mut buckets: Vec<ServerBucket> = Vec::new();
        let mut add = |sums: ServerBucket| {
            if sums.t >= from && sums.n > 0 {
                add_to(&mut buckets, step_ms, sums);
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
                        add(ServerBucket::of(hour + i64::from(s.offset_s) * 1000, one));
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
                        add(ServerBucket::of(t, sums));
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
                    let row: Option<DayRow> = stmt
                        .query_row(params![day, key], |r| {
                            Ok(DayRow {
                                sums: ServerBucket {
                                    t: day,
                                    n: r.get(0)?,
                                    players_sum: r.get(1)?,
                                    max: r.get(2)?,
                                    open_n: r.get(3)?,
                                },
                                hours: r.get(4)?,
                            })
                        })
                        .optional()?;
                    let sums = match (row, live) {
                        // The day of the hour not folded yet: its hours'.
                        (row, Some((hour, _))) if floor(hour, DAY_MS) == day => {
                            let hours = row.and_then(|r| r.hours);
                            let mut day_sums = Vec::with_capacity(1);
                            for (t, sums) in day_hours(day, hours.as_deref(), live) {
                                add_to(&mut day_sums, DAY_MS, ServerBucket::of(t, sums));
                            }
                            day_sums.pop()
                        }
                        (row, _) => row.map(|r| r.sums),
                    };
                    if let Some(sums) = sums {
                        add(sums);
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

/// Three decimals: enough for a graph, short on the wire.
fn round(x: f64) -> f64 {
    (x * 1000.0).round() / 1000.0
}
