//! Webhooks on the wire (`docs/protocol.md` §2.4): what a `"standard"`
//! webhook receives (the body of one notification, following Standard
//! Webhooks 1.0) and what the admin's webhook API answers. One type per
//! shape, for the bridge that writes it, the page that reads it and (with
//! the `openapi` feature) the OpenAPI document.

use std::fmt;

use serde::{Deserialize, Deserializer, Serialize, Serializer};

use crate::{
    entry::{EntryOut, WireEntry},
    watch::{Event, WebhookSpec},
    Addresses, ServerEntry, ServerKey,
};

/// What a notification is about: one of the watched [`Event`]s, or the
/// admin's "send a test". Written as the event's name, or `test`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Kind {
    Event(Event),
    /// The admin's "send a test" (`POST /api/admin/webhooks/{id}/test`).
    Test,
}

impl Kind {
    /// The name on the wire.
    pub fn name(self) -> &'static str {
        match self {
            Kind::Event(e) => e.name(),
            Kind::Test => "test",
        }
    }
}

impl fmt::Display for Kind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

impl Serialize for Kind {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(self.name())
    }
}

impl<'de> Deserialize<'de> for Kind {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let text = String::deserialize(d)?;
        if text == "test" {
            return Ok(Kind::Test);
        }
        text.parse::<Event>()
            .map(Kind::Event)
            .map_err(|()| serde::de::Error::custom("not an event's name, nor test"))
    }
}

/// The body of a `"standard"` webhook's `POST`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct WebhookPayload {
    #[serde(rename = "type")]
    pub kind: Kind,
    /// When the bridge decided the event (ISO 8601, UTC).
    pub timestamp: String,
    pub data: EventServer,
}

/// The server an event is about, as every notification carries it: the
/// `data` of a `"standard"` webhook's body, and what a Web Push payload
/// tells the page's service worker. A listed entry's shape (its key, not
/// the bridge's id) and the server's page, written only as the audience it
/// was made for may see it ([`EventServer::seen`]).
#[derive(Debug, Clone)]
pub struct EventServer {
    pub key: ServerKey,
    /// The server as listed; never with its registrant.
    entry: ServerEntry,
    /// Who the notification is for: what of `entry` is written.
    addresses: Addresses,
    /// The server's page: absolute when the bridge knows its public
    /// address (`--public-url`), else the path `/server/{key}`.
    pub url: String,
}

impl EventServer {
    /// The server `key` names, `entry`, as `addresses` allows it to be
    /// seen (the rule of a listed entry, [`crate::entry::EntryOut`]), with
    /// its page `url`.
    pub fn seen(key: ServerKey, entry: &ServerEntry, addresses: Addresses, url: String) -> Self {
        Self {
            key,
            entry: ServerEntry {
                registrant: None,
                ..entry.clone()
            },
            addresses,
            url,
        }
    }

    /// The entry as this notification's audience sees it.
    fn view(&self) -> EntryOut<'_> {
        EntryOut {
            key: Some(self.key),
            ..self.entry.view(self.addresses)
        }
    }
}

/// Two are equal when they read the same: the same server as seen.
impl PartialEq for EventServer {
    fn eq(&self, other: &Self) -> bool {
        let (a, b) = (self.view(), other.view());
        self.key == other.key
            && self.url == other.url
            && self.entry.name == other.entry.name
            && self.entry.stats == other.entry.stats
            && a.address_and_port() == b.address_and_port()
    }
}

impl Eq for EventServer {}

impl Serialize for EventServer {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        /// The entry's own fields, then the page.
        #[derive(Serialize)]
        struct Out<'a> {
            #[serde(flatten)]
            server: EntryOut<'a>,
            url: &'a str,
        }
        Out {
            server: self.view(),
            url: &self.url,
        }
        .serialize(s)
    }
}

impl<'de> Deserialize<'de> for EventServer {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        #[derive(Deserialize)]
        struct Wire {
            #[serde(flatten)]
            entry: WireEntry,
            url: String,
        }
        let Wire { mut entry, url } = Wire::deserialize(d)?;
        let key = entry
            .key
            .take()
            .ok_or_else(|| serde::de::Error::missing_field("key"))?;
        // Peer input: the entry passes the rules a listed entry passed at
        // its master (§1) before anything reads it.
        let entry = ServerEntry::from(entry);
        entry.validate().map_err(serde::de::Error::custom)?;
        // What was read is what its audience was shown.
        Ok(Self::seen(key, &entry, Addresses::Shown, url))
    }
}

