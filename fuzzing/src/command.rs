//! The master's messages: [`Command::parse`] with its validation, the typed
//! list reader, and the validators on their own.

use std::net::{IpAddr, Ipv4Addr};

use protocol::{
    message::query_reply_json, validate::ValidationError, Command, MessageError, Registration,
    ServerAddress, ServerList, ServerName,
};

/// Input: one frame's JSON text, as the master (or a bridge following a
/// remote master) reads it.
///
/// Checks: a message that parses is written back by `to_json` as text that
/// parses to the same message; [`ServerList::from_reply`] agrees with
/// [`Command::parse`] but for the one difference it documents; a list
/// written by `query_reply_json` reads back as itself; and the text's
/// lines, taken as a registration's name, address and port, are judged by
/// the contract's rules.
pub fn command(data: &[u8]) {
    let parsed = Command::parse(data);
    if let Ok(cmd) = &parsed {
        let json = cmd.to_json();
        assert_eq!(
            Command::parse(json.as_bytes()).as_ref(),
            Ok(cmd),
            "{json} does not read back"
        );
    }
    let list = match &parsed {
        Ok(Command::QueryReply(list)) => Some(list.clone()),
        _ => None,
    };
    let typed = ServerList::from_reply(data);
    match (&parsed, &typed) {
        // The one difference `from_reply` documents: in UTF-8 text, a value
        // in a field neither reader uses that a `Value` cannot hold.
        (Err(MessageError::InvalidJson(e)), Some(_)) if std::str::from_utf8(data).is_ok() => {
            assert!(
                [
                    "number out of range",
                    "surrogate",
                    "unicode code point",
                    "hex escape",
                ]
                .iter()
                .any(|why| e.contains(why)),
                "the typed list reader read a reply Command::parse refuses: {e}"
            )
        }
        _ => assert_eq!(
            typed, list,
            "the typed list reader disagrees with Command::parse"
        ),
    }
    if let Some(list) = list {
        let json = query_reply_json(&list.servers);
        assert_eq!(ServerList::from_reply(&json), Some(list));
    }
    if let Ok(text) = std::str::from_utf8(data) {
        let mut lines = text.split('\n');
        let name = lines.next().unwrap_or_default();
        let address = lines.next().unwrap_or_default();
        let port = lines.next().and_then(|p| p.parse().ok()).unwrap_or(1);
        validators(name, address, port);
    }
}

fn validators(name: &str, address: &str, port: u64) {
    if let Ok(n) = ServerName::parse(name) {
        assert_eq!(n.as_str(), name);
        assert!(name.chars().count() <= 100);
        assert!(!name.chars().any(char::is_control));
        assert!(!name.chars().all(char::is_whitespace));
    }
    match ServerAddress::parse(address) {
        Ok(a) => {
            assert_eq!(a.as_str(), address);
            let looks_v4 = address.bytes().all(|b| b.is_ascii_digit() || b == b'.');
            let is_ip = address.parse::<IpAddr>().is_ok();
            // Whatever looks like an IP address is a valid one; the rest is
            // a hostname of ASCII letters, digits, '-' and '.'.
            if looks_v4 || address.contains(':') {
                assert!(is_ip, "{address:?} accepted as an address");
            } else {
                assert!(address.len() <= 253);
                assert!(address
                    .bytes()
                    .all(|b| b.is_ascii_alphanumeric() || b == b'-' || b == b'.'));
            }
        }
        Err(ValidationError::InvalidIpv4(_)) => {
            assert!(address.parse::<Ipv4Addr>().is_err(), "{address:?} refused");
        }
        Err(_) => {}
    }
    if let Ok(reg) = Registration::new(name, address, port) {
        let content = serde_json::to_value(&reg).expect("a registration serializes");
        assert_eq!(Registration::from_content(&content), Ok(reg));
    }
}
