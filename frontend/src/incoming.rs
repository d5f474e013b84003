//! What the bridge sends, parsed leniently: a list is kept even when some of
//! its entries are unreadable (the protocol crate skips those, and accepts
//! `players.current` as a number or a digit string), and unknown messages
//! are ignored rather than treated as errors.

use protocol::{
    bridge::{
        names as bridge_names, BridgeMessage, ErrorCode, GameServers, GamesMessage, MasterState,
    },
    message::{names as ms_names, Envelope},
    Command, MessageError, ServerEntry, ServerList,
};
use serde::Deserialize;
use serde_json::{value::RawValue, Value};

/// A message from the bridge that the front end acts on.
#[derive(Debug, Clone, PartialEq)]
pub enum Incoming {
    /// `msRQueryGameServers`: the whole current list.
    List(ServerList),
    /// `bridgeAuthResult`.
    AuthResult(bool),
    /// `bridgeStatus`: whether the bridge reaches the master.
    Master(MasterState),
    /// `bridgeGameServers`: other games' servers, every source.
    Games(GameServers),
    /// `bridgeError`; `code` is `None` for a code this build does not know.
    Error {
        code: Option<ErrorCode>,
        message: String,
    },
    /// Anything else (kept for debugging, otherwise ignored).
    Other(String),
}

/// `msRQueryGameServers` content with each entry kept as raw text, so one
/// unreadable entry is skipped without losing the list.
#[derive(Deserialize)]
struct RawList<'a> {
    #[serde(borrow)]
    servers: Vec<&'a RawValue>,
}

/// A whole list frame read in one pass over the text (a list is megabytes;
/// reading the content as a raw value first and then again as a list
/// would scan it twice). Any other message fails to match this shape.
#[derive(Deserialize)]
struct ListFrame<'a> {
    #[serde(borrow)]
    command: std::borrow::Cow<'a, str>,
    #[serde(borrow)]
    content: RawList<'a>,
}

/// The previous list's text and where each of its entries lies in it, with
/// what each entry parsed to: a list changes a few entries at a time, so
/// an entry whose text is unchanged at the same position is not parsed
/// again.
#[derive(Default)]
struct LastList {
    text: String,
    entries: Vec<(usize, usize, Option<ServerEntry>)>,
}

thread_local! {
    static LAST_LIST: std::cell::RefCell<LastList> = std::cell::RefCell::default();
}

/// The common case, a whole list, parsed straight into typed entries.
/// `None` when the frame is anything else or malformed: the general path
/// then decides (and reports the same errors as before).
fn parse_list_fast(text: &str) -> Option<ServerList> {
    let frame: ListFrame<'_> = serde_json::from_str(text).ok()?;
    if frame.command != ms_names::QUERY_REPLY {
        return None;
    }
    let raw = frame.content;
    let base = text.as_ptr() as usize;
    LAST_LIST.with(|cell| {
        let mut last = cell.borrow_mut();
        let last = &mut *last;
        let mut entries = Vec::with_capacity(raw.servers.len());
        let mut servers = Vec::with_capacity(raw.servers.len());
        for (i, r) in raw.servers.iter().enumerate() {
            let slice = r.get();
            let start = slice.as_ptr() as usize - base;
            // The old cache is rebuilt below, so its entry can move.
            let cached = last.entries.get_mut(i).and_then(|(s, l, e)| {
                (last.text.get(*s..*s + *l) == Some(slice)).then(|| e.take())
            });
            let entry = match cached {
                Some(e) => e,
                None => serde_json::from_str::<ServerEntry>(slice).ok(),
            };
            if let Some(e) = &entry {
                servers.push(e.clone());
            }
            entries.push((start, slice.len(), entry));
        }
        last.text.clear();
        last.text.push_str(text);
        last.entries = entries;
        Some(ServerList { servers })
    })
}

/// Parses one WebSocket text frame.
pub fn parse(text: &str) -> Result<Incoming, MessageError> {
    match parse_list_fast(text) {
        Some(list) => Ok(Incoming::List(list)),
        None => parse_general(text),
    }
}