/// A webhook's state, as its list shows it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(rename_all = "kebab-case")]
pub enum WebhookState {
    /// It gets its events.
    Active,
    /// An admin disabled it.
    Disabled,
    /// 20 deliveries failed in a row; it stays off until an admin enables
    /// it.
    DisabledAfterFailures,
}

/// One delivery of a notification (all its attempts), or one test: the
/// answer of `POST /api/admin/webhooks/{id}/test` and the items of a
/// webhook's `lastDeliveries`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct Delivery {
    pub event: Kind,
    /// Whether the receiver took it (a 2xx).
    pub ok: bool,
    /// The last answer's status; `null` when none came.
    pub status: Option<u16>,
    /// Why it failed (or why its last attempt did); `null` when it was
    /// delivered.
    pub error: Option<String>,
    /// Attempts made (at most 6).
    pub attempts: u32,
    /// When it ended, Unix milliseconds.
    pub at: i64,
}

/// One webhook as the admin API shows it: its request's fields, its id
/// and state, and its last deliveries, newest first. `secret` only in the
/// answer of its creation, the one time it is shown.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Webhook {
    pub id: String,
    #[serde(flatten)]
    pub request: WebhookSpec,
    pub enabled: bool,
    pub state: WebhookState,
    /// Deliveries failed in a row.
    pub failures: u32,
    /// Unix milliseconds.
    pub created_at: i64,
    pub last_deliveries: Vec<Delivery>,
    /// `whsec_` and the base64 of the signing key.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub secret: Option<String>,
}

/// `GET /api/admin/webhooks`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct WebhookList {
    pub webhooks: Vec<Webhook>,
}

/// A Discord status card's message (`docs/protocol.md` §2.6): what the
/// bridge posts and edits, and what `POST /api/admin/webhooks/preview`
/// answers, so the admin page previews exactly what the channel gets.
/// Field names are Discord's.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct DiscordCard {
    /// One embed.
    pub embeds: Vec<CardEmbed>,
    pub allowed_mentions: AllowedMentions,
}

/// The status card's embed.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct CardEmbed {
    /// How many selected servers are online, with how many players.
    pub title: String,
    /// A line per server shown, in Discord's markdown: the name bold
    /// (its own markdown escaped), linking to its page when the bridge
    /// knows its public address; then players and lobby.
    pub description: String,
    /// The embed's colour, `0xRRGGBB`.
    pub color: u32,
    /// When the card was made (ISO 8601, UTC).
    pub timestamp: String,
}

/// Which mentions Discord may turn into pings: none (a name such as
/// `@everyone` must not ping a whole community).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, Default)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct AllowedMentions {
    /// Always empty.
    pub parse: Vec<String>,
}

#[cfg(feature = "openapi")]
mod schemas {
    use utoipa::{
        openapi::{
            schema::{ArrayBuilder, ObjectBuilder, Type},
            Ref, RefOr, Schema,
        },
        PartialSchema, ToSchema,
    };

    use super::{Delivery, EventServer, Kind, Webhook, WebhookState};
    use crate::{
        entry::EntryShape,
        watch::{Event, WebhookSpec},
        ServerKey,
    };

    /// A listed entry's schema with its key required, without the
    /// bridge's id, and the page: the one entry shape, as written.
    impl PartialSchema for EventServer {
        fn schema() -> RefOr<Schema> {
            let RefOr::T(Schema::Object(mut object)) = EntryShape::schema() else {
                unreachable!("an entry's schema is an object");
            };
            object.properties.remove("id");
            object.properties.insert(
                "key".into(),
                RefOr::Ref(Ref::from_schema_name(ServerKey::name())),
            );
            object.properties.insert(
                "url".into(),
                ObjectBuilder::new()
                    .schema_type(Type::String)
                    .description(Some(
                        "The server's page: absolute when the bridge knows its public\n\
                         address (`--public-url`), else the path `/server/{key}`.",
                    ))
                    .into(),
            );
            object.required.insert(0, "key".into());
            object.required.push("url".into());
            object.description = Some(
                "The server an event is about, as every notification carries it: the\n\
                 `data` of a `\"standard\"` webhook's body, and what a Web Push payload\n\
                 tells the page's service worker: a listed entry's fields (its key, not\n\
                 the bridge's id) and the server's page."
                    .into(),
            );
            RefOr::T(Schema::Object(object))
        }
    }

