//! `A2S_INFO` replies of both formats: the Source `'I'` reply with The
//! Ship's fields and the Extra Data Flag fields, and the old GoldSource `'m'`
//! reply with its mod details.

use serde::{Deserialize, Serialize};

use super::{is_the_ship, INFO, INFO_GOLDSOURCE};
use crate::{cursor::Cursor, error::DecodeError, limits::Limits};

/// What kind of server answered.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub enum ServerType {
    Dedicated,
    NonDedicated,
    /// SourceTV relay, or HLTV on GoldSource.
    SourceTv,
    /// Anything else (Rag Doll Kung Fu always sends 0).
    Unknown,
}

impl ServerType {
    fn from_byte(b: u8) -> Self {
        match b {
            b'd' | b'D' => Self::Dedicated,
            b'l' | b'L' => Self::NonDedicated,
            b'p' | b'P' => Self::SourceTv,
            _ => Self::Unknown,
        }
    }
}

/// The server's operating system.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub enum Environment {
    Linux,
    Windows,
    Mac,
    Unknown,
}

impl Environment {
    fn from_byte(b: u8) -> Self {
        match b {
            b'l' | b'L' => Self::Linux,
            b'w' | b'W' => Self::Windows,
            b'm' | b'o' => Self::Mac,
            _ => Self::Unknown,
        }
    }
}

/// Which reply the info came from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub enum InfoFormat {
    /// `'I'`: Source, and GoldSource since Steam.
    Source,
    /// `'m'`: old GoldSource servers.
    GoldSource,
}

/// The Ship's extra info fields.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct TheShip {
    /// 0 Hunt, 1 Elimination, 2 Duel, 3 Deathmatch, 4 VIP Team, 5 Team Elimination.
    pub mode: u8,
    /// Witnesses needed to arrest a player.
    pub witnesses: u8,
    /// Seconds before a watched player is arrested.
    pub duration: u8,
}

/// A GoldSource mod's details (`'m'` reply with `Mod` = 1).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct GoldSourceMod {
    pub link: String,
    pub download_link: String,
    pub version: i32,
    /// Bytes the mod takes on disk.
    pub size: i32,
    /// Multiplayer-only mod (else single and multiplayer).
    pub multiplayer_only: bool,
    /// Whether it ships its own DLL rather than Half-Life's.
    pub own_dll: bool,
}

/// SourceTV's port and name (EDF 0x40).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct SourceTv {
    pub port: u16,
    pub name: String,
}

/// An `A2S_INFO` reply of either format, every optional part as `Option`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Info {
    pub format: InfoFormat,
    /// Network protocol version.
    pub protocol: u8,
    pub name: String,
    pub map: String,
    /// Game directory (`cstrike`, `hl2mp`).
    pub folder: String,
    /// Game description.
    pub game: String,
    /// Steam AppID (Source format only; truncated to 16 bits, see `game_id`).
    pub app_id: Option<u16>,
    pub players: u8,
    pub max_players: u8,
    pub bots: u8,
    pub server_type: ServerType,
    pub environment: Environment,
    /// A password is needed to join.
    pub password: bool,
    /// Valve Anti-Cheat is on.
    pub vac: bool,
    /// Game version (Source format only).
    pub version: Option<String>,
    /// `ip:port` as the server sees itself (GoldSource format only).
    pub address: Option<String>,
    pub the_ship: Option<TheShip>,
    pub goldsource_mod: Option<GoldSourceMod>,
    /// The Extra Data Flag byte, when present.
    pub edf: Option<u8>,
    /// EDF 0x80: the game port.
    pub port: Option<u16>,
    /// EDF 0x10: the server's SteamID.
    pub steam_id: Option<u64>,
    /// EDF 0x40.
    pub source_tv: Option<SourceTv>,
    /// EDF 0x20: tags.
    pub keywords: Option<String>,
    /// EDF 0x01: 64-bit GameID; its low 24 bits are the full AppID.
    pub game_id: Option<u64>,
}

/// Reads an `A2S_INFO` reply, `'I'` or `'m'`, under [`Limits::DEFAULT`].
/// An `'m'` reply that ends after its VAC byte (old servers, HLTV proxies)
/// has 0 bots.
pub fn decode_info(reply: &[u8]) -> Result<Info, DecodeError> {
    decode_info_with(reply, &Limits::DEFAULT)
}

