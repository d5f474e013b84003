//! The master's messages (`docs/protocol.md` §1): parsing from JSON
//! with the contract's validation, and compact serialization.

use serde::{ser::SerializeStruct, Deserialize, Deserializer, Serialize, Serializer};
use serde_json::Value;
use thiserror::Error;

pub use crate::entry::{Addresses, ServerEntry};
pub use crate::stats::{Players, Stats};
use crate::validate::{Registration, ValidationError};

/// Command names on the wire.
pub mod names {
    pub const REGISTER: &str = "msRegisterGameServer";
    pub const UPDATE_STATS: &str = "msUpdateGameServerStats";
    pub const UNREGISTER: &str = "msUnregisterGameServer";
    pub const QUERY: &str = "msQueryGameServers";
    pub const QUERY_REPLY: &str = "msRQueryGameServers";
}

/// Why a frame's JSON did not yield a message. The master discards such
/// messages silently (and logs this); the bridge maps some to error codes.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
pub enum MessageError {
    #[error("invalid JSON: {0}")]
    InvalidJson(String),
    #[error("the message is not a JSON object")]
    NotAnObject,
    #[error("the message has no string \"command\"")]
    MissingCommand,
    #[error("unknown command {0:?}")]
    UnknownCommand(String),
    #[error("invalid content for {command}: {error}")]
    InvalidContent {
        command: &'static str,
        error: ValidationError,
    },
}

/// A message split into its command name and raw content, before the
/// content is validated. The bridge routes on this without knowing every
/// command's content.
#[derive(Debug, Clone, PartialEq)]
pub struct Envelope {
    pub command: String,
    pub content: Option<Value>,
}

impl Envelope {
    /// Parses JSON text whose root must be an object with a string `command`.
    pub fn parse(json: &[u8]) -> Result<Self, MessageError> {
        let value: Value =
            serde_json::from_slice(json).map_err(|e| MessageError::InvalidJson(e.to_string()))?;
        Self::from_value(value)
    }

    pub fn from_value(value: Value) -> Result<Self, MessageError> {
        let Value::Object(mut obj) = value else {
            return Err(MessageError::NotAnObject);
        };
        let Some(Value::String(command)) = obj.remove("command") else {
            return Err(MessageError::MissingCommand);
        };
        Ok(Self {
            command,
            content: obj.remove("content"),
        })
    }
}

/// The command of a frame that starts with it, among `names`. Every writer
/// in this workspace puts `command` first (`{"command":"NAME",...`), so a
/// reader that knows the commands it wants reads such a frame once, into
/// its typed message, instead of once for its command and again for the
/// rest. The closing quote is part of the match, so a longer name never
/// passes for a shorter one. `None`: none of `names`, or another writer's
/// order; the reader then finds the command the long way ([`Envelope`]).
pub fn leading_command<'n>(text: &str, names: &[&'n str]) -> Option<&'n str> {
    let rest = text.strip_prefix(r#"{"command":""#)?;
    names.iter().copied().find(|name| {
        rest.strip_prefix(name)
            .is_some_and(|after| after.starts_with('"'))
    })
}

/// The content of `msRQueryGameServers`.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct ServerList {
    /// Readers skip entries they cannot read rather than losing the list:
    /// another master may send something this crate would not.
    #[serde(deserialize_with = "lenient_entries", serialize_with = "entries_shown")]
    pub servers: Vec<ServerEntry>,
}

impl ServerList {
    /// The list in an `msRQueryGameServers` message, or `None` when the
    /// message is another one or unreadable: the same answer as
    /// [`Command::parse`] gives, but read straight into the entries. That
    /// path builds a `Value` tree of the whole list and then one per entry,
    /// which a bridge following a remote master paid for every list of
    /// 10,000 servers. A list this strict reading refuses (an entry this
    /// crate cannot read, a repeated key) is read again by
    /// [`Command::parse`], which skips such entries. The text is checked
    /// to be UTF-8 first: serde_json skips unknown fields without checking,
    /// where the `Value` path refuses the whole message.
    ///
    /// One difference remains, on purpose: a field neither reader uses is
    /// only checked for JSON syntax here, so a number there beyond `f64`'s
    /// range (`1e400`) or a `\u` escape of a lone surrogate (grammatical
    /// JSON that a `Value` cannot hold, and [`Command::parse`] refuses)
    /// does not cost the list. Checking them would mean a second full parse.
    pub fn from_reply(json: &[u8]) -> Option<Self> {
        #[derive(Deserialize)]
        struct Reply<'a> {
            #[serde(borrow)]
            command: std::borrow::Cow<'a, str>,
            content: Strict,
        }
        #[derive(Deserialize)]
        struct Strict {
            servers: Vec<ServerEntry>,
        }
        let text = std::str::from_utf8(json).ok()?;
        match serde_json::from_str::<Reply>(text) {
            Ok(reply) if reply.command == names::QUERY_REPLY => Some(Self {
                servers: reply.content.servers,
            }),
            _ => match Command::parse(json) {
                Ok(Command::QueryReply(list)) => Some(list),
                _ => None,
            },
        }
    }
}

