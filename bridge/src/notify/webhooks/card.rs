//! The Discord status card (`docs/protocol.md` §2.6): one message a
//! `"discord-card"` webhook keeps up to date, showing the selected servers
//! as the list has them when it is sent; where it is posted and edited.

use std::{collections::HashMap, time::SystemTime};

use protocol::{
    watch::ServerFilter,
    webhook::{AllowedMentions, CardEmbed, DiscordCard},
    ServerEntry, ServerKey,
};
use serde_json::Value;
use url::Url;

use super::payload::{escape_markdown, page_url};
use crate::live::feed::FeedState;

/// Servers a card shows at most (the busiest).
pub const MAX_SHOWN: usize = 10;
/// Characters of a name shown at most.
const NAME_CHARS: usize = 100;
/// The longest message id taken from Discord's answer (a snowflake has
/// about 19 digits).
const MAX_ID_LEN: usize = 32;

/// The selected servers in `feed` (each key once: its first entry),
/// busiest first, at most [`MAX_SHOWN`]; and how many were selected.
pub fn pick(
    feed: Option<&FeedState>,
    servers: &ServerFilter,
) -> (Vec<(ServerKey, ServerEntry)>, usize) {
    // By key: a lookup per entry, not a scan of those picked so far (a
    // card over every server of a 10,000-server list).
    let mut first: HashMap<ServerKey, (u64, &ServerEntry)> = HashMap::new();
    for keyed in feed.into_iter().flat_map(|f| f.list().iter()) {
        let Some(key) = keyed.key else { continue };
        if !servers.matches(key, &keyed.entry.name) {
            continue;
        }
        let seen = first.entry(key).or_insert((keyed.id, &keyed.entry));
        if seen.0 > keyed.id {
            *seen = (keyed.id, &keyed.entry);
        }
    }
    let mut picked: Vec<(ServerKey, u64, &ServerEntry)> =
        first.into_iter().map(|(k, (id, e))| (k, id, e)).collect();
    picked.sort_by(|a, b| {
        b.2.stats
            .players
            .current
            .cmp(&a.2.stats.players.current)
            .then_with(|| a.2.name.cmp(&b.2.name))
            .then_with(|| a.0.cmp(&b.0))
    });
    let selected = picked.len();
    let shown = picked
        .into_iter()
        .take(MAX_SHOWN)
        .map(|(k, _, e)| (k, e.clone()))
        .collect();
    (shown, selected)
}

/// The card's message: a line per shown server (name linking to its page
/// when the bridge knows its public address, players, lobby), names with
/// Discord's markdown escaped, and no mentions.
pub fn body(
    shown: &[(ServerKey, ServerEntry)],
    selected: usize,
    public_url: Option<&str>,
    at: SystemTime,
) -> DiscordCard {
    let mut lines = Vec::with_capacity(shown.len() + 1);
    for (key, server) in shown {
        let name: String = server.name.chars().take(NAME_CHARS).collect();
        let name = escape_markdown(&name);
        let page = page_url(public_url, *key);
        let title = if page.starts_with("http") {
            format!("**[{name}]({page})**")
        } else {
            format!("**{name}**")
        };
        let lobby = if server.stats.is_lobby_open {
            "lobby open"
        } else {
            "in game"
        };
        lines.push(format!(
            "{title} · {}/{} players · {lobby}",
            server.stats.players.current, server.stats.players.max
        ));
    }
    if lines.is_empty() {
        lines.push("No server is online.".to_owned());
    } else if selected > shown.len() {
        lines.push(format!("and {} more", selected - shown.len()));
    }
    let players: u64 = shown
        .iter()
        .map(|(_, s)| u64::from(s.stats.players.current))
        .sum();
    DiscordCard {
        embeds: vec![CardEmbed {
            title: format!("Servers: {selected} online, {players} players"),
            description: lines.join("\n"),
            color: 0x58_65_f2,
            timestamp: humantime::format_rfc3339_seconds(at).to_string(),
        }],
        // A name like "@everyone" must not ping a whole community.
        allowed_mentions: AllowedMentions::default(),
    }
}

/// The webhook URL's query parameters but `wait` (a thread's id stays).
fn params_but_wait(hook: &Url) -> Vec<(String, String)> {
    hook.query_pairs()
        .filter(|(k, _)| k != "wait")
        .map(|(k, v)| (k.into_owned(), v.into_owned()))
        .collect()
}

/// Where the first message is posted: the webhook's URL asking Discord
/// to answer with the message (`wait=true`), its other parameters kept.
pub fn post_url(hook: &Url) -> Url {
    let mut url = hook.clone();
    let kept = params_but_wait(hook);
    url.query_pairs_mut()
        .clear()
        .extend_pairs(kept)
        .append_pair("wait", "true");
    url
}

