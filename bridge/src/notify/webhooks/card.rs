//! The Discord status card (`docs/protocol.md` §2.6): one message a
//! `"discord-card"` webhook keeps up to date, showing the selected servers
//! as the list has them when it is sent; where it is posted and edited,
//! and how a card's delivery is sent: through its send slot in the
//! database, so that the bridges sharing it post or edit a card one at a
//! time, at most every [`EVERY`].

use std::{
    collections::HashMap,
    time::{Duration, SystemTime},
};

use protocol::{
    watch::ServerFilter,
    webhook::{AllowedMentions, CardEmbed, DiscordCard},
    ServerEntry, ServerKey,
};
use serde_json::Value;
use url::Url;

use master::throttled;
use reqwest::header::HeaderMap;

use super::{
    deliver,
    payload::{escape_markdown, page_url},
    Hook, Webhooks,
};
use crate::{
    db::store::{now_ms, CardClaim},
    live::feed::FeedState,
    notify::channel::Sent,
};

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

/// A status card is posted or edited at most once per this, by all the
/// bridges on its database together.
pub const EVERY: Duration = Duration::from_secs(10);
/// How long a bridge holds a status card's send slot at most: longer
/// than an edit and the post after its 404 together (two attempts'
/// timeouts) and their storing, so the slot is never taken from a bridge
/// still sending; a bridge that dies while sending holds it this long.
pub const LEASE: Duration = Duration::from_secs(30);
/// The event name of a status card's deliveries.
pub(super) const EVENT: &str = "card";
/// A card's deliveries not yet done at most: one being sent and one
/// waiting, which shows the list as it is when it is sent (every change
/// in between is in it).
pub(super) const PENDING: u32 = 2;
/// Bytes read of Discord's answer to a post at most (the message, with
/// its embed, as JSON).
const MAX_POST_ANSWER: usize = 64 * 1024;

/// A card's message without its timestamp: what decides whether an edit
/// would change what the channel shows.
fn card_facts(body: &[u8]) -> Option<Value> {
    let mut v: Value = serde_json::from_slice(body).ok()?;
    if let Some(embed) = v.pointer_mut("/embeds/0").and_then(Value::as_object_mut) {
        embed.remove("timestamp");
    }
    Some(v)
}

impl Webhooks {
    /// The status card of `servers` as it would be sent now: the one
    /// message both a card's delivery and the admin page's preview show.
    pub fn card(&self, servers: &ServerFilter) -> DiscordCard {
        let feed = self.list.get().and_then(|l| l.borrow().feed.clone());
        let (shown, selected) = pick(feed.as_deref(), servers);
        body(
            &shown,
            selected,
            self.settings.public_url.as_deref(),
            SystemTime::now(),
        )
    }

    /// One attempt of a status card: posted (first, or after its message
    /// was deleted) or edited, showing the list as it is now; held back
    /// until [`EVERY`] after its last post or edit.
    pub(super) async fn send_card(&self, hook: &Hook) -> Sent {
        let _one_at_a_time = hook.sending.lock().await;
        let id = hook.id.clone();
        let now = now_ms();
        let (every, lease) = (EVERY.as_millis() as i64, LEASE.as_millis() as i64);
        let (msg, claim) = match self
            .with_store(move |s| s.claim_card(&id, now, every, lease))
            .await
        {
            Ok(CardClaim::Won { msg, claim }) => (msg, claim),
            Ok(CardClaim::Later { at }) => {
                let wait = at.saturating_sub(now).max(0);
                return Sent::Later(Duration::from_millis(wait.unsigned_abs()));
            }
            Ok(CardClaim::Gone) => return Sent::Dropped("deleted"),
            Err(e) => {
                throttled!(warn, error = %e, "a status card's message cannot be read");
                return Sent::Retry {
                    status: None,
                    after: None,
                    why: "database unreachable",
                };
            }
        };
        let sent = self.send_claimed(hook, msg, claim).await;
        if !matches!(
            sent,
            Sent::Delivered(_) | Sent::Retry { after: Some(_), .. }
        ) {
            // Nothing stored: the slot is given back as it was.
            self.card_released(hook, claim).await;
        }
        sent
    }

