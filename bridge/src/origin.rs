//! The `Origin` check of WebSocket upgrades (no I/O). The rate and
//! connection limits are the master's (`master::limits`).

/// Whether a WebSocket upgrade with this `Origin` may proceed.
///
/// No `Origin` header: not a browser, which could send any header anyway,
/// so there is nothing to protect. With `allowed` non-empty only those
/// origins pass; otherwise the page's own origin (the request's `Host`) and,
/// when `loopback` is set, `http://localhost:*` and `http://127.0.0.1:*`.
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
}
