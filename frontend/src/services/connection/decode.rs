//! What the bridge sends, parsed leniently: a whole list is kept even when
//! some of its entries are unreadable (the protocol crate skips those, and
//! accepts `players.current` as a number or a digit string), and unknown
//! messages are ignored rather than treated as errors. Snapshots and deltas
//! (`docs/protocol.md` §3) are read strictly: the bridge writes them,
//! and one it cannot vouch for makes the page subscribe again.

use protocol::{
    bridge::{names as bridge_names, BridgeMessage, ErrorCode, GameServers, MasterState},
    delta::{Delta, DeltaMessage, Snapshot},
    message::{leading_command, names as ms_names, Envelope},
    MessageError, ServerEntry, ServerList,
};
use serde::Deserialize;
use serde_json::{value::RawValue, Value};

use crate::services::metrics;

/// A lobby list as the bridge sent it, for the page's list
/// (`list::store`), which applies it.
#[derive(Debug, Clone, PartialEq)]
pub enum ListMessage {
    /// A whole list without ids (`msRQueryGameServers`: polling answers,
    /// bridges without deltas).
    Whole(Vec<ServerEntry>),
    /// The whole list with the bridge's ids.
    Snapshot(Snapshot),
    /// What changed since the list `prev`.
    Delta(Delta),
}

impl ListMessage {
    /// Which kind the page's metrics count it as.
    pub fn kind(&self) -> metrics::Kind {
        match self {
            ListMessage::Whole(_) => metrics::Kind::List,
            ListMessage::Snapshot(_) => metrics::Kind::Snapshot,
            ListMessage::Delta(_) => metrics::Kind::Delta,
        }
    }
}

/// A message from the bridge that the front end acts on.
#[derive(Debug, Clone, PartialEq)]
pub enum Incoming {
    /// The list: `msRQueryGameServers` (the whole list, from polling
    /// answers and bridges without deltas), `bridgeSnapshot` or
    /// `bridgeDelta`, read into the one type the page's list takes.
    List(ListMessage),
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

/// A frame's content once its command is known: read as a plain struct
/// rather than through the tagged enum (`GamesMessage`), whose content may
/// precede its tag and so pulls in serde's buffering for every type in it,
/// a large share of the bundle.
#[derive(Deserialize)]
struct ContentOf<T> {
    content: T,
}

/// A whole list read in one pass over the text, each entry on its own so
/// an unreadable one is skipped. `None` when the frame is not that shape:
/// the general path then reports the error.
fn parse_list(text: &str) -> Option<ServerList> {
    let frame: ContentOf<RawList<'_>> = serde_json::from_str(text).ok()?;
    let servers = frame
        .content
        .servers
        .iter()
        .filter_map(|r| serde_json::from_str::<ServerEntry>(r.get()).ok())
        .collect();
    Some(ServerList { servers })
}

/// The commands read straight into their typed messages: big frames.
const LIST_COMMANDS: [&str; 3] = [
    ms_names::QUERY_REPLY,
    bridge_names::DELTA,
    bridge_names::SNAPSHOT,
];

/// Reads a frame whose command is known to be a list, a snapshot or a delta.
fn parse_list_frame(command: &str, text: &str) -> Result<Incoming, MessageError> {
    if command == ms_names::QUERY_REPLY {
        return parse_list(text)
            .map(|list| Incoming::List(ListMessage::Whole(list.servers)))
            .ok_or_else(|| {
                MessageError::InvalidJson("msRQueryGameServers without a list of servers".into())
            });
    }
    match DeltaMessage::from_frame(command, text) {
        Some(Ok(DeltaMessage::Snapshot(s))) => Ok(Incoming::List(ListMessage::Snapshot(s))),
        Some(Ok(DeltaMessage::Delta(d))) => Ok(Incoming::List(ListMessage::Delta(d))),
        Some(Err(e)) => Err(MessageError::InvalidJson(e.to_string())),
        None => Ok(Incoming::Other(command.to_owned())),
    }
}

/// Parses one WebSocket text frame.
pub fn parse(text: &str) -> Result<Incoming, MessageError> {
    match leading_command(text, &LIST_COMMANDS) {
        Some(command) => parse_list_frame(command, text),
        None => parse_general(text),
    }
}

/// Every message, through the protocol crate's `Value`-based envelope.
fn parse_general(text: &str) -> Result<Incoming, MessageError> {
    let env = Envelope::parse(text.as_bytes())?;
    match env.command.as_str() {
        // Another writer's order (content first, spaces): read again, typed.
        command @ (ms_names::QUERY_REPLY | bridge_names::SNAPSHOT | bridge_names::DELTA) => {
            parse_list_frame(command, text)
        }
        bridge_names::GAME_SERVERS => match serde_json::from_str::<ContentOf<GameServers>>(text) {
            Ok(frame) => Ok(Incoming::Games(frame.content)),
            Err(e) => Err(MessageError::InvalidJson(e.to_string())),
        },
        // The bridge's own messages are read from the text, as plain
        // structs (see `BridgeMessage::from_frame`).
        command => match BridgeMessage::from_frame(command, text) {
            Some(Ok(BridgeMessage::AuthResult { ok })) => Ok(Incoming::AuthResult(ok)),
            Some(Ok(BridgeMessage::Status { master })) => Ok(Incoming::Master(master)),
            Some(Ok(BridgeMessage::Error { code, message })) => Ok(Incoming::Error {
                code: Some(code),
                message,
            }),
            Some(Err(_)) if command == bridge_names::ERROR => Ok(Incoming::Error {
                code: None,
                message: env
                    .content
                    .as_ref()
                    .and_then(|c| c.get("message"))
                    .and_then(Value::as_str)
                    .unwrap_or("the bridge refused a message")
                    .to_owned(),
            }),
            Some(Err(e)) => Err(MessageError::InvalidJson(e.to_string())),
            None => Ok(Incoming::Other(env.command)),
        },
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
        let Ok(Incoming::List(ListMessage::Whole(servers))) = parse(text) else {
            panic!("not a list")
        };
        assert_eq!(servers.len(), 2);
        assert_eq!(servers[0].stats.players.current, 22);
        assert_eq!(servers[1].address, None);
    }

    #[test]
    fn whole_lists_skip_unreadable_entries() {
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
            let list = parse_list(text).expect("a list");
            assert_eq!(
                parse(text),
                Ok(Incoming::List(ListMessage::Whole(list.servers)))
            );
        }
        let Some(list) = parse_list(texts[0]) else {
            unreachable!()
        };
        let names: Vec<&str> = list.servers.iter().map(|e| e.name.as_str()).collect();
        assert_eq!(names, ["x\"y", "d"]);
        assert_eq!(list.servers[1].stats.players.current, 7);
        for text in [
            r#"{"command":"msRQueryGameServers"}"#,
            r#"{"command":"msRQueryGameServers","content":null}"#,
            r#"{"command":"msRQueryGameServers","content":{"servers":3}}"#,
            r#"{"command":"msRQueryGameServers","content":{"servers":[]}} x"#,
        ] {
            assert!(parse(text).is_err(), "{text}");
        }
    }

