//! Which bridge the page talks to, and where the admin token may go.
//!
//! A link can carry `?bridge=`, so whoever writes the link would choose the
//! page's bridge. The page takes it only when the operator listed that
//! address (or page and bridge are both on loopback, for development), and
//! the admin token goes only to the bridge that served the page.

/// `/ws` on the page's origin (`wss` when the page came over `https:`): the
/// bridge that served the page, the only one trusted with the token.
pub fn own_bridge(protocol: &str, host: &str) -> String {
    let scheme = if protocol == "https:" { "wss" } else { "ws" };
    format!("{scheme}://{host}/ws")
}

/// The bridge to list from: `requested` (the `?bridge=` value) when it is
/// one of the `allowed` URLs (separated by spaces, from the page's
/// `<meta name="lobby-bridges">`) or a loopback bridge while `page_host` is
/// loopback; `own` otherwise.
pub fn choose(requested: Option<&str>, own: &str, page_host: &str, allowed: &str) -> String {
    match requested {
        Some(url)
            if allowed.split(' ').any(|a| !a.is_empty() && a == url)
                || (is_loopback(page_host) && ws_authority(url).is_some_and(is_loopback)) =>
        {
            url.to_owned()
        }
        _ => own.to_owned(),
    }
}

/// The raw (still percent-encoded) token of a sign-in link's fragment,
/// `#token=…` as the bridge prints it.
pub fn fragment_token(hash: &str) -> Option<&str> {
    hash.strip_prefix("#token=")
}

/// The `host[:port]` of a `ws:` or `wss:` URL.
fn ws_authority(url: &str) -> Option<&str> {
    let rest = url
        .strip_prefix("ws://")
        .or_else(|| url.strip_prefix("wss://"))?;
    let end = rest
        .bytes()
        .position(|b| matches!(b, b'/' | b'\\' | b'?' | b'#'))
        .unwrap_or(rest.len());
    Some(&rest[..end])
}

/// Whether `host[:port]` is `localhost`, `[::1]` or in 127.0.0.0/8. Only
/// spellings a browser reads as this machine or refuses pass (`127.` and
/// digits and dots is 127/8 or invalid); user info, other characters or a
/// port that is not digits make it foreign.
fn is_loopback(authority: &str) -> bool {
    let digits = |s: &str| s.bytes().all(|b| b.is_ascii_digit());
    if let Some(port) = authority.strip_prefix("[::1]") {
        return port.is_empty() || port.strip_prefix(':').is_some_and(digits);
    }
    let (host, port) = match authority.bytes().rposition(|b| b == b':') {
        Some(i) => (&authority[..i], &authority[i + 1..]),
        None => (authority, ""),
    };
    digits(port)
        && (host == "localhost"
            || host
                .strip_prefix("127.")
                .is_some_and(|rest| rest.bytes().all(|b| b.is_ascii_digit() || b == b'.')))
}

#[cfg(test)]
mod tests {
    use super::*;

    const OWN: &str = "wss://lobby.example/ws";

    #[test]
    fn own_bridge_follows_the_scheme() {
        assert_eq!(own_bridge("https:", "lobby.example"), OWN);
        assert_eq!(
            own_bridge("http:", "127.0.0.1:8080"),
            "ws://127.0.0.1:8080/ws"
        );
    }

    #[test]
    fn a_public_page_ignores_unlisted_bridges() {
        let host = "lobby.example";
        for url in [
            "wss://evil.example/ws",
            "ws://127.0.0.1:8099/ws",
            "wss://lobby.example.evil.example/ws",
        ] {
            assert_eq!(choose(Some(url), OWN, host, ""), OWN, "{url}");
        }
        assert_eq!(choose(None, OWN, host, "wss://a.example/ws"), OWN);
    }

    #[test]
    fn the_operator_list_allows_exact_urls() {
        let allowed = " wss://a.example/ws  wss://b.example/ws ";
        let host = "lobby.example";
        assert_eq!(
            choose(Some("wss://b.example/ws"), OWN, host, allowed),
            "wss://b.example/ws"
        );
        assert_eq!(choose(Some("wss://b.example/ws2"), OWN, host, allowed), OWN);
        assert_eq!(choose(Some("wss://a.example"), OWN, host, allowed), OWN);
    }

    #[test]
    fn loopback_pages_may_use_loopback_bridges() {
        for page in [
            "127.0.0.1:8080",
            "localhost:8080",
            "[::1]:8080",
            "127.0.0.2",
        ] {
            for url in [
                "ws://127.0.0.1:8099/ws",
                "ws://localhost/ws",
                "wss://[::1]:9/ws",
                "ws://127.9.9.9:1",
            ] {
                assert_eq!(choose(Some(url), OWN, page, ""), url, "{page} {url}");
            }
        }
    }

    #[test]
    fn look_alikes_of_loopback_are_refused() {
        let own = "ws://127.0.0.1:8080/ws";
        for url in [
            "ws://127.0.0.1:80@evil.example/ws",
            "ws://127.0.0.1@evil.example/ws",
            "ws://evil.example\\@127.0.0.1/ws",
            "ws://127.0.0.1.evil.example/ws",
            "ws://localhost.evil.example/ws",
            "ws://[::1]@evil.example/ws",
            "ws://[::1]x/ws",
            "ws://127.0.0.1:8\t0@evil.example/ws",
            "http://127.0.0.1:8099/ws",
            "ws://0177.0.0.1/ws",
            "ws://127.0.0.1x/ws",
            "ws://::1:5/ws",
            "ws://[::1]:8x/ws",
            "ws://10.0.0.1/ws",
            "",
        ] {
            assert_eq!(choose(Some(url), own, "127.0.0.1:8080", ""), own, "{url:?}");
        }
    }

    #[test]
    fn the_fragment_token_is_found() {
        assert_eq!(fragment_token("#token=0a1b"), Some("0a1b"));
        assert_eq!(fragment_token("#token=a%2Bb"), Some("a%2Bb"));
        assert_eq!(fragment_token("#x=1&token=t"), None);
        assert_eq!(fragment_token("#token="), Some(""));
        assert_eq!(fragment_token("#top"), None);
        assert_eq!(fragment_token(""), None);
    }
}
