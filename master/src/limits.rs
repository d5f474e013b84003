//! Abuse limits without I/O: who may connect (the global and per-address
//! connection caps), how fast a connection may send (a token bucket), and
//! how often a warning about either may be logged.

use std::{
    collections::HashMap,
    net::{IpAddr, Ipv6Addr},
    sync::{
        atomic::{AtomicU64, Ordering},
        Arc, Mutex, MutexGuard,
    },
    time::{Duration, Instant},
};

use ipnet::IpNet;

/// What one connection's address is counted as: IPv4 addresses by
/// themselves, IPv6 by their /64, since one host is usually handed a whole
/// /64 and could otherwise open its connections from as many addresses.
pub fn address_key(ip: IpAddr) -> IpAddr {
    match ip.to_canonical() {
        IpAddr::V4(v4) => IpAddr::V4(v4),
        IpAddr::V6(v6) => {
            let bits = u128::from(v6) & !((1u128 << 64) - 1);
            IpAddr::V6(Ipv6Addr::from(bits))
        }
    }
}

/// Why a connection was not admitted.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Refusal {
    /// The master serves `max_connections` already.
    Full,
    /// This address (or IPv6 /64) holds `max_per_address` already.
    PerAddress,
}

/// Connection counts, overall and per address, shared by the listener and
/// the connections' guards.
#[derive(Debug)]
pub struct Admission {
    max_total: usize,
    max_per_address: usize,
    exempt: Vec<IpNet>,
    counts: Mutex<Counts>,
}

#[derive(Debug, Default)]
struct Counts {
    total: usize,
    by_address: HashMap<IpAddr, usize>,
}

impl Admission {
    pub fn new(max_total: usize, max_per_address: usize, exempt: Vec<IpNet>) -> Arc<Self> {
        Arc::new(Self {
            max_total,
            max_per_address,
            exempt,
            counts: Mutex::default(),
        })
    }

    fn lock(&self) -> MutexGuard<'_, Counts> {
        // Counts stay consistent: every change is a single step.
        self.counts.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Whether `ip` is on the allow-list (no per-address cap, no rate limit).
    pub fn is_exempt(&self, ip: IpAddr) -> bool {
        let ip = ip.to_canonical();
        self.exempt.iter().any(|n| n.contains(&ip))
    }

    /// Counts a new connection from `ip`, or says why it may not stay. The
    /// returned slot gives the place back when dropped.
    pub fn admit(self: &Arc<Self>, ip: IpAddr) -> Result<Slot, Refusal> {
        let exempt = self.is_exempt(ip);
        let key = address_key(ip);
        let mut counts = self.lock();
        if counts.total >= self.max_total {
            return Err(Refusal::Full);
        }
        let mine = counts.by_address.get(&key).copied().unwrap_or(0);
        if !exempt && mine >= self.max_per_address {
            return Err(Refusal::PerAddress);
        }
        counts.total += 1;
        counts.by_address.insert(key, mine + 1);
        Ok(Slot {
            admission: self.clone(),
            key,
            exempt,
        })
    }

    /// Connections served now.
    pub fn total(&self) -> usize {
        self.lock().total
    }
}

/// One admitted connection's place in the counts.
#[derive(Debug)]
pub struct Slot {
    admission: Arc<Admission>,
    key: IpAddr,
    exempt: bool,
}

impl Slot {
    /// Whether the connection's address is on the allow-list.
    pub fn exempt(&self) -> bool {
        self.exempt
    }
}

impl Drop for Slot {
    fn drop(&mut self) {
        let mut counts = self.admission.lock();
        counts.total = counts.total.saturating_sub(1);
        if let Some(n) = counts.by_address.get_mut(&self.key) {
            *n -= 1;
            if *n == 0 {
                counts.by_address.remove(&self.key);
            }
        }
    }
}

/// What the rate limit says about one message.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Verdict {
    /// Within the rate: process it.
    Pass,
    /// Over the rate: discard it.
    Excess,
    /// Over the rate for too long: close the connection.
    Flood,
}

/// A token bucket (`burst` messages at once, then `rate` a second) that also
/// tells a burst from a flood: excess messages are counted until the peer
/// has been quiet long enough for the bucket to fill again, and
/// `flood_after` of them close the connection.
#[derive(Debug, Clone)]
pub struct TokenBucket {
    tokens: f64,
    burst: f64,
    rate: f64,
    last: Instant,
    excess: u32,
    flood_after: u32,
}

impl TokenBucket {
    /// A full bucket.
    pub fn new(rate: u32, burst: u32, flood_after: u32, now: Instant) -> Self {
        let burst = f64::from(burst.max(1));
        Self {
            tokens: burst,
            burst,
            rate: f64::from(rate),
            last: now,
            excess: 0,
            flood_after,
        }
    }

    /// Judges one message arriving at `now`.
    pub fn take(&mut self, now: Instant) -> Verdict {
        let elapsed = now.saturating_duration_since(self.last).as_secs_f64();
        self.last = now;
        self.tokens = (self.tokens + elapsed * self.rate).min(self.burst);
        if self.tokens >= self.burst {
            self.excess = 0;
        }
        if self.tokens >= 1.0 {
            self.tokens -= 1.0;
            return Verdict::Pass;
        }
        self.excess = self.excess.saturating_add(1);
        if self.excess >= self.flood_after {
            Verdict::Flood
        } else {
            Verdict::Excess
        }
    }
}

