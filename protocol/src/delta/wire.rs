//! The delta messages on the wire: [`Keyed`] entries, `bridgeSnapshot` and
//! `bridgeDelta` as the bridge writes them (with or without addresses) and
//! as the browser reads them.

use serde::{ser::SerializeStruct, Deserialize, Serialize, Serializer};

use super::{names, Changeset};
use crate::{
    entry::{Addresses, EntryOut, WireEntry},
    message::ServerEntry,
    ServerKey,
};

/// One entry of a delta-subscribed list: the master's entry plus the id the
/// bridge gave it and the server's key (`docs/protocol.md` §2.2). On the
/// wire both are more fields of the entry; the key is optional to read, as
/// older bridges did not send it.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
#[serde(try_from = "WireEntry")]
pub struct Keyed {
    pub id: u64,
    pub key: Option<ServerKey>,
    pub entry: ServerEntry,
}

impl Keyed {
    /// The entry with its id, as `addresses` allows it to be seen.
    pub fn view(&self, addresses: Addresses) -> EntryOut<'_> {
        EntryOut {
            id: Some(self.id),
            key: self.key,
            ..self.entry.view(addresses)
        }
    }
}

impl TryFrom<WireEntry> for Keyed {
    type Error = &'static str;

    fn try_from(mut w: WireEntry) -> Result<Self, Self::Error> {
        let id = w.id.take().ok_or("missing field `id`")?;
        let key = w.key.take();
        Ok(Keyed {
            id,
            key,
            entry: w.into(),
        })
    }
}

/// The entries of a whole list to write: a slice, or a published list's
/// entries read in place (no copy of the list to write it).
#[derive(Debug, Clone, Copy)]
pub enum ListEntries<'a> {
    Slice(&'a [Keyed]),
    Published(Published<'a>),
}

/// A published list's entries, as [`ListEntries`] reads them.
#[derive(Debug, Clone, Copy)]
pub struct Published<'a>(pub(super) &'a super::keyed_list::Entries);

impl<'a> From<&'a [Keyed]> for ListEntries<'a> {
    fn from(slice: &'a [Keyed]) -> Self {
        Self::Slice(slice)
    }
}

impl<'a, const N: usize> From<&'a [Keyed; N]> for ListEntries<'a> {
    fn from(array: &'a [Keyed; N]) -> Self {
        Self::Slice(array)
    }
}

impl<'a> From<&'a Vec<Keyed>> for ListEntries<'a> {
    fn from(vec: &'a Vec<Keyed>) -> Self {
        Self::Slice(vec)
    }
}

impl<'a> From<Published<'a>> for ListEntries<'a> {
    fn from(list: Published<'a>) -> Self {
        Self::Published(list)
    }
}

/// Entries written as a JSON array, with or without addresses.
struct Entries<'a>(ListEntries<'a>, Addresses);

impl Serialize for Entries<'_> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let addresses = self.1;
        match self.0 {
            ListEntries::Slice(slice) => s.collect_seq(slice.iter().map(|k| k.view(addresses))),
            ListEntries::Published(Published(map)) => {
                s.collect_seq(map.values().map(|k| k.view(addresses)))
            }
        }
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
/// exactly this object): the schema `ServerList` of the OpenAPI document.
#[derive(Serialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema), schema(as = ServerList))]
pub(crate) struct SnapshotOut<'a> {
    /// New each time the bridge starts; a list's `seq` counts within it.
    epoch: &'a str,
    /// Grows by one per change of the list.
    seq: u64,
    /// In ascending `id` (registration order).
    #[cfg_attr(feature = "openapi", schema(value_type = Vec<crate::entry::EntryShape<'static>>))]
    servers: Entries<'a>,
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
pub fn snapshot_content_json<'a>(
    epoch: &str,
    seq: u64,
    servers: impl Into<ListEntries<'a>>,
    addresses: Addresses,
) -> String {
    let content = SnapshotOut {
        epoch,
        seq,
        servers: Entries(servers.into(), addresses),
    };
    // Plain data into a String: cannot fail.
    crate::json::to_string(&content)
}

/// A whole `bridgeSnapshot` message.
pub fn snapshot_json<'a>(
    epoch: &str,
    seq: u64,
    servers: impl Into<ListEntries<'a>>,
    addresses: Addresses,
) -> String {
    let msg = Message {
        command: names::SNAPSHOT,
        content: SnapshotOut {
            epoch,
            seq,
            servers: Entries(servers.into(), addresses),
        },
    };
    crate::json::to_string(&msg)
}

/// A whole `bridgeDelta` message.
pub fn delta_json(
    epoch: &str,
    seq: u64,
    prev: u64,
    change: &Changeset,
    addresses: Addresses,
) -> String {
    let msg = Message {
        command: names::DELTA,
        content: DeltaOut {
            epoch,
            seq,
            prev,
            upsert: Entries(ListEntries::Slice(&change.upsert), addresses),
            remove: &change.remove,
        },
    };
    crate::json::to_string(&msg)
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