/// Where the message `id` is edited: `{url}/messages/{id}`, the
/// webhook's parameters but `wait` kept (a thread's id).
pub fn edit_url(hook: &Url, id: &str) -> Option<Url> {
    let mut url = hook.clone();
    let kept = params_but_wait(hook);
    url.path_segments_mut()
        .ok()?
        .pop_if_empty()
        .push("messages")
        .push(id);
    if kept.is_empty() {
        url.set_query(None);
    } else {
        url.query_pairs_mut().clear().extend_pairs(kept);
    }
    Some(url)
}

/// The message id in Discord's answer to a post with `wait=true`: digits
/// only, so it can go into a path as it is.
pub fn message_id(answer: &[u8]) -> Option<String> {
    let value: Value = serde_json::from_slice(answer).ok()?;
    let id = value.get("id")?.as_str()?;
    is_message_id(id).then(|| id.to_owned())
}

/// Whether `id` is a message id as Discord makes them (digits only).
pub fn is_message_id(id: &str) -> bool {
    !id.is_empty() && id.len() <= MAX_ID_LEN && id.bytes().all(|b| b.is_ascii_digit())
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn server(name: &str, players: u32) -> ServerEntry {
        let mut s = ServerEntry {
            registrant: None,
            name: name.into(),
            address: Some("203.0.113.1".into()),
            port: Some(51963),
            stats: protocol::Stats::default(),
        };
        s.stats.players.current = players;
        s.stats.players.max = 8;
        s.stats.is_lobby_open = false;
        s
    }

    #[test]
    fn a_card_picks_the_busiest_selected_servers_of_a_large_list() {
        use crate::{
            live::{feed::Feed, keys::Keys},
            visibility::Visibility,
        };
        let mut feed = Feed::new("e", Visibility::new(true), Keys::from_secret(b"test"));
        let servers: Vec<ServerEntry> = (0..5_000u32)
            .map(|i| {
                let mut s = server(&format!("Server {i}"), i % 7);
                s.port = Some(20_000 + i as u16);
                s
            })
            .collect();
        let state = feed.publish(servers).expect("a first list");
        let (shown, selected) = pick(Some(&state), &ServerFilter::All);
        assert_eq!((shown.len(), selected), (MAX_SHOWN, 5_000));
        assert!(shown.iter().all(|(_, s)| s.stats.players.current == 6));
        let names: Vec<&str> = shown.iter().map(|(_, s)| s.name.as_str()).collect();
        let mut sorted = names.clone();
        sorted.sort_unstable();
        assert_eq!(names, sorted, "equal players: by name");
        let some = ServerFilter::NameContains("server 49".into());
        let (shown, selected) = pick(Some(&state), &some);
        // "Server 49" and "Server 490" to "Server 4999".
        assert_eq!((shown.len(), selected), (MAX_SHOWN, 111));
    }

    #[test]
    fn the_card_escapes_names_links_pages_and_pings_nobody() {
        let shown = [(ServerKey(1), server("@everyone **x** ||y||", 3))];
        let body = body(
            &shown,
            11,
            Some("https://lobby.example"),
            SystemTime::UNIX_EPOCH,
        );
        let v = serde_json::to_value(&body).unwrap();
        assert_eq!(v["allowed_mentions"], json!({"parse": []}));
        let text = v["embeds"][0]["description"].as_str().unwrap();
        assert!(text.contains(r"@everyone \*\*x\*\* \|\|y\|\|"), "{text}");
        assert!(text.contains("(https://lobby.example/server/0000000000000001)"));
        assert!(text.contains("3/8 players · in game"));
        assert!(text.contains("and 10 more"));
        // A card is for a channel of viewers: it names no address, ever.
        assert!(!v.to_string().contains("203.0.113.1"), "{v}");
    }

    #[test]
    fn urls_post_with_wait_and_edit_the_message() {
        let hook =
            Url::parse("https://discord.com/api/webhooks/1/tok?thread_id=9&wait=false").unwrap();
        assert_eq!(
            post_url(&hook).as_str(),
            "https://discord.com/api/webhooks/1/tok?thread_id=9&wait=true"
        );
        assert_eq!(
            edit_url(&hook, "42").unwrap().as_str(),
            "https://discord.com/api/webhooks/1/tok/messages/42?thread_id=9"
        );
        let plain = Url::parse("https://discord.com/api/webhooks/1/tok/").unwrap();
        assert_eq!(
            edit_url(&plain, "42").unwrap().as_str(),
            "https://discord.com/api/webhooks/1/tok/messages/42"
        );
        assert_eq!(
            message_id(br#"{"id":"1234","content":""}"#),
            Some("1234".into())
        );
        for bad in [&br#"{"id":"../x"}"#[..], br#"{"id":12}"#, b"{}", b"nope"] {
            assert_eq!(message_id(bad), None);
        }
    }
}
