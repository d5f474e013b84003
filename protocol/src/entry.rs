//! One listed server on the wire: the master's `msRQueryGameServers` entry,
//! and the same entry with the bridge's `id` in `bridgeSnapshot`,
//! `bridgeDelta` and `GET /api/servers`. Its JSON shape is written and read
//! here only, and so is the rule for what an entry without its address
//! looks like.

use std::net::IpAddr;

use serde::{Deserialize, Serialize, Serializer};

use crate::{
    stats::{Players, Stats},
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
    /// Who registered the entry, when that is not the server itself: the
    /// network (IPv4 address, IPv6 /64) of the connection that claimed an
    /// `address` other than its own, so that the bridge can give such a
    /// claim a key of its own (`docs/protocol.md`, "Server keys"). `None`
    /// when the server registered its own address, and wherever the
    /// registrant is unknown: only the master's change feed to bridges
    /// carries it ([`Addresses::WithRegistrants`]); players, `/api/servers`
    /// and the plain `msRQueryGameServers` never see it.
    pub registrant: Option<IpAddr>,
}

/// Whether a list is written with its servers' addresses (for the master's
/// clients and the bridge's admins) or without (for viewers of a bridge
/// started with `--hide-addresses`), or, for the master's change feed to
/// bridges only, with their addresses and registrants.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Addresses {
    Shown,
    Hidden,
    /// Addresses and [`ServerEntry::registrant`]: what a bridge needs to
    /// key a server, never what a player is sent (without the
    /// `registrants` feature, written as `Shown`).
    WithRegistrants,
}

impl Addresses {
    /// Whether this audience sees servers' addresses and ports: the one
    /// rule by which every form of a server (a listed entry, its details,
    /// a notification's server, another game's server) hides them.
    pub fn shown(self) -> bool {
        self != Addresses::Hidden
    }

    /// `address` and `port` as this audience may see them: as they are,
    /// or both `None` ([`Addresses::shown`]).
    pub fn show<A>(self, address: Option<A>, port: Option<u16>) -> (Option<A>, Option<u16>) {
        if self.shown() {
            (address, port)
        } else {
            (None, None)
        }
    }
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

impl EntryOut<'_> {
    /// The server's address and port as this audience sees them: what
    /// every form of a listed server (this one, a notification's) writes.
    pub fn address_and_port(&self) -> (Option<&str>, Option<u16>) {
        self.addresses
            .show(self.entry.address.as_deref(), self.entry.port)
    }
}

impl Serialize for EntryOut<'_> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let e = self.entry;
        let (address, port) = self.address_and_port();
        EntryShape {
            id: self.id,
            key: self.key,
            name: &e.name,
            address,
            port,
            players: e.stats.players,
            is_lobby_open: e.stats.is_lobby_open,
            gameplay_mode: e.stats.gameplay_mode,
        }
        .serialize_with(self.addresses, e.registrant, s)
    }
}

/// The fields of one listed server, in the order they are written: what
/// [`EntryOut`] writes and (feature `openapi`) the schema `ServerEntry` of
/// the OpenAPI document, so the two cannot differ.
#[derive(Serialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema), schema(as = ServerEntry))]
#[serde(rename_all = "camelCase")]
pub(crate) struct EntryShape<'a> {
    /// The bridge's number for this entry in this list (`bridgeSnapshot`,
    /// `bridgeDelta` and `/api/servers` always carry it; the master's own
    /// reply does not).
    #[serde(skip_serializing_if = "Option::is_none")]
    id: Option<u64>,
    /// The server's key (the bridge's lists carry it; the master's reply
    /// does not).
    #[serde(skip_serializing_if = "Option::is_none")]
    key: Option<ServerKey>,
    /// The server's name: 1 to 100 characters, no control characters.
    name: &'a str,
    /// Its address; absent when the bridge hides addresses.
    #[serde(skip_serializing_if = "Option::is_none")]
    address: Option<&'a str>,
    /// Its port; absent when the bridge hides addresses.
    #[serde(skip_serializing_if = "Option::is_none")]
    port: Option<u16>,
    players: Players,
    /// Whether players may join now.
    is_lobby_open: bool,
    gameplay_mode: GameplayMode,
}

