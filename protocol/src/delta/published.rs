//! A numbered list as it is published to its followers, in one type for
//! both publishers: the master's change feed (to bridges) and the bridge's
//! list (to pages and `/api/servers`). Each change is encoded once as a
//! delta and kept in a ring; the whole list is encoded only when somebody
//! needs it (a new follower, one that fell behind); a follower that
//! resubscribes is caught up from the ring.

use std::sync::{Arc, OnceLock};

use super::{CatchUp, Changeset, DeltaRing, Entries, Keyed, ListEntries, Published, Resume};
use crate::message::ServerEntry;

/// How a publisher writes its list's messages: the master frames them for
/// TCP with registrants, the bridge writes them in an admin's and a
/// viewer's form.
pub trait Encoder {
    /// One encoded delta (kept in the ring, shared by every follower).
    type Delta: Clone;
    /// The whole list, encoded (what a `bridgeSnapshot` is written as).
    type Whole;
    /// The delta from `prev` to `seq`.
    fn delta(&self, epoch: &str, seq: u64, prev: u64, change: &Changeset) -> Self::Delta;
    /// The whole list at `seq`.
    fn snapshot(&self, epoch: &str, seq: u64, entries: ListEntries<'_>) -> Self::Whole;
}

/// One published list: immutable, shared by every follower; the next
/// change publishes a new one (an O(1) copy of the entries, see
/// [`Entries`]).
#[derive(Debug)]
pub struct PublishedList<E: Encoder> {
    epoch: Arc<str>,
    seq: u64,
    encoder: E,
    entries: Entries,
    /// The encoded deltas up to this list.
    ring: DeltaRing<E::Delta>,
    /// Encoded on first use: most lists only ever go out as deltas.
    snapshot: OnceLock<E::Whole>,
    /// The empty delta that confirms this list, on first use.
    confirm: OnceLock<E::Delta>,
}

/// How one entry differs between two published lists. The entries are
/// the lists' own, shared: a reader that keeps one (how a server was last
/// listed) keeps it without copying it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ListChange<'a> {
    /// Listed now, not before.
    Added(&'a Arc<Keyed>),
    /// Listed in both, changed.
    Updated {
        old: &'a Arc<Keyed>,
        new: &'a Arc<Keyed>,
    },
    /// Listed before, not now.
    Removed(&'a Arc<Keyed>),
}

/// What a follower is sent to reach a list: shared encoded messages.
#[derive(Debug, PartialEq, Eq)]
pub enum Sending<'a, E: Encoder> {
    /// The whole list.
    Snapshot(&'a E::Whole),
    /// Deltas in order (or one confirmation).
    Deltas(Vec<&'a E::Delta>),
}

impl<E: Encoder> PublishedList<E> {
    /// The publisher's epoch: a restarted publisher starts a new one.
    pub fn epoch(&self) -> &str {
        &self.epoch
    }

    /// The epoch, shared.
    pub fn shared_epoch(&self) -> &Arc<str> {
        &self.epoch
    }

    /// The list's number within the epoch (0: nothing published yet).
    pub fn seq(&self) -> u64 {
        self.seq
    }

    /// How many servers the list holds.
    pub fn len(&self) -> usize {
        self.entries.len()
    }

    /// Whether the list is empty.
    pub fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }

    /// The entries in list order, without copying them.
    pub fn iter(&self) -> impl Iterator<Item = &Keyed> + '_ {
        self.entries.values().map(|k| &**k)
    }

    /// The entries as the master lists them, without copying them.
    pub fn servers(&self) -> impl Iterator<Item = &ServerEntry> + '_ {
        self.iter().map(|k| &k.entry)
    }

