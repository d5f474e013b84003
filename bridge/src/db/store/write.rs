//! Writing: one sample appended to each server's hour row and added to
//! the lobby's sums, hours folded into their days once over, and
//! retention in bounded batches. Written once over [`Engine`]'s row
//! operations, for both engines. This is where a rule about which servers
//! a sample may add (per source, say) goes: [`Store::record`] is the one
//! place a sample's servers enter the store.

use std::collections::HashSet;

use master::throttled;

use super::engine::{
    by_at, Brief, Cutoffs, DaySums, Engine, Forgotten, HourCounts, Life, LobbyTotals, Packed,
};
use super::packed::{has_room, HourSums, Sample, MAX_SLOTS, SAMPLE_BYTES};
use super::{
    floor, ServerSample, Store, StoreError, BRIEF_MS, DAY_MS, FORGET_BRIEF_AFTER_MS, HOUR_MS,
    KEEP_DAILY_MS, KEEP_HOURLY_MS, KEEP_SAMPLES_MS,
};

/// Rows of one hour folded per round trip at most.
const FOLD_PAGE: i64 = 5_000;
/// Servers given up per round when the database is full.
const EVICT_BATCH: usize = 64;
/// Rounds of giving up servers per sample at most (the next sample goes
/// on where this one stopped).
const EVICT_ROUNDS: usize = 8;

/// What recording a sample did.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Recorded {
    /// The sample is now in the store.
    Written,
    /// A sample taken at the same time was recorded already (by this
    /// bridge or another on the same database): nothing was counted twice.
    Already,
}

impl Store {
    /// Records one sample taken at `t` (Unix ms): each listed server (one
    /// record per key: the first of twins counts) written into its hour's
    /// row and added to its day's sums, the lobby's totals, in one
    /// transaction. On an engine that keeps rows in place
    /// ([`Engine::slot_counts`]: PostgreSQL) an hour's row is made
    /// at its first sample with an empty slot for each sample still to come
    /// in the hour ([`spare_slots`]), and each later sample fills the next
    /// slot in place: the row keeps its size, so it can be updated on its
    /// page; elsewhere a row holds only its records. The lobby's row for
    /// `t` is the guard: a sample whose time is recorded already changes
    /// nothing ([`Recorded::Already`]), so two bridges recording the same
    /// interval count it once.
    ///
    /// A full database (a full disk, the `--history-max-bytes` cap) does
    /// not stop the recording of the servers already there: the newest
    /// data goes first (this sample's servers never recorded before are
    /// left out of it and of the lobby's totals), then the least seen
    /// servers not in the sample are forgotten, the shortest life first
    /// and the newest first among equals, a batch at a time, until the
    /// sample fits.
    pub fn record(&mut self, t: i64, servers: &[ServerSample]) -> Result<Recorded, StoreError> {
        match self.record_all(t, servers) {
            Err(e) if e.is_full() => self.record_when_full(t, servers, e),
            r => r,
        }
    }

    /// [`Store::record`] on a full database: see there.
    fn record_when_full(
        &mut self,
        t: i64,
        servers: &[ServerSample],
        full: StoreError,
    ) -> Result<Recorded, StoreError> {
        let keys: Vec<i64> = servers.iter().map(|s| s.key as i64).collect();
        let known: HashSet<i64> = self.engine().known(&keys)?.into_iter().collect();
        let old: Vec<ServerSample> = servers
            .iter()
            .filter(|s| known.contains(&(s.key as i64)))
            .cloned()
            .collect();
        let left_out = servers.len() - old.len();
        let mut last = full;
        for _ in 0..=EVICT_ROUNDS {
            match self.record_all(t, &old) {
                Err(e) if e.is_full() => last = e,
                r => {
                    throttled!(
                        warn,
                        left_out,
                        "the history's database is full: servers never recorded before are left out, and the least seen are forgotten to make room"
                    );
                    return r;
                }
            }
            let room = self
                .engine()
                .least_seen((EVICT_BATCH + known.len()) as i64)?;
            let lives: Vec<Life> = room
                .into_iter()
                .filter(|l| !known.contains(&l.key))
                .take(EVICT_BATCH)
                .collect();
            if lives.is_empty() {
                break;
            }
            let rows = forgotten(&lives, t);
            self.in_transaction(|e| e.forget(&rows))?;
        }
        Err(last)
    }

