//! Web Push requests (`docs/protocol.md` §2.4): a browser's push
//! subscription (what `PushSubscription.toJSON()` gives) and the watches a
//! player asks for. Validated here, once, so the bridge and the page
//! refuse the same input and name the same field (`watches[2].events`).
//!
//! Whether an endpoint's host may be reached (public, or loopback with
//! `--push-allow-insecure`) and whether `p256dh` is a point on the curve
//! are the bridge's to decide: they need DNS and the curve's arithmetic,
//! which the page does not carry.

use base64::{engine::general_purpose::URL_SAFE_NO_PAD, Engine as _};
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

use crate::{
    watch::{events_named, object, refuse, threshold_named, url_named, Event, FieldError},
    ServerKey,
};

/// Watches one subscription may hold at most.
pub const MAX_WATCHES: usize = 20;
/// Longest endpoint accepted, in bytes (the push services' are 150 to
/// 400).
pub const MAX_ENDPOINT_LEN: usize = 1024;
/// Largest push request body the bridge reads, in bytes (20 watches with
/// every event and a subscription fit in about 3 KiB).
pub const MAX_PUSH_REQUEST_BYTES: usize = 8 * 1024;
/// Bytes of `keys.p256dh`: an uncompressed P-256 point.
pub const P256DH_BYTES: usize = 65;
/// Bytes of `keys.auth`.
pub const AUTH_BYTES: usize = 16;

/// Which endpoint schemes a bridge takes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Schemes {
    /// `https` only (every real push service).
    Https,
    /// `http` too (`--push-allow-insecure`, tests; the bridge then still
    /// sends `http` to loopback addresses only).
    AlsoHttp,
}

/// A browser's push subscription: where to send, and the keys that
/// encrypt for it (RFC 8291).
#[derive(Clone, PartialEq, Eq)]
pub struct Subscription {
    /// `https` (or `http`, see [`Schemes`]), with a host, without
    /// credentials or fragment: its shape checked here, as webhooks' URLs
    /// are (the page carries no URL parser); the bridge parses it fully.
    pub endpoint: String,
    /// The browser's public key: an uncompressed P-256 point (`0x04`,
    /// then 64 bytes).
    pub p256dh: [u8; P256DH_BYTES],
    /// The browser's authentication secret: together with the endpoint it
    /// names the subscription (nobody else knows it).
    pub auth: [u8; AUTH_BYTES],
}

impl std::fmt::Debug for Subscription {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        // The endpoint is a capability to notify this browser, and the
        // auth secret names it: neither goes into a log.
        f.write_str("Subscription(..)")
    }
}

impl Subscription {
    /// Validates `subscription` as `PushSubscription.toJSON()` writes it:
    /// `{"endpoint","expirationTime"?,"keys":{"p256dh","auth"}}` (other
    /// fields a browser may add are ignored).
    pub fn from_value(value: Option<&Value>, schemes: Schemes) -> Result<Self, FieldError> {
        let Some(Value::Object(obj)) = value else {
            return refuse("subscription", "is required, as an object");
        };
        let endpoint = parse_endpoint(obj.get("endpoint"), schemes)?;
        let Some(Value::Object(keys)) = obj.get("keys") else {
            return refuse("subscription.keys", "is required, as an object");
        };
        let p256dh = decode_key(keys, "p256dh", "subscription.keys.p256dh")?;
        if p256dh[0] != 0x04 {
            return refuse(
                "subscription.keys.p256dh",
                "must be an uncompressed P-256 point",
            );
        }
        let auth = decode_key(keys, "auth", "subscription.keys.auth")?;
        Ok(Self {
            endpoint,
            p256dh,
            auth,
        })
    }

    /// The subscription as `PushSubscription.toJSON()` spells it (what the
    /// bridge stores).
    pub fn to_json(&self) -> Value {
        serde_json::json!({
            "endpoint": self.endpoint,
            "keys": {
                "p256dh": URL_SAFE_NO_PAD.encode(self.p256dh),
                "auth": URL_SAFE_NO_PAD.encode(self.auth),
            }
        })
    }
}

/// One watch of a subscription: a server and the events it wants, as
/// requests spell it and answers repeat it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct PushWatch {
    pub key: ServerKey,
    /// One to four events, each once (sorted when validated).
    pub events: Vec<Event>,
    /// With `players-reached` (1 to 255), and only with it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub threshold: Option<u32>,
}

impl PushWatch {
    /// The watch as the request spells it.
    pub fn to_json(&self) -> Value {
        serde_json::to_value(self).unwrap_or(Value::Null)
    }
}

