//! Valve's A2S server queries: the requests, and pure decoders for the
//! replies (after [`crate::packet`] removed the `-1` header), including the
//! old GoldSource `'m'` info reply, The Ship's extra fields and the Extra
//! Data Flag fields.

mod info;
mod players;
mod rules;

pub use info::{
    decode_info, decode_info_with, Environment, GoldSourceMod, Info, InfoFormat, ServerType,
    SourceTv, TheShip,
};
pub use players::{decode_players, decode_players_with, Player};
pub use rules::{decode_rules, decode_rules_with, Rule};

use crate::{cursor::Cursor, error::DecodeError, packet::SINGLE};

/// `S2C_CHALLENGE`: the server wants the request again with this number.
pub const CHALLENGE: u8 = b'A';
/// Source `A2S_INFO` reply.
pub const INFO: u8 = b'I';
/// Obsolete GoldSource `A2S_INFO` reply.
pub const INFO_GOLDSOURCE: u8 = b'm';
/// `A2S_PLAYER` reply.
pub const PLAYERS: u8 = b'D';
/// `A2S_RULES` reply.
pub const RULES: u8 = b'E';

/// The challenge that asks a server for a real one (`A2S_PLAYER`, `A2S_RULES`).
pub const NO_CHALLENGE: i32 = -1;

/// AppIDs of The Ship, whose info and player replies carry extra fields.
pub const THE_SHIP_APP_IDS: [u16; 8] = [2400, 2401, 2402, 2403, 2405, 2406, 2412, 2430];

/// Whether `app_id` is The Ship (its replies have extra fields).
pub fn is_the_ship(app_id: u16) -> bool {
    THE_SHIP_APP_IDS.contains(&app_id)
}

fn request(kind: u8, body: &[u8], challenge: Option<i32>) -> Vec<u8> {
    let mut out = SINGLE.to_le_bytes().to_vec();
    out.push(kind);
    out.extend_from_slice(body);
    if let Some(c) = challenge {
        out.extend_from_slice(&c.to_le_bytes());
    }
    out
}

/// `A2S_INFO`, with the challenge from an `S2C_CHALLENGE` reply if the
/// server sent one (required since December 2020).
pub fn info_request(challenge: Option<i32>) -> Vec<u8> {
    request(b'T', b"Source Engine Query\0", challenge)
}

/// `A2S_PLAYER`; [`NO_CHALLENGE`] first, then the server's number.
pub fn players_request(challenge: i32) -> Vec<u8> {
    request(b'U', &[], Some(challenge))
}

/// `A2S_RULES`; [`NO_CHALLENGE`] first, then the server's number.
pub fn rules_request(challenge: i32) -> Vec<u8> {
    request(b'V', &[], Some(challenge))
}

/// The type byte of a reply (its first byte).
pub fn reply_type(reply: &[u8]) -> Result<u8, DecodeError> {
    Cursor::new(reply).u8("reply type")
}

fn expect_type(c: &mut Cursor<'_>, want: u8, name: &'static str) -> Result<(), DecodeError> {
    let got = c.u8("reply type")?;
    if got == want {
        Ok(())
    } else {
        Err(DecodeError::UnexpectedType {
            expected: name,
            got,
        })
    }
}

/// Reads an `S2C_CHALLENGE` (`'A'`) reply: the number to send back.
pub fn decode_challenge(reply: &[u8]) -> Result<i32, DecodeError> {
    let mut c = Cursor::new(reply);
    expect_type(&mut c, CHALLENGE, "S2C_CHALLENGE ('A')")?;
    c.i32("challenge number")
}
