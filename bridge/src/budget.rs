//! What one client address may make the bridge send on request: a token
//! bucket per address (IPv4 address, IPv6 /64; behind a trusted proxy the
//! forwarded one) that every `/api/` body and every WebSocket answer that
//! carries a whole list or a catch-up spends from. Without it, one host
//! asking as fast as it can (or opening socket after socket) makes the
//! bridge write megabytes per request. Answers that cost almost nothing
//! (`304 Not Modified`, a subscribe's confirmation) and the lists pushed
//! because the list changed take nothing.
//!
//! The table is bounded: addresses are kept in two generations, and when
//! the newer one is full the older is forgotten. A forgotten address starts
//! again with a full bucket, as one that was quiet for a while would.

use std::{
    collections::HashMap,
    net::IpAddr,
    sync::{Mutex, PoisonError},
    time::{Duration, Instant},
};

use master::limits::{address_key, RateVerdict, TokenBucket};

/// Addresses tracked at once (both generations together): a few MiB.
pub(crate) const MAX_TRACKED: usize = 65_536;

/// The shared per-address buckets.
#[derive(Debug)]
pub(crate) struct Budget {
    rate: u32,
    burst: u32,
    /// Entries per generation.
    half: usize,
    table: Mutex<Generations>,
}

#[derive(Debug, Default)]
struct Generations {
    newer: HashMap<IpAddr, TokenBucket>,
    older: HashMap<IpAddr, TokenBucket>,
}

impl Budget {
    /// `burst` answers at once per address, then `rate` a second.
    pub(crate) fn new(rate: u32, burst: u32) -> Self {
        Self::with_capacity(rate, burst, MAX_TRACKED)
    }

    fn with_capacity(rate: u32, burst: u32, capacity: usize) -> Self {
        Self {
            rate: rate.max(1),
            burst: burst.max(1),
            half: (capacity / 2).max(1),
            table: Mutex::default(),
        }
    }

    /// Spends one of `ip`'s tokens at `now`; false when it has none left.
    pub(crate) fn take(&self, ip: IpAddr, now: Instant) -> bool {
        let key = address_key(ip);
        let mut t = self.table.lock().unwrap_or_else(PoisonError::into_inner);
        if !t.newer.contains_key(&key) {
            let bucket = t.older.remove(&key).unwrap_or_else(|| {
                // Never closes anything: the caller only refuses one answer.
                TokenBucket::new(self.rate, self.burst, u32::MAX, now)
            });
            if t.newer.len() >= self.half {
                t.older = std::mem::take(&mut t.newer);
            }
            t.newer.insert(key, bucket);
        }
        t.newer
            .get_mut(&key)
            .is_some_and(|bucket| bucket.take(now) == RateVerdict::Pass)
    }

    /// Gives back a token `ip` spent on an answer that turned out to cost
    /// almost nothing (a `304`): it was taken first, before any work.
    pub(crate) fn give_back(&self, ip: IpAddr) {
        let key = address_key(ip);
        let mut t = self.table.lock().unwrap_or_else(PoisonError::into_inner);
        if let Some(bucket) = t.newer.get_mut(&key) {
            bucket.give_back();
        }
    }

    /// How long an address without a token waits for the next one, at most.
    pub(crate) fn retry_after(&self) -> Duration {
        Duration::from_secs_f64(1.0 / f64::from(self.rate))
    }

    #[cfg(test)]
    fn len(&self) -> usize {
        let t = self.table.lock().unwrap_or_else(PoisonError::into_inner);
        t.newer.len() + t.older.len()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ip(s: &str) -> IpAddr {
        s.parse().unwrap()
    }

    #[test]
    fn a_burst_then_the_rate_per_address() {
        let t0 = Instant::now();
        let b = Budget::new(2, 3);
        let a = ip("192.0.2.1");
        assert!((0..3).all(|_| b.take(a, t0)));
        assert!(!b.take(a, t0));
        assert!(b.take(ip("192.0.2.2"), t0), "another address");
        // 2 a second: one back after 500 ms.
        let t1 = t0 + Duration::from_millis(500);
        assert!(b.take(a, t1));
        assert!(!b.take(a, t1));
        assert_eq!(b.retry_after(), Duration::from_millis(500));
    }

    #[test]
    fn a_token_given_back_is_spent_again_but_never_past_the_burst() {
        let t0 = Instant::now();
        let b = Budget::new(1, 2);
        let a = ip("192.0.2.1");
        assert!(b.take(a, t0) && b.take(a, t0));
        assert!(!b.take(a, t0));
        b.give_back(a);
        assert!(b.take(a, t0));
        assert!(!b.take(a, t0));
        for _ in 0..10 {
            b.give_back(a);
        }
        assert!(b.take(a, t0) && b.take(a, t0));
        assert!(!b.take(a, t0), "the burst caps what is given back");
    }

    #[test]
    fn ipv6_counts_per_64() {
        let t0 = Instant::now();
        let b = Budget::new(1, 1);
        assert!(b.take(ip("2001:db8:1:2::1"), t0));
        assert!(!b.take(ip("2001:db8:1:2::ffff"), t0));
        assert!(b.take(ip("2001:db8:1:3::1"), t0));
    }

    #[test]
    fn the_table_is_bounded_and_keeps_the_busy() {
        let t0 = Instant::now();
        let b = Budget::with_capacity(1, 1, 8);
        let busy = ip("10.9.9.9");
        assert!(b.take(busy, t0));
        for i in 0..100u8 {
            b.take(IpAddr::from([10, 0, 0, i]), t0);
            // Seen again and again, it stays in the newer generation.
            assert!(!b.take(busy, t0), "forgotten after {i}");
        }
        assert!(b.len() <= 8, "{}", b.len());
    }
}
