//! Abuse limits without I/O: who may connect (the global and per-address
//! connection caps), how fast a connection may send (a token bucket), and
//! how often a warning about either may be logged.

use std::{
    collections::HashMap,
    net::{IpAddr, Ipv6Addr},
    sync::{Arc, Mutex, MutexGuard},
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
pub enum NotAdmitted {
    /// The master serves `max_connections` already.
    Full,
    /// This address (or IPv6 /64) holds `max_per_address` already.
    PerAddress,
}

/// Open connections per address (see [`address_key`]), each at most `max`:
/// the cap on one host that the master and the bridge (HTTP and WebSocket)
/// share.
#[derive(Debug)]
pub struct PerAddress {
    max: usize,
    open: Mutex<HashMap<IpAddr, usize>>,
}

impl PerAddress {
    pub fn new(max: usize) -> Arc<Self> {
        Arc::new(Self {
            max,
            open: Mutex::default(),
        })
    }

    fn lock(&self) -> MutexGuard<'_, HashMap<IpAddr, usize>> {
        // Counts stay consistent: every change is a single step.
        self.open.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Counts one more connection from `ip`, or `None` when its address
    /// holds `max` already. The slot gives the place back when dropped.
    pub fn try_acquire(self: &Arc<Self>, ip: IpAddr) -> Option<AddressSlot> {
        self.acquire(ip, true)
    }

    /// Counts one more connection from `ip`, past `max` too unless `capped`
    /// (an allow-listed address still counts for its neighbours in a /64).
    fn acquire(self: &Arc<Self>, ip: IpAddr, capped: bool) -> Option<AddressSlot> {
        let key = address_key(ip);
        let mut open = self.lock();
        let count = open.get(&key).copied().unwrap_or(0);
        if capped && count >= self.max {
            return None;
        }
        open.insert(key, count + 1);
        Some(AddressSlot {
            owner: self.clone(),
            key,
        })
    }
}

/// One connection counted against its address; given back on drop.
#[derive(Debug)]
pub struct AddressSlot {
    owner: Arc<PerAddress>,
    key: IpAddr,
}

impl Drop for AddressSlot {
    fn drop(&mut self) {
        let mut open = self.owner.lock();
        if let Some(n) = open.get_mut(&self.key) {
            *n -= 1;
            if *n == 0 {
                open.remove(&self.key);
            }
        }
    }
}

/// Connection counts, overall and per address, shared by the listener and
/// the connections' guards; addresses on the allow-list have no cap of
/// their own.
#[derive(Debug)]
pub struct Admission {
    max_total: usize,
    exempt: Vec<IpNet>,
    total: Mutex<usize>,
    per_address: Arc<PerAddress>,
}

impl Admission {
    pub fn new(max_total: usize, max_per_address: usize, exempt: Vec<IpNet>) -> Arc<Self> {
        Arc::new(Self {
            max_total,
            exempt,
            total: Mutex::new(0),
            per_address: PerAddress::new(max_per_address),
        })
    }

    fn lock(&self) -> MutexGuard<'_, usize> {
        // The count stays consistent: every change is a single step.
        self.total.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Whether `ip` is on the allow-list (no per-address cap, no rate limit).
    pub fn is_exempt(&self, ip: IpAddr) -> bool {
        let ip = ip.to_canonical();
        self.exempt.iter().any(|n| n.contains(&ip))
    }

    /// Counts a new connection from `ip`, or says why it may not stay. The
    /// returned slot gives the place back when dropped.
    pub fn admit(self: &Arc<Self>, ip: IpAddr) -> Result<Slot, NotAdmitted> {
        let exempt = self.is_exempt(ip);
        // Held across the per-address check so that two connections cannot
        // both take the last place.
        let mut total = self.lock();
        if *total >= self.max_total {
            return Err(NotAdmitted::Full);
        }
        let address = self
            .per_address
            .acquire(ip, !exempt)
            .ok_or(NotAdmitted::PerAddress)?;
        *total += 1;
        Ok(Slot {
            admission: self.clone(),
            _address: address,
            exempt,
        })
    }

    /// Connections served now.
    pub fn total(&self) -> usize {
        *self.lock()
    }
}

/// One admitted connection's place in the counts.
#[derive(Debug)]
pub struct Slot {
    admission: Arc<Admission>,
    _address: AddressSlot,
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
        let mut total = self.admission.lock();
        *total = total.saturating_sub(1);
    }
}

/// What the rate limit says about one message.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RateVerdict {
    /// Within the rate: process it.
    Pass,
    /// Over the rate: discard it.
    Excess,
    /// Over the rate for too long: close the connection.
    Flood,
}

