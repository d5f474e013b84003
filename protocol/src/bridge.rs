//! The bridge's own messages (`shared/protocol.md` section 2), spoken over the
//! WebSocket between the browser and the bridge.

use serde::{Deserialize, Serialize};

/// Command names of the bridge's messages.
pub mod names {
    pub const AUTH: &str = "bridgeAuth";
    pub const AUTH_RESULT: &str = "bridgeAuthResult";
    pub const SUBSCRIBE: &str = "bridgeSubscribe";
    pub const UNSUBSCRIBE: &str = "bridgeUnsubscribe";
    pub const STATUS: &str = "bridgeStatus";
    pub const ERROR: &str = "bridgeError";
}

/// Messages the browser sends to the bridge itself (not relayed).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "command", content = "content")]
pub enum ClientMessage {
    #[serde(rename = "bridgeAuth")]
    Auth { token: String },
    #[serde(rename = "bridgeSubscribe")]
    Subscribe,
    #[serde(rename = "bridgeUnsubscribe")]
    Unsubscribe,
}

/// Whether the bridge can reach the master.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum MasterState {
    Up,
    Down,
}

/// Why the bridge refused a frame; the connection stays open.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum ErrorCode {
    InvalidJson,
    NotAnObject,
    UnknownCommand,
    Forbidden,
    RateLimited,
    MasterDown,
}

impl ErrorCode {
    /// The code as it appears on the wire and in metrics labels.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::InvalidJson => "invalid-json",
            Self::NotAnObject => "not-an-object",
            Self::UnknownCommand => "unknown-command",
            Self::Forbidden => "forbidden",
            Self::RateLimited => "rate-limited",
            Self::MasterDown => "master-down",
        }
    }
}

/// Messages the bridge sends to the browser on its own behalf.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "command", content = "content")]
pub enum BridgeMessage {
    #[serde(rename = "bridgeAuthResult")]
    AuthResult { ok: bool },
    #[serde(rename = "bridgeStatus")]
    Status { master: MasterState },
    #[serde(rename = "bridgeError")]
    Error { code: ErrorCode, message: String },
}

impl BridgeMessage {
    pub fn to_json(&self) -> String {
        // Plain data into a String: cannot fail.
        serde_json::to_string(self).unwrap_or_default()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn wire_shapes() {
        assert_eq!(
            BridgeMessage::Error {
                code: ErrorCode::RateLimited,
                message: "slow down".into()
            }
            .to_json(),
            r#"{"command":"bridgeError","content":{"code":"rate-limited","message":"slow down"}}"#
        );
        assert_eq!(
            BridgeMessage::Status {
                master: MasterState::Down
            }
            .to_json(),
            r#"{"command":"bridgeStatus","content":{"master":"down"}}"#
        );
        assert_eq!(
            serde_json::to_string(&ClientMessage::Subscribe).unwrap(),
            r#"{"command":"bridgeSubscribe"}"#
        );
        let auth: ClientMessage =
            serde_json::from_str(r#"{"command":"bridgeAuth","content":{"token":"t"}}"#).unwrap();
        assert_eq!(auth, ClientMessage::Auth { token: "t".into() });
        for code in [
            ErrorCode::InvalidJson,
            ErrorCode::NotAnObject,
            ErrorCode::UnknownCommand,
            ErrorCode::Forbidden,
            ErrorCode::RateLimited,
            ErrorCode::MasterDown,
        ] {
            assert_eq!(
                serde_json::to_string(&code).unwrap(),
                format!("\"{}\"", code.as_str())
            );
        }
    }
}
