//! The one place where events are decided (`docs/protocol.md` §2.4): each
//! published list's changes (the entries it added, changed or removed,
//! never the whole list) are taken key by key, and a key unlisted for the
//! offline grace is declared offline. The tracker keeps no copy of the
//! list: per key only which entries list it, and the last state of a key
//! while it is unlisted. Pure: the caller passes the time, so tests drive
//! the clock.

use std::{
    collections::{BTreeSet, HashMap},
    sync::Arc,
    time::{Duration, SystemTime},
};

use protocol::{
    delta::{Keyed, ListChange},
    watch::{self, Event, Listing, ServerFilter},
    ServerEntry, ServerKey,
};
use tokio::time::Instant;

pub use protocol::watch::ServerChange;

/// One change of one key, with the server as it is now (for an offline
/// server, as it was last listed).
#[derive(Debug, Clone, PartialEq)]
pub struct Occurrence {
    pub key: ServerKey,
    pub change: ServerChange,
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
        self.change
            .event(events, threshold, self.server.stats.players.current)
    }
}

/// What the tracker knows of one key.
#[derive(Debug, Default)]
struct Known {
    /// The ids of the entries that list it, ascending (more than one:
    /// twins; the first is the one that counts).
    ids: Vec<u64>,
    /// Since when it is not listed, and the server as it was last listed
    /// (`None`: listed): the published list's own entry, shared.
    unlisted: Option<(Instant, Arc<Keyed>)>,
}

/// A key that one list's changes touched: its first id before them, and
/// how the entries they changed or removed were.
type Touched<'a> = (Option<u64>, Vec<(u64, &'a Arc<Keyed>)>);

/// The keys seen and their last state.
#[derive(Debug)]
pub struct Tracker {
    grace: Duration,
    known: HashMap<ServerKey, Known>,
    /// The unlisted keys by when they left: the next to expire first,
    /// found without walking every key.
    leaving: BTreeSet<(Instant, ServerKey)>,
    /// Until this time, keys that appear are not announced at once: the
    /// bridge (and its master) just started, and cannot tell a server that
    /// was offline from one that reconnects. They wait in `unsure` for
    /// the caller to ask the database (see [`Tracker::take_unsure`]).
    warm_at: Instant,
    /// `server-online`s decided before `warm_at`.
    unsure: Vec<Occurrence>,
}

impl Tracker {
    /// A tracker started at `now`, declaring keys offline after `grace`
    /// unlisted; keys that appear within `grace` of `now` are not
    /// announced.
    pub fn new(grace: Duration, now: Instant) -> Self {
        Self {
            grace,
            known: HashMap::new(),
            leaving: BTreeSet::new(),
            warm_at: now + grace,
            unsure: Vec::new(),
        }
    }

    /// The `server-online`s decided in the start-up window, taken: the
    /// caller announces those of keys the history did not see listed
    /// lately (a server that just reconnected after the bridge's restart
    /// is not news; one that was offline is).
    pub fn take_unsure(&mut self) -> Vec<Occurrence> {
        std::mem::take(&mut self.unsure)
    }

    /// Whether keys that appear now are announced.
    pub fn warm(&self, now: Instant) -> bool {
        now >= self.warm_at
    }

