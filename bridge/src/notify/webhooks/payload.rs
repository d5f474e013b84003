//! What a webhook is sent: the `"standard"` body signed as Standard
//! Webhooks 1.0 prescribes, or Discord's execute-webhook message
//! (`docs/protocol.md` §2.4). The server's name is a stranger's text: it
//! is cut, and Discord is told to ping nobody whatever it holds.

use std::{fmt::Write as _, time::SystemTime};

use base64::{engine::general_purpose::STANDARD as BASE64, Engine as _};
use hmac::{Hmac, Mac};
use protocol::{
    watch::Event,
    webhook::{EventServer, Kind, WebhookPayload},
    ServerEntry, ServerKey,
};
use serde_json::{json, Value};
use sha2::Sha256;

use crate::{error::Error, visibility::Visibility};

/// Random bytes in a secret (Standard Webhooks asks for 24 to 64).
const SECRET_BYTES: usize = 32;
/// A name is cut to this many characters in a Discord message.
const NAME_CHARS: usize = 100;

/// A webhook's signing secret: `whsec_` + base64 of its key. `Debug`
/// hides it.
#[derive(Clone, PartialEq, Eq)]
pub struct Secret {
    text: String,
    key: Vec<u8>,
}

impl std::fmt::Debug for Secret {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Secret(..)")
    }
}

impl Secret {
    /// A new random secret.
    pub fn generate() -> Result<Self, Error> {
        let mut key = vec![0u8; SECRET_BYTES];
        getrandom::fill(&mut key).map_err(Error::Random)?;
        Ok(Self {
            text: format!("whsec_{}", BASE64.encode(&key)),
            key,
        })
    }

    /// A stored secret; `None` unless `whsec_` + base64 of 24 to 64 bytes.
    pub fn parse(text: &str) -> Option<Self> {
        let key = BASE64.decode(text.strip_prefix("whsec_")?).ok()?;
        (24..=64).contains(&key.len()).then(|| Self {
            text: text.to_owned(),
            key,
        })
    }

    /// The secret as the admin is shown it once.
    pub fn expose(&self) -> &str {
        &self.text
    }

    /// `webhook-signature`'s value: `v1,` + base64 of the HMAC-SHA256 of
    /// `ID.TIMESTAMP.BODY` under the key.
    pub fn sign(&self, id: &str, timestamp: u64, body: &[u8]) -> String {
        let Ok(mut mac) = Hmac::<Sha256>::new_from_slice(&self.key) else {
            unreachable!("HMAC takes a key of any length");
        };
        mac.update(id.as_bytes());
        mac.update(b".");
        mac.update(timestamp.to_string().as_bytes());
        mac.update(b".");
        mac.update(body);
        format!("v1,{}", BASE64.encode(mac.finalize().into_bytes()))
    }
}

/// A server's page as notifications link to it: absolute under
/// `public_url` (`--public-url`, without a trailing `/`) when the bridge
/// knows its public address, else the path.
pub fn page_url(public_url: Option<&str>, key: ServerKey) -> String {
    match public_url {
        Some(base) => format!("{base}/server/{key}"),
        None => format!("/server/{key}"),
    }
}

/// What a notification is about: an event (or a test) of one server.
#[derive(Debug, Clone)]
pub struct Notice<'a> {
    pub kind: Kind,
    pub key: ServerKey,
    pub server: &'a ServerEntry,
    pub at: SystemTime,
    /// The server's page (absolute with `--public-url`).
    pub page: String,
    /// Who may see what: a notification goes to viewers.
    pub visibility: Visibility,
}

