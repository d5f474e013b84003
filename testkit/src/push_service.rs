//! A push service on loopback, standing in for a browser vendor's so the
//! bridge's Web Push reaches a browser without the internet: the one
//! stand-in of the bridge's push tests and the end-to-end Firefox test.
//!
//! Its HTTP side takes the bridge's `POST`s to the endpoints it hands out
//! (`http://ADDR/push/{id}`, RFC 8030), refuses what a real service
//! refuses (below), and gives each push it takes to its browser:
//!
//! - a browser made in the test ([`PushService::browser`]: a P-256 key
//!   pair and an auth secret, as a browser's push client holds): the body
//!   is decrypted with its private key (RFC 8291) and the push handed to
//!   the test ([`PushService::next`], [`Delivered`]);
//! - otherwise the Firefox connected to its WebSocket side, which speaks
//!   Mozilla's push protocol (autopush; `dom.push.serverURL` =
//!   [`PushService::server_url`], subprotocol `push-notification`):
//!   `hello` → a UAID and `use_webpush`, `register` → a `pushEndpoint` on
//!   the HTTP side, `{}` pings answered, and `ack`s recorded. Each
//!   encrypted body is forwarded untouched as a `notification` (the body
//!   as base64url `data`, `headers.encoding` from `Content-Encoding`).
//!
//! It answers `201 Created`, or what the test set for that endpoint
//! ([`PushService::answer`]: 404 or 410 for a subscription it dropped).
//! Everything it saw is recorded for the test to assert on ([`Log`]), and
//! what was wrong with a push too ([`Log::faults`]).
//!
//! It refuses what the real services refuse of a push's VAPID token
//! (RFC 8292, [`refusal`]): Mozilla's answers 401 to a token without
//! `sub`, for another audience than its origin, or expired or valid for
//! more than 24 hours, and to one whose signature does not verify with
//! the application server key the subscription was made with (once the
//! test trusts a key, [`PushService::trust`]: `k` must be it, the token
//! signed by it with ES256); Apple's answers 403 (`BadJwtToken`) to a
//! `sub` that is not a `mailto:` or `https:` URI it can resolve (one at
//! `localhost` or under `.invalid`). A push without a number in `TTL`
//! (RFC 8030 §5.2) or not encrypted as `aes128gcm` (RFC 8291) is refused
//! with 400. Such a push is recorded with that status and never reaches
//! the browser.
//!
//! Bounded like any of our servers: one request's head (8 KiB) and body
//! (4 KiB, RFC 8291's largest record) are capped, and a connection that
//! sends nothing for [`HUNG`] is dropped.

use std::{
    collections::HashMap,
    net::SocketAddr,
    sync::{Arc, Mutex, MutexGuard},
    time::{SystemTime, UNIX_EPOCH},
};

use base64::{engine::general_purpose::URL_SAFE_NO_PAD as B64URL, Engine as _};
use futures_util::{SinkExt, StreamExt};
use p256::{
    ecdsa::{signature::Verifier, Signature, VerifyingKey},
    elliptic_curve::sec1::ToEncodedPoint,
    SecretKey,
};
use serde_json::{json, Value};
use tokio::{
    io::{AsyncReadExt, AsyncWriteExt},
    net::{TcpListener, TcpStream},
    sync::mpsc,
    task::JoinHandle,
    time::timeout,
};
use tokio_tungstenite::tungstenite::{
    handshake::server::{Request, Response},
    http::HeaderValue,
    Message,
};

use crate::HUNG;

/// The WebSocket subprotocol Firefox asks for.
const SUBPROTOCOL: &str = "push-notification";
/// Largest request head (request line and headers) read.
const MAX_HEAD: usize = 8 * 1024;
/// Largest push body taken (RFC 8030 services must take 4096 bytes).
const MAX_BODY: usize = 4096;

/// `N` random bytes (a key, an auth secret).
pub fn random<const N: usize>() -> [u8; N] {
    let mut b = [0u8; N];
    getrandom::fill(&mut b).expect("the system's random numbers");
    b
}

