//! The bridge's reading of request headers: the client address behind
//! trusted proxies (`bridge::http::forwarded`) and the WebSocket `Origin` check
//! (`bridge::http::origin`).

use std::net::{IpAddr, Ipv4Addr, Ipv6Addr, SocketAddr};

use axum::http::{HeaderMap, HeaderName, HeaderValue};
use bridge::http::{
    forwarded::{client_addr, is_trusted, ForwardedHeader},
    origin::origin_allowed,
};
use ipnet::IpNet;

/// Peers a request may come from: proxies in the trusted networks below, a
/// mapped IPv4 one, and a stranger.
const PEERS: [IpAddr; 4] = [
    IpAddr::V4(Ipv4Addr::new(10, 0, 0, 2)),
    IpAddr::V6(Ipv6Addr::LOCALHOST),
    IpAddr::V6(Ipv6Addr::new(0, 0, 0, 0, 0, 0xffff, 0x7f00, 1)),
    IpAddr::V4(Ipv4Addr::new(203, 0, 113, 5)),
];

const TRUSTED: [&str; 4] = ["10.0.0.0/8", "127.0.0.0/8", "::1/128", "2001:db8::/32"];

/// Input: a flags byte (bit 0 the header read, bits 1-2 the peer, bits 3-6
/// which networks are trusted, bit 7 also fill in the other header), two
/// bytes of port, then header values separated by `\n`.
///
/// Checks: never panics; from an untrusted peer the answer is the peer
/// whatever the headers say; the answer is in canonical form (no
/// IPv4-mapped IPv6); and the header not chosen is never read.
pub fn forwarded(data: &[u8]) {
    let [flags, p0, p1, rest @ ..] = data else {
        return;
    };
    let which = if flags & 1 == 0 {
        ForwardedHeader::XForwardedFor
    } else {
        ForwardedHeader::Forwarded
    };
    let peer = SocketAddr::new(
        PEERS[usize::from(flags >> 1) % PEERS.len()],
        u16::from_le_bytes([*p0, *p1]),
    );
    let trusted: Vec<IpNet> = TRUSTED
        .iter()
        .enumerate()
        .filter(|(i, _)| flags >> 3 & (1 << i) != 0)
        .filter_map(|(_, n)| n.parse().ok())
        .collect();
    let name = |h: ForwardedHeader| {
        HeaderName::from_static(match h {
            ForwardedHeader::XForwardedFor => "x-forwarded-for",
            ForwardedHeader::Forwarded => "forwarded",
        })
    };
    let other = match which {
        ForwardedHeader::XForwardedFor => ForwardedHeader::Forwarded,
        ForwardedHeader::Forwarded => ForwardedHeader::XForwardedFor,
    };
    let mut headers = HeaderMap::new();
    let mut only_chosen = HeaderMap::new();
    for value in rest.split(|&b| b == b'\n') {
        let Ok(value) = HeaderValue::from_bytes(value) else {
            continue;
        };
        headers.append(name(which), value.clone());
        only_chosen.append(name(which), value.clone());
        if flags & 0x80 != 0 {
            headers.append(name(other), value);
        }
    }
    let got = client_addr(&headers, peer, &trusted, which);
    let canonical = SocketAddr::new(peer.ip().to_canonical(), peer.port());
    assert_eq!(got.ip(), got.ip().to_canonical(), "{got} is not canonical");
    if !is_trusted(peer.ip(), &trusted) {
        assert_eq!(got, canonical, "an untrusted peer's header was believed");
    }
    assert_eq!(
        client_addr(&only_chosen, peer, &trusted, which),
        got,
        "the other header was read"
    );
}

/// Input: lines separated by `\n`: the `Origin`, the `Host`, then the
/// allowed origins (a line of its own may be empty: no `Host`).
///
/// Checks: never panics; no `Origin` always passes; with an allow-list the
/// answer ignores `Host` and the loopback switch; `loopback` only ever
/// admits more; ASCII case never matters; and without a list and loopback
/// only the page's own origin passes.
pub fn origin(data: &[u8]) {
    let text = String::from_utf8_lossy(data);
    let mut lines = text.split('\n');
    let origin = lines.next().unwrap_or_default();
    let host = lines.next().filter(|h| !h.is_empty());
    let allowed: Vec<String> = lines.map(str::to_owned).collect();
    assert!(origin_allowed(None, host, &allowed, false));
    let strict = origin_allowed(Some(origin), host, &allowed, false);
    let loose = origin_allowed(Some(origin), host, &allowed, true);
    assert!(!strict || loose, "loopback refused what strict allowed");
    let upper = origin.to_ascii_uppercase();
    assert_eq!(
        origin_allowed(Some(&upper), host, &allowed, true),
        loose,
        "case changed the answer"
    );
    if !allowed.is_empty() {
        assert_eq!(strict, loose);
        assert_eq!(origin_allowed(Some(origin), None, &allowed, false), strict);
    } else if strict {
        let host = host
            .expect("without a list or loopback only the page's origin passes")
            .to_ascii_lowercase();
        let origin = origin.trim_end_matches('/').to_ascii_lowercase();
        assert!(
            origin == format!("http://{host}") || origin == format!("https://{host}"),
            "{origin} passed for host {host}"
        );
    }
}
