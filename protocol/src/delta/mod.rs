//! List deltas (`docs/protocol.md` §3): the bridge numbers the entries of
//! the master's list with ids of its own and, on every change, sends only
//! the entries that changed instead of the whole list. The bridge's side
//! ([`KeyedList`], [`DeltaRing`]), the browser's ([`ClientList`]), a
//! follower's of a master's change feed ([`FollowedList`]) and the one
//! published list both publishers serve from ([`PublishedList`]: the
//! master's feed and the bridge's list) live here together so that the
//! rules they must agree on are written once.

mod client;
mod followed;
mod keyed_list;
mod published;
mod ring;
mod subscribe;
mod wire;

/// The delta messages' command names (the bridge lists them with its own
/// in `bridge::names`; deltas need nothing else of the bridge's messages).
pub mod names {
    /// The whole list with ids, for delta subscribers (`docs/protocol.md` §3).
    pub const SNAPSHOT: &str = "bridgeSnapshot";
    /// One list change, for delta subscribers (`docs/protocol.md` §3).
    pub const DELTA: &str = "bridgeDelta";
}

pub use client::{ApplyError, Changes, ClientList, EntryItem, ListItem};
pub use followed::{
    FollowError, FollowedList, Taken, ID_AND_KEY_BYTES, LIST_OVERHEAD_BYTES, MAX_EPOCH_BYTES,
};
pub use keyed_list::{same_server, Changeset, Entries, KeyedList, Unfollowed};
pub use published::{changes_between, Encoder, ListChange, ListPublisher, PublishedList, Sending};
pub use ring::{CatchUp, DeltaRing};
pub use subscribe::{Resume, Subscribe, SubscribeError};
#[cfg(feature = "openapi")]
pub(crate) use wire::SnapshotOut as ServerList;
pub use wire::{
    delta_json, snapshot_content_json, snapshot_json, Delta, DeltaMessage, Keyed, ListEntries,
    Published, Snapshot,
};

#[cfg(test)]
mod tests;