/// [`decode_info`] keeping what `limits` allow: every text field cut to
/// `text_chars` and cleaned ([`crate::limits::clean_text`]).
pub fn decode_info_with(reply: &[u8], limits: &Limits) -> Result<Info, DecodeError> {
    let mut c = Cursor::new(reply);
    match c.u8("reply type")? {
        INFO => decode_source_info(c, limits),
        INFO_GOLDSOURCE => decode_goldsource_info(c, limits),
        got => Err(DecodeError::UnexpectedType {
            expected: "A2S_INFO ('I' or 'm')",
            got,
        }),
    }
}

fn decode_source_info(mut c: Cursor<'_>, limits: &Limits) -> Result<Info, DecodeError> {
    let protocol = c.u8("protocol")?;
    let name = c.text("server name", limits.text_chars)?;
    let map = c.text("map", limits.text_chars)?;
    let folder = c.text("folder", limits.text_chars)?;
    let game = c.text("game", limits.text_chars)?;
    let app_id = c.u16("AppID")?;
    let players = c.u8("player count")?;
    let max_players = c.u8("maximum players")?;
    let bots = c.u8("bot count")?;
    let server_type = ServerType::from_byte(c.u8("server type")?);
    let environment = Environment::from_byte(c.u8("environment")?);
    let password = c.u8("visibility")? != 0;
    let vac = c.u8("VAC flag")? != 0;
    let the_ship = if is_the_ship(app_id) {
        Some(TheShip {
            mode: c.u8("The Ship mode")?,
            witnesses: c.u8("The Ship witnesses")?,
            duration: c.u8("The Ship duration")?,
        })
    } else {
        None
    };
    let version = c.text("version", limits.text_chars)?;
    let mut info = Info {
        format: InfoFormat::Source,
        protocol,
        name,
        map,
        folder,
        game,
        app_id: Some(app_id),
        players,
        max_players,
        bots,
        server_type,
        environment,
        password,
        vac,
        version: Some(version),
        address: None,
        the_ship,
        goldsource_mod: None,
        edf: None,
        port: None,
        steam_id: None,
        source_tv: None,
        keywords: None,
        game_id: None,
    };
    if c.is_empty() {
        return Ok(info);
    }
    let edf = c.u8("extra data flag")?;
    info.edf = Some(edf);
    if edf & 0x80 != 0 {
        info.port = Some(c.u16("EDF game port")?);
    }
    if edf & 0x10 != 0 {
        info.steam_id = Some(c.u64("EDF SteamID")?);
    }
    if edf & 0x40 != 0 {
        info.source_tv = Some(SourceTv {
            port: c.u16("EDF SourceTV port")?,
            name: c.text("EDF SourceTV name", limits.text_chars)?,
        });
    }
    if edf & 0x20 != 0 {
        info.keywords = Some(c.text("EDF keywords", limits.text_chars)?);
    }
    if edf & 0x01 != 0 {
        info.game_id = Some(c.u64("EDF GameID")?);
    }
    Ok(info)
}

fn decode_goldsource_info(mut c: Cursor<'_>, limits: &Limits) -> Result<Info, DecodeError> {
    let address = c.text("address", limits.text_chars)?;
    let name = c.text("server name", limits.text_chars)?;
    let map = c.text("map", limits.text_chars)?;
    let folder = c.text("folder", limits.text_chars)?;
    let game = c.text("game", limits.text_chars)?;
    let players = c.u8("player count")?;
    let max_players = c.u8("maximum players")?;
    let protocol = c.u8("protocol")?;
    let server_type = ServerType::from_byte(c.u8("server type")?);
    let environment = Environment::from_byte(c.u8("environment")?);
    let password = c.u8("visibility")? != 0;
    let is_mod = c.u8("mod flag")?;
    let goldsource_mod = if is_mod == 1 {
        let link = c.text("mod link", limits.text_chars)?;
        let download_link = c.text("mod download link", limits.text_chars)?;
        c.u8("NULL byte")?;
        Some(GoldSourceMod {
            link,
            download_link,
            version: c.i32("mod version")?,
            size: c.i32("mod size")?,
            multiplayer_only: c.u8("mod type")? == 1,
            own_dll: c.u8("mod DLL flag")? == 1,
        })
    } else {
        None
    };
    let vac = c.u8("VAC flag")? != 0;
    // Old servers and HLTV proxies end the reply after the VAC byte.
    let bots = if c.is_empty() { 0 } else { c.u8("bot count")? };
    Ok(Info {
        format: InfoFormat::GoldSource,
        protocol,
        name,
        map,
        folder,
        game,
        app_id: None,
        players,
        max_players,
        bots,
        server_type,
        environment,
        password,
        vac,
        version: None,
        address: Some(address),
        the_ship: None,
        goldsource_mod,
        edf: None,
        port: None,
        steam_id: None,
        source_tv: None,
        keywords: None,
        game_id: None,
    })
}
