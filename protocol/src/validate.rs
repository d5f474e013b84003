//! Every validation rule of `docs/protocol.md` §1, as parsing
//! functions that return readable errors (the front end shows them next to
//! its form fields, the master logs them).

use std::{
    fmt,
    net::{Ipv4Addr, Ipv6Addr},
};

use serde::{Deserialize, Serialize};
use serde_json::Value;
use thiserror::Error;

use crate::{ServerEntry, MASTER_PORT};

/// Longest server name, in Unicode characters.
pub const MAX_NAME_CHARS: usize = 100;
/// Longest hostname, in bytes (ASCII only).
pub const MAX_HOSTNAME_LEN: usize = 253;
/// Longest hostname label.
pub const MAX_LABEL_LEN: usize = 63;

/// Why a field was rejected. The messages are written for people: the front
/// end puts them under the offending input.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
pub enum ValidationError {
    #[error("content must be a JSON object")]
    ContentNotObject,
    #[error("{0} is missing")]
    Missing(&'static str),
    #[error("{field} must be {expected}")]
    WrongType {
        field: &'static str,
        expected: &'static str,
    },

    #[error("the server name must not be empty")]
    NameEmpty,
    #[error("the server name must not be only whitespace")]
    NameBlank,
    #[error("the server name may have at most {MAX_NAME_CHARS} characters (this one has {0})")]
    NameTooLong(usize),
    #[error("the server name must not contain control characters")]
    NameControlChar,

    #[error("the address must not be empty")]
    AddressEmpty,
    #[error("\"{0}\" looks like an IPv4 address but is not a valid one")]
    InvalidIpv4(String),
    #[error(
        "\"{0}\" looks like an IPv6 address but is not a valid one (write it without brackets)"
    )]
    InvalidIpv6(String),
    #[error("a hostname may have at most {MAX_HOSTNAME_LEN} characters")]
    HostnameTooLong,
    #[error("hostname labels (the parts between dots) must not be empty")]
    EmptyLabel,
    #[error("hostname labels may have at most {MAX_LABEL_LEN} characters")]
    LabelTooLong,
    #[error("hostnames may only contain letters A-Z, digits and '-' (found {0:?})")]
    HostnameChar(char),
    #[error("hostname labels must not start or end with '-'")]
    LabelHyphen,
    #[error("the last part of a hostname must not be all digits")]
    NumericTld,

    #[error("the port must be between 1 and 65535")]
    PortOutOfRange,
    #[error("port 51963 is reserved for the master server")]
    PortReserved,

    #[error("the number of players must be a whole number of at least 0")]
    PlayersCurrent,
    #[error("the player limit must be 2, 3 or 4")]
    PlayersMax,
    #[error("the gameplay mode must be 1 (Standard A) or 2 (Standard A+B)")]
    GameplayMode,
}

impl ValidationError {
    /// The JSON field the error is about, so a form can show it next to the
    /// right input (`None` for errors about the whole content).
    pub fn field(&self) -> Option<&'static str> {
        use ValidationError::*;
        match self {
            ContentNotObject => None,
            Missing(f) | WrongType { field: f, .. } => Some(f),
            NameEmpty | NameBlank | NameTooLong(_) | NameControlChar => Some("serverName"),
            AddressEmpty | InvalidIpv4(_) | InvalidIpv6(_) | HostnameTooLong | EmptyLabel
            | LabelTooLong | HostnameChar(_) | LabelHyphen | NumericTld => Some("serverAddress"),
            PortOutOfRange | PortReserved => Some("serverPort"),
            PlayersCurrent => Some("players.current"),
            PlayersMax => Some("players.max"),
            GameplayMode => Some("gameplayMode"),
        }
    }
}

/// A server name as players see it: not blank, at most 100 characters, no
/// control characters.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize)]
#[serde(transparent)]
pub struct ServerName(String);

impl ServerName {
    pub fn parse(name: &str) -> Result<Self, ValidationError> {
        check_name(name)?;
        Ok(Self(name.to_owned()))
    }

    pub fn as_str(&self) -> &str {
        &self.0
    }
}

