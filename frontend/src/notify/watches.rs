//! The player's watches: which servers they want to hear about, and on
//! which events (`docs/protocol.md` §2.4). Plain data with a plain-text form
//! for localStorage (beside the favourites, in the same style) and the body
//! of `PUT /api/push/subscription`; tested natively.

use protocol::{
    push::PushWatch,
    watch::{Event, MAX_THRESHOLD},
    ServerKey,
};

/// Watches kept at most: what the bridge takes for one subscription.
pub use protocol::push::MAX_WATCHES;

/// The events a player may choose on the page, in the order shown.
pub const CHOICES: [Event; 3] = [
    Event::ServerOnline,
    Event::LobbyOpened,
    Event::PlayersReached,
];

/// One server the player wants to hear about.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Watch {
    pub key: ServerKey,
    /// The name it had when the watch was made (shown until the list has
    /// it).
    pub name: String,
    /// Some of [`CHOICES`], each once, in that order; never empty.
    pub events: Vec<Event>,
    /// With `players-reached` only: 1 to [`MAX_THRESHOLD`].
    pub threshold: Option<u32>,
}

impl Watch {
    /// A watch from the page's form: the events chosen (in any order) and
    /// the number of players; `None` when nothing valid was chosen.
    pub fn new(key: ServerKey, name: &str, events: &[Event], threshold: u32) -> Option<Watch> {
        let events: Vec<Event> = CHOICES.into_iter().filter(|e| events.contains(e)).collect();
        let wants_players = events.contains(&Event::PlayersReached);
        if events.is_empty() || (wants_players && !(1..=MAX_THRESHOLD).contains(&threshold)) {
            return None;
        }
        Some(Watch {
            key,
            name: one_line(name),
            events,
            threshold: wants_players.then_some(threshold),
        })
    }

    /// Whether this watch wants `event`.
    pub fn wants(&self, event: Event) -> bool {
        self.events.contains(&event)
    }

    /// The watch as the bridge keeps it (without the name).
    pub fn to_push(&self) -> PushWatch {
        PushWatch {
            key: self.key,
            events: self.events.clone(),
            threshold: self.threshold,
        }
    }
}

/// The first line of the stored watches: anything else is not ours.
const HEADER: &str = "lobby-watches-1";

/// Tabs and line breaks in a server's name would break the line format.
fn one_line(s: &str) -> String {
    s.replace(['\t', '\n', '\r'], " ")
}

/// Reads stored watches (a header line, then `key TAB events TAB threshold
/// TAB name` lines, events comma-separated). A value without the header
/// gives `None`; bad lines, repeated keys and lines past the cap are
/// dropped.
pub fn parse_watches(text: &str) -> Option<Vec<Watch>> {
    let mut lines = text.lines();
    if lines.next() != Some(HEADER) {
        return None;
    }
    let mut list: Vec<Watch> = Vec::new();
    for line in lines {
        let mut parts = line.splitn(4, '\t');
        let (Some(key), Some(events), Some(threshold), Some(name)) =
            (parts.next(), parts.next(), parts.next(), parts.next())
        else {
            continue;
        };
        let Ok(key) = key.parse::<ServerKey>() else {
            continue;
        };
        let events: Option<Vec<Event>> = events.split(',').map(|e| e.parse().ok()).collect();
        let threshold = if threshold.is_empty() {
            Some(0)
        } else {
            threshold.parse().ok()
        };
        let (Some(events), Some(threshold)) = (events, threshold) else {
            continue;
        };
        let Some(watch) = Watch::new(key, name, &events, threshold) else {
            continue;
        };
        if !list.iter().any(|w| w.key == key) {
            list.push(watch);
        }
        if list.len() == MAX_WATCHES {
            break;
        }
    }
    Some(list)
}

/// The stored form of `list` ([`parse_watches`] reads it back).
pub fn watches_text(list: &[Watch]) -> String {
    let mut out = String::from(HEADER);
    for w in list {
        let events: Vec<&str> = w.events.iter().map(|e| e.name()).collect();
        out.push('\n');
        out.push_str(&w.key.to_string());
        out.push('\t');
        out.push_str(&events.join(","));
        out.push('\t');
        if let Some(t) = w.threshold {
            out.push_str(&t.to_string());
        }
        out.push('\t');
        out.push_str(&one_line(&w.name));
    }
    out
}

/// `list` with `watch` in place of the one for its key (or added), or
/// without the watch for `key` (`watch` `None`); `None` when adding would
/// pass [`MAX_WATCHES`].
pub fn with_watch(list: &[Watch], key: ServerKey, watch: Option<Watch>) -> Option<Vec<Watch>> {
    let mut out: Vec<Watch> = list.iter().filter(|w| w.key != key).cloned().collect();
    if let Some(w) = watch {
        if out.len() >= MAX_WATCHES {
            return None;
        }
        out.push(w);
    }
    Some(out)
}