/// A browser's push subscription made in the test, with the private key
/// only the browser has: what the service decrypts its pushes with.
pub struct Browser {
    /// Where its pushes are sent.
    pub endpoint: String,
    /// Its P-256 key (the public half is `p256dh`).
    pub secret: SecretKey,
    /// Its auth secret.
    pub auth: [u8; 16],
}

impl Browser {
    /// A browser subscribed at `endpoint` with fresh keys (an endpoint of
    /// any service: [`PushService::browser`] makes one this service can
    /// decrypt for).
    pub fn new(endpoint: String) -> Self {
        let secret = loop {
            if let Ok(k) = SecretKey::from_slice(&random::<32>()) {
                break k;
            }
        };
        Self {
            endpoint,
            secret,
            auth: random(),
        }
    }

    /// What `PushSubscription.toJSON()` gives.
    pub fn subscription(&self) -> Value {
        let point = self.secret.public_key().to_encoded_point(false);
        json!({"endpoint": self.endpoint, "expirationTime": null,
               "keys": {"p256dh": B64URL.encode(point.as_bytes()),
                        "auth": B64URL.encode(self.auth)}})
    }

    /// The bridge's `PUT /api/push/subscription` body for this browser
    /// and `watches`.
    pub fn request(&self, watches: Value) -> Value {
        json!({"subscription": self.subscription(), "watches": watches})
    }
}

/// One push to a browser made in the test, checked and decrypted.
#[derive(Debug)]
pub struct Delivered {
    /// Which browser (the endpoint's last segment).
    pub id: String,
    /// The decrypted body, as JSON.
    pub payload: Value,
    /// Its `TTL`.
    pub ttl: u64,
    /// Its `Topic` (empty if it had none).
    pub topic: String,
}

/// One `register` from the browser.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Registration {
    /// The channel it registered.
    pub channel_id: String,
    /// The application server key (base64url, the bridge's VAPID key).
    pub key: Option<String>,
}

/// One `POST` to a push endpoint.
#[derive(Debug, Clone)]
pub struct Received {
    /// The endpoint's last segment.
    pub channel_id: String,
    /// Lowercased header names.
    pub headers: HashMap<String, String>,
    /// The body as sent (encrypted).
    pub body: Vec<u8>,
    /// What the stand-in answered.
    pub status: u16,
}

/// One `ack` from the browser: its code is 100 when it decrypted the
/// message and delivered it to the service worker, 101 when it could not
/// decrypt it, 102 for other errors.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Ack {
    /// The channel of the message acknowledged.
    pub channel_id: String,
    /// The message's version.
    pub version: String,
    /// What became of it.
    pub code: u64,
}

/// What the stand-in saw.
#[derive(Debug, Default)]
pub struct Log {
    /// Firefox's `hello`s.
    pub hellos: u32,
    /// Firefox's `register`s.
    pub registrations: Vec<Registration>,
    /// Every request to an endpoint, with the answer.
    pub received: Vec<Received>,
    /// Firefox's `ack`s.
    pub acks: Vec<Ack>,
    /// What was wrong with a push (a refusal, a body that does not
    /// decrypt, no browser to give it to): a bridge's fault, or the
    /// test's.
    pub faults: Vec<String>,
}

/// The service's state.
#[derive(Default)]
struct State {
    log: Log,
    /// Firefox's connection, to forward notifications to.
    firefox: Option<mpsc::Sender<String>>,
    /// The browsers made in the test, by endpoint id: their keys.
    browsers: HashMap<String, (SecretKey, [u8; 16])>,
    /// Answers set per endpoint id.
    answers: HashMap<String, u16>,
    /// The application server key pushes must be signed with.
    trusted: Option<String>,
}

struct Shared {
    state: Mutex<State>,
    delivered: mpsc::UnboundedSender<Delivered>,
}

impl Shared {
    fn state(&self) -> MutexGuard<'_, State> {
        self.state.lock().expect("the push service's state")
    }
}

/// A running stand-in; its tasks end on drop.
pub struct PushService {
    /// Where Firefox connects (WebSocket).
    pub ws: SocketAddr,
    /// Where the endpoints it hands out point (HTTP).
    pub http: SocketAddr,
    shared: Arc<Shared>,
    delivered: mpsc::UnboundedReceiver<Delivered>,
    tasks: Vec<JoinHandle<()>>,
}

