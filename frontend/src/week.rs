//! The week's busy hours (`/api/servers/{key}/week`, `/api/week`) as the
//! page shows them: the 168 UTC hours moved into the player's local time,
//! the busiest window of a weekday found in them, and the sentence that
//! names it ("Usually busiest on Saturdays, 19:00–23:00."). Plain data,
//! tested natively; the heatmap component draws it.

use protocol::api::{WeekHour, WEEK_HOURS};

use crate::i18n::{t, tf, K};

/// The weekdays, Monday first, as the week's rows name them.
pub const DAYS: [K; 7] = [
    K::Monday,
    K::Tuesday,
    K::Wednesday,
    K::Thursday,
    K::Friday,
    K::Saturday,
    K::Sunday,
];

/// The weekdays in a sentence's form ("on Saturdays", "samstags").
const DAYS_PLURAL: [K; 7] = [
    K::Mondays,
    K::Tuesdays,
    K::Wednesdays,
    K::Thursdays,
    K::Fridays,
    K::Saturdays,
    K::Sundays,
];

/// The week's hours moved from UTC into a local time `offset_ms` ahead of
/// UTC (the browser's offset; negative west of Greenwich): entry `i` of
/// the answer is Monday 00:00 UTC plus `i` hours, entry `i` of the result
/// Monday 00:00 local time plus `i` hours. An offset of a fraction of an
/// hour (India's 5:30) moves by the nearest whole hour, since the answer
/// holds whole UTC hours. A short answer is padded with empty hours.
pub fn to_local(hours: &[WeekHour], offset_ms: f64) -> Vec<WeekHour> {
    let empty = WeekHour(None, None, None, None);
    let n = WEEK_HOURS as i64;
    let shift = (offset_ms / 3_600_000.0).round() as i64;
    let mut out = vec![empty; WEEK_HOURS];
    for (utc, &hour) in hours.iter().take(WEEK_HOURS).enumerate() {
        let local = (utc as i64 + shift).rem_euclid(n) as usize;
        out[local] = hour;
    }
    out
}

/// The hours of one weekday, in local time, in which it is usually
/// busiest: `day` 0 = Monday, from hour `start` for `len` hours.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Window {
    pub day: usize,
    pub start: usize,
    pub len: usize,
}

/// The longest a window gets (an evening, not a whole day).
const MAX_WINDOW: usize = 6;
/// A neighbouring hour belongs to the window when it has at least this
/// share of the busiest hour's players.
const NEAR: f64 = 0.75;

/// The mean players of an hour, the figure the week is ranked by.
fn players(h: &WeekHour) -> Option<f64> {
    h.0.filter(|p| p.is_finite())
}

/// The busiest window of `local` (168 hours in local time): around the
/// hour with the most players on average (the first, if several are as
/// high), grown hour by hour within its day towards the busier neighbour
/// while that has at least [`NEAR`] of its players, up to [`MAX_WINDOW`]
/// hours. `None` when no hour had a player.
pub fn busiest(local: &[WeekHour]) -> Option<Window> {
    let (top, most) = local
        .iter()
        .enumerate()
        .filter_map(|(i, h)| players(h).map(|p| (i, p)))
        .fold(None, |best: Option<(usize, f64)>, (i, p)| match best {
            Some((_, b)) if b >= p => best,
            _ => Some((i, p)),
        })?;
    if most <= 0.0 {
        return None;
    }
    let day = top / 24;
    let at = |hour: usize| {
        local
            .get(day * 24 + hour)
            .and_then(players)
            .filter(|&p| p >= most * NEAR)
    };
    let (mut start, mut end) = (top % 24, top % 24 + 1);
    while end - start < MAX_WINDOW {
        let before = start.checked_sub(1).and_then(at);
        let after = (end < 24).then(|| at(end)).flatten();
        match (before, after) {
            (Some(b), Some(a)) if b > a => start -= 1,
            (_, Some(_)) => end += 1,
            (Some(_), None) => start -= 1,
            (None, None) => break,
        }
    }
    Some(Window {
        day,
        start,
        len: end - start,
    })
}

/// `hour` (0-24) as the week prints it: `19:00`.
pub fn clock(hour: usize) -> String {
    format!("{:02}:00", hour % 24)
}

/// The sentence under the heatmap: when it is usually busiest, or that the
/// last four weeks had no players.
pub fn sentence(window: Option<Window>) -> String {
    match window {
        Some(w) => tf(
            K::WeekBusiest,
            &[
                &t(DAYS_PLURAL[w.day % 7]),
                &clock(w.start),
                &clock(w.start + w.len),
            ],
        ),
        None => t(K::WeekQuiet).to_owned(),
    }
}

