//! What the bridge records about servers and the lobby (`docs/protocol.md`
//! §4.6) as the page shows it: the histories of `/api/servers/{key}/history`
//! and `/api/history` (kept as read, the protocol's `api::ServerHistory`
//! and `api::LobbyHistory`), the ranges the page asks for, the series it
//! draws from the points, and the figures it derives from them (peak,
//! average, uptime and open shares). Plain data, tested natively.

use protocol::api::{HistoryRange, LobbyHistory, LobbyPoint, ServerHistory, ServerPoint};

use crate::i18n::K;

/// The server page's range tabs, in order (the protocol's
/// `HistoryRange` is the one name of a range, from the page's state to the
/// query string).
pub const TABS: [HistoryRange; 6] = [
    HistoryRange::Day,
    HistoryRange::Week,
    HistoryRange::Month,
    HistoryRange::Quarter,
    HistoryRange::Year,
    HistoryRange::Hour,
];

/// How the page draws and names a range: a trait because the range is the
/// protocol's type and its axis and words are the page's.
pub trait RangeLabels: Copy {
    /// The distance between the time axis' labels.
    fn tick_ms(self) -> f64;
    /// Whether the time axis names times of day (else dates).
    fn shows_times(self) -> bool;
    /// The tab's label ("24 h").
    fn label(self) -> K;
    /// "the last 24 hours", for the graph's text summary.
    fn phrase(self) -> K;
}

impl RangeLabels for HistoryRange {
    fn tick_ms(self) -> f64 {
        const H: f64 = 3_600_000.0;
        match self {
            HistoryRange::Hour => H / 4.0,
            HistoryRange::Day => 6.0 * H,
            HistoryRange::Week => 24.0 * H,
            HistoryRange::Month => 7.0 * 24.0 * H,
            HistoryRange::Quarter => 14.0 * 24.0 * H,
            HistoryRange::Year => 61.0 * 24.0 * H,
        }
    }

    fn shows_times(self) -> bool {
        matches!(self, HistoryRange::Hour | HistoryRange::Day)
    }

    fn label(self) -> K {
        match self {
            HistoryRange::Hour => K::Span1h,
            HistoryRange::Day => K::Span24h,
            HistoryRange::Week => K::Span7d,
            HistoryRange::Month => K::Span30d,
            HistoryRange::Quarter => K::Span90d,
            HistoryRange::Year => K::Span1y,
        }
    }

    fn phrase(self) -> K {
        match self {
            HistoryRange::Hour => K::LastHour,
            HistoryRange::Day => K::Last24Hours,
            HistoryRange::Week => K::Last7Days,
            HistoryRange::Month => K::Last30Days,
            HistoryRange::Quarter => K::Last90Days,
            HistoryRange::Year => K::LastYear,
        }
    }
}

/// The players over a server's history.
pub fn players(history: &ServerHistory) -> Series {
    history
        .points
        .iter()
        .map(|&ServerPoint(t, players, ..)| (t as f64, players))
        .collect()
}

/// The most players at one sample over a server's history, drawn over
/// the mean (`None` where offline throughout, or recorded before peaks
/// were).
pub fn peaks(history: &ServerHistory) -> Series {
    history
        .points
        .iter()
        .map(|&ServerPoint(t, .., peak)| (t as f64, peak.map(f64::from)))
        .collect()
}

/// The share of the recorded intervals the server was online, and had its
/// lobby open (`None` without points). Intervals in which the bridge
/// recorded nothing do not count either way.
pub fn shares(history: &ServerHistory) -> Option<(f64, f64)> {
    let points = &history.points;
    let n = points.len() as f64;
    if n == 0.0 {
        return None;
    }
    let online: f64 = points
        .iter()
        .map(|&ServerPoint(_, _, _, online, ..)| online)
        .sum();
    let open: f64 = points
        .iter()
        .map(|&ServerPoint(_, _, _, _, open, _)| open)
        .sum();
    Some(((online / n).clamp(0.0, 1.0), (open / n).clamp(0.0, 1.0)))
}

/// The lobby's servers online over time.
pub fn servers_online(history: &LobbyHistory) -> Series {
    history
        .points
        .iter()
        .map(|&LobbyPoint(t, servers, ..)| (t as f64, Some(servers)))
        .collect()
}

/// The lobby's players online over time.
pub fn players_online(history: &LobbyHistory) -> Series {
    history
        .points
        .iter()
        .map(|&LobbyPoint(t, _, players, _)| (t as f64, Some(players)))
        .collect()
}

/// The lobby's most players online at one sample over time.
pub fn peak_players(history: &LobbyHistory) -> Series {
    history
        .points
        .iter()
        .map(|&LobbyPoint(t, _, _, peak)| (t as f64, peak.map(f64::from)))
        .collect()
}

