//! The value types of the command line: durations, counts that must not be
//! zero, and networks.

use std::{fmt, str::FromStr, time::Duration};

use ipnet::IpNet;

/// A duration on the command line: "1s", "250ms", "2m" or plain
/// milliseconds; shown like "1s" (so `--help` prints the config's default).
#[derive(Debug, Clone, Copy)]
pub(crate) struct Interval(pub(crate) Duration);

impl FromStr for Interval {
    type Err = String;

    /// Zero is refused: a zero interval would spin or panic a task.
    fn from_str(s: &str) -> Result<Self, String> {
        let d = if !s.is_empty() && s.bytes().all(|b| b.is_ascii_digit()) {
            s.parse()
                .map(Duration::from_millis)
                .map_err(|e: std::num::ParseIntError| e.to_string())?
        } else {
            humantime::parse_duration(s).map_err(|e| e.to_string())?
        };
        if d.is_zero() {
            return Err("must be greater than zero".into());
        }
        Ok(Self(d))
    }
}

impl fmt::Display for Interval {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        humantime::format_duration(self.0).fmt(f)
    }
}

/// A count above zero: a cap of zero would refuse everyone.
pub(crate) fn count(s: &str) -> Result<usize, String> {
    match s.parse::<usize>().map_err(|e| e.to_string())? {
        0 => Err("must be greater than zero".into()),
        n => Ok(n),
    }
}

/// A count above zero that fits a `u32`.
pub(crate) fn count_u32(s: &str) -> Result<u32, String> {
    u32::try_from(count(s)?).map_err(|e| e.to_string())
}

/// A count above zero that fits a `u64` (a size in bytes).
pub(crate) fn count_u64(s: &str) -> Result<u64, String> {
    match s.parse::<u64>().map_err(|e| e.to_string())? {
        0 => Err("must be greater than zero".into()),
        n => Ok(n),
    }
}

/// A network (`10.0.0.0/8`, `2001:db8::/32`) or one address.
pub(crate) fn cidr(s: &str) -> Result<IpNet, String> {
    s.parse::<IpNet>()
        .or_else(|_| s.parse::<std::net::IpAddr>().map(IpNet::from))
        .map_err(|_| format!("{s:?} is neither an address nor a CIDR network"))
}

#[cfg(test)]
mod tests {
    use super::*;
    use bridge::Config;

    #[test]
    fn durations_are_humantime_or_milliseconds() {
        let parse = |s: &str| s.parse::<Interval>().map(|i| i.0);
        assert_eq!(parse("250"), Ok(Duration::from_millis(250)));
        assert_eq!(parse("1s"), Ok(Duration::from_secs(1)));
        assert_eq!(parse("2m"), Ok(Duration::from_secs(120)));
        assert!(parse("").is_err() && parse("soon").is_err());
        assert_eq!(parse("0"), Err("must be greater than zero".to_owned()));
        assert!(parse("0s").is_err());
        assert_eq!(Interval(Config::DEFAULT_POLL_INTERVAL).to_string(), "1s");
    }
}
