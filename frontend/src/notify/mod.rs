//! Telling a player when a server matters to them (`docs/protocol.md`
//! §2.4): their watches (`watches`), the events an open tab decides itself
//! from the list it holds (`detect`), and the sentences both the tab and
//! the service worker (`frontend/sw.js`) show, from one table (`i18n`).
//! The browser's APIs are in `services::push`, the state in
//! `contexts::notify`.

pub mod detect;
pub mod watches;

use protocol::watch::Event;

use crate::i18n::{t, tf, K};

/// The sentence under the server's name for `event`, `{}` placeholders
/// for the players and the slots.
pub fn body_key(event: Event) -> K {
    match event {
        Event::ServerOnline => K::NotifyBodyOnline,
        Event::ServerOffline => K::NotifyBodyOffline,
        Event::LobbyOpened => K::NotifyBodyLobby,
        Event::PlayersReached => K::NotifyBodyPlayers,
    }
}

/// The notification's body for `event` with `current` of `max` players.
pub fn body(event: Event, current: u32, max: u8) -> String {
    tf(body_key(event), &[&current, &max])
}

/// The sentences of every event in the current language, for the service
/// worker (JSON: `{"lang", EVENT: sentence}`; it fills the `{}` the same
/// way).
pub fn words_json() -> String {
    let text = |s: &str| serde_json::to_string(s).unwrap_or_default();
    let mut out = format!(r#"{{"lang":"{}""#, crate::i18n::lang().code());
    for e in Event::ALL {
        out.push_str(&format!(r#","{}":{}"#, e.name(), text(t(body_key(e)))));
    }
    out.push('}');
    out
}

/// Decodes unpadded base64url (RFC 4648 §5), as VAPID keys are written;
/// `None` for anything else. Small by hand: a crate would cost the
/// bundle more than these lines.
pub fn decode_base64url(text: &str) -> Option<Vec<u8>> {
    let text = text.trim_end_matches('=');
    let mut out = Vec::with_capacity(text.len() * 3 / 4);
    let (mut acc, mut bits) = (0u32, 0u32);
    for b in text.bytes() {
        let v = match b {
            b'A'..=b'Z' => b - b'A',
            b'a'..=b'z' => b - b'a' + 26,
            b'0'..=b'9' => b - b'0' + 52,
            b'-' => 62,
            b'_' => 63,
            _ => return None,
        };
        acc = (acc << 6) | u32::from(v);
        bits += 6;
        if bits >= 8 {
            bits -= 8;
            out.push((acc >> bits) as u8);
            acc &= (1 << bits) - 1;
        }
    }
    // Leftover bits must be zero padding of fewer than one byte.
    (bits < 6 && acc == 0).then_some(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::i18n::{set_lang, Lang};

    #[test]
    fn base64url_decodes_as_rfc_4648_says() {
        assert_eq!(decode_base64url("").unwrap(), b"");
        assert_eq!(decode_base64url("Zg").unwrap(), b"f");
        assert_eq!(decode_base64url("Zm8").unwrap(), b"fo");
        assert_eq!(decode_base64url("Zm9v").unwrap(), b"foo");
        assert_eq!(decode_base64url("Zm9vYg==").unwrap(), b"foob");
        assert_eq!(decode_base64url("-_8").unwrap(), [0xfb, 0xff]);
        assert_eq!(decode_base64url("Zm9v+A"), None, "base64, not base64url");
        assert_eq!(decode_base64url("Zh"), None, "bits past the last byte");
        // A VAPID public key: 65 bytes, an uncompressed P-256 point.
        let key = "BCVxsr7N_eNgVRqvHtD0zTZsEc6-VV-JvLexhqUzORcxaOzi6-AYWXvTBHm4bjyPjs7Vd8pZGH6SRpkNtoIAiw4";
        let bytes = decode_base64url(key).unwrap();
        assert_eq!((bytes.len(), bytes[0]), (65, 4));
    }

    #[test]
    fn the_worker_gets_every_event_in_the_language_shown() {
        set_lang(Lang::De);
        let words: serde_json::Value = serde_json::from_str(&words_json()).unwrap();
        set_lang(Lang::En);
        assert_eq!(words["lang"], "de");
        assert_eq!(
            words["lobby-opened"],
            "Die Lobby ist offen, {} von {} Spielern"
        );
        for e in Event::ALL {
            assert!(words[e.name()].is_string(), "{e}");
        }
        assert_eq!(body(Event::PlayersReached, 3, 4), "3 of 4 players are in");
    }
}
