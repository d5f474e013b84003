//! The week (`docs/protocol.md` §2.6, "When to play"): the last
//! [`WEEK_DAYS`] days of hourly sums folded into the [`WEEK_HOURS`] hours
//! of a week, in UTC, Monday 00:00 first. Read from the rows the history
//! keeps anyway (a server's day rows with their hours, the lobby's hourly
//! rows), not from a copy of them.

use protocol::api::{WeekHour, WEEK_DAYS, WEEK_HOURS};

use super::range::Tier;
use super::read::{day_hours, day_rows, live_hour, round, starts};
use super::{floor, Store, StoreError, DAY_MS, HOUR_MS};

/// The hour of the week (0 = Monday 00:00 UTC) holding `t` (Unix ms).
pub fn week_hour(t: i64) -> usize {
    // 1970-01-01 was a Thursday, the fourth day of a week from Monday.
    let day = t.div_euclid(DAY_MS);
    let weekday = (day + 3).rem_euclid(7);
    let hour = t.rem_euclid(DAY_MS) / HOUR_MS;
    (weekday * 24 + hour) as usize
}

/// The whole hours the week folds at `now`: from `WEEK_DAYS` days before
/// the current hour's start up to it (the current hour, not over yet, is
/// left out, so an answer holds for the hour).
pub fn week_window(now: i64) -> (i64, i64) {
    let to = floor(now, HOUR_MS);
    (to - i64::from(WEEK_DAYS) * DAY_MS, to)
}

/// One hour of the week's sums over the days folded.
#[derive(Debug, Clone, Copy, Default)]
struct Slot {
    /// Lobby samples in the hours.
    lobby_n: i64,
    /// Samples that listed the server (the lobby: the lobby's samples).
    n: i64,
    players_sum: i64,
    /// The most players at one sample, over the hours whose peak is known.
    peak: Option<i64>,
    /// Samples open, and the samples they are a share of.
    open_n: i64,
    open_of: i64,
    /// Samples with room, and the samples they are a share of.
    room_n: i64,
    room_of: i64,
}

impl Slot {
    fn hour(&self) -> WeekHour {
        if self.lobby_n <= 0 {
            return WeekHour(None, None, None, None);
        }
        let share =
            |part: i64, of: i64| (of > 0).then(|| round((part as f64 / of as f64).min(1.0)));
        WeekHour(
            (self.n > 0).then(|| round(self.players_sum as f64 / self.n as f64)),
            self.peak
                .filter(|_| self.n > 0)
                .and_then(|p| u32::try_from(p).ok()),
            share(self.open_n, self.open_of),
            share(self.room_n, self.room_of),
        )
    }

    fn peak(&mut self, peak: Option<i64>) {
        if let Some(p) = peak {
            self.peak = Some(self.peak.map_or(p, |q| q.max(p)));
        }
    }
}

fn answer(slots: &[Slot]) -> Vec<WeekHour> {
    slots.iter().map(Slot::hour).collect()
}

impl Store {
    /// `key`'s week at `now`: [`WEEK_HOURS`] entries, Monday 00:00 UTC
    /// first. `open` and `room` are shares of the lobby's samples in the
    /// hour (an hour in which the server was not listed counts as closed);
    /// `room` and `peak` leave out hours folded before they were recorded.
    pub fn server_week(&mut self, key: u64, now: i64) -> Result<Vec<WeekHour>, StoreError> {
        let (from, to) = week_window(now);
        let key = key as i64;
        let mut slots = vec![Slot::default(); WEEK_HOURS];
        let e = self.engine();
        let lobby = e.lobby_buckets(Tier::Hourly, HOUR_MS, from)?;
        let live = live_hour(e, key)?;
        let rows = day_rows(e, key, from, to - 1)?;
        // The lobby's samples of each hour, which every share is of.
        let mut lobby_n = std::collections::HashMap::with_capacity(lobby.len());
        for b in lobby.iter().filter(|b| b.t >= from && b.t < to && b.n > 0) {
            let slot = &mut slots[week_hour(b.t)];
            slot.lobby_n += b.n;
            slot.open_of += b.n;
            slot.room_of += b.n;
            lobby_n.insert(b.t, b.n);
        }
        for day in starts(from, to - 1, DAY_MS) {
            let row = rows.iter().find(|r| r.day == day);
            let hours = row.and_then(|r| r.sums.hours.as_deref());
            for (t, sums) in day_hours(day, hours, live) {
                if t < from || t >= to || sums.n == 0 {
                    continue;
                }
                let slot = &mut slots[week_hour(t)];
                slot.n += i64::from(sums.n);
                slot.players_sum += i64::from(sums.players);
                slot.open_n += i64::from(sums.open_n);
                slot.peak(sums.peak.map(i64::from));
                match sums.room_n {
                    Some(r) => slot.room_n += i64::from(r),
                    // Unknown for this hour: not part of the share.
                    None => slot.room_of -= lobby_n.get(&t).copied().unwrap_or(0),
                }
            }
        }
        Ok(answer(&slots))
    }

    /// The lobby's week at `now`: players online in total, the most at one
    /// sample, and the shares of the samples in which at least one server
    /// was open, and open with room (over the hours that recorded them).
    pub fn lobby_week(&mut self, now: i64) -> Result<Vec<WeekHour>, StoreError> {
        let (from, to) = week_window(now);
        let mut slots = vec![Slot::default(); WEEK_HOURS];
        let lobby = self.engine().lobby_buckets(Tier::Hourly, HOUR_MS, from)?;
        for b in lobby.iter().filter(|b| b.t >= from && b.t < to && b.n > 0) {
            let slot = &mut slots[week_hour(b.t)];
            slot.lobby_n += b.n;
            slot.n += b.n;
            slot.players_sum += b.players_sum;
            slot.peak(b.peak);
            if let Some(open) = b.open_n {
                slot.open_n += open;
                slot.open_of += b.n;
            }
            if let Some(room) = b.room_n {
                slot.room_n += room;
                slot.room_of += b.n;
            }
        }
        Ok(answer(&slots))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hours_of_the_week_start_on_monday_utc() {
        // 2024-01-01 was a Monday.
        let monday = 1_704_067_200_000;
        assert_eq!(week_hour(monday), 0);
        assert_eq!(week_hour(monday + HOUR_MS - 1), 0);
        assert_eq!(week_hour(monday + 19 * HOUR_MS), 19);
        assert_eq!(week_hour(monday + 5 * DAY_MS + 20 * HOUR_MS), 5 * 24 + 20);
        assert_eq!(week_hour(monday + 7 * DAY_MS - 1), 167);
        assert_eq!(week_hour(monday + 7 * DAY_MS), 0);
        assert_eq!(week_hour(0), 3 * 24, "the epoch: a Thursday");
        assert_eq!(week_hour(-1), 3 * 24 - 1, "before it: Wednesday");
        let (from, to) = week_window(monday + 30 * 60_000);
        assert_eq!((to, to - from), (monday, 28 * DAY_MS));
    }
}
