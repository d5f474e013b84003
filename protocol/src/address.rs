//! Which IP addresses the lobby may connect to on a stranger's word (a
//! webhook's URL, a push endpoint, a game server another game's master
//! lists): only globally reachable unicast ones. The rule is IANA's, not
//! a list that grows by finding: the "Globally Reachable" column of the
//! IPv4 and IPv6 Special-Purpose Address Registries, the most specific
//! entry deciding (`192.0.0.9/32` is reachable inside the unreachable
//! `192.0.0.0/24`); an entry whose column is "N/A" (6to4, Teredo, the
//! deprecated relay anycast and ORCHID) is not reachable, as what it
//! reaches is another address. Outside the registries, IPv6 is reachable
//! only within the global unicast space `2000::/3` (IANA's IPv6 Address
//! Space registry; everything else is reserved), IPv4 multicast and the
//! NAT64 prefix's embedded address are decided as what they reach.

use std::net::{IpAddr, Ipv4Addr, Ipv6Addr};

/// An entry's "Globally Reachable" column.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Reachable {
    /// "True".
    Yes,
    /// "False".
    No,
    /// "N/A": the block stands for other addresses (tunnels, deprecated).
    NotApplicable,
}

/// One registry entry: its block, its name and its column.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Entry<A> {
    pub network: A,
    pub prefix_len: u8,
    pub name: &'static str,
    pub reachable: Reachable,
}

const fn v4(
    a: u8,
    b: u8,
    c: u8,
    d: u8,
    prefix_len: u8,
    name: &'static str,
    r: Reachable,
) -> Entry<u32> {
    Entry {
        network: u32::from_be_bytes([a, b, c, d]),
        prefix_len,
        name,
        reachable: r,
    }
}

const fn v6(network: u128, prefix_len: u8, name: &'static str, r: Reachable) -> Entry<u128> {
    Entry {
        network,
        prefix_len,
        name,
        reachable: r,
    }
}

use Reachable::{No, NotApplicable, Yes};

/// The IANA IPv4 Special-Purpose Address Registry, and IPv4 multicast
/// (IANA's multicast registry: a group, never one host).
pub const IPV4_SPECIAL: [Entry<u32>; 26] = [
    v4(0, 0, 0, 0, 8, "\"This network\" (RFC 791)", No),
    v4(
        0,
        0,
        0,
        0,
        32,
        "\"This host on this network\" (RFC 1122)",
        No,
    ),
    v4(10, 0, 0, 0, 8, "Private-Use (RFC 1918)", No),
    v4(100, 64, 0, 0, 10, "Shared Address Space (RFC 6598)", No),
    v4(127, 0, 0, 0, 8, "Loopback (RFC 1122)", No),
    v4(169, 254, 0, 0, 16, "Link Local (RFC 3927)", No),
    v4(172, 16, 0, 0, 12, "Private-Use (RFC 1918)", No),
    v4(192, 0, 0, 0, 24, "IETF Protocol Assignments (RFC 6890)", No),
    v4(
        192,
        0,
        0,
        0,
        29,
        "IPv4 Service Continuity Prefix (RFC 7335)",
        No,
    ),
    v4(192, 0, 0, 8, 32, "IPv4 dummy address (RFC 7600)", No),
    v4(
        192,
        0,
        0,
        9,
        32,
        "Port Control Protocol Anycast (RFC 7723)",
        Yes,
    ),
    v4(
        192,
        0,
        0,
        10,
        32,
        "Traversal Using Relays around NAT Anycast (RFC 8155)",
        Yes,
    ),
    v4(192, 0, 0, 170, 32, "NAT64/DNS64 Discovery (RFC 7050)", No),
    v4(192, 0, 0, 171, 32, "NAT64/DNS64 Discovery (RFC 7050)", No),
    v4(
        192,
        0,
        2,
        0,
        24,
        "Documentation (TEST-NET-1) (RFC 5737)",
        No,
    ),
    v4(192, 31, 196, 0, 24, "AS112-v4 (RFC 7535)", Yes),
    v4(192, 52, 193, 0, 24, "AMT (RFC 7450)", Yes),
    v4(
        192,
        88,
        99,
        0,
        24,
        "Deprecated (6to4 Relay Anycast) (RFC 7526)",
        NotApplicable,
    ),
    v4(192, 168, 0, 0, 16, "Private-Use (RFC 1918)", No),
    v4(
        192,
        175,
        48,
        0,
        24,
        "Direct Delegation AS112 Service (RFC 7534)",
        Yes,
    ),
    v4(198, 18, 0, 0, 15, "Benchmarking (RFC 2544)", No),
    v4(
        198,
        51,
        100,
        0,
        24,
        "Documentation (TEST-NET-2) (RFC 5737)",
        No,
    ),
    v4(
        203,
        0,
        113,
        0,
        24,
        "Documentation (TEST-NET-3) (RFC 5737)",
        No,
    ),
    v4(224, 0, 0, 0, 4, "Multicast (RFC 5771)", No),
    v4(240, 0, 0, 0, 4, "Reserved (RFC 1112)", No),
    v4(255, 255, 255, 255, 32, "Limited Broadcast (RFC 919)", No),
];