/// `GET /api/push/key`: the VAPID public key a page subscribes with.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(rename_all = "camelCase")]
pub struct PushKey {
    /// The uncompressed P-256 point, base64url without padding (what
    /// `pushManager.subscribe`'s `applicationServerKey` takes).
    pub public_key: String,
}

/// `GET /api/admin/push`: whether Web Push runs, and the subscriptions
/// per source (the address, or IPv6 /64, each was made from).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(rename_all = "camelCase")]
pub struct PushStatus {
    /// Whether the bridge sends pushes.
    pub enabled: bool,
    /// Why it does not: it has no contact for the push services.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub off: Option<String>,
    /// The contact every push carries (`mailto:` or `https:`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub contact: Option<String>,
    /// Subscriptions held.
    pub subscriptions: u64,
    /// Subscriptions kept at most; when full, the source holding the most
    /// gives up its oldest to a new one.
    pub max_subscriptions: u64,
    /// Subscriptions one source may hold.
    pub max_per_source: u64,
    /// Seconds a subscription is kept without being renewed.
    pub expire_after: u64,
    /// The sources holding the most subscriptions (at most 100), the
    /// most first.
    pub sources: Vec<PushSource>,
}

/// One source's push subscriptions.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(rename_all = "camelCase")]
pub struct PushSource {
    /// An IP address; for IPv6, the first address of its /64.
    pub source: String,
    pub subscriptions: u64,
    /// When its oldest subscription was made (Unix ms).
    pub oldest: i64,
}

/// The answer to `PUT /api/push/subscription`: the watches as kept.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct PushWatches {
    pub watches: Vec<PushWatch>,
}

/// A browser's subscription as `PushSubscription.toJSON()` writes it
/// (described for the OpenAPI document; [`Subscription::from_value`]
/// reads it).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(rename_all = "camelCase")]
pub struct SubscriptionOnWire {
    /// `https` (`http` on loopback only with `--push-allow-insecure`).
    pub endpoint: String,
    /// Ignored.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub expiration_time: Option<f64>,
    pub keys: SubscriptionKeys,
}

/// A subscription's keys, base64url.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct SubscriptionKeys {
    /// The browser's P-256 public key (65 bytes, uncompressed).
    pub p256dh: String,
    /// The browser's authentication secret (16 bytes).
    pub auth: String,
}

/// The body of `PUT /api/push/subscription` (read by
/// [`PushRequest::parse`]).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct PushSubscribe {
    pub subscription: SubscriptionOnWire,
    /// At most 20.
    pub watches: Vec<PushWatch>,
}

/// The body of `DELETE /api/push/subscription` (read by
/// [`PushRemoval::parse`]).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct PushUnsubscribe {
    pub subscription: SubscriptionOnWire,
}

/// A valid `PUT /api/push/subscription` body.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PushRequest {
    pub subscription: Subscription,
    /// At most [`MAX_WATCHES`]; may be empty (nothing watched yet).
    pub watches: Vec<PushWatch>,
}

impl PushRequest {
    /// Reads and validates a request body.
    pub fn parse(body: &[u8], schemes: Schemes) -> Result<Self, FieldError> {
        let obj = bounded_object(body)?;
        if obj.keys().any(|k| k != "subscription" && k != "watches") {
            return refuse(
                "body",
                "has a field that is not one of subscription, watches",
            );
        }
        let subscription = Subscription::from_value(obj.get("subscription"), schemes)?;
        let watches = parse_watches(obj.get("watches"))?;
        Ok(Self {
            subscription,
            watches,
        })
    }

    /// Validates a stored subscription's watches (a row is trusted no more
    /// than a request).
    pub fn watches_from_value(value: &Value) -> Result<Vec<PushWatch>, FieldError> {
        parse_watches(Some(value))
    }

    /// The watches as the request spells them (what the bridge stores
    /// and answers).
    pub fn watches_json(watches: &[PushWatch]) -> Value {
        Value::Array(watches.iter().map(PushWatch::to_json).collect())
    }

    /// The answer to the request: the watches as kept.
    pub fn answer(&self) -> PushWatches {
        PushWatches {
            watches: self.watches.clone(),
        }
    }
}

/// A valid `DELETE /api/push/subscription` body: `{"subscription":…}`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PushRemoval {
    pub subscription: Subscription,
}

impl PushRemoval {
    /// Reads and validates a request body (any scheme: a subscription that
    /// is stored was checked when it was made).
    pub fn parse(body: &[u8]) -> Result<Self, FieldError> {
        let obj = bounded_object(body)?;
        if obj.keys().any(|k| k != "subscription") {
            return refuse("body", "has a field other than subscription");
        }
        let subscription = Subscription::from_value(obj.get("subscription"), Schemes::AlsoHttp)?;
        Ok(Self { subscription })
    }
}

