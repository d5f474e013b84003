//! What the bridge sends, parsed leniently: a list is kept even when some of
//! its entries are unreadable (the protocol crate skips those, and accepts
//! `players.current` as a number or a digit string), and unknown messages
//! are ignored rather than treated as errors.

use protocol::{
    bridge::{names as bridge_names, BridgeMessage, ErrorCode, MasterState},
    message::{names as ms_names, Envelope},
    Command, MessageError, ServerList,
};
use serde_json::Value;

/// A message from the bridge that the front end acts on.
#[derive(Debug, Clone, PartialEq)]
pub enum Incoming {
    /// `msRQueryGameServers`: the whole current list.
    List(ServerList),
    /// `bridgeAuthResult`.
    AuthResult(bool),
    /// `bridgeStatus`: whether the bridge reaches the master.
    Master(MasterState),
    /// `bridgeError`; `code` is `None` for a code this build does not know.
    Error {
        code: Option<ErrorCode>,
        message: String,
    },
    /// Anything else (kept for debugging, otherwise ignored).
    Other(String),
}

/// Parses one WebSocket text frame.
pub fn parse(text: &str) -> Result<Incoming, MessageError> {
    let env = Envelope::parse(text.as_bytes())?;
    match env.command.as_str() {
        ms_names::QUERY_REPLY => match Command::from_envelope(env)? {
            Command::QueryReply(list) => Ok(Incoming::List(list)),
            other => Ok(Incoming::Other(other.name().to_owned())),
        },
        bridge_names::AUTH_RESULT | bridge_names::STATUS | bridge_names::ERROR => {
            let command = env.command.clone();
            let content = env.content.unwrap_or(Value::Null);
            let value = serde_json::json!({ "command": command, "content": content });
            match serde_json::from_value::<BridgeMessage>(value) {
                Ok(BridgeMessage::AuthResult { ok }) => Ok(Incoming::AuthResult(ok)),
                Ok(BridgeMessage::Status { master }) => Ok(Incoming::Master(master)),
                Ok(BridgeMessage::Error { code, message }) => Ok(Incoming::Error {
                    code: Some(code),
                    message,
                }),
                Err(_) if command == bridge_names::ERROR => Ok(Incoming::Error {
                    code: None,
                    message: content
                        .get("message")
                        .and_then(Value::as_str)
                        .unwrap_or("the bridge refused a message")
                        .to_owned(),
                }),
                Err(e) => Err(MessageError::InvalidJson(e.to_string())),
            }
        }
        _ => Ok(Incoming::Other(env.command)),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn list_with_string_counts_and_a_broken_entry() {
        let text = r#"{"command":"msRQueryGameServers","content":{"servers":[
            {"name":"轰炸机人","address":"bombergame.example.org","port":40000,
             "players":{"current":"22","max":4},"isLobbyOpen":false,"gameplayMode":2},
            {"name":"broken","players":{"current":"two","max":4},"isLobbyOpen":true,"gameplayMode":1},
            {"name":"Hidden","players":{"current":1,"max":4},"isLobbyOpen":true,"gameplayMode":1}]}}"#;
        let Ok(Incoming::List(list)) = parse(text) else {
            panic!("not a list")
        };
        assert_eq!(list.servers.len(), 2);
        assert_eq!(list.servers[0].stats.players.current, 22);
        assert_eq!(list.servers[1].address, None);
    }

    #[test]
    fn bridge_messages() {
        assert_eq!(
            parse(r#"{"command":"bridgeAuthResult","content":{"ok":true}}"#),
            Ok(Incoming::AuthResult(true))
        );
        assert_eq!(
            parse(r#"{"command":"bridgeStatus","content":{"master":"down","since":3}}"#),
            Ok(Incoming::Master(MasterState::Down))
        );
        assert_eq!(
            parse(
                r#"{"command":"bridgeError","content":{"code":"forbidden","message":"sign in"}}"#
            ),
            Ok(Incoming::Error {
                code: Some(ErrorCode::Forbidden),
                message: "sign in".into()
            })
        );
        assert_eq!(
            parse(r#"{"command":"bridgeError","content":{"code":"new-code","message":"m"}}"#),
            Ok(Incoming::Error {
                code: None,
                message: "m".into()
            })
        );
        assert_eq!(
            parse(r#"{"command":"bridgeHello","content":{}}"#),
            Ok(Incoming::Other("bridgeHello".into()))
        );
    }

    #[test]
    fn garbage_is_an_error_not_a_panic() {
        assert!(parse("nope").is_err());
        assert!(parse("[]").is_err());
        assert!(parse(r#"{"command":"msRQueryGameServers"}"#).is_err());
        assert!(parse(r#"{"command":"msRQueryGameServers","content":{"servers":3}}"#).is_err());
        assert!(parse(r#"{"command":"bridgeAuthResult","content":{"ok":"yes"}}"#).is_err());
    }
}