/// The body of `PUT /api/push/subscription`: `subscription` is the
/// browser's `PushSubscription.toJSON()` as JSON text (`JSON.stringify`
/// wrote it, so it is JSON), and every watch of this browser, since the
/// request replaces that subscription's watches.
pub fn subscription_body(subscription: &str, watches: &[Watch]) -> String {
    // Written by hand (keys are hex digits, events fixed names and the
    // threshold a number: nothing to escape), which costs the bundle less
    // than serialising the protocol's `WatchOnWire`; the tests read it
    // back with the bridge's own `PushRequest::parse`.
    let mut out = format!(r#"{{"subscription":{subscription},"watches":["#);
    for (i, w) in watches.iter().enumerate() {
        let events: Vec<String> = w.events.iter().map(|e| format!("\"{e}\"")).collect();
        let comma = if i > 0 { "," } else { "" };
        out.push_str(&format!(
            r#"{comma}{{"key":"{}","events":[{}]"#,
            w.key,
            events.join(",")
        ));
        if let Some(t) = w.threshold {
            out.push_str(&format!(r#","threshold":{t}"#));
        }
        out.push('}');
    }
    out.push_str("]}");
    out
}

/// The body of `DELETE /api/push/subscription`.
pub fn unsubscribe_body(subscription: &str) -> String {
    format!(r#"{{"subscription":{subscription}}}"#)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn key(n: u64) -> ServerKey {
        ServerKey(n)
    }

    #[test]
    fn a_watch_keeps_its_events_in_order_and_a_threshold_only_for_players() {
        let w = Watch::new(
            key(1),
            "Feuer\tland",
            &[Event::LobbyOpened, Event::ServerOnline],
            7,
        )
        .expect("valid");
        assert_eq!(w.events, [Event::ServerOnline, Event::LobbyOpened]);
        assert_eq!((w.threshold, w.name.as_str()), (None, "Feuer land"));
        let w = Watch::new(key(1), "x", &[Event::PlayersReached], 3).expect("valid");
        assert_eq!(w.threshold, Some(3));
        assert!(Watch::new(key(1), "x", &[], 3).is_none(), "nothing chosen");
        assert!(Watch::new(key(1), "x", &[Event::PlayersReached], 0).is_none());
        assert!(Watch::new(key(1), "x", &[Event::PlayersReached], MAX_THRESHOLD + 1).is_none());
        assert!(
            Watch::new(key(1), "x", &[Event::ServerOffline], 0).is_none(),
            "not offered"
        );
    }

    #[test]
    fn stored_watches_read_back_and_bad_lines_are_dropped() {
        let list = vec![
            Watch::new(key(0xff), "Feuerland", &[Event::ServerOnline], 0).unwrap(),
            Watch::new(
                key(0xabc),
                "Nord\nlicht",
                &[Event::LobbyOpened, Event::PlayersReached],
                4,
            )
            .unwrap(),
        ];
        let text = watches_text(&list);
        assert_eq!(parse_watches(&text), Some(list.clone()));
        assert_eq!(parse_watches("something else"), None);
        let noisy = format!(
            "{text}\nnot a key\tserver-online\t\tx\n00000000000000ff\tlobby-opened\t\tagain\n\
             0000000000000001\tnope\t\tx\n0000000000000002\tplayers-reached\t\tno threshold\n\
             0000000000000003\tserver-online"
        );
        assert_eq!(parse_watches(&noisy), Some(list));
        let many: String = (0..40)
            .map(|n| format!("\n{}\tserver-online\t\tS{n}", key(n)))
            .collect();
        let parsed = parse_watches(&format!("{HEADER}{many}")).unwrap();
        assert_eq!(parsed.len(), MAX_WATCHES, "capped");
    }

    #[test]
    fn adding_replaces_the_same_key_and_stops_at_the_cap() {
        let w = |n| Watch::new(key(n), "s", &[Event::ServerOnline], 0).unwrap();
        let list = with_watch(&[], key(1), Some(w(1))).unwrap();
        let list = with_watch(&list, key(1), Some(w(1))).unwrap();
        assert_eq!(list.len(), 1);
        let full: Vec<Watch> = (0..MAX_WATCHES as u64).map(w).collect();
        assert!(with_watch(&full, key(99), Some(w(99))).is_none());
        assert_eq!(
            with_watch(&full, key(3), Some(w(3))).unwrap().len(),
            MAX_WATCHES
        );
        assert_eq!(
            with_watch(&full, key(3), None).unwrap().len(),
            MAX_WATCHES - 1
        );
    }

    #[test]
    fn the_request_bodies_carry_the_subscription_and_every_watch() {
        let list = vec![
            Watch::new(key(1), "a", &[Event::ServerOnline], 0).unwrap(),
            Watch::new(key(2), "b", &[Event::PlayersReached], 3).unwrap(),
        ];
        let p256dh = "BA".to_owned() + &"A".repeat(85);
        let sub = format!(
            r#"{{"endpoint":"https://push.example/x","keys":{{"p256dh":"{p256dh}","auth":"AAAAAAAAAAAAAAAAAAAAAA"}}}}"#
        );
        let text = subscription_body(&sub, &list);
        // What the bridge reads it with.
        let read =
            protocol::push::PushRequest::parse(text.as_bytes(), protocol::push::Schemes::Https)
                .expect("the bridge takes it");
        let pushed: Vec<PushWatch> = list.iter().map(Watch::to_push).collect();
        assert_eq!(read.watches, pushed);
        let body: serde_json::Value = serde_json::from_str(&text).expect("JSON");
        assert_eq!(body["subscription"]["endpoint"], "https://push.example/x");
        assert_eq!(
            body["watches"],
            serde_json::json!([
                {"key": "0000000000000001", "events": ["server-online"]},
                {"key": "0000000000000002", "events": ["players-reached"], "threshold": 3},
            ])
        );
        let text = unsubscribe_body(&sub);
        protocol::push::PushRemoval::parse(text.as_bytes()).expect("the bridge takes it");
    }
}
