//! Watches (`docs/protocol.md` §2.4): the events the bridge decides from
//! the live list, which servers a watch covers, and the webhook requests an
//! admin sends. Each request is validated here, once, so the bridge and the
//! page refuse the same input and name the same field.
//!
//! Whether a URL's host may be reached (not loopback, private, …) is the
//! bridge's to decide: it needs DNS, which the page does not have; so is
//! the URL's full parse (see `parse_url`).

use std::{borrow::Cow, fmt, str::FromStr};

use crate::ServerKey;
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

/// Longest webhook URL accepted, in bytes (Discord's are about 120).
pub const MAX_URL_LEN: usize = 2048;
/// Server keys one watch may name at most.
pub const MAX_KEYS: usize = 100;
/// Longest `nameContains`, in characters (a server name has at most 64).
pub const MAX_NAME_CONTAINS: usize = 64;
/// Longest cooldown, in seconds (a week): longer would silence a watch
/// for good.
pub const MAX_COOLDOWN: u64 = 7 * 24 * 3600;
/// The cooldown of a watch that names none, in seconds.
pub const DEFAULT_COOLDOWN: u64 = 600;
/// Highest `threshold` (players on one server are counted in `u32`, but
/// the game has at most 255 slots; more would never be reached).
pub const MAX_THRESHOLD: u32 = 255;
/// Largest webhook request body the bridge reads, in bytes.
pub const MAX_REQUEST_BYTES: usize = 16 * 1024;

/// Seconds a listed key must stay unlisted before it is offline; one back
/// sooner was never offline, so it is not `server-online` again. The
/// bridge decides its events with it and the page its in-tab notices.
pub const OFFLINE_AFTER_SECS: u64 = 60;

/// Whether the players of a server, rising from `from` to `now`, reach
/// `threshold`: `players-reached` fires on the rise that crosses it, not
/// again while the count stays above it. One rule for bridge and page.
pub fn reaches(threshold: u32, from: u32, now: u32) -> bool {
    from < threshold && now >= threshold
}

/// Whether a listed server's lobby opened between two listings
/// (`lobby-opened`); a server that appears with its lobby open is
/// `server-online` instead, which the caller knows.
pub fn lobby_opened(before: bool, now: bool) -> bool {
    !before && now
}

/// How a server was listed, as far as its events go: whether its lobby
/// was open and how many players it had.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Listing {
    pub open: bool,
    pub players: u32,
}

impl Listing {
    /// The listing of `stats`.
    pub fn of(stats: &crate::Stats) -> Self {
        Self {
            open: stats.is_lobby_open,
            players: stats.players.current,
        }
    }
}

/// What happened to one server between two looks, before any watch's
/// rules (which events, which servers, the threshold) apply.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ServerChange {
    /// It was not listed (or offline: unlisted for [`OFFLINE_AFTER_SECS`])
    /// and now is.
    Online,
    /// It stayed unlisted for [`OFFLINE_AFTER_SECS`].
    Offline,
    /// Its lobby went from closed to open.
    LobbyOpened,
    /// Its players rose from `from` (to the listing's current count).
    PlayersRose { from: u32 },
    /// What a status card shows of it changed (its players fell, its
    /// lobby closed, its name or room changed) with no event: no watch's
    /// event, only a card's cue to show it again.
    Shown,
}

impl ServerChange {
    /// The event a watch with `events` and `threshold` takes this change
    /// as, if any (a rise must reach the threshold from below), the server
    /// having `now` players.
    pub fn event(self, events: &[Event], threshold: Option<u32>, now: u32) -> Option<Event> {
        let event = match self {
            ServerChange::Online => Event::ServerOnline,
            ServerChange::Offline => Event::ServerOffline,
            ServerChange::LobbyOpened => Event::LobbyOpened,
            ServerChange::PlayersRose { from } => {
                if !reaches(threshold?, from, now) {
                    return None;
                }
                Event::PlayersReached
            }
            ServerChange::Shown => return None,
        };
        events.contains(&event).then_some(event)
    }
}