    /// [`Self::send_card`] once this bridge holds the card's slot `claim`
    /// (see [`LEASE`]): a post or an edit that succeeds, and a wait
    /// Discord asks for, give it back as they are stored.
    async fn send_claimed(&self, hook: &Hook, msg: Option<String>, claim: i64) -> Sent {
        let body = protocol::json::to_vec(&self.card(&hook.spec.servers));
        // A stored id that is not one (the row is trusted no more than an
        // answer) is posted anew.
        let msg = msg.filter(|m| is_message_id(m));
        if let Some(msg) = msg {
            let unchanged = hook
                .shown
                .lock()
                .unwrap_or_else(|p| p.into_inner())
                .as_ref()
                .is_some_and(|(m, b)| *m == msg && card_facts(b) == card_facts(&body));
            if unchanged {
                return Sent::Dropped("unchanged");
            }
            let Some(url) = edit_url(&hook.url, &msg) else {
                return Sent::Failed {
                    status: None,
                    why: "not a webhook URL",
                };
            };
            let (attempt, _) = self
                .sender
                .exchange(
                    reqwest::Method::PATCH,
                    &url,
                    HeaderMap::new(),
                    body.clone(),
                    deliver::MAX_ANSWER,
                )
                .await;
            match attempt {
                Sent::Delivered(code) => {
                    self.card_sent(hook, &msg, body, claim).await;
                    return Sent::Delivered(code);
                }
                // Deleted in the channel: a new message.
                Sent::Failed {
                    status: Some(404), ..
                } => {}
                Sent::Retry { status, after, why } => {
                    self.card_held(hook, Some(&msg), after, claim).await;
                    return Sent::Retry { status, after, why };
                }
                other => return other,
            }
        }
        let (attempt, answer) = self
            .sender
            .exchange(
                reqwest::Method::POST,
                &post_url(&hook.url),
                HeaderMap::new(),
                body.clone(),
                MAX_POST_ANSWER,
            )
            .await;
        match attempt {
            Sent::Delivered(code) => match message_id(&answer) {
                Some(msg) => {
                    self.card_sent(hook, &msg, body, claim).await;
                    Sent::Delivered(code)
                }
                None => Sent::Failed {
                    status: Some(code),
                    why: "no message id in the answer",
                },
            },
            Sent::Retry { status, after, why } => {
                self.card_held(hook, None, after, claim).await;
                Sent::Retry { status, after, why }
            }
            other => other,
        }
    }

    /// Holds every delivery of a card back for the wait Discord asked for
    /// (a 429's), as if it had been edited then: none of them is sent
    /// sooner, on any bridge. The slot `claim` is given back.
    async fn card_held(&self, hook: &Hook, msg: Option<&str>, after: Option<Duration>, claim: i64) {
        let Some(after) = after else { return };
        let after = i64::try_from(after.as_millis()).unwrap_or(i64::MAX / 4);
        let every = EVERY.as_millis() as i64;
        let edit_ms = now_ms().saturating_add(after).saturating_sub(every);
        let (id, msg) = (hook.id.clone(), msg.map(str::to_owned));
        if let Err(e) = self
            .with_store(move |s| s.set_card(&id, msg.as_deref(), edit_ms, claim))
            .await
        {
            throttled!(warn, error = %e, "a status card's wait cannot be stored");
        }
    }

    /// Notes a card's message `msg` as posted or edited now with `body`,
    /// giving back the slot `claim`.
    async fn card_sent(&self, hook: &Hook, msg: &str, body: Vec<u8>, claim: i64) {
        *hook.shown.lock().unwrap_or_else(|p| p.into_inner()) = Some((msg.to_owned(), body));
        let (id, stored) = (hook.id.clone(), msg.to_owned());
        if let Err(e) = self
            .with_store(move |s| s.set_card(&id, Some(&stored), now_ms(), claim))
            .await
        {
            throttled!(warn, error = %e, "a status card's message cannot be stored; it may be posted again");
        }
    }

    /// Gives back the card's slot `claim` when nothing was stored (else
    /// it is free again when its lease ends).
    async fn card_released(&self, hook: &Hook, claim: i64) {
        let id = hook.id.clone();
        if let Err(e) = self.with_store(move |s| s.release_card(&id, claim)).await {
            throttled!(warn, error = %e, "a status card's slot cannot be given back; it is free again within {} s", LEASE.as_secs());
        }
    }
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
