//! The browser's side: a list kept current by applying deltas, all or
//! nothing.

use super::{Delta, Keyed, Resume, Snapshot};
use crate::message::ServerEntry;

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

/// What a [`ClientList`] keeps of each entry: the [`Keyed`] entry itself,
/// what a client makes of it once per change (a page keeps its rows
/// there, so the list and the rows it shows are one store), or only what
/// a follower needs of it (its id and size).
pub trait ListItem: Clone {
    /// The item for `keyed`; `old` is the item the list held for its id
    /// before, if any, so what did not change can be kept.
    fn from_keyed(keyed: Keyed, old: Option<&Self>) -> Self;
    fn id(&self) -> u64;
}

/// An item that keeps its entry, so the list can be read as entries: a
/// trait of its own because a list that only checks the deltas it
/// follows keeps no entries at all.
pub trait EntryItem: ListItem {
    fn entry(&self) -> &ServerEntry;
}

impl ListItem for Keyed {
    fn from_keyed(keyed: Keyed, _: Option<&Self>) -> Self {
        keyed
    }

    fn id(&self) -> u64 {
        self.id
    }
}

impl EntryItem for Keyed {
    fn entry(&self) -> &ServerEntry {
        &self.entry
    }
}

/// The browser's side: a list built from a snapshot and kept current by
/// deltas, ordered by id (= the master's order). A sorted `Vec` rather than
/// a map: new ids come at the end, lookups are binary searches, and it
/// keeps the browser's bundle small.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ClientList<T = Keyed> {
    epoch: String,
    seq: u64,
    /// Sorted by id, ids unique.
    items: Vec<T>,
    /// The highest id ever seen in this epoch: a new id must be above it.
    max_id: u64,
}

impl<T> Default for ClientList<T> {
    fn default() -> Self {
        Self {
            epoch: String::new(),
            seq: 0,
            items: Vec::new(),
            max_id: 0,
        }
    }
}

impl<T> AsRef<[T]> for ClientList<T> {
    /// The items in list order (= id order).
    fn as_ref(&self) -> &[T] {
        &self.items
    }
}

impl ClientList {
    pub fn from_snapshot(snapshot: Snapshot) -> Self {
        Self::from_snapshot_as(snapshot)
    }
}

impl<T: ListItem> ClientList<T> {
    /// The list of `snapshot`, each entry kept as a `T`.
    pub fn from_snapshot_as(snapshot: Snapshot) -> Self {
        // Kept as read (`T` = `Keyed`), the items take the snapshot's own
        // memory.
        let items = in_id_order(snapshot.servers)
            .into_iter()
            .map(|k| T::from_keyed(k, None))
            .collect();
        Self::from_items(snapshot.epoch, snapshot.seq, items)
    }

