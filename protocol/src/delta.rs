//! List deltas (`shared/protocol.md` §2.1): the bridge numbers the entries of
//! the master's list with ids of its own and, on every change, sends only
//! the entries that changed instead of the whole list. The bridge's side
//! ([`KeyedList`], [`History`]) and the browser's ([`ClientList`]) live
//! here together so that the rules they must agree on are written once.

use std::{
    collections::{HashMap, VecDeque},
    sync::Arc,
};

use serde::{
    ser::{SerializeMap, SerializeStruct},
    Deserialize, Serialize, Serializer,
};
use serde_json::Value;

use crate::{
    bridge::names,
    message::{Players, ServerEntry, Stats},
    GameplayMode,
};

/// One entry of a delta-subscribed list: the master's entry plus the id the
/// bridge gave it. On the wire the id is one more field of the entry.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Keyed {
    pub id: u64,
    pub entry: ServerEntry,
}

impl Serialize for Keyed {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        KeyedView {
            keyed: self,
            hide_address: false,
        }
        .serialize(s)
    }
}

impl<'de> Deserialize<'de> for Keyed {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        // Flat, like `ServerEntry` itself: `flatten` would buffer every field.
        #[derive(Deserialize)]
        struct Wire {
            id: u64,
            name: String,
            #[serde(default)]
            address: Option<String>,
            #[serde(default)]
            port: Option<u16>,
            players: Players,
            #[serde(rename = "isLobbyOpen")]
            is_lobby_open: bool,
            #[serde(rename = "gameplayMode")]
            gameplay_mode: GameplayMode,
        }
        let w = Wire::deserialize(d)?;
        Ok(Keyed {
            id: w.id,
            entry: ServerEntry {
                name: w.name,
                address: w.address,
                port: w.port,
                stats: Stats {
                    players: w.players,
                    is_lobby_open: w.is_lobby_open,
                    gameplay_mode: w.gameplay_mode,
                },
            },
        })
    }
}

/// A [`Keyed`] as it is written, with or without its address
/// (`--hide-addresses` applies to deltas as to whole lists).
struct KeyedView<'a> {
    keyed: &'a Keyed,
    hide_address: bool,
}

impl Serialize for KeyedView<'_> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let e = &self.keyed.entry;
        let mut map = s.serialize_map(None)?;
        map.serialize_entry("id", &self.keyed.id)?;
        map.serialize_entry("name", &e.name)?;
        if !self.hide_address {
            if let Some(address) = &e.address {
                map.serialize_entry("address", address)?;
            }
            if let Some(port) = e.port {
                map.serialize_entry("port", &port)?;
            }
        }
        map.serialize_entry("players", &e.stats.players)?;
        map.serialize_entry("isLobbyOpen", &e.stats.is_lobby_open)?;
        map.serialize_entry("gameplayMode", &e.stats.gameplay_mode)?;
        map.end()
    }
}

/// A slice of entries written as a JSON array, with or without addresses.
struct Entries<'a>(&'a [Keyed], bool);

impl Serialize for Entries<'_> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.collect_seq(self.0.iter().map(|keyed| KeyedView {
            keyed,
            hide_address: self.1,
        }))
    }
}

/// `bridgeSnapshot`'s content: the whole list at `seq`.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
pub struct Snapshot {
    pub epoch: String,
    pub seq: u64,
    pub servers: Vec<Keyed>,
}

/// `bridgeDelta`'s content: what turns list `prev` into list `seq`.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
pub struct Delta {
    pub epoch: String,
    pub seq: u64,
    pub prev: u64,
    pub upsert: Vec<Keyed>,
    pub remove: Vec<u64>,
}

/// The snapshot's content as the bridge writes it (`/api/servers` serves
/// exactly this object).
struct SnapshotOut<'a> {
    epoch: &'a str,
    seq: u64,
    servers: Entries<'a>,
}

impl Serialize for SnapshotOut<'_> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let mut st = s.serialize_struct("Snapshot", 3)?;
        st.serialize_field("epoch", self.epoch)?;
        st.serialize_field("seq", &self.seq)?;
        st.serialize_field("servers", &self.servers)?;
        st.end()
    }
}

