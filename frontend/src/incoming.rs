//! What the bridge sends, parsed leniently: a list is kept even when some of
//! its entries are unreadable (the protocol crate skips those, and accepts
//! `players.current` as a number or a digit string), and unknown messages
//! are ignored rather than treated as errors.

use protocol::{
    bridge::{names as bridge_names, BridgeMessage, ErrorCode, GameServers, MasterState},
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

/// A frame's content once its command is known: read as a plain struct
/// rather than through the tagged enum (`GamesMessage`), whose content may
/// precede its tag and so pulls in serde's buffering for every type in it,
/// a large share of the bundle.
#[derive(Deserialize)]
struct ContentOf<T> {
    content: T,
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

/// One entry of the previous list: where its text lies in that list's
/// text, and what it parsed to (`None`: unreadable, skipped).
struct Cached {
    start: usize,
    len: usize,
    entry: Option<ServerEntry>,
}

impl Cached {
    fn end(&self) -> usize {
        self.start + self.len
    }
}

/// The previous list's text and its entries: a list changes a few entries
/// at a time, so only the text that differs from the previous one needs
/// reading.
#[derive(Default)]
struct LastList {
    text: String,
    entries: Vec<Cached>,
}

thread_local! {
    static LAST_LIST: std::cell::RefCell<LastList> = std::cell::RefCell::default();
}

#[cfg(test)]
thread_local! {
    /// How many lists were read by their changed part only.
    static CHANGED_PART_READS: std::cell::Cell<usize> = const { std::cell::Cell::new(0) };
}

/// The common case, a whole list, parsed straight into typed entries.
/// `None` when the frame is anything else or malformed: the general path
/// then decides (and reports the same errors as before).
fn parse_list_fast(text: &str) -> Option<ServerList> {
    LAST_LIST.with(|cell| {
        let mut last = cell.borrow_mut();
        let entries = match parse_changed_part(&mut last, text) {
            Some(entries) => {
                #[cfg(test)]
                CHANGED_PART_READS.with(|c| c.set(c.get() + 1));
                entries
            }
            None => parse_whole(text)?,
        };
        let servers = entries.iter().filter_map(|c| c.entry.clone()).collect();
        last.text.clear();
        last.text.push_str(text);
        last.entries = entries;
        Some(ServerList { servers })
    })
}

/// Reads the whole frame: the first list, or one whose change is not
/// confined to whole entries (see [`parse_changed_part`]).
fn parse_whole(text: &str) -> Option<Vec<Cached>> {
    let frame: ListFrame<'_> = serde_json::from_str(text).ok()?;
    if frame.command != ms_names::QUERY_REPLY {
        return None;
    }
    let base = text.as_ptr() as usize;
    Some(
        frame
            .content
            .servers
            .iter()
            .map(|r| {
                let slice = r.get();
                Cached {
                    start: slice.as_ptr() as usize - base,
                    len: slice.len(),
                    entry: serde_json::from_str::<ServerEntry>(slice).ok(),
                }
            })
            .collect(),
    )
}

/// Length of the common prefix of `a` and `b`, compared in blocks (which
/// compile to `memcmp`) before bytes.
fn common_prefix(a: &[u8], b: &[u8]) -> usize {
    const BLOCK: usize = 64;
    let max = a.len().min(b.len());
    let mut i = 0;
    while i + BLOCK <= max && a[i..i + BLOCK] == b[i..i + BLOCK] {
        i += BLOCK;
    }
    while i < max && a[i] == b[i] {
        i += 1;
    }
    i
}

/// Length of the common suffix of `a` and `b`.
fn common_suffix(a: &[u8], b: &[u8]) -> usize {
    const BLOCK: usize = 64;
    let max = a.len().min(b.len());
    let (la, lb) = (a.len(), b.len());
    let mut i = 0;
    while i + BLOCK <= max && a[la - i - BLOCK..la - i] == b[lb - i - BLOCK..lb - i] {
        i += BLOCK;
    }
    while i < max && a[la - i - 1] == b[lb - i - 1] {
        i += 1;
    }
    i
}

const JSON_SPACE: [char; 4] = [' ', '\t', '\n', '\r'];

/// Reads only what changed since the previous list: the entries wholly
/// inside the text both lists share at their start and at their end are
/// the previous ones (moved by the length difference), and just the text
/// between them is parsed. Sound because the previous text was a valid
/// list frame: with the same bytes before the changed part, the parser is
/// inside the `servers` array there; if the changed part is complete
/// entries separated by commas, it is there again after it, and the same
/// bytes after it parse as they did before. `None` when the change
/// touches anything but whole entries (the header, the trailer), or the
/// changed part is not entries: the whole frame is read then.
fn parse_changed_part(last: &mut LastList, text: &str) -> Option<Vec<Cached>> {
    let old = last.text.as_bytes();
    let new = text.as_bytes();
    let n = last.entries.len();
    let (first, final_entry) = (last.entries.first()?, last.entries.last()?);
    if old == new {
        return Some(
            last.entries
                .iter_mut()
                .map(|c| Cached {
                    start: c.start,
                    len: c.len,
                    entry: c.entry.take(),
                })
                .collect(),
        );
    }
    let prefix = common_prefix(old, new);
    let suffix = common_suffix(old, new).min(old.len().min(new.len()) - prefix);
    let tail = old.len() - suffix;
    // The frame's header and trailer must be among the shared bytes.
    if prefix < first.start || tail > final_entry.end() {
        return None;
    }
    let i0 = last.entries.partition_point(|c| c.end() <= prefix);
    let j0 = last.entries.partition_point(|c| c.start < tail);
    let shift = |x: usize| (x + new.len()).checked_sub(old.len());
    let from = if i0 > 0 {
        last.entries[i0 - 1].end()
    } else {
        first.start
    };
    let to = match last.entries.get(j0) {
        Some(c) => shift(c.start)?,
        None => shift(final_entry.end())?,
    };
    if to < from {
        return None;
    }
    let middle = text.get(from..to)?;
    // Neighbours on either side are separated from the new entries (or
    // from each other) by commas.
    let (left, right) = (i0 > 0, j0 < n);
    let mut seg = middle.trim_matches(JSON_SPACE);
    if left && right && seg == "," {
        seg = "";
    } else if !seg.is_empty() {
        if left {
            seg = seg.strip_prefix(',')?.trim_matches(JSON_SPACE);
        }
        if right {
            seg = seg.strip_suffix(',')?.trim_matches(JSON_SPACE);
        }
        if seg.is_empty() {
            return None;
        }
    } else if left && right {
        return None;
    }
    // Everything that can fail comes before the cache is taken apart.
    let mut changed = Vec::new();
    if !seg.is_empty() {
        let wrapped = format!("[{seg}]");
        let raw: Vec<&RawValue> = serde_json::from_str(&wrapped).ok()?;
        // Where `wrapped`'s text lies in `text`.
        let offset = seg.as_ptr() as usize - text.as_ptr() as usize;
        let base = wrapped.as_ptr() as usize + 1;
        for r in raw {
            let slice = r.get();
            changed.push(Cached {
                start: slice.as_ptr() as usize - base + offset,
                len: slice.len(),
                entry: serde_json::from_str::<ServerEntry>(slice).ok(),
            });
        }
    }
    let moved = new.len().wrapping_sub(old.len());
    let mut entries = Vec::with_capacity(n + changed.len());
    let mut take = |c: &mut Cached, start: usize| {
        entries.push(Cached {
            start,
            len: c.len,
            entry: c.entry.take(),
        })
    };
    let (before, after) = last.entries.split_at_mut(j0);
    for c in &mut before[..i0] {
        take(c, c.start);
    }
    for c in after {
        // `to` showed the first of these lands inside the new text.
        take(c, c.start.wrapping_add(moved));
    }
    entries.splice(i0..i0, changed);
    Some(entries)
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

    /// A small deterministic generator, so the test needs no dependency
    /// and a failure repeats.
    struct Lcg(u64);

    impl Lcg {
        fn next(&mut self, n: usize) -> usize {
            self.0 = self
                .0
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            ((self.0 >> 33) as usize) % n.max(1)
        }
    }

    fn random_entry(rng: &mut Lcg) -> Value {
        const NAMES: [&str; 8] = [
            "Alpha",
            "x,y]",
            "q\"uote",
            "back\\slash",
            "轰炸机人",
            "{brace}",
            "  ",
            "Zed",
        ];
        let name = format!("{}{}", NAMES[rng.next(NAMES.len())], rng.next(50));
        match rng.next(12) {
            // Unreadable entries, which every path skips.
            0 => serde_json::json!({ "name": name }),
            1 => serde_json::json!(rng.next(9)),
            _ => serde_json::json!({
                "name": name,
                "address": if rng.next(4) == 0 { Value::Null } else { Value::from("h.example") },
                "port": 20000 + rng.next(30),
                "players": { "current": if rng.next(3) == 0 {
                    Value::from(format!("{}", rng.next(5)))
                } else {
                    Value::from(rng.next(5))
                }, "max": 4 },
                "isLobbyOpen": rng.next(2) == 0,
                "gameplayMode": 1 + rng.next(2),
            }),
        }
    }

    fn frame_text(entries: &[Value], style: usize) -> String {
        let content = serde_json::json!({ "servers": entries });
        match style {
            0 => serde_json::json!({ "command": "msRQueryGameServers", "content": content })
                .to_string(),
            1 => serde_json::to_string_pretty(
                &serde_json::json!({ "content": content, "command": "msRQueryGameServers" }),
            )
            .unwrap_or_default(),
            _ => format!(
                r#"{{"command":"msRQueryGameServers","content":{{"more":1, "servers": {} ,"x":[]}}}}"#,
                serde_json::to_string(entries).unwrap_or_default()
            ),
        }
    }

    #[test]
    fn changed_part_parsing_agrees_with_the_general_path() {
        let mut rng = Lcg(7);
        let mut entries: Vec<Value> = (0..20).map(|_| random_entry(&mut rng)).collect();
        let mut style = 0;
        for step in 0..3000 {
            match rng.next(10) {
                0..=2 => {
                    let i = rng.next(entries.len());
                    if let Some(e) = entries.get_mut(i) {
                        *e = random_entry(&mut rng);
                    }
                }
                // Inserts outweigh removals, so the list stays long.
                3 | 9 => {
                    let i = rng.next(entries.len() + 1);
                    entries.insert(i, random_entry(&mut rng));
                }
                4 if !entries.is_empty() => {
                    let i = rng.next(entries.len());
                    entries.remove(i);
                }
                5 if entries.len() > 1 => {
                    let (i, j) = (rng.next(entries.len()), rng.next(entries.len()));
                    entries.swap(i, j);
                }
                6 if rng.next(8) == 0 => {
                    let k = rng.next(3);
                    entries.truncate(entries.len().saturating_sub(k));
                }
                7 if rng.next(20) == 0 => style = rng.next(3),
                8 if rng.next(30) == 0 => entries.clear(),
                _ => {}
            }
            let text = frame_text(&entries, style);
            // Now and then a broken frame or another message in between.
            let noise = match rng.next(25) {
                0 => Some(text.replacen("},{", "},,{", 1)),
                1 => Some(text[..text.len() / 2].to_owned()),
                2 => Some(r#"{"command":"bridgeStatus","content":{"master":"up"}}"#.to_owned()),
                3 => Some(text.replacen("msRQueryGameServers", "msRQueryGameServerz", 1)),
                _ => None,
            };
            for t in noise.iter().chain([&text]) {
                assert_eq!(parse(t), parse_general(t), "step {step}: {t}");
            }
        }
        // Most lists were read by their changed part (not all: a change of
        // the first entry in a frame whose header ends in the same bytes,
        // noise, and the lists after it fall back to the whole frame).
        let partial = CHANGED_PART_READS.with(|c| c.get());
        assert!(
            partial > 2000,
            "only {partial} of 3000 lists read partially"
        );
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