impl Drop for PushService {
    fn drop(&mut self) {
        for t in &self.tasks {
            t.abort();
        }
    }
}

impl PushService {
    /// Binds both sides on `127.0.0.1:0`.
    pub async fn start() -> PushService {
        let ws = TcpListener::bind("127.0.0.1:0").await.expect("bind ws");
        let http = TcpListener::bind("127.0.0.1:0").await.expect("bind http");
        let (ws_addr, http_addr) = (
            ws.local_addr().expect("ws addr"),
            http.local_addr().expect("http addr"),
        );
        let (tx, delivered) = mpsc::unbounded_channel();
        let shared = Arc::new(Shared {
            state: Mutex::default(),
            delivered: tx,
        });
        let tasks = vec![
            tokio::spawn(accept_ws(ws, http_addr, shared.clone())),
            tokio::spawn(accept_http(http, http_addr, shared.clone())),
        ];
        PushService {
            ws: ws_addr,
            http: http_addr,
            shared,
            delivered,
            tasks,
        }
    }

    /// The value of Firefox's `dom.push.serverURL`.
    pub fn server_url(&self) -> String {
        format!("ws://{}/", self.ws)
    }

    /// The endpoint of id `id` on the HTTP side.
    pub fn endpoint(&self, id: &str) -> String {
        format!("http://{}/push/{id}", self.http)
    }

    /// A browser this service serves, named `id`: its pushes are
    /// decrypted and handed to [`PushService::next`].
    pub fn browser(&self, id: &str) -> Browser {
        let b = Browser::new(self.endpoint(id));
        self.shared
            .state()
            .browsers
            .insert(id.to_owned(), (b.secret.clone(), b.auth));
        b
    }

    /// From now on, pushes for `id` are answered `code` (after they were
    /// given to the browser).
    pub fn answer(&self, id: &str, code: u16) {
        self.shared.state().answers.insert(id.into(), code);
    }

    /// From now on, pushes must be signed with `vapid_key` (the bridge's
    /// served key, base64url), as subscriptions made with it are.
    pub fn trust(&self, vapid_key: &str) {
        self.shared.state().trusted = Some(vapid_key.into());
    }

    /// The next push to a browser made in the test; fails the test if
    /// none comes (within [`HUNG`]) or any push so far was faulty.
    pub async fn next(&mut self) -> Delivered {
        let d = crate::bounded("a push reaching the service", self.delivered.recv())
            .await
            .expect("the service stopped");
        self.no_faults();
        d
    }

    /// Whether no push to a browser made in the test is waiting.
    pub fn nothing_yet(&mut self) -> bool {
        self.delivered.try_recv().is_err()
    }

    /// Fails the test if any push so far was faulty.
    pub fn no_faults(&self) {
        let state = self.shared.state();
        let faults = &state.log.faults;
        assert!(faults.is_empty(), "the push service saw: {faults:?}");
    }

    /// Reads what it saw so far.
    pub fn log<T>(&self, read: impl FnOnce(&Log) -> T) -> T {
        read(&self.shared.state().log)
    }
}

async fn accept_ws(listener: TcpListener, http: SocketAddr, shared: Arc<Shared>) {
    let mut next_uaid = 0u64;
    while let Ok((stream, _)) = listener.accept().await {
        next_uaid += 1;
        tokio::spawn(serve_ws(stream, http, shared.clone(), next_uaid));
    }
}

/// Answers the handshake with the subprotocol Firefox asked for.
#[allow(clippy::result_large_err)] // tungstenite's callback signature
fn with_subprotocol(
    req: &Request,
    mut res: Response,
) -> Result<Response, tokio_tungstenite::tungstenite::handshake::server::ErrorResponse> {
    let asked = req
        .headers()
        .get("sec-websocket-protocol")
        .and_then(|v| v.to_str().ok())
        .is_some_and(|v| v.split(',').any(|p| p.trim() == SUBPROTOCOL));
    if asked {
        res.headers_mut().insert(
            "sec-websocket-protocol",
            HeaderValue::from_static(SUBPROTOCOL),
        );
    }
    Ok(res)
}