impl fmt::Display for ServerName {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

/// Where players reach a game server: an IPv4 address, an IPv6 address
/// (without brackets) or a hostname. Anything that looks like an IP address
/// but is not a valid one is rejected, as the specification demands.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize)]
#[serde(transparent)]
pub struct ServerAddress(String);

impl ServerAddress {
    pub fn parse(addr: &str) -> Result<Self, ValidationError> {
        check_address(addr)?;
        Ok(Self(addr.to_owned()))
    }

    pub fn as_str(&self) -> &str {
        &self.0
    }
}

impl fmt::Display for ServerAddress {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

/// The rules of [`ServerName`], without keeping the name.
fn check_name(name: &str) -> Result<(), ValidationError> {
    if name.is_empty() {
        return Err(ValidationError::NameEmpty);
    }
    if name.chars().all(char::is_whitespace) {
        return Err(ValidationError::NameBlank);
    }
    let chars = name.chars().count();
    if chars > MAX_NAME_CHARS {
        return Err(ValidationError::NameTooLong(chars));
    }
    if name.chars().any(char::is_control) {
        return Err(ValidationError::NameControlChar);
    }
    Ok(())
}

/// The rules of [`ServerAddress`], without keeping the address.
fn check_address(addr: &str) -> Result<(), ValidationError> {
    let quoted = || addr.to_owned();
    if addr.is_empty() {
        return Err(ValidationError::AddressEmpty);
    }
    if addr.contains([':', '[', ']']) {
        return match addr.parse::<Ipv6Addr>() {
            Ok(_) => Ok(()),
            Err(_) => Err(ValidationError::InvalidIpv6(quoted())),
        };
    }
    if addr.bytes().all(|b| b.is_ascii_digit() || b == b'.') {
        return match addr.parse::<Ipv4Addr>() {
            Ok(_) => Ok(()),
            Err(_) => Err(ValidationError::InvalidIpv4(quoted())),
        };
    }
    validate_hostname(addr)
}

impl ServerEntry {
    /// Checks a listed entry that came from outside (a remote master's
    /// change feed) against the rules its registration and stats had to
    /// pass at a master (§1): a name players can read, an address and a
    /// port a game can reach, a player limit of 2 to 4. The gameplay mode
    /// and the player count are checked as the entry is read. The address
    /// and the port may be absent: a list for viewers hides them.
    pub fn validate(&self) -> Result<(), ValidationError> {
        check_name(&self.name)?;
        if let Some(address) = &self.address {
            check_address(address)?;
        }
        if let Some(port) = self.port {
            ServerPort::new(u64::from(port))?;
        }
        check_max_players(u64::from(self.stats.players.max))?;
        Ok(())
    }
}

fn validate_hostname(host: &str) -> Result<(), ValidationError> {
    if let Some(c) = host
        .chars()
        .find(|c| !(c.is_ascii_alphanumeric() || *c == '-' || *c == '.'))
    {
        return Err(ValidationError::HostnameChar(c));
    }
    if host.len() > MAX_HOSTNAME_LEN {
        return Err(ValidationError::HostnameTooLong);
    }
    let mut last = "";
    for label in host.split('.') {
        if label.is_empty() {
            return Err(ValidationError::EmptyLabel);
        }
        if label.len() > MAX_LABEL_LEN {
            return Err(ValidationError::LabelTooLong);
        }
        if label.starts_with('-') || label.ends_with('-') {
            return Err(ValidationError::LabelHyphen);
        }
        last = label;
    }
    if last.bytes().all(|b| b.is_ascii_digit()) {
        return Err(ValidationError::NumericTld);
    }
    Ok(())
}

/// A game server's TCP port: 1-65535 except the master's own 51963.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize)]
#[serde(transparent)]
pub struct ServerPort(u16);

impl ServerPort {
    pub fn new(port: u64) -> Result<Self, ValidationError> {
        match u16::try_from(port) {
            Ok(0) | Err(_) => Err(ValidationError::PortOutOfRange),
            Ok(MASTER_PORT) => Err(ValidationError::PortReserved),
            Ok(p) => Ok(Self(p)),
        }
    }

