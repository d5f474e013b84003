//! One listed server on the wire: the master's `msRQueryGameServers` entry,
//! and the same entry with the bridge's `id` in `bridgeSnapshot`,
//! `bridgeDelta` and `GET /api/servers`. Its JSON shape is written and read
//! here only, and so is the rule for what an entry without its address
//! looks like.

use serde::{ser::SerializeMap, Deserialize, Serialize, Serializer};

use crate::{
    message::{Players, Stats},
    GameplayMode, ServerKey,
};

/// One server in `msRQueryGameServers`. `address` and `port` are optional
/// because a bridge may hide them from players (`--hide-addresses`).
#[derive(Debug, Clone, PartialEq, Eq, Hash, Deserialize)]
#[serde(from = "WireEntry")]
pub struct ServerEntry {
    pub name: String,
    pub address: Option<String>,
    pub port: Option<u16>,
    pub stats: Stats,
}

/// Whether a list is written with its servers' addresses (for the master's
/// clients and the bridge's admins) or without (for viewers of a bridge
/// started with `--hide-addresses`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Addresses {
    Shown,
    Hidden,
}

impl ServerEntry {
    /// The entry as `addresses` allows it to be seen.
    pub fn view(&self, addresses: Addresses) -> EntryOut<'_> {
        EntryOut {
            id: None,
            key: None,
            entry: self,
            addresses,
        }
    }
}

impl Serialize for ServerEntry {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        self.view(Addresses::Shown).serialize(s)
    }
}

/// An entry as it is written: the one place that lays out its fields,
/// with the bridge's id and the server's key when it has them, and the
/// address only if allowed.
#[derive(Debug, Clone, Copy)]
pub struct EntryOut<'a> {
    pub(crate) id: Option<u64>,
    pub(crate) key: Option<ServerKey>,
    pub(crate) entry: &'a ServerEntry,
    pub(crate) addresses: Addresses,
}

impl Serialize for EntryOut<'_> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let e = self.entry;
        let mut map = s.serialize_map(None)?;
        if let Some(id) = self.id {
            map.serialize_entry("id", &id)?;
        }
        if let Some(key) = &self.key {
            map.serialize_entry("key", key)?;
        }
        map.serialize_entry("name", &e.name)?;
        if self.addresses == Addresses::Shown {
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

/// An entry as it is read, with the bridge's id if present. Flat, because
/// `#[serde(flatten)]` buffers every field of every entry and readers
/// parse lists of 10,000 servers on each change (the front end spent most
/// of an update there); one reader for both forms keeps one visitor in the
/// page's bundle.
#[derive(Deserialize)]
pub(crate) struct WireEntry {
    #[serde(default)]
    pub(crate) id: Option<u64>,
    /// Optional: bridges before keys did not send it.
    #[serde(default)]
    pub(crate) key: Option<ServerKey>,
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

impl From<WireEntry> for ServerEntry {
    fn from(w: WireEntry) -> Self {
        Self {
            name: w.name,
            address: w.address,
            port: w.port,
            stats: Stats {
                players: w.players,
                is_lobby_open: w.is_lobby_open,
                gameplay_mode: w.gameplay_mode,
            },
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::message::Players;

    fn entry() -> ServerEntry {
        ServerEntry {
            name: "Alpha".into(),
            address: Some("203.0.113.5".into()),
            port: Some(20001),
            stats: Stats {
                players: Players { current: 2, max: 4 },
                is_lobby_open: true,
                gameplay_mode: GameplayMode::StandardA,
            },
        }
    }

    #[test]
    fn shown_and_hidden_differ_only_by_the_address() {
        let e = entry();
        let shown = serde_json::to_string(&e).unwrap();
        assert_eq!(
            shown,
            r#"{"name":"Alpha","address":"203.0.113.5","port":20001,"players":{"current":2,"max":4},"isLobbyOpen":true,"gameplayMode":1}"#
        );
        let hidden = serde_json::to_string(&e.view(Addresses::Hidden)).unwrap();
        assert_eq!(
            hidden,
            r#"{"name":"Alpha","players":{"current":2,"max":4},"isLobbyOpen":true,"gameplayMode":1}"#
        );
        let back: ServerEntry = serde_json::from_str(&hidden).unwrap();
        assert_eq!((back.address, back.port), (None, None));
        assert_eq!(serde_json::from_str::<ServerEntry>(&shown).unwrap(), e);
    }
}
