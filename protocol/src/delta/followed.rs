//! A list another party numbers and sends as snapshots and deltas (a
//! remote master's change feed), as a follower checks it: the feed is an
//! input like any other. Every entry is checked against the rules of §1
//! ([`ServerEntry::validate`]), the whole list stays within a byte bound
//! (the follower's bound on one list read whole), the epoch is short, the
//! deltas apply as a client's would, and a snapshot in any order is taken
//! in O(n log n). The follower keeps a ledger, not the entries: each id
//! and the bytes its entry takes. The entries themselves are handed on
//! ([`Taken`]) to whoever publishes them.

use super::{
    client::in_id_order, ApplyError, Changeset, ClientList, Delta, DeltaMessage, Keyed, ListItem,
    Resume, Snapshot,
};
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
/// comma and [`ID_AND_KEY_BYTES`] included): counted once, when it comes,
/// and kept with its id ([`Counted`]) for when it goes.
fn entry_bytes(entry: &ServerEntry) -> usize {
    json_len(&entry.view(Addresses::Shown)).saturating_add(ID_AND_KEY_BYTES + 1)
}

/// What a followed list keeps of an entry: its id and what it takes
/// ([`entry_bytes`]), so the list's size follows each change without the
/// entry being kept.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Counted {
    id: u64,
    bytes: usize,
}

impl Counted {
    /// What the ledger keeps of `keyed`.
    fn of(keyed: &Keyed) -> Self {
        Counted {
            id: keyed.id,
            bytes: entry_bytes(&keyed.entry),
        }
    }
}

impl ListItem for Counted {
    fn from_keyed(keyed: Keyed, _: Option<&Self>) -> Self {
        Self::of(&keyed)
    }

    fn id(&self) -> u64 {
        self.id
    }
}

/// A followed list's ledger: the ids of a list whose every entry passed
/// §1, with what each takes, so its whole size is known and bounded and
/// every delta is checked as a client would apply it, while the entries
/// are held only once, by whoever publishes them.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FollowedList {
    list: ClientList<Counted>,
    /// The list's size served whole, at most: [`LIST_OVERHEAD_BYTES`], the
    /// epoch, and every entry's [`entry_bytes`] (exact but for the comma
    /// counted after the last entry).
    bytes: usize,
    max_bytes: usize,
}

/// What one message did to a followed list: what its follower passes on.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Taken {
    /// A snapshot: it replaced the list. Its servers, moved out of the
    /// message, in id order, each id once (with its last entry).
    Snapshot(Vec<Keyed>),
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
            DeltaMessage::Snapshot(snapshot) => {
                Self::from_snapshot(snapshot, max_bytes).map(|(list, servers)| {
                    *held = Some(list);
                    Taken::Snapshot(servers)
                })
            }
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

    /// The list of `snapshot`, if it keeps every rule, and the snapshot's
    /// servers as a client's list holds them (in id order, a repeated id
    /// once, with its last entry): the entries the ledger does not keep.
    pub fn from_snapshot(
        snapshot: Snapshot,
        max_bytes: usize,
    ) -> Result<(Self, Vec<Keyed>), FollowError> {
        check_epoch(&snapshot.epoch)?;
        check_entries(&snapshot.servers)?;
        let servers = in_id_order(snapshot.servers);
        let items: Vec<Counted> = servers.iter().map(Counted::of).collect();
        let bytes = LIST_OVERHEAD_BYTES
            + snapshot.epoch.len()
            + items.iter().map(|c| c.bytes).sum::<usize>();
        if bytes > max_bytes {
            return Err(FollowError::TooLarge {
                bytes,
                max: max_bytes,
            });
        }
        let list = ClientList::from_items(snapshot.epoch, snapshot.seq, items);
        Ok((
            Self {
                list,
                bytes,
                max_bytes,
            },
            servers,
        ))
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
            .filter_map(|&id| self.list.item(id))
            .map(|c| c.bytes)
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
