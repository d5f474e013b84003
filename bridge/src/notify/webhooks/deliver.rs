//! One delivery: its attempts, what each answer means, and the waits
//! between them (`docs/protocol.md` §2.4). A receiver costs bounded time
//! (5 s per attempt, head and body together; at most 6 attempts, and a
//! wait it asks for beyond [`MAX_WAIT`] ends the delivery) and bounded
//! memory (at most [`MAX_ANSWER`] bytes of any answer are read; of a
//! status card's first post, whose answer is the message, 64 KiB).
//!
//! The client is `reqwest` (over hyper, which the bridge already uses for
//! its server) with rustls and ring for `https`: a well-kept client that
//! lets the bridge switch redirects off, choose the resolver (see
//! [`super::address`]), ignore proxy settings of the environment and bound
//! the time of a whole request; without default features it adds no
//! HTTP/2, cookies or OpenSSL.

use std::time::{Duration, SystemTime, UNIX_EPOCH};

use reqwest::{header, redirect, Client, Method, RequestBuilder, StatusCode};
use url::Url;

use super::address::{self, CheckedResolver, Reach};
use crate::notify::channel::Sent;

/// Time limit of one attempt: connecting, the answer's head and the part
/// of its body that is read.
pub const ATTEMPT_TIMEOUT: Duration = Duration::from_secs(5);
/// Attempts of one delivery at most.
pub const MAX_ATTEMPTS: u32 = 6;
/// The wait before the second attempt; it doubles after each.
pub const FIRST_RETRY: Duration = Duration::from_secs(1);
/// The longest wait a receiver may ask for (`Retry-After`, Discord's
/// `retry_after`); a longer one ends the delivery as failed.
pub const MAX_WAIT: Duration = Duration::from_secs(300);
/// Bytes read of any answer at most (enough for Discord's 429 JSON).
pub const MAX_ANSWER: usize = 4096;

/// What an attempt comes to whose address is refused: the URL's own, or
/// one its name resolved to.
pub const REFUSED: Sent = Sent::Failed {
    status: None,
    why: "address refused",
};

/// The client every delivery shares. An attempt comes to a [`Sent`]: a
/// 2xx is `Delivered`; 429, 5xx or no answer `Retry`; any other answer (a
/// redirect included) or an address refused `Failed`.
#[derive(Debug, Clone)]
pub struct Sender {
    client: Client,
    reach: Reach,
}

impl Sender {
    /// The webhooks' client ([`Self::with`]), which keeps no idle
    /// connection.
    pub fn new(reach: Reach) -> Result<Self, reqwest::Error> {
        let agent = concat!("lobby-bridge/", env!("CARGO_PKG_VERSION"), " (webhooks)");
        Self::with(reach, 0, agent)
    }

    /// A client that follows no redirect, uses no proxy, resolves only
    /// through [`CheckedResolver`] with `reach`, bounds each request by
    /// [`ATTEMPT_TIMEOUT`] and keeps at most `idle_per_host` idle
    /// connections (webhooks none; a push service takes many requests in
    /// a row). Web Push sends through one too.
    pub fn with(
        reach: Reach,
        idle_per_host: usize,
        user_agent: &'static str,
    ) -> Result<Self, reqwest::Error> {
        let client = Client::builder()
            .redirect(redirect::Policy::none())
            .no_proxy()
            .dns_resolver(std::sync::Arc::new(CheckedResolver { reach }))
            .timeout(ATTEMPT_TIMEOUT)
            .connect_timeout(ATTEMPT_TIMEOUT)
            .pool_max_idle_per_host(idle_per_host)
            .user_agent(user_agent)
            .build()?;
        Ok(Self { client, reach })
    }

    /// Sends the request `request` makes to `url`, unless `url`'s address
    /// is refused: the answer, or what the attempt came to without one
    /// ([`REFUSED`], the request's own refusal, or a retry for the reason
    /// `no_answer` gives the client's error).
    pub async fn send(
        &self,
        url: &Url,
        request: impl FnOnce(&Client) -> Result<RequestBuilder, Sent>,
        no_answer: fn(&reqwest::Error) -> &'static str,
    ) -> Result<reqwest::Response, Sent> {
        if !address::literal_allowed(url, self.reach) {
            return Err(REFUSED);
        }
        request(&self.client)?.send().await.map_err(|e| {
            if address::is_refused(&e) {
                return REFUSED;
            }
            let why = no_answer(&e);
            Sent::Retry {
                status: None,
                after: None,
                why,
            }
        })
    }

    /// One `POST` of `body` with `headers` to `url`.
    pub async fn attempt(&self, url: &Url, headers: header::HeaderMap, body: Vec<u8>) -> Sent {
        self.exchange(Method::POST, url, headers, body, MAX_ANSWER)
            .await
            .0
    }