impl EntryShape<'_> {
    /// Writes the shape, followed by the registrant for the lists a master
    /// sends its bridges ([`Addresses::WithRegistrants`]) only: a field of
    /// its own here, so neither the players' lists nor the OpenAPI schema
    /// (which describes [`EntryShape`]) ever carry it.
    fn serialize_with<S: Serializer>(
        self,
        addresses: Addresses,
        registrant: Option<IpAddr>,
        s: S,
    ) -> Result<S::Ok, S::Error> {
        #[cfg(feature = "registrants")]
        if let Some(registrant) = registrant.filter(|_| addresses == Addresses::WithRegistrants) {
            #[derive(Serialize)]
            struct ForBridges<'a> {
                #[serde(flatten)]
                shape: EntryShape<'a>,
                registrant: IpAddr,
            }
            return ForBridges {
                shape: self,
                registrant,
            }
            .serialize(s);
        }
        #[cfg(not(feature = "registrants"))]
        let _ = (addresses, registrant);
        self.serialize(s)
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
    /// Only in the master's change feed; an IP address (serde's parser:
    /// anything else fails the whole message). The bridge reduces it to
    /// its network itself, so a longer IPv6 address changes nothing.
    /// Without the `registrants` feature (the page) it is not read.
    #[cfg(feature = "registrants")]
    #[serde(default)]
    registrant: Option<IpAddr>,
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
            #[cfg(feature = "registrants")]
            registrant: w.registrant,
            #[cfg(not(feature = "registrants"))]
            registrant: None,
        }
    }
}

/// `GET /api/servers/{key}`: one server as the bridge last knew it, listed
/// now or not. The bridge writes it and the page reads it with this type.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(rename_all = "camelCase")]
pub struct ServerDetails {
    pub key: ServerKey,
    /// The name it was last listed with.
    pub name: String,
    /// Absent when the bridge hides addresses.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub address: Option<String>,
    /// Absent when the bridge hides addresses.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub port: Option<u16>,
    /// Whether the bridge's list shows it now; the other fields are its
    /// last known values while it is offline.
    pub online: bool,
    pub players: Players,
    pub is_lobby_open: bool,
    pub gameplay_mode: GameplayMode,
    /// When the bridge first recorded it (Unix milliseconds).
    pub first_seen: i64,
    /// The last sample that listed it (Unix milliseconds).
    pub last_seen: i64,
    /// Whether the bridge's history holds it. Written only when it does
    /// not (`false`): a server listed since the history's last sample, or
    /// one the history's bounds leave out, has no history or week yet
    /// (those answer `404`), so a page asks for them only once this says
    /// so. Absent, as from an older bridge, it is recorded.
    #[serde(default = "recorded", skip_serializing_if = "is_recorded")]
    pub recorded: bool,
    /// The link that joins it: the bridge's `--join-url` template filled
    /// with its address and port (`join::JoinTemplate::fill`). Absent
    /// without a template, and wherever the address is hidden.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub join_url: Option<String>,
}

/// [`ServerDetails::recorded`] when the answer does not say.
fn recorded() -> bool {
    true
}

/// Whether [`ServerDetails::recorded`] goes unwritten.
#[allow(clippy::trivially_copy_pass_by_ref)] // serde passes a reference
fn is_recorded(recorded: &bool) -> bool {
    *recorded
}

impl ServerDetails {
    /// The details as `addresses` allows them to be seen: the same rule
    /// as a listed entry's.
    pub fn seen_as(mut self, addresses: Addresses) -> Self {
        (self.address, self.port) = addresses.show(self.address.take(), self.port);
        if !addresses.shown() {
            self.join_url = None;
        }
        self
    }

