//! The bridge's message about other games' servers (`bridgeGameServers`):
//! every A2S and GameAgent source with its servers, players and rules, in
//! one shape whatever the protocol.

use serde::{Deserialize, Serialize};

/// The bridge's message about other games' servers (Valve A2S, Serious
/// Engine GameAgent), sent to subscribers once on `bridgeSubscribe` and
/// whenever a refresh changes anything. A separate enum from
/// [`BridgeMessage`](super::BridgeMessage) so that readers matching on that one stay exhaustive.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "command", content = "content")]
pub enum GamesMessage {
    #[serde(rename = "bridgeGameServers")]
    GameServers(GameServers),
}

impl GamesMessage {
    pub fn to_json(&self) -> String {
        // Plain data (finite floats only) into a String: cannot fail.
        crate::json::to_string(self)
    }
}

/// Every configured source of other games' servers, in configuration order.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct GameServers {
    pub sources: Vec<GameSource>,
}

/// How the bridge learns about a source's servers.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub enum GameSourceKind {
    /// One Valve A2S server (`--a2s HOST:PORT`).
    A2s,
    /// A Serious Engine GameAgent master and the servers it lists
    /// (`--gameagent-master HOST:PORT`).
    GameAgent,
}

/// One configured source: a column or tab in the front end.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct GameSource {
    /// Stable key: the kind and the address as configured (`a2s:host:port`).
    pub id: String,
    pub kind: GameSourceKind,
    /// The address as configured (`host:port`).
    pub label: String,
    /// Why the source itself could not be read (unresolvable name, master
    /// silent); its servers are then empty.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
    /// Something viewers should know that is not a failure: how many listed
    /// servers the bridge skipped, and why (never which).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub note: Option<String>,
    pub servers: Vec<GameServer>,
}

/// One game server as the browser shows it, whatever its protocol.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct GameServer {
    /// Where to join (an IP address); `None` when the bridge hides addresses.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub address: Option<String>,
    /// The game port to join (A2S: the queried port, or the EDF game port;
    /// GameAgent: the listed port; its queries went to port + 1).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub port: Option<u16>,
    /// Whether the last query was answered; when not, `error` says why and
    /// the other fields are empty.
    pub online: bool,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
    pub name: String,
    pub map: String,
    /// The game's name (A2S game description, GameAgent `gamename`).
    pub game: String,
    /// Game mode (GameAgent `gametype`; A2S has none, empty).
    pub mode: String,
    pub version: String,
    pub players: u32,
    pub max_players: u32,
    pub bots: u32,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub password: Option<bool>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub vac: Option<bool>,
    /// Round trip of the bridge's query, in milliseconds.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ping_ms: Option<u32>,
    /// The players the server lists (may be fewer than `players`).
    pub player_list: Vec<GamePlayer>,
    /// A2S rules, or GameAgent status keys, in the server's order.
    pub rules: Vec<GameRule>,
}

/// One player on a [`GameServer`].
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct GamePlayer {
    /// Empty when the server marked the name invalid.
    pub name: String,
    /// A2S score, GameAgent frags.
    pub score: i64,
    /// Seconds connected (A2S).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub time_secs: Option<u32>,
    /// The player's ping (GameAgent).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ping_ms: Option<u32>,
    /// Deaths (A2S, The Ship only).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub deaths: Option<i32>,
    /// Money (A2S, The Ship only).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub money: Option<i32>,
}

/// One rule or status key.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct GameRule {
    pub name: String,
    pub value: String,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn game_servers_wire_shape() {
        let msg = GamesMessage::GameServers(GameServers {
            sources: vec![GameSource {
                id: "a2s:127.0.0.1:27015".into(),
                kind: GameSourceKind::A2s,
                label: "127.0.0.1:27015".into(),
                error: None,
                note: None,
                servers: vec![GameServer {
                    address: Some("127.0.0.1".into()),
                    port: Some(27015),
                    online: true,
                    name: "de".into(),
                    players: 1,
                    max_players: 16,
                    ping_ms: Some(3),
                    player_list: vec![GamePlayer {
                        name: "Sam".into(),
                        score: 4,
                        time_secs: Some(60),
                        ping_ms: None,
                        deaths: None,
                        money: None,
                    }],
                    rules: vec![GameRule {
                        name: "sv_gravity".into(),
                        value: "800".into(),
                    }],
                    ..GameServer::default()
                }],
            }],
        });
        let json = msg.to_json();
        assert!(json.starts_with(r#"{"command":"bridgeGameServers","content":{"sources":[{"id":"a2s:127.0.0.1:27015","kind":"a2s","label":"127.0.0.1:27015","servers":[{"address":"127.0.0.1","port":27015,"online":true,"name":"de","#), "{json}");
        assert!(json.contains(r#""maxPlayers":16"#), "{json}");
        assert!(
            json.contains(r#""playerList":[{"name":"Sam","score":4,"timeSecs":60}]"#),
            "{json}"
        );
        let back: GamesMessage = serde_json::from_str(&json).unwrap();
        assert_eq!(back, msg);
        assert_eq!(
            serde_json::to_string(&GameSourceKind::GameAgent).unwrap(),
            r#""gameAgent""#
        );
    }
}
