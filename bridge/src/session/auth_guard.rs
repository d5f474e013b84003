//! Failed `bridgeAuth` counted per client address (IPv4 address, IPv6 /64),
//! so a host cannot guess the operator token at the speed of its sockets:
//! after `max_failures` in one window its further attempts are refused
//! without the token being looked at, until the window ends. The table is
//! bounded: expired entries are dropped when it fills, then the oldest.

use std::{
    collections::HashMap,
    net::IpAddr,
    sync::{Mutex, PoisonError},
    time::{Duration, Instant},
};

use master::limits::address_key;

/// Addresses tracked at once; enough for every host guessing within one
/// window of a real attack, small enough (a few MiB) to never matter.
pub(crate) const MAX_TRACKED: usize = 65_536;

/// What to do with a `bridgeAuth` from an address.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Verdict {
    /// Check the token.
    Check,
    /// Refuse with `rate-limited`, without checking.
    Limited,
}

#[derive(Debug, Clone, Copy)]
struct Entry {
    /// When this address's window began (its first failure in it).
    since: Instant,
    failures: u32,
}

/// The shared table of recent failures.
#[derive(Debug)]
pub(crate) struct AuthGuard {
    max_failures: u32,
    window: Duration,
    capacity: usize,
    entries: Mutex<HashMap<IpAddr, Entry>>,
}

impl AuthGuard {
    /// A guard allowing `max_failures` failures per address per `window`.
    pub(crate) fn new(max_failures: u32, window: Duration) -> Self {
        Self::with_capacity(max_failures, window, MAX_TRACKED)
    }

    fn with_capacity(max_failures: u32, window: Duration, capacity: usize) -> Self {
        Self {
            max_failures: max_failures.max(1),
            window,
            capacity: capacity.max(1),
            entries: Mutex::new(HashMap::new()),
        }
    }

    /// Whether a `bridgeAuth` from `ip` may have its token checked.
    pub(crate) fn verdict(&self, ip: IpAddr, now: Instant) -> Verdict {
        let entries = self.entries.lock().unwrap_or_else(PoisonError::into_inner);
        match entries.get(&address_key(ip)) {
            Some(e) if !self.expired(e, now) && e.failures >= self.max_failures => Verdict::Limited,
            _ => Verdict::Check,
        }
    }

    /// Counts a wrong token from `ip`; true for the window's first failure
    /// (the one worth a WARN line: the others are logged at debug).
    pub(crate) fn failed(&self, ip: IpAddr, now: Instant) -> bool {
        let key = address_key(ip);
        let mut entries = self.entries.lock().unwrap_or_else(PoisonError::into_inner);
        if let Some(e) = entries.get_mut(&key) {
            if !self.expired(e, now) {
                e.failures = e.failures.saturating_add(1);
                return false;
            }
            *e = Entry {
                since: now,
                failures: 1,
            };
            return true;
        }
        if entries.len() >= self.capacity {
            entries.retain(|_, e| !self.expired(e, now));
        }
        if entries.len() >= self.capacity {
            // Every entry is live: forget the one closest to its end.
            if let Some(oldest) = entries.iter().min_by_key(|(_, e)| e.since).map(|(k, _)| *k) {
                entries.remove(&oldest);
            }
        }
        entries.insert(
            key,
            Entry {
                since: now,
                failures: 1,
            },
        );
        true
    }

    fn expired(&self, e: &Entry, now: Instant) -> bool {
        now.saturating_duration_since(e.since) >= self.window
    }

    #[cfg(test)]
    fn len(&self) -> usize {
        self.entries
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .len()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ip(s: &str) -> IpAddr {
        s.parse().unwrap()
    }

    #[test]
    fn limits_after_max_failures_until_the_window_ends() {
        let t0 = Instant::now();
        let g = AuthGuard::new(3, Duration::from_secs(60));
        let a = ip("192.0.2.1");
        assert!(g.failed(a, t0));
        assert!(!g.failed(a, t0));
        assert_eq!(g.verdict(a, t0), Verdict::Check);
        assert!(!g.failed(a, t0));
        assert_eq!(g.verdict(a, t0), Verdict::Limited);
        assert_eq!(g.verdict(ip("192.0.2.2"), t0), Verdict::Check);
        let later = t0 + Duration::from_secs(60);
        assert_eq!(g.verdict(a, later), Verdict::Check);
        assert!(g.failed(a, later), "a new window warns again");
    }

    #[test]
    fn ipv6_counts_per_64() {
        let t0 = Instant::now();
        let g = AuthGuard::new(2, Duration::from_secs(60));
        g.failed(ip("2001:db8:1:2::1"), t0);
        g.failed(ip("2001:db8:1:2::ffff"), t0);
        assert_eq!(g.verdict(ip("2001:db8:1:2::77"), t0), Verdict::Limited);
        assert_eq!(g.verdict(ip("2001:db8:1:3::1"), t0), Verdict::Check);
    }

    #[test]
    fn the_table_is_bounded() {
        let t0 = Instant::now();
        let g = AuthGuard::with_capacity(1, Duration::from_secs(60), 4);
        for i in 0..100u8 {
            g.failed(
                IpAddr::from([10, 0, 0, i]),
                t0 + Duration::from_millis(u64::from(i)),
            );
        }
        assert_eq!(g.len(), 4);
        // The newest are still limited.
        assert_eq!(g.verdict(ip("10.0.0.99"), t0), Verdict::Limited);
        // Expired entries make room before live ones are dropped.
        let later = t0 + Duration::from_secs(120);
        g.failed(ip("10.1.0.1"), later);
        assert_eq!(g.len(), 1);
    }
}
