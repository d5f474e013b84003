//! What the bridge records about servers and the lobby (`docs/protocol.md`
//! §4.6) as the page shows it: the histories of `/api/servers/{key}/history`
//! and `/api/history` (read as the protocol's `api::ServerHistory` and
//! `api::LobbyHistory`), the ranges the page asks for, and the figures it
//! derives from the points (peak, average, uptime and open shares). Plain
//! data, tested natively.

use protocol::api::{self, HistoryRange};

use crate::i18n::K;

/// A range of history the page shows.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Span {
    Hour,
    Day,
    Week,
    Month,
}

impl Span {
    /// The server page's tabs, in order.
    pub const ALL: [Span; 4] = [Span::Day, Span::Week, Span::Month, Span::Hour];

    /// The range of the API this tab shows.
    pub fn range(self) -> HistoryRange {
        match self {
            Span::Hour => HistoryRange::Hour,
            Span::Day => HistoryRange::Day,
            Span::Week => HistoryRange::Week,
            Span::Month => HistoryRange::Month,
        }
    }

    /// The `range=` value.
    pub fn as_str(self) -> &'static str {
        self.range().as_str()
    }

    /// How far back the range reaches.
    pub fn span_ms(self) -> f64 {
        const H: f64 = 3_600_000.0;
        match self {
            Span::Hour => H,
            Span::Day => 24.0 * H,
            Span::Week => 7.0 * 24.0 * H,
            Span::Month => 30.0 * 24.0 * H,
        }
    }

    /// The distance between the time axis' labels.
    pub fn tick_ms(self) -> f64 {
        const H: f64 = 3_600_000.0;
        match self {
            Span::Hour => H / 4.0,
            Span::Day => 6.0 * H,
            Span::Week => 24.0 * H,
            Span::Month => 7.0 * 24.0 * H,
        }
    }

    /// Whether the time axis names times of day (else dates).
    pub fn shows_times(self) -> bool {
        matches!(self, Span::Hour | Span::Day)
    }

    /// The tab's label ("24 h").
    pub fn label(self) -> K {
        match self {
            Span::Hour => K::Span1h,
            Span::Day => K::Span24h,
            Span::Week => K::Span7d,
            Span::Month => K::Span30d,
        }
    }

    /// "the last 24 hours", for the graph's text summary.
    pub fn phrase(self) -> K {
        match self {
            Span::Hour => K::LastHour,
            Span::Day => K::Last24Hours,
            Span::Week => K::Last7Days,
            Span::Month => K::Last30Days,
        }
    }

    /// The range named by a `range=` value.
    pub fn parse(s: &str) -> Option<Span> {
        Span::ALL.into_iter().find(|r| r.as_str() == s)
    }
}

/// One point of a server's history: `[t, players, max, online, open]`.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct ServerPoint {
    /// Start of the interval, Unix ms.
    pub t: f64,
    /// Mean players while online; `None` if offline throughout.
    pub players: Option<f64>,
    /// Share of the interval online, 0 to 1.
    pub online: f64,
    /// Share of the interval with the lobby open, 0 to 1.
    pub open: f64,
}

/// `GET /api/servers/{key}/history?range=R`.
#[derive(Debug, Clone, PartialEq)]
pub struct ServerHistory {
    /// Seconds between points.
    pub step: f64,
    pub points: Vec<ServerPoint>,
}

/// One point of the lobby's totals: `[t, servers, players]`.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct LobbyPoint {
    pub t: f64,
    pub servers: f64,
    pub players: f64,
}

/// `GET /api/history?range=R`.
#[derive(Debug, Clone, PartialEq)]
pub struct LobbyHistory {
    pub step: f64,
    pub points: Vec<LobbyPoint>,
}

impl ServerHistory {
    /// From the bridge's answer.
    pub fn from_answer(answer: api::ServerHistory) -> ServerHistory {
        let points = answer
            .points
            .iter()
            .map(
                |&api::ServerPoint(t, players, _max, online, open)| ServerPoint {
                    t: t as f64,
                    players,
                    online,
                    open,
                },
            )
            .collect();
        ServerHistory {
            step: answer.step as f64,
            points,
        }
    }

    /// The players over time.
    pub fn players(&self) -> Series {
        self.points.iter().map(|p| (p.t, p.players)).collect()
    }

    /// The share of the recorded intervals the server was online, and had
    /// its lobby open (`None` without points). Intervals in which the
    /// bridge recorded nothing do not count either way.
    pub fn shares(&self) -> Option<(f64, f64)> {
        let n = self.points.len() as f64;
        if n == 0.0 {
            return None;
        }
        let online = self.points.iter().map(|p| p.online).sum::<f64>() / n;
        let open = self.points.iter().map(|p| p.open).sum::<f64>() / n;
        Some((online.clamp(0.0, 1.0), open.clamp(0.0, 1.0)))
    }
}

impl LobbyHistory {
    /// From the bridge's answer.
    pub fn from_answer(answer: api::LobbyHistory) -> LobbyHistory {
        let points = answer
            .points
            .iter()
            .map(|&api::LobbyPoint(t, servers, players)| LobbyPoint {
                t: t as f64,
                servers,
                players,
            })
            .collect();
        LobbyHistory {
            step: answer.step as f64,
            points,
        }
    }

    /// Servers online over time.
    pub fn servers(&self) -> Series {
        self.points.iter().map(|p| (p.t, Some(p.servers))).collect()
    }

    /// Players online over time.
    pub fn players(&self) -> Series {
        self.points.iter().map(|p| (p.t, Some(p.players))).collect()
    }
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
    fn ranges_round_trip() {
        for r in Span::ALL {
            assert_eq!(Span::parse(r.as_str()), Some(r));
            assert_eq!(HistoryRange::parse(r.as_str()), Some(r.range()));
        }
        assert_eq!(Span::parse("1y"), None);
        assert_eq!(Span::Day.span_ms(), 86_400_000.0);
    }

    #[test]
    fn answers_read_as_the_bridge_writes_them() {
        let answer: api::ServerHistory = serde_json::from_str(
            r#"{"key":"0123456789abcdef","range":"24h","step":60,
                "points":[[0,2.5,4,1,0.5],[60000,null,null,0,0]]}"#,
        )
        .unwrap();
        let h = ServerHistory::from_answer(answer);
        assert_eq!(h.step, 60.0);
        assert_eq!(h.players(), vec![(0.0, Some(2.5)), (60_000.0, None)]);
        assert_eq!(h.shares(), Some((0.5, 0.25)));

        let answer: api::LobbyHistory =
            serde_json::from_str(r#"{"range":"24h","step":60,"points":[[0,2,7.5]]}"#).unwrap();
        let l = LobbyHistory::from_answer(answer);
        assert_eq!(l.servers(), vec![(0.0, Some(2.0))]);
        assert_eq!(l.players(), vec![(0.0, Some(7.5))]);
    }

    #[test]
    fn no_points_no_shares() {
        let h = ServerHistory {
            step: 60.0,
            points: Vec::new(),
        };
        assert_eq!(h.shares(), None);
        assert_eq!(figures(&h.players()), None);
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
