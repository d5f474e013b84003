//! The bridge's side of a delta: numbering the master's entries and finding
//! what changed between two lists.

use std::{
    collections::{HashMap, VecDeque},
    sync::Arc,
};

use super::Keyed;
use crate::{message::ServerEntry, ServerKey};

/// The entries that changed between two lists: what a delta carries.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Change {
    /// New entries (with fresh ids) and changed ones (with their ids), in
    /// list order.
    pub upsert: Vec<Keyed>,
    /// Ids of the entries that left.
    pub remove: Vec<u64>,
}

impl Change {
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

/// The bridge's numbered copy of the master's list. Ids rise in list
/// order and are never reused, so a client that orders by id has the
/// master's order.
#[derive(Debug, Clone)]
pub struct KeyedList {
    next_id: u64,
    /// Shared with whoever publishes it: a change does not copy the list.
    entries: Arc<[Keyed]>,
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
            entries: Arc::from(Vec::new()),
        }
    }

    /// The current entries, in list order.
    pub fn entries(&self) -> &[Keyed] {
        &self.entries
    }

    /// The current entries, shared.
    pub fn shared_entries(&self) -> Arc<[Keyed]> {
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
    pub fn update(&mut self, servers: Vec<ServerEntry>) -> Option<Change> {
        self.update_keyed(servers, |_| None)
    }

    /// [`KeyedList::update`], giving each new entry the key `key` computes
    /// (`docs/protocol.md` §2.2). An entry matched to an old one keeps its
    /// key: the key depends only on the registration (its registrant
    /// included), which matched.
    pub fn update_keyed(
        &mut self,
        servers: Vec<ServerEntry>,
        key: impl Fn(&ServerEntry) -> Option<ServerKey>,
    ) -> Option<Change> {
        let old = self.entries.clone();
        let mut change = Change::default();
        let mut entries = Vec::with_capacity(servers.len());
        let mut kept = vec![false; old.len()];
        let mut servers = servers.into_iter().peekable();
        // Same registration at the same position: the same server.
        while let Some(entry) = servers.next_if(|e| {
            old.get(entries.len())
                .is_some_and(|k| identity(&k.entry) == identity(e))
        }) {
            let i = entries.len();
            kept[i] = true;
            if old[i].entry != entry {
                change.upsert.push(Keyed {
                    key: old[i].key,
                    id: old[i].id,
                    entry: entry.clone(),
                });
            }
            entries.push(Keyed {
                key: old[i].key,
                id: old[i].id,
                entry,
            });
        }
        let mut next_old = entries.len();
        // Keyed by name (looked up without borrowing the new entry); the
        // rest of the registration is compared on the few candidates.
        let mut positions: HashMap<&str, VecDeque<usize>> = HashMap::new();
        if servers.peek().is_some() {
            for (i, k) in old.iter().enumerate().skip(next_old) {
                positions.entry(&k.entry.name).or_default().push_back(i);
            }
        }
        let mut fresh = false;
        for entry in servers {
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
            let (id, key) = match matched {
                Some(i) => {
                    kept[i] = true;
                    next_old = i + 1;
                    if old[i].entry != entry {
                        change.upsert.push(Keyed {
                            key: old[i].key,
                            id: old[i].id,
                            entry: entry.clone(),
                        });
                    }
                    (old[i].id, old[i].key)
                }
                None => {
                    fresh = true;
                    let id = self.next_id;
                    self.next_id += 1;
                    let key = key(&entry);
                    change.upsert.push(Keyed {
                        key,
                        id,
                        entry: entry.clone(),
                    });
                    (id, key)
                }
            };
            entries.push(Keyed { key, id, entry });
        }
        drop(positions);
        change.remove = old
            .iter()
            .zip(&kept)
            .filter(|(_, &kept)| !kept)
            .map(|(k, _)| k.id)
            .collect();
        if change.is_empty() {
            return None;
        }
        self.entries = entries.into();
        Some(change)
    }
}