    /// Records the sample as it is (see [`Store::record`]).
    fn record_all(&mut self, t: i64, servers: &[ServerSample]) -> Result<Recorded, StoreError> {
        let hour = floor(t, HOUR_MS);
        let day = floor(t, DAY_MS);
        let folded = self.folded_before(hour)?;
        let mut seen = HashSet::with_capacity(servers.len());
        // The first of twins counts.
        let unique: Vec<&ServerSample> = servers.iter().filter(|s| seen.insert(s.key)).collect();
        let count = unique.len() as i64;
        let players: i64 = unique.iter().map(|s| i64::from(s.players)).sum();
        let totals = LobbyTotals {
            servers: count,
            players,
            open: unique.iter().any(|s| s.open),
            room: unique.iter().any(|s| has_room(s.players, s.max, s.open)),
        };
        let offset_s = u16::try_from((t - hour) / 1000).unwrap_or(u16::MAX);
        let interval_ms = self.interval_ms;
        let recorded = self.in_transaction(|e| {
            if !e.insert_lobby_sample(t, count, players)? {
                return Ok(Recorded::Already);
            }
            if folded < hour {
                fold(e, folded, hour)?;
            }
            let spare = e
                .slot_counts(hour)?
                .map_or(0, |counts| spare_slots(counts, t, hour, interval_ms));
            let records: Vec<Packed> = unique
                .iter()
                .map(|s| {
                    let mut bytes = Vec::with_capacity(SAMPLE_BYTES);
                    Sample {
                        offset_s,
                        players: u16::try_from(s.players).unwrap_or(u16::MAX),
                        max: s.max,
                        open: s.open,
                        mode: s.mode,
                    }
                    .encode(&mut bytes);
                    Packed {
                        at: s.key as i64,
                        bytes,
                    }
                })
                .collect();
            e.append_samples(hour, offset_s, spare, &records)?;
            e.put_servers(t, &unique)?;
            e.add_lobby_sums(hour, day, &totals)?;
            if hour < folded {
                fold(e, hour, hour + HOUR_MS)?; // a clock set back: fold again
            }
            Ok(Recorded::Written)
        })?;
        if recorded == Recorded::Written {
            self.folded_before = Some(folded.max(hour));
        }
        Ok(recorded)
    }

