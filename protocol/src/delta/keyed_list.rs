//! The bridge's side of a delta: numbering the master's entries and finding
//! what changed between two lists.

use std::{
    collections::{BTreeMap, HashMap, VecDeque},
    sync::Arc,
};

use super::Keyed;
use crate::{message::ServerEntry, ServerKey};

/// The entries that changed between two lists: what a delta carries.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Changeset {
    /// New entries (with fresh ids) and changed ones (with their ids), in
    /// list order.
    pub upsert: Vec<Keyed>,
    /// Ids of the entries that left.
    pub remove: Vec<u64>,
}

impl Changeset {
    pub fn is_empty(&self) -> bool {
        self.upsert.is_empty() && self.remove.is_empty()
    }
}

/// What identifies an entry between two lists: a server's registration
/// (name, address, port, and who registered it when that was not the
/// server itself) stays the same for its connection's life; a new
/// registration moves it to the end of the master's list. The registrant
/// is part of it because it is part of the key: a twin registered by
/// another host must never inherit the key of the server it copies.
type Identity<'a> = (
    &'a str,
    Option<&'a str>,
    Option<u16>,
    Option<std::net::IpAddr>,
);

fn identity(e: &ServerEntry) -> Identity<'_> {
    (&e.name, e.address.as_deref(), e.port, e.registrant)
}

/// Whether `a` and `b` are the same server in two lists: the same
/// registration (see [`Identity`]). The one rule for it: the bridge's
/// numbering ([`KeyedList::update`]) follows it, and so does a page that
/// numbers a whole list itself.
pub fn same_server(a: &ServerEntry, b: &ServerEntry) -> bool {
    identity(a) == identity(b)
}

/// Why [`KeyedList::pass_on`] did not take a source's changes: the list
/// never followed that source's ids (it was only ever numbered from whole
/// lists without them), or a change does not fit how a source numbers its
/// list (an id that changed its registration, a new id below one already
/// held). The list is as it was; number the source's whole list instead
/// ([`KeyedList::follow`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
#[error("the change does not follow the list's numbering; the whole list is needed")]
pub struct Unfollowed;

/// A list's entries by id. Ids rise in list order, so the map's order
/// is the list's; persistent, so a published list is an O(1) copy of the
/// one that changes next, and two copies are compared by what they do not
/// share ([`super::changes_between`]). The registry holds its list as one,
/// and the master's feed publishes that list itself.
pub type Entries = imbl::OrdMap<u64, Arc<Keyed>>;

/// Which of our ids each of a source's ids has, while the list follows a
/// source that numbers its own list (the registry, a master's feed).
#[derive(Debug, Clone, Default)]
struct SourceIds {
    ours: HashMap<u64, u64>,
    /// The highest source id seen: a source's new entries are above it.
    max: Option<u64>,
}

/// The list as it stood when it last followed its source, kept while it is
/// numbered from whole lists taken elsewhere (a bridge polls its master
/// while the master's feed is down): the source's list then is these
/// entries under their source ids, so the source's changes since can still
/// be taken ([`KeyedList::pass_on`]) without anyone holding the source's
/// whole list. Shares with the list every entry that did not change since.
#[derive(Debug, Clone)]
struct Left {
    ids: SourceIds,
    entries: Entries,
}

impl Left {
    /// The source's list as it was, under the source's ids, with
    /// `changes` (the source's, since) applied.
    fn with(self, changes: impl IntoIterator<Item = Changeset>) -> Vec<Keyed> {
        let mut whole: BTreeMap<u64, ServerEntry> = self
            .ids
            .ours
            .iter()
            .filter_map(|(&id, ours)| self.entries.get(ours).map(|k| (id, k.entry.clone())))
            .collect();
        for change in changes {
            for id in change.remove {
                whole.remove(&id);
            }
            for k in change.upsert {
                whole.insert(k.id, k.entry);
            }
        }
        whole
            .into_iter()
            .map(|(id, entry)| Keyed {
                id,
                key: None,
                entry,
            })
            .collect()
    }
}

