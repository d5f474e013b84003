//! `A2S_PLAYER` replies, The Ship's deaths and money included.

use serde::{Deserialize, Serialize};

use super::{expect_type, PLAYERS};
use crate::{
    cursor::Cursor,
    error::DecodeError,
    limits::{best_scoring, Limits},
};

/// One player of an `A2S_PLAYER` reply.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Player {
    /// The server's index (often 0 for everyone).
    pub index: u8,
    pub name: String,
    pub score: i32,
    /// Seconds connected.
    pub duration: f32,
    /// The Ship only.
    pub deaths: Option<i32>,
    /// The Ship only.
    pub money: Option<i32>,
}

/// Reads an `A2S_PLAYER` reply under [`Limits::DEFAULT`]. `the_ship`: the
/// server is The Ship (see [`super::is_the_ship`]), whose deaths and money
/// follow all players.
///
/// The count byte includes players still connecting, who are not listed,
/// so fewer entries than the count is normal; bytes after the listed
/// players are ignored.
pub fn decode_players(reply: &[u8], the_ship: bool) -> Result<Vec<Player>, DecodeError> {
    decode_players_with(reply, the_ship, &Limits::DEFAULT)
}

/// [`decode_players`] keeping what `limits` allow: names cut to
/// `text_chars` and cleaned, and of more than `players` entries the
/// best-scoring ones (earlier first among equal scores), in the server's
/// order.
pub fn decode_players_with(
    reply: &[u8],
    the_ship: bool,
    limits: &Limits,
) -> Result<Vec<Player>, DecodeError> {
    let mut c = Cursor::new(reply);
    expect_type(&mut c, PLAYERS, "A2S_PLAYER ('D')")?;
    let count = usize::from(c.u8("player count")?);
    let mut players = Vec::with_capacity(count);
    while players.len() < count && !c.is_empty() {
        // The Ship: stop where exactly the deaths and money of the players
        // read so far remain.
        if the_ship && !players.is_empty() && c.remaining() == 8 * players.len() {
            break;
        }
        players.push(Player {
            index: c.u8("player index")?,
            name: c.text("player name", limits.text_chars)?,
            score: c.i32("player score")?,
            duration: c.f32("player duration")?,
            deaths: None,
            money: None,
        });
    }
    if the_ship {
        for p in &mut players {
            p.deaths = Some(c.i32("The Ship deaths")?);
            p.money = Some(c.i32("The Ship money")?);
        }
    }
    Ok(best_scoring(players, limits.players, |p| {
        i64::from(p.score)
    }))
}