struct DeltaOut<'a> {
    epoch: &'a str,
    seq: u64,
    prev: u64,
    upsert: Entries<'a>,
    remove: &'a [u64],
}

impl Serialize for DeltaOut<'_> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let mut st = s.serialize_struct("Delta", 5)?;
        st.serialize_field("epoch", self.epoch)?;
        st.serialize_field("seq", &self.seq)?;
        st.serialize_field("prev", &self.prev)?;
        st.serialize_field("upsert", &self.upsert)?;
        st.serialize_field("remove", self.remove)?;
        st.end()
    }
}

#[derive(Serialize)]
struct Message<C> {
    command: &'static str,
    content: C,
}

/// The `{"epoch","seq","servers"}` object of a snapshot: `bridgeSnapshot`'s
/// content and the body of `GET /api/servers`.
pub fn snapshot_content_json(
    epoch: &str,
    seq: u64,
    servers: &[Keyed],
    hide_address: bool,
) -> String {
    let content = SnapshotOut {
        epoch,
        seq,
        servers: Entries(servers, hide_address),
    };
    // Plain data into a String: cannot fail.
    serde_json::to_string(&content).unwrap_or_default()
}

/// A whole `bridgeSnapshot` message.
pub fn snapshot_json(epoch: &str, seq: u64, servers: &[Keyed], hide_address: bool) -> String {
    let msg = Message {
        command: names::SNAPSHOT,
        content: SnapshotOut {
            epoch,
            seq,
            servers: Entries(servers, hide_address),
        },
    };
    serde_json::to_string(&msg).unwrap_or_default()
}

/// A whole `bridgeDelta` message.
pub fn delta_json(epoch: &str, seq: u64, prev: u64, change: &Change, hide_address: bool) -> String {
    let msg = Message {
        command: names::DELTA,
        content: DeltaOut {
            epoch,
            seq,
            prev,
            upsert: Entries(&change.upsert, hide_address),
            remove: &change.remove,
        },
    };
    serde_json::to_string(&msg).unwrap_or_default()
}

/// What a client holds and wants continued: the `epoch` and `seq` of its list.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Resume {
    pub epoch: String,
    pub since: u64,
}

/// `bridgeSubscribe`'s content. Without content (or with `deltas` false) a
/// subscriber gets whole `msRQueryGameServers` lists, as before deltas.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Subscribe {
    pub deltas: bool,
    /// Only with `deltas`: the list to continue from.
    pub resume: Option<Resume>,
}

/// Why a `bridgeSubscribe` was refused; the text names the field.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum SubscribeError {
    #[error("bridgeSubscribe: content must be a JSON object")]
    NotAnObject,
    #[error("bridgeSubscribe: `deltas` must be true or false")]
    Deltas,
    #[error("bridgeSubscribe: `epoch` must be a string")]
    Epoch,
    #[error("bridgeSubscribe: `since` must be a non-negative integer")]
    Since,
    #[error("bridgeSubscribe: `{0}` needs `{1}` (send both or neither)")]
    Pair(&'static str, &'static str),
}

impl Subscribe {
    /// Plain whole-list pushes.
    pub fn whole_lists() -> Self {
        Self::default()
    }

    /// Deltas, continuing from `resume` when given.
    pub fn deltas(resume: Option<Resume>) -> Self {
        Self {
            deltas: true,
            resume,
        }
    }

    /// Reads a subscribe's content. Unknown fields are ignored; `epoch` and
    /// `since` are read (and must be well-formed) only with `deltas`.
    pub fn from_content(content: Option<&Value>) -> Result<Self, SubscribeError> {
        let Some(content) = content else {
            return Ok(Self::default());
        };
        let obj = content.as_object().ok_or(SubscribeError::NotAnObject)?;
        let deltas = match obj.get("deltas") {
            None => false,
            Some(v) => v.as_bool().ok_or(SubscribeError::Deltas)?,
        };
        if !deltas {
            return Ok(Self::default());
        }
        let epoch = match obj.get("epoch") {
            None => None,
            Some(v) => Some(v.as_str().ok_or(SubscribeError::Epoch)?.to_owned()),
        };
        let since = match obj.get("since") {
            None => None,
            Some(v) => Some(v.as_u64().ok_or(SubscribeError::Since)?),
        };
        let resume = match (epoch, since) {
            (Some(epoch), Some(since)) => Some(Resume { epoch, since }),
            (None, None) => None,
            (Some(_), None) => return Err(SubscribeError::Pair("epoch", "since")),
            (None, Some(_)) => return Err(SubscribeError::Pair("since", "epoch")),
        };
        Ok(Self { deltas, resume })
    }

