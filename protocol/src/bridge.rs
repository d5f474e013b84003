//! The bridge's own messages (`shared/protocol.md` section 2), spoken over the
//! WebSocket between the browser and the bridge.

use serde::{Deserialize, Serialize};

use crate::message::{names as ms, Envelope, MessageError};

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

impl ErrorCode {
    /// A sentence for people, sent as `bridgeError`'s `message`.
    pub fn describe(self) -> &'static str {
        match self {
            Self::InvalidJson => "the frame is not valid JSON",
            Self::NotAnObject => "the message is not a JSON object",
            Self::UnknownCommand => "the command is neither a master (ms...) nor a bridge command",
            Self::Forbidden => "this command needs an admin connection (bridgeAuth)",
            Self::RateLimited => "too many messages; slow down",
            Self::MasterDown => "the master server cannot be reached",
        }
    }
}

/// What one inbound WebSocket text frame asks for, decided by the rules of
/// `shared/protocol.md` section 2. Bridge and front end share this so that
/// both agree on which commands need an admin connection.
#[derive(Debug, Clone, PartialEq)]
pub enum Inbound {
    /// A message for the bridge itself.
    Bridge(ClientMessage),
    /// `msQueryGameServers`: open to every viewer.
    Query,
    /// Any other `ms...` command (register, update, unregister, or one the
    /// master does not know): relayed as-is, for admin connections only.
    Admin { command: String },
}

impl Inbound {
    /// Classifies one frame's text. `Err` is the refusal to answer with.
    ///
    /// A `bridgeAuth` without a string `token` is read as an empty token (a
    /// wrong one), so the reply is still `bridgeAuthResult {"ok":false}`.
    pub fn classify(text: &[u8]) -> Result<Self, ErrorCode> {
        let env = match Envelope::parse(text) {
            Ok(env) => env,
            Err(MessageError::InvalidJson(_)) => return Err(ErrorCode::InvalidJson),
            Err(MessageError::NotAnObject) => return Err(ErrorCode::NotAnObject),
            Err(_) => return Err(ErrorCode::UnknownCommand),
        };
        match env.command.as_str() {
            names::AUTH => {
                let token = env
                    .content
                    .as_ref()
                    .and_then(|c| c.get("token"))
                    .and_then(|t| t.as_str())
                    .unwrap_or_default()
                    .to_owned();
                Ok(Self::Bridge(ClientMessage::Auth { token }))
            }
            names::SUBSCRIBE => Ok(Self::Bridge(ClientMessage::Subscribe)),
            names::UNSUBSCRIBE => Ok(Self::Bridge(ClientMessage::Unsubscribe)),
            ms::QUERY => Ok(Self::Query),
            c if c.starts_with("ms") => Ok(Self::Admin {
                command: env.command,
            }),
            _ => Err(ErrorCode::UnknownCommand),
        }
    }

    /// Whether the frame may only come from an admin connection.
    pub fn needs_admin(&self) -> bool {
        matches!(self, Self::Admin { .. })
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
    /// The refusal for `code`, with its standard sentence.
    pub fn refusal(code: ErrorCode) -> Self {
        Self::Error {
            code,
            message: code.describe().to_owned(),
        }
    }

    pub fn to_json(&self) -> String {
        // Plain data into a String: cannot fail.
        serde_json::to_string(self).unwrap_or_default()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn classify_frames() {
        let c = |s: &str| Inbound::classify(s.as_bytes());
        assert_eq!(c("{nope"), Err(ErrorCode::InvalidJson));
        assert_eq!(c(""), Err(ErrorCode::InvalidJson));
        assert_eq!(c("[1]"), Err(ErrorCode::NotAnObject));
        assert_eq!(c("42"), Err(ErrorCode::NotAnObject));
        assert_eq!(c("{}"), Err(ErrorCode::UnknownCommand));
        assert_eq!(c(r#"{"command":3}"#), Err(ErrorCode::UnknownCommand));
        assert_eq!(c(r#"{"command":"fly"}"#), Err(ErrorCode::UnknownCommand));
        assert_eq!(
            c(r#"{"command":"bridgeStatus"}"#),
            Err(ErrorCode::UnknownCommand)
        );
        assert_eq!(c(r#"{"command":"msQueryGameServers"}"#), Ok(Inbound::Query));
        assert_eq!(
            c(r#"{"command":"bridgeSubscribe","content":{}}"#),
            Ok(Inbound::Bridge(ClientMessage::Subscribe))
        );
        assert_eq!(
            c(r#"{"command":"bridgeUnsubscribe"}"#),
            Ok(Inbound::Bridge(ClientMessage::Unsubscribe))
        );
        assert_eq!(
            c(r#"{"command":"bridgeAuth","content":{"token":"abc"}}"#),
            Ok(Inbound::Bridge(ClientMessage::Auth {
                token: "abc".into()
            }))
        );
        assert_eq!(
            c(r#"{"command":"bridgeAuth"}"#),
            Ok(Inbound::Bridge(ClientMessage::Auth {
                token: String::new()
            }))
        );
        for admin in [
            "msRegisterGameServer",
            "msUpdateGameServerStats",
            "msUnregisterGameServer",
            "msFly",
        ] {
            let got = c(&format!(r#"{{"command":"{admin}"}}"#)).unwrap();
            assert!(got.needs_admin(), "{admin}");
        }
        assert!(!Inbound::Query.needs_admin());
        assert_eq!(
            BridgeMessage::refusal(ErrorCode::Forbidden).to_json(),
            format!(
                r#"{{"command":"bridgeError","content":{{"code":"forbidden","message":"{}"}}}}"#,
                ErrorCode::Forbidden.describe()
            )
        );
    }

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