    impl ToSchema for EventServer {
        fn schemas(out: &mut Vec<(String, RefOr<Schema>)>) {
            EntryShape::schemas(out);
        }
    }

    impl PartialSchema for Kind {
        fn schema() -> RefOr<Schema> {
            let names: Vec<&str> = Event::ALL
                .iter()
                .map(|e| e.name())
                .chain(["test"])
                .collect();
            ObjectBuilder::new()
                .schema_type(Type::String)
                .enum_values(Some(names))
                .description(Some(
                    "What a notification is about: a watched event, or `test` (the admin's \
                     \"send a test\")",
                ))
                .into()
        }
    }

    impl ToSchema for Kind {}

    /// The request's fields, then the webhook's own.
    impl PartialSchema for Webhook {
        fn schema() -> RefOr<Schema> {
            let to = |name: &str| RefOr::Ref(Ref::from_schema_name(name));
            let string = || ObjectBuilder::new().schema_type(Type::String);
            let whole = || {
                ObjectBuilder::new()
                    .schema_type(Type::Integer)
                    .minimum(Some(0))
            };
            let mut object = WebhookSpec::object();
            let more = ObjectBuilder::new()
                .property("id", string().pattern(Some("^wh_[0-9a-f]{16}$")))
                .required("id")
                .property("enabled", ObjectBuilder::new().schema_type(Type::Boolean))
                .required("enabled")
                .property("state", to(&WebhookState::name()))
                .required("state")
                .property(
                    "failures",
                    whole().description(Some("Deliveries failed in a row")),
                )
                .required("failures")
                .property(
                    "createdAt",
                    ObjectBuilder::new()
                        .schema_type(Type::Integer)
                        .description(Some("Unix milliseconds")),
                )
                .required("createdAt")
                .property(
                    "lastDeliveries",
                    ArrayBuilder::new()
                        .items(to(&Delivery::name()))
                        .max_items(Some(10))
                        .description(Some("Newest first")),
                )
                .required("lastDeliveries")
                .property(
                    "secret",
                    string().pattern(Some("^whsec_")).description(Some(
                        "The signing secret: only in the answer of the creation",
                    )),
                )
                .build();
            object.properties.extend(more.properties);
            object.required.extend(more.required);
            object.description = Some("A webhook, its state and its last deliveries".into());
            RefOr::T(Schema::Object(object))
        }
    }

    impl ToSchema for Webhook {
        fn schemas(out: &mut Vec<(String, RefOr<Schema>)>) {
            WebhookSpec::refs(out);
            out.push((WebhookState::name().into_owned(), WebhookState::schema()));
            out.push((Delivery::name().into_owned(), Delivery::schema()));
            Delivery::schemas(out);
        }
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;
    use crate::{
        watch::{Format, ServerFilter},
        GameplayMode, Players,
    };

    #[test]
    fn an_event_server_hides_what_a_listed_entry_hides() {
        let entry = ServerEntry {
            name: "Alpha".into(),
            address: Some("203.0.113.5".into()),
            port: Some(20001),
            stats: crate::Stats {
                players: Players { current: 2, max: 4 },
                is_lobby_open: true,
                gameplay_mode: GameplayMode::StandardAB,
            },
            registrant: Some([198, 51, 100, 7].into()),
        };
        let url = "/server/00000000000000ab";
        let seen = |addresses| {
            let server = EventServer::seen(ServerKey(0xab), &entry, addresses, url.into());
            crate::json::to_string(&server)
        };
        assert_eq!(
            seen(Addresses::Shown),
            r#"{"key":"00000000000000ab","name":"Alpha","address":"203.0.113.5","port":20001,"players":{"current":2,"max":4},"isLobbyOpen":true,"gameplayMode":2,"url":"/server/00000000000000ab"}"#
        );
        assert_eq!(
            seen(Addresses::Hidden),
            r#"{"key":"00000000000000ab","name":"Alpha","players":{"current":2,"max":4},"isLobbyOpen":true,"gameplayMode":2,"url":"/server/00000000000000ab"}"#
        );
        assert!(!seen(Addresses::WithRegistrants).contains("registrant"));
    }