/// The changes of a server listed `now` that was last listed as `last`
/// (`None`: never seen, or offline since): the one rule by which the
/// bridge decides its notifications and the page its in-tab notices. A
/// server back within the offline grace is passed its last listing: it
/// was never offline, so only its lobby and players can have changed.
pub fn changes(last: Option<Listing>, now: Listing) -> impl Iterator<Item = ServerChange> {
    let (online, opened, rose) = match last {
        None => (true, false, None),
        Some(last) => (
            false,
            lobby_opened(last.open, now.open),
            (now.players > last.players).then_some(last.players),
        ),
    };
    [
        online.then_some(ServerChange::Online),
        opened.then_some(ServerChange::LobbyOpened),
        rose.map(|from| ServerChange::PlayersRose { from }),
    ]
    .into_iter()
    .flatten()
}

/// Something that happened to a listed server, decided by the bridge from
/// the list's changes: the one type for a watch's events in a request, in
/// a webhook's body and (Web Push) in a push's payload.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(rename_all = "kebab-case")]
pub enum Event {
    /// A key that was not listed is listed.
    ServerOnline,
    /// A listed key stayed unlisted for the offline grace (60 s).
    ServerOffline,
    /// `isLobbyOpen` went from false to true on a listed server.
    LobbyOpened,
    /// `players.current` rose to at least a watch's threshold.
    PlayersReached,
}

impl Event {
    /// Every event, in the order they are documented.
    pub const ALL: [Event; 4] = [
        Event::ServerOnline,
        Event::ServerOffline,
        Event::LobbyOpened,
        Event::PlayersReached,
    ];

    /// The event's name on the wire.
    pub fn name(self) -> &'static str {
        match self {
            Event::ServerOnline => "server-online",
            Event::ServerOffline => "server-offline",
            Event::LobbyOpened => "lobby-opened",
            Event::PlayersReached => "players-reached",
        }
    }
}

impl FromStr for Event {
    type Err = ();

    fn from_str(s: &str) -> Result<Self, ()> {
        Event::ALL.into_iter().find(|e| e.name() == s).ok_or(())
    }
}

impl fmt::Display for Event {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// Which servers a watch covers: `"all"`, `{"keys":[…]}` or
/// `{"nameContains":"…"}` on the wire, read through the request's
/// validation.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(into = "Value", try_from = "Value")]
pub enum ServerFilter {
    /// Every server.
    All,
    /// These keys (at most [`MAX_KEYS`], each once).
    Keys(Vec<ServerKey>),
    /// Servers whose name contains this text, compared without case.
    /// Stored lowercased.
    NameContains(String),
}

impl ServerFilter {
    /// Whether the server named `name` with `key` is covered.
    pub fn matches(&self, key: ServerKey, name: &str) -> bool {
        match self {
            ServerFilter::All => true,
            ServerFilter::Keys(keys) => keys.contains(&key),
            ServerFilter::NameContains(part) => name.to_lowercase().contains(part.as_str()),
        }
    }

    /// The filter as the request spells it.
    pub fn to_json(&self) -> Value {
        match self {
            ServerFilter::All => Value::from("all"),
            ServerFilter::Keys(keys) => {
                let keys = keys.iter().map(|k| Value::from(k.to_string())).collect();
                Value::Object(Map::from_iter([("keys".to_owned(), Value::Array(keys))]))
            }
            ServerFilter::NameContains(part) => Value::Object(Map::from_iter([(
                "nameContains".to_owned(),
                Value::from(part.as_str()),
            )])),
        }
    }
}

/// How a webhook's requests are laid out.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(rename_all = "kebab-case")]
pub enum Format {
    /// Standard Webhooks 1.0: signed JSON.
    Standard,
    /// Discord's execute-webhook message.
    Discord,
    /// One Discord message kept up to date: a status card of the selected
    /// servers, edited in place (`events`, `threshold` and `cooldown` are
    /// not used).
    DiscordCard,
}

impl Format {
    /// The format's name on the wire.
    pub fn name(self) -> &'static str {
        match self {
            Format::Standard => "standard",
            Format::Discord => "discord",
            Format::DiscordCard => "discord-card",
        }
    }
}