async fn serve_ws(stream: TcpStream, http: SocketAddr, shared: Arc<Shared>, n: u64) {
    let Ok(ws) = tokio_tungstenite::accept_hdr_async(stream, with_subprotocol).await else {
        return;
    };
    let (mut sink, mut source) = ws.split();
    let (tx, mut rx) = mpsc::channel::<String>(16);
    shared.state().firefox = Some(tx);
    // A UAID is 32 hex digits (an undashed UUID).
    let uaid = format!("{n:032x}");
    loop {
        tokio::select! {
            out = rx.recv() => {
                let Some(text) = out else { return };
                if sink.send(Message::text(text)).await.is_err() {
                    return;
                }
            }
            msg = source.next() => {
                let Some(Ok(msg)) = msg else { return };
                let Message::Text(text) = msg else { continue };
                let Ok(v) = serde_json::from_str::<Value>(&text) else { continue };
                let reply = answer(&v, &uaid, http, &shared);
                if let Some(reply) = reply {
                    if sink.send(Message::text(reply.to_string())).await.is_err() {
                        return;
                    }
                }
            }
        }
    }
}

/// The reply to one message from the browser, recording it.
fn answer(v: &Value, uaid: &str, http: SocketAddr, shared: &Shared) -> Option<Value> {
    let mut state = shared.state();
    let log = &mut state.log;
    match v["messageType"].as_str() {
        Some("hello") => {
            log.hellos += 1;
            Some(json!({"messageType": "hello", "status": 200, "uaid": uaid,
                        "use_webpush": true, "broadcasts": {}}))
        }
        Some("register") => {
            let channel_id = v["channelID"].as_str().unwrap_or_default().to_owned();
            log.registrations.push(Registration {
                channel_id: channel_id.clone(),
                key: v["key"].as_str().map(str::to_owned),
            });
            Some(
                json!({"messageType": "register", "status": 200, "uaid": uaid,
                        "channelID": channel_id,
                        "pushEndpoint": format!("http://{http}/push/{channel_id}")}),
            )
        }
        Some("unregister") => Some(json!({"messageType": "unregister", "status": 200,
                                          "channelID": v["channelID"]})),
        Some("ack") => {
            for u in v["updates"].as_array().into_iter().flatten() {
                log.acks.push(Ack {
                    channel_id: u["channelID"].as_str().unwrap_or_default().to_owned(),
                    version: u["version"].as_str().unwrap_or_default().to_owned(),
                    code: u["code"].as_u64().unwrap_or(0),
                });
            }
            None
        }
        // A ping is `{}`, answered with `{}`.
        None if v.as_object().is_some_and(|o| o.is_empty()) => Some(json!({})),
        _ => None,
    }
}

async fn accept_http(listener: TcpListener, addr: SocketAddr, shared: Arc<Shared>) {
    let mut version = 0u64;
    while let Ok((stream, _)) = listener.accept().await {
        version += 1;
        tokio::spawn(serve_http(stream, addr, shared.clone(), version));
    }
}

/// A push refused: the status the real service answers, and why.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Refused {
    /// 401 (Mozilla's) or 403 (Apple's).
    pub status: u16,
    /// What was wrong, for a failing test's message.
    pub why: String,
}