    /// The content to send, `None` for a plain subscribe (no `content` key).
    pub fn to_content(&self) -> Option<Value> {
        if !self.deltas {
            return None;
        }
        let mut obj = serde_json::Map::new();
        obj.insert("deltas".into(), Value::Bool(true));
        if let Some(r) = &self.resume {
            obj.insert("epoch".into(), Value::String(r.epoch.clone()));
            obj.insert("since".into(), Value::from(r.since));
        }
        Some(Value::Object(obj))
    }
}

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
/// (name, address, port) stays the same for its connection's life; a new
/// registration moves it to the end of the master's list.
type Identity<'a> = (&'a str, Option<&'a str>, Option<u16>);

fn identity(e: &ServerEntry) -> Identity<'_> {
    (&e.name, e.address.as_deref(), e.port)
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
                    id: old[i].id,
                    entry: entry.clone(),
                });
            }
            entries.push(Keyed {
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
            let id = match matched {
                Some(i) => {
                    kept[i] = true;
                    next_old = i + 1;
                    if old[i].entry != entry {
                        change.upsert.push(Keyed {
                            id: old[i].id,
                            entry: entry.clone(),
                        });
                    }
                    old[i].id
                }
                None => {
                    fresh = true;
                    let id = self.next_id;
                    self.next_id += 1;
                    change.upsert.push(Keyed {
                        id,
                        entry: entry.clone(),
                    });
                    id
                }
            };
            entries.push(Keyed { id, entry });
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

/// What a subscriber that asked to continue from a list must be sent.
#[derive(Debug, PartialEq, Eq)]
pub enum CatchUp<'a, T> {
    /// The whole list: another epoch, a `seq` whose deltas are gone or that
    /// is ahead of the bridge, or no list named.
    Snapshot,
    /// These deltas, oldest first (none when the client is current).
    Deltas(Vec<&'a T>),
}

/// One epoch's published sequence numbers and its most recent deltas (as
/// `T`, e.g. their encoded text), to catch resubscribing clients up.
#[derive(Debug, Clone)]
pub struct History<T> {
    epoch: String,
    seq: u64,
    capacity: usize,
    recent: VecDeque<T>,
}

impl<T> History<T> {
    /// An epoch with nothing published yet (`seq` 0), keeping up to
    /// `capacity` deltas.
    pub fn new(epoch: impl Into<String>, capacity: usize) -> Self {
        Self {
            epoch: epoch.into(),
            seq: 0,
            capacity: capacity.max(1),
            recent: VecDeque::with_capacity(capacity.max(1)),
        }
    }

    pub fn epoch(&self) -> &str {
        &self.epoch
    }

    /// The newest published list's `seq` (0: none yet).
    pub fn seq(&self) -> u64 {
        self.seq
    }

    /// Records the delta from `seq()` to `seq() + 1`; returns the new `seq`.
    pub fn push(&mut self, delta: T) -> u64 {
        if self.recent.len() == self.capacity {
            self.recent.pop_front();
        }
        self.recent.push_back(delta);
        self.seq += 1;
        self.seq
    }

    /// The deltas after `seq` `since`, when this epoch still has them all.
    pub fn since(&self, since: u64) -> Option<Vec<&T>> {
        let missing = self.seq.checked_sub(since)?;
        let missing = usize::try_from(missing).ok()?;
        if missing > self.recent.len() {
            return None;
        }
        Some(
            self.recent
                .iter()
                .skip(self.recent.len() - missing)
                .collect(),
        )
    }

    /// What to send a subscriber that holds `resume` (see [`CatchUp`]).
    pub fn catch_up(&self, resume: Option<&Resume>) -> CatchUp<'_, T> {
        match resume {
            Some(r) if r.epoch == self.epoch => match self.since(r.since) {
                Some(deltas) => CatchUp::Deltas(deltas),
                None => CatchUp::Snapshot,
            },
            _ => CatchUp::Snapshot,
        }
    }
}

/// Why a delta does not apply to a client's list; the client subscribes
/// again with its `epoch` and `seq` (and gets what it missed, or a snapshot).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ApplyError {
    #[error("the delta is for epoch {got}, the list is from epoch {have}")]
    Epoch { have: String, got: String },
    #[error("the delta continues list {prev}, the list is at {have}")]
    Gap { have: u64, prev: u64 },
    #[error("the delta removes id {0}, which is not in the list")]
    UnknownRemove(u64),
    #[error("the delta adds id {0}, which is not above every id seen before")]
    OutOfOrder(u64),
}

