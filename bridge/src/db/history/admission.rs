//! The history's growth bound per source: one source (the network a
//! server was registered from, [`crate::live::keys::source`]) may have at most
//! so many keys recorded per day, so that a host churning registrations
//! (a new address or port each sample) cannot make the stored history
//! grow without bound and crowd out everyone else's. Keys its source has
//! recorded that day go on being recorded; the rest of its keys are left
//! out of the day's samples. Applied by the writer to each sample before
//! it reaches the store, whatever the store's engine.
//!
//! The number (`--history-keys-per-source`, [`DEFAULT_KEYS_PER_SOURCE`]):
//! one server recorded for a day takes about 1 KB (measured: 976 bytes per
//! server per day in a 10,000-server month, `docs/performance.md`; a key
//! listed for one sample only took about as much, its server row, hour
//! and day rows: 44 MB for 46,080 such keys, 955 bytes each). About 2 MB a
//! day per source is therefore 2 MB / 1 KB ≈ 2,000 keys a day; a source
//! whose servers all stay listed the whole day takes 2,000 × 976 bytes
//! ≈ 1.95 MB. A host holds at most the master's per-address cap of
//! servers at once (32 by default), far below it.

use std::{
    collections::{HashMap, HashSet},
    net::IpAddr,
};

use protocol::delta::Keyed;

use crate::live::keys::source;

/// Keys tracked in one day, all sources together, at most (about 40 bytes
/// each: a few MB). Past it no source may add a key that day, so that
/// many sources (one host has many IPv6 /64s) cannot grow this memory
/// instead; the keys admitted already go on being recorded.
const MAX_TRACKED: usize = 100_000;

const DAY_MS: i64 = 86_400_000;

/// Which keys each source has recorded on the current day (UTC).
#[derive(Debug)]
pub struct Admission {
    per_source: usize,
    day: i64,
    admitted: HashMap<IpAddr, HashSet<u64>>,
    tracked: usize,
}

impl Admission {
    /// A bound of `per_source` keys per source and day.
    pub fn new(per_source: usize) -> Self {
        Self {
            per_source,
            day: i64::MIN,
            admitted: HashMap::new(),
            tracked: 0,
        }
    }

    /// The entries of a sample taken at `t` (Unix ms) that may be
    /// recorded, in order, and how many were left out: each whose source
    /// has recorded its key today already or still may add one, and
    /// those of no known source (see [`crate::live::keys::source`]).
    pub fn admit<'a>(
        &mut self,
        t: i64,
        entries: impl IntoIterator<Item = &'a Keyed>,
    ) -> (Vec<&'a Keyed>, usize) {
        let day = t.div_euclid(DAY_MS);
        if day != self.day {
            self.day = day;
            self.admitted.clear();
            self.tracked = 0;
        }
        let mut refused = 0;
        let admitted = entries
            .into_iter()
            .filter(|keyed| {
                let (Some(key), Some(source)) = (keyed.key, source(&keyed.entry)) else {
                    return true;
                };
                let keys = self.admitted.entry(source).or_default();
                if keys.contains(&key.0) {
                    return true;
                }
                if keys.len() >= self.per_source || self.tracked >= MAX_TRACKED {
                    refused += 1;
                    return false;
                }
                keys.insert(key.0);
                self.tracked += 1;
                true
            })
            .collect();
        (admitted, refused)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use protocol::{ServerEntry, ServerKey, Stats};

    fn keyed(key: u64, address: &str, registrant: Option<&str>) -> Keyed {
        Keyed {
            id: key,
            key: Some(ServerKey(key)),
            entry: ServerEntry {
                name: "s".into(),
                address: Some(address.into()),
                port: Some(20000),
                stats: Stats::default(),
                registrant: registrant.map(|r| r.parse().unwrap()),
            },
        }
    }

    fn keys(admitted: &[&Keyed]) -> Vec<u64> {
        admitted.iter().filter_map(|k| k.key).map(|k| k.0).collect()
    }

    #[test]
    fn a_source_records_its_keys_of_the_day_and_no_more() {
        let mut admission = Admission::new(2);
        let t = 10 * DAY_MS;
        let day1 = [
            keyed(1, "192.0.2.1", None),
            keyed(2, "10.0.0.1", Some("198.51.100.7")),
            keyed(3, "10.0.0.2", Some("198.51.100.7")),
            keyed(4, "10.0.0.3", Some("198.51.100.7")),
            keyed(5, "game.example", None),
        ];
        let (admitted, refused) = admission.admit(t, &day1);
        assert_eq!(keys(&admitted), [1, 2, 3, 5]);
        assert_eq!(refused, 1);
        // Later that day: keys of the day go on, new ones of a full source
        // do not, another source's do.
        let later = [
            keyed(3, "10.0.0.2", Some("198.51.100.7")),
            keyed(6, "10.0.0.4", Some("198.51.100.7")),
            keyed(7, "192.0.2.2", None),
            keyed(1, "192.0.2.1", None),
        ];
        let (admitted, refused) = admission.admit(t + 3_600_000, &later);
        assert_eq!(keys(&admitted), [3, 7, 1]);
        assert_eq!(refused, 1);
        // The next day starts again.
        let (admitted, refused) = admission.admit(t + DAY_MS, &later);
        assert_eq!(keys(&admitted), [3, 6, 7, 1]);
        assert_eq!(refused, 0);
    }

    #[test]
    fn an_ipv6_source_is_its_64() {
        let mut admission = Admission::new(1);
        let sample = [
            keyed(1, "2001:db8::1", None),
            keyed(2, "2001:db8::2", None),
            keyed(3, "2001:db8:0:1::1", None),
        ];
        let (admitted, refused) = admission.admit(0, &sample);
        assert_eq!(keys(&admitted), [1, 3]);
        assert_eq!(refused, 1);
    }
}