/// What the push services refuse of a push's `Authorization` (see the
/// module's text) for the service at `origin` at `now` (Unix seconds),
/// the signature checked against `trusted` when a key is: the refusal,
/// or `None` when it passes.
pub fn refusal(
    authorization: Option<&str>,
    origin: &str,
    now: u64,
    trusted: Option<&str>,
) -> Option<Refused> {
    let mozilla = |why: String| Some(Refused { status: 401, why });
    let Some(vapid) = authorization.and_then(|a| a.strip_prefix("vapid ")) else {
        return mozilla(format!("not a vapid authorization: {authorization:?}"));
    };
    let (mut t, mut k) = (None, None);
    for part in vapid.split(',').map(str::trim) {
        if let Some(v) = part.strip_prefix("t=") {
            t = Some(v);
        } else if let Some(v) = part.strip_prefix("k=") {
            k = Some(v);
        }
    }
    let Some(t) = t else {
        return mozilla("no t=".into());
    };
    let mut parts = t.split('.');
    let (Some(header), Some(payload), Some(signature), None) =
        (parts.next(), parts.next(), parts.next(), parts.next())
    else {
        return mozilla("the JWT has not three parts".into());
    };
    let Some(claims) = B64URL
        .decode(payload)
        .ok()
        .and_then(|c| serde_json::from_slice::<Value>(&c).ok())
    else {
        return mozilla("the JWT's claims are not base64url JSON".into());
    };
    if let Some(trusted) = trusted {
        if let Err(why) = verify(header, payload, signature, k, trusted) {
            return mozilla(why);
        }
    }
    if claims["aud"].as_str() != Some(origin) {
        return mozilla(format!("aud {} is not {origin}", claims["aud"]));
    }
    match claims["exp"].as_u64() {
        Some(exp) if exp > now && exp <= now + 24 * 3600 => {}
        exp => return mozilla(format!("exp {exp:?} at {now}")),
    }
    let Some(sub) = claims["sub"].as_str() else {
        return mozilla("sub missing".into());
    };
    let host = if let Some(mailbox) = sub.strip_prefix("mailto:") {
        mailbox.rsplit_once('@').map(|(_, host)| host)
    } else if let Some(rest) = sub.strip_prefix("https://") {
        rest.split(['/', ':', '?', '#']).next()
    } else {
        None
    };
    match host {
        Some(h) if !h.is_empty() && h != "localhost" && !h.ends_with(".invalid") => None,
        _ => Some(Refused {
            status: 403,
            why: format!("sub {sub} names no host anybody can be reached at"),
        }),
    }
}

/// Checks a JWT (`header.payload.signature`) sent with key `k` against
/// the `trusted` key: `k` is it, the algorithm ES256, the signature
/// valid.
fn verify(
    header: &str,
    payload: &str,
    signature: &str,
    k: Option<&str>,
    trusted: &str,
) -> Result<(), String> {
    let k = k.ok_or("no k=")?;
    if k != trusted {
        return Err(format!("k={k} is not the served key {trusted}"));
    }
    let jwt_header: Value =
        serde_json::from_slice(&B64URL.decode(header).map_err(|e| e.to_string())?)
            .map_err(|e| e.to_string())?;
    if jwt_header["alg"] != "ES256" {
        return Err(format!("alg {}", jwt_header["alg"]));
    }
    let key = VerifyingKey::from_sec1_bytes(&B64URL.decode(k).map_err(|e| e.to_string())?)
        .map_err(|e| e.to_string())?;
    let sig = Signature::from_slice(&B64URL.decode(signature).map_err(|e| e.to_string())?)
        .map_err(|e| e.to_string())?;
    key.verify(format!("{header}.{payload}").as_bytes(), &sig)
        .map_err(|_| "the JWT's signature does not verify".to_string())
}