    /// Takes one list's `changes` from the list before it (published at
    /// `now`); `listed` finds an entry of the new list by id. A key listed
    /// twice (twins) counts once, as its first entry. Offline keys are not
    /// declared here: see [`Tracker::expire`].
    pub fn observe<'a>(
        &mut self,
        changes: impl IntoIterator<Item = ListChange<'a>>,
        listed: impl Fn(u64) -> Option<&'a Arc<Keyed>>,
        now: Instant,
        at: SystemTime,
    ) -> Vec<Occurrence> {
        let mut touched: HashMap<ServerKey, Touched<'a>> = HashMap::new();
        for change in changes {
            let (keyed, old) = match change {
                ListChange::Added(new) => (new, None),
                ListChange::Updated { old, new } => (new, Some(old)),
                ListChange::Removed(old) => (old, Some(old)),
            };
            let Some(key) = keyed.key else { continue };
            let known = self.known.entry(key).or_default();
            let (_, olds) = touched
                .entry(key)
                .or_insert_with(|| (known.ids.first().copied(), Vec::new()));
            if let Some(old) = old {
                olds.push((keyed.id, old));
            }
            let place = known.ids.binary_search(&keyed.id);
            match (change, place) {
                (ListChange::Added(_), Err(i)) => known.ids.insert(i, keyed.id),
                (ListChange::Removed(_), Ok(i)) => {
                    known.ids.remove(i);
                }
                _ => {}
            }
        }
        let warm = self.warm(now);
        let mut out = Vec::new();
        for (key, (first, olds)) in touched {
            let before = first.and_then(|id| {
                olds.iter()
                    .find(|(old, _)| *old == id)
                    .map(|(_, e)| *e)
                    .or_else(|| listed(id))
            });
            let Some(known) = self.known.get_mut(&key) else {
                continue;
            };
            let after = known.ids.first().and_then(|&id| listed(id));
            match (before, after) {
                (Some(before), None) => {
                    known.unlisted = Some((now, before.clone()));
                    self.leaving.insert((now, key));
                }
                (None, None) => {
                    if known.unlisted.is_none() {
                        self.known.remove(&key);
                    }
                }
                (None, Some(after)) => match known.unlisted.take() {
                    // Back within the grace: never offline; compared with
                    // how it was last listed.
                    Some((since, last)) => {
                        self.leaving.remove(&(since, key));
                        decide(key, Some(&last.entry), &after.entry, at, &mut out);
                    }
                    None if warm => decide(key, None, &after.entry, at, &mut out),
                    None => decide(key, None, &after.entry, at, &mut self.unsure),
                },
                (Some(before), Some(after)) => {
                    decide(key, Some(&before.entry), &after.entry, at, &mut out);
                }
            }
        }
        out
    }

    /// Declares offline (and forgets) every key unlisted for the grace by
    /// `now`.
    pub fn expire(&mut self, now: Instant, at: SystemTime) -> Vec<Occurrence> {
        let mut out = Vec::new();
        while let Some(&(since, key)) = self.leaving.first() {
            if now.saturating_duration_since(since) < self.grace {
                break;
            }
            self.leaving.pop_first();
            if let Some(Known {
                unlisted: Some((_, last)),
                ..
            }) = self.known.remove(&key)
            {
                out.push(Occurrence {
                    key,
                    change: ServerChange::Offline,
                    server: Arc::new(last.entry.clone()),
                    at,
                });
            }
        }
        out
    }

    /// When the next key would be declared offline, if any is unlisted.
    pub fn next_expiry(&self) -> Option<Instant> {
        self.leaving.first().map(|(since, _)| *since + self.grace)
    }
}

/// The changes of one key now listed as `after`, last listed as `before`
/// (`None`: not listed before, or offline since): [`watch::changes`],
/// the rule the page's in-tab notices follow too.
fn decide(
    key: ServerKey,
    before: Option<&ServerEntry>,
    after: &ServerEntry,
    at: SystemTime,
    out: &mut Vec<Occurrence>,
) {
    if before == Some(after) {
        return;
    }
    let last = before.map(|b| Listing::of(&b.stats));
    let mut server: Option<Arc<ServerEntry>> = None;
    let changes: Vec<ServerChange> = watch::changes(last, Listing::of(&after.stats)).collect();
    // No event, but what a status card shows changed: its cue.
    let shown = changes.is_empty()
        && before.is_some_and(|b| {
            (
                &b.name,
                b.stats.players.current,
                b.stats.players.max,
                b.stats.is_lobby_open,
            ) != (
                &after.name,
                after.stats.players.current,
                after.stats.players.max,
                after.stats.is_lobby_open,
            )
        });
    for change in changes
        .into_iter()
        .chain(shown.then_some(ServerChange::Shown))
    {
        let server = server
            .get_or_insert_with(|| Arc::new(after.clone()))
            .clone();
        out.push(Occurrence {
            key,
            change,
            server,
            at,
        });
    }
}

#[cfg(test)]
mod tests;