/// The IANA IPv6 Special-Purpose Address Registry, and the IPv6 Address
/// Space registry's global unicast block (everything outside it is
/// reserved or multicast: not a host on the internet).
pub const IPV6_SPECIAL: [Entry<u128>; 28] = [
    v6(
        0,
        0,
        "Reserved by IETF, outside global unicast (IPv6 Address Space)",
        No,
    ),
    v6(0x2000 << 112, 3, "Global Unicast (IPv6 Address Space)", Yes),
    v6(1, 128, "Loopback Address (RFC 4291)", No),
    v6(0, 128, "Unspecified Address (RFC 4291)", No),
    v6(0xffff << 32, 96, "IPv4-mapped Address (RFC 4291)", No),
    v6(
        0xffff << 48,
        96,
        "IPv4-translated Address, SIIT (RFC 2765)",
        No,
    ),
    v6(0x64_ff9b << 96, 96, "IPv4-IPv6 Translat. (RFC 6052)", Yes),
    v6(
        (0x64_ff9b << 96) | (1 << 80),
        48,
        "IPv4-IPv6 Translat., local use (RFC 8215)",
        No,
    ),
    v6(
        0x100 << 112,
        64,
        "Discard-Only Address Block (RFC 6666)",
        No,
    ),
    v6(
        (0x100 << 112) | (1 << 64),
        64,
        "Dummy IPv6 Prefix (RFC 9780)",
        No,
    ),
    v6(
        0x2001 << 112,
        23,
        "IETF Protocol Assignments (RFC 2928)",
        No,
    ),
    v6(0x2001 << 112, 32, "TEREDO (RFC 4380)", NotApplicable),
    v6(
        (0x2001 << 112) | (1 << 96) | 1,
        128,
        "Port Control Protocol Anycast (RFC 7723)",
        Yes,
    ),
    v6(
        (0x2001 << 112) | (1 << 96) | 2,
        128,
        "Traversal Using Relays around NAT Anycast (RFC 8155)",
        Yes,
    ),
    v6(
        (0x2001 << 112) | (1 << 96) | 3,
        128,
        "DNS-SD Service Registration Protocol Anycast (RFC 9665)",
        Yes,
    ),
    v6(
        (0x2001 << 112) | (2 << 96),
        48,
        "Benchmarking (RFC 5180)",
        No,
    ),
    v6((0x2001 << 112) | (3 << 96), 32, "AMT (RFC 7450)", Yes),
    v6(
        (0x2001 << 112) | (4 << 96) | (0x112 << 80),
        48,
        "AS112-v6 (RFC 7535)",
        Yes,
    ),
    v6(
        (0x2001 << 112) | (0x10 << 96),
        28,
        "Deprecated (previously ORCHID) (RFC 4843)",
        NotApplicable,
    ),
    v6(
        (0x2001 << 112) | (0x20 << 96),
        28,
        "ORCHIDv2 (RFC 7343)",
        Yes,
    ),
    v6(
        (0x2001 << 112) | (0x30 << 96),
        28,
        "Drone Remote ID Protocol Entity Tags (RFC 9374)",
        Yes,
    ),
    v6(
        (0x2001 << 112) | (0xdb8 << 96),
        32,
        "Documentation (RFC 3849)",
        No,
    ),
    v6(0x2002 << 112, 16, "6to4 (RFC 3056)", NotApplicable),
    v6(
        (0x2620 << 112) | (0x4f << 96) | (0x8000 << 80),
        48,
        "Direct Delegation AS112 Service (RFC 7534)",
        Yes,
    ),
    v6(0x3fff << 112, 20, "Documentation (RFC 9637)", No),
    v6(
        0x5f00 << 112,
        16,
        "Segment Routing (SRv6) SIDs (RFC 9602)",
        No,
    ),
    v6(0xfc00 << 112, 7, "Unique-Local (RFC 4193)", No),
    v6(0xfe80 << 112, 10, "Link-Local Unicast (RFC 4291)", No),
];