/// A master's list is written with its servers' addresses: every client
/// of the master's `msRQueryGameServers` is meant to see them.
fn entries_shown<S: Serializer>(servers: &[ServerEntry], s: S) -> Result<S::Ok, S::Error> {
    s.collect_seq(servers.iter().map(|e| e.view(Addresses::Shown)))
}

fn lenient_entries<'de, D: Deserializer<'de>>(d: D) -> Result<Vec<ServerEntry>, D::Error> {
    let raw = Vec::<Value>::deserialize(d)?;
    Ok(raw
        .into_iter()
        .filter_map(|v| serde_json::from_value(v).ok())
        .collect())
}

/// A master message, validated.
#[derive(Debug, Clone, PartialEq)]
pub enum Command {
    Register(Registration),
    UpdateStats(Stats),
    Unregister,
    Query,
    QueryReply(ServerList),
}

impl Command {
    /// Parses and validates one message's JSON text. Content on commands
    /// that carry none is ignored, as the contract says.
    pub fn parse(json: &[u8]) -> Result<Self, MessageError> {
        Self::from_envelope(Envelope::parse(json)?)
    }

    pub fn from_envelope(env: Envelope) -> Result<Self, MessageError> {
        let invalid =
            |command: &'static str| move |error| MessageError::InvalidContent { command, error };
        let content = |command: &'static str| {
            env.content.as_ref().ok_or(MessageError::InvalidContent {
                command,
                error: ValidationError::Missing("content"),
            })
        };
        match env.command.as_str() {
            names::REGISTER => Registration::from_content(content(names::REGISTER)?)
                .map(Command::Register)
                .map_err(invalid(names::REGISTER)),
            names::UPDATE_STATS => Stats::from_content(content(names::UPDATE_STATS)?)
                .map(Command::UpdateStats)
                .map_err(invalid(names::UPDATE_STATS)),
            names::UNREGISTER => Ok(Command::Unregister),
            names::QUERY => Ok(Command::Query),
            names::QUERY_REPLY => {
                let list =
                    serde_json::from_value(content(names::QUERY_REPLY)?.clone()).map_err(|_| {
                        MessageError::InvalidContent {
                            command: names::QUERY_REPLY,
                            error: ValidationError::WrongType {
                                field: "servers",
                                expected: "a list of servers",
                            },
                        }
                    })?;
                Ok(Command::QueryReply(list))
            }
            _ => Err(MessageError::UnknownCommand(env.command)),
        }
    }

    /// The command's wire name.
    pub fn name(&self) -> &'static str {
        match self {
            Command::Register(_) => names::REGISTER,
            Command::UpdateStats(_) => names::UPDATE_STATS,
            Command::Unregister => names::UNREGISTER,
            Command::Query => names::QUERY,
            Command::QueryReply(_) => names::QUERY_REPLY,
        }
    }

    /// Compact JSON, without `content` for commands that carry none.
    pub fn to_json(&self) -> String {
        // Serializing plain data into a String cannot fail.
        crate::json::to_string(self)
    }
}

impl Serialize for Command {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let has_content = !matches!(self, Command::Unregister | Command::Query);
        let mut st = s.serialize_struct("Command", 1 + usize::from(has_content))?;
        st.serialize_field("command", self.name())?;
        match self {
            Command::Register(r) => st.serialize_field("content", r)?,
            Command::UpdateStats(stats) => st.serialize_field("content", stats)?,
            Command::QueryReply(list) => st.serialize_field("content", list)?,
            Command::Unregister | Command::Query => {}
        }
        st.end()
    }
}

/// Serializes an `msRQueryGameServers` reply straight from borrowed entries,
/// so the master need not clone its registry to answer.
pub fn query_reply_json<'a>(servers: impl IntoIterator<Item = &'a ServerEntry>) -> Vec<u8> {
    query_reply_text(servers, Addresses::Shown).into_bytes()
}