/// One request to a push endpoint (one per connection: the answer closes
/// it).
async fn serve_http(mut stream: TcpStream, addr: SocketAddr, shared: Arc<Shared>, version: u64) {
    let Ok(Some((head, mut body))) = timeout(HUNG, read_head(&mut stream)).await else {
        return;
    };
    let mut lines = head.split("\r\n");
    let request = lines.next().unwrap_or_default().to_owned();
    let headers: HashMap<String, String> = lines
        .filter_map(|l| l.split_once(':'))
        .map(|(k, v)| (k.trim().to_ascii_lowercase(), v.trim().to_owned()))
        .collect();
    let length: usize = headers
        .get("content-length")
        .and_then(|l| l.parse().ok())
        .unwrap_or(0);
    let mut parts = request.split(' ');
    let (method, path) = (parts.next().unwrap_or(""), parts.next().unwrap_or(""));
    let channel_id = path.strip_prefix("/push/").unwrap_or_default().to_owned();
    let now = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.as_secs());
    let trusted = shared.state().trusted.clone();
    let refused = refusal(
        headers.get("authorization").map(String::as_str),
        &format!("http://{addr}"),
        now,
        trusted.as_deref(),
    );
    let status = if method != "POST" || channel_id.is_empty() {
        404
    } else if length > MAX_BODY {
        413
    } else if let Some(refused) = refused {
        fault(&shared, &channel_id, refused.why);
        refused.status
    } else {
        while body.len() < length {
            let mut chunk = [0u8; 1024];
            match timeout(HUNG, stream.read(&mut chunk)).await {
                Ok(Ok(n)) if n > 0 => body.extend_from_slice(&chunk[..n]),
                _ => return,
            }
        }
        body.truncate(length);
        deliver(&shared, &channel_id, &headers, &body, version).await
    };
    shared.state().log.received.push(Received {
        channel_id,
        headers,
        body,
        status,
    });
    let reason = match status {
        200 | 201 => "Created",
        400 => "Bad Request",
        401 => "Unauthorized",
        403 => "Forbidden",
        404 => "Not Found",
        410 => "Gone",
        413 => "Payload Too Large",
        _ => "Service Unavailable",
    };
    let answer = format!(
        "HTTP/1.1 {status} {reason}\r\ncontent-length: 0\r\nlocation: /m/{version}\r\nconnection: close\r\n\r\n"
    );
    let _ = stream.write_all(answer.as_bytes()).await;
}

/// Records what was wrong with a push to `channel_id`.
fn fault(shared: &Shared, channel_id: &str, why: String) {
    shared
        .state()
        .log
        .faults
        .push(format!("a push to {channel_id}: {why}"));
}

/// Gives an accepted push to its browser: decrypted for a browser made in
/// the test, forwarded to Firefox otherwise. The status to answer.
async fn deliver(
    shared: &Shared,
    channel_id: &str,
    headers: &HashMap<String, String>,
    body: &[u8],
    version: u64,
) -> u16 {
    let header = |name: &str| headers.get(name).map(String::as_str);
    let encoding = header("content-encoding").unwrap_or_default();
    let ttl = header("ttl").and_then(|t| t.parse::<u64>().ok());
    let (Some(ttl), "aes128gcm") = (ttl, encoding) else {
        fault(
            shared,
            channel_id,
            format!("TTL {:?}, Content-Encoding {encoding:?}", header("ttl")),
        );
        return 400;
    };
    let (keys, firefox, answer) = {
        let state = shared.state();
        (
            state.browsers.get(channel_id).cloned(),
            state.firefox.clone(),
            state.answers.get(channel_id).copied().unwrap_or(201),
        )
    };
    if let Some((secret, auth)) = keys {
        let plain = web_push_native::decrypt(
            body.to_vec(),
            &secret,
            web_push_native::Auth::from_slice(&auth),
        );
        let payload = plain
            .map_err(|e| format!("cannot decrypt: {e}"))
            .and_then(|p| serde_json::from_slice(&p).map_err(|e| e.to_string()));
        match payload {
            Ok(payload) => {
                let _ = shared.delivered.send(Delivered {
                    id: channel_id.to_owned(),
                    payload,
                    ttl,
                    topic: header("topic").unwrap_or_default().to_owned(),
                });
                answer
            }
            Err(why) => {
                fault(shared, channel_id, why);
                400
            }
        }
    } else {
        let note = json!({"messageType": "notification", "channelID": channel_id,
                          "version": version.to_string(), "data": B64URL.encode(body),
                          "headers": {"encoding": encoding}});
        match firefox {
            Some(tx) if tx.send(note.to_string()).await.is_ok() => answer,
            // The browser is not connected: the service would keep it; this
            // stand-in says it cannot.
            _ => {
                fault(shared, channel_id, "no browser to give it to".into());
                503
            }
        }
    }
}

