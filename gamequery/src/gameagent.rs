//! Serious Engine's GameAgent (`docs/protocol.md` §5.2): the master's server
//! list, and a server's status, player and ping replies, as pure decoders.
//! Status and player queries go to the game port + 1.

use std::{
    collections::BTreeMap,
    net::{Ipv4Addr, SocketAddrV4},
};

use serde::{Deserialize, Serialize};

use crate::{
    cursor::Cursor,
    error::DecodeError,
    limits::{best_scoring, clean_text, Limits},
};

/// Asks the master for its list.
pub const MASTER_REQUEST: &[u8] = b"e";
/// Asks a server for its status text.
pub const STATUS_REQUEST: &[u8] = &[0x02];
/// Asks a server for its players.
pub const PLAYERS_REQUEST: &[u8] = &[0x03];
/// Pings a server; it answers 0x04 and its player count.
pub const PING_REQUEST: &[u8] = &[0x04];

/// Longest status, player or ping packet a server may send: the engine
/// sends a player packet once the next entry would pass 2048 bytes
/// (`GameAgent.cpp`). A longer one is refused, not cut.
pub const MAX_PACKET: usize = 2048;

const SOH: u8 = 0x01;
const STX: u8 = 0x02;
const ETX: u8 = 0x03;
const EOT: u8 = 0x04;

/// The query port of a server listed with `game_port`.
pub fn query_port(game_port: u16) -> u16 {
    game_port.wrapping_add(1)
}

/// Refuses a packet longer than [`MAX_PACKET`].
fn check_size(packet: &[u8]) -> Result<(), DecodeError> {
    if packet.len() > MAX_PACKET {
        return Err(DecodeError::PacketTooLarge(MAX_PACKET));
    }
    Ok(())
}

/// Text from the engine: UTF-8 when it is, else Latin-1 (byte = char).
fn text(bytes: &[u8]) -> String {
    match std::str::from_utf8(bytes) {
        Ok(s) => s.to_owned(),
        Err(_) => bytes.iter().map(|&b| char::from(b)).collect(),
    }
}

/// Reads the master's list reply: `'s'`, then 6-byte records (IPv4, then
/// the game port as a little-endian u16). The addresses carry the game
/// port; query [`query_port`].
pub fn decode_master_list(reply: &[u8]) -> Result<Vec<SocketAddrV4>, DecodeError> {
    let mut c = Cursor::new(reply);
    let kind = c.u8("reply type")?;
    if kind != b's' {
        return Err(DecodeError::UnexpectedType {
            expected: "server list ('s')",
            got: kind,
        });
    }
    if !c.remaining().is_multiple_of(6) {
        return Err(DecodeError::TrailingBytes(c.remaining() % 6));
    }
    let mut out = Vec::with_capacity(c.remaining() / 6);
    while !c.is_empty() {
        let ip = c.take(4, "server address")?;
        let port = c.u16("server port")?;
        let ip = Ipv4Addr::new(
            ip.first().copied().unwrap_or_default(),
            ip.get(1).copied().unwrap_or_default(),
            ip.get(2).copied().unwrap_or_default(),
            ip.get(3).copied().unwrap_or_default(),
        );
        out.push(SocketAddrV4::new(ip, port));
    }
    Ok(out)
}

/// A server's status reply.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Status {
    pub players: u32,
    pub max_players: u32,
    pub level: String,
    /// Game mode ("Fragmatch", "Cooperative").
    pub game_type: String,
    pub version: String,
    /// The game (`serioussamse`).
    pub game_name: String,
    /// The server's name.
    pub session_name: String,
    /// The keys and values in the order sent (the ones above included; at
    /// most [`Limits::rules`] of them).
    pub keys: Vec<(String, String)>,
}

/// Reads a status reply under [`Limits::DEFAULT`]:
/// `0;players;N;maxplayers;N;level;…;sessionname;…` without a NUL, at most
/// [`MAX_PACKET`] bytes. `sessionname` runs to the end of the packet (it
/// may hold `;`).
pub fn decode_status(reply: &[u8]) -> Result<Status, DecodeError> {
    decode_status_with(reply, &Limits::DEFAULT)
}

