use serde_json::json;

use super::*;

fn spec(v: Value) -> Result<WebhookSpec, FieldError> {
    WebhookSpec::parse(v.to_string().as_bytes())
}

fn field(v: Value) -> String {
    spec(v).expect_err("refused").field.into_owned()
}

fn base() -> Value {
    json!({"url":"https://discord.com/api/webhooks/1/abc","format":"discord",
           "events":["lobby-opened","server-online"],"servers":"all"})
}

#[test]
fn a_valid_request_is_read_with_defaults_and_round_trips() {
    let s = spec(base()).unwrap();
    assert_eq!(s.format, Format::Discord);
    assert_eq!(
        s.events,
        [Event::ServerOnline, Event::LobbyOpened],
        "sorted"
    );
    assert_eq!(s.servers, ServerFilter::All);
    assert_eq!((s.threshold, s.cooldown), (None, DEFAULT_COOLDOWN));
    assert_eq!(WebhookSpec::from_value(&s.to_json()).unwrap(), s);

    let s = spec(json!({"url":"http://example.com/hook","format":"standard",
        "events":["players-reached"],"servers":{"keys":["00000000000000ff","00000000000000ff"]},
        "threshold":3,"cooldown":0}))
    .unwrap();
    assert_eq!(
        s.servers,
        ServerFilter::Keys(vec![ServerKey(255)]),
        "each key once"
    );
    assert_eq!((s.threshold, s.cooldown), (Some(3), 0));
    assert_eq!(WebhookSpec::from_value(&s.to_json()).unwrap(), s);
}

#[test]
fn each_bad_field_is_named() {
    let with = |k: &str, v: Value| {
        let mut b = base();
        b[k] = v;
        b
    };
    assert_eq!(field(json!([])), "body");
    assert_eq!(field(with("extra", json!(1))), "body");
    assert_eq!(WebhookSpec::parse(b"{").unwrap_err().field, "body");
    assert_eq!(
        WebhookSpec::parse(&vec![b' '; MAX_REQUEST_BYTES + 1])
            .unwrap_err()
            .field,
        "body"
    );
    for url in [
        json!(1),
        json!("not a url"),
        json!("ftp://example.com/"),
        json!("https://user:pw@example.com/"),
        json!("https://example.com/#frag"),
        json!(format!("https://example.com/{}", "a".repeat(MAX_URL_LEN))),
        json!("file:///etc/passwd"),
        json!("https://exa mple.com/"),
        json!("http:///path"),
        json!("http://:80/"),
        json!("https:example.com"),
        json!("https://x@example.com/"),
        json!("https://example.com:0/"),
        json!("http://[2a00:1450::1]:00/hook"),
    ] {
        assert_eq!(field(with("url", url.clone())), "url", "{url}");
    }
    for url in [
        "https://[::1]:8080/hook",
        "https://example.com:10/",
        "https://example.com:/",
        "HTTP://Example.com",
        "https://discord.com/api/webhooks/1/abc?wait=true",
    ] {
        assert!(
            WebhookSpec::from_value(&with("url", json!(url))).is_ok(),
            "{url}"
        );
    }
    assert_eq!(field(with("format", json!("slack"))), "format");
    for events in [
        json!([]),
        json!("server-online"),
        json!(["nope"]),
        json!(["lobby-opened", "lobby-opened"]),
    ] {
        assert_eq!(field(with("events", events.clone())), "events", "{events}");
    }
    for servers in [
        json!("some"),
        json!({"keys":[]}),
        json!({"keys":["XYZ"]}),
        json!({"keys":(0..=MAX_KEYS).map(|i| format!("{i:016x}")).collect::<Vec<_>>()}),
        json!({"nameContains":""}),
        json!({"nameContains":"x".repeat(MAX_NAME_CONTAINS + 1)}),
        json!({"nameContains":"a\u{7}"}),
        json!({"keys":["00000000000000ff"],"nameContains":"a"}),
        json!(null),
    ] {
        assert_eq!(
            field(with("servers", servers.clone())),
            "servers",
            "{servers}"
        );
    }
    assert_eq!(
        field(with("threshold", json!(2))),
        "threshold",
        "not for these events"
    );
    let players = with("events", json!(["players-reached"]));
    assert_eq!(field(players.clone()), "threshold", "required");
    for t in [json!(0), json!(256), json!(-1), json!(1.5), json!("3")] {
        let mut b = players.clone();
        b["threshold"] = t;
        assert_eq!(field(b), "threshold");
    }
    for c in [json!(-1), json!(MAX_COOLDOWN + 1), json!("600")] {
        assert_eq!(field(with("cooldown", c)), "cooldown");
    }
}

#[test]
fn name_filters_ignore_case_and_keys_match_exactly() {
    let f = match spec({
        let mut b = base();
        b["servers"] = json!({"nameContains":"FeuerLand"});
        b
    })
    .unwrap()
    .servers
    {
        f @ ServerFilter::NameContains(_) => f,
        other => panic!("{other:?}"),
    };
    assert!(f.matches(ServerKey(1), "Das FEUERLAND 2"));
    assert!(!f.matches(ServerKey(1), "Feuer Land"));
    let keys = ServerFilter::Keys(vec![ServerKey(7)]);
    assert!(keys.matches(ServerKey(7), "x"));
    assert!(!keys.matches(ServerKey(8), "x"));
}