/// When a [`TokenBucket`] forgets the messages it refused.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Forgive {
    /// Once the peer was quiet long enough for the bucket to fill again, so
    /// a peer that keeps sending just over the rate is closed in the end
    /// (the master).
    WhenFull,
    /// At the next message within the rate: only `flood_after` refusals in
    /// a row close (the bridge, whose browsers send in short bursts).
    OnPass,
}

/// A token bucket (`burst` messages at once, then `rate` a second) that also
/// tells a burst from a flood: excess messages are counted until they are
/// forgiven (see [`Forgive`]), and `flood_after` of them close the
/// connection.
#[derive(Debug, Clone)]
pub struct TokenBucket {
    tokens: f64,
    burst: f64,
    rate: f64,
    last: Instant,
    excess: u32,
    flood_after: u32,
    forgive: Forgive,
}

impl TokenBucket {
    /// A full bucket that forgives [`Forgive::WhenFull`].
    pub fn new(rate: u32, burst: u32, flood_after: u32, now: Instant) -> Self {
        let burst = f64::from(burst.max(1));
        Self {
            tokens: burst,
            burst,
            rate: f64::from(rate),
            last: now,
            excess: 0,
            flood_after,
            forgive: Forgive::WhenFull,
        }
    }

    /// The same bucket with another rule for forgiving refusals.
    #[must_use]
    pub fn forgiving(self, forgive: Forgive) -> Self {
        Self { forgive, ..self }
    }

    /// Judges one message arriving at `now`.
    pub fn take(&mut self, now: Instant) -> RateVerdict {
        let elapsed = now.saturating_duration_since(self.last).as_secs_f64();
        self.last = now;
        self.tokens = (self.tokens + elapsed * self.rate).min(self.burst);
        if self.forgive == Forgive::WhenFull && self.tokens >= self.burst {
            self.excess = 0;
        }
        if self.tokens >= 1.0 {
            self.tokens -= 1.0;
            if self.forgive == Forgive::OnPass {
                self.excess = 0;
            }
            return RateVerdict::Pass;
        }
        self.excess = self.excess.saturating_add(1);
        if self.excess >= self.flood_after {
            RateVerdict::Flood
        } else {
            RateVerdict::Excess
        }
    }

    /// Gives back one token taken by [`TokenBucket::take`] for something
    /// that turned out to cost nothing (never past the burst).
    pub fn give_back(&mut self) {
        self.tokens = (self.tokens + 1.0).min(self.burst);
    }
}

/// Lets `lines` log lines through per window of `every`, counting the ones
/// held back, so a flood (of connections, refusals or messages, from one
/// host or many) cannot flood the log. `const`, so a call site can keep its
/// own in a `static` (see [`crate::throttled`]).
#[derive(Debug)]
pub struct LogThrottle {
    every: Duration,
    lines: u32,
    window: Mutex<Window>,
}

/// The current window of a [`LogThrottle`].
#[derive(Debug)]
struct Window {
    start: Option<Instant>,
    used: u32,
    held_back: u64,
}

impl LogThrottle {
    /// At most `lines` lines (at least one) per `every`.
    pub const fn new(every: Duration, lines: u32) -> Self {
        Self {
            every,
            lines: if lines == 0 { 1 } else { lines },
            window: Mutex::new(Window {
                start: None,
                used: 0,
                held_back: 0,
            }),
        }
    }