/// [`decode_status`] keeping what `limits` allow: the named fields cut to
/// `text_chars`, and the first `rules` keys (names and values cut to
/// `rule_name_chars` and `rule_value_chars`); all text cleaned. The named
/// fields are found among all keys, kept or not.
pub fn decode_status_with(reply: &[u8], limits: &Limits) -> Result<Status, DecodeError> {
    check_size(reply)?;
    let t = text(reply);
    let (first, mut rest) = t.split_once(';').ok_or(DecodeError::Truncated("status"))?;
    if first != "0" {
        return Err(DecodeError::invalid("status marker", first));
    }
    let mut keys: Vec<(&str, &str)> = Vec::new();
    while !rest.is_empty() {
        let (key, after) = rest
            .split_once(';')
            .ok_or(DecodeError::Truncated("status value"))?;
        let (value, after) = if key == "sessionname" {
            (after, "")
        } else {
            after.split_once(';').unwrap_or((after, ""))
        };
        keys.push((key, value));
        rest = after;
    }
    let get = |k: &str| keys.iter().find(|(key, _)| *key == k).map(|(_, v)| *v);
    let field = |k: &str| clean_text(get(k).unwrap_or_default(), limits.text_chars);
    let number = |k: &'static str| -> Result<u32, DecodeError> {
        let v = get(k).ok_or(DecodeError::Missing(k))?;
        v.parse().map_err(|_| DecodeError::invalid(k, v))
    };
    Ok(Status {
        players: number("players")?,
        max_players: number("maxplayers")?,
        level: field("level"),
        game_type: field("gametype"),
        version: field("version"),
        game_name: field("gamename"),
        session_name: field("sessionname"),
        keys: keys
            .iter()
            .take(limits.rules)
            .map(|(k, v)| {
                (
                    clean_text(k, limits.rule_name_chars),
                    clean_text(v, limits.rule_value_chars),
                )
            })
            .collect(),
    })
}

/// Reads a ping reply: 0x04, then the player count as decimal text.
pub fn decode_ping(reply: &[u8]) -> Result<u32, DecodeError> {
    check_size(reply)?;
    let mut c = Cursor::new(reply);
    let kind = c.u8("reply type")?;
    if kind != EOT {
        return Err(DecodeError::UnexpectedType {
            expected: "ping (0x04)",
            got: kind,
        });
    }
    let digits = text(c.rest());
    digits
        .parse()
        .map_err(|_| DecodeError::invalid("player count", &digits))
}

/// One player of a player reply.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Player {
    /// The server's player index (not a counter).
    pub index: u32,
    /// `None` when the server marked the name invalid (0x11 or 0x12).
    pub name: Option<String>,
    pub frags: i32,
    pub ping: u32,
}

/// Collects the packets of one player reply: the first starts with
/// `\x01players\x02N\x03`, the last ends with `\x04`, the ones between have
/// neither. They may arrive in any order; entries are keyed by index.
#[derive(Debug, Clone, Default)]
pub struct PlayersAssembler {
    limits: Limits,
    announced: Option<u32>,
    ended: bool,
    players: BTreeMap<u32, Player>,
    packets: usize,
}

/// Packets one player reply may span before we call it malformed (at most
/// [`MAX_PACKET`] bytes each; 16 is far beyond the 16 players a Serious
/// Engine 1 server takes, which fit one packet).
pub const MAX_PLAYER_PACKETS: usize = 16;

/// Distinct player indices one reply may name before we call it malformed
/// (more than [`MAX_PLAYER_PACKETS`] packets of the shortest entries hold).
const MAX_PLAYER_ENTRIES: usize = 4096;

impl PlayersAssembler {
    /// An assembler under [`Limits::DEFAULT`].
    pub fn new() -> Self {
        Self::default()
    }

    /// An assembler keeping what `limits` allow: names cut to `text_chars`
    /// and cleaned; [`PlayersAssembler::players`] gives the best-scoring
    /// `players`.
    pub fn with_limits(limits: Limits) -> Self {
        Self {
            limits,
            ..Self::default()
        }
    }

    /// Takes one packet (at most [`MAX_PACKET`] bytes, at most
    /// [`MAX_PLAYER_PACKETS`] of them). `Ok(Some(players))` once the first
    /// and last packets are in and every announced player arrived.
    pub fn push(&mut self, packet: &[u8]) -> Result<Option<Vec<Player>>, DecodeError> {
        check_size(packet)?;
        self.packets += 1;
        if self.packets > MAX_PLAYER_PACKETS {
            return Err(DecodeError::TooManyPackets);
        }
        let mut body = packet;
        if let Some(rest) = body.strip_prefix(&[SOH]) {
            if self.announced.is_some() {
                return Err(DecodeError::invalid("player reply", "two header packets"));
            }
            let (key, value, rest) = entry(rest)?;
            if key != b"players" {
                return Err(DecodeError::invalid("player reply header", &text(key)));
            }
            self.announced = Some(number(value, "player count")?);
            body = rest;
        }
        if let Some(rest) = body.strip_suffix(&[EOT]) {
            if self.ended {
                return Err(DecodeError::invalid("player reply", "two final packets"));
            }
            self.ended = true;
            body = rest;
        }
        while !body.is_empty() {
            let (key, value, rest) = entry(body)?;
            body = rest;
            self.apply(key, value)?;
        }
        Ok(self.is_complete().then(|| self.players()))
    }

    fn apply(&mut self, key: &[u8], value: &[u8]) -> Result<(), DecodeError> {
        let key = text(key);
        let Some((field, index)) = key.rsplit_once('_') else {
            return Ok(());
        };
        let Ok(index) = index.parse::<u32>() else {
            return Ok(());
        };
        if !self.players.contains_key(&index) && self.players.len() >= MAX_PLAYER_ENTRIES {
            return Err(DecodeError::TooManyPackets);
        }
        let p = self.players.entry(index).or_insert(Player {
            index,
            name: None,
            frags: 0,
            ping: 0,
        });
        match field {
            "player" => {
                p.name = match value {
                    [0x11] | [0x12] => None,
                    v => Some(clean_text(&text(v), self.limits.text_chars)),
                }
            }
            "frags" => p.frags = number_i32(value, "frags")?,
            "ping" => p.ping = number(value, "ping")?,
            _ => {}
        }
        Ok(())
    }