    pub fn get(self) -> u16 {
        self.0
    }
}

/// The game's two modes; the wire carries them as 1 and 2.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum GameplayMode {
    StandardA,
    StandardAB,
}

impl GameplayMode {
    pub fn from_wire(n: u64) -> Result<Self, ValidationError> {
        match n {
            1 => Ok(Self::StandardA),
            2 => Ok(Self::StandardAB),
            _ => Err(ValidationError::GameplayMode),
        }
    }

    pub fn to_wire(self) -> u8 {
        match self {
            Self::StandardA => 1,
            Self::StandardAB => 2,
        }
    }

    /// The name players know the mode by.
    pub fn label(self) -> &'static str {
        match self {
            Self::StandardA => "Standard A",
            Self::StandardAB => "Standard A+B",
        }
    }
}

impl Serialize for GameplayMode {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_u8(self.to_wire())
    }
}

impl<'de> Deserialize<'de> for GameplayMode {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let n = u64::deserialize(d)?;
        Self::from_wire(n).map_err(serde::de::Error::custom)
    }
}

/// Written as the integer [`GameplayMode::to_wire`] gives: 1 or 2.
#[cfg(feature = "openapi")]
impl utoipa::PartialSchema for GameplayMode {
    fn schema() -> utoipa::openapi::RefOr<utoipa::openapi::schema::Schema> {
        use utoipa::openapi::schema::{ObjectBuilder, Type};
        let modes = [GameplayMode::StandardA, GameplayMode::StandardAB];
        let names: Vec<String> = modes
            .iter()
            .map(|m| format!("{} = {}", m.to_wire(), m.label()))
            .collect();
        ObjectBuilder::new()
            .schema_type(Type::Integer)
            .enum_values(Some(modes.map(GameplayMode::to_wire)))
            .description(Some(format!("The gameplay mode: {}", names.join(", "))))
            .into()
    }
}

#[cfg(feature = "openapi")]
impl utoipa::ToSchema for GameplayMode {}

/// The checked content of `msRegisterGameServer`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Registration {
    #[serde(rename = "serverName")]
    pub name: ServerName,
    #[serde(rename = "serverAddress")]
    pub address: ServerAddress,
    #[serde(rename = "serverPort")]
    pub port: ServerPort,
}

impl Registration {
    /// Checks all three fields of a registration given as plain values, the
    /// way a form holds them.
    pub fn new(name: &str, address: &str, port: u64) -> Result<Self, ValidationError> {
        Ok(Self {
            name: ServerName::parse(name)?,
            address: ServerAddress::parse(address)?,
            port: ServerPort::new(port)?,
        })
    }

    /// Validates the `content` object of an `msRegisterGameServer` message.
    pub fn from_content(content: &Value) -> Result<Self, ValidationError> {
        let obj = content
            .as_object()
            .ok_or(ValidationError::ContentNotObject)?;
        let name = str_field(obj, "serverName")?;
        let address = str_field(obj, "serverAddress")?;
        let port = uint_field(obj, "serverPort")?;
        Self::new(name, address, port)
    }
}

pub(crate) fn field<'a>(
    obj: &'a serde_json::Map<String, Value>,
    name: &'static str,
) -> Result<&'a Value, ValidationError> {
    obj.get(name).ok_or(ValidationError::Missing(name))
}

fn str_field<'a>(
    obj: &'a serde_json::Map<String, Value>,
    name: &'static str,
) -> Result<&'a str, ValidationError> {
    field(obj, name)?
        .as_str()
        .ok_or(ValidationError::WrongType {
            field: name,
            expected: "a string",
        })
}

/// A JSON integer ≥ 0; fractions (`1.0`, `1.5`), negatives and strings fail.
pub(crate) fn uint_field(
    obj: &serde_json::Map<String, Value>,
    name: &'static str,
) -> Result<u64, ValidationError> {
    field(obj, name)?
        .as_u64()
        .ok_or(ValidationError::WrongType {
            field: name,
            expected: "a whole number",
        })
}