    /// One request of `method` with `body` and `headers` to `url`: what it
    /// came to, and the answer's body (at most `limit` bytes of it read).
    pub async fn exchange(
        &self,
        method: Method,
        url: &Url,
        headers: header::HeaderMap,
        body: Vec<u8>,
        limit: usize,
    ) -> (Sent, Vec<u8>) {
        let request = |client: &Client| {
            Ok(client
                .request(method, url.clone())
                .headers(headers)
                .header(header::CONTENT_TYPE, "application/json")
                .body(body))
        };
        let mut answer = match self.send(url, request, no_answer).await {
            Ok(answer) => answer,
            Err(sent) => return (sent, Vec::new()),
        };
        let status = answer.status();
        let retry_after = answer
            .headers()
            .get(header::RETRY_AFTER)
            .and_then(|v| v.to_str().ok())
            .and_then(parse_retry_after);
        // The body is read, at most MAX_ANSWER bytes of it, within the
        // attempt's time limit; the rest is never read (the connection is
        // dropped with the answer).
        let mut body = Vec::new();
        while body.len() < limit {
            match answer.chunk().await {
                Ok(Some(chunk)) => {
                    let room = limit - body.len();
                    body.extend_from_slice(&chunk[..chunk.len().min(room)]);
                }
                Ok(None) | Err(_) => break,
            }
        }
        drop(answer);
        (classify(status, retry_after, &body), body)
    }
}

/// Why a webhook's receiver gave no answer.
fn no_answer(e: &reqwest::Error) -> &'static str {
    if e.is_timeout() {
        "no answer in time"
    } else if e.is_connect() {
        "cannot connect"
    } else {
        "no answer"
    }
}

/// What an answer's status means, with the wait it asks for: the larger
/// of `Retry-After` and the JSON `retry_after` (Discord, in seconds).
fn classify(status: StatusCode, retry_after: Option<Duration>, body: &[u8]) -> Sent {
    let code = status.as_u16();
    if status.is_success() {
        return Sent::Delivered(code);
    }
    if status == StatusCode::TOO_MANY_REQUESTS || status.is_server_error() {
        let in_body = serde_json::from_slice::<serde_json::Value>(body)
            .ok()
            .and_then(|v| v.get("retry_after").and_then(serde_json::Value::as_f64))
            .filter(|s| s.is_finite() && *s >= 0.0)
            .map(|s| Duration::from_secs_f64(s.min(MAX_WAIT.as_secs_f64() * 2.0)));
        let after = retry_after.max(in_body);
        let why = if code == 429 {
            "rate limited"
        } else {
            "server error"
        };
        return Sent::Retry {
            status: Some(code),
            after,
            why,
        };
    }
    let why = if status.is_redirection() {
        "redirect (not followed)"
    } else {
        "refused by the receiver"
    };
    Sent::Failed {
        status: Some(code),
        why,
    }
}

/// `Retry-After` as seconds or as an HTTP date.
fn parse_retry_after(text: &str) -> Option<Duration> {
    let text = text.trim();
    if let Ok(secs) = text.parse::<u64>() {
        return Some(Duration::from_secs(secs.min(MAX_WAIT.as_secs() * 2)));
    }
    let when = httpdate::parse_http_date(text).ok()?;
    Some(
        when.duration_since(SystemTime::now())
            .unwrap_or(Duration::ZERO),
    )
}

/// The wait before attempt `next` (2, 3, …) after an answer that asked
/// for `after`: 1 s doubling, never less than asked. `None`: the receiver
/// asked for more than [`MAX_WAIT`], or no attempt is left.
pub fn wait_before(next: u32, after: Option<Duration>) -> Option<Duration> {
    if !(2..=MAX_ATTEMPTS).contains(&next) {
        return None;
    }
    let backoff = FIRST_RETRY * 2u32.pow(next - 2);
    match after {
        Some(a) if a > MAX_WAIT => None,
        Some(a) => Some(a.max(backoff)),
        None => Some(backoff),
    }
}

/// Unix seconds now (`webhook-timestamp`).
pub fn unix_now() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.as_secs())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn statuses_are_delivered_retried_or_failed() {
        assert_eq!(
            classify(StatusCode::NO_CONTENT, None, b""),
            Sent::Delivered(204)
        );
        let Sent::Retry { status, after, .. } = classify(StatusCode::BAD_GATEWAY, None, b"") else {
            panic!("5xx is retried")
        };
        assert_eq!((status, after), (Some(502), None));
        let discord =
            br#"{"message":"You are being rate limited.","retry_after":2.5,"global":false}"#;
        let Sent::Retry { after, .. } = classify(
            StatusCode::TOO_MANY_REQUESTS,
            Some(Duration::from_secs(1)),
            discord,
        ) else {
            panic!("429 is retried")
        };
        assert_eq!(
            after,
            Some(Duration::from_millis(2500)),
            "the longer of the two"
        );
        for s in [301, 302, 307, 308, 400, 401, 404, 410] {
            let status = StatusCode::from_u16(s).unwrap();
            assert!(
                matches!(classify(status, None, b""), Sent::Failed { .. }),
                "{s}"
            );
        }
    }

    #[test]
    fn waits_double_from_one_second_and_honour_the_receiver() {
        let s = Duration::from_secs;
        let waits: Vec<_> = (2..=6).map(|n| wait_before(n, None).unwrap()).collect();
        assert_eq!(waits, [s(1), s(2), s(4), s(8), s(16)]);
        assert_eq!(wait_before(7, None), None, "six attempts in all");
        assert_eq!(wait_before(2, Some(s(3))), Some(s(3)));
        assert_eq!(wait_before(5, Some(s(3))), Some(s(8)));
        assert_eq!(wait_before(2, Some(MAX_WAIT + s(1))), None);
        assert_eq!(parse_retry_after("7"), Some(s(7)));
        assert_eq!(
            parse_retry_after("Wed, 21 Oct 2015 07:28:00 GMT"),
            Some(Duration::ZERO)
        );
        assert_eq!(parse_retry_after("soon"), None);
    }
}