/// [`query_reply_json`] as text, with or without the servers' addresses.
pub fn query_reply_text<'a>(
    servers: impl IntoIterator<Item = &'a ServerEntry>,
    addresses: Addresses,
) -> String {
    struct Servers<I>(std::cell::RefCell<Option<I>>, Addresses);
    impl<'a, I: Iterator<Item = &'a ServerEntry>> Serialize for Servers<I> {
        fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
            let iter = self.0.borrow_mut().take();
            s.collect_seq(iter.into_iter().flatten().map(|e| e.view(self.1)))
        }
    }
    #[derive(Serialize)]
    struct Content<'s, I: Serialize> {
        servers: &'s I,
    }
    #[derive(Serialize)]
    struct Reply<'s, I: Serialize> {
        command: &'static str,
        content: Content<'s, I>,
    }
    let servers = Servers(
        std::cell::RefCell::new(Some(servers.into_iter())),
        addresses,
    );
    let reply = Reply {
        command: names::QUERY_REPLY,
        content: Content { servers: &servers },
    };
    crate::json::to_string(&reply)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::validate::GameplayMode;
    use serde_json::json;

    fn parse(v: Value) -> Result<Command, MessageError> {
        Command::parse(v.to_string().as_bytes())
    }

    /// `ServerList::from_reply` answers as `Command::parse` does.
    #[test]
    fn the_typed_list_reader_agrees_with_command_parse() {
        let entry = |name: &str| {
            json!({"name": name, "address": "192.0.2.1", "port": 20000,
                "players": {"current": 1, "max": 4}, "isLobbyOpen": true, "gameplayMode": 1})
        };
        let reply = |servers: Value| {
            json!({"command": "msRQueryGameServers", "content": {"servers": servers}}).to_string()
        };
        let cases = [
            reply(json!([entry("a"), entry("b")])),
            reply(json!([])),
            // An unreadable entry is skipped, not the list.
            reply(json!([entry("a"), {"name": 7}, entry("c")])),
            // A repeated key: the last one counts.
            r#"{"command":"msRQueryGameServers","content":{"servers":[{"name":"x","name":"y","players":{"current":"2","max":4},"isLobbyOpen":false,"gameplayMode":1}]}}"#.to_owned(),
            r#"{"content":{"servers":[]},"command":"msRQueryGameServers"}"#.to_owned(),
            r#"{"command":"msQueryGameServers","content":{"servers":[]}}"#.to_owned(),
            r#"{"command":"msRQueryGameServers"}"#.to_owned(),
            r#"{"command":"msRQueryGameServers","content":{"servers":{}}}"#.to_owned(),
            "[1,2]".to_owned(),
            "{".to_owned(),
        ];
        for json in cases {
            let expected = match Command::parse(json.as_bytes()) {
                Ok(Command::QueryReply(list)) => Some(list),
                _ => None,
            };
            assert_eq!(ServerList::from_reply(json.as_bytes()), expected, "{json}");
        }
        let skipped = reply(json!([entry("a"), {"name": 7}, entry("c")]));
        let names: Vec<String> = ServerList::from_reply(skipped.as_bytes())
            .unwrap()
            .servers
            .into_iter()
            .map(|s| s.name)
            .collect();
        assert_eq!(names, ["a", "c"]);
    }

    /// Found by fuzzing (target `command`): a byte that is not UTF-8 inside
    /// a field the typed reader skips made it accept a reply that
    /// `Command::parse` refuses as invalid JSON.
    #[test]
    fn the_typed_list_reader_refuses_text_that_is_not_utf8() {
        let mut json =
            br#"{"command":"msRQueryGameServers","content":{"servers":[{"name":"a","extra":"1"#
                .to_vec();
        json.push(0xDF);
        json.extend_from_slice(
            br#"","players":{"current":2,"max":4},"isLobbyOpen":true,"gameplayMode":2}]}}"#,
        );
        assert!(Command::parse(&json).is_err());
        assert_eq!(ServerList::from_reply(&json), None);
    }

    /// Found by fuzzing (target `command`): the one way the two readers
    /// differ. A value in a field neither uses that a `Value` tree cannot
    /// hold makes `Command::parse` refuse the reply; the typed reader,
    /// which only skips it, keeps the list (see `from_reply`).
    #[test]
    fn the_typed_list_reader_skips_values_a_value_tree_cannot_hold() {
        for extra in [
            r#"1e400"#,
            r#"-1233835742471E20040"#,
            r#""\ud800""#,
            r#""\uda11ameServer""#,
            r#"["\udc00"]"#,
        ] {
            let json = format!(
                r#"{{"command":"msRQueryGameServers","content":{{"servers":[{{"name":"a","extra":{extra},"players":{{"current":2,"max":4}},"isLobbyOpen":true,"gameplayMode":2}}]}}}}"#
            );
            assert!(
                matches!(
                    Command::parse(json.as_bytes()),
                    Err(MessageError::InvalidJson(_))
                ),
                "{json}"
            );
            let list = ServerList::from_reply(json.as_bytes()).expect(&json);
            assert_eq!(list.servers.len(), 1);
            assert_eq!(list.servers[0].name, "a");
        }
    }

    #[test]
    fn spec_examples_parse() {
        let c = parse(json!({"command": "msRegisterGameServer", "content": {
            "serverName": "Server von Bösewicht", "serverAddress": "fd40:9dc7:b528::1",
            "serverPort": 30000}}))
        .unwrap();
        let Command::Register(r) = c else { panic!() };
        assert_eq!(r.name.as_str(), "Server von Bösewicht");
        assert_eq!(r.port.get(), 30000);

        let c = parse(json!({"command": "msUpdateGameServerStats", "content": {
            "players": {"current": 2, "max": 4}, "isLobbyOpen": true, "gameplayMode": 2}}))
        .unwrap();
        assert_eq!(
            c,
            Command::UpdateStats(Stats {
                players: Players { current: 2, max: 4 },
                is_lobby_open: true,
                gameplay_mode: GameplayMode::StandardAB
            })
        );
        assert_eq!(
            parse(json!({"command": "msUnregisterGameServer"})),
            Ok(Command::Unregister)
        );
        assert_eq!(
            parse(json!({"command": "msQueryGameServers"})),
            Ok(Command::Query)
        );
    }

    #[test]
    fn content_on_contentless_commands_is_ignored() {
        assert_eq!(
            parse(json!({"command": "msQueryGameServers", "content": {"x": 1}})),
            Ok(Command::Query)
        );
        assert_eq!(
            parse(json!({"command": "msUnregisterGameServer", "content": []})),
            Ok(Command::Unregister)
        );
    }

    #[test]
    fn envelope_errors() {
        assert!(matches!(
            Command::parse(b"{nope"),
            Err(MessageError::InvalidJson(_))
        ));
        assert_eq!(Command::parse(b"[1,2]"), Err(MessageError::NotAnObject));
        assert_eq!(Command::parse(b"\"x\""), Err(MessageError::NotAnObject));
        assert_eq!(Command::parse(b"{}"), Err(MessageError::MissingCommand));
        assert_eq!(
            Command::parse(br#"{"command":7}"#),
            Err(MessageError::MissingCommand)
        );
        assert_eq!(
            Command::parse(br#"{"command":"msFly"}"#),
            Err(MessageError::UnknownCommand("msFly".into()))
        );
        assert!(matches!(
            Command::parse(br#"{"command":"msRegisterGameServer"}"#),
            Err(MessageError::InvalidContent {
                error: ValidationError::Missing("content"),
                ..
            })
        ));
    }

    #[test]
    fn stats_rules() {
        let stats = |v: Value| Stats::from_content(&v);
        let ok =
            json!({"players": {"current": "3", "max": 3}, "isLobbyOpen": false, "gameplayMode": 1});
        assert_eq!(stats(ok).unwrap().players.current, 3);
        let missing_mode = json!({"players": {"current": 1, "max": 3}, "isLobbyOpen": false});
        assert_eq!(
            stats(missing_mode),
            Err(ValidationError::Missing("gameplayMode"))
        );
        let missing_lobby = json!({"players": {"current": 1, "max": 3}, "gameplayMode": 1});
        assert_eq!(
            stats(missing_lobby),
            Err(ValidationError::Missing("isLobbyOpen"))
        );
        let missing_players = json!({"isLobbyOpen": true, "gameplayMode": 1});
        assert_eq!(
            stats(missing_players),
            Err(ValidationError::Missing("players"))
        );
        let missing_max =
            json!({"players": {"current": 1}, "isLobbyOpen": true, "gameplayMode": 1});
        assert_eq!(
            stats(missing_max),
            Err(ValidationError::Missing("players.max"))
        );
        for (max, ok) in [(1, false), (2, true), (3, true), (4, true), (5, false)] {
            let v = json!({"players": {"current": 0, "max": max}, "isLobbyOpen": true, "gameplayMode": 1});
            assert_eq!(stats(v).is_ok(), ok, "max {max}");
        }
        for (mode, ok) in [(0, false), (1, true), (2, true), (3, false)] {
            let v = json!({"players": {"current": 0, "max": 2}, "isLobbyOpen": true, "gameplayMode": mode});
            assert_eq!(stats(v).is_ok(), ok, "mode {mode}");
        }
        let lobby_str =
            json!({"players": {"current": 0, "max": 2}, "isLobbyOpen": "true", "gameplayMode": 1});
        assert!(stats(lobby_str).is_err());
        let mode_str =
            json!({"players": {"current": 0, "max": 2}, "isLobbyOpen": true, "gameplayMode": "1"});
        assert_eq!(stats(mode_str), Err(ValidationError::GameplayMode));
    }

    #[test]
    fn serialization_matches_the_contract_example() {
        let entry = ServerEntry {
            registrant: None,
            name: "Feuerland".into(),
            address: Some("192.168.0.10".into()),
            port: Some(20000),
            stats: Stats {
                players: Players { current: 2, max: 4 },
                is_lobby_open: true,
                gameplay_mode: GameplayMode::StandardAB,
            },
        };
        let json = query_reply_json([&entry]);
        let expected = r#"{"command":"msRQueryGameServers","content":{"servers":[{"name":"Feuerland","address":"192.168.0.10","port":20000,"players":{"current":2,"max":4},"isLobbyOpen":true,"gameplayMode":2}]}}"#;
        assert_eq!(String::from_utf8(json).unwrap(), expected);
        assert_eq!(expected.len() + 1, 185);
        let owned = Command::QueryReply(ServerList {
            servers: vec![entry],
        });
        assert_eq!(owned.to_json(), expected);
        assert_eq!(
            String::from_utf8(query_reply_json([])).unwrap(),
            r#"{"command":"msRQueryGameServers","content":{"servers":[]}}"#
        );
        assert_eq!(
            Command::Query.to_json(),
            r#"{"command":"msQueryGameServers"}"#
        );
        assert_eq!(
            Command::Unregister.to_json(),
            r#"{"command":"msUnregisterGameServer"}"#
        );
        let reg = Command::Register(Registration::new("Feuerland", "192.168.0.10", 20000).unwrap());
        assert_eq!(reg.to_json().len() + 1, 122);
        let upd = Command::UpdateStats(Stats {
            players: Players { current: 2, max: 4 },
            is_lobby_open: true,
            gameplay_mode: GameplayMode::StandardAB,
        });
        assert_eq!(upd.to_json().len() + 1, 118);
    }

    #[test]
    fn reader_accepts_spec_reply_with_string_counts() {
        let spec = r#"{"command":"msRQueryGameServers","content":{"servers":[
            {"name":"轰炸机人","address":"bombergame.example.org","port":40000,
             "players":{"current":"22","max":4},"isLobbyOpen":false,"gameplayMode":2},
            {"name":"Server von Bösewicht","address":"fd40:9dc7:b528::1","port":30000,
             "players":{"current":"3","max":3},"isLobbyOpen":false,"gameplayMode":1},
            {"name":"broken","players":"x"},
            {"name":"Hidden","players":{"current":1,"max":4},"isLobbyOpen":true,"gameplayMode":1}]}}"#;
        let Command::QueryReply(list) = Command::parse(spec.as_bytes()).unwrap() else {
            panic!()
        };
        let names: Vec<_> = list.servers.iter().map(|s| s.name.as_str()).collect();
        assert_eq!(names, ["轰炸机人", "Server von Bösewicht", "Hidden"]);
        assert_eq!(list.servers[0].stats.players.current, 22);
        assert_eq!(list.servers[2].address, None);
        // Hidden addresses stay hidden when written again.
        let json = serde_json::to_string(&list.servers[2].view(Addresses::Shown)).unwrap();
        assert!(
            !json.contains("address") && !json.contains("port"),
            "{json}"
        );
    }

    #[test]
    fn a_leading_command_is_found_whole_and_only_in_front() {
        let names = ["bridgeDelta", "bridgeSnapshot"];
        let delta = r#"{"command":"bridgeDelta","content":{}}"#;
        assert_eq!(leading_command(delta, &names), Some("bridgeDelta"));
        // A longer name is not a shorter one, nor one not asked for.
        let longer = r#"{"command":"bridgeDeltaX","content":{}}"#;
        assert_eq!(leading_command(longer, &names), None);
        assert_eq!(
            leading_command(longer, &["bridgeDeltaX"]),
            Some("bridgeDeltaX")
        );
        // Another writer's order or spacing: the long way.
        for other in [
            r#"{"content":{},"command":"bridgeDelta"}"#,
            r#"{ "command": "bridgeDelta", "content": {} }"#,
            "",
        ] {
            assert_eq!(leading_command(other, &names), None, "{other}");
        }
    }
}
