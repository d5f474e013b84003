//! Abuse limits that need no I/O: the per-connection token bucket and the
//! `Origin` check of WebSocket upgrades.

use std::time::Instant;

/// A token bucket: `burst` messages at once, then `rate` per second.
#[derive(Debug, Clone)]
pub struct TokenBucket {
    tokens: f64,
    burst: f64,
    rate: f64,
    last: Instant,
}

impl TokenBucket {
    /// A full bucket.
    pub fn new(rate: u32, burst: u32, now: Instant) -> Self {
        let burst = f64::from(burst.max(1));
        Self {
            tokens: burst,
            burst,
            rate: f64::from(rate),
            last: now,
        }
    }

    /// Takes one token if there is one.
    pub fn take(&mut self, now: Instant) -> bool {
        let elapsed = now.saturating_duration_since(self.last).as_secs_f64();
        self.last = now;
        self.tokens = (self.tokens + elapsed * self.rate).min(self.burst);
        if self.tokens >= 1.0 {
            self.tokens -= 1.0;
            true
        } else {
            false
        }
    }
}

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
    use std::time::Duration;

    #[test]
    fn bucket_allows_burst_then_rate() {
        let t0 = Instant::now();
        let mut b = TokenBucket::new(20, 40, t0);
        assert_eq!((0..50).filter(|_| b.take(t0)).count(), 40);
        assert!(!b.take(t0));
        // 100 ms at 20/s refills two tokens.
        let t1 = t0 + Duration::from_millis(100);
        assert!(b.take(t1));
        assert!(b.take(t1));
        assert!(!b.take(t1));
        // Never more than the burst, however long the pause.
        let t2 = t1 + Duration::from_secs(3600);
        assert_eq!((0..50).filter(|_| b.take(t2)).count(), 40);
    }

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