/// The ids a list takes from its source are below this: half of the ids a
/// page reads exactly (JavaScript numbers are exact up to 2^53). A
/// hostile feed that sends the largest it may still leaves 2^52 ids for
/// the list's own numbering in that epoch, more than any run registers.
const ADOPT_BELOW: u64 = 1 << 52;

/// The id a new entry takes when the next free one is `next`: its
/// source's id when the source gave one that is still free (`source_id`
/// in `next..ADOPT_BELOW`), so a list that follows the registry has the
/// registry's sequence numbers as its ids, and the master, its feed, the
/// bridge and the page number a server once; otherwise `next`. Either way
/// ids rise in list order and are never reused.
fn fresh_id(next: u64, source_id: Option<u64>) -> u64 {
    source_id
        .filter(|&id| id >= next && id < ADOPT_BELOW)
        .unwrap_or(next)
}

/// The bridge's (and the master feed's) numbered copy of a list. Ids rise
/// in list order and are never reused, so a client that orders by id has
/// the list's order.
///
/// Two ways in: a whole list, matched against the last one
/// ([`KeyedList::update`], [`KeyedList::follow`]), or a source's own
/// changes passed on without looking at the rest of the list
/// ([`KeyedList::pass_on`]): O(change · log n) instead of O(n).
#[derive(Debug, Clone)]
pub struct KeyedList {
    next_id: u64,
    entries: Entries,
    /// `Some` while the list follows a source's numbering.
    source: Option<SourceIds>,
    /// `Some` while it does not, but did before.
    left: Option<Left>,
}

impl Default for KeyedList {
    fn default() -> Self {
        Self::new()
    }
}

impl KeyedList {
    pub fn new() -> Self {
        Self {
            next_id: 1,
            entries: Entries::new(),
            source: None,
            left: None,
        }
    }

