//! Reading: a server's last known state and the points of the history
//! answers (the protocol's own `api::LobbyPoint` and `api::ServerPoint`,
//! as they go on the wire), from lookups of one server's rows per hour or day (never a
//! scan over other servers' rows), written once over [`Engine`]'s row
//! operations. Every row read back is checked here.

use protocol::api::{HistoryRange, LobbyPoint, ServerPoint};

use super::engine::{DayRow, Engine, LobbyBucket, RawServer};
use super::packed::{HourSums, Sample};
use super::range::{Tier, Window};
use super::write::hour_sums;
use super::{floor, ServerRow, ServerSample, Store, StoreError, DAY_MS, HOUR_MS};

impl Store {
    /// The last known state of `key`; `None` if it was never recorded.
    pub fn server(&mut self, key: u64) -> Result<Option<ServerRow>, StoreError> {
        match self.engine().server(key as i64)? {
            Some(raw) => Ok(Some(checked(key, raw)?)),
            None => Ok(None),
        }
    }

    /// The lobby's points over `range` up to `now`.
    pub fn lobby_history(
        &mut self,
        range: HistoryRange,
        sample_ms: i64,
        now: i64,
    ) -> Result<(i64, Vec<LobbyPoint>), StoreError> {
        let (tier, step, from) = range.window(sample_ms, now);
        let points = self
            .engine()
            .lobby_buckets(tier, step, from)?
            .into_iter()
            .filter(|b| b.n > 0)
            .map(|b| {
                LobbyPoint(
                    b.t,
                    round(b.servers_sum as f64 / b.n as f64),
                    round(b.players_sum as f64 / b.n as f64),
                    b.peak.and_then(|p| u32::try_from(p).ok()),
                )
            })
            .collect();
        Ok((step, points))
    }

    /// `key`'s points over `range` up to `now`: one for each interval the
    /// bridge sampled since the key was first seen.
    pub fn server_history(
        &mut self,
        key: u64,
        first_seen: i64,
        range: HistoryRange,
        sample_ms: i64,
        now: i64,
    ) -> Result<(i64, Vec<ServerPoint>), StoreError> {
        let (tier, step, from) = range.window(sample_ms, now);
        let lobby = self.engine().lobby_buckets(tier, step, from)?;
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
                Some(o) if o.n > 0 => ServerPoint(
                    t,
                    Some(round(o.players_sum as f64 / o.n as f64)),
                    Some(o.max),
                    round((o.n as f64 / n as f64).min(1.0)),
                    round((o.open_n as f64 / n as f64).min(1.0)),
                    o.peak,
                ),
                _ => ServerPoint(t, None, None, 0.0, 0.0, None),
            };
            points.push(point);
        }
        Ok((step, points))
    }
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
    /// The most players at one sample (`None` where unknown for a part).
    peak: Option<u32>,
    /// Samples in which its lobby was open with a player and a free slot
    /// (`None` where unknown for a part).
    room_n: Option<i64>,
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
            last.peak = last.peak.zip(sums.peak).map(|(a, b)| a.max(b));
            last.room_n = last.room_n.zip(sums.room_n).map(|(a, b)| a + b);
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
            peak: sums.peak.map(u32::from),
            room_n: sums.room_n.map(i64::from),
        }
    }
}

impl Store {
    /// `key`'s intervals of `step_ms` from `from` up to `now`, oldest
    /// first, read from its rows of each hour (samples) or day (sums) in
    /// the window.
    fn server_buckets(
        &mut self,
        key: u64,
        tier: Tier,
        step_ms: i64,
        from: i64,
        now: i64,
    ) -> Result<Vec<ServerBucket>, StoreError> {
        let key = key as i64;
        let mut buckets: Vec<ServerBucket> = Vec::new();
        let mut add = |sums: ServerBucket| {
            if sums.t >= from && sums.n > 0 {
                add_to(&mut buckets, step_ms, sums);
            }
        };
        let e = self.engine();
        match tier {
            Tier::Samples => {
                let mut rows = e.hours_of(key, &starts(from, now, HOUR_MS))?;
                rows.sort_by_key(|r| r.at);
                for row in rows {
                    let mut samples: Vec<Sample> = Sample::decode_all(&row.bytes).collect();
                    samples.sort_by_key(|s| s.offset_s);
                    for s in samples {
                        let mut one = HourSums::default();
                        one.add(u32::from(s.players), s.max, s.open);
                        add(ServerBucket::of(row.at + i64::from(s.offset_s) * 1000, one));
                    }
                }
            }
            Tier::Hourly => {
                let live = live_hour(e, key)?;
                let rows = day_rows(e, key, from, now)?;
                for day in starts(from, now, DAY_MS) {
                    let row = rows.iter().find(|r| r.day == day);
                    let hours = row.and_then(|r| r.sums.hours.as_deref());
                    for (t, sums) in day_hours(day, hours, live) {
                        add(ServerBucket::of(t, sums));
                    }
                }
            }
            Tier::Daily => {
                let live = live_hour(e, key)?;
                let rows = day_rows(e, key, from, now)?;
                for day in starts(from, now, DAY_MS) {
                    let row = rows.iter().find(|r| r.day == day);
                    let sums = match live {
                        // The day of the hour not folded yet: its hours'.
                        Some((hour, _)) if floor(hour, DAY_MS) == day => {
                            let hours = row.and_then(|r| r.sums.hours.as_deref());
                            let mut day_sums = Vec::with_capacity(1);
                            for (t, sums) in day_hours(day, hours, live) {
                                add_to(&mut day_sums, DAY_MS, ServerBucket::of(t, sums));
                            }
                            day_sums.pop()
                        }
                        _ => row.map(|r| ServerBucket {
                            t: day,
                            n: r.sums.n,
                            players_sum: r.sums.players_sum,
                            max: u32::try_from(r.sums.max).unwrap_or(0),
                            open_n: r.sums.open_n,
                            peak: r.sums.peak.and_then(|p| u32::try_from(p).ok()),
                            room_n: None,
                        }),
                    };
                    if let Some(sums) = sums {
                        add(sums);
                    }
                }
            }
        }
        Ok(buckets)
    }
}

