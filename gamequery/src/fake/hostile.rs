//! Hostile servers: replies as large as the decoders accept (GameAgent
//! packets of [`gameagent::MAX_PACKET`] bytes, as many as one reply may
//! have; A2S replies with every count at its maximum and a bzip2 bomb of
//! rules up to [`packet::MAX_DECOMPRESSED`]), all text made of
//! [`HOSTILE_BYTE`], which JSON writes as six bytes. What a stranger's
//! server can do to whoever shows its replies to many viewers.

use std::{io, net::SocketAddr, net::SocketAddrV4};

use super::{gameagent::game_addr, FakeUdp};
use crate::{
    a2s,
    gameagent::{self, MAX_PACKET, MAX_PLAYER_PACKETS},
    packet::{self, SplitLayout},
};

/// What hostile text is made of: a control character JSON writes as
/// `\u001f`, six bytes per byte received.
pub const HOSTILE_BYTE: u8 = 0x1F;

fn hostile(n: usize) -> Vec<u8> {
    vec![HOSTILE_BYTE; n]
}

/// A GameAgent status reply of exactly [`MAX_PACKET`] bytes: the named
/// fields 100 bytes each, 150 extra keys, the session name filling the rest;
/// all text [`HOSTILE_BYTE`]. It claims 64 of 64 players.
pub fn gameagent_status() -> Vec<u8> {
    let mut out = b"0;players;64;maxplayers;64".to_vec();
    for key in ["level", "gametype", "version", "gamename"] {
        out.push(b';');
        out.extend_from_slice(key.as_bytes());
        out.push(b';');
        out.extend_from_slice(&hostile(100));
    }
    for _ in 0..150 {
        out.push(b';');
        out.extend_from_slice(&hostile(3));
        out.push(b';');
        out.extend_from_slice(&hostile(3));
    }
    out.extend_from_slice(b";sessionname;");
    let rest = MAX_PACKET.saturating_sub(out.len());
    out.extend_from_slice(&hostile(rest));
    out
}

/// A GameAgent player reply of `packets` packets of at most [`MAX_PACKET`]
/// bytes (the first with the header, the last with the end mark), full of
/// players named with 100 [`HOSTILE_BYTE`]s, player `i` with `i` frags; the
/// header announces exactly the players sent, so the reply is complete.
pub fn gameagent_players(packets: usize) -> Vec<Vec<u8>> {
    let entry = |i: usize| {
        let mut e = format!("player_{i}\x02").into_bytes();
        e.extend_from_slice(&hostile(100));
        e.extend_from_slice(format!("\x03frags_{i}\x02{i}\x03ping_{i}\x02{i}\x03").as_bytes());
        e
    };
    // Room for the header (with a count of up to 5 digits) and the end mark.
    let header_room = "\x01players\x02\x03".len() + 5;
    let mut bodies: Vec<Vec<u8>> = Vec::new();
    let mut players = 0;
    for n in 0..packets.max(1) {
        let mut room = MAX_PACKET;
        if n == 0 {
            room -= header_room;
        }
        if n + 1 == packets.max(1) {
            room -= 1;
        }
        let mut body = Vec::new();
        while body.len() + entry(players).len() <= room {
            body.extend_from_slice(&entry(players));
            players += 1;
        }
        bodies.push(body);
    }
    if let Some(first) = bodies.first_mut() {
        let mut with_header = format!("\x01players\x02{players}\x03").into_bytes();
        with_header.append(first);
        *first = with_header;
    }
    if let Some(last) = bodies.last_mut() {
        last.push(0x04);
    }
    bodies
}

/// Bytes of each datagram an oversized server sends: near the most UDP
/// carries, far over [`MAX_PACKET`].
pub const OVERSIZED: usize = 60_000;

/// A status reply of [`OVERSIZED`] bytes: a valid status whose session name
/// is [`HOSTILE_BYTE`]s.
pub fn oversized_status() -> Vec<u8> {
    let mut out = b"0;players;64;maxplayers;64;sessionname;".to_vec();
    out.resize(OVERSIZED, HOSTILE_BYTE);
    out
}

/// A player reply of 64 packets of [`OVERSIZED`] bytes, one player each
/// named with [`HOSTILE_BYTE`]s: what a reader of 64 KiB datagrams and 64
/// packets per reply would take whole.
pub fn oversized_players() -> Vec<Vec<u8>> {
    (0..64)
        .map(|i| {
            let mut p = if i == 0 {
                b"\x01players\x0264\x03".to_vec()
            } else {
                Vec::new()
            };
            p.extend_from_slice(format!("player_{i}\x02").as_bytes());
            let tail = format!("\x03frags_{i}\x02{i}\x03ping_{i}\x020\x03");
            let end = usize::from(i == 63);
            p.resize(OVERSIZED - tail.len() - end, HOSTILE_BYTE);
            p.extend_from_slice(tail.as_bytes());
            if i == 63 {
                p.push(0x04);
            }
            p
        })
        .collect()
}

/// A Serious Engine server's query port that answers every status request
/// and every player request with hostile replies: by default
/// [`gameagent_status`] and [`gameagent_players`] of [`MAX_PLAYER_PACKETS`]
/// packets (the most the decoders accept), or the oversized ones.
#[derive(Debug)]
pub struct HostileGameAgentServer {
    udp: FakeUdp,
}