    #[test]
    fn the_body_has_the_contracts_names() {
        let body = WebhookPayload {
            kind: Kind::Event(Event::PlayersReached),
            timestamp: "2026-01-02T03:04:05Z".into(),
            data: EventServer::seen(
                ServerKey(0xab),
                &ServerEntry {
                    name: "Alpha".into(),
                    address: Some("203.0.113.5".into()),
                    port: Some(20001),
                    stats: crate::Stats {
                        players: Players { current: 4, max: 4 },
                        is_lobby_open: false,
                        gameplay_mode: GameplayMode::StandardA,
                    },
                    registrant: None,
                },
                Addresses::Hidden,
                "https://lobby.example/server/00000000000000ab".into(),
            ),
        };
        let text = serde_json::to_string(&body).unwrap();
        assert_eq!(
            text,
            r#"{"type":"players-reached","timestamp":"2026-01-02T03:04:05Z","data":{"key":"00000000000000ab","name":"Alpha","players":{"current":4,"max":4},"isLobbyOpen":false,"gameplayMode":1,"url":"https://lobby.example/server/00000000000000ab"}}"#
        );
        assert_eq!(serde_json::from_str::<WebhookPayload>(&text).unwrap(), body);
        let test = WebhookPayload {
            kind: Kind::Test,
            ..body
        };
        let text = serde_json::to_string(&test).unwrap();
        assert!(text.starts_with(r#"{"type":"test","#), "{text}");
        assert_eq!(serde_json::from_str::<WebhookPayload>(&text).unwrap(), test);
        assert!(serde_json::from_str::<Kind>(r#""server-gone""#).is_err());
    }

    #[test]
    fn an_event_server_read_from_a_peer_passes_the_entrys_rules() {
        let server = |name: &str, max: u8| {
            json!({"key": "00000000000000ab", "name": name, "players": {"current": 1, "max": max},
                   "isLobbyOpen": true, "gameplayMode": 1, "url": "/server/00000000000000ab"})
        };
        assert!(serde_json::from_value::<EventServer>(server("Alpha", 4)).is_ok());
        for (name, max) in [("", 4), ("bell\u{7}", 4), ("Alpha", 9)] {
            let refused = serde_json::from_value::<EventServer>(server(name, max));
            assert!(refused.is_err(), "{name:?} {max} was read");
        }
    }

    #[test]
    fn a_listed_webhook_has_its_requests_fields_and_reads_back() {
        let request = json!({
            "url": "https://hooks.example/x",
            "format": "discord",
            "events": ["lobby-opened", "players-reached"],
            "servers": {"nameContains": "Feuer"},
            "threshold": 4,
            "cooldown": 60,
        });
        let spec = WebhookSpec::from_value(&request).unwrap();
        let hook = Webhook {
            id: "wh_00000000000000ab".into(),
            request: spec.clone(),
            enabled: false,
            state: WebhookState::DisabledAfterFailures,
            failures: 20,
            created_at: 1_700_000_000_000,
            last_deliveries: vec![Delivery {
                event: Kind::Test,
                ok: false,
                status: Some(500),
                error: Some("the receiver answered 500".into()),
                attempts: 1,
                at: 1_700_000_000_001,
            }],
            secret: None,
        };
        let v = serde_json::to_value(&hook).unwrap();
        assert_eq!(v["url"], "https://hooks.example/x");
        assert_eq!(v["format"], "discord");
        assert_eq!(v["servers"], json!({"nameContains": "feuer"}));
        assert_eq!(v["state"], "disabled-after-failures");
        assert_eq!(v["lastDeliveries"][0]["event"], "test");
        assert_eq!(v["createdAt"], 1_700_000_000_000i64);
        assert!(v.get("secret").is_none());
        let back: Webhook = serde_json::from_value(v).unwrap();
        assert_eq!(back, hook);
        assert_eq!(back.request.format, Format::Discord);
        assert_eq!(
            back.request.servers,
            ServerFilter::NameContains("feuer".into())
        );
        // A listed webhook is read through the request's validation.
        let mut bad = serde_json::to_value(&hook).unwrap();
        bad["threshold"] = json!(0);
        assert!(serde_json::from_value::<Webhook>(bad).is_err());
    }
}
