//! A list another party numbers and sends as snapshots and deltas (a
//! remote master's change feed), as a follower holds it: the feed is an
//! input like any other. Every entry is checked against the rules of §1
//! ([`ServerEntry::validate`]), the whole list stays within a byte bound
//! (the follower's bound on one list read whole), the epoch is short, and
//! a snapshot in any order is taken in O(n log n).

use super::{ApplyError, Changeset, ClientList, Delta, DeltaMessage, Keyed, Resume, Snapshot};
use crate::{entry::Addresses, json::json_len, message::ServerEntry, validate::ValidationError};

/// Longest epoch a follower takes. The contract leaves an epoch's length
/// open; ours are 16 hex digits, and the follower names the epoch again
/// when it subscribes (and in its log).
pub const MAX_EPOCH_BYTES: usize = 64;

/// What an entry's id and key may take at most in a list served whole
/// (`"id":` with 20 digits, `"key":` with 16 hex digits, their commas):
/// counted for every entry whatever the sender wrote, so the bound holds
/// for the follower's own numbering and keys too.
pub const ID_AND_KEY_BYTES: usize = r#""id":18446744073709551615,"key":"0123456789abcdef","#.len();

/// What a whole list's message takes besides its entries and its epoch
/// (`{"command":"bridgeSnapshot","content":{"epoch":"","seq":N,"servers":[]}}`
/// with the widest `seq`).
pub const LIST_OVERHEAD_BYTES: usize =
    r#"{"command":"bridgeSnapshot","content":{"epoch":"","seq":18446744073709551615,"servers":[]}}"#
        .len();

/// Why a feed's message was not taken. Each means the follower's list is
/// no longer the sender's: it is dropped, and the follower subscribes
/// again (for a snapshot) after a pause. The texts quote no peer text but
/// a validation error's (an address), which a log must still cut.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum FollowError {
    #[error("a delta came before any list")]
    DeltaFirst,
    #[error("the epoch has {0} bytes, more than the {MAX_EPOCH_BYTES} a follower takes")]
    Epoch(usize),
    #[error("entry {id} breaks a rule of the master protocol: {error}")]
    Invalid { id: u64, error: ValidationError },
    #[error("the list would take {bytes} bytes whole, more than the {max} a follower takes")]
    TooLarge { bytes: usize, max: usize },
    #[error(transparent)]
    Apply(#[from] ApplyError),
}

/// The bytes `entry` takes in a list served whole, at most (its trailing
/// comma and [`ID_AND_KEY_BYTES`] included): counted when it comes and
/// when it goes, not kept beside it.
fn entry_bytes(entry: &ServerEntry) -> usize {
    json_len(&entry.view(Addresses::Shown)).saturating_add(ID_AND_KEY_BYTES + 1)
}

/// A followed list: a [`ClientList`] whose every entry passed §1 and
/// whose whole size is known and bounded.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FollowedList {
    list: ClientList,
    /// The list's size served whole, at most: [`LIST_OVERHEAD_BYTES`], the
    /// epoch, and every entry's [`entry_bytes`] (exact but for the comma
    /// counted after the last entry).
    bytes: usize,
    max_bytes: usize,
}

/// What one message did to a followed list: what its follower passes on.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Taken {
    /// A snapshot: it replaced the list.
    Snapshot,
    /// A delta, and what it changed, in the sender's ids, moved out of the
    /// message (`None`: a heartbeat, or a delta that changed nothing).
    Delta(Option<Changeset>),
}