impl HostileGameAgentServer {
    /// Starts it on 127.0.0.1, with replies as large as the decoders accept.
    pub async fn start() -> io::Result<Self> {
        Self::start_with(gameagent_status(), gameagent_players(MAX_PLAYER_PACKETS)).await
    }

    /// Starts it on 127.0.0.1, with datagrams of [`OVERSIZED`] bytes
    /// ([`oversized_status`], [`oversized_players`]).
    pub async fn start_oversized() -> io::Result<Self> {
        Self::start_with(oversized_status(), oversized_players()).await
    }

    async fn start_with(status: Vec<u8>, players: Vec<Vec<u8>>) -> io::Result<Self> {
        loop {
            let (status, players) = (status.clone(), players.clone());
            let udp = FakeUdp::start(move |req: &[u8]| match req {
                gameagent::STATUS_REQUEST => vec![status.clone()],
                gameagent::PLAYERS_REQUEST => players.clone(),
                _ => Vec::new(),
            })
            .await?;
            // See `GameAgentServer::start_with`: the game port must not be 0.
            if udp.addr().port() > 1 {
                return Ok(Self { udp });
            }
        }
    }

    /// The query port's address.
    pub fn addr(&self) -> SocketAddr {
        self.udp.addr()
    }

    /// The address a master lists for it (game port = query port - 1).
    pub fn game_addr(&self) -> SocketAddrV4 {
        game_addr(&self.udp)
    }

    /// The UDP server underneath, for its request counts.
    pub fn udp(&self) -> &FakeUdp {
        &self.udp
    }
}

/// A Source `A2S_INFO` reply (whole packet, `-1` header first) whose every
/// text field is 1000 [`HOSTILE_BYTE`]s, with SourceTV name and keywords.
pub fn a2s_info() -> Vec<u8> {
    let mut out = packet::SINGLE.to_le_bytes().to_vec();
    out.extend_from_slice(&[a2s::INFO, 17]);
    for _ in 0..4 {
        // Name, map, folder, game.
        out.extend_from_slice(&hostile(1000));
        out.push(0);
    }
    out.extend_from_slice(&240u16.to_le_bytes());
    out.extend_from_slice(&[255, 255, 255, b'd', b'l', 0, 0]);
    out.extend_from_slice(&hostile(1000));
    out.push(0);
    // EDF: game port, SourceTV, keywords.
    out.push(0x80 | 0x40 | 0x20);
    out.extend_from_slice(&27015u16.to_le_bytes());
    out.extend_from_slice(&27020u16.to_le_bytes());
    out.extend_from_slice(&hostile(1000));
    out.push(0);
    out.extend_from_slice(&hostile(1000));
    out.push(0);
    out
}

/// An `A2S_PLAYER` reply listing 255 players (the most its count byte
/// says) named with 200 [`HOSTILE_BYTE`]s, player `i` scoring `i`, split
/// into Source packets of 4 KiB.
pub fn a2s_players() -> Vec<Vec<u8>> {
    let mut out = packet::SINGLE.to_le_bytes().to_vec();
    out.extend_from_slice(&[a2s::PLAYERS, 255]);
    for i in 0..255u8 {
        out.push(i);
        out.extend_from_slice(&hostile(200));
        out.push(0);
        out.extend_from_slice(&i32::from(i).to_le_bytes());
        out.extend_from_slice(&60f32.to_le_bytes());
    }
    packet::split(&out, 0x0D, SplitLayout::Source, 4096, false)
}

/// An `A2S_RULES` reply of 65535 rules (the most its count says) that
/// decompresses to about [`packet::MAX_DECOMPRESSED`] bytes of
/// [`HOSTILE_BYTE`] names and values, bzip2-compressed into a few packets.
pub fn a2s_rules() -> Vec<Vec<u8>> {
    let count = u16::MAX;
    let mut out = packet::SINGLE.to_le_bytes().to_vec();
    out.push(a2s::RULES);
    out.extend_from_slice(&count.to_le_bytes());
    // 4 + 1 + 2 header bytes, then 16 bytes per rule: 7 + NUL, 7 + NUL.
    for _ in 0..count {
        out.extend_from_slice(&hostile(7));
        out.push(0);
        out.extend_from_slice(&hostile(7));
        out.push(0);
    }
    packet::split(&out, 0x0E, SplitLayout::Source, 1200, true)
}

/// A Source server that answers `A2S_INFO`, `A2S_PLAYER` and `A2S_RULES`
/// at once (no challenge) with [`a2s_info`], [`a2s_players`] and
/// [`a2s_rules`].
pub async fn start_hostile_a2s() -> io::Result<FakeUdp> {
    let (info, players, rules) = (a2s_info(), a2s_players(), a2s_rules());
    FakeUdp::start(move |req: &[u8]| match req.get(4) {
        Some(b'T') => vec![info.clone()],
        Some(b'U') => players.clone(),
        Some(b'V') => rules.clone(),
        _ => Vec::new(),
    })
    .await
}
