//! A game server's state as it reports it (`msUpdateGameServerStats`):
//! its players and lobby, validated as the contract says. Below both the
//! master's messages and the list's entries, which carry it.

use serde::{Deserialize, Deserializer, Serialize};
use serde_json::{Map, Value};

use crate::validate::{
    check_max_players, field, parse_current_players, uint_field, GameplayMode, ValidationError,
};

/// Players on a server. `current` may exceed `max`: the rest are queued.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct Players {
    #[serde(deserialize_with = "lenient_current")]
    pub current: u32,
    pub max: u8,
}

fn lenient_current<'de, D: Deserializer<'de>>(d: D) -> Result<u32, D::Error> {
    let v = Value::deserialize(d)?;
    parse_current_players(&v).map_err(serde::de::Error::custom)
}

/// The content of `msUpdateGameServerStats`, and a listed server's state.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct Stats {
    pub players: Players,
    #[serde(rename = "isLobbyOpen")]
    pub is_lobby_open: bool,
    #[serde(rename = "gameplayMode")]
    pub gameplay_mode: GameplayMode,
}

impl Default for Stats {
    /// What a server is listed with until it sends its first stats.
    fn default() -> Self {
        Self {
            players: Players { current: 0, max: 4 },
            is_lobby_open: true,
            gameplay_mode: GameplayMode::StandardA,
        }
    }
}

impl Stats {
    /// Validates an `msUpdateGameServerStats` content; all fields are required.
    pub fn from_content(content: &Value) -> Result<Self, ValidationError> {
        let obj = content
            .as_object()
            .ok_or(ValidationError::ContentNotObject)?;
        let players = field(obj, "players")?
            .as_object()
            .ok_or(ValidationError::WrongType {
                field: "players",
                expected: "an object",
            })?;
        let current = parse_current_players(field_in(players, "players.current", "current")?)?;
        let max = check_max_players(uint_field(players, "max").map_err(|_| {
            if players.contains_key("max") {
                ValidationError::PlayersMax
            } else {
                ValidationError::Missing("players.max")
            }
        })?)?;
        let is_lobby_open =
            field(obj, "isLobbyOpen")?
                .as_bool()
                .ok_or(ValidationError::WrongType {
                    field: "isLobbyOpen",
                    expected: "true or false",
                })?;
        let mode = uint_field(obj, "gameplayMode").map_err(|e| match e {
            ValidationError::WrongType { .. } => ValidationError::GameplayMode,
            e => e,
        })?;
        Ok(Self {
            players: Players { current, max },
            is_lobby_open,
            gameplay_mode: GameplayMode::from_wire(mode)?,
        })
    }
}

fn field_in<'a>(
    obj: &'a Map<String, Value>,
    label: &'static str,
    key: &str,
) -> Result<&'a Value, ValidationError> {
    obj.get(key).ok_or(ValidationError::Missing(label))
}
