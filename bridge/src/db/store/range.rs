//! The ranges the history is asked for (`docs/protocol.md` §2.2), which
//! tier of the storage answers each, and the `step` rule: the smallest
//! multiple of the tier's resolution that gives at most
//! [`MAX_POINTS`] points.

use protocol::api::HistoryRange;

/// The most points one answer carries.
pub const MAX_POINTS: i64 = 1_500;

/// Where a range's points come from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Tier {
    /// Every sample (kept 48 h): resolution the sample interval.
    Samples,
    /// Hourly sums (kept 90 days).
    Hourly,
    /// Daily sums (kept 2 years).
    Daily,
}

/// What the storage makes of a range (`protocol::api::HistoryRange`,
/// the one name of a range from the query string to the page): which tier
/// answers it and the window of its points. A trait because the range is
/// the protocol's type and its tiers are the store's business.
pub trait Window: Copy {
    /// The tier kept for the whole range.
    fn tier(self) -> Tier;

    /// The tier, the step (ms) and the start of the oldest interval of this
    /// range ending at `now`, for samples taken every `sample_ms` (whole
    /// seconds, at least one). Intervals are aligned to multiples of the
    /// step since the Unix epoch; the newest is the one holding `now`.
    fn window(self, sample_ms: i64, now: i64) -> (Tier, i64, i64);
}

impl Window for HistoryRange {
    fn tier(self) -> Tier {
        match self {
            Self::Hour | Self::Day => Tier::Samples,
            Self::Week | Self::Month | Self::Quarter => Tier::Hourly,
            Self::Year => Tier::Daily,
        }
    }

    fn window(self, sample_ms: i64, now: i64) -> (Tier, i64, i64) {
        let tier = self.tier();
        let resolution = match tier {
            Tier::Samples => (sample_ms / 1000).max(1) * 1000,
            Tier::Hourly => 3_600_000,
            Tier::Daily => 86_400_000,
        };
        let span = self.span_ms();
        let multiple = (span + resolution * MAX_POINTS - 1) / (resolution * MAX_POINTS);
        let step = resolution * multiple.max(1);
        let points = (span + step - 1) / step;
        let from = (now.div_euclid(step) + 1 - points) * step;
        (tier, step, from)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn steps_are_the_smallest_multiple_within_the_cap() {
        let now = 1_700_000_000_123;
        let minute = 60_000;
        assert_eq!(HistoryRange::Hour.window(minute, now).1, 60_000);
        assert_eq!(
            HistoryRange::Day.window(minute, now).1,
            60_000,
            "1440 points"
        );
        assert_eq!(
            HistoryRange::Hour.window(1000, now).1,
            3_000,
            "3600 samples: 1200 points"
        );
        assert_eq!(
            HistoryRange::Day.window(1000, now).1,
            58_000,
            "86400/58 = 1490 points"
        );
        assert_eq!(
            HistoryRange::Week.window(minute, now),
            (
                Tier::Hourly,
                3_600_000,
                HistoryRange::Week.window(minute, now).2
            )
        );
        assert_eq!(HistoryRange::Year.window(minute, now).1, 86_400_000);
        assert_eq!(
            HistoryRange::Quarter.window(minute, now).0,
            Tier::Hourly,
            "90 days of hourly sums"
        );
        assert_eq!(
            HistoryRange::Quarter.window(minute, now).1,
            2 * 3_600_000,
            "2160 hours: 1080 points"
        );
        for range in HistoryRange::ALL {
            for sample in [1000, 60_000, 3_600_000] {
                let (_, step, from) = range.window(sample, now);
                let intervals = (now - from) / step + 1;
                assert!(intervals <= MAX_POINTS, "{range:?} {sample}");
                assert_eq!(from % step, 0);
                assert!(now - from >= range.span_ms() - step);
            }
            assert_eq!(HistoryRange::parse(range.as_str()), Some(range));
        }
        assert_eq!(HistoryRange::parse("2h"), None);
        assert_eq!(HistoryRange::parse(""), None);
    }
}
