//! The `Origin` check of WebSocket upgrades (no I/O). The rate and
//! connection limits are the master's (`master::limits`).

/// Whether a WebSocket upgrade with these raw `Origin` and `Host` header
/// values may proceed: [`origin_allowed`], except that an `Origin` that is
/// present but not ASCII (or not UTF-8) is foreign, not missing (no browser
/// sends one, and "missing" lets anything through). A `Host` that is not
/// ASCII matches no origin.
pub fn origin_header_allowed(
    origin: Option<&[u8]>,
    host: Option<&[u8]>,
    allowed: &[String],
    loopback: bool,
) -> bool {
    let origin = match origin {
        None => None,
        Some(raw) => match ascii(raw) {
            Some(text) => Some(text),
            None => return false,
        },
    };
    origin_allowed(origin, host.and_then(ascii), allowed, loopback)
}

/// `value` as text if it is ASCII.
fn ascii(value: &[u8]) -> Option<&str> {
    std::str::from_utf8(value).ok().filter(|s| s.is_ascii())
}

/// Whether a WebSocket upgrade with this `Origin` may proceed.
///
/// No `Origin` header: not a browser, which could send any header anyway,
/// so there is nothing to protect. With `allowed` non-empty only those
/// origins pass; otherwise the page's own origin (the request's `Host`) and,
/// when `loopback` is set (`--allow-loopback-origins`), `http://localhost:*`,
/// `http://127.0.0.1:*` and `http://[::1]:*`.
pub fn origin_allowed(
    origin: Option<&str>,
    host: Option<&str>,
    allowed: &[String],
    loopback: bool,
) -> bool {
    let Some(origin) = origin else { return true };
    let origin = origin.trim_end_matches('/').to_ascii_lowercase();
    if !allowed.is_empty() {
        return allowed
            .iter()
            .any(|a| a.trim_end_matches('/').eq_ignore_ascii_case(&origin));
    }
    if let Some(host) = host {
        let host = host.to_ascii_lowercase();
        if origin == format!("http://{host}") || origin == format!("https://{host}") {
            return true;
        }
    }
    loopback
        && ["http://localhost", "http://127.0.0.1", "http://[::1]"]
            .iter()
            .any(|base| match origin.strip_prefix(base) {
                Some("") => true,
                Some(rest) => rest
                    .strip_prefix(':')
                    .is_some_and(|p| !p.is_empty() && p.bytes().all(|b| b.is_ascii_digit())),
                None => false,
            })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn origins() {
        let none: &[String] = &[];
        let host = Some("lobby.example:8080");
        assert!(origin_allowed(None, host, none, false));
        assert!(origin_allowed(
            Some("http://lobby.example:8080"),
            host,
            none,
            false
        ));
        assert!(origin_allowed(
            Some("https://LOBBY.example:8080/"),
            host,
            none,
            false
        ));
        assert!(!origin_allowed(
            Some("http://evil.example"),
            host,
            none,
            false
        ));
        assert!(!origin_allowed(
            Some("http://localhost:3000"),
            host,
            none,
            false
        ));
        assert!(origin_allowed(
            Some("http://localhost:3000"),
            host,
            none,
            true
        ));
        assert!(origin_allowed(
            Some("http://127.0.0.1:8080"),
            host,
            none,
            true
        ));
        assert!(origin_allowed(Some("http://localhost"), host, none, true));
        assert!(!origin_allowed(
            Some("http://localhost.evil.example"),
            host,
            none,
            true
        ));
        assert!(!origin_allowed(
            Some("http://127.0.0.1:80x"),
            host,
            none,
            true
        ));
        assert!(!origin_allowed(Some("null"), host, none, true));
        let list = vec!["https://lobby.example".to_owned()];
        assert!(origin_allowed(
            Some("https://lobby.example"),
            host,
            &list,
            true
        ));
        assert!(!origin_allowed(
            Some("http://lobby.example:8080"),
            host,
            &list,
            true
        ));
        assert!(!origin_allowed(
            Some("http://localhost:3000"),
            host,
            &list,
            true
        ));
    }

    #[test]
    fn an_origin_that_is_not_ascii_is_foreign_not_missing() {
        let none: &[String] = &[];
        let host = Some(&b"lobby.example:8080"[..]);
        assert!(origin_header_allowed(None, host, none, false));
        assert!(origin_header_allowed(
            Some(b"http://lobby.example:8080"),
            host,
            none,
            false
        ));
        for raw in [
            &b"http://lobby.example:8080\xff"[..],
            "http://l\u{f6}bby.example:8080".as_bytes(),
            b"\xc3",
        ] {
            assert!(
                !origin_header_allowed(Some(raw), host, none, true),
                "{raw:?}"
            );
            let list = vec![String::from_utf8_lossy(raw).into_owned()];
            assert!(
                !origin_header_allowed(Some(raw), host, &list, true),
                "{raw:?}"
            );
        }
        // A Host that is not ASCII is nobody's own origin.
        let odd_host = Some("l\u{f6}bby.example".as_bytes());
        assert!(!origin_header_allowed(
            Some(b"http://lobby.example"),
            odd_host,
            none,
            false
        ));
    }
}
