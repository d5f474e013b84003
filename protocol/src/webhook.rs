//! What a `"standard"` webhook receives (`docs/protocol.md` §2.4): the
//! events a watch fires on and the body of one notification, following
//! Standard Webhooks 1.0. One type for the bridge that sends it and (with
//! the `openapi` feature) for the `webhooks` part of the OpenAPI document.

use serde::{Deserialize, Serialize};

use crate::{GameplayMode, Players, ServerKey};

/// What happened to a server, as a watch names it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(rename_all = "kebab-case")]
pub enum WatchEvent {
    /// A key not listed became listed.
    ServerOnline,
    /// A listed key stayed unlisted for 60 s.
    ServerOffline,
    /// `isLobbyOpen` went from false to true.
    LobbyOpened,
    /// `players.current` rose to at least the watch's threshold.
    PlayersReached,
}

/// The body of a `"standard"` webhook's `POST`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct WebhookPayload {
    #[serde(rename = "type")]
    pub event: WatchEvent,
    /// When the bridge decided the event (ISO 8601, UTC).
    pub timestamp: String,
    pub data: WebhookServer,
}

/// The server an event is about, as the webhook's body carries it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(rename_all = "camelCase")]
pub struct WebhookServer {
    pub key: ServerKey,
    pub name: String,
    /// Absent when the bridge hides addresses.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub address: Option<String>,
    /// Absent when the bridge hides addresses.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub port: Option<u16>,
    pub players: Players,
    pub is_lobby_open: bool,
    pub gameplay_mode: GameplayMode,
    /// The server's page: absolute when the bridge knows its public
    /// address (`--public-url`), else the path `/server/{key}`.
    pub url: String,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_body_has_the_contracts_names() {
        let body = WebhookPayload {
            event: WatchEvent::PlayersReached,
            timestamp: "2026-01-02T03:04:05Z".into(),
            data: WebhookServer {
                key: ServerKey(0xab),
                name: "Alpha".into(),
                address: None,
                port: None,
                players: Players { current: 8, max: 8 },
                is_lobby_open: false,
                gameplay_mode: GameplayMode::StandardA,
                url: "https://lobby.example/server/00000000000000ab".into(),
            },
        };
        let text = serde_json::to_string(&body).unwrap();
        assert_eq!(
            text,
            r#"{"type":"players-reached","timestamp":"2026-01-02T03:04:05Z","data":{"key":"00000000000000ab","name":"Alpha","players":{"current":8,"max":8},"isLobbyOpen":false,"gameplayMode":1,"url":"https://lobby.example/server/00000000000000ab"}}"#
        );
        assert_eq!(serde_json::from_str::<WebhookPayload>(&text).unwrap(), body);
    }
}
