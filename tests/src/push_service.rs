//! A push service on loopback, standing in for a browser vendor's (Mozilla's
//! autopush) so a real Firefox receives the bridge's Web Push without the
//! internet. Its WebSocket side speaks Mozilla's push protocol to Firefox
//! (`dom.push.serverURL` = [`PushService::server_url`], subprotocol
//! `push-notification`): `hello` → a UAID and `use_webpush`, `register` →
//! a `pushEndpoint` on its HTTP side, `{}` pings answered, and `ack`s
//! recorded. Its HTTP side takes the bridge's `POST`s to those endpoints
//! (RFC 8030) and forwards each encrypted body untouched to Firefox as a
//! `notification` (the body as base64url `data`, `headers.encoding` from
//! `Content-Encoding`), answering `201 Created`. Everything it saw is
//! recorded for the test to assert on.
//!
//! It refuses what the real services refuse of a push's VAPID token
//! (RFC 8292): Mozilla's answers 401 to a token without `sub`, for
//! another audience than its origin, or expired or valid for more than
//! 24 hours; Apple's answers 403 (`BadJwtToken`) to a `sub` that is not a
//! `mailto:` or `https:` URI it can resolve (one at `localhost` or under
//! `.invalid`). Such a push is recorded with that status and never
//! reaches the browser.
//!
//! Bounded like any of our servers: one request's head and body (4 KiB,
//! RFC 8291's largest record plus headers) are capped, a connection that
//! sends nothing for 5 s is dropped.

use std::{
    collections::HashMap,
    net::SocketAddr,
    sync::{Arc, Mutex},
};

use crate::HUNG;
use futures_util::{SinkExt, StreamExt};
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

/// The WebSocket subprotocol Firefox asks for.
const SUBPROTOCOL: &str = "push-notification";
/// Largest request head (request line and headers) read.
const MAX_HEAD: usize = 8 * 1024;
/// Largest push body taken (RFC 8030 services must take 4096 bytes).
const MAX_BODY: usize = 4096;

/// One `register` from the browser.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Registration {
    pub channel_id: String,
    /// The application server key (base64url, the bridge's VAPID key).
    pub key: Option<String>,
}

/// One `POST` to a push endpoint.
#[derive(Debug, Clone)]
pub struct Received {
    pub channel_id: String,
    /// Lowercased header names.
    pub headers: HashMap<String, String>,
    pub body: Vec<u8>,
    /// What the stand-in answered.
    pub status: u16,
}

/// One `ack` from the browser: its code is 100 when it decrypted the
/// message and delivered it to the service worker, 101 when it could not
/// decrypt it, 102 for other errors.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Ack {
    pub channel_id: String,
    pub version: String,
    pub code: u64,
}

/// What the stand-in saw.
#[derive(Debug, Default)]
pub struct Log {
    pub hellos: u32,
    pub registrations: Vec<Registration>,
    pub received: Vec<Received>,
    pub acks: Vec<Ack>,
}

#[derive(Default)]
struct Shared {
    log: Mutex<Log>,
    /// The browser's connection, to forward notifications to.
    browser: Mutex<Option<mpsc::Sender<String>>>,
}