impl FollowedList {
    /// Takes one list message into `held`: a snapshot replaces the list, a
    /// delta applies to it. After an error `held` is `None`: the
    /// follower's list no longer matches the sender's, and only a snapshot
    /// can bring it back.
    pub fn take(
        held: &mut Option<Self>,
        message: DeltaMessage,
        max_bytes: usize,
    ) -> Result<Taken, FollowError> {
        let taken = match message {
            DeltaMessage::Snapshot(snapshot) => Self::from_snapshot(snapshot, max_bytes).map(|l| {
                *held = Some(l);
                Taken::Snapshot
            }),
            DeltaMessage::Delta(delta) => match held.as_mut() {
                Some(list) => list.apply(&delta).map(|changed| {
                    Taken::Delta(changed.then_some(Changeset {
                        upsert: delta.upsert,
                        remove: delta.remove,
                    }))
                }),
                None => Err(FollowError::DeltaFirst),
            },
        };
        if taken.is_err() {
            *held = None;
        }
        taken
    }

    /// The list of `snapshot`, if it keeps every rule.
    pub fn from_snapshot(snapshot: Snapshot, max_bytes: usize) -> Result<Self, FollowError> {
        check_epoch(&snapshot.epoch)?;
        check_entries(&snapshot.servers)?;
        let epoch_bytes = snapshot.epoch.len();
        let list = ClientList::from_snapshot(snapshot);
        let bytes = LIST_OVERHEAD_BYTES
            + epoch_bytes
            + list
                .items()
                .iter()
                .map(|k| entry_bytes(&k.entry))
                .sum::<usize>();
        if bytes > max_bytes {
            return Err(FollowError::TooLarge {
                bytes,
                max: max_bytes,
            });
        }
        Ok(Self {
            list,
            bytes,
            max_bytes,
        })
    }

    /// Applies `delta` if its entries keep every rule; returns whether the
    /// list changed. A delta that would take the list past the bound is an
    /// error after it was applied: the caller drops the list.
    pub fn apply(&mut self, delta: &Delta) -> Result<bool, FollowError> {
        check_epoch(&delta.epoch)?;
        check_entries(&delta.upsert)?;
        // Each id the delta touches once, however often it names it: what
        // they took before and after is the change in size.
        let mut touched: Vec<u64> = delta
            .upsert
            .iter()
            .map(|k| k.id)
            .chain(delta.remove.iter().copied())
            .collect();
        touched.sort_unstable();
        touched.dedup();
        let before = self.bytes_of(&touched);
        self.list.apply(delta)?;
        let after = self.bytes_of(&touched);
        self.bytes = (self.bytes + after).saturating_sub(before);
        if self.bytes > self.max_bytes {
            return Err(FollowError::TooLarge {
                bytes: self.bytes,
                max: self.max_bytes,
            });
        }
        Ok(!touched.is_empty())
    }

    /// What the entries with `ids` take now.
    fn bytes_of(&self, ids: &[u64]) -> usize {
        ids.iter()
            .filter_map(|&id| self.list.get(id))
            .map(entry_bytes)
            .sum()
    }

    /// The list's size served whole, at most (never above the bound).
    pub fn bytes(&self) -> usize {
        self.bytes
    }

    pub fn epoch(&self) -> &str {
        self.list.epoch()
    }

    pub fn seq(&self) -> u64 {
        self.list.seq()
    }

    /// What to send to continue from this list.
    pub fn resume(&self) -> Resume {
        self.list.resume()
    }

    pub fn len(&self) -> usize {
        self.list.len()
    }

    pub fn is_empty(&self) -> bool {
        self.list.is_empty()
    }

    /// The entries in list order, with their ids.
    pub fn iter(&self) -> impl Iterator<Item = &Keyed> {
        self.list.items().iter()
    }

    /// The entries as the master lists them.
    pub fn servers(&self) -> Vec<ServerEntry> {
        self.list.servers()
    }
}

fn check_epoch(epoch: &str) -> Result<(), FollowError> {
    if epoch.len() > MAX_EPOCH_BYTES {
        return Err(FollowError::Epoch(epoch.len()));
    }
    Ok(())
}

fn check_entries(entries: &[Keyed]) -> Result<(), FollowError> {
    for k in entries {
        k.entry
            .validate()
            .map_err(|error| FollowError::Invalid { id: k.id, error })?;
    }
    Ok(())
}