fn within<T>(bits: T, network: T, prefix_len: u8, width: u32) -> bool
where
    T: Copy
        + PartialEq
        + std::ops::BitAnd<Output = T>
        + std::ops::Shl<u32, Output = T>
        + std::ops::Not<Output = T>
        + From<u8>,
{
    if prefix_len == 0 {
        return true;
    }
    let ones = !T::from(0u8);
    let mask = ones << (width - u32::from(prefix_len));
    bits & mask == network & mask
}

/// The most specific IPv4 registry entry holding `ip`, if any.
pub fn entry_v4(ip: Ipv4Addr) -> Option<&'static Entry<u32>> {
    let bits = u32::from(ip);
    IPV4_SPECIAL
        .iter()
        .filter(|e| within(bits, e.network, e.prefix_len, 32))
        .max_by_key(|e| e.prefix_len)
}

/// The most specific IPv6 registry entry holding `ip` (every address is
/// in one: `::/3`'s reserved space or global unicast at least).
pub fn entry_v6(ip: Ipv6Addr) -> Option<&'static Entry<u128>> {
    let bits = u128::from(ip);
    IPV6_SPECIAL
        .iter()
        .filter(|e| within(bits, e.network, e.prefix_len, 128))
        .max_by_key(|e| e.prefix_len)
}

/// Whether `ip` is a globally reachable unicast address by IANA's
/// registries (an address no entry holds is).
pub fn is_global_v4(ip: Ipv4Addr) -> bool {
    entry_v4(ip).is_none_or(|e| e.reachable == Yes)
}

/// Whether `ip` is a globally reachable unicast address by IANA's
/// registries; an address of NAT64's well-known prefix `64:ff9b::/96`
/// reaches the IPv4 address inside it, so that address decides.
pub fn is_global_v6(ip: Ipv6Addr) -> bool {
    let Some(entry) = entry_v6(ip) else {
        return false;
    };
    if entry.reachable != Yes {
        return false;
    }
    if entry.prefix_len == 96 && entry.network == 0x64_ff9b << 96 {
        let [.., a, b, c, d] = ip.octets();
        return is_global_v4(Ipv4Addr::new(a, b, c, d));
    }
    true
}

/// [`is_global_v4`] or [`is_global_v6`]: the one rule of where the lobby
/// may connect on a stranger's word.
pub fn is_global(ip: IpAddr) -> bool {
    match ip {
        IpAddr::V4(v4) => is_global_v4(v4),
        IpAddr::V6(v6) => is_global_v6(v6),
    }
}

