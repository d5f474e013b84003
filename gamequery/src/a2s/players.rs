//! `A2S_PLAYER` replies, The Ship's deaths and money included.

use serde::{Deserialize, Serialize};

use super::{expect_type, PLAYERS};
use crate::{cursor::Cursor, error::DecodeError};

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

/// Reads an `A2S_PLAYER` reply. `the_ship`: the server is The Ship (see
/// [`super::is_the_ship`]), whose deaths and money follow all players.
///
/// The count byte includes players still connecting, who are not listed,
/// so fewer entries than the count is normal; bytes after the listed
/// players are ignored.
pub fn decode_players(reply: &[u8], the_ship: bool) -> Result<Vec<Player>, DecodeError> {
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
            name: c.cstr("player name")?,
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
    Ok(players)
}