/// A request refused, naming the field at fault (the 400's message).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{field}: {reason}")]
pub struct FieldError {
    /// The field as the request spells it (`body` for the whole request;
    /// `watches[2].key` for one inside a list).
    pub field: Cow<'static, str>,
    pub reason: &'static str,
}

pub(crate) fn refuse<T>(
    field: impl Into<Cow<'static, str>>,
    reason: &'static str,
) -> Result<T, FieldError> {
    Err(FieldError {
        field: field.into(),
        reason,
    })
}

/// A valid `POST /api/admin/webhooks` body: what one webhook watches and
/// where it sends. The page builds it from its form and the bridge reads
/// it from the request, both through [`WebhookSpec::from_value`]; its
/// JSON is the request's, also inside each listed webhook.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(into = "Value", try_from = "Value")]
pub struct WebhookSpec {
    /// `http` or `https`, with a host, without credentials or fragment
    /// (the bridge parses it fully before it uses it).
    pub url: String,
    pub format: Format,
    /// Each event once, in [`Event::ALL`]'s order; never empty, except
    /// for a [`Format::DiscordCard`], which has none.
    pub events: Vec<Event>,
    pub servers: ServerFilter,
    /// Required (1 to [`MAX_THRESHOLD`]) with `players-reached`, absent
    /// otherwise.
    pub threshold: Option<u32>,
    /// Seconds between two notifications of one key and event (0 for a
    /// card, whose edits are paced by the bridge).
    pub cooldown: u64,
}

impl WebhookSpec {
    /// Reads and validates a request body.
    pub fn parse(body: &[u8]) -> Result<Self, FieldError> {
        Self::from_value(&Value::Object(object(body)?))
    }

    /// Validates an already parsed request (also a stored one, which is
    /// trusted no more than a new one).
    pub fn from_value(value: &Value) -> Result<Self, FieldError> {
        let Value::Object(obj) = value else {
            return refuse("body", "not a JSON object");
        };
        const KNOWN: [&str; 6] = [
            "url",
            "format",
            "events",
            "servers",
            "threshold",
            "cooldown",
        ];
        if obj.keys().any(|k| !KNOWN.contains(&k.as_str())) {
            return refuse(
                "body",
                "has a field that is not one of url, format, events, servers, threshold, cooldown",
            );
        }
        let url = parse_url(obj.get("url"))?;
        let format = match obj.get("format").and_then(Value::as_str) {
            Some("standard") => Format::Standard,
            Some("discord") => Format::Discord,
            Some("discord-card") => Format::DiscordCard,
            _ => {
                return refuse(
                    "format",
                    "must be \"standard\", \"discord\" or \"discord-card\"",
                )
            }
        };
        if format == Format::DiscordCard {
            // A card shows the selected servers as they are: it has no
            // events, threshold or cooldown, and a request naming one is
            // refused rather than silently ignored.
            for unused in ["events", "threshold", "cooldown"] {
                if obj.contains_key(unused) {
                    return refuse(unused, "is not used by a discord-card webhook");
                }
            }
            return Ok(Self {
                url,
                format,
                events: Vec::new(),
                servers: parse_servers(obj.get("servers"))?,
                threshold: None,
                cooldown: 0,
            });
        }
        let events = parse_events(obj.get("events"))?;
        let servers = parse_servers(obj.get("servers"))?;
        let threshold = threshold_named("threshold", obj.get("threshold"), &events)?;
        let cooldown = match obj.get("cooldown") {
            None | Some(Value::Null) => DEFAULT_COOLDOWN,
            Some(v) => match v.as_u64() {
                Some(n) if n <= MAX_COOLDOWN => n,
                _ => return refuse("cooldown", "must be whole seconds from 0 to 604800"),
            },
        };
        Ok(Self {
            url,
            format,
            events,
            servers,
            threshold,
            cooldown,
        })
    }

