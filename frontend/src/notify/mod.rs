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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::i18n::{set_lang, Lang};

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