/// Whether `ip` is a loopback address, an IPv4-mapped one included (the
/// one exception tests and `--push-allow-insecure` make).
pub fn is_loopback(ip: IpAddr) -> bool {
    match ip {
        IpAddr::V4(v4) => v4.is_loopback(),
        IpAddr::V6(v6) => {
            v6.is_loopback() || v6.to_ipv4_mapped().is_some_and(|v4| v4.is_loopback())
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ip(s: &str) -> IpAddr {
        s.parse().unwrap_or_else(|e| panic!("{s}: {e}"))
    }

    /// `(address inside the entry, whether it is global)`, one or more per
    /// registry entry: its first address, and where it matters its last
    /// or one a more specific entry does not take.
    #[test]
    fn every_ipv4_registry_entry() {
        let cases = [
            ("0.0.0.0", false),
            ("0.1.2.3", false),
            ("10.0.0.0", false),
            ("10.255.255.255", false),
            ("100.64.0.0", false),
            ("100.127.255.255", false),
            ("127.0.0.1", false),
            ("127.255.255.254", false),
            ("169.254.169.254", false),
            ("172.16.0.1", false),
            ("172.31.255.255", false),
            ("192.0.0.0", false),
            ("192.0.0.7", false),
            ("192.0.0.8", false),
            ("192.0.0.9", true),
            ("192.0.0.10", true),
            ("192.0.0.11", false),
            ("192.0.0.170", false),
            ("192.0.0.171", false),
            ("192.0.0.255", false),
            ("192.0.2.1", false),
            ("192.31.196.1", true),
            ("192.52.193.1", true),
            ("192.88.99.1", false),
            ("192.88.99.2", false),
            ("192.168.1.1", false),
            ("192.175.48.1", true),
            ("198.18.0.1", false),
            ("198.19.255.255", false),
            ("198.51.100.1", false),
            ("203.0.113.1", false),
            ("224.0.0.1", false),
            ("239.255.255.255", false),
            ("240.0.0.1", false),
            ("255.255.255.255", false),
            // Around the entries: public.
            ("1.1.1.1", true),
            ("8.8.8.8", true),
            ("100.63.255.255", true),
            ("100.128.0.0", true),
            ("172.15.255.255", true),
            ("172.32.0.0", true),
            ("192.0.1.0", true),
            ("198.17.255.255", true),
            ("198.20.0.0", true),
            ("203.0.114.1", true),
            ("223.255.255.255", true),
        ];
        for (s, global) in cases {
            assert_eq!(is_global(ip(s)), global, "{s}");
        }
        for e in IPV4_SPECIAL {
            let first = IpAddr::V4(Ipv4Addr::from(e.network));
            assert_eq!(is_global(first), e.reachable == Yes, "{} ({first})", e.name);
        }
    }

    #[test]
    fn every_ipv6_registry_entry() {
        let cases = [
            ("::1", false),
            ("::", false),
            ("::ffff:8.8.8.8", false),
            ("::ffff:127.0.0.1", false),
            ("::ffff:0:8.8.8.8", false),
            ("::ffff:0:10.0.0.1", false),
            ("::8.8.8.8", false),
            ("64:ff9b::808:808", true),
            ("64:ff9b::7f00:1", false),
            ("64:ff9b::a00:1", false),
            ("64:ff9b::a9fe:a9fe", false),
            ("64:ff9b:1::808:808", false),
            ("64:ff9b:1:ffff:ffff:ffff:ffff:ffff", false),
            ("100::", false),
            ("100::ffff:ffff:ffff:ffff", false),
            ("100:0:0:1::1", false),
            ("2001::", false),
            ("2001:0:4136:e378:8000:63bf:3fff:fdd2", false),
            ("2001:1::1", true),
            ("2001:1::2", true),
            ("2001:1::3", true),
            ("2001:1::4", false),
            ("2001:2::1", false),
            ("2001:3::1", true),
            ("2001:4:112::1", true),
            ("2001:10::1", false),
            ("2001:20::1", true),
            ("2001:30::1", true),
            ("2001:1ff:ffff::1", false),
            ("2001:db8::1", false),
            ("2002:808:808::1", false),
            ("2002:7f00:1::1", false),
            ("2620:4f:8000::1", true),
            ("3fff::1", false),
            ("3fff:fff::1", false),
            ("5f00::1", false),
            ("fc00::1", false),
            ("fd00::1", false),
            ("fe80::1", false),
            ("febf::1", false),
            // Outside global unicast: reserved or multicast.
            ("fec0::1", false),
            ("ff02::1", false),
            ("ff0e::1", false),
            ("4000::1", false),
            ("1::1", false),
            // Global unicast.
            ("2001:200::1", true),
            ("2606:4700:4700::1111", true),
            ("2a00:1450:4001::1", true),
            ("3ffe::1", true),
            ("2620:4f:8001::1", true),
        ];
        for (s, global) in cases {
            assert_eq!(is_global(ip(s)), global, "{s}");
        }
        for e in IPV6_SPECIAL {
            let first = Ipv6Addr::from(e.network);
            // The NAT64 prefix's first address embeds 0.0.0.0.
            let expected = e.reachable == Yes && e.network != 0x64_ff9b << 96;
            assert_eq!(
                is_global(IpAddr::V6(first)),
                expected,
                "{} ({first})",
                e.name
            );
        }
    }

    #[test]
    fn the_most_specific_entry_decides() {
        let name = |s: &str| match ip(s) {
            IpAddr::V4(v4) => entry_v4(v4).map(|e| e.name),
            IpAddr::V6(v6) => entry_v6(v6).map(|e| e.name),
        };
        assert_eq!(name("8.8.8.8"), None);
        assert!(name("192.0.0.9").unwrap().starts_with("Port Control"));
        assert!(name("2001::1").unwrap().starts_with("TEREDO"));
        assert!(name("2001:1::1").unwrap().starts_with("Port Control"));
        assert!(name("2a00::1").unwrap().starts_with("Global Unicast"));
    }

    #[test]
    fn loopback_in_every_form() {
        for s in ["127.0.0.1", "127.1.2.3", "::1", "::ffff:127.0.0.1"] {
            assert!(is_loopback(ip(s)), "{s}");
        }
        for s in ["10.0.0.1", "::", "::ffff:10.0.0.1", "64:ff9b::7f00:1"] {
            assert!(!is_loopback(ip(s)), "{s}");
        }
    }
}