impl Notice<'_> {
    fn timestamp(&self) -> String {
        humantime::format_rfc3339_millis(self.at).to_string()
    }

    /// The server as every notification carries it (addresses only
    /// where the bridge shows them to viewers).
    pub fn data(&self) -> EventServer {
        EventServer::seen(
            self.key,
            self.server,
            self.visibility.viewers(),
            self.page.clone(),
        )
    }

    /// The `"standard"` body: `{"type","timestamp","data":{…}}`.
    pub fn standard(&self) -> Vec<u8> {
        protocol::json::to_vec(&WebhookPayload {
            kind: self.kind,
            timestamp: self.timestamp(),
            data: self.data(),
        })
    }

    /// The `"discord"` body: a line of text and an embed with the name,
    /// players, lobby and mode, linking to the page when it is absolute.
    pub fn discord(&self) -> Vec<u8> {
        let s = self.server;
        let name: String = s.name.chars().take(NAME_CHARS).collect();
        let players = format!("{}/{}", s.stats.players.current, s.stats.players.max);
        let what = match self.kind {
            Kind::Event(Event::ServerOnline) => format!("is online ({players} players)"),
            Kind::Event(Event::ServerOffline) => "went offline".to_owned(),
            Kind::Event(Event::LobbyOpened) => format!("opened its lobby ({players} players)"),
            Kind::Event(Event::PlayersReached) => format!("has {players} players"),
            Kind::Test => {
                "— a test from the lobby: this channel will get its notifications".to_owned()
            }
        };
        let color = match self.kind {
            Kind::Event(Event::ServerOffline) => 0x99_99_99,
            Kind::Event(Event::LobbyOpened) => 0x2e_a0_43,
            _ => 0x58_65_f2,
        };
        let lobby = if s.stats.is_lobby_open {
            "open"
        } else {
            "in game"
        };
        // Discord formats an embed's title too: `**b**` would be bold,
        // `||x||` a spoiler.
        let mut embed = json!({
            "title": escape_markdown(&name),
            "color": color,
            "timestamp": self.timestamp(),
            "fields": [
                {"name": "Players", "value": players, "inline": true},
                {"name": "Lobby", "value": lobby, "inline": true},
                {"name": "Mode", "value": s.stats.gameplay_mode.label(), "inline": true},
            ],
        });
        if self.page.starts_with("http") {
            embed["url"] = Value::from(self.page.as_str());
        }
        let mut content = escape_markdown(&name);
        let _ = write!(content, " {what}");
        json!({
            "content": content,
            "embeds": [embed],
            // A name like "@everyone" must not ping a whole community.
            "allowed_mentions": {"parse": []},
        })
        .to_string()
        .into_bytes()
    }
}

/// `text` with Discord's markdown characters escaped, so a name shows as
/// written (no links, no formatting).
pub(crate) fn escape_markdown(text: &str) -> String {
    let mut out = String::with_capacity(text.len() + 8);
    for c in text.chars() {
        if matches!(
            c,
            '\\' | '*'
                | '_'
                | '~'
                | '`'
                | '|'
                | '>'
                | '['
                | ']'
                | '('
                | ')'
                | '#'
                | '-'
                | '<'
                | ':'
        ) {
            out.push('\\');
        }
        out.push(if c.is_control() { ' ' } else { c });
    }
    out
}

#[cfg(test)]
mod tests {
    use protocol::{GameplayMode, Players, Stats};

    use super::*;

    fn server(name: &str) -> ServerEntry {
        ServerEntry {
            registrant: None,
            name: name.into(),
            address: Some("203.0.113.5".into()),
            port: Some(7777),
            stats: Stats {
                players: Players { current: 2, max: 4 },
                is_lobby_open: true,
                gameplay_mode: GameplayMode::StandardAB,
            },
        }
    }