/// A body as a JSON object, at most [`MAX_PUSH_REQUEST_BYTES`].
fn bounded_object(body: &[u8]) -> Result<Map<String, Value>, FieldError> {
    if body.len() > MAX_PUSH_REQUEST_BYTES {
        return refuse("body", "larger than 8 KiB");
    }
    object(body)
}

fn parse_endpoint(value: Option<&Value>, schemes: Schemes) -> Result<String, FieldError> {
    const FIELD: &str = "subscription.endpoint";
    let too_long = (MAX_ENDPOINT_LEN, "is longer than 1024 bytes");
    let (scheme, endpoint) = url_named(FIELD, value, too_long)?;
    match (scheme.as_str(), schemes) {
        ("https", _) | ("http", Schemes::AlsoHttp) => Ok(endpoint),
        _ => refuse(FIELD, "must be https"),
    }
}

/// `keys[name]`: base64url (padded or not) of exactly `N` bytes.
fn decode_key<const N: usize>(
    keys: &Map<String, Value>,
    name: &str,
    field: &'static str,
) -> Result<[u8; N], FieldError> {
    let Some(text) = keys.get(name).and_then(Value::as_str) else {
        return refuse(field, "is required, as a string");
    };
    // Longer text cannot hold N bytes; not decoded at all.
    if text.len() > N * 2 {
        return refuse(field, "has the wrong length");
    }
    let Ok(bytes) = URL_SAFE_NO_PAD.decode(text.trim_end_matches('=')) else {
        return refuse(field, "is not base64url");
    };
    <[u8; N]>::try_from(bytes.as_slice()).or_else(|_| refuse(field, "has the wrong length"))
}

