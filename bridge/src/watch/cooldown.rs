//! "At most once per key and event per cooldown", per watch: what makes a
//! flapping server one notification instead of a storm. Bounded: entries
//! whose cooldown is over are dropped, and past the cap the oldest go
//! first (a dropped entry can only let one more notification through).

use std::{collections::HashMap, hash::Hash, time::Duration};

use protocol::{watch::Event, ServerKey};
use tokio::time::Instant;

/// Entries kept at most (a few MiB).
pub const MAX_ENTRIES: usize = 100_000;

/// When each watch last fired on each key and event.
#[derive(Debug)]
pub struct Cooldowns<W> {
    /// The time it fired, and until when it stays quiet.
    fired: HashMap<(W, ServerKey, Event), Instant>,
    cap: usize,
}

impl<W: Hash + Eq + Clone> Default for Cooldowns<W> {
    fn default() -> Self {
        Self::with_cap(MAX_ENTRIES)
    }
}

impl<W: Hash + Eq + Clone> Cooldowns<W> {
    /// Cooldowns holding at most `cap` entries.
    pub fn with_cap(cap: usize) -> Self {
        Self {
            fired: HashMap::new(),
            cap: cap.max(1),
        }
    }

    /// Whether `watch` may fire on `key` and `event` at `now` (then it is
    /// counted as fired, quiet until `now + cooldown`).
    pub fn allow(
        &mut self,
        watch: &W,
        key: ServerKey,
        event: Event,
        cooldown: Duration,
        now: Instant,
    ) -> bool {
        let slot = (watch.clone(), key, event);
        if self.fired.get(&slot).is_some_and(|&until| now < until) {
            return false;
        }
        if cooldown.is_zero() {
            self.fired.remove(&slot);
            return true;
        }
        if self.fired.len() >= self.cap && !self.fired.contains_key(&slot) {
            self.fired.retain(|_, until| now < *until);
            if self.fired.len() >= self.cap {
                if let Some(first) = self
                    .fired
                    .iter()
                    .min_by_key(|(_, until)| **until)
                    .map(|(k, _)| k.clone())
                {
                    self.fired.remove(&first);
                }
            }
        }
        self.fired.insert(slot, now + cooldown);
        true
    }

    /// Forgets every entry of `watch` (it was deleted).
    pub fn forget(&mut self, watch: &W) {
        self.fired.retain(|(w, _, _), _| w != watch);
    }

    /// Entries held.
    pub fn len(&self) -> usize {
        self.fired.len()
    }

    /// Whether no entry is held.
    pub fn is_empty(&self) -> bool {
        self.fired.is_empty()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const KEY: ServerKey = ServerKey(1);

    #[test]
    fn once_per_key_and_event_per_cooldown() {
        let mut c = Cooldowns::default();
        let ten = Duration::from_secs(600);
        let t0 = Instant::now();
        assert!(c.allow(&1u64, KEY, Event::LobbyOpened, ten, t0));
        assert!(!c.allow(
            &1u64,
            KEY,
            Event::LobbyOpened,
            ten,
            t0 + Duration::from_secs(599)
        ));
        assert!(
            c.allow(&1u64, KEY, Event::ServerOnline, ten, t0),
            "another event"
        );
        assert!(
            c.allow(&1u64, ServerKey(2), Event::LobbyOpened, ten, t0),
            "another key"
        );
        assert!(
            c.allow(&2u64, KEY, Event::LobbyOpened, ten, t0),
            "another watch"
        );
        assert!(c.allow(&1u64, KEY, Event::LobbyOpened, ten, t0 + ten));
        c.forget(&1u64);
        assert_eq!(c.len(), 1);
    }

    #[test]
    fn zero_fires_every_time_and_holds_nothing() {
        let mut c = Cooldowns::default();
        let t0 = Instant::now();
        for _ in 0..3 {
            assert!(c.allow(&1u64, KEY, Event::LobbyOpened, Duration::ZERO, t0));
        }
        assert!(c.is_empty());
    }

    #[test]
    fn the_table_is_bounded_and_drops_what_ends_first() {
        let mut c = Cooldowns::with_cap(3);
        let t0 = Instant::now();
        for i in 0..3u64 {
            let cd = Duration::from_secs(100 + i);
            assert!(c.allow(&i, KEY, Event::LobbyOpened, cd, t0));
        }
        assert!(c.allow(&9u64, KEY, Event::LobbyOpened, Duration::from_secs(500), t0));
        assert_eq!(c.len(), 3);
        assert!(
            c.allow(&0u64, KEY, Event::LobbyOpened, Duration::from_secs(1), t0),
            "the one ending first went"
        );
        assert!(!c.allow(&2u64, KEY, Event::LobbyOpened, Duration::from_secs(1), t0));
    }
}