/// The starts of the intervals of `every` ms from the one holding `from`
/// up to `now`.
pub(super) fn starts(from: i64, now: i64, every: i64) -> Vec<i64> {
    let mut at = floor(from, every);
    let mut out = Vec::new();
    while at <= now {
        out.push(at);
        at += every;
    }
    out
}

/// `key`'s day rows from the day holding `from` up to `now`, checked: sums
/// that no recording could give are an error, not a point.
pub(super) fn day_rows(
    e: &mut dyn Engine,
    key: i64,
    from: i64,
    now: i64,
) -> Result<Vec<DayRow>, StoreError> {
    let rows = e.days_of(key, floor(from, DAY_MS), floor(now, DAY_MS))?;
    for r in &rows {
        let s = &r.sums;
        let bad_peak = s
            .peak
            .is_some_and(|p| !(0..=i64::from(u16::MAX)).contains(&p));
        if s.n < 0 || s.players_sum < 0 || s.open_n < 0 || !(0..=255).contains(&s.max) || bad_peak {
            return Err(StoreError::InvalidRow {
                table: "server_days",
                reason: format!("negative or out-of-range sums on day {}", r.day),
            });
        }
    }
    Ok(rows)
}

/// The newest hour recorded and `key`'s sums over it, which may not be
/// folded into its day yet (`None` in an empty table).
pub(super) fn live_hour(
    e: &mut dyn Engine,
    key: i64,
) -> Result<Option<(i64, HourSums)>, StoreError> {
    let Some(hour) = e.newest_hour()? else {
        return Ok(None);
    };
    let rows = e.hours_of(key, &[hour])?;
    let bytes = rows.first().map(|r| r.bytes.as_slice()).unwrap_or_default();
    Ok(Some((hour, hour_sums(bytes))))
}

/// A `servers` row as the bridge wrote it, or why it is not one: numbers
/// in their ranges, the name and address valid as the protocol defines
/// them.
fn checked(key: u64, raw: RawServer) -> Result<ServerRow, StoreError> {
    let invalid = |reason: String| StoreError::InvalidRow {
        table: "servers",
        reason,
    };
    let name = protocol::validate::ServerName::parse(&raw.name)
        .map_err(|e| invalid(format!("name: {e}")))?;
    let address = match raw.address {
        Some(a) => Some(
            protocol::validate::ServerAddress::parse(&a)
                .map_err(|e| invalid(format!("address: {e}")))?,
        ),
        None => None,
    };
    let port = match raw.port {
        Some(p) => Some(u16::try_from(p).map_err(|_| invalid(format!("port {p}")))?),
        None => None,
    };
    let number = |what: &str, v: i64, max: i64| {
        if (0..=max).contains(&v) {
            Ok(v)
        } else {
            Err(invalid(format!("{what} {v}")))
        }
    };
    Ok(ServerRow {
        sample: ServerSample {
            key,
            name: name.as_str().to_owned(),
            address: address.map(|a| a.as_str().to_owned()),
            port,
            players: number("players", raw.players, i64::from(u32::MAX))? as u32,
            max: number("max", raw.max, 255)? as u8,
            open: raw.open,
            mode: number("mode", raw.mode, 127)? as u8,
        },
        first_seen: raw.first_seen,
        last_seen: raw.last_seen,
    })
}

/// The hours of `day` with sums, oldest first, as `(t, sums)`: its row's
/// (`hours`), the `live` hour's in place of the row's for that hour.
pub(super) fn day_hours(
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
pub(super) fn round(x: f64) -> f64 {
    (x * 1000.0).round() / 1000.0
}