/// The CSV form of an answer at `path` (`/api/history?range=24h`,
/// `/api/week`), for the graphs' download link.
pub fn csv_link(path: &str) -> String {
    let sep = if path.contains('?') { '&' } else { '?' };
    format!("{path}{sep}format=csv")
}

/// A history's step (seconds between points) in milliseconds, as a graph
/// takes it.
pub fn step_ms(step: u64) -> f64 {
    step as f64 * 1000.0
}

/// One value over time, as a graph draws it: `(t, value)`, `None` where
/// the interval has samples but no value (a server offline throughout).
pub type Series = Vec<(f64, Option<f64>)>;

/// What a series' text alternative says.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Figures {
    /// The highest value and the start of its interval (the first, if
    /// several are as high).
    pub peak: (f64, f64),
    /// The mean of the values.
    pub average: f64,
}

/// The peak and the average of `series` (`None` when it has no value).
pub fn figures(series: &[(f64, Option<f64>)]) -> Option<Figures> {
    let mut peak: Option<(f64, f64)> = None;
    let (mut sum, mut n) = (0.0, 0.0);
    for &(t, v) in series {
        let Some(v) = v.filter(|v| v.is_finite()) else {
            continue;
        };
        sum += v;
        n += 1.0;
        if peak.is_none_or(|(p, _)| v > p) {
            peak = Some((v, t));
        }
    }
    peak.map(|peak| Figures {
        peak,
        average: sum / n,
    })
}

/// A number as the page prints a mean: at most one decimal, none when
/// whole (`3`, `3.4`).
pub fn one_decimal(v: f64) -> String {
    crate::graph::tenths(v)
}

/// A share as a whole percentage (`97 %`), so 0.996 is `100 %`.
pub fn percent(share: f64) -> String {
    format!("{} %", (share.clamp(0.0, 1.0) * 100.0).round() as u32)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_range_has_a_tab_with_labels_inside_it() {
        let mut tabs = TABS.to_vec();
        tabs.sort_by_key(|r| r.span_ms());
        assert_eq!(tabs, HistoryRange::ALL, "each range once");
        for r in TABS {
            assert!(
                r.tick_ms() < r.span_ms() as f64,
                "{r:?}: more than one label"
            );
        }
    }

    #[test]
    fn answers_read_as_the_bridge_writes_them() {
        let h: ServerHistory = serde_json::from_str(
            r#"{"key":"0123456789abcdef","range":"24h","step":60,
                "points":[[0,2.5,4,1,0.5,4],[60000,null,null,0,0,null]]}"#,
        )
        .unwrap();
        assert_eq!(step_ms(h.step), 60_000.0);
        assert_eq!(players(&h), vec![(0.0, Some(2.5)), (60_000.0, None)]);
        assert_eq!(peaks(&h), vec![(0.0, Some(4.0)), (60_000.0, None)]);
        assert_eq!(shares(&h), Some((0.5, 0.25)));

        let l: LobbyHistory =
            serde_json::from_str(r#"{"range":"24h","step":60,"points":[[0,2,7.5]]}"#).unwrap();
        assert_eq!(servers_online(&l), vec![(0.0, Some(2.0))]);
        assert_eq!(players_online(&l), vec![(0.0, Some(7.5))]);
        assert_eq!(peak_players(&l), vec![(0.0, None)], "an older bridge");
        assert_eq!(csv_link("/api/week"), "/api/week?format=csv");
        assert_eq!(
            csv_link("/api/history?range=24h"),
            "/api/history?range=24h&format=csv"
        );
    }

    #[test]
    fn no_points_no_shares() {
        let h = ServerHistory {
            key: protocol::ServerKey(1),
            range: HistoryRange::Hour,
            step: 60,
            points: Vec::new(),
        };
        assert_eq!(shares(&h), None);
        assert_eq!(figures(&players(&h)), None);
    }

    #[test]
    fn peak_is_the_first_highest_and_nulls_do_not_count() {
        let s = vec![
            (0.0, Some(1.0)),
            (1.0, None),
            (2.0, Some(4.0)),
            (3.0, Some(4.0)),
            (4.0, Some(1.0)),
        ];
        let f = figures(&s).expect("figures");
        assert_eq!(f.peak, (4.0, 2.0));
        assert_eq!(f.average, 2.5);
    }

    #[test]
    fn numbers_print_short() {
        assert_eq!(one_decimal(3.0), "3");
        assert_eq!(one_decimal(3.44), "3.4");
        assert_eq!(one_decimal(2.96), "3");
        assert_eq!(percent(0.996), "100 %");
        assert_eq!(percent(0.5), "50 %");
        assert_eq!(percent(1.2), "100 %");
    }
}