    #[test]
    fn snapshots_and_deltas() {
        let snapshot = r#"{"command":"bridgeSnapshot","content":{"epoch":"e1","seq":3,"servers":[
            {"id":7,"name":"Feuerland","address":"192.0.2.1","port":20000,
             "players":{"current":"2","max":4},"isLobbyOpen":true,"gameplayMode":1}]}}"#;
        let Ok(Incoming::List(ListMessage::Snapshot(s))) = parse(snapshot) else {
            panic!("not a snapshot")
        };
        assert_eq!((s.epoch.as_str(), s.seq, s.servers.len()), ("e1", 3, 1));
        assert_eq!(s.servers[0].id, 7);
        assert_eq!(s.servers[0].entry.stats.players.current, 2);
        let delta = r#"{"content":{"epoch":"e1","seq":4,"prev":3,"upsert":[],"remove":[7]},"command":"bridgeDelta"}"#;
        let Ok(Incoming::List(ListMessage::Delta(d))) = parse(delta) else {
            panic!("not a delta")
        };
        assert_eq!((d.seq, d.prev, d.remove), (4, 3, vec![7]));
        // Strict: a delta the page cannot read is an error, not a guess.
        for bad in [
            r#"{"command":"bridgeDelta","content":{"epoch":"e1","seq":4}}"#,
            r#"{"command":"bridgeDelta","content":{"epoch":"e1","seq":4,"prev":3,"upsert":[{"id":1}],"remove":[]}}"#,
            r#"{"command":"bridgeSnapshot","content":{"epoch":1,"seq":4,"servers":[]}}"#,
        ] {
            assert!(parse(bad).is_err(), "{bad}");
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
        // A longer name is not the shorter one it starts with.
        assert_eq!(
            parse(r#"{"command":"bridgeDeltas","content":{"seq":1}}"#),
            Ok(Incoming::Other("bridgeDeltas".into()))
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