/// The browser's side: a list built from a snapshot and kept current by
/// deltas, ordered by id (= the master's order). A sorted `Vec` rather than
/// a map: new ids come at the end, lookups are binary searches, and it
/// keeps the browser's bundle small.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ClientList {
    epoch: String,
    seq: u64,
    /// Sorted by id, ids unique.
    entries: Vec<(u64, ServerEntry)>,
    /// The highest id ever seen in this epoch: a new id must be above it.
    max_id: u64,
}

impl ClientList {
    pub fn from_snapshot(snapshot: Snapshot) -> Self {
        let mut list = Self {
            epoch: snapshot.epoch,
            seq: snapshot.seq,
            entries: Vec::with_capacity(snapshot.servers.len()),
            max_id: 0,
        };
        // The bridge sends them in id order (each goes at the end); any
        // other order still gives a sorted list, and a repeated id keeps
        // its last entry.
        for k in snapshot.servers {
            match list.position(k.id) {
                Ok(i) => list.entries[i].1 = k.entry,
                Err(i) => list.entries.insert(i, (k.id, k.entry)),
            }
        }
        list.max_id = list.entries.last().map_or(0, |(id, _)| *id);
        list
    }

    pub fn epoch(&self) -> &str {
        &self.epoch
    }

    pub fn seq(&self) -> u64 {
        self.seq
    }

    /// What to send in `bridgeSubscribe` to continue from this list.
    pub fn resume(&self) -> Resume {
        Resume {
            epoch: self.epoch.clone(),
            since: self.seq,
        }
    }

    /// The entries in list order, with their ids.
    pub fn iter(&self) -> impl Iterator<Item = (u64, &ServerEntry)> {
        self.entries.iter().map(|(id, e)| (*id, e))
    }

    fn position(&self, id: u64) -> Result<usize, usize> {
        self.entries.binary_search_by_key(&id, |(id, _)| *id)
    }

    pub fn get(&self, id: u64) -> Option<&ServerEntry> {
        self.position(id).ok().map(|i| &self.entries[i].1)
    }

    pub fn len(&self) -> usize {
        self.entries.len()
    }

    pub fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }

    /// The entries as the master lists them.
    pub fn servers(&self) -> Vec<ServerEntry> {
        self.entries.iter().map(|(_, e)| e.clone()).collect()
    }

    /// Applies `delta`, all or nothing. An empty delta whose `prev` and
    /// `seq` are both this list's `seq` confirms the list is current (the
    /// bridge's answer to a subscribe that missed nothing).
    pub fn apply(&mut self, delta: &Delta) -> Result<(), ApplyError> {
        if delta.epoch != self.epoch {
            return Err(ApplyError::Epoch {
                have: self.epoch.clone(),
                got: delta.epoch.clone(),
            });
        }
        if delta.prev != self.seq {
            return Err(ApplyError::Gap {
                have: self.seq,
                prev: delta.prev,
            });
        }
        if let Some(&id) = delta.remove.iter().find(|&&id| self.position(id).is_err()) {
            return Err(ApplyError::UnknownRemove(id));
        }
        let mut max_id = self.max_id;
        for k in &delta.upsert {
            if self.position(k.id).is_err() {
                if k.id <= max_id {
                    return Err(ApplyError::OutOfOrder(k.id));
                }
                max_id = k.id;
            }
        }
        match delta.remove.len() {
            0 => {}
            // The usual few: a scan each.
            1..=16 => self.entries.retain(|(id, _)| !delta.remove.contains(id)),
            _ => {
                let mut gone = delta.remove.clone();
                gone.sort_unstable();
                self.entries
                    .retain(|(id, _)| gone.binary_search(id).is_err());
            }
        }
        for k in &delta.upsert {
            match self.position(k.id) {
                Ok(i) => self.entries[i].1 = k.entry.clone(),
                // New ids are above every id held: at the end, unless the
                // same delta also removed a higher one.
                Err(i) => self.entries.insert(i, (k.id, k.entry.clone())),
            }
        }
        self.max_id = max_id;
        self.seq = delta.seq;
        Ok(())
    }
}

