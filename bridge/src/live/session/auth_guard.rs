//! Failed `bridgeAuth` counted per client address (IPv4 address, IPv6 /64),
//! so a host cannot guess the operator token at the speed of its sockets:
//! after `max_failures` in one window its further attempts are refused
//! without the token being looked at, until the window ends. The table is
//! bounded: expired entries are dropped when it fills, then the oldest.
//! [`AuthGuard::check`] is the one admin-token check, for `bridgeAuth` and
//! the admin API's `Authorization: Bearer` alike. Beside the per-address
//! count, one count of all failures together ([`AuthGuard::with_total`])
//! bounds how fast many addresses together may guess.

use std::{
    collections::HashMap,
    net::IpAddr,
    sync::{Mutex, PoisonError},
    time::{Duration, Instant},
};

use master::{limits::address_key, throttled};
use tracing::debug;

use crate::{metrics::Metrics, token::AdminToken};

/// Addresses tracked at once; enough for every host guessing within one
/// window of a real attack, small enough (a few MiB) to never matter.
pub(crate) const MAX_TRACKED: usize = 65_536;

/// What to do with a `bridgeAuth` from an address.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum AuthVerdict {
    /// Check the token.
    Check,
    /// Refuse with `rate-limited`, without checking.
    Limited,
}

/// What [`AuthGuard::check`] found.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Checked {
    /// The admin token.
    Admin,
    /// A wrong or missing token (counted).
    Wrong,
    /// Not looked at: this address failed too often.
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
    /// Failures from all addresses in one window, at most.
    max_total: u32,
    /// All addresses' failures in the current window (`None`: none yet).
    total: Mutex<Option<Entry>>,
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
            max_total: u32::MAX,
            total: Mutex::new(None),
        }
    }

    /// The guard with a bound on the failures of all addresses together
    /// per window: past it, every attempt is limited until it ends.
    pub(crate) fn with_total(mut self, max_total: u32) -> Self {
        self.max_total = max_total.max(1);
        self
    }

    /// Whether all addresses together failed too often in this window.
    fn all_limited(&self, now: Instant) -> bool {
        let total = self.total.lock().unwrap_or_else(PoisonError::into_inner);
        total.is_some_and(|e| !self.expired(&e, now) && e.failures >= self.max_total)
    }

    /// Whether a `bridgeAuth` from `ip` may have its token checked.
    pub(crate) fn verdict(&self, ip: IpAddr, now: Instant) -> AuthVerdict {
        if self.all_limited(now) {
            return AuthVerdict::Limited;
        }
        let entries = self.entries.lock().unwrap_or_else(PoisonError::into_inner);
        match entries.get(&address_key(ip)) {
            Some(e) if !self.expired(e, now) && e.failures >= self.max_failures => {
                AuthVerdict::Limited
            }
            _ => AuthVerdict::Check,
        }
    }

    /// Counts a wrong token from `ip`; true for the window's first failure
    /// (the one worth a WARN line: the others are logged at debug).
    pub(crate) fn failed(&self, ip: IpAddr, now: Instant) -> bool {
        {
            let mut total = self.total.lock().unwrap_or_else(PoisonError::into_inner);
            match total.as_mut() {
                Some(e) if !self.expired(e, now) => e.failures = e.failures.saturating_add(1),
                _ => {
                    *total = Some(Entry {
                        since: now,
                        failures: 1,
                    })
                }
            }
        }
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

    /// Checks `candidate` (`None`: no token given) against `token` for a
    /// client at `peer`: refused unchecked while the address is limited; a
    /// wrong or missing token is counted (`auth_failures`) and logged once
    /// per address and window (`what` names the attempt in the log).
    pub(crate) fn check(
        &self,
        token: &AdminToken,
        candidate: Option<&str>,
        peer: std::net::SocketAddr,
        now: Instant,
        metrics: &Metrics,
        what: &'static str,
    ) -> Checked {
        let ip = peer.ip();
        if self.verdict(ip, now) == AuthVerdict::Limited {
            debug!(%peer, what, "admin token refused unchecked: too many failures");
            return Checked::Limited;
        }
        if candidate.is_some_and(|c| token.matches(c)) {
            return Checked::Admin;
        }
        metrics
            .auth_failures
            .fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        if self.failed(ip, now) {
            // Once per address per window, and at most a few a window
            // in all: many addresses (an IPv6 /48) stay a few lines.
            throttled!(
                lines = 5;
                warn,
                %peer,
                what,
                "wrong admin token (further failures from this address are \
                 logged at debug for a while, and refused once too many)"
            );
        } else {
            debug!(%peer, what, "wrong admin token");
        }
        Checked::Wrong
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
        assert_eq!(g.verdict(a, t0), AuthVerdict::Check);
        assert!(!g.failed(a, t0));
        assert_eq!(g.verdict(a, t0), AuthVerdict::Limited);
        assert_eq!(g.verdict(ip("192.0.2.2"), t0), AuthVerdict::Check);
        let later = t0 + Duration::from_secs(60);
        assert_eq!(g.verdict(a, later), AuthVerdict::Check);
        assert!(g.failed(a, later), "a new window warns again");
    }

    #[test]
    fn all_addresses_together_are_bounded_too() {
        let t0 = Instant::now();
        let g = AuthGuard::new(3, Duration::from_secs(60)).with_total(10);
        for i in 0..10u8 {
            assert_eq!(
                g.verdict(IpAddr::from([10, 0, 0, i]), t0),
                AuthVerdict::Check
            );
            g.failed(IpAddr::from([10, 0, 0, i]), t0);
        }
        // No address failed more than once, yet every one is limited now,
        // a new one too, until the window ends.
        assert_eq!(g.verdict(ip("10.0.0.1"), t0), AuthVerdict::Limited);
        assert_eq!(g.verdict(ip("192.0.2.9"), t0), AuthVerdict::Limited);
        let later = t0 + Duration::from_secs(60);
        assert_eq!(g.verdict(ip("192.0.2.9"), later), AuthVerdict::Check);
    }

    #[test]
    fn ipv6_counts_per_64() {
        let t0 = Instant::now();
        let g = AuthGuard::new(2, Duration::from_secs(60));
        g.failed(ip("2001:db8:1:2::1"), t0);
        g.failed(ip("2001:db8:1:2::ffff"), t0);
        assert_eq!(g.verdict(ip("2001:db8:1:2::77"), t0), AuthVerdict::Limited);
        assert_eq!(g.verdict(ip("2001:db8:1:3::1"), t0), AuthVerdict::Check);
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
        assert_eq!(g.verdict(ip("10.0.0.99"), t0), AuthVerdict::Limited);
        // Expired entries make room before live ones are dropped.
        let later = t0 + Duration::from_secs(120);
        g.failed(ip("10.1.0.1"), later);
        assert_eq!(g.len(), 1);
    }
}