/// `players.current`: an integer ≥ 0 or, because the specification's own
/// examples send it so, a string of decimal digits. Values above `u32::MAX`
/// are rejected: no lobby queues four billion players.
pub fn parse_current_players(v: &Value) -> Result<u32, ValidationError> {
    let n = match v {
        Value::Number(n) => n.as_u64(),
        Value::String(s) if !s.is_empty() && s.bytes().all(|b| b.is_ascii_digit()) => {
            s.parse::<u64>().ok()
        }
        _ => None,
    };
    n.and_then(|n| u32::try_from(n).ok())
        .ok_or(ValidationError::PlayersCurrent)
}

/// `players.max`: 2, 3 or 4.
pub fn check_max_players(n: u64) -> Result<u8, ValidationError> {
    match n {
        2..=4 => Ok(n as u8),
        _ => Err(ValidationError::PlayersMax),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use ValidationError as E;

    #[test]
    fn names() {
        assert_eq!(ServerName::parse("").unwrap_err(), E::NameEmpty);
        assert_eq!(ServerName::parse(" \t ").unwrap_err(), E::NameBlank);
        assert_eq!(ServerName::parse("\u{3000}").unwrap_err(), E::NameBlank);
        assert!(ServerName::parse(&"a".repeat(100)).is_ok());
        assert_eq!(
            ServerName::parse(&"a".repeat(101)).unwrap_err(),
            E::NameTooLong(101)
        );
        // 100 characters of 3 bytes each are still 100 characters.
        assert!(ServerName::parse(&"轰".repeat(100)).is_ok());
        assert_eq!(
            ServerName::parse(&"轰".repeat(101)).unwrap_err(),
            E::NameTooLong(101)
        );
        assert_eq!(ServerName::parse("a\nb").unwrap_err(), E::NameControlChar);
        assert_eq!(
            ServerName::parse("a\u{7f}").unwrap_err(),
            E::NameControlChar
        );
        assert_eq!(ServerName::parse("\u{0}").unwrap_err(), E::NameControlChar);
        for ok in ["Feuerland", "Server von Bösewicht", "轰炸机人", " padded "] {
            assert_eq!(ServerName::parse(ok).unwrap().as_str(), ok);
        }
    }

    #[test]
    fn addresses_accepted() {
        for ok in [
            "192.168.0.10",
            "0.0.0.0",
            "255.255.255.255",
            "fd40:9dc7:b528::1",
            "::1",
            "::",
            "2001:db8::ffff:1.2.3.4",
            "bombergame.example.org",
            "localhost",
            "a",
            "x-1.example",
            "1.2.3.com",
            "123abc",
            &format!("{}.com", "a".repeat(63)),
        ] {
            assert!(ServerAddress::parse(ok).is_ok(), "{ok} should be accepted");
        }
    }

    #[test]
    fn addresses_rejected() {
        type Check = fn(&E) -> bool;
        let cases: &[(&str, Check)] = &[
            ("", |e| *e == E::AddressEmpty),
            ("1.2.3", |e| matches!(e, E::InvalidIpv4(_))),
            ("256.1.1.1", |e| matches!(e, E::InvalidIpv4(_))),
            ("1.2.3.4.5", |e| matches!(e, E::InvalidIpv4(_))),
            ("1.2.3.", |e| matches!(e, E::InvalidIpv4(_))),
            ("123", |e| matches!(e, E::InvalidIpv4(_))),
            ("fd40::zz", |e| matches!(e, E::InvalidIpv6(_))),
            ("[::1]", |e| matches!(e, E::InvalidIpv6(_))),
            ("1::2::3", |e| matches!(e, E::InvalidIpv6(_))),
            ("host:80", |e| matches!(e, E::InvalidIpv6(_))),
            ("bad host", |e| *e == E::HostnameChar(' ')),
            ("under_score.org", |e| *e == E::HostnameChar('_')),
            ("bösewicht.de", |e| *e == E::HostnameChar('ö')),
            ("-a.org", |e| *e == E::LabelHyphen),
            ("a-.org", |e| *e == E::LabelHyphen),
            ("a..org", |e| *e == E::EmptyLabel),
            ("example.org.", |e| *e == E::EmptyLabel),
            ("example.123", |e| *e == E::NumericTld),
        ];
        for (bad, check) in cases {
            let err = ServerAddress::parse(bad).expect_err(bad);
            assert!(check(&err), "{bad}: unexpected {err:?}");
            assert_eq!(err.field(), Some("serverAddress"));
        }
        let long_label = format!("{}.com", "a".repeat(64));
        assert_eq!(
            ServerAddress::parse(&long_label).unwrap_err(),
            E::LabelTooLong
        );
        let label = "a".repeat(63);
        let at_limit = [label.as_str(); 4].join(".")[..253].to_string();
        assert_eq!(at_limit.len(), 253);
        assert!(ServerAddress::parse(&at_limit).is_ok());
        let over = format!("{at_limit}b");
        assert_eq!(ServerAddress::parse(&over).unwrap_err(), E::HostnameTooLong);
    }

    #[test]
    fn ports() {
        assert_eq!(ServerPort::new(0).unwrap_err(), E::PortOutOfRange);
        assert_eq!(ServerPort::new(1).unwrap().get(), 1);
        assert_eq!(ServerPort::new(65535).unwrap().get(), 65535);
        assert_eq!(ServerPort::new(65536).unwrap_err(), E::PortOutOfRange);
        assert_eq!(ServerPort::new(51963).unwrap_err(), E::PortReserved);
        assert_eq!(ServerPort::new(51962).unwrap().get(), 51962);
    }

    #[test]
    fn port_types_in_json() {
        let reg = |port: Value| {
            Registration::from_content(&serde_json::json!({
                "serverName": "x", "serverAddress": "a.org", "serverPort": port
            }))
        };
        assert!(reg(serde_json::json!(20000)).is_ok());
        for bad in [
            serde_json::json!("20000"),
            serde_json::json!(20000.0),
            serde_json::json!(2.5),
            serde_json::json!(-1),
            serde_json::json!(null),
        ] {
            assert!(
                matches!(
                    reg(bad.clone()),
                    Err(E::WrongType {
                        field: "serverPort",
                        ..
                    })
                ),
                "{bad}"
            );
        }
    }

    #[test]
    fn registration_fields() {
        let missing = Registration::from_content(&serde_json::json!({"serverName": "x"}));
        assert_eq!(missing.unwrap_err(), E::Missing("serverAddress"));
        let not_obj = Registration::from_content(&serde_json::json!([1]));
        assert_eq!(not_obj.unwrap_err(), E::ContentNotObject);
        let name_num = Registration::from_content(
            &serde_json::json!({"serverName": 5, "serverAddress": "a.org", "serverPort": 1}),
        );
        assert!(matches!(
            name_num,
            Err(E::WrongType {
                field: "serverName",
                ..
            })
        ));
    }

    #[test]
    fn players_and_mode() {
        use serde_json::json;
        assert_eq!(parse_current_players(&json!(0)), Ok(0));
        assert_eq!(parse_current_players(&json!(22)), Ok(22));
        assert_eq!(parse_current_players(&json!("3")), Ok(3));
        assert_eq!(parse_current_players(&json!(u32::MAX)), Ok(u32::MAX));
        for bad in [
            json!(-1),
            json!(1.5),
            json!(""),
            json!("-1"),
            json!("1.0"),
            json!(" 3"),
            json!(true),
            json!(u64::from(u32::MAX) + 1),
        ] {
            assert_eq!(parse_current_players(&bad), Err(E::PlayersCurrent), "{bad}");
        }
        assert_eq!(check_max_players(1), Err(E::PlayersMax));
        assert_eq!(check_max_players(2), Ok(2));
        assert_eq!(check_max_players(4), Ok(4));
        assert_eq!(check_max_players(5), Err(E::PlayersMax));
        assert_eq!(GameplayMode::from_wire(0), Err(E::GameplayMode));
        assert_eq!(GameplayMode::from_wire(1), Ok(GameplayMode::StandardA));
        assert_eq!(GameplayMode::from_wire(2), Ok(GameplayMode::StandardAB));
        assert_eq!(GameplayMode::from_wire(3), Err(E::GameplayMode));
    }
}
