//! Who sent a request: the socket's peer, or, only when that peer is a
//! trusted reverse proxy (`--trusted-proxy`), the address the proxies
//! recorded in the forwarding header. Anyone else can write any header, so
//! from them the header is ignored.

use std::{
    fmt,
    net::{IpAddr, SocketAddr},
    str::FromStr,
};

use axum::http::{header, HeaderMap, HeaderName};
use ipnet::IpNet;

/// Which header the trusted proxies fill in. Only one is read: a proxy that
/// appends to one passes the other through from the client untouched.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum ForwardedHeader {
    /// `X-Forwarded-For: client, proxy1, proxy2` (nginx, HAProxy, Caddy, Traefik).
    #[default]
    XForwardedFor,
    /// RFC 7239 `Forwarded: for=client, for="[2001:db8::1]:4711"`.
    Forwarded,
}

impl ForwardedHeader {
    fn name(self) -> HeaderName {
        match self {
            Self::XForwardedFor => HeaderName::from_static("x-forwarded-for"),
            Self::Forwarded => header::FORWARDED,
        }
    }
}

impl FromStr for ForwardedHeader {
    type Err = String;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        match s.to_ascii_lowercase().as_str() {
            "x-forwarded-for" => Ok(Self::XForwardedFor),
            "forwarded" => Ok(Self::Forwarded),
            _ => Err(format!(
                "unknown header {s:?}: use x-forwarded-for or forwarded"
            )),
        }
    }
}

impl fmt::Display for ForwardedHeader {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Self::XForwardedFor => "x-forwarded-for",
            Self::Forwarded => "forwarded",
        })
    }
}

/// Whether `ip` is one of the trusted proxies.
pub fn is_trusted(ip: IpAddr, trusted: &[IpNet]) -> bool {
    let ip = ip.to_canonical();
    trusted.iter().any(|net| net.contains(&ip))
}

/// The client address of a request that arrived from `peer`.
///
/// From an untrusted peer: `peer`. From a trusted proxy: walking the header's
/// hops from the right (the nearest proxy's entry is last), the first address
/// that is not itself a trusted proxy. An entry that is not an address
/// (`unknown`, an obfuscated name, garbage) ends the walk at the last trusted
/// hop, so a malformed header can only make the proxy itself the client.
/// A port is kept when the header gives one, else it is 0.
pub fn client_addr(
    headers: &HeaderMap,
    peer: SocketAddr,
    trusted: &[IpNet],
    which: ForwardedHeader,
) -> SocketAddr {
    let peer = SocketAddr::new(peer.ip().to_canonical(), peer.port());
    if !is_trusted(peer.ip(), trusted) {
        return peer;
    }
    let hops: Vec<&str> = headers
        .get_all(which.name())
        .iter()
        .filter_map(|v| v.to_str().ok())
        .flat_map(|v| v.split(','))
        .collect();
    let mut client = peer;
    for hop in hops.iter().rev() {
        let parsed = match which {
            ForwardedHeader::XForwardedFor => parse_node(hop),
            ForwardedHeader::Forwarded => forwarded_for(hop).and_then(parse_node),
        };
        let Some(addr) = parsed else { return client };
        client = addr;
        if !is_trusted(addr.ip(), trusted) {
            return client;
        }
    }
    client
}

/// The `for=` parameter of one RFC 7239 forwarded-element, unquoted.
fn forwarded_for(element: &str) -> Option<&str> {
    element.split(';').find_map(|pair| {
        let (key, value) = pair.split_once('=')?;
        key.trim()
            .eq_ignore_ascii_case("for")
            .then(|| value.trim().trim_matches('"'))
    })
}