    /// The details with [`ServerDetails::join_url`] filled from `template`
    /// when they show an address and a port that pass the registration's
    /// rules, and none otherwise: hidden details (see
    /// [`ServerDetails::seen_as`]) never get a link.
    pub fn joined_by(mut self, template: Option<&crate::join::JoinTemplate>) -> Self {
        self.join_url = match (template, self.address.as_deref(), self.port) {
            (Some(template), Some(address), Some(port)) => template.fill(address, port).ok(),
            _ => None,
        };
        self
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::stats::Players;

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
            registrant: None,
        }
    }

    #[test]
    fn shown_and_hidden_differ_only_by_the_address() {
        let e = entry();
        let shown = serde_json::to_string(&e.view(Addresses::Shown)).unwrap();
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

    #[test]
    fn details_hide_the_address_like_entries_and_read_back() {
        let details = ServerDetails {
            key: ServerKey(0xab),
            name: "Alpha".into(),
            address: Some("203.0.113.5".into()),
            port: Some(20001),
            online: false,
            players: Players { current: 2, max: 4 },
            is_lobby_open: true,
            gameplay_mode: GameplayMode::StandardAB,
            first_seen: 1_000,
            last_seen: 2_000,
            recorded: true,
            join_url: None,
        };
        let shown = serde_json::to_string(&details).unwrap();
        assert_eq!(
            shown,
            r#"{"key":"00000000000000ab","name":"Alpha","address":"203.0.113.5","port":20001,"online":false,"players":{"current":2,"max":4},"isLobbyOpen":true,"gameplayMode":2,"firstSeen":1000,"lastSeen":2000}"#
        );
        assert_eq!(
            serde_json::from_str::<ServerDetails>(&shown).unwrap(),
            details
        );
        let hidden = details.clone().seen_as(Addresses::Hidden);
        let text = serde_json::to_string(&hidden).unwrap();
        assert!(
            !text.contains("address") && !text.contains("port"),
            "{text}"
        );
        assert_eq!(details.clone().seen_as(Addresses::Shown), details);
    }

    #[test]
    fn details_say_only_when_the_history_does_not_hold_the_server() {
        let text = r#"{"key":"00000000000000ab","name":"Alpha","online":true,"players":{"current":2,"max":4},"isLobbyOpen":true,"gameplayMode":1,"firstSeen":1000,"lastSeen":1000}"#;
        let read: ServerDetails = serde_json::from_str(text).unwrap();
        assert!(read.recorded, "absent: recorded, as an older bridge's");
        let fresh = ServerDetails {
            recorded: false,
            ..read
        };
        let written = serde_json::to_string(&fresh).unwrap();
        assert!(
            written.ends_with(r#","lastSeen":1000,"recorded":false}"#),
            "{written}"
        );
        assert_eq!(
            serde_json::from_str::<ServerDetails>(&written).unwrap(),
            fresh
        );
    }

    #[test]
    fn details_get_a_join_link_only_with_an_address_and_a_template() {
        let details = ServerDetails {
            key: ServerKey(0xab),
            name: "Alpha".into(),
            address: Some("2001:db8::5".into()),
            port: Some(20001),
            online: true,
            players: Players { current: 2, max: 4 },
            is_lobby_open: true,
            gameplay_mode: GameplayMode::StandardA,
            first_seen: 1_000,
            last_seen: 2_000,
            recorded: true,
            join_url: None,
        };
        let template = crate::join::JoinTemplate::parse("bomber://{address}:{port}").unwrap();
        let joined = details.clone().joined_by(Some(&template));
        assert_eq!(
            joined.join_url.as_deref(),
            Some("bomber://[2001:db8::5]:20001")
        );
        let text = serde_json::to_string(&joined).unwrap();
        assert!(
            text.ends_with(r#","joinUrl":"bomber://[2001:db8::5]:20001"}"#),
            "{text}"
        );
        assert_eq!(
            serde_json::from_str::<ServerDetails>(&text).unwrap(),
            joined
        );
        assert_eq!(details.clone().joined_by(None).join_url, None);
        // Hidden: no address, so no link, whichever comes first.
        let hidden = joined.clone().seen_as(Addresses::Hidden);
        assert_eq!(hidden.join_url, None);
        let hidden = details
            .clone()
            .seen_as(Addresses::Hidden)
            .joined_by(Some(&template));
        assert_eq!(hidden.join_url, None);
        // An address the registration's rules refuse gives no link.
        let bad = ServerDetails {
            address: Some("x\"><script>".into()),
            ..details
        };
        assert_eq!(bad.joined_by(Some(&template)).join_url, None);
    }

    #[cfg(feature = "registrants")]
    #[test]
    fn registrants_are_written_for_bridges_only() {
        let e = ServerEntry {
            registrant: Some("198.51.100.7".parse().unwrap()),
            ..entry()
        };
        let for_bridges = serde_json::to_string(&e.view(Addresses::WithRegistrants)).unwrap();
        assert_eq!(
            for_bridges,
            r#"{"name":"Alpha","address":"203.0.113.5","port":20001,"players":{"current":2,"max":4},"isLobbyOpen":true,"gameplayMode":1,"registrant":"198.51.100.7"}"#
        );
        assert_eq!(
            serde_json::from_str::<ServerEntry>(&for_bridges).unwrap(),
            e
        );
        for players in [Addresses::Shown, Addresses::Hidden] {
            let text = serde_json::to_string(&e.view(players)).unwrap();
            assert!(!text.contains("registrant"), "{text}");
        }
        assert!(!serde_json::to_string(&e.view(Addresses::Shown))
            .unwrap()
            .contains("registrant"));
        // Hostile input: not an IP address, the whole entry is refused.
        for bad in [r#""evil.example""#, r#""10.0.0.1/8""#, "7", r#""""#] {
            let text = for_bridges.replace(r#""198.51.100.7""#, bad);
            assert!(serde_json::from_str::<ServerEntry>(&text).is_err(), "{bad}");
        }
    }
}