/// How strong an hour's colour is, 0 (no players or no samples) to 4 (as
/// busy as the busiest hour), by its mean players against `most`.
pub fn level(h: &WeekHour, most: f64) -> u8 {
    match players(h) {
        Some(p) if p > 0.0 && most > 0.0 => (1.0 + (p / most * 3.0).round()).min(4.0) as u8,
        _ => 0,
    }
}

/// The most players on average in any hour of `local`.
pub fn most(local: &[WeekHour]) -> f64 {
    local.iter().filter_map(players).fold(0.0, f64::max)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn week(busy: &[(usize, f64)]) -> Vec<WeekHour> {
        let mut hours = vec![WeekHour(None, None, None, None); WEEK_HOURS];
        for &(i, p) in busy {
            hours[i] = WeekHour(Some(p), Some(p.ceil() as u32), Some(1.0), Some(0.5));
        }
        hours
    }

    #[test]
    fn utc_hours_move_by_the_offset_and_wrap_around_the_week() {
        let utc = week(&[(0, 1.0), (167, 2.0), (5 * 24 + 18, 3.0)]);
        let berlin = to_local(&utc, 3_600_000.0);
        assert_eq!(
            berlin[1].0,
            Some(1.0),
            "Monday 00:00 UTC is 01:00 in Berlin"
        );
        assert_eq!(berlin[0].0, Some(2.0), "Sunday 23:00 UTC is Monday 00:00");
        assert_eq!(berlin[5 * 24 + 19].0, Some(3.0));
        let new_york = to_local(&utc, -5.0 * 3_600_000.0);
        assert_eq!(
            new_york[167 - 4].0,
            Some(1.0),
            "Sunday 19:00 the day before"
        );
        let india = to_local(&utc, 5.5 * 3_600_000.0);
        assert_eq!(india[6].0, Some(1.0), "half an hour rounds to the nearest");
        assert_eq!(to_local(&utc, 0.0), utc);
        assert_eq!(to_local(&[], 0.0).len(), WEEK_HOURS);
    }

    #[test]
    fn the_busiest_window_grows_around_the_busiest_hour_within_its_day() {
        let sat = 5 * 24;
        let local = week(&[
            (sat + 18, 1.0),
            (sat + 19, 3.0),
            (sat + 20, 4.0),
            (sat + 21, 3.5),
            (sat + 22, 3.0),
            (sat + 23, 1.0),
            (2 * 24 + 20, 3.9),
        ]);
        let w = busiest(&local).expect("a window");
        assert_eq!((w.day, w.start, w.len), (5, 19, 4));
        // At most six hours, and never past midnight.
        let long: Vec<(usize, f64)> = (0..24).map(|h| (h, 2.0)).collect();
        let w = busiest(&week(&long)).unwrap();
        assert_eq!((w.day, w.start, w.len), (0, 0, 6));
        let late = busiest(&week(&[(23, 2.0), (24, 2.0)])).unwrap();
        assert_eq!((late.day, late.start, late.len), (0, 23, 1));
        assert_eq!(busiest(&week(&[])), None, "no samples");
        assert_eq!(busiest(&week(&[(3, 0.0)])), None, "nobody played");
    }

    #[test]
    fn the_sentence_names_the_day_and_hours() {
        crate::i18n::set_lang(crate::i18n::Lang::En);
        let w = Window {
            day: 5,
            start: 19,
            len: 4,
        };
        assert_eq!(
            sentence(Some(w)),
            "Usually busiest on Saturdays, 19:00–23:00."
        );
        let late = Window {
            day: 6,
            start: 20,
            len: 4,
        };
        assert_eq!(
            sentence(Some(late)),
            "Usually busiest on Sundays, 20:00–00:00."
        );
        assert_eq!(sentence(None), t(K::WeekQuiet));
        crate::i18n::set_lang(crate::i18n::Lang::De);
        assert_eq!(
            sentence(Some(w)),
            "Meist am vollsten samstags, 19:00–23:00 Uhr."
        );
        crate::i18n::set_lang(crate::i18n::Lang::En);
    }

    #[test]
    fn levels_scale_with_the_busiest_hour() {
        let local = week(&[(0, 4.0), (1, 1.0), (2, 0.0)]);
        let most = most(&local);
        assert_eq!(most, 4.0);
        assert_eq!(level(&local[0], most), 4);
        assert_eq!(level(&local[1], most), 2);
        assert_eq!(level(&local[2], most), 0);
        assert_eq!(level(&local[3], most), 0);
    }
}