/// Reads `bridgeSnapshot` / `bridgeDelta` frames whose `command` the reader
/// already knows; `None` for other commands. Plain structs, like
/// `BridgeMessage::from_frame`, to keep serde's buffering out of the bundle.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum DeltaMessage {
    Snapshot(Snapshot),
    Delta(Delta),
}

impl DeltaMessage {
    pub fn from_frame(command: &str, text: &str) -> Option<Result<Self, serde_json::Error>> {
        use serde::de::Error;
        /// Both contents in one reader: one visitor instead of one per
        /// message and per wrapper, a noticeable part of a page's bundle.
        #[derive(Deserialize)]
        struct Content {
            epoch: String,
            seq: u64,
            prev: Option<u64>,
            upsert: Option<Vec<Keyed>>,
            remove: Option<Vec<u64>>,
            servers: Option<Vec<Keyed>>,
        }
        #[derive(Deserialize)]
        struct Frame {
            content: Content,
        }
        let snapshot = match command {
            names::SNAPSHOT => true,
            names::DELTA => false,
            _ => return None,
        };
        let missing = serde_json::Error::missing_field;
        Some(serde_json::from_str::<Frame>(text).and_then(|f| {
            let c = f.content;
            if snapshot {
                Ok(Self::Snapshot(Snapshot {
                    epoch: c.epoch,
                    seq: c.seq,
                    servers: c.servers.ok_or_else(|| missing("servers"))?,
                }))
            } else {
                Ok(Self::Delta(Delta {
                    epoch: c.epoch,
                    seq: c.seq,
                    prev: c.prev.ok_or_else(|| missing("prev"))?,
                    upsert: c.upsert.ok_or_else(|| missing("upsert"))?,
                    remove: c.remove.ok_or_else(|| missing("remove"))?,
                }))
            }
        }))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn entry(name: &str, port: u16, current: u32) -> ServerEntry {
        ServerEntry {
            name: name.into(),
            address: Some("192.0.2.1".into()),
            port: Some(port),
            stats: Stats {
                players: Players { current, max: 4 },
                ..Stats::default()
            },
        }
    }

    fn ids(list: &KeyedList) -> Vec<u64> {
        list.entries().iter().map(|k| k.id).collect()
    }

    #[test]
    fn update_keeps_ids_sends_changes_and_numbers_new_entries() {
        let mut list = KeyedList::new();
        let a = entry("a", 1, 0);
        let b = entry("b", 2, 0);
        let c = entry("c", 3, 0);
        let first = list.update(vec![a.clone(), b.clone()]).unwrap();
        assert_eq!(first.upsert.len(), 2);
        assert!(first.remove.is_empty());
        assert_eq!(ids(&list), [1, 2]);
        assert_eq!(list.update(vec![a.clone(), b.clone()]), None, "unchanged");

        // b's stats change, c registers.
        let b2 = entry("b", 2, 3);
        let change = list.update(vec![a.clone(), b2.clone(), c.clone()]).unwrap();
        assert_eq!(
            change.upsert,
            [
                Keyed {
                    id: 2,
                    entry: b2.clone()
                },
                Keyed {
                    id: 3,
                    entry: c.clone()
                }
            ]
        );
        assert!(change.remove.is_empty());

        // a registers again: it moves to the end with a new id.
        let change = list.update(vec![b2.clone(), c.clone(), a.clone()]).unwrap();
        assert_eq!(change.remove, [1]);
        assert_eq!(
            change.upsert,
            [Keyed {
                id: 4,
                entry: a.clone()
            }]
        );
        assert_eq!(ids(&list), [2, 3, 4]);

        // An entry that appears in the middle (another master's order):
        // it and everything after it get fresh, rising ids.
        let d = entry("d", 4, 0);
        let change = list
            .update(vec![b2.clone(), d.clone(), c.clone(), a.clone()])
            .unwrap();
        assert_eq!(ids(&list), [2, 5, 6, 7]);
        assert_eq!(change.remove, [3, 4]);
        assert_eq!(change.upsert.len(), 3);
    }

    #[test]
    fn twins_keep_the_list_exact() {
        let mut list = KeyedList::new();
        let one = entry("twin", 1, 1);
        let two = entry("twin", 1, 2);
        list.update(vec![one.clone(), two.clone()]);
        // The first twin leaves: which id survives does not matter, the
        // entries do.
        let change = list.update(vec![two.clone()]).unwrap();
        assert_eq!(change.remove.len(), 1);
        let entries: Vec<_> = list.entries().iter().map(|k| k.entry.clone()).collect();
        assert_eq!(entries, [two]);
    }

    #[test]
    fn history_catches_up_or_asks_for_a_snapshot() {
        let mut h = History::new("e1", 3);
        for n in 1..=5 {
            assert_eq!(h.push(n), n);
        }
        let resume = |epoch: &str, since| Resume {
            epoch: epoch.into(),
            since,
        };
        assert_eq!(h.catch_up(None), CatchUp::Snapshot);
        assert_eq!(h.catch_up(Some(&resume("e2", 5))), CatchUp::Snapshot);
        assert_eq!(h.catch_up(Some(&resume("e1", 5))), CatchUp::Deltas(vec![]));
        assert_eq!(
            h.catch_up(Some(&resume("e1", 3))),
            CatchUp::Deltas(vec![&4, &5])
        );
        assert_eq!(
            h.catch_up(Some(&resume("e1", 2))),
            CatchUp::Deltas(vec![&3, &4, &5])
        );
        assert_eq!(
            h.catch_up(Some(&resume("e1", 1))),
            CatchUp::Snapshot,
            "gone"
        );
        assert_eq!(
            h.catch_up(Some(&resume("e1", 6))),
            CatchUp::Snapshot,
            "ahead"
        );
    }

    #[test]
    fn subscribe_content_is_checked_field_by_field() {
        let parse = |s: &str| Subscribe::from_content(Some(&serde_json::from_str(s).unwrap()));
        assert_eq!(Subscribe::from_content(None), Ok(Subscribe::whole_lists()));
        assert_eq!(parse("{}"), Ok(Subscribe::whole_lists()));
        assert_eq!(
            parse(r#"{"deltas":false,"since":"x"}"#),
            Ok(Subscribe::whole_lists())
        );
        assert_eq!(parse(r#"{"deltas":true}"#), Ok(Subscribe::deltas(None)));
        assert_eq!(
            parse(r#"{"deltas":true,"epoch":"e","since":7}"#),
            Ok(Subscribe::deltas(Some(Resume {
                epoch: "e".into(),
                since: 7
            })))
        );
        assert_eq!(parse("[]"), Err(SubscribeError::NotAnObject));
        assert_eq!(parse(r#"{"deltas":"yes"}"#), Err(SubscribeError::Deltas));
        assert_eq!(parse(r#"{"deltas":1}"#), Err(SubscribeError::Deltas));
        for since in ["-1", "1.5", "\"3\"", "null"] {
            let text = format!(r#"{{"deltas":true,"epoch":"e","since":{since}}}"#);
            assert_eq!(parse(&text), Err(SubscribeError::Since), "{since}");
        }
        assert_eq!(
            parse(r#"{"deltas":true,"epoch":5,"since":1}"#),
            Err(SubscribeError::Epoch)
        );
        assert_eq!(
            parse(r#"{"deltas":true,"since":1}"#),
            Err(SubscribeError::Pair("since", "epoch"))
        );
        assert!(SubscribeError::Since.to_string().contains("`since`"));
        for s in [
            Subscribe::whole_lists(),
            Subscribe::deltas(None),
            Subscribe::deltas(Some(Resume {
                epoch: "x".into(),
                since: 9,
            })),
        ] {
            assert_eq!(Subscribe::from_content(s.to_content().as_ref()), Ok(s));
        }
    }

    #[test]
    fn wire_shapes_and_reading_back() {
        let keyed = vec![Keyed {
            id: 7,
            entry: entry("Feuerland", 20000, 2),
        }];
        assert_eq!(
            snapshot_json("e1", 3, &keyed, false),
            r#"{"command":"bridgeSnapshot","content":{"epoch":"e1","seq":3,"servers":[{"id":7,"name":"Feuerland","address":"192.0.2.1","port":20000,"players":{"current":2,"max":4},"isLobbyOpen":true,"gameplayMode":1}]}}"#
        );
        assert_eq!(
            snapshot_content_json("e1", 3, &keyed, true),
            r#"{"epoch":"e1","seq":3,"servers":[{"id":7,"name":"Feuerland","players":{"current":2,"max":4},"isLobbyOpen":true,"gameplayMode":1}]}"#
        );
        let change = Change {
            upsert: keyed.clone(),
            remove: vec![1, 2],
        };
        let text = delta_json("e1", 4, 3, &change, false);
        assert_eq!(
            DeltaMessage::from_frame(names::DELTA, &text)
                .unwrap()
                .unwrap(),
            DeltaMessage::Delta(Delta {
                epoch: "e1".into(),
                seq: 4,
                prev: 3,
                upsert: keyed.clone(),
                remove: vec![1, 2],
            })
        );
        let text = snapshot_json("e1", 3, &keyed, false);
        assert_eq!(
            DeltaMessage::from_frame(names::SNAPSHOT, &text)
                .unwrap()
                .unwrap(),
            DeltaMessage::Snapshot(Snapshot {
                epoch: "e1".into(),
                seq: 3,
                servers: keyed,
            })
        );
        assert!(DeltaMessage::from_frame("bridgeStatus", "{}").is_none());
        assert!(
            DeltaMessage::from_frame(names::DELTA, r#"{"content":{"seq":1}}"#)
                .unwrap()
                .is_err()
        );
    }

    #[test]
    fn client_refuses_what_does_not_apply_and_stays_unchanged() {
        let snapshot = Snapshot {
            epoch: "e".into(),
            seq: 2,
            servers: vec![
                Keyed {
                    id: 3,
                    entry: entry("a", 1, 0),
                },
                Keyed {
                    id: 5,
                    entry: entry("b", 2, 0),
                },
            ],
        };
        let mut list = ClientList::from_snapshot(snapshot);
        let delta = |prev, upsert: Vec<Keyed>, remove: Vec<u64>| Delta {
            epoch: "e".into(),
            seq: prev + 1,
            prev,
            upsert,
            remove,
        };
        let before = list.clone();
        assert!(matches!(
            list.apply(&delta(1, vec![], vec![])),
            Err(ApplyError::Gap { .. })
        ));
        assert_eq!(
            list.apply(&delta(2, vec![], vec![4])),
            Err(ApplyError::UnknownRemove(4))
        );
        let late = Keyed {
            id: 4,
            entry: entry("c", 3, 0),
        };
        assert_eq!(
            list.apply(&delta(2, vec![late], vec![3])),
            Err(ApplyError::OutOfOrder(4))
        );
        let mut other = delta(2, vec![], vec![]);
        other.epoch = "f".into();
        assert!(matches!(list.apply(&other), Err(ApplyError::Epoch { .. })));
        assert_eq!(list, before, "failed deltas change nothing");

        // A confirmation (empty, prev = seq) changes nothing but is fine.
        let confirm = Delta {
            seq: 2,
            ..delta(2, vec![], vec![])
        };
        assert_eq!(list.apply(&confirm), Ok(()));
        assert_eq!(list, before);

        let c = Keyed {
            id: 6,
            entry: entry("c", 3, 1),
        };
        let b2 = Keyed {
            id: 5,
            entry: entry("b", 2, 4),
        };
        list.apply(&delta(2, vec![b2.clone(), c.clone()], vec![3]))
            .unwrap();
        assert_eq!(list.seq(), 3);
        assert_eq!(list.servers(), [b2.entry, c.entry]);
        // Removing the highest id does not let a lower new id in later.
        list.apply(&delta(3, vec![], vec![6])).unwrap();
        let reuse = Keyed {
            id: 6,
            entry: entry("d", 4, 0),
        };
        assert_eq!(
            list.apply(&delta(4, vec![reuse], vec![])),
            Err(ApplyError::OutOfOrder(6))
        );
    }
}
