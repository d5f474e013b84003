//! The one place where events are decided (`docs/protocol.md` §2.4): each
//! published list is compared, key by key, with what the tracker knew, and
//! a key unlisted for the offline grace is declared offline. Pure: the
//! caller passes the time, so tests drive the clock.

use std::{
    collections::{hash_map::Entry, HashMap},
    sync::Arc,
    time::{Duration, SystemTime},
};

use protocol::{
    delta::Keyed,
    watch::{Event, ServerFilter},
    ServerEntry, ServerKey,
};
use tokio::time::Instant;

/// What happened to one key, before any watch's rules apply.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Change {
    /// The key was not listed and now is.
    Online,
    /// The key stayed unlisted for the offline grace.
    Offline,
    /// `isLobbyOpen` went from false to true.
    LobbyOpened,
    /// `players.current` rose from `from` (to the entry's current).
    PlayersRose { from: u32 },
}

/// One change of one key, with the server as it is now (for an offline
/// server, as it was last listed).
#[derive(Debug, Clone, PartialEq)]
pub struct Occurrence {
    pub key: ServerKey,
    pub change: Change,
    pub server: Arc<ServerEntry>,
    /// When the bridge decided it (the notification's timestamp).
    pub at: SystemTime,
}

impl Occurrence {
    /// The event a watch with these rules fires on, if any: the change
    /// must be one of its `events`, the server among its `servers`, and a
    /// rise in players must reach its `threshold` from below.
    pub fn fires(
        &self,
        events: &[Event],
        servers: &ServerFilter,
        threshold: Option<u32>,
    ) -> Option<Event> {
        self.fires_on_key(events, threshold)
            .filter(|_| servers.matches(self.key, &self.server.name))
    }

    /// [`Occurrence::fires`] for a watch of this very key (a push
    /// subscription's watch names one server).
    pub fn fires_on_key(&self, events: &[Event], threshold: Option<u32>) -> Option<Event> {
        let event = match self.change {
            Change::Online => Event::ServerOnline,
            Change::Offline => Event::ServerOffline,
            Change::LobbyOpened => Event::LobbyOpened,
            Change::PlayersRose { from } => {
                let t = threshold?;
                let now = self.server.stats.players.current;
                if !(from < t && now >= t) {
                    return None;
                }
                Event::PlayersReached
            }
        };
        events.contains(&event).then_some(event)
    }
}

/// What the tracker knows of one key.
#[derive(Debug)]
struct Known {
    /// The server as last listed.
    server: Arc<ServerEntry>,
    /// Since when it is not listed (`None`: listed).
    unlisted_since: Option<Instant>,
}

/// The keys seen and their last state.
#[derive(Debug)]
pub struct Tracker {
    grace: Duration,
    known: HashMap<ServerKey, Known>,
    /// Until this time, keys that appear are taken as already known: the
    /// bridge (and its master) just started, and cannot tell a server that
    /// was offline from one that reconnects.
    warm_at: Instant,
}

impl Tracker {
    /// A tracker started at `now`, declaring keys offline after `grace`
    /// unlisted; keys that appear within `grace` of `now` are not
    /// announced.
    pub fn new(grace: Duration, now: Instant) -> Self {
        Self {
            grace,
            known: HashMap::new(),
            warm_at: now + grace,
        }
    }

    /// Whether keys that appear now are announced.
    pub fn warm(&self, now: Instant) -> bool {
        now >= self.warm_at
    }

    /// Keys known (listed, or unlisted for less than the grace).
    pub fn len(&self) -> usize {
        self.known.len()
    }

    /// Whether no key is known.
    pub fn is_empty(&self) -> bool {
        self.known.is_empty()
    }

    /// Compares the list `entries` (published at `now`) with what was
    /// known. A key listed twice (twins) counts once, as its first entry.
    /// Offline keys are not declared here: see [`Tracker::expire`].
    pub fn observe(&mut self, entries: &[Keyed], now: Instant, at: SystemTime) -> Vec<Occurrence> {
        let warm = self.warm(now);
        let mut out = Vec::new();
        let mut listed: HashMap<ServerKey, &ServerEntry> = HashMap::with_capacity(entries.len());
        for keyed in entries {
            if let Some(key) = keyed.key {
                listed.entry(key).or_insert(&keyed.entry);
            }
        }
        for (&key, &entry) in &listed {
            match self.known.entry(key) {
                Entry::Vacant(slot) => {
                    let server = Arc::new(entry.clone());
                    if warm {
                        out.push(Occurrence {
                            key,
                            change: Change::Online,
                            server: server.clone(),
                            at,
                        });
                    }
                    slot.insert(Known {
                        server,
                        unlisted_since: None,
                    });
                }
                Entry::Occupied(mut slot) => {
                    let known = slot.get_mut();
                    known.unlisted_since = None;
                    if *known.server == *entry {
                        continue;
                    }
                    let before = known.server.stats;
                    let server = Arc::new(entry.clone());
                    known.server = server.clone();
                    let now_stats = entry.stats;
                    if !before.is_lobby_open && now_stats.is_lobby_open {
                        out.push(Occurrence {
                            key,
                            change: Change::LobbyOpened,
                            server: server.clone(),
                            at,
                        });
                    }
                    if now_stats.players.current > before.players.current {
                        out.push(Occurrence {
                            key,
                            change: Change::PlayersRose {
                                from: before.players.current,
                            },
                            server,
                            at,
                        });
                    }
                }
            }
        }
        for (key, known) in &mut self.known {
            if known.unlisted_since.is_none() && !listed.contains_key(key) {
                known.unlisted_since = Some(now);
            }
        }
        out
    }

    /// Declares offline (and forgets) every key unlisted for the grace by
    /// `now`.
    pub fn expire(&mut self, now: Instant, at: SystemTime) -> Vec<Occurrence> {
        let grace = self.grace;
        let mut out = Vec::new();
        self.known.retain(|&key, known| match known.unlisted_since {
            Some(since) if now.saturating_duration_since(since) >= grace => {
                out.push(Occurrence {
                    key,
                    change: Change::Offline,
                    server: known.server.clone(),
                    at,
                });
                false
            }
            _ => true,
        });
        out
    }

    /// When the next key would be declared offline, if any is unlisted.
    pub fn next_expiry(&self) -> Option<Instant> {
        self.known
            .values()
            .filter_map(|k| k.unlisted_since)
            .min()
            .map(|since| since + self.grace)
    }
}

#[cfg(test)]
mod tests;
