//! The bridge's own messages (`docs/protocol.md` §2), spoken over the
//! WebSocket between the browser and the bridge.

mod games;

pub use games::{
    GamePlayer, GameRule, GameServer, GameServers, GameSource, GameSourceKind, GamesMessage,
};

use serde::{Deserialize, Serialize};

use crate::{
    delta::{Subscribe, SubscribeError},
    message::{names as ms, Envelope, MessageError},
};

/// Command names of the bridge's messages.
pub mod names {
    pub const AUTH: &str = "bridgeAuth";
    pub const AUTH_RESULT: &str = "bridgeAuthResult";
    pub const SUBSCRIBE: &str = "bridgeSubscribe";
    pub const UNSUBSCRIBE: &str = "bridgeUnsubscribe";
    pub const STATUS: &str = "bridgeStatus";
    pub const ERROR: &str = "bridgeError";
    /// Other games' servers (A2S, GameAgent), pushed to subscribers.
    pub const GAME_SERVERS: &str = "bridgeGameServers";
    pub use crate::delta::names::{DELTA, SNAPSHOT};
}

/// Messages the browser sends to the bridge itself (not relayed).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ClientMessage {
    Auth {
        token: String,
    },
    /// Whole lists, or deltas (`docs/protocol.md` §3) when the content asks for them.
    Subscribe(Subscribe),
    Unsubscribe,
}

impl ClientMessage {
    /// The frame's text, as the bridge reads it (a plain subscribe has no
    /// `content`).
    pub fn to_json(&self) -> String {
        // Plain data into a String: cannot fail.
        crate::json::to_string(self)
    }
}

impl Serialize for ClientMessage {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        use serde::ser::SerializeMap;
        let mut map = s.serialize_map(None)?;
        match self {
            Self::Auth { token } => {
                map.serialize_entry("command", names::AUTH)?;
                map.serialize_entry("content", &serde_json::json!({ "token": token }))?;
            }
            Self::Subscribe(sub) => {
                map.serialize_entry("command", names::SUBSCRIBE)?;
                if let Some(content) = sub.to_content() {
                    map.serialize_entry("content", &content)?;
                }
            }
            Self::Unsubscribe => map.serialize_entry("command", names::UNSUBSCRIBE)?,
        }
        map.end()
    }
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
    /// Every code, for counters and exhaustive tests.
    pub const ALL: [ErrorCode; 6] = [
        ErrorCode::InvalidJson,
        ErrorCode::NotAnObject,
        ErrorCode::UnknownCommand,
        ErrorCode::Forbidden,
        ErrorCode::RateLimited,
        ErrorCode::MasterDown,
    ];

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

/// Why the bridge refuses a frame: the code, and the sentence to send
/// (the code's standard one unless the refusal says more).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Refusal {
    pub code: ErrorCode,
    pub message: String,
}

impl From<ErrorCode> for Refusal {
    fn from(code: ErrorCode) -> Self {
        Self {
            code,
            message: code.describe().to_owned(),
        }
    }
}

impl From<SubscribeError> for Refusal {
    fn from(e: SubscribeError) -> Self {
        Self {
            code: ErrorCode::InvalidJson,
            message: e.to_string(),
        }
    }
}

impl Refusal {
    /// The `bridgeError` that says it.
    pub fn to_message(&self) -> BridgeMessage {
        BridgeMessage::Error {
            code: self.code,
            message: self.message.clone(),
        }
    }
}