    /// Before which hour everything is folded into `server_days` (looked up
    /// once: the newest hour recorded, `hour` in an empty table).
    fn folded_before(&mut self, hour: i64) -> Result<i64, StoreError> {
        if let Some(folded) = self.folded_before {
            return Ok(folded);
        }
        let folded = self.engine().newest_hour()?.unwrap_or(hour);
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
    pub fn prune(&mut self, now: i64, batch: usize) -> Result<usize, StoreError> {
        // Hours are deleted only once folded into their day.
        let hour = floor(now, HOUR_MS);
        let folded = self.folded_before(hour)?;
        if folded < hour {
            self.in_transaction(|e| fold(e, folded, hour))?;
            self.folded_before = Some(hour);
        }
        let batch = i64::try_from(batch).unwrap_or(i64::MAX);
        // A day's hourly sums go when its last hour is past 90 days.
        let hours_before = now - KEEP_HOURLY_MS - DAY_MS + HOUR_MS;
        let cutoffs = Cutoffs {
            hours_through: now - KEEP_SAMPLES_MS - HOUR_MS,
            days_before: now - KEEP_DAILY_MS,
            hours_dropped: (self.hours_dropped_before, hours_before),
            lobby_samples_before: now - KEEP_SAMPLES_MS,
            lobby_hours_before: now - KEEP_HOURLY_MS,
        };
        let pruned = self.engine().prune(&cutoffs, batch)?;
        if (pruned.nulled as i64) < batch {
            self.hours_dropped_before = self.hours_dropped_before.max(hours_before);
        }
        Ok(pruned.deleted + pruned.nulled + self.forget_brief(now, batch)?)
    }

    /// Forgets at most `batch` servers seen only briefly (their whole life
    /// shorter than [`BRIEF_MS`]) and unseen for [`FORGET_BRIEF_AFTER_MS`]:
    /// their details and history, so that keys that came and went are not
    /// kept the two years of the daily sums. Servers checked once are not
    /// looked at again (a server unseen can only grow older).
    fn forget_brief(&mut self, now: i64, batch: i64) -> Result<usize, StoreError> {
        let before = now - FORGET_BRIEF_AFTER_MS;
        let checked = self.brief_checked;
        let lives = self.engine().brief_servers(&Brief {
            after: checked,
            before,
            life_ms: BRIEF_MS,
            limit: batch,
        })?;
        let now_checked = match lives.last() {
            Some(last) if lives.len() as i64 >= batch => (last.last_seen, last.key),
            _ => (before - 1, i64::MAX),
        };
        let mut n = 0;
        if !lives.is_empty() {
            let rows = forgotten(&lives, now);
            n = self.in_transaction(|e| e.forget(&rows))?;
        }
        self.brief_checked = checked.max(now_checked);
        Ok(n)
    }
}

/// The most empty slots a row is made with (or grows by): a row of 60
/// records (360 bytes), an hour at the default interval. At a shorter
/// interval a row grows by that much each time it is full, so a sample
/// every second writes rows of a few hundred bytes, not of 21.6 KB.
const SLOTS_AHEAD: usize = 59;

/// The empty slots a server's new hour row gets after the record of the
/// sample taken at `t`: one for each sample still to come in its hour, so
/// that they are written in place and the row never grows. As many as the
/// hour before had (at most as many as the interval leaves time for, and
/// [`SLOTS_AHEAD`]); by the interval alone when the hour before has no
/// samples. An hour that ends up with more samples than that (after one
/// with a gap) grows its rows once it is past their slots; the next
/// hour's are made for it.
fn spare_slots(counts: HourCounts, t: i64, hour: i64, interval_ms: Option<i64>) -> usize {
    let by_time = interval_ms
        .filter(|&every| every > 0)
        .map(|every| (hour + HOUR_MS - t - 1).max(0) / every);
    let by_count = (counts.before > 0).then(|| counts.before - counts.this - 1);
    let left = match (by_count, by_time) {
        (Some(c), Some(t)) => c.min(t),
        (Some(n), None) | (None, Some(n)) => n,
        (None, None) => 0,
    };
    usize::try_from(left)
        .unwrap_or(0)
        .min(SLOTS_AHEAD)
        .min(MAX_SLOTS - 1)
}

/// The rows of the servers of `lives` that the store may hold at `now`:
/// each hour of their life within the samples' 48 hours, each day within
/// the daily sums' two years, and their `servers` rows.
fn forgotten(lives: &[Life], now: i64) -> Forgotten {
    let mut rows = Forgotten::default();
    let first_hour = floor(now - KEEP_SAMPLES_MS, HOUR_MS) - HOUR_MS;
    let first_day = floor(now - KEEP_DAILY_MS, DAY_MS) - DAY_MS;
    for life in lives {
        let mut hour = floor(life.first_seen, HOUR_MS).max(first_hour);
        while hour <= life.last_seen {
            rows.hours.push((hour, life.key));
            hour += HOUR_MS;
        }
        let mut day = floor(life.first_seen, DAY_MS).max(first_day);
        while day <= life.last_seen {
            rows.days.push((day, life.key));
            day += DAY_MS;
        }
        rows.keys.push(life.key);
    }
    rows
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
/// `server_days`, an hour at a time and a page of its rows at a time:
/// each hour's sums replace that hour's record, and the day's sums are
/// those of its hours, so folding an hour again changes nothing.
fn fold(e: &mut dyn Engine, from: i64, to: i64) -> Result<(), StoreError> {
    let mut next = from;
    while let Some(hour) = e.first_hour(next, to)? {
        let day = floor(hour, DAY_MS);
        let h = ((hour - day) / HOUR_MS) as u8;
        let mut after = i64::MIN;
        loop {
            let rows = e.hour_rows(hour, after, FOLD_PAGE)?;
            let Some(last) = rows.last() else { break };
            after = last.at;
            let keys: Vec<i64> = rows.iter().map(|r| r.at).collect();
            let mut days = by_at(e.day_hours(day, &keys)?);
            let sums: Vec<DaySums> = rows
                .iter()
                .map(|r| {
                    let mut hours = days.remove(&r.at).unwrap_or_default();
                    hour_sums(&r.bytes).write(&mut hours, h);
                    day_sums(r.at, hours)
                })
                .collect();
            e.put_days(day, &sums)?;
            if (rows.len() as i64) < FOLD_PAGE {
                break;
            }
        }
        next = hour + HOUR_MS;
    }
    Ok(())
}

/// A day's row for `key`: the sums of its `hours` (its peak unknown when
/// an hour's is).
fn day_sums(key: i64, hours: Vec<u8>) -> DaySums {
    let (mut n, mut players_sum, mut max, mut open_n) = (0i64, 0i64, 0u8, 0i64);
    let mut peak = Some(0i64);
    for (_, s) in HourSums::decode_all(&hours) {
        n += i64::from(s.n);
        players_sum += i64::from(s.players);
        max = max.max(s.max);
        open_n += i64::from(s.open_n);
        peak = peak.zip(s.peak).map(|(a, b)| a.max(i64::from(b)));
    }
    DaySums {
        key,
        n,
        players_sum,
        max: i64::from(max),
        open_n,
        peak,
        hours: Some(hours),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_new_row_has_a_slot_for_each_sample_left_in_its_hour() {
        let hour = 100 * HOUR_MS;
        let minute = Some(60_000);
        let counts = |before, this| HourCounts { before, this };
        // The hour before had 60 samples, this is the first of this one.
        assert_eq!(spare_slots(counts(60, 0), hour + 30_000, hour, minute), 59);
        assert_eq!(
            spare_slots(counts(60, 59), hour + 3_570_000, hour, minute),
            0
        );
        // Started 20 minutes into the hour: no more than time allows.
        assert_eq!(
            spare_slots(counts(60, 0), hour + 1_230_000, hour, minute),
            39
        );
        // No hour before: the interval's count.
        assert_eq!(spare_slots(counts(0, 0), hour + 30_000, hour, minute), 59);
        // A sample an hour: no room kept for samples that do not come.
        assert_eq!(spare_slots(counts(1, 0), hour + 600_000, hour, minute), 0);
        assert_eq!(spare_slots(counts(0, 0), hour, hour, None), 0);
        // A sample a second: room for a minute's, not the hour's.
        assert_eq!(
            spare_slots(counts(3_600, 0), hour, hour, Some(1_000)),
            SLOTS_AHEAD
        );
    }
}