/// Lets one log line through per `every`, counting the ones held back, so
/// a connection flood from many addresses cannot flood the log.
#[derive(Debug)]
pub struct LogThrottle {
    every: Duration,
    next: Mutex<Option<Instant>>,
    held_back: AtomicU64,
}

impl LogThrottle {
    pub fn new(every: Duration) -> Self {
        Self {
            every,
            next: Mutex::new(None),
            held_back: AtomicU64::new(0),
        }
    }

    /// `Some(n)` if a line may be logged now (`n` lines were held back
    /// since the last one), `None` if this one is held back.
    pub fn allow(&self, now: Instant) -> Option<u64> {
        let mut next = self.next.lock().unwrap_or_else(|p| p.into_inner());
        if next.is_some_and(|t| now < t) {
            self.held_back.fetch_add(1, Ordering::Relaxed);
            return None;
        }
        *next = Some(now + self.every);
        Some(self.held_back.swap(0, Ordering::Relaxed))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ipv6_counts_per_64_and_mapped_ipv4_as_ipv4() {
        let a = address_key("2001:db8:1:2:aaaa::1".parse().unwrap());
        let b = address_key("2001:db8:1:2:bbbb::9".parse().unwrap());
        let c = address_key("2001:db8:1:3::1".parse().unwrap());
        assert_eq!(a, b);
        assert_ne!(a, c);
        assert_eq!(
            address_key("::ffff:192.0.2.1".parse().unwrap()),
            "192.0.2.1".parse::<IpAddr>().unwrap()
        );
    }

    #[test]
    fn caps_count_per_address_and_overall_and_give_back_on_drop() {
        let adm = Admission::new(3, 2, vec!["127.0.0.9/32".parse().unwrap()]);
        let one: IpAddr = "127.0.0.1".parse().unwrap();
        let two: IpAddr = "127.0.0.2".parse().unwrap();
        let nine: IpAddr = "127.0.0.9".parse().unwrap();
        let a = adm.admit(one).unwrap();
        let _b = adm.admit(one).unwrap();
        assert_eq!(adm.admit(one).unwrap_err(), Refusal::PerAddress);
        let _c = adm.admit(two).unwrap();
        assert_eq!(adm.admit(two).unwrap_err(), Refusal::Full);
        assert_eq!(adm.admit(nine).unwrap_err(), Refusal::Full, "exempt too");
        drop(a);
        assert_eq!(adm.total(), 2);
        let d = adm.admit(nine).unwrap();
        assert!(d.exempt());
    }

    #[test]
    fn exempt_addresses_pass_the_per_address_cap() {
        let adm = Admission::new(100, 1, vec!["127.0.0.0/8".parse().unwrap()]);
        let slots: Vec<Slot> = (0..10)
            .map(|_| adm.admit("127.0.0.1".parse().unwrap()).unwrap())
            .collect();
        assert_eq!(slots.len(), 10);
        assert!(adm.admit("192.0.2.1".parse().unwrap()).is_ok());
        let _keep = adm.admit("192.0.2.1".parse().unwrap());
        assert!(adm.admit("192.0.2.1".parse().unwrap()).is_err());
    }

    #[test]
    fn bucket_discards_excess_and_closes_a_sustained_flood() {
        let t0 = Instant::now();
        let mut b = TokenBucket::new(10, 3, 5, t0);
        for _ in 0..3 {
            assert_eq!(b.take(t0), Verdict::Pass);
        }
        assert_eq!(b.take(t0), Verdict::Excess);
        // A short pause refills one token; the excess is still counted.
        assert_eq!(b.take(t0 + Duration::from_millis(100)), Verdict::Pass);
        let t1 = t0 + Duration::from_millis(100);
        for _ in 0..3 {
            assert_eq!(b.take(t1), Verdict::Excess);
        }
        assert_eq!(b.take(t1), Verdict::Flood);
        // Quiet long enough to fill the bucket forgives the past.
        let mut b = TokenBucket::new(10, 3, 2, t0);
        for _ in 0..3 {
            b.take(t0);
        }
        assert_eq!(b.take(t0), Verdict::Excess);
        let t2 = t0 + Duration::from_secs(1);
        assert_eq!(b.take(t2), Verdict::Pass);
        for _ in 0..2 {
            b.take(t2);
        }
        assert_eq!(b.take(t2), Verdict::Excess, "counting started afresh");
    }

    #[test]
    fn throttle_lets_one_line_through_per_interval() {
        let t = LogThrottle::new(Duration::from_secs(10));
        let t0 = Instant::now();
        assert_eq!(t.allow(t0), Some(0));
        assert_eq!(t.allow(t0 + Duration::from_secs(1)), None);
        assert_eq!(t.allow(t0 + Duration::from_secs(2)), None);
        assert_eq!(t.allow(t0 + Duration::from_secs(11)), Some(2));
    }
}
