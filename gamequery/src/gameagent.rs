//! Serious Engine's GameAgent (`docs/protocol.md` §5.2): the master's server
//! list, and a server's status, player and ping replies, as pure decoders.
//! Status and player queries go to the game port + 1.

use std::{
    collections::BTreeMap,
    net::{Ipv4Addr, SocketAddrV4},
};

use serde::{Deserialize, Serialize};

use crate::{cursor::Cursor, error::DecodeError};

/// Asks the master for its list.
pub const MASTER_REQUEST: &[u8] = b"e";
/// Asks a server for its status text.
pub const STATUS_REQUEST: &[u8] = &[0x02];
/// Asks a server for its players.
pub const PLAYERS_REQUEST: &[u8] = &[0x03];
/// Pings a server; it answers 0x04 and its player count.
pub const PING_REQUEST: &[u8] = &[0x04];

const SOH: u8 = 0x01;
const STX: u8 = 0x02;
const ETX: u8 = 0x03;
const EOT: u8 = 0x04;

/// The query port of a server listed with `game_port`.
pub fn query_port(game_port: u16) -> u16 {
    game_port.wrapping_add(1)
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
    /// Every key and value in the order sent (the ones above included).
    pub keys: Vec<(String, String)>,
}

/// Reads a status reply: `0;players;N;maxplayers;N;level;…;sessionname;…`
/// without a NUL. `sessionname` runs to the end of the packet (it may hold
/// `;`).
pub fn decode_status(reply: &[u8]) -> Result<Status, DecodeError> {
    let t = text(reply);
    let (first, mut rest) = t.split_once(';').ok_or(DecodeError::Truncated("status"))?;
    if first != "0" {
        return Err(DecodeError::InvalidField {
            field: "status marker",
            value: first.to_owned(),
        });
    }
    let mut keys = Vec::new();
    while !rest.is_empty() {
        let (key, after) = rest
            .split_once(';')
            .ok_or(DecodeError::Truncated("status value"))?;
        let (value, after) = if key == "sessionname" {
            (after, "")
        } else {
            after.split_once(';').unwrap_or((after, ""))
        };
        keys.push((key.to_owned(), value.to_owned()));
        rest = after;
    }
    let get = |k: &str| {
        keys.iter()
            .find(|(key, _)| key == k)
            .map(|(_, v)| v.clone())
    };
    let number = |k: &'static str| -> Result<u32, DecodeError> {
        let v = get(k).ok_or(DecodeError::Missing(k))?;
        v.parse()
            .map_err(|_| DecodeError::InvalidField { field: k, value: v })
    };
    Ok(Status {
        players: number("players")?,
        max_players: number("maxplayers")?,
        level: get("level").unwrap_or_default(),
        game_type: get("gametype").unwrap_or_default(),
        version: get("version").unwrap_or_default(),
        game_name: get("gamename").unwrap_or_default(),
        session_name: get("sessionname").unwrap_or_default(),
        keys,
    })
}

/// Reads a ping reply: 0x04, then the player count as decimal text.
pub fn decode_ping(reply: &[u8]) -> Result<u32, DecodeError> {
    let mut c = Cursor::new(reply);
    let kind = c.u8("reply type")?;
    if kind != EOT {
        return Err(DecodeError::UnexpectedType {
            expected: "ping (0x04)",
            got: kind,
        });
    }
    let digits = text(c.rest());
    digits.parse().map_err(|_| DecodeError::InvalidField {
        field: "player count",
        value: digits,
    })
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
    announced: Option<u32>,
    ended: bool,
    players: BTreeMap<u32, Player>,
    packets: usize,
}

/// Packets one player reply may span before we call it malformed (1024
/// bytes each; 64 is far beyond any server's player limit).
pub const MAX_PLAYER_PACKETS: usize = 64;

impl PlayersAssembler {
    pub fn new() -> Self {
        Self::default()
    }

    /// Takes one packet. `Ok(Some(players))` once the first and last
    /// packets are in and every announced player arrived.
    pub fn push(&mut self, packet: &[u8]) -> Result<Option<Vec<Player>>, DecodeError> {
        self.packets += 1;
        if self.packets > MAX_PLAYER_PACKETS {
            return Err(DecodeError::TooManyPackets);
        }
        let mut body = packet;
        if let Some(rest) = body.strip_prefix(&[SOH]) {
            if self.announced.is_some() {
                return Err(DecodeError::InvalidField {
                    field: "player reply",
                    value: "two header packets".to_owned(),
                });
            }
            let (key, value, rest) = entry(rest)?;
            if key != b"players" {
                return Err(DecodeError::InvalidField {
                    field: "player reply header",
                    value: text(key),
                });
            }
            self.announced = Some(number(value, "player count")?);
            body = rest;
        }
        if let Some(rest) = body.strip_suffix(&[EOT]) {
            if self.ended {
                return Err(DecodeError::InvalidField {
                    field: "player reply",
                    value: "two final packets".to_owned(),
                });
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
        if !self.players.contains_key(&index) && self.players.len() >= 4096 {
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
                    v => Some(text(v)),
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

    /// The players so far, by index.
    pub fn players(&self) -> Vec<Player> {
        self.players.values().cloned().collect()
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
        .map_err(|_| DecodeError::InvalidField { field, value: t })
}

fn number_i32(v: &[u8], field: &'static str) -> Result<i32, DecodeError> {
    let t = text(v);
    t.trim()
        .parse()
        .map_err(|_| DecodeError::InvalidField { field, value: t })
}

/// Reads a whole player reply from its packets (any order): for tests and
/// fuzzing. A reply whose first or last packet is missing is an error.
pub fn decode_players(packets: &[&[u8]]) -> Result<Vec<Player>, DecodeError> {
    let mut a = PlayersAssembler::new();
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