    /// The request as it would be sent again (what the bridge stores and
    /// lists).
    pub fn to_json(&self) -> Value {
        let mut obj = Map::new();
        obj.insert("url".into(), Value::from(self.url.as_str()));
        obj.insert("format".into(), Value::from(self.format.name()));
        obj.insert("servers".into(), self.servers.to_json());
        if self.format == Format::DiscordCard {
            return Value::Object(obj);
        }
        let events = self.events.iter().map(|e| Value::from(e.name())).collect();
        obj.insert("events".into(), Value::Array(events));
        if let Some(t) = self.threshold {
            obj.insert("threshold".into(), Value::from(t));
        }
        obj.insert("cooldown".into(), Value::from(self.cooldown));
        Value::Object(obj)
    }

    /// Whether this webhook wants `event`.
    pub fn wants(&self, event: Event) -> bool {
        self.events.contains(&event)
    }
}

/// A request body as a JSON object, at most [`MAX_REQUEST_BYTES`].
pub(crate) fn object(body: &[u8]) -> Result<Map<String, Value>, FieldError> {
    if body.len() > MAX_REQUEST_BYTES {
        return refuse("body", "larger than 16 KiB");
    }
    match serde_json::from_slice(body) {
        Ok(Value::Object(obj)) => Ok(obj),
        Ok(_) => refuse("body", "not a JSON object"),
        Err(_) => refuse("body", "not JSON"),
    }
}

/// The URL's shape: `http` or `https`, a host, no user name or password,
/// no fragment, no spaces or control characters. Checked here without a
/// URL parser, so the page (which validates with this same function)
/// carries none: the `url` crate's international domain tables would add
/// more to its bundle than the whole admin page. The bridge parses the URL
/// fully when it checks where it points (`bridge::notify::webhooks::address`).
fn parse_url(value: Option<&Value>) -> Result<String, FieldError> {
    url_named("url", value, (MAX_URL_LEN, "is longer than 2048 bytes")).map(|(_, url)| url)
}