    /// How this list differs from `older` (an earlier list of the same
    /// publisher; `None`: an empty list), entry by entry in id order. The
    /// two share every part of the list that did not change, and only the
    /// rest is visited: O(change · log n), not O(n).
    pub fn changes_from<'a>(
        &'a self,
        older: Option<&'a Self>,
    ) -> impl Iterator<Item = ListChange<'a>> + 'a {
        let (diff, all) = match older {
            Some(older) => (Some(older.entries.diff(&self.entries)), None),
            None => (None, Some(self.entries.values().map(ListChange::Added))),
        };
        let diff = diff.into_iter().flatten().map(|item| match item {
            imbl::ordmap::DiffItem::Add(_, new) => ListChange::Added(new),
            imbl::ordmap::DiffItem::Update { old, new } => ListChange::Updated {
                old: old.1,
                new: new.1,
            },
            imbl::ordmap::DiffItem::Remove(_, old) => ListChange::Removed(old),
        });
        diff.chain(all.into_iter().flatten())
    }

    /// The entries to write whole, read in place.
    pub fn list_entries(&self) -> ListEntries<'_> {
        ListEntries::Published(Published(&self.entries))
    }

    /// The entry with our `id`, if listed (shared, as [`ListChange`]'s).
    pub fn get(&self, id: u64) -> Option<&Arc<Keyed>> {
        self.entries.get(&id)
    }

    /// The encoder the list was published with.
    pub fn encoder(&self) -> &E {
        &self.encoder
    }

    /// The whole list, encoded (once per list).
    pub fn snapshot(&self) -> &E::Whole {
        self.snapshot.get_or_init(|| {
            self.encoder
                .snapshot(&self.epoch, self.seq, self.list_entries())
        })
    }

    /// The empty delta that says "list `seq` is still current".
    pub fn confirm(&self) -> &E::Delta {
        self.confirm.get_or_init(|| {
            self.encoder
                .delta(&self.epoch, self.seq, self.seq, &Changeset::default())
        })
    }

    /// What a new follower holding `resume` is sent first: the deltas it
    /// missed while they are still in the ring, a confirmation when it
    /// missed nothing, else the snapshot (another epoch, a `seq` ahead of
    /// this list, or none named).
    pub fn catch_up(&self, resume: Option<&Resume>) -> Sending<'_, E> {
        match self.ring.catch_up(resume) {
            CatchUp::Deltas(deltas) if deltas.is_empty() => Sending::Deltas(vec![self.confirm()]),
            CatchUp::Deltas(deltas) => Sending::Deltas(deltas),
            CatchUp::Snapshot => Sending::Snapshot(self.snapshot()),
        }
    }

    /// What a follower that was sent list `sent` needs to reach this one:
    /// the deltas in between, or the snapshot when it fell further behind
    /// than the ring.
    pub fn after(&self, sent: u64) -> Sending<'_, E> {
        match self.ring.since(sent) {
            Some(deltas) => Sending::Deltas(deltas),
            None => Sending::Snapshot(self.snapshot()),
        }
    }
}

/// What changed from `older` to `newer`, two copies of one list (the
/// registry's, in its sequence numbers): the entries added or changed, in
/// id order, and the ids removed. The copies share every part of the list
/// that did not change, and only the rest is visited: O(change · log n).
pub fn changes_between(older: &Entries, newer: &Entries) -> Changeset {
    let mut change = Changeset::default();
    for item in older.diff(newer) {
        match item {
            imbl::ordmap::DiffItem::Add(_, new)
            | imbl::ordmap::DiffItem::Update { new: (_, new), .. } => {
                change.upsert.push(Keyed::clone(new));
            }
            imbl::ordmap::DiffItem::Remove(&id, _) => change.remove.push(id),
        }
    }
    change
}

/// The publishing side: the ring of recent deltas and the encoder. Each
/// change of a list, numbered by its owner (the bridge's [`super::KeyedList`],
/// the registry itself for the master's feed), is published with the list
/// it leads to as one [`PublishedList`].
#[derive(Debug)]
pub struct ListPublisher<E: Encoder> {
    epoch: Arc<str>,
    encoder: E,
    ring: DeltaRing<E::Delta>,
    /// The entries last published (shared with that list).
    entries: Entries,
}

impl<E: Encoder + Clone> ListPublisher<E> {
    /// A publisher in `epoch` keeping `ring` deltas, writing with `encoder`.
    pub fn new(epoch: impl Into<Arc<str>>, ring: usize, encoder: E) -> Self {
        let epoch = epoch.into();
        Self {
            ring: DeltaRing::new(&*epoch, ring),
            epoch,
            encoder,
            entries: Entries::new(),
        }
    }

    /// The newest `seq` published (0: none yet).
    pub fn seq(&self) -> u64 {
        self.ring.seq()
    }

    /// The entries last published (none before the first list): what a
    /// whole list taken from a source is compared with
    /// ([`changes_between`]).
    pub fn entries(&self) -> &Entries {
        &self.entries
    }

    /// The list before anything is published: `seq` 0, empty.
    pub fn unpublished(&self) -> Arc<PublishedList<E>> {
        Arc::new(PublishedList {
            epoch: self.epoch.clone(),
            seq: 0,
            encoder: self.encoder.clone(),
            entries: Entries::new(),
            ring: DeltaRing::new(&*self.epoch, 1),
            snapshot: OnceLock::new(),
            confirm: OnceLock::new(),
        })
    }

    /// Publishes `entries`, the list `change` led to: encodes the change
    /// once and makes the list that includes it. `None` when nothing
    /// changed (`change` is `None`), but the first list is always
    /// published, even when empty.
    pub fn publish(
        &mut self,
        entries: Entries,
        change: Option<Changeset>,
    ) -> Option<Arc<PublishedList<E>>> {
        let first = self.ring.seq() == 0;
        if change.is_none() && !first {
            return None;
        }
        let change = change.unwrap_or_default();
        let prev = self.ring.seq();
        let delta = self.encoder.delta(&self.epoch, prev + 1, prev, &change);
        let seq = self.ring.push(delta);
        self.entries = entries.clone();
        Some(Arc::new(PublishedList {
            epoch: self.epoch.clone(),
            seq,
            encoder: self.encoder.clone(),
            entries,
            ring: self.ring.clone(),
            snapshot: OnceLock::new(),
            confirm: OnceLock::new(),
        }))
    }
}