/// What one inbound WebSocket text frame asks for, decided by the rules of
/// `docs/protocol.md` §2. Bridge and front end share this so that
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
    /// A `bridgeSubscribe` whose content is malformed is refused with
    /// `invalid-json` and a sentence that names the field.
    pub fn classify(text: &[u8]) -> Result<Self, Refusal> {
        let env = match Envelope::parse(text) {
            Ok(env) => env,
            Err(MessageError::InvalidJson(_)) => return Err(ErrorCode::InvalidJson.into()),
            Err(MessageError::NotAnObject) => return Err(ErrorCode::NotAnObject.into()),
            Err(_) => return Err(ErrorCode::UnknownCommand.into()),
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
            names::SUBSCRIBE => Ok(Self::Bridge(ClientMessage::Subscribe(
                Subscribe::from_content(env.content.as_ref())?,
            ))),
            names::UNSUBSCRIBE => Ok(Self::Bridge(ClientMessage::Unsubscribe)),
            ms::QUERY => Ok(Self::Query),
            c if c.starts_with("ms") => Ok(Self::Admin {
                command: env.command,
            }),
            _ => Err(ErrorCode::UnknownCommand.into()),
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
    /// Reads a frame whose `command` the reader already knows (from an
    /// `Envelope`); `None` for a command that is not one of these. Each
    /// variant's content is read as a plain struct: reading the tagged enum
    /// itself, whose content may precede its tag, pulls serde's buffering
    /// into the browser bundle.
    pub fn from_frame(command: &str, text: &str) -> Option<Result<Self, serde_json::Error>> {
        #[derive(Deserialize)]
        struct Frame<T> {
            content: T,
        }
        #[derive(Deserialize)]
        struct AuthResult {
            ok: bool,
        }
        #[derive(Deserialize)]
        struct Status {
            master: MasterState,
        }
        #[derive(Deserialize)]
        struct Error {
            code: ErrorCode,
            message: String,
        }
        Some(match command {
            names::AUTH_RESULT => serde_json::from_str::<Frame<AuthResult>>(text)
                .map(|f| Self::AuthResult { ok: f.content.ok }),
            names::STATUS => serde_json::from_str::<Frame<Status>>(text).map(|f| Self::Status {
                master: f.content.master,
            }),
            names::ERROR => serde_json::from_str::<Frame<Error>>(text).map(|f| Self::Error {
                code: f.content.code,
                message: f.content.message,
            }),
            _ => return None,
        })
    }

    /// The refusal for `code`, with its standard sentence.
    pub fn refusal(code: ErrorCode) -> Self {
        Self::Error {
            code,
            message: code.describe().to_owned(),
        }
    }

    pub fn to_json(&self) -> String {
        // Plain data into a String: cannot fail.
        crate::json::to_string(self)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn classify_frames() {
        let c = |s: &str| Inbound::classify(s.as_bytes()).map_err(|r| r.code);
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
            Ok(Inbound::Bridge(ClientMessage::Subscribe(
                Subscribe::whole_lists()
            )))
        );
        assert_eq!(
            c(r#"{"command":"bridgeSubscribe","content":{"deltas":true}}"#),
            Ok(Inbound::Bridge(ClientMessage::Subscribe(
                Subscribe::deltas(None)
            )))
        );
        let refused = Inbound::classify(
            br#"{"command":"bridgeSubscribe","content":{"deltas":true,"epoch":"e","since":-1}}"#,
        )
        .unwrap_err();
        assert_eq!(refused.code, ErrorCode::InvalidJson);
        assert!(refused.message.contains("`since`"), "{}", refused.message);
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
    fn from_frame_reads_what_to_json_writes() {
        let messages = [
            BridgeMessage::AuthResult { ok: true },
            BridgeMessage::Status {
                master: MasterState::Down,
            },
            BridgeMessage::refusal(ErrorCode::RateLimited),
        ];
        for m in messages {
            let json = m.to_json();
            let env = Envelope::parse(json.as_bytes()).unwrap();
            assert_eq!(
                BridgeMessage::from_frame(&env.command, &json)
                    .unwrap()
                    .unwrap(),
                m
            );
        }
        // Content first, extra fields: still read.
        let text = r#"{"content":{"master":"up","since":3},"command":"bridgeStatus"}"#;
        assert_eq!(
            BridgeMessage::from_frame(names::STATUS, text)
                .unwrap()
                .unwrap(),
            BridgeMessage::Status {
                master: MasterState::Up
            }
        );
        assert!(
            BridgeMessage::from_frame(names::AUTH_RESULT, r#"{"content":{"ok":"yes"}}"#)
                .unwrap()
                .is_err()
        );
        assert!(
            BridgeMessage::from_frame(names::ERROR, r#"{"command":"bridgeError"}"#)
                .unwrap()
                .is_err()
        );
        assert!(BridgeMessage::from_frame("msQueryGameServers", "{}").is_none());
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
            ClientMessage::Subscribe(Subscribe::whole_lists()).to_json(),
            r#"{"command":"bridgeSubscribe"}"#
        );
        assert_eq!(
            ClientMessage::Subscribe(Subscribe::deltas(Some(crate::delta::Resume {
                epoch: "e".into(),
                since: 4
            })))
            .to_json(),
            r#"{"command":"bridgeSubscribe","content":{"deltas":true,"epoch":"e","since":4}}"#
        );
        let auth = ClientMessage::Auth { token: "t".into() };
        assert_eq!(
            Inbound::classify(auth.to_json().as_bytes()),
            Ok(Inbound::Bridge(auth))
        );
        for code in ErrorCode::ALL {
            assert_eq!(
                serde_json::to_string(&code).unwrap(),
                format!("\"{}\"", code.as_str())
            );
        }
    }
}