/// [`parse_url`]'s shape check for the field `field` (a push endpoint's
/// too), at most `max_len` bytes (else refused saying `too_long`): the
/// scheme (lowercased: `http` or `https`) and the text.
pub(crate) fn url_named(
    field: &'static str,
    value: Option<&Value>,
    (max_len, too_long): (usize, &'static str),
) -> Result<(String, String), FieldError> {
    let Some(text) = value.and_then(Value::as_str) else {
        return refuse(field, "is required, as a string");
    };
    if text.len() > max_len {
        return refuse(field, too_long);
    }
    let Some((scheme, rest)) = text.split_once(':') else {
        return refuse(field, "is not a URL");
    };
    if scheme.is_empty() || text.chars().any(|c| c.is_whitespace() || c.is_control()) {
        return refuse(field, "is not a URL");
    }
    if !scheme.eq_ignore_ascii_case("http") && !scheme.eq_ignore_ascii_case("https") {
        return refuse(field, "must be http or https");
    }
    let Some(rest) = rest.strip_prefix("//") else {
        return refuse(field, "is not a URL");
    };
    if text.contains('#') {
        return refuse(field, "must not have a fragment");
    }
    let authority = rest.split(['/', '?', '\\']).next().unwrap_or_default();
    if authority.contains('@') {
        return refuse(field, "must not hold a user name or password");
    }
    let (host, port) = match authority.strip_prefix('[') {
        Some(v6) => {
            let (host, rest) = v6.split_once(']').unwrap_or((v6, ""));
            (host, rest.strip_prefix(':'))
        }
        None => match authority.split_once(':') {
            Some((host, port)) => (host, Some(port)),
            None => (authority, None),
        },
    };
    if host.is_empty() {
        return refuse(field, "has no host");
    }
    // Port 0 names no service (a URL parser reads "00" as 0 too).
    if port.is_some_and(|p| !p.is_empty() && p.bytes().all(|b| b == b'0')) {
        return refuse(field, "must not have port 0");
    }
    Ok((scheme.to_ascii_lowercase(), text.to_owned()))
}

fn parse_events(value: Option<&Value>) -> Result<Vec<Event>, FieldError> {
    events_named("events", value)
}

/// A watch's `threshold`: required (1 to [`MAX_THRESHOLD`]) with
/// `players-reached` among its `events`, absent otherwise; `field` names
/// it in a refusal.
pub(crate) fn threshold_named(
    field: impl Into<Cow<'static, str>>,
    value: Option<&Value>,
    events: &[Event],
) -> Result<Option<u32>, FieldError> {
    match (value, events.contains(&Event::PlayersReached)) {
        (None | Some(Value::Null), false) => Ok(None),
        (None | Some(Value::Null), true) => refuse(field, "is required with players-reached"),
        (Some(_), false) => refuse(field, "is only for players-reached"),
        (Some(v), true) => match v.as_u64() {
            Some(n @ 1..=255) => Ok(Some(n as u32)),
            _ => refuse(field, "must be a whole number from 1 to 255"),
        },
    }
}

/// A list of events, each once, sorted; `field` names it in a refusal.
pub(crate) fn events_named(
    field: impl Into<Cow<'static, str>>,
    value: Option<&Value>,
) -> Result<Vec<Event>, FieldError> {
    let field = field.into();
    let Some(Value::Array(items)) = value else {
        return refuse(field, "is required, as a list");
    };
    if items.is_empty() {
        return refuse(field, "names no event");
    }
    if items.len() > Event::ALL.len() {
        return refuse(field, "names an event twice");
    }
    let mut events = Vec::with_capacity(items.len());
    for item in items {
        let Some(event) = item.as_str().and_then(|s| s.parse::<Event>().ok()) else {
            return refuse(
                field,
                "has an unknown event (known: server-online, server-offline, lobby-opened, players-reached)",
            );
        };
        if events.contains(&event) {
            return refuse(field, "names an event twice");
        }
        events.push(event);
    }
    events.sort();
    Ok(events)
}

fn parse_servers(value: Option<&Value>) -> Result<ServerFilter, FieldError> {
    match value {
        Some(Value::String(s)) if s == "all" => Ok(ServerFilter::All),
        Some(Value::Object(obj)) if obj.len() == 1 => {
            if let Some(keys) = obj.get("keys") {
                let Value::Array(items) = keys else {
                    return refuse("servers", "keys must be a list");
                };
                if items.is_empty() || items.len() > MAX_KEYS {
                    return refuse("servers", "keys must name 1 to 100 servers");
                }
                let mut out = Vec::with_capacity(items.len());
                for item in items {
                    let Some(key) = item.as_str().and_then(|s| s.parse::<ServerKey>().ok()) else {
                        return refuse("servers", "keys must be 16 lowercase hex digits each");
                    };
                    if !out.contains(&key) {
                        out.push(key);
                    }
                }
                Ok(ServerFilter::Keys(out))
            } else if let Some(part) = obj.get("nameContains") {
                let Some(part) = part.as_str() else {
                    return refuse("servers", "nameContains must be a string");
                };
                let len = part.chars().count();
                if part.trim().is_empty() || len > MAX_NAME_CONTAINS {
                    return refuse("servers", "nameContains must have 1 to 64 characters");
                }
                if part.chars().any(char::is_control) {
                    return refuse("servers", "nameContains must not hold control characters");
                }
                Ok(ServerFilter::NameContains(part.to_lowercase()))
            } else {
                refuse(
                    "servers",
                    "must be \"all\", {\"keys\":[…]} or {\"nameContains\":\"…\"}",
                )
            }
        }
        _ => refuse(
            "servers",
            "must be \"all\", {\"keys\":[…]} or {\"nameContains\":\"…\"}",
        ),
    }
}

/// A valid `PATCH /api/admin/webhooks/{id}` body.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct WebhookPatch {
    pub enabled: bool,
}

