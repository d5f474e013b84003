//! Which records of a GameAgent master's list may be queried. A master is a
//! stranger on the internet: its list could aim our UDP queries at loopback,
//! the LAN or anyone else, list one server a thousand times, or name ports
//! whose query port (game port + 1) is 0. [`screen_master_list`] keeps what a
//! real public server could be and counts what it dropped.

use std::{collections::HashSet, net::SocketAddrV4};

/// Whether `ip` can be a public unicast host: the one rule of
/// `protocol::address` (IANA's special-purpose registries), which the
/// bridge's webhooks and push endpoints use too.
pub use protocol::address::{is_global, is_global_v4};

/// How much of a master's list to trust.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ListPolicy {
    /// Keep loopback, private and other non-global addresses (tests, LAN
    /// masters); off on the internet.
    pub allow_private: bool,
    /// Records kept at most, in the master's order (after dropping the
    /// others).
    pub max_servers: usize,
}

/// What [`screen_master_list`] dropped, by reason.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Skipped {
    /// Non-global addresses (see [`is_global_v4`]).
    pub non_global: usize,
    /// Records listed before.
    pub duplicate: usize,
    /// Game port 0, or 65535 (whose query port would be 0).
    pub bad_port: usize,
    /// Good records beyond [`ListPolicy::max_servers`].
    pub over_cap: usize,
}

impl Skipped {
    /// Records dropped for any reason.
    pub fn total(&self) -> usize {
        self.non_global + self.duplicate + self.bad_port + self.over_cap
    }
}

/// A master's list after screening.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Screened {
    /// The records to query, in the master's order.
    pub servers: Vec<SocketAddrV4>,
    pub skipped: Skipped,
}

/// Keeps the records of `list` that may be queried under `policy`: game
/// port neither 0 nor 65535 (always), a global address (unless
/// `allow_private`), each record once, at most `max_servers` of them.
pub fn screen_master_list(list: &[SocketAddrV4], policy: ListPolicy) -> Screened {
    let mut out = Screened::default();
    let mut seen = HashSet::with_capacity(list.len().min(policy.max_servers));
    for &record in list {
        if record.port() == 0 || record.port() == u16::MAX {
            out.skipped.bad_port += 1;
        } else if !policy.allow_private && !is_global_v4(*record.ip()) {
            out.skipped.non_global += 1;
        } else if seen.contains(&record) {
            out.skipped.duplicate += 1;
        } else if out.servers.len() >= policy.max_servers {
            out.skipped.over_cap += 1;
        } else {
            seen.insert(record);
            out.servers.push(record);
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use std::net::Ipv4Addr;

    use super::*;

    fn v4(s: &str) -> Ipv4Addr {
        s.parse().unwrap()
    }

    #[test]
    fn non_global_ranges() {
        for ip in [
            "0.0.0.0",
            "0.1.2.3",
            "10.0.0.1",
            "10.255.255.255",
            "100.64.0.1",
            "100.127.255.254",
            "127.0.0.1",
            "127.1.2.3",
            "169.254.1.1",
            "172.16.0.1",
            "172.31.255.255",
            "192.0.0.8",
            "192.0.2.7",
            "192.88.99.1",
            "192.168.1.1",
            "198.18.0.1",
            "198.19.255.255",
            "198.51.100.3",
            "203.0.113.9",
            "224.0.0.1",
            "239.255.255.250",
            "240.0.0.1",
            "255.255.255.255",
        ] {
            assert!(!is_global_v4(v4(ip)), "{ip} counted as global");
        }
    }

    #[test]
    fn global_neighbours_of_the_ranges() {
        for ip in [
            "1.1.1.1",
            "9.255.255.255",
            "11.0.0.0",
            "100.63.255.255",
            "100.128.0.0",
            "126.255.255.255",
            "128.0.0.0",
            "169.253.255.255",
            "172.15.255.255",
            "172.32.0.0",
            "192.0.1.1",
            "192.167.255.255",
            "192.169.0.0",
            "198.17.255.255",
            "198.20.0.0",
            "203.0.114.1",
            "223.255.255.255",
            "77.111.194.110",
        ] {
            assert!(is_global_v4(v4(ip)), "{ip} counted as not global");
        }
    }

    #[test]
    fn ipv6() {
        for ip in [
            "::",
            "::1",
            "ff02::1",
            "fd00::1",
            "fe80::1",
            "2001:db8::1",
            "::ffff:10.0.0.1",
            "::ffff:127.0.0.1",
            "::127.0.0.1",
            "::169.254.169.254",
            "64:ff9b::a9fe:a9fe",
            "64:ff9b::7f00:1",
            "2002:7f00:1::1",
            "2002:c0a8:101::1",
            "fec0::1",
            // IANA: IPv4-mapped is not globally reachable, 6to4 "N/A".
            "::ffff:1.1.1.1",
            "2002:101:101::1",
        ] {
            assert!(!is_global(ip.parse().unwrap()), "{ip}");
        }
        for ip in ["2a00:1450::1", "64:ff9b::101:101"] {
            assert!(is_global(ip.parse().unwrap()), "{ip}");
        }
    }

    fn rec(s: &str) -> SocketAddrV4 {
        s.parse().unwrap()
    }

    #[test]
    fn screening_drops_and_counts() {
        let list = [
            rec("1.1.1.1:25600"),
            rec("127.0.0.1:25600"),
            rec("192.168.0.2:25600"),
            rec("1.1.1.1:25600"),
            rec("1.1.1.1:0"),
            rec("1.1.1.1:65535"),
            rec("8.8.8.8:25600"),
            rec("9.9.9.9:25600"),
        ];
        let strict = ListPolicy {
            allow_private: false,
            max_servers: 2,
        };
        let s = screen_master_list(&list, strict);
        assert_eq!(s.servers, [rec("1.1.1.1:25600"), rec("8.8.8.8:25600")]);
        assert_eq!(
            s.skipped,
            Skipped {
                non_global: 2,
                duplicate: 1,
                bad_port: 2,
                over_cap: 1
            }
        );
        assert_eq!(s.skipped.total() + s.servers.len(), list.len());

        let open = ListPolicy {
            allow_private: true,
            max_servers: 512,
        };
        let s = screen_master_list(&list, open);
        assert_eq!(s.servers.len(), 5);
        assert_eq!(s.skipped.bad_port, 2, "ports 0 and 65535 stay out");
        assert_eq!(s.skipped.duplicate, 1);
        assert_eq!(s.skipped.non_global, 0);
    }

    #[test]
    fn a_huge_list_is_capped() {
        let list: Vec<_> = (0..10_000u32)
            .map(|i| SocketAddrV4::new(Ipv4Addr::from(0x0101_0000 + i), 25600))
            .collect();
        let s = screen_master_list(
            &list,
            ListPolicy {
                allow_private: false,
                max_servers: 512,
            },
        );
        assert_eq!(s.servers.len(), 512);
        assert_eq!(s.skipped.over_cap, 10_000 - 512);
    }
}
