//! The "new webhook" form's input and the request it makes: checked with
//! the protocol's own validation (`WebhookSpec::from_value`), so the page
//! names the same field with the same words as the bridge's 400 would.

use protocol::watch::{Event, FieldError, Format, ServerFilter, WebhookSpec, DEFAULT_COOLDOWN};
use serde_json::{json, Map, Value};

/// Which servers the form's webhook covers.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Servers {
    #[default]
    All,
    Keys,
    NameContains,
}

/// What the admin typed and ticked.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FormInput {
    pub url: String,
    pub format: Format,
    /// The ticked events.
    pub events: Vec<Event>,
    pub servers: Servers,
    /// Server keys, separated by commas or spaces.
    pub keys: String,
    pub name_contains: String,
    pub threshold: String,
    pub cooldown: String,
}

impl Default for FormInput {
    fn default() -> Self {
        Self {
            url: String::new(),
            format: Format::Standard,
            events: vec![Event::ServerOnline, Event::LobbyOpened],
            servers: Servers::All,
            keys: String::new(),
            name_contains: String::new(),
            threshold: String::new(),
            cooldown: DEFAULT_COOLDOWN.to_string(),
        }
    }
}

/// A number as typed: the number if it is one, else the text (which the
/// validation then refuses, naming the field).
fn number(text: &str) -> Value {
    let text = text.trim();
    text.parse::<u64>()
        .map_or_else(|_| Value::from(text), Value::from)
}

impl FormInput {
    /// Ticks or unticks `event`.
    pub fn toggle(&mut self, event: Event) {
        if let Some(at) = self.events.iter().position(|e| *e == event) {
            self.events.remove(at);
        } else {
            self.events.push(event);
        }
    }

    /// The request the form stands for, as the bridge reads it.
    pub fn request(&self) -> Value {
        let mut obj = Map::new();
        obj.insert("url".into(), Value::from(self.url.trim()));
        obj.insert("format".into(), Value::from(self.format.name()));
        let card = self.format == Format::DiscordCard;
        let events = Event::ALL
            .iter()
            .filter(|e| self.events.contains(e))
            .map(|e| Value::from(e.name()))
            .collect();
        if !card {
            // A status card takes no events, threshold or cooldown.
            obj.insert("events".into(), Value::Array(events));
        }
        let servers = match self.servers {
            Servers::All => Value::from("all"),
            Servers::Keys => {
                let keys: Vec<Value> = self
                    .keys
                    .split(|c: char| c == ',' || c.is_whitespace())
                    .filter(|k| !k.is_empty())
                    .map(Value::from)
                    .collect();
                json!({ "keys": keys })
            }
            Servers::NameContains => json!({ "nameContains": self.name_contains }),
        };
        obj.insert("servers".into(), servers);
        if card {
            return Value::Object(obj);
        }
        if self.events.contains(&Event::PlayersReached) {
            obj.insert("threshold".into(), number(&self.threshold));
        }
        if !self.cooldown.trim().is_empty() {
            obj.insert("cooldown".into(), number(&self.cooldown));
        }
        Value::Object(obj)
    }

    /// The servers the form names, if they are valid: what a status
    /// card's preview shows, before the URL is typed.
    pub fn server_filter(&self) -> Option<ServerFilter> {
        ServerFilter::try_from(self.request().get("servers")?.clone()).ok()
    }

    /// The valid request, or the field at fault.
    pub fn check(&self) -> Result<WebhookSpec, FieldError> {
        WebhookSpec::from_value(&self.request())
    }
}

#[cfg(test)]
mod tests {
    use protocol::ServerKey;

    use super::*;

    #[test]
    fn the_default_form_needs_only_a_url() {
        let mut f = FormInput::default();
        assert_eq!(f.check().unwrap_err().field, "url");
        f.url = " https://discord.com/api/webhooks/1/abc ".into();
        f.format = Format::Discord;
        let spec = f.check().unwrap();
        assert_eq!(spec.url, "https://discord.com/api/webhooks/1/abc");
        assert_eq!(spec.events, vec![Event::ServerOnline, Event::LobbyOpened]);
        assert_eq!((spec.servers, spec.cooldown), (ServerFilter::All, 600));
    }

    #[test]
    fn a_status_card_sends_no_events_threshold_or_cooldown() {
        let mut f = FormInput {
            url: "https://discord.com/api/webhooks/1/abc".into(),
            format: Format::DiscordCard,
            threshold: "3".into(),
            ..FormInput::default()
        };
        f.toggle(Event::PlayersReached);
        let spec = f.check().unwrap();
        assert_eq!(spec.format, Format::DiscordCard);
        assert!(spec.events.is_empty());
        assert_eq!(spec.to_json(), f.request());
    }

    #[test]
    fn each_field_is_named_as_the_bridge_names_it() {
        let base = FormInput {
            url: "https://hooks.example/x".into(),
            ..FormInput::default()
        };
        let mut f = base.clone();
        f.events.clear();
        assert_eq!(f.check().unwrap_err().field, "events");
        let mut f = base.clone();
        f.toggle(Event::PlayersReached);
        assert_eq!(f.check().unwrap_err().field, "threshold");
        f.threshold = "four".into();
        assert_eq!(f.check().unwrap_err().field, "threshold");
        f.threshold = " 4 ".into();
        assert_eq!(f.check().unwrap().threshold, Some(4));
        let mut f = base.clone();
        f.cooldown = "-1".into();
        assert_eq!(f.check().unwrap_err().field, "cooldown");
        f.cooldown = String::new();
        assert_eq!(f.check().unwrap().cooldown, DEFAULT_COOLDOWN);
        let mut f = base.clone();
        f.servers = Servers::Keys;
        f.keys = "00000000000000ab, nope".into();
        assert_eq!(f.check().unwrap_err().field, "servers");
        f.keys = "00000000000000ab 00000000000000cd".into();
        assert_eq!(
            f.check().unwrap().servers,
            ServerFilter::Keys(vec![ServerKey(0xab), ServerKey(0xcd)])
        );
        let mut f = base;
        f.servers = Servers::NameContains;
        assert_eq!(f.check().unwrap_err().field, "servers");
        f.name_contains = "Feuer".into();
        assert_eq!(
            f.check().unwrap().servers,
            ServerFilter::NameContains("feuer".into())
        );
    }

    #[test]
    fn a_preview_takes_the_servers_without_a_url() {
        let mut f = FormInput {
            format: Format::DiscordCard,
            ..FormInput::default()
        };
        assert_eq!(f.server_filter(), Some(ServerFilter::All));
        f.servers = Servers::Keys;
        f.keys = "nope".into();
        assert_eq!(f.server_filter(), None);
        f.keys = "00000000000000ab".into();
        assert_eq!(
            f.server_filter(),
            Some(ServerFilter::Keys(vec![ServerKey(0xab)]))
        );
    }
}
