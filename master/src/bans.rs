//! The ban list (`--ban-file`): addresses and networks whose connections the
//! master closes at once. One entry a line, `ADDRESS-OR-CIDR [reason…]`;
//! `#` starts a comment. A bad line is reported with its number and skipped,
//! so one typo does not lift every other ban on a reload.

use std::{fmt, net::IpAddr, path::Path};

use ipnet::IpNet;

/// One banned network and why it was banned.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Ban {
    pub net: IpNet,
    /// The rest of the line after the address, possibly empty.
    pub reason: String,
}

/// Banned networks; empty by default.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct BanList {
    bans: Vec<Ban>,
}

/// A line of a ban file that could not be read; the line is skipped.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("line {line}: {message}")]
pub struct BadLine {
    /// 1-based, as editors count.
    pub line: usize,
    pub message: String,
}

/// Why a ban file could not be read at all.
#[derive(Debug, thiserror::Error)]
#[error("cannot read the ban file {path}")]
pub struct LoadError {
    pub path: String,
    #[source]
    pub source: std::io::Error,
}

impl BanList {
    /// Parses a ban file's text; the bad lines come back beside the list.
    pub fn parse(text: &str) -> (Self, Vec<BadLine>) {
        let mut bans = Vec::new();
        let mut bad = Vec::new();
        for (i, raw) in text.lines().enumerate() {
            let line = raw.split('#').next().unwrap_or("").trim();
            if line.is_empty() {
                continue;
            }
            let (addr, reason) = match line.split_once(char::is_whitespace) {
                Some((a, r)) => (a, r.trim()),
                None => (line, ""),
            };
            match parse_net(addr) {
                Some(net) => bans.push(Ban {
                    net,
                    reason: reason.to_owned(),
                }),
                None => bad.push(BadLine {
                    line: i + 1,
                    message: format!(
                        "{:?} is neither an IP address nor a CIDR network",
                        crate::logtext::cut(addr).to_string()
                    ),
                }),
            }
        }
        (Self { bans }, bad)
    }

    /// Reads and parses the ban file at `path`.
    pub fn load(path: &Path) -> Result<(Self, Vec<BadLine>), LoadError> {
        let text = std::fs::read_to_string(path).map_err(|source| LoadError {
            path: path.display().to_string(),
            source,
        })?;
        Ok(Self::parse(&text))
    }

    /// Reads the ban file at `path` as a server does at start and on
    /// SIGHUP: each bad line is logged (WARN, with its number) and skipped.
    pub fn load_logged(path: &Path) -> Result<Self, LoadError> {
        let (bans, bad) = Self::load(path)?;
        for line in &bad {
            tracing::warn!(file = %path.display(), "skipping a bad ban-file {line}");
        }
        Ok(bans)
    }

    /// The ban that covers `ip`, if any (the first in file order).
    pub fn find(&self, ip: IpAddr) -> Option<&Ban> {
        let ip = ip.to_canonical();
        self.bans.iter().find(|b| b.net.contains(&ip))
    }

    pub fn len(&self) -> usize {
        self.bans.len()
    }

    pub fn is_empty(&self) -> bool {
        self.bans.is_empty()
    }
}

/// `1.2.3.4`, `1.2.3.0/24`, `2001:db8::/32`; host bits set in a CIDR are
/// accepted and cleared (`1.2.3.4/24` bans `1.2.3.0/24`).
pub fn parse_net(s: &str) -> Option<IpNet> {
    if let Ok(ip) = s.parse::<IpAddr>() {
        return Some(IpNet::from(ip.to_canonical()));
    }
    s.parse::<IpNet>().ok().map(|n| n.trunc())
}

impl fmt::Display for Ban {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.reason.is_empty() {
            write!(f, "{}", self.net)
        } else {
            write!(f, "{} ({})", self.net, self.reason)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_addresses_networks_reasons_and_comments() {
        let text = "# banned hosts\n\
                    192.0.2.7 spams registrations\n\
                    \n\
                    198.51.100.0/24   # a whole network, no reason\n\
                    2001:db8::/32 fake servers # since Tuesday\n\
                    not-an-address flood\n\
                    10.0.0.300\n\
                    ::1\n";
        let (list, bad) = BanList::parse(text);
        assert_eq!(list.len(), 4);
        let ban = list.find("192.0.2.7".parse().unwrap()).unwrap();
        assert_eq!(ban.reason, "spams registrations");
        assert!(list.find("192.0.2.8".parse().unwrap()).is_none());
        let net = list.find("198.51.100.200".parse().unwrap()).unwrap();
        assert_eq!(net.reason, "");
        assert_eq!(
            list.find("2001:db8:1::5".parse().unwrap()).unwrap().reason,
            "fake servers"
        );
        assert!(list.find("::1".parse().unwrap()).is_some());
        // IPv4 peers of a dual-stack listener appear IPv4-mapped.
        assert!(list.find("::ffff:192.0.2.7".parse().unwrap()).is_some());
        assert_eq!(
            bad.iter().map(|b| b.line).collect::<Vec<_>>(),
            [6, 7],
            "{bad:?}"
        );
        assert!(bad[0].to_string().starts_with("line 6: \"not-an-address\""));
    }

    #[test]
    fn host_bits_in_a_cidr_are_cleared() {
        let (list, bad) = BanList::parse("192.0.2.77/24\n");
        assert!(bad.is_empty());
        assert!(list.find("192.0.2.1".parse().unwrap()).is_some());
    }
}