    /// `Some(n)` if a line may be logged now (`n` lines were held back
    /// since the last one), `None` if this one is held back.
    pub fn allow(&self, now: Instant) -> Option<u64> {
        let mut w = self.window.lock().unwrap_or_else(|p| p.into_inner());
        if w.start.is_none_or(|start| now >= start + self.every) {
            w.start = Some(now);
            w.used = 0;
        }
        if w.used >= self.lines {
            w.held_back = w.held_back.saturating_add(1);
            return None;
        }
        w.used += 1;
        Some(std::mem::take(&mut w.held_back))
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
        assert_eq!(adm.admit(one).unwrap_err(), NotAdmitted::PerAddress);
        let _c = adm.admit(two).unwrap();
        assert_eq!(adm.admit(two).unwrap_err(), NotAdmitted::Full);
        assert_eq!(
            adm.admit(nine).unwrap_err(),
            NotAdmitted::Full,
            "exempt too"
        );
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
            assert_eq!(b.take(t0), RateVerdict::Pass);
        }
        assert_eq!(b.take(t0), RateVerdict::Excess);
        // A short pause refills one token; the excess is still counted.
        assert_eq!(b.take(t0 + Duration::from_millis(100)), RateVerdict::Pass);
        let t1 = t0 + Duration::from_millis(100);
        for _ in 0..3 {
            assert_eq!(b.take(t1), RateVerdict::Excess);
        }
        assert_eq!(b.take(t1), RateVerdict::Flood);
        // Quiet long enough to fill the bucket forgives the past.
        let mut b = TokenBucket::new(10, 3, 2, t0);
        for _ in 0..3 {
            b.take(t0);
        }
        assert_eq!(b.take(t0), RateVerdict::Excess);
        let t2 = t0 + Duration::from_secs(1);
        assert_eq!(b.take(t2), RateVerdict::Pass);
        for _ in 0..2 {
            b.take(t2);
        }
        assert_eq!(b.take(t2), RateVerdict::Excess, "counting started afresh");
    }

    #[test]
    fn bucket_allows_burst_then_rate() {
        let t0 = Instant::now();
        let mut b = TokenBucket::new(20, 40, u32::MAX, t0);
        let passed =
            |b: &mut TokenBucket, t| (0..50).filter(|_| b.take(t) == RateVerdict::Pass).count();
        assert_eq!(passed(&mut b, t0), 40);
        // 100 ms at 20/s refills two tokens.
        let t1 = t0 + Duration::from_millis(100);
        assert_eq!(passed(&mut b, t1), 2);
        // Never more than the burst, however long the pause.
        let t2 = t1 + Duration::from_secs(3600);
        assert_eq!(passed(&mut b, t2), 40);
    }

    #[test]
    fn forgiving_on_pass_closes_only_refusals_in_a_row() {
        let t0 = Instant::now();
        // 100 ms at 10/s gives one token back: not a full bucket of two.
        let t1 = t0 + Duration::from_millis(100);
        let mut b = TokenBucket::new(10, 2, 3, t0).forgiving(Forgive::OnPass);
        let mut m = TokenBucket::new(10, 2, 3, t0);
        for bucket in [&mut b, &mut m] {
            assert_eq!(bucket.take(t0), RateVerdict::Pass);
            assert_eq!(bucket.take(t0), RateVerdict::Pass);
            assert_eq!(bucket.take(t0), RateVerdict::Excess);
            assert_eq!(bucket.take(t0), RateVerdict::Excess);
            assert_eq!(bucket.take(t1), RateVerdict::Pass);
        }
        // The pass forgave the two refusals: three more in a row close.
        assert_eq!(b.take(t1), RateVerdict::Excess);
        assert_eq!(b.take(t1), RateVerdict::Excess);
        assert_eq!(b.take(t1), RateVerdict::Flood);
        // Forgiving only when full, the third refusal overall closes.
        assert_eq!(m.take(t1), RateVerdict::Flood);
    }

    #[test]
    fn per_address_slots_are_capped_and_given_back() {
        let counts = PerAddress::new(2);
        let a: IpAddr = "192.0.2.1".parse().unwrap();
        let b: IpAddr = "192.0.2.2".parse().unwrap();
        let first = counts.try_acquire(a).unwrap();
        let _second = counts.try_acquire(a).unwrap();
        assert!(counts.try_acquire(a).is_none());
        assert!(counts.try_acquire(b).is_some());
        drop(first);
        assert!(counts.try_acquire(a).is_some());
    }

    #[test]
    fn per_address_counts_ipv6_per_64() {
        let counts = PerAddress::new(1);
        let _slot = counts
            .try_acquire("2001:db8:1:2::1".parse().unwrap())
            .unwrap();
        assert!(counts
            .try_acquire("2001:db8:1:2:ffff::9".parse().unwrap())
            .is_none());
        assert!(counts
            .try_acquire("2001:db8:1:3::1".parse().unwrap())
            .is_some());
        // IPv4-mapped addresses count as the IPv4 address.
        let _v4 = counts.try_acquire("192.0.2.1".parse().unwrap()).unwrap();
        assert!(counts
            .try_acquire("::ffff:192.0.2.1".parse().unwrap())
            .is_none());
    }

    #[test]
    fn throttle_lets_one_line_through_per_interval() {
        let t = LogThrottle::new(Duration::from_secs(10), 1);
        let t0 = Instant::now();
        assert_eq!(t.allow(t0), Some(0));
        assert_eq!(t.allow(t0 + Duration::from_secs(1)), None);
        assert_eq!(t.allow(t0 + Duration::from_secs(2)), None);
        assert_eq!(t.allow(t0 + Duration::from_secs(11)), Some(2));
        assert_eq!(t.allow(t0 + Duration::from_secs(12)), None);
    }

    #[test]
    fn throttle_lets_a_few_lines_through_per_window() {
        let t = LogThrottle::new(Duration::from_secs(10), 3);
        let t0 = Instant::now();
        let allowed = (0..10).filter(|_| t.allow(t0).is_some()).count();
        assert_eq!(allowed, 3);
        let t1 = t0 + Duration::from_secs(10);
        assert_eq!(
            t.allow(t1),
            Some(7),
            "the next window reports the held back"
        );
        assert_eq!(t.allow(t1), Some(0));
    }
}