/// A running stand-in; its tasks end on drop.
pub struct PushService {
    /// Where Firefox connects (WebSocket).
    pub ws: SocketAddr,
    /// Where the endpoints it hands out point (HTTP).
    pub http: SocketAddr,
    shared: Arc<Shared>,
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
        let shared = Arc::new(Shared::default());
        let tasks = vec![
            tokio::spawn(accept_ws(ws, http_addr, shared.clone())),
            tokio::spawn(accept_http(http, http_addr, shared.clone())),
        ];
        PushService {
            ws: ws_addr,
            http: http_addr,
            shared,
            tasks,
        }
    }

    /// The value of Firefox's `dom.push.serverURL`.
    pub fn server_url(&self) -> String {
        format!("ws://{}/", self.ws)
    }

    /// Reads what it saw so far.
    pub fn log<T>(&self, read: impl FnOnce(&Log) -> T) -> T {
        read(&self.shared.log.lock().expect("log lock"))
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
    *shared.browser.lock().expect("browser lock") = Some(tx);
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
    let mut log = shared.log.lock().expect("log lock");
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

/// What the push services refuse of a push's `Authorization` (see the
/// module's text): the status they answer, or `None` when it passes.
pub fn refusal(authorization: Option<&str>, origin: &str, now: u64) -> Option<u16> {
    let token = authorization
        .and_then(|a| a.strip_prefix("vapid "))
        .and_then(|a| {
            a.split(',')
                .map(str::trim)
                .find_map(|p| p.strip_prefix("t="))
        });
    let Some(claims) = token
        .and_then(|t| t.split('.').nth(1))
        .and_then(unbase64url)
        .and_then(|c| serde_json::from_slice::<Value>(&c).ok())
    else {
        return Some(401);
    };
    if claims["aud"].as_str() != Some(origin) {
        return Some(401);
    }
    match claims["exp"].as_u64() {
        Some(exp) if exp > now && exp <= now + 24 * 3600 => {}
        _ => return Some(401),
    }
    let Some(sub) = claims["sub"].as_str() else {
        return Some(401);
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
        _ => Some(403),
    }
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
    let now = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_secs());
    let refused = refusal(
        headers.get("authorization").map(String::as_str),
        &format!("http://{addr}"),
        now,
    );
    let status = if method != "POST" || channel_id.is_empty() {
        404
    } else if length > MAX_BODY {
        413
    } else if let Some(code) = refused {
        code
    } else {
        while body.len() < length {
            let mut chunk = [0u8; 1024];
            match timeout(HUNG, stream.read(&mut chunk)).await {
                Ok(Ok(n)) if n > 0 => body.extend_from_slice(&chunk[..n]),
                _ => return,
            }
        }
        body.truncate(length);
        let encoding = headers.get("content-encoding").cloned().unwrap_or_default();
        let note = json!({"messageType": "notification", "channelID": channel_id,
                          "version": version.to_string(), "data": base64url(&body),
                          "headers": {"encoding": encoding}});
        let browser = shared.browser.lock().expect("browser lock").clone();
        match browser {
            Some(tx) if tx.send(note.to_string()).await.is_ok() => 201,
            // The browser is not connected: the service would keep it; this
            // stand-in says it cannot.
            _ => 503,
        }
    };
    shared
        .log
        .lock()
        .expect("log lock")
        .received
        .push(Received {
            channel_id,
            headers,
            body,
            status,
        });
    let reason = match status {
        201 => "Created",
        401 => "Unauthorized",
        403 => "Forbidden",
        404 => "Not Found",
        413 => "Payload Too Large",
        _ => "Service Unavailable",
    };
    let answer = format!(
        "HTTP/1.1 {status} {reason}\r\ncontent-length: 0\r\nlocation: /m/{version}\r\nconnection: close\r\n\r\n"
    );
    let _ = stream.write_all(answer.as_bytes()).await;
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

/// Bytes of unpadded base64url (a JWT's parts); `None` if it is not.
fn unbase64url(text: &str) -> Option<Vec<u8>> {
    let mut out = Vec::with_capacity(text.len() * 3 / 4);
    let (mut acc, mut bits) = (0u32, 0u32);
    for c in text.bytes() {
        let v = match c {
            b'A'..=b'Z' => c - b'A',
            b'a'..=b'z' => c - b'a' + 26,
            b'0'..=b'9' => c - b'0' + 52,
            b'-' => 62,
            b'_' => 63,
            _ => return None,
        };
        acc = acc << 6 | u32::from(v);
        bits += 6;
        if bits >= 8 {
            bits -= 8;
            out.push((acc >> bits) as u8);
            acc &= (1 << bits) - 1;
        }
    }
    Some(out)
}

/// Unpadded base64url, as the push protocol carries `data`.
pub fn base64url(bytes: &[u8]) -> String {
    const ABC: &[u8; 64] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";
    let mut out = String::with_capacity(bytes.len().div_ceil(3) * 4);
    for chunk in bytes.chunks(3) {
        let n = chunk
            .iter()
            .enumerate()
            .fold(0u32, |n, (i, &b)| n | u32::from(b) << (16 - 8 * i));
        for i in 0..=chunk.len() {
            out.push(char::from(ABC[(n >> (18 - 6 * i) & 63) as usize]));
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    /// An `Authorization` header with these claims (not signed: the
    /// stand-in reads only the claims).
    fn vapid(claims: Value) -> String {
        format!(
            "vapid t=eyJ0eXAiOiJKV1QiLCJhbGciOiJFUzI1NiJ9.{}.c2ln, k=BA",
            base64url(claims.to_string().as_bytes())
        )
    }

    #[test]
    fn tokens_the_real_services_refuse_are_refused_with_their_status() {
        let origin = "http://127.0.0.1:9";
        let now = 1_000_000;
        let with = |sub: Value, aud: &str, exp: u64| {
            refusal(
                Some(&vapid(json!({"aud": aud, "exp": exp, "sub": sub}))),
                origin,
                now,
            )
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
        assert_eq!(refusal(None, origin, now), Some(401));
        assert_eq!(refusal(Some("vapid t=x, k=y"), origin, now), Some(401));
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
    fn base64url_as_rfc_4648_spells_it() {
        assert_eq!(base64url(b""), "");
        assert_eq!(base64url(b"f"), "Zg");
        assert_eq!(base64url(b"fo"), "Zm8");
        assert_eq!(base64url(b"foo"), "Zm9v");
        assert_eq!(base64url(b"foob"), "Zm9vYg");
        assert_eq!(base64url(&[0xfb, 0xff]), "-_8");
        for bytes in [&b""[..], b"f", b"fo", b"foo", b"foob", &[0xfb, 0xff]] {
            assert_eq!(unbase64url(&base64url(bytes)).as_deref(), Some(bytes));
        }
        assert_eq!(unbase64url("a+b"), None);
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
        let now = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .unwrap()
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