impl WebhookPatch {
    /// Reads and validates a request body: `{"enabled":true|false}`.
    pub fn parse(body: &[u8]) -> Result<Self, FieldError> {
        let obj = object(body)?;
        if obj.keys().any(|k| k != "enabled") {
            return refuse("body", "has a field other than enabled");
        }
        match obj.get("enabled") {
            Some(Value::Bool(enabled)) => Ok(Self { enabled: *enabled }),
            _ => refuse("enabled", "is required, true or false"),
        }
    }
}

/// A valid `POST /api/admin/webhooks/preview` body: which servers a
/// status card would show (`{"servers": …}`, as a webhook's request names
/// them), so the admin page can preview a card before it is made.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct CardPreviewRequest {
    pub servers: ServerFilter,
}

impl CardPreviewRequest {
    /// Reads and validates a request body: `{"servers": …}`.
    pub fn parse(body: &[u8]) -> Result<Self, FieldError> {
        let obj = object(body)?;
        if obj.keys().any(|k| k != "servers") {
            return refuse("body", "has a field other than servers");
        }
        Ok(Self {
            servers: parse_servers(obj.get("servers"))?,
        })
    }
}

impl From<ServerFilter> for Value {
    fn from(f: ServerFilter) -> Value {
        f.to_json()
    }
}

impl TryFrom<Value> for ServerFilter {
    type Error = FieldError;

    fn try_from(v: Value) -> Result<Self, FieldError> {
        parse_servers(Some(&v))
    }
}

impl From<WebhookSpec> for Value {
    fn from(spec: WebhookSpec) -> Value {
        spec.to_json()
    }
}

impl TryFrom<Value> for WebhookSpec {
    type Error = FieldError;

    fn try_from(v: Value) -> Result<Self, FieldError> {
        WebhookSpec::from_value(&v)
    }
}

/// Webhook ids: `wh_` and 16 lowercase hex digits.
pub fn is_webhook_id(s: &str) -> bool {
    s.strip_prefix("wh_").is_some_and(|hex| {
        hex.len() == 16 && hex.bytes().all(|b| matches!(b, b'0'..=b'9' | b'a'..=b'f'))
    })
}

#[cfg(test)]
mod tests;

// The request's schemas, written out: its types read themselves through
// the validation above rather than a derive, so their schemas say what
// that validation accepts.
#[cfg(feature = "openapi")]
mod schemas {
    use utoipa::{
        openapi::{
            schema::{ArrayBuilder, Object, ObjectBuilder, OneOfBuilder, SchemaFormat, Type},
            Ref, RefOr, Schema,
        },
        PartialSchema, ToSchema,
    };

    use super::{Event, Format, ServerFilter, WebhookSpec, MAX_KEYS, MAX_NAME_CONTAINS};
    use crate::ServerKey;

    fn to<T: ToSchema>() -> RefOr<Schema> {
        RefOr::Ref(Ref::from_schema_name(T::name()))
    }

    fn whole(min: u64, max: u64, description: &str) -> ObjectBuilder {
        ObjectBuilder::new()
            .schema_type(Type::Integer)
            .minimum(Some(min as f64))
            .maximum(Some(max as f64))
            .description(Some(description))
    }