#[test]
fn patches_and_ids() {
    assert_eq!(
        WebhookPatch::parse(br#"{"enabled":false}"#).unwrap(),
        WebhookPatch { enabled: false }
    );
    assert_eq!(
        WebhookPatch::parse(br#"{"enabled":1}"#).unwrap_err().field,
        "enabled"
    );
    assert_eq!(
        WebhookPatch::parse(br#"{"enabled":true,"url":"x"}"#)
            .unwrap_err()
            .field,
        "body"
    );
    assert!(is_webhook_id("wh_0123456789abcdef"));
    assert!(!is_webhook_id("wh_0123456789ABCDEF"));
    assert!(!is_webhook_id("wh_0123"));
    assert_eq!("lobby-opened".parse::<Event>(), Ok(Event::LobbyOpened));
    assert_eq!(
        serde_json::to_string(&Event::PlayersReached).unwrap(),
        "\"players-reached\""
    );
}

#[test]
fn players_reached_fires_on_the_rise_that_crosses_the_threshold() {
    assert!(reaches(3, 2, 3));
    assert!(reaches(3, 0, 9), "a jump past it");
    assert!(!reaches(3, 3, 4), "already there");
    assert!(!reaches(3, 1, 2), "still below");
    assert!(!reaches(3, 4, 3), "falling to it");
    assert!(lobby_opened(false, true));
    assert!(!lobby_opened(true, true) && !lobby_opened(true, false) && !lobby_opened(false, false));
}

mod changes {
    use super::super::{changes, Event, Listing, ServerChange};

    fn listing(open: bool, players: u32) -> Listing {
        Listing { open, players }
    }

    fn of(last: Option<Listing>, now: Listing) -> Vec<ServerChange> {
        changes(last, now).collect()
    }

    #[test]
    fn a_server_not_listed_before_comes_online_whatever_its_state() {
        assert_eq!(of(None, listing(true, 3)), [ServerChange::Online]);
        assert_eq!(of(None, listing(false, 0)), [ServerChange::Online]);
    }

    #[test]
    fn a_listed_server_changes_by_its_lobby_and_its_players_rising() {
        assert_eq!(
            of(Some(listing(false, 1)), listing(true, 3)),
            [
                ServerChange::LobbyOpened,
                ServerChange::PlayersRose { from: 1 }
            ]
        );
        assert_eq!(of(Some(listing(true, 3)), listing(false, 1)), []);
        assert_eq!(of(Some(listing(true, 3)), listing(true, 3)), []);
        assert_eq!(
            of(Some(listing(true, 3)), listing(true, 4)),
            [ServerChange::PlayersRose { from: 3 }]
        );
    }

    #[test]
    fn a_rise_is_players_reached_only_when_it_crosses_the_threshold() {
        let all = [Event::PlayersReached];
        let rise = ServerChange::PlayersRose { from: 2 };
        assert_eq!(rise.event(&all, Some(3), 3), Some(Event::PlayersReached));
        assert_eq!(rise.event(&all, Some(3), 2), None);
        assert_eq!(rise.event(&all, None, 5), None);
        assert_eq!(
            ServerChange::PlayersRose { from: 3 }.event(&all, Some(3), 4),
            None
        );
        assert_eq!(ServerChange::Online.event(&all, Some(3), 4), None);
        assert_eq!(
            ServerChange::Online.event(&[Event::ServerOnline], None, 0),
            Some(Event::ServerOnline)
        );
    }
}

#[test]
fn a_discord_card_names_servers_and_nothing_it_does_not_use() {
    let card = json!({"url":"https://discord.com/api/webhooks/1/abc","format":"discord-card",
        "servers":{"keys":["00000000000000ff"]}});
    let s = spec(card.clone()).unwrap();
    assert_eq!(s.format, Format::DiscordCard);
    assert_eq!(s.servers, ServerFilter::Keys(vec![ServerKey(255)]));
    assert!(s.events.is_empty());
    assert_eq!((s.threshold, s.cooldown), (None, 0));
    assert_eq!(s.to_json(), card, "stored and listed as asked");
    assert_eq!(WebhookSpec::from_value(&s.to_json()).unwrap(), s);
    for (k, v) in [
        ("events", json!(["server-online"])),
        ("events", json!([])),
        ("events", Value::Null),
        ("threshold", Value::Null),
        ("cooldown", Value::Null),
        ("threshold", json!(3)),
        ("cooldown", json!(60)),
    ] {
        let mut b = card.clone();
        b[k] = v;
        assert_eq!(field(b), k, "{k} is not used by a card");
    }
    let mut no_servers = card.clone();
    no_servers.as_object_mut().unwrap().remove("servers");
    assert_eq!(field(no_servers), "servers");
    let mut bad_url = card;
    bad_url["url"] = json!("ftp://example.com/x");
    assert_eq!(field(bad_url), "url");
}

#[test]
fn a_card_is_shown_again_on_a_change_no_watch_fires_on() {
    let all = Event::ALL;
    assert_eq!(ServerChange::Shown.event(&all, Some(1), 5), None);
}

#[test]
fn a_card_preview_names_its_servers_only() {
    assert_eq!(
        CardPreviewRequest::parse(br#"{"servers":{"nameContains":"Feuer"}}"#).unwrap(),
        CardPreviewRequest {
            servers: ServerFilter::NameContains("feuer".into())
        }
    );
    for (body, field) in [
        (&br#"{}"#[..], "servers"),
        (br#"{"servers":{"keys":[]}}"#, "servers"),
        (br#"{"servers":"all","url":"x"}"#, "body"),
        (br#"[]"#, "body"),
    ] {
        assert_eq!(CardPreviewRequest::parse(body).unwrap_err().field, field);
    }
}