/// Reads up to the end of the head; the head and what came after it.
async fn read_head(stream: &mut TcpStream) -> Option<(String, Vec<u8>)> {
    let mut buf = Vec::new();
    loop {
        if let Some(end) = buf.windows(4).position(|w| w == b"\r\n\r\n") {
            let head = String::from_utf8_lossy(&buf[..end]).into_owned();
            return Some((head, buf[end + 4..].to_vec()));
        }
        if buf.len() > MAX_HEAD {
            return None;
        }
        let mut chunk = [0u8; 1024];
        let n = stream.read(&mut chunk).await.ok()?;
        if n == 0 {
            return None;
        }
        buf.extend_from_slice(&chunk[..n]);
    }
}

#[cfg(test)]
mod tests {
    use p256::ecdsa::{signature::Signer, SigningKey};

    use super::*;

    /// An `Authorization` header with these claims, signed by `key`.
    fn vapid_by(key: &SigningKey, claims: Value) -> String {
        let header = B64URL.encode(br#"{"typ":"JWT","alg":"ES256"}"#);
        let payload = B64URL.encode(claims.to_string());
        let sig: Signature = key.sign(format!("{header}.{payload}").as_bytes());
        let k = B64URL.encode(key.verifying_key().to_encoded_point(false).as_bytes());
        format!(
            "vapid t={header}.{payload}.{}, k={k}",
            B64URL.encode(sig.to_bytes())
        )
    }

    /// An `Authorization` header with these claims (not signed: without
    /// a trusted key the stand-in reads only the claims).
    fn vapid(claims: Value) -> String {
        format!(
            "vapid t=eyJ0eXAiOiJKV1QiLCJhbGciOiJFUzI1NiJ9.{}.c2ln, k=BA",
            B64URL.encode(claims.to_string())
        )
    }

    fn signing_key() -> SigningKey {
        SigningKey::from(SecretKey::from_slice(&[7; 32]).expect("a scalar"))
    }

    #[test]
    fn tokens_the_real_services_refuse_are_refused_with_their_status() {
        let origin = "http://127.0.0.1:9";
        let now = 1_000_000;
        let status = |auth: Option<&str>| refusal(auth, origin, now, None).map(|r| r.status);
        let with = |sub: Value, aud: &str, exp: u64| {
            status(Some(&vapid(json!({"aud": aud, "exp": exp, "sub": sub}))))
        };
        assert_eq!(
            with(json!("mailto:ops@lobby.example"), origin, now + 60),
            None
        );
        assert_eq!(
            with(json!("https://lobby.example"), origin, now + 86_400),
            None
        );
        // Mozilla: no sub, another audience, expired or too far ahead.
        assert_eq!(with(Value::Null, origin, now + 60), Some(401));
        assert_eq!(
            with(
                json!("mailto:ops@lobby.example"),
                "http://127.0.0.1:8",
                now + 60
            ),
            Some(401)
        );
        assert_eq!(
            with(json!("mailto:ops@lobby.example"), origin, now),
            Some(401)
        );
        assert_eq!(
            with(json!("mailto:ops@lobby.example"), origin, now + 86_401),
            Some(401)
        );
        assert_eq!(status(None), Some(401));
        assert_eq!(status(Some("vapid t=x, k=y")), Some(401));
        // Apple: a contact that is not one it can reach.
        for sub in [
            "http://lobby.example",
            "lobby.example",
            "mailto:ops@localhost",
            "mailto:ops@lobby.invalid",
            "https://localhost:8443",
            "https://a.invalid/",
        ] {
            assert_eq!(with(json!(sub), origin, now + 60), Some(403), "{sub}");
        }
    }

    #[test]
    fn with_a_trusted_key_a_token_must_be_signed_by_it() {
        let origin = "http://127.0.0.1:9";
        let now = 1_000_000;
        let claims = json!({"aud": origin, "exp": now + 60, "sub": "mailto:ops@lobby.example"});
        let key = signing_key();
        let trusted = B64URL.encode(key.verifying_key().to_encoded_point(false).as_bytes());
        let signed = vapid_by(&key, claims.clone());
        let status =
            |auth: &str| refusal(Some(auth), origin, now, Some(&trusted)).map(|r| r.status);
        assert_eq!(status(&signed), None);
        // Signed by another key, or not signed: Mozilla's 401.
        let other = SigningKey::from(SecretKey::from_slice(&[9; 32]).expect("a scalar"));
        assert_eq!(status(&vapid_by(&other, claims.clone())), Some(401));
        assert_eq!(status(&vapid(claims.clone())), Some(401));
        // The served key, but the claims changed after signing.
        let forged = signed.replace(
            &B64URL.encode(claims.to_string()),
            &B64URL.encode(
                json!({"aud": origin, "exp": now + 600, "sub": "mailto:ops@lobby.example"})
                    .to_string(),
            ),
        );
        assert_eq!(status(&forged), Some(401));
    }

    #[tokio::test]
    async fn a_browser_registers_and_a_post_reaches_it_as_a_notification() {
        let service = PushService::start().await;
        let (mut ws, res) = tokio_tungstenite::connect_async(
            tokio_tungstenite::tungstenite::client::IntoClientRequest::into_client_request(
                service.server_url(),
            )
            .map(|mut r| {
                r.headers_mut().insert(
                    "sec-websocket-protocol",
                    HeaderValue::from_static(SUBPROTOCOL),
                );
                r
            })
            .expect("request"),
        )
        .await
        .expect("connect");
        assert_eq!(
            res.headers()
                .get("sec-websocket-protocol")
                .and_then(|v| v.to_str().ok()),
            Some(SUBPROTOCOL)
        );
        let mut say = async |v: Value| -> Value {
            ws.send(Message::text(v.to_string())).await.expect("send");
            loop {
                if let Some(Ok(Message::Text(t))) = ws.next().await {
                    return serde_json::from_str(&t).expect("JSON");
                }
            }
        };
        let hello = say(json!({"messageType": "hello", "use_webpush": true})).await;
        assert_eq!(
            (hello["status"].as_u64(), hello["use_webpush"].as_bool()),
            (Some(200), Some(true))
        );
        assert_eq!(hello["uaid"].as_str().map(str::len), Some(32));
        let reg = say(json!({"messageType": "register", "channelID": "c-1", "key": "BA"})).await;
        let endpoint = reg["pushEndpoint"].as_str().expect("endpoint").to_owned();
        assert_eq!(endpoint, format!("http://{}/push/c-1", service.http));
        assert_eq!(say(json!({})).await, json!({}), "ping");

        let mut http = TcpStream::connect(service.http)
            .await
            .expect("connect http");
        let now = SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .expect("after 1970")
            .as_secs();
        let auth = vapid(json!({"aud": format!("http://{}", service.http),
                                "exp": now + 3600, "sub": "mailto:ops@lobby.example"}));
        http.write_all(
            format!("POST /push/c-1 HTTP/1.1\r\nhost: x\r\nauthorization: {auth}\r\ncontent-encoding: aes128gcm\r\nttl: 60\r\ncontent-length: 3\r\n\r\nfoo")
                .as_bytes(),
        )
        .await
        .expect("post");
        let mut answer = String::new();
        http.read_to_string(&mut answer).await.expect("answer");
        assert!(answer.starts_with("HTTP/1.1 201"), "{answer}");
        let note = loop {
            if let Some(Ok(Message::Text(t))) = ws.next().await {
                break serde_json::from_str::<Value>(&t).expect("JSON");
            }
        };
        assert_eq!(note["messageType"], "notification");
        assert_eq!(note["channelID"], "c-1");
        assert_eq!(note["data"], "Zm9v");
        assert_eq!(note["headers"]["encoding"], "aes128gcm");
        ws.send(Message::text(
            json!({"messageType": "ack", "updates": [{"channelID": "c-1", "version": note["version"], "code": 100}]})
                .to_string(),
        ))
        .await
        .expect("ack");
        crate::until("the ack", || async {
            service.log(|l| {
                if l.acks.len() == 1 && l.acks[0].code == 100 {
                    Ok(())
                } else {
                    Err(format!("{:?}", l.acks))
                }
            })
        })
        .await;
        service.log(|l| {
            assert_eq!(l.hellos, 1);
            assert_eq!(l.registrations[0].key.as_deref(), Some("BA"));
            assert_eq!(l.received[0].headers["ttl"], "60");
            assert_eq!(l.received[0].body, b"foo");
        });
    }
}
