//! The browser's side: a list kept current by applying deltas, all or
//! nothing.

use super::{Delta, Resume, Snapshot};
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
