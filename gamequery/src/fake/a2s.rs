//! The fake Source server: the seed's Counter-Strike: Source replies, the
//! challenge round trip, and split, compressed rules.

use std::{
    io,
    net::SocketAddr,
    sync::{
        atomic::{AtomicBool, Ordering},
        Arc,
    },
};

use super::{hex, FakeUdp};
use crate::{
    a2s::{players_request, rules_request},
    packet::{self, SplitLayout},
};

const CS_SOURCE_INFO: &str = include_str!("../../tests/fixtures/ru_cs_source_info.hex");
const INFO_CHALLENGE: &str = include_str!("../../tests/fixtures/ru_info_challenge.hex");
const INFO_REQUEST_CHALLENGE: &str =
    include_str!("../../tests/fixtures/ru_info_request_challenge.hex");
const PLAYERS: &str = include_str!("../../tests/fixtures/ru_players.hex");
const RULES_SPLIT_0: &str = include_str!("../../tests/fixtures/ru_rules_split_0.hex");
const RULES_SPLIT_1: &str = include_str!("../../tests/fixtures/ru_rules_split_1.hex");

/// The map in the seed's CS:S info reply, which [`A2sServer`] swaps out.
const SEED_MAP: &str = "de_dust";

/// The map [`A2sServer`] reports after [`A2sServer::set_alternate_map`], so
/// a test can watch a live change arrive.
pub const ALTERNATE_MAP: &str = "de_nuke";

/// The challenge number of the seed's `S2C_CHALLENGE` reply, which the fake
/// A2S server hands out and then requires, so clients must do the round trip.
pub const CHALLENGE: i32 = i32::from_le_bytes([0x0A, 0x08, 0x5E, 0xEA]);

/// The seed's CS:S `A2S_INFO` reply (whole packet, `-1` header first): what
/// [`A2sServer`] answers, for tests to decode their expectations from.
pub fn cs_source_info() -> Vec<u8> {
    hex(CS_SOURCE_INFO)
}

/// The seed's `A2S_PLAYER` reply (whole packet): what [`A2sServer`] answers.
pub fn cs_source_players() -> Vec<u8> {
    hex(PLAYERS)
}

/// The seed's `A2S_RULES` reply as one packet (`-1` header first),
/// reassembled from its two split packets; [`A2sServer`] sends it split and
/// compressed.
pub fn cs_source_rules() -> Vec<u8> {
    let parts = [hex(RULES_SPLIT_0), hex(RULES_SPLIT_1)];
    let reply = packet::reassemble(&[&parts[0], &parts[1]], None)
        .unwrap_or_else(|e| panic!("the seed's rules do not reassemble: {e}"));
    let mut whole = packet::SINGLE.to_le_bytes().to_vec();
    whole.extend_from_slice(&reply);
    whole
}

/// Replaces the seed's map in an info reply; both names have 7 bytes, so
/// nothing else moves.
fn with_map(info: &[u8], map: &str) -> Vec<u8> {
    let mut out = info.to_vec();
    let from = SEED_MAP.as_bytes();
    if map.len() == from.len() {
        if let Some(at) = out.windows(from.len()).position(|w| w == from) {
            out[at..at + from.len()].copy_from_slice(map.as_bytes());
        }
    }
    out
}

/// The answers of a current Source server: every request without
/// [`CHALLENGE`] gets the seed's `S2C_CHALLENGE`; with it, `A2S_INFO` gets
/// the seed's CS:S reply (on [`ALTERNATE_MAP`] while `alternate` is set),
/// `A2S_PLAYER` the seed's players and `A2S_RULES` the `rules` packets as
/// given. Exposed so tests can wrap it (drop a packet, count replies).
pub fn a2s_handler(
    rules: Vec<Vec<u8>>,
    alternate: Arc<AtomicBool>,
) -> impl Fn(&[u8]) -> Vec<Vec<u8>> + Send + Sync + 'static {
    let info = cs_source_info();
    let switched = with_map(&info, ALTERNATE_MAP);
    let players = cs_source_players();
    let challenge = hex(INFO_CHALLENGE);
    let info_request = hex(INFO_REQUEST_CHALLENGE);
    let players_request = players_request(CHALLENGE);
    let rules_request = rules_request(CHALLENGE);
    move |req: &[u8]| {
        if req == info_request {
            if alternate.load(Ordering::SeqCst) {
                vec![switched.clone()]
            } else {
                vec![info.clone()]
            }
        } else if req == players_request {
            vec![players.clone()]
        } else if req == rules_request {
            rules.clone()
        } else if matches!(req.get(4), Some(b'T' | b'U' | b'V')) {
            vec![challenge.clone()]
        } else {
            Vec::new()
        }
    }
}

/// A Counter-Strike: Source server from the seeds: it requires the
/// challenge round trip, sends its rules as bzip2-compressed Source split
/// packets in reverse order, and can change its map or go offline.
#[derive(Debug)]
pub struct A2sServer {
    udp: FakeUdp,
    alternate: Arc<AtomicBool>,
}

impl A2sServer {
    /// Starts it on 127.0.0.1, on the seed's map.
    pub async fn start() -> io::Result<Self> {
        let mut rules = packet::split(&cs_source_rules(), 42, SplitLayout::Source, 500, true);
        rules.reverse();
        let alternate = Arc::new(AtomicBool::new(false));
        let udp = FakeUdp::start(a2s_handler(rules, alternate.clone())).await?;
        Ok(Self { udp, alternate })
    }

    /// Its address, to pass to `--a2s`.
    pub fn addr(&self) -> SocketAddr {
        self.udp.addr()
    }

    /// `true`: the server now plays [`ALTERNATE_MAP`]; `false`: the seed's
    /// map again.
    pub fn set_alternate_map(&self, on: bool) {
        self.alternate.store(on, Ordering::SeqCst);
    }

    /// `false`: it stops answering (see [`FakeUdp::set_answering`]).
    pub fn set_answering(&self, on: bool) {
        self.udp.set_answering(on);
    }

    /// The UDP server underneath, for its request counts.
    pub fn udp(&self) -> &FakeUdp {
        &self.udp
    }
}