fn parse_watches(value: Option<&Value>) -> Result<Vec<PushWatch>, FieldError> {
    let Some(Value::Array(items)) = value else {
        return refuse("watches", "is required, as a list");
    };
    if items.len() > MAX_WATCHES {
        return refuse("watches", "has more than 20 watches");
    }
    let mut out = Vec::with_capacity(items.len());
    for (i, item) in items.iter().enumerate() {
        let Value::Object(obj) = item else {
            return refuse(format!("watches[{i}]"), "must be an object");
        };
        if obj
            .keys()
            .any(|k| !matches!(k.as_str(), "key" | "events" | "threshold"))
        {
            return refuse(
                format!("watches[{i}]"),
                "has a field that is not one of key, events, threshold",
            );
        }
        let Some(key) = obj
            .get("key")
            .and_then(Value::as_str)
            .and_then(|s| s.parse::<ServerKey>().ok())
        else {
            return refuse(
                format!("watches[{i}].key"),
                "must be 16 lowercase hex digits",
            );
        };
        let events = events_named(format!("watches[{i}].events"), obj.get("events"))?;
        let threshold = threshold_named(
            format!("watches[{i}].threshold"),
            obj.get("threshold"),
            &events,
        )?;
        out.push(PushWatch {
            key,
            events,
            threshold,
        });
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    const P256DH: &str =
        "BNcRdreALRFXTkOOUHK1EtK2wtaz5Ry4YfYCA_0QTpQtUbVlUls0VJXg7A8u-Ts1XbjhazAkj7I99e8QcYP7DkM";
    const AUTH: &str = "tBHItJI5svbpez7KI4CCXg";

    fn sub(endpoint: &str) -> Value {
        json!({"endpoint": endpoint, "expirationTime": null,
               "keys": {"p256dh": P256DH, "auth": AUTH}})
    }

    fn request(watches: Value) -> Value {
        json!({"subscription": sub("https://push.example.net/wpush/v2/abc"), "watches": watches})
    }

    fn field(v: &Value, schemes: Schemes) -> String {
        PushRequest::parse(v.to_string().as_bytes(), schemes)
            .expect_err("refused")
            .field
            .into_owned()
    }

    #[test]
    fn a_browsers_subscription_is_read() {
        let body = request(json!([
            {"key": "0123456789abcdef", "events": ["lobby-opened", "server-online"]},
            {"key": "00000000000000ff", "events": ["players-reached"], "threshold": 3},
        ]));
        let got = PushRequest::parse(body.to_string().as_bytes(), Schemes::Https).unwrap();
        assert_eq!(
            got.subscription.endpoint,
            "https://push.example.net/wpush/v2/abc"
        );
        assert_eq!(got.subscription.auth.len(), 16);
        assert_eq!(got.watches.len(), 2);
        assert_eq!(
            got.watches[0].events,
            vec![Event::ServerOnline, Event::LobbyOpened]
        );
        assert_eq!(got.watches[1].threshold, Some(3));
        // What is stored reads back as itself.
        let stored = PushRequest::watches_json(&got.watches);
        assert_eq!(
            PushRequest::watches_from_value(&stored).unwrap(),
            got.watches
        );
        let again = Subscription::from_value(Some(&got.subscription.to_json()), Schemes::Https);
        assert_eq!(again.unwrap(), got.subscription);
        assert_eq!(format!("{:?}", got.subscription), "Subscription(..)");
    }

    #[test]
    fn each_bad_field_is_named() {
        let https = Schemes::Https;
        let w = |v: Value| request(json!([v]));
        assert_eq!(field(&json!([]), https), "body");
        assert_eq!(
            field(
                &json!({"subscription": sub("https://a.b/"), "watches": [], "x": 1}),
                https
            ),
            "body"
        );
        assert_eq!(field(&json!({"watches": []}), https), "subscription");
        assert_eq!(
            field(
                &json!({"subscription": sub("http://a.b/"), "watches": []}),
                https
            ),
            "subscription.endpoint"
        );
        assert_eq!(
            field(
                &json!({"subscription": sub("ftp://a.b/"), "watches": []}),
                Schemes::AlsoHttp
            ),
            "subscription.endpoint"
        );
        assert_eq!(
            field(
                &json!({"subscription": sub("https://u:p@a.b/"), "watches": []}),
                https
            ),
            "subscription.endpoint"
        );
        let long = format!("https://a.b/{}", "x".repeat(1100));
        assert_eq!(
            field(&json!({"subscription": sub(&long), "watches": []}), https),
            "subscription.endpoint"
        );
        let mut s = sub("https://a.b/");
        s["keys"]["p256dh"] = json!("AAAA");
        assert_eq!(
            field(&json!({"subscription": s, "watches": []}), https),
            "subscription.keys.p256dh"
        );
        let mut s = sub("https://a.b/");
        s["keys"]["auth"] = json!("!!!!");
        assert_eq!(
            field(&json!({"subscription": s, "watches": []}), https),
            "subscription.keys.auth"
        );
        let mut s = sub("https://a.b/");
        s["keys"] = json!(null);
        assert_eq!(
            field(&json!({"subscription": s, "watches": []}), https),
            "subscription.keys"
        );
        assert_eq!(
            field(&json!({"subscription": sub("https://a.b/")}), https),
            "watches"
        );
        assert_eq!(field(&w(json!(1)), https), "watches[0]");
        assert_eq!(
            field(&w(json!({"key": "ABC", "events": ["lobby-opened"]})), https),
            "watches[0].key"
        );
        assert_eq!(
            field(&w(json!({"key": "0123456789abcdef", "events": []})), https),
            "watches[0].events"
        );
        assert_eq!(
            field(
                &w(json!({"key": "0123456789abcdef", "events": ["players-reached"]})),
                https
            ),
            "watches[0].threshold"
        );
        assert_eq!(
            field(
                &w(json!({"key": "0123456789abcdef", "events": ["lobby-opened"], "cooldown": 1})),
                https
            ),
            "watches[0]"
        );
        let many: Vec<Value> = (0..21)
            .map(|i| json!({"key": format!("{i:016x}"), "events": ["lobby-opened"]}))
            .collect();
        assert_eq!(field(&request(Value::Array(many)), https), "watches");
        let second_bad = json!([{"key": "0123456789abcdef", "events": ["lobby-opened"]},
                                {"key": "0123456789abcdef", "events": ["nope"]}]);
        assert_eq!(field(&request(second_bad), https), "watches[1].events");
        let big = vec![b' '; MAX_PUSH_REQUEST_BYTES + 1];
        assert_eq!(PushRequest::parse(&big, https).unwrap_err().field, "body");
    }

    #[test]
    fn http_only_where_the_bridge_allows_it() {
        let body = json!({"subscription": sub("http://127.0.0.1:9/p"), "watches": []});
        assert!(PushRequest::parse(body.to_string().as_bytes(), Schemes::AlsoHttp).is_ok());
        let removal = json!({"subscription": sub("http://127.0.0.1:9/p")});
        assert!(PushRemoval::parse(removal.to_string().as_bytes()).is_ok());
        let extra = json!({"subscription": sub("https://a.b/"), "watches": []});
        assert_eq!(
            PushRemoval::parse(extra.to_string().as_bytes())
                .unwrap_err()
                .field,
            "body"
        );
    }
}