    fn notice(server: &ServerEntry, hide_addresses: bool) -> Notice<'_> {
        Notice {
            kind: Kind::Event(Event::LobbyOpened),
            key: ServerKey(0xab),
            server,
            at: SystemTime::UNIX_EPOCH + std::time::Duration::from_millis(1_700_000_000_123),
            page: "https://lobby.example/server/00000000000000ab".into(),
            visibility: Visibility::new(hide_addresses),
        }
    }

    #[test]
    fn secrets_round_trip_and_sign_as_the_spec_says() {
        let s = Secret::generate().unwrap();
        assert!(s.expose().starts_with("whsec_"));
        assert_eq!(Secret::parse(s.expose()), Some(s.clone()));
        assert_eq!(format!("{s:?}"), "Secret(..)");
        assert!(Secret::parse("whsec_AAAA").is_none(), "too short");
        assert!(Secret::parse("AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA").is_none());
        // Standard Webhooks' published example (its libraries' tests).
        let spec = Secret::parse("whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw").unwrap();
        assert_eq!(
            spec.sign(
                "msg_p5jXN8AQM9LWM0D4loKWxJek",
                1614265330,
                br#"{"test": 2432232314}"#
            ),
            "v1,g0hM9SsE+OTPJTGt/tmIKtSyZlE3uFJELVlNIOLJ1OE="
        );
    }

    #[test]
    fn the_standard_body_has_the_contracts_fields() {
        let s = server("Feuerland");
        let v: Value = serde_json::from_slice(&notice(&s, false).standard()).unwrap();
        assert_eq!(v["type"], "lobby-opened");
        assert_eq!(v["timestamp"], "2023-11-14T22:13:20.123Z");
        let d = &v["data"];
        assert_eq!(d["key"], "00000000000000ab");
        assert_eq!(d["name"], "Feuerland");
        assert_eq!(d["players"], json!({"current":2,"max":4}));
        assert_eq!(
            (d["isLobbyOpen"].clone(), d["gameplayMode"].clone()),
            (json!(true), json!(2))
        );
        assert_eq!(d["url"], "https://lobby.example/server/00000000000000ab");
        assert_eq!(
            (d["address"].clone(), d["port"].clone()),
            (json!("203.0.113.5"), json!(7777))
        );
        let v: Value = serde_json::from_slice(&notice(&s, true).standard()).unwrap();
        assert!(v["data"].get("address").is_none() && v["data"].get("port").is_none());
        // Hidden: neither body, the standard one (a push's too) nor
        // Discord's, names the address anywhere.
        for body in [notice(&s, true).standard(), notice(&s, true).discord()] {
            let text = String::from_utf8(body).unwrap();
            assert!(!text.contains("203.0.113.5"), "{text}");
        }
    }

    #[test]
    fn discord_messages_ping_nobody_and_show_names_as_written() {
        let s = server("@everyone [x](http://evil) **b**");
        let v: Value = serde_json::from_slice(&notice(&s, false).discord()).unwrap();
        assert_eq!(v["allowed_mentions"], json!({"parse": []}));
        let content = v["content"].as_str().unwrap();
        assert!(
            content.starts_with(
                r"@everyone \[x\]\(http\://evil\) \*\*b\*\* opened its lobby (2/4 players)"
            ),
            "{content}"
        );
        let embed = &v["embeds"][0];
        assert_eq!(embed["title"], r"@everyone \[x\]\(http\://evil\) \*\*b\*\*");
        assert_eq!(
            embed["url"],
            "https://lobby.example/server/00000000000000ab"
        );
        assert_eq!(embed["fields"][0]["value"], "2/4");
        assert_eq!(embed["fields"][1]["value"], "open");
        assert!(v.to_string().len() < 2000);
        // Spoilers, underlines, strikes, code and headings stay text, in
        // the line and in the embed's title alike.
        let s2 = server("||spoiler|| __u__ ~~s~~ `c` # h");
        let v: Value = serde_json::from_slice(&notice(&s2, false).discord()).unwrap();
        let escaped = r"\|\|spoiler\|\| \_\_u\_\_ \~\~s\~\~ \`c\` \# h";
        assert_eq!(v["embeds"][0]["title"], escaped);
        assert!(v["content"].as_str().unwrap().starts_with(escaped), "{v}");
        assert_eq!(v["allowed_mentions"], json!({"parse": []}));
        // A relative page is no link.
        let mut n = notice(&s, false);
        n.page = "/server/00000000000000ab".into();
        let v: Value = serde_json::from_slice(&n.discord()).unwrap();
        assert!(v["embeds"][0].get("url").is_none());
    }
}
