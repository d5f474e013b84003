//! One push (`docs/protocol.md` §2.4): the payload encrypted for the
//! browser (`aes128gcm`, RFC 8291), the VAPID header (RFC 8292), `TTL`
//! and `Topic`, sent to the subscription's endpoint through the same kind
//! of client as the webhooks (no redirects, no proxy, every address
//! checked where the connection is made: [`crate::notify::webhooks::address`]).
//!
//! Encryption is `web-push-native`'s: it is built on the RustCrypto
//! crates (p256, aes-gcm, hkdf), needs no OpenSSL (the `web-push` crate
//! does), and gives a plain `http::Request` that the bridge's `reqwest`
//! client (already used for webhooks, over the same `http` 1 types)
//! sends as it is; its `decrypt` lets the tests read what was sent.

use std::time::Duration;

use protocol::{push::Subscription, watch::Event, ServerKey};
use reqwest::{header, RequestBuilder, StatusCode};
use url::Url;
use web_push_native::{p256::PublicKey, Auth, WebPushBuilder};

use crate::notify::channel::Sent;
use crate::notify::webhooks::{
    address::Reach,
    deliver::{Sender, MAX_ANSWER},
};

/// How long a push service keeps a push for an offline browser, by
/// event: a lobby that opened or filled is news for minutes; a server
/// that came or went, for an hour.
pub fn ttl(event: Event) -> Duration {
    match event {
        Event::LobbyOpened | Event::PlayersReached => Duration::from_secs(15 * 60),
        Event::ServerOnline | Event::ServerOffline => Duration::from_secs(3600),
    }
}

/// The `Topic` of a push (RFC 8030 §5.4: at most 32 base64url
/// characters): the key and the event, so a push service that still holds
/// an older push of the same event for the browser replaces it.
pub fn topic(key: ServerKey, event: Event) -> String {
    let short = match event {
        Event::ServerOnline => "online",
        Event::ServerOffline => "offline",
        Event::LobbyOpened => "lobby",
        Event::PlayersReached => "players",
    };
    format!("{key}-{short}")
}

/// Why a push is tried again: the service asked (429, 5xx) or did not
/// answer.
const RETRY: &str = "the push service asked to retry";

/// The client every push shares. A push comes to a [`Sent`]: a 2xx
/// (201 Created, usually) is `Delivered`; 404 or 410 `Gone` (the
/// subscription is deleted); 429, 5xx or no answer `Retry`; any other
/// answer, an address refused or a payload that could not be encrypted
/// `Failed`.
#[derive(Debug, Clone)]
pub struct Pusher(Sender);

impl Pusher {
    /// A client that reaches `reach`, keeping a few idle connections per
    /// push service (one event sends many pushes to each).
    pub fn new(reach: Reach) -> Result<Self, reqwest::Error> {
        let agent = concat!("lobby-bridge/", env!("CARGO_PKG_VERSION"), " (web push)");
        Sender::with(reach, 8, agent).map(Self)
    }

    /// One push of `payload` to `sub` (its endpoint parsed as `url`), with
    /// the VAPID `authorization`.
    pub async fn send(
        &self,
        sub: &Subscription,
        url: &Url,
        authorization: &str,
        payload: &[u8],
        ttl: Duration,
        topic: &str,
    ) -> Sent {
        let request =
            |client: &reqwest::Client| match encrypt(sub, authorization, payload, ttl, topic) {
                Ok(r) => Ok(RequestBuilder::from_parts(client.clone(), r)),
                Err(why) => Err(Sent::Failed { status: None, why }),
            };
        let mut answer = match self.0.send(url, request, |_| RETRY).await {
            Ok(a) => a,
            Err(sent) => return sent,
        };
        let status = answer.status();
        let after = answer
            .headers()
            .get(header::RETRY_AFTER)
            .and_then(|v| v.to_str().ok())
            .and_then(|v| v.trim().parse::<u64>().ok())
            .map(Duration::from_secs);
        // A little of the body is read, so the connection can be reused;
        // the rest never is.
        let mut read = 0;
        while read < MAX_ANSWER {
            match answer.chunk().await {
                Ok(Some(chunk)) => read += chunk.len(),
                Ok(None) | Err(_) => break,
            }
        }
        classify(status, after)
    }
}

/// The encrypted request, as `reqwest` sends it.
fn encrypt(
    sub: &Subscription,
    authorization: &str,
    payload: &[u8],
    ttl: Duration,
    topic: &str,
) -> Result<reqwest::Request, &'static str> {
    let endpoint = sub
        .endpoint
        .as_str()
        .parse()
        .map_err(|_| "endpoint is not a URI")?;
    let ua_public = PublicKey::from_sec1_bytes(&sub.p256dh).map_err(|_| "p256dh is no point")?;
    let auth = Auth::clone_from_slice(&sub.auth);
    let mut request = WebPushBuilder::new(endpoint, ua_public, auth)
        .with_valid_duration(ttl)
        .build(payload.to_vec())
        .map_err(|_| "cannot encrypt")?;
    let headers = request.headers_mut();
    for (name, value) in [("authorization", authorization), ("topic", topic)] {
        let value = header::HeaderValue::from_str(value).map_err(|_| "bad header")?;
        headers.insert(name, value);
    }
    headers.insert("urgency", header::HeaderValue::from_static("normal"));
    reqwest::Request::try_from(request).map_err(|_| "cannot build the request")
}

fn classify(status: StatusCode, after: Option<Duration>) -> Sent {
    let code = status.as_u16();
    if status.is_success() {
        Sent::Delivered(code)
    } else if code == 404 || code == 410 {
        Sent::Gone(code)
    } else if code == 429 || status.is_server_error() {
        Sent::Retry {
            status: Some(code),
            after,
            why: RETRY,
        }
    } else if status.is_redirection() {
        Sent::Failed {
            status: Some(code),
            why: "redirect (not followed)",
        }
    } else {
        Sent::Failed {
            status: Some(code),
            why: "refused by the push service",
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn topics_fit_rfc_8030() {
        for event in Event::ALL {
            let t = topic(ServerKey(u64::MAX), event);
            assert!(t.len() <= 32, "{t}");
            assert!(t
                .bytes()
                .all(|b| b.is_ascii_alphanumeric() || b == b'-' || b == b'_'));
        }
    }

    #[test]
    fn answers() {
        assert_eq!(classify(StatusCode::CREATED, None), Sent::Delivered(201));
        assert_eq!(classify(StatusCode::GONE, None), Sent::Gone(410));
        assert_eq!(classify(StatusCode::NOT_FOUND, None), Sent::Gone(404));
        assert!(matches!(
            classify(StatusCode::TOO_MANY_REQUESTS, None),
            Sent::Retry { .. }
        ));
        assert!(matches!(
            classify(StatusCode::FOUND, None),
            Sent::Failed { .. }
        ));
        assert!(matches!(
            classify(StatusCode::FORBIDDEN, None),
            Sent::Failed { .. }
        ));
    }
}
