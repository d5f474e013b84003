//! The admin's webhook requests (`protocol::watch`) and what a webhook
//! sends about a server whose name a stranger chose
//! (`bridge::notify::webhooks::payload`).

use std::time::{Duration, SystemTime};

use bridge::notify::webhooks::{
    address::{literal_allowed, Reach},
    payload::Notice,
};
use protocol::{
    watch::{Event, WebhookPatch, WebhookSpec},
    webhook::Kind,
    GameplayMode, Players, ServerEntry, ServerKey, Stats,
};
use serde_json::Value;

/// Input: a request body, as `POST` and `PATCH /api/admin/webhooks` read
/// it; the same bytes (lossily as text) are also a server's name.
///
/// Checks: never panics; an accepted request is written back by `to_json`
/// as one that reads as itself; an IP-literal host that passes the
/// address rule is a public address; whatever the name, both bodies are
/// JSON that carry it (the Discord one cut, escaped, pinging nobody).
pub fn webhook(data: &[u8]) {
    if let Ok(spec) = WebhookSpec::parse(data) {
        let again = WebhookSpec::from_value(&spec.to_json());
        assert_eq!(
            again.as_ref(),
            Ok(&spec),
            "{} does not read back",
            spec.to_json()
        );
        // The bridge parses the URL fully before it checks its address.
        let parsed = url::Url::parse(&spec.url).ok();
        if let Some(url) = parsed {
            if let Some(url::Host::Ipv4(ip)) = url.host() {
                assert_eq!(
                    literal_allowed(&url, Reach::Public),
                    gamequery::screen::is_global(ip.into())
                );
            }
        }
    }
    let _ = WebhookPatch::parse(data);

    let name = String::from_utf8_lossy(data).into_owned();
    let server = ServerEntry {
        registrant: None,
        name: name.clone(),
        address: Some("203.0.113.9".into()),
        port: Some(20000),
        stats: Stats {
            players: Players { current: 2, max: 4 },
            is_lobby_open: true,
            gameplay_mode: GameplayMode::StandardA,
        },
    };
    let notice = Notice {
        kind: Kind::Event(Event::LobbyOpened),
        key: ServerKey(1),
        server: &server,
        at: SystemTime::UNIX_EPOCH + Duration::from_secs(1_700_000_000),
        page: "https://lobby.example/server/0000000000000001".into(),
        visibility: bridge::visibility::Visibility::new(true),
    };
    let standard: Value = serde_json::from_slice(&notice.standard()).expect("standard JSON");
    assert_eq!(standard["data"]["name"].as_str(), Some(name.as_str()));
    assert!(standard["data"].get("address").is_none());
    let discord: Value = serde_json::from_slice(&notice.discord()).expect("discord JSON");
    assert_eq!(
        discord["allowed_mentions"]["parse"],
        Value::Array(Vec::new())
    );
    let content = discord["content"].as_str().expect("content");
    assert!(content.chars().count() <= 2000, "{content}");
}