    /// The current entries, in list order.
    pub fn entries(&self) -> impl Iterator<Item = &Keyed> + '_ {
        self.entries.values().map(|k| &**k)
    }

    /// How many entries the list holds.
    pub fn len(&self) -> usize {
        self.entries.len()
    }

    /// Whether the list is empty.
    pub fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }

    /// The current entries, shared (an O(1) copy): what a
    /// [`super::ListPublisher`] publishes.
    pub fn shared(&self) -> Entries {
        self.entries.clone()
    }

    /// Takes the master's list as it is now; returns what changed, or
    /// `None` when nothing did.
    ///
    /// Entries are matched in order by their registration (see
    /// [`Identity`]): each new entry takes the earliest unmatched old one
    /// with the same registration after the previous match, keeping its id
    /// (and is sent only when its stats changed). The first entry without
    /// such a match, and every one after it, gets a fresh id: with the
    /// master's order (new registrations at the end) that is just the new
    /// ones, and with any other master the ids still rise in list order.
    /// Servers registered twice with the same name and address are
    /// interchangeable: which of them keeps which id does not change the list.
    ///
    /// The common change (stats of a few servers, arrivals at the end)
    /// matches position by position without hashing; only the part after
    /// the first removal or reordering is looked up by registration.
    pub fn update(&mut self, servers: Vec<ServerEntry>) -> Option<Changeset> {
        self.update_keyed(servers, |_| None)
    }

    /// [`KeyedList::update`], giving each new entry the key `key` computes
    /// (`docs/protocol.md` §2.2). An entry matched to an old one keeps its
    /// key: the key depends only on the registration (its registrant
    /// included), which matched. A list that followed a source keeps what
    /// the source's list was ([`Left`]), so the source's changes since can
    /// still be taken.
    pub fn update_keyed(
        &mut self,
        servers: Vec<ServerEntry>,
        key: impl Fn(&ServerEntry) -> Option<ServerKey>,
    ) -> Option<Changeset> {
        if let Some(ids) = self.source.take() {
            self.left = Some(Left {
                ids,
                entries: self.entries.clone(),
            });
        }
        self.diff(servers.into_iter().map(|e| (0, e)), key, false)
    }

    /// [`KeyedList::update_keyed`] for a source that numbers its own list
    /// (`servers` carry the source's ids, rising in list order): from now
    /// on the list follows the source, and takes its changes with
    /// [`KeyedList::pass_on`]. A new entry takes its source id while that
    /// is free ([`fresh_id`]), so a list that has only ever followed one
    /// source has the source's ids.
    pub fn follow(
        &mut self,
        servers: impl IntoIterator<Item = Keyed>,
        key: impl Fn(&ServerEntry) -> Option<ServerKey>,
    ) -> Option<Changeset> {
        self.left = None;
        self.diff(servers.into_iter().map(|k| (k.id, k.entry)), key, true)
    }

    /// Takes a source's changes (its ids, in the order they happened) as
    /// one change of this list, without looking at the entries they leave
    /// alone: an entry the source updates keeps its id, one it adds gets a
    /// fresh id (in the source's order; its source id while that is free,
    /// see [`fresh_id`]), one it removes leaves. Returns
    /// what changed, `None` when nothing did.
    ///
    /// For a source that numbers its list the way this list is numbered
    /// (new registrations at the end with rising ids, an id never changing
    /// its registration) the result is the change [`KeyedList::follow`]
    /// would find in the source's whole list, except which of two
    /// interchangeable registrations keeps which id. Anything else is
    /// [`Unfollowed`], and the list is left as it was.
    ///
    /// A list numbered from whole lists taken elsewhere since it last
    /// followed the source (a poll) takes the changes on the source's
    /// list as it then was ([`Left`]), and matches the result whole
    /// ([`KeyedList::follow`]): O(n), once, and it follows again.
    pub fn pass_on(
        &mut self,
        changes: impl IntoIterator<Item = Changeset>,
        key: impl Fn(&ServerEntry) -> Option<ServerKey>,
    ) -> Result<Option<Changeset>, Unfollowed> {
        let Some(source) = self.source.as_mut() else {
            let left = self.left.take().ok_or(Unfollowed)?;
            return Ok(self.follow(left.with(changes), key));
        };
        // What the changes leave of each source id they name (`None`:
        // gone), in the source's order: an entry added and removed within
        // them costs nothing, and new ones are numbered in that order.
        let mut net: BTreeMap<u64, Option<ServerEntry>> = BTreeMap::new();
        for change in changes {
            for id in change.remove {
                net.insert(id, None);
            }
            for k in change.upsert {
                net.insert(k.id, Some(k.entry));
            }
        }
        // Checked before anything changes: a change that does not fit
        // leaves the list as it was.
        for (id, entry) in &net {
            let Some(entry) = entry else { continue };
            match source.ours.get(id).and_then(|ours| self.entries.get(ours)) {
                Some(held) if identity(&held.entry) != identity(entry) => return Err(Unfollowed),
                Some(_) => {}
                None if source.max.is_some_and(|max| *id <= max) => return Err(Unfollowed),
                None => {}
            }
        }
        let mut change = Changeset::default();
        for (id, entry) in net {
            match (source.ours.get(&id).copied(), entry) {
                (Some(ours), None) => {
                    source.ours.remove(&id);
                    self.entries.remove(&ours);
                    change.remove.push(ours);
                }
                (None, None) => {}
                (Some(ours), Some(entry)) => {
                    let Some(held) = self.entries.get(&ours) else {
                        continue;
                    };
                    if held.entry != entry {
                        let keyed = Keyed {
                            id: ours,
                            key: held.key,
                            entry,
                        };
                        change.upsert.push(keyed.clone());
                        self.entries.insert(ours, Arc::new(keyed));
                    }
                }
                (None, Some(entry)) => {
                    let keyed = Keyed {
                        id: fresh_id(self.next_id, Some(id)),
                        key: key(&entry),
                        entry,
                    };
                    self.next_id = keyed.id + 1;
                    source.max = Some(id);
                    source.ours.insert(id, keyed.id);
                    change.upsert.push(keyed.clone());
                    self.entries.insert(keyed.id, Arc::new(keyed));
                }
            }
        }
        // Removals in id order, like a whole list's match finds them.
        change.remove.sort_unstable();
        Ok((!change.is_empty()).then_some(change))
    }

    /// The matching of [`KeyedList::update`] over `servers` (with their
    /// source ids when `follow`), applied to the list.
    fn diff(
        &mut self,
        servers: impl Iterator<Item = (u64, ServerEntry)>,
        key: impl Fn(&ServerEntry) -> Option<ServerKey>,
        follow: bool,
    ) -> Option<Changeset> {
        let shared = self.entries.clone();
        let old: Vec<&Keyed> = shared.values().map(|k| &**k).collect();
        let mut change = Changeset::default();
        let mut source = follow.then(SourceIds::default);
        let mut kept = vec![false; old.len()];
        let mut servers = servers.peekable();
        let mut matched_len = 0;
        // Same registration at the same position: the same server.
        while let Some((source_id, entry)) = servers.next_if(|(_, e)| {
            old.get(matched_len)
                .is_some_and(|k| identity(&k.entry) == identity(e))
        }) {
            let i = matched_len;
            matched_len += 1;
            kept[i] = true;
            if let Some(source) = source.as_mut() {
                source.ours.insert(source_id, old[i].id);
                source.max = Some(source.max.map_or(source_id, |m| m.max(source_id)));
            }
            if old[i].entry != entry {
                change.upsert.push(Keyed {
                    key: old[i].key,
                    id: old[i].id,
                    entry,
                });
            }
        }
        let mut next_old = matched_len;
        // Keyed by name (looked up without borrowing the new entry); the
        // rest of the registration is compared on the few candidates.
        let mut positions: HashMap<&str, VecDeque<usize>> = HashMap::new();
        if servers.peek().is_some() {
            for (i, k) in old.iter().enumerate().skip(next_old) {
                positions.entry(&k.entry.name).or_default().push_back(i);
            }
        }
        let mut fresh = false;
        for (source_id, entry) in servers {
            let matched = if fresh {
                None
            } else {
                positions.get_mut(entry.name.as_str()).and_then(|q| {
                    while q.front().is_some_and(|&i| i < next_old) {
                        q.pop_front();
                    }
                    let at = q
                        .iter()
                        .position(|&i| identity(&old[i].entry) == identity(&entry))?;
                    q.remove(at)
                })
            };
            let id = match matched {
                Some(i) => {
                    kept[i] = true;
                    next_old = i + 1;
                    if old[i].entry != entry {
                        change.upsert.push(Keyed {
                            key: old[i].key,
                            id: old[i].id,
                            entry,
                        });
                    }
                    old[i].id
                }
                None => {
                    fresh = true;
                    let id = fresh_id(self.next_id, follow.then_some(source_id));
                    self.next_id = id + 1;
                    change.upsert.push(Keyed {
                        key: key(&entry),
                        id,
                        entry,
                    });
                    id
                }
            };
            if let Some(source) = source.as_mut() {
                source.ours.insert(source_id, id);
                source.max = Some(source.max.map_or(source_id, |m| m.max(source_id)));
            }
        }
        drop(positions);
        change.remove = old
            .iter()
            .zip(&kept)
            .filter(|(_, &kept)| !kept)
            .map(|(k, _)| k.id)
            .collect();
        self.source = source;
        if change.is_empty() {
            return None;
        }
        // Matched entries keep their ids and fresh ones come after every
        // id held, so the change applied in place is the new list in order.
        for &id in &change.remove {
            self.entries.remove(&id);
        }
        for k in &change.upsert {
            self.entries.insert(k.id, Arc::new(k.clone()));
        }
        Some(change)
    }
}