    impl PartialSchema for ServerFilter {
        fn schema() -> RefOr<Schema> {
            let all = ObjectBuilder::new()
                .schema_type(Type::String)
                .enum_values(Some(["all"]))
                .description(Some("Every server"));
            let keys = ObjectBuilder::new()
                .property(
                    "keys",
                    ArrayBuilder::new()
                        .items(to::<ServerKey>())
                        .min_items(Some(1))
                        .max_items(Some(MAX_KEYS)),
                )
                .required("keys")
                .description(Some("These servers"));
            let name = ObjectBuilder::new()
                .property(
                    "nameContains",
                    ObjectBuilder::new()
                        .schema_type(Type::String)
                        .min_length(Some(1))
                        .max_length(Some(MAX_NAME_CONTAINS))
                        // As the parser reads it: no control character
                        // (`char::is_control`), and one that is not white
                        // space (`str::trim`'s).
                        .pattern(Some(NAME_CONTAINS_PATTERN)),
                )
                .required("nameContains")
                .description(Some(
                    "Servers whose name contains this text, compared without case",
                ));
            OneOfBuilder::new()
                .item(all)
                .item(keys)
                .item(name)
                .description(Some("Which servers a watch covers"))
                .into()
        }
    }

    /// `nameContains` as `parse_servers` takes it.
    const NAME_CONTAINS_PATTERN: &str = r"^[^\u0000-\u001f\u007f-\u009f]*[^\u0000-\u0020\u007f-\u00a0\u1680\u2000-\u200a\u2028\u2029\u202f\u205f\u3000][^\u0000-\u001f\u007f-\u009f]*$";

    impl ToSchema for ServerFilter {
        fn schemas(out: &mut Vec<(String, RefOr<Schema>)>) {
            out.push((ServerKey::name().into_owned(), ServerKey::schema()));
        }
    }

    impl PartialSchema for super::CardPreviewRequest {
        fn schema() -> RefOr<Schema> {
            ObjectBuilder::new()
                .property("servers", to::<ServerFilter>())
                .required("servers")
                .description(Some("Which servers the previewed status card shows"))
                .into()
        }
    }

    impl ToSchema for super::CardPreviewRequest {
        fn schemas(out: &mut Vec<(String, RefOr<Schema>)>) {
            out.push((ServerFilter::name().into_owned(), ServerFilter::schema()));
            ServerFilter::schemas(out);
        }
    }

    impl WebhookSpec {
        /// The request's object schema, which a listed webhook extends.
        pub(crate) fn object() -> Object {
            ObjectBuilder::new()
                .property(
                    "url",
                    ObjectBuilder::new()
                        .schema_type(Type::String)
                        .format(Some(SchemaFormat::Custom("uri".into())))
                        .max_length(Some(super::MAX_URL_LEN))
                        .description(Some("Where the notifications are sent: http or https")),
                )
                .required("url")
                .property("format", to::<Format>())
                .required("format")
                .property(
                    "events",
                    ArrayBuilder::new()
                        .items(to::<Event>())
                        .min_items(Some(1))
                        .max_items(Some(Event::ALL.len()))
                        .unique_items(true),
                )
                .property("servers", to::<ServerFilter>())
                .required("servers")
                .property(
                    "threshold",
                    whole(
                        1,
                        super::MAX_THRESHOLD.into(),
                        "Players that make `players-reached` (required with it, only with it)",
                    ),
                )
                .property(
                    "cooldown",
                    whole(
                        0,
                        super::MAX_COOLDOWN,
                        "Seconds between two notifications of one server and event (default 600)",
                    ),
                )
                .build()
        }

        /// Adds the schemas the request refers to.
        pub(crate) fn refs(out: &mut Vec<(String, RefOr<Schema>)>) {
            out.push((<Format as ToSchema>::name().into_owned(), Format::schema()));
            out.push((<Event as ToSchema>::name().into_owned(), Event::schema()));
            out.push((ServerFilter::name().into_owned(), ServerFilter::schema()));
            ServerFilter::schemas(out);
        }
    }

    impl PartialSchema for WebhookSpec {
        fn schema() -> RefOr<Schema> {
            let mut object = Self::object();
            object.description = Some(
                "A webhook's request: where it sends, how, and which events of which servers"
                    .into(),
            );
            RefOr::T(Schema::Object(object))
        }
    }

    impl ToSchema for WebhookSpec {
        fn schemas(out: &mut Vec<(String, RefOr<Schema>)>) {
            Self::refs(out);
        }
    }
}