/// `1.2.3.4`, `1.2.3.4:5678`, `2001:db8::1`, `[2001:db8::1]` or `[2001:db8::1]:80`.
fn parse_node(node: &str) -> Option<SocketAddr> {
    let node = node.trim();
    let addr = if let Ok(ip) = node.parse::<IpAddr>() {
        SocketAddr::new(ip, 0)
    } else if let Ok(addr) = node.parse::<SocketAddr>() {
        addr
    } else {
        let ip = node.strip_prefix('[')?.strip_suffix(']')?.parse().ok()?;
        SocketAddr::new(ip, 0)
    };
    Some(SocketAddr::new(addr.ip().to_canonical(), addr.port()))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn nets(list: &[&str]) -> Vec<IpNet> {
        list.iter().map(|n| n.parse().unwrap()).collect()
    }

    fn headers(name: &str, values: &[&str]) -> HeaderMap {
        let mut h = HeaderMap::new();
        for v in values {
            h.append(
                HeaderName::from_bytes(name.as_bytes()).unwrap(),
                v.parse().unwrap(),
            );
        }
        h
    }

    fn peer(s: &str) -> SocketAddr {
        s.parse().unwrap()
    }

    #[test]
    fn untrusted_peers_header_is_ignored() {
        let h = headers("x-forwarded-for", &["203.0.113.9"]);
        let p = peer("198.51.100.1:4000");
        assert_eq!(
            client_addr(
                &h,
                p,
                &nets(&["10.0.0.0/8"]),
                ForwardedHeader::XForwardedFor
            ),
            p
        );
        assert_eq!(client_addr(&h, p, &[], ForwardedHeader::XForwardedFor), p);
    }

    #[test]
    fn rightmost_untrusted_hop_from_a_trusted_proxy() {
        let trusted = nets(&["10.0.0.0/8"]);
        // The client forged the first entry; the proxies appended the rest.
        let h = headers("x-forwarded-for", &["1.1.1.1, 203.0.113.9", "10.0.0.7"]);
        let got = client_addr(
            &h,
            peer("10.0.0.2:80"),
            &trusted,
            ForwardedHeader::XForwardedFor,
        );
        assert_eq!(got, peer("203.0.113.9:0"));
        // Only trusted hops: the leftmost one.
        let h = headers("x-forwarded-for", &["10.1.1.1, 10.0.0.7"]);
        let got = client_addr(
            &h,
            peer("10.0.0.2:80"),
            &trusted,
            ForwardedHeader::XForwardedFor,
        );
        assert_eq!(got, peer("10.1.1.1:0"));
        // No header: the proxy itself.
        let got = client_addr(
            &HeaderMap::new(),
            peer("10.0.0.2:80"),
            &trusted,
            ForwardedHeader::XForwardedFor,
        );
        assert_eq!(got, peer("10.0.0.2:80"));
    }

    #[test]
    fn garbage_stops_at_the_last_trusted_hop() {
        let trusted = nets(&["10.0.0.0/8"]);
        let h = headers("x-forwarded-for", &["203.0.113.9, unknown, 10.0.0.7"]);
        let got = client_addr(
            &h,
            peer("10.0.0.2:80"),
            &trusted,
            ForwardedHeader::XForwardedFor,
        );
        assert_eq!(got, peer("10.0.0.7:0"));
    }

    #[test]
    fn forwarded_header_and_ports() {
        let trusted = nets(&["::1/128", "127.0.0.1/32"]);
        let h = headers(
            "forwarded",
            &[r#"for=192.0.2.60;proto=http, For="[2001:db8:cafe::17]:4711""#],
        );
        let got = client_addr(&h, peer("[::1]:80"), &trusted, ForwardedHeader::Forwarded);
        assert_eq!(got, peer("[2001:db8:cafe::17]:4711"));
        // The other header is not read.
        let got = client_addr(
            &h,
            peer("127.0.0.1:80"),
            &trusted,
            ForwardedHeader::XForwardedFor,
        );
        assert_eq!(got, peer("127.0.0.1:80"));
        // IPv4-mapped peers match IPv4 networks.
        let h = headers("x-forwarded-for", &["198.51.100.4:1234"]);
        let got = client_addr(
            &h,
            peer("[::ffff:127.0.0.1]:80"),
            &trusted,
            ForwardedHeader::XForwardedFor,
        );
        assert_eq!(got, peer("198.51.100.4:1234"));
    }

    #[test]
    fn header_names_parse() {
        assert_eq!("Forwarded".parse(), Ok(ForwardedHeader::Forwarded));
        assert_eq!(
            "x-forwarded-for".parse(),
            Ok(ForwardedHeader::XForwardedFor)
        );
        assert!("x-real-ip".parse::<ForwardedHeader>().is_err());
    }
}