    /// The first and last packets are in, and the players announced.
    pub fn is_complete(&self) -> bool {
        self.has_ends()
            && self
                .announced
                .is_some_and(|n| self.players.len() >= n as usize)
    }

    /// The first and last packets are in (players may still be missing: a
    /// packet between them lost or late, or inactive players the count
    /// includes but the list does not).
    pub fn has_ends(&self) -> bool {
        self.announced.is_some() && self.ended
    }

    /// The players so far, by index; of more than the limit, the
    /// best-scoring (most frags; the lower index among equals).
    pub fn players(&self) -> Vec<Player> {
        best_scoring(
            self.players.values().cloned().collect(),
            self.limits.players,
            |p| i64::from(p.frags),
        )
    }
}

/// One entry's key and value, and the bytes after it.
type Entry<'a> = (&'a [u8], &'a [u8], &'a [u8]);

/// `key \x02 value \x03`, and what follows.
fn entry(b: &[u8]) -> Result<Entry<'_>, DecodeError> {
    let stx = b
        .iter()
        .position(|&x| x == STX)
        .ok_or(DecodeError::Truncated("player entry key"))?;
    let (key, rest) = b.split_at(stx);
    let rest = rest.get(1..).unwrap_or_default();
    let etx = rest
        .iter()
        .position(|&x| x == ETX)
        .ok_or(DecodeError::Truncated("player entry value"))?;
    let (value, rest) = rest.split_at(etx);
    Ok((key, value, rest.get(1..).unwrap_or_default()))
}

fn number(v: &[u8], field: &'static str) -> Result<u32, DecodeError> {
    let t = text(v);
    t.trim()
        .parse()
        .map_err(|_| DecodeError::invalid(field, &t))
}

fn number_i32(v: &[u8], field: &'static str) -> Result<i32, DecodeError> {
    let t = text(v);
    t.trim()
        .parse()
        .map_err(|_| DecodeError::invalid(field, &t))
}

/// Reads a whole player reply from its packets (any order) under
/// [`Limits::DEFAULT`]: for tests and fuzzing. A reply whose first or last
/// packet is missing is an error.
pub fn decode_players(packets: &[&[u8]]) -> Result<Vec<Player>, DecodeError> {
    decode_players_with(packets, &Limits::DEFAULT)
}

/// [`decode_players`] keeping what `limits` allow (see
/// [`PlayersAssembler::with_limits`]).
pub fn decode_players_with(packets: &[&[u8]], limits: &Limits) -> Result<Vec<Player>, DecodeError> {
    let mut a = PlayersAssembler::with_limits(*limits);
    for p in packets {
        if let Some(players) = a.push(p)? {
            return Ok(players);
        }
    }
    if a.has_ends() {
        Ok(a.players())
    } else {
        Err(DecodeError::Missing("first or last player packet"))
    }
}

/// Builds a master's list reply (for tests and fake servers): `'s'`, then
/// each server's IPv4 address and game port, as [`decode_master_list`]
/// reads it.
pub fn encode_master_list(servers: &[SocketAddrV4]) -> Vec<u8> {
    let mut out = Vec::with_capacity(1 + 6 * servers.len());
    out.push(b's');
    for s in servers {
        out.extend_from_slice(&s.ip().octets());
        out.extend_from_slice(&s.port().to_le_bytes());
    }
    out
}

/// Builds a status reply as the engine does (for tests and fake servers).
pub fn encode_status(s: &Status) -> Vec<u8> {
    format!(
        "0;players;{};maxplayers;{};level;{};gametype;{};version;{};gamename;{};sessionname;{}",
        s.players, s.max_players, s.level, s.game_type, s.version, s.game_name, s.session_name
    )
    .into_bytes()
}

/// Builds player reply packets as the engine does, starting a new packet
/// when one would pass `limit` bytes (for tests and fake servers).
pub fn encode_players(count: u32, players: &[Player], limit: usize) -> Vec<Vec<u8>> {
    let mut packets = Vec::new();
    let mut cur = format!("\x01players\x02{count}\x03").into_bytes();
    for p in players {
        let mut e = format!("player_{}\x02", p.index).into_bytes();
        match &p.name {
            Some(n) => e.extend_from_slice(n.as_bytes()),
            None => e.push(0x11),
        }
        e.extend_from_slice(
            format!(
                "\x03frags_{0}\x02{1}\x03ping_{0}\x02{2}\x03",
                p.index, p.frags, p.ping
            )
            .as_bytes(),
        );
        if cur.len() + e.len() > limit {
            packets.push(std::mem::take(&mut cur));
        }
        cur.extend_from_slice(&e);
    }
    cur.push(EOT);
    packets.push(cur);
    packets
}