    /// The list at `epoch` and `seq` of `items`, which are in id order
    /// with each id once (as [`in_id_order`] leaves a snapshot's entries).
    pub(super) fn from_items(epoch: String, seq: u64, mut items: Vec<T>) -> Self {
        // Only as much memory as the items need: a list read from the wire
        // grew by doubling.
        items.shrink_to_fit();
        Self {
            epoch,
            seq,
            max_id: items.last().map_or(0, T::id),
            items,
        }
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

    /// The items in list order (= id order).
    pub fn items(&self) -> &[T] {
        &self.items
    }

    fn position(&self, id: u64) -> Result<usize, usize> {
        self.items.binary_search_by_key(&id, T::id)
    }

    /// The item with `id`, if the list holds it.
    pub fn item(&self, id: u64) -> Option<&T> {
        self.position(id).ok().map(|i| &self.items[i])
    }

    pub fn len(&self) -> usize {
        self.items.len()
    }

    pub fn is_empty(&self) -> bool {
        self.items.is_empty()
    }

    /// Applies `delta`, all or nothing. An empty delta whose `prev` and
    /// `seq` are both this list's `seq` confirms the list is current (the
    /// bridge's answer to a subscribe that missed nothing).
    pub fn apply(&mut self, delta: &Delta) -> Result<(), ApplyError> {
        self.apply_changes(delta).map(drop)
    }

    /// Applies `delta` like [`apply`](Self::apply), in place (a changed
    /// item is replaced where it stands, a new one pushed at the end), and
    /// says what it changed: the items it took out and where the items it
    /// put in are, so a client redoes only those.
    pub fn apply_changes(&mut self, delta: &Delta) -> Result<Changes<T>, ApplyError> {
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
        // The ids removed, sorted when many (the usual few: a scan each).
        let mut gone = delta.remove.clone();
        if gone.len() > 16 {
            gone.sort_unstable();
        }
        let removed = |id: u64| match gone.len() {
            0..=16 => gone.contains(&id),
            _ => gone.binary_search(&id).is_ok(),
        };
        let mut out = Vec::new();
        // Items that stay are replaced where they stand (no position moves
        // yet); an id also removed leaves, and comes back as new.
        let mut placed = vec![false; delta.upsert.len()];
        for (k, placed) in delta.upsert.iter().zip(&mut placed) {
            if removed(k.id) {
                continue;
            }
            if let Ok(i) = self.position(k.id) {
                let new = T::from_keyed(k.clone(), Some(&self.items[i]));
                out.push((i, std::mem::replace(&mut self.items[i], new)));
                *placed = true;
            }
        }
        if !gone.is_empty() {
            let mut at: Vec<usize> = gone
                .iter()
                .filter_map(|&id| self.position(id).ok())
                .collect();
            at.sort_unstable();
            at.dedup();
            // One or two: a shift each; more: one pass over the list.
            if at.len() <= 2 {
                for &i in at.iter().rev() {
                    out.push((i, self.items.remove(i)));
                }
            } else {
                let mut left = at.iter().copied().peekable();
                let items = std::mem::take(&mut self.items);
                self.items.reserve(items.len() - at.len());
                for (i, item) in items.into_iter().enumerate() {
                    if left.next_if_eq(&i).is_some() {
                        out.push((i, item));
                    } else {
                        self.items.push(item);
                    }
                }
            }
        }
        // Stable: of an id upserted twice, the item it had before the
        // delta is the one taken out.
        out.sort_by_key(|&(i, _)| i);
        out.dedup_by_key(|&mut (i, _)| i);
        // New ids are above every id held: at the end, unless the same
        // delta also removed a higher one.
        for (k, _) in delta.upsert.iter().zip(&placed).filter(|(_, &p)| !p) {
            match self.position(k.id) {
                Ok(i) => self.items[i] = T::from_keyed(k.clone(), Some(&self.items[i])),
                Err(i) => self.items.insert(i, T::from_keyed(k.clone(), None)),
            }
        }
        let mut put: Vec<usize> = delta
            .upsert
            .iter()
            .filter_map(|k| self.position(k.id).ok())
            .collect();
        put.sort_unstable();
        put.dedup();
        self.max_id = max_id;
        self.seq = delta.seq;
        Ok(Changes { out, put })
    }
}

/// A snapshot's entries as a list holds them: in id order, a repeated id
/// kept once, with its last entry. The bridge sends them in id order; any
/// other order still takes O(n log n) (a sender in descending order must
/// not cost a quadratic insert): reversed, the last of a repeated id comes
/// first, the stable sort keeps it first, and `dedup` keeps the first. A
/// run in either order sorts in O(n).
pub(super) fn in_id_order(mut servers: Vec<Keyed>) -> Vec<Keyed> {
    servers.reverse();
    servers.sort_by_key(|k| k.id);
    servers.dedup_by_key(|k| k.id);
    servers
}

impl<T: EntryItem> ClientList<T> {
    /// The entries in list order, with their ids.
    pub fn iter(&self) -> impl Iterator<Item = (u64, &ServerEntry)> {
        self.items.iter().map(|item| (item.id(), item.entry()))
    }

    pub fn get(&self, id: u64) -> Option<&ServerEntry> {
        self.item(id).map(T::entry)
    }

    /// The entries as the master lists them.
    pub fn servers(&self) -> Vec<ServerEntry> {
        self.items.iter().map(|item| item.entry().clone()).collect()
    }
}

/// What one [`ClientList::apply_changes`] did, so a client redoes only
/// that (the page re-places, counts and flashes only these rows, instead
/// of comparing its whole list with the last one).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Changes<T> {
    /// The items the delta removed or replaced, with their positions in
    /// the list before it; ascending.
    pub out: Vec<(usize, T)>,
    /// The positions in the list after it of the items it added or
    /// replaced; ascending.
    pub put: Vec<usize>,
}

impl<T> Default for Changes<T> {
    fn default() -> Self {
        Changes {
            out: Vec::new(),
            put: Vec::new(),
        }
    }
}

impl<T> Changes<T> {
    /// Whether nothing changed (a confirmation).
    pub fn is_empty(&self) -> bool {
        self.out.is_empty() && self.put.is_empty()
    }

    /// Where the item at position `old` before the delta is after it;
    /// `None` when the delta took it out. The kept items keep their
    /// order, so this is a count of what left before them and of what
    /// came in before them (binary searches, nothing allocated).
    pub fn moved(&self, old: usize) -> Option<usize> {
        let left = self.out.partition_point(|&(i, _)| i < old);
        if self.out.get(left).is_some_and(|&(i, _)| i == old) {
            return None;
        }
        // Its rank among the kept items, then as many places later as
        // items put in before it: the j-th put at `p` has `p - j` kept
        // items before it.
        let rank = old - left;
        let (mut lo, mut hi) = (0, self.put.len());
        while lo < hi {
            let mid = (lo + hi) / 2;
            if self.put[mid] - mid <= rank {
                lo = mid + 1;
            } else {
                hi = mid;
            }
        }
        Some(rank + lo)
    }
}