/// Every message, through the protocol crate's `Value`-based envelope.
fn parse_general(text: &str) -> Result<Incoming, MessageError> {
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
        bridge_names::GAME_SERVERS => {
            let value = serde_json::json!({ "command": env.command, "content": env.content });
            match serde_json::from_value::<GamesMessage>(value) {
                Ok(GamesMessage::GameServers(games)) => Ok(Incoming::Games(games)),
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
    fn fast_list_path_agrees_with_the_general_one() {
        let texts = [
            r#"{"content":{"servers":[{"gameplayMode":1,"isLobbyOpen":true,
                "players":{"max":4,"current":3},"port":1,"address":null,"name":"x\"y","extra":1},
                {"name":"a","players":{"current":1,"max":300},"isLobbyOpen":true,"gameplayMode":1},
                {"name":"b","players":{"current":1,"max":3},"isLobbyOpen":true,"gameplayMode":3},
                {"name":"c","address":"h","port":70000,"players":{"current":1,"max":3},"isLobbyOpen":true,"gameplayMode":2},
                {"name":"d","address":"h","port":7,"players":{"current":"007","max":2},"isLobbyOpen":false,"gameplayMode":2},
                3, null, "s"],"more":true},"command":"msRQueryGameServers"}"#,
            r#"{"command":"msRQueryGameServers","content":{"servers":[]}}"#,
        ];
        for text in texts {
            let fast = parse_list_fast(text).expect("fast path");
            assert_eq!(parse_general(text), Ok(Incoming::List(fast)));
        }
        let Some(list) = parse_list_fast(texts[0]) else {
            unreachable!()
        };
        let names: Vec<&str> = list.servers.iter().map(|e| e.name.as_str()).collect();
        assert_eq!(names, ["x\"y", "d"]);
        assert_eq!(list.servers[1].stats.players.current, 7);
        // Parsed again (entries from the cache) and after a change of one
        // entry (that one parsed anew): still what the general path says.
        let changed = texts[0].replace(r#""current":"007""#, r#""current":"008""#);
        for text in [texts[0], changed.as_str(), changed.as_str(), texts[0]] {
            let fast = parse_list_fast(text).expect("fast path");
            assert_eq!(parse_general(text), Ok(Incoming::List(fast)));
        }
        let Some(list) = parse_list_fast(&changed) else {
            unreachable!()
        };
        assert_eq!(list.servers[1].stats.players.current, 8);
        // Anything else is left to the general path.
        for text in [
            r#"{"command":"msRQueryGameServers"}"#,
            r#"{"command":"msRQueryGameServers","content":null}"#,
            r#"{"command":"msRQueryGameServers","content":{"servers":3}}"#,
            r#"{"command":"msRQueryGameServers","content":{"servers":[]}} x"#,
            r#"{"command":"bridgeAuthResult","content":{"ok":true}}"#,
        ] {
            assert!(parse_list_fast(text).is_none(), "{text}");
        }
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
    fn game_servers() {
        let text = r#"{"command":"bridgeGameServers","content":{"sources":[
            {"id":"a2s:127.0.0.1:27015","kind":"a2s","label":"127.0.0.1:27015","servers":[
             {"address":"127.0.0.1","port":27015,"online":true,"name":"de","map":"de_dust",
              "game":"CS","mode":"","version":"1","players":2,"maxPlayers":32,"bots":0,
              "playerList":[{"name":"a","score":3,"timeSecs":65}],"rules":[{"name":"r","value":"1"}]}]},
            {"id":"gameagent:m:9005","kind":"gameAgent","label":"m:9005","error":"silent","servers":[]}]}}"#;
        let Ok(Incoming::Games(games)) = parse(text) else {
            panic!("not games")
        };
        assert_eq!(games.sources.len(), 2);
        assert_eq!(
            games.sources[0].servers[0].player_list[0].time_secs,
            Some(65)
        );
        assert_eq!(games.sources[1].error.as_deref(), Some("silent"));
        assert!(parse(r#"{"command":"bridgeGameServers","content":{"sources":3}}"#).is_err());
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
