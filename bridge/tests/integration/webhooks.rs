//! Webhooks against the real bridge (`docs/protocol.md` §2.4): an embedded
//! master whose game servers come and go, and receivers this test runs on
//! loopback (so the bridge runs with `--webhook-allow-private`, except
//! where refusals are tested): signatures checked here with HMAC-SHA256 of
//! our own, bodies, cooldown under flapping, retries (429 with
//! `Retry-After`, Discord's `retry_after`, 5xx then success), disabling
//! after 20 failures, filters and deletion, refused URLs (nothing sent),
//! hostile receivers, and the admin API under abuse from another address.

use crate::common;

use std::{
    collections::VecDeque,
    sync::{Arc, Mutex},
    time::Duration,
};

use axum::{
    body::Bytes,
    http::{HeaderMap, StatusCode},
    response::IntoResponse,
};
use base64::{engine::general_purpose::STANDARD as BASE64, Engine as _};
use common::*;
use hmac::{Hmac, Mac};
use serde_json::{json, Value};
use sha2::Sha256;
use tokio::{
    io::{AsyncReadExt, AsyncWriteExt},
    net::{TcpListener, TcpStream},
    sync::mpsc,
    time::Instant,
};

/// How long a key stays unlisted before it is offline, in these tests.
const GRACE: Duration = Duration::from_secs(1);

// A receiver on loopback.

/// One request the receiver got.
#[derive(Debug)]
struct Got {
    headers: HeaderMap,
    body: Bytes,
    at: Instant,
}

impl Got {
    fn json(&self) -> Value {
        serde_json::from_slice(&self.body).expect("the body is JSON")
    }

    fn header(&self, name: &str) -> &str {
        self.headers
            .get(name)
            .unwrap_or_else(|| panic!("no {name} header"))
            .to_str()
            .unwrap()
    }
}

/// An answer the receiver gives.
#[derive(Debug, Clone)]
struct Reply {
    status: u16,
    retry_after: Option<&'static str>,
    body: &'static str,
}

const OK: Reply = Reply {
    status: 204,
    retry_after: None,
    body: "",
};

fn reply(status: u16) -> Reply {
    Reply { status, ..OK }
}

/// A receiver that answers from a script (then with `fallback`) and hands
/// every request to the test.
struct Receiver {
    url: String,
    got: mpsc::UnboundedReceiver<Got>,
    script: Arc<Mutex<(VecDeque<Reply>, Reply)>>,
}

impl Receiver {
    async fn start() -> Self {
        let (tx, got) = mpsc::unbounded_channel();
        let script = Arc::new(Mutex::new((VecDeque::new(), OK)));
        let s = script.clone();
        let app = axum::Router::new().fallback(move |headers: HeaderMap, body: Bytes| {
            let tx = tx.clone();
            let s = s.clone();
            async move {
                let _ = tx.send(Got {
                    headers,
                    body,
                    at: Instant::now(),
                });
                let r = {
                    let mut s = s.lock().unwrap();
                    let fallback = s.1.clone();
                    s.0.pop_front().unwrap_or(fallback)
                };
                let mut h = HeaderMap::new();
                if let Some(v) = r.retry_after {
                    h.insert("retry-after", v.parse().unwrap());
                }
                (StatusCode::from_u16(r.status).unwrap(), h, r.body).into_response()
            }
        });
        let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
        let addr = listener.local_addr().unwrap();
        tokio::spawn(async move { axum::serve(listener, app).await });
        Self {
            url: format!("http://{addr}/hook"),
            got,
            script,
        }
    }

    fn answer(&self, replies: impl IntoIterator<Item = Reply>) {
        self.script.lock().unwrap().0.extend(replies);
    }

    fn fall_back_to(&self, r: Reply) {
        self.script.lock().unwrap().1 = r;
    }

    async fn next(&mut self) -> Got {
        tokio::time::timeout(HUNG, self.got.recv())
            .await
            .expect("no request reached the receiver")
            .expect("the receiver stopped")
    }

    fn nothing_yet(&mut self) -> bool {
        self.got.try_recv().is_err()
    }
}

/// Checks a `"standard"` request's signature with `secret`, as a receiver
/// would: HMAC-SHA256 of `ID.TIMESTAMP.BODY` under the base64 after
/// `whsec_`.
fn verify(got: &Got, secret: &str) {
    let key = BASE64
        .decode(secret.strip_prefix("whsec_").expect("whsec_ prefix"))
        .unwrap();
    let id = got.header("webhook-id");
    let ts = got.header("webhook-timestamp");
    let mut mac = Hmac::<Sha256>::new_from_slice(&key).unwrap();
    mac.update(format!("{id}.{ts}.").as_bytes());
    mac.update(&got.body);
    let expected = format!("v1,{}", BASE64.encode(mac.finalize().into_bytes()));
    let sent = got.header("webhook-signature");
    assert!(
        sent.split(' ').any(|s| s == expected),
        "signature {sent} is not {expected}"
    );
    let now = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_secs();
    let ts: u64 = ts.parse().unwrap();
    assert!(ts.abs_diff(now) < 30, "timestamp {ts}, now {now}");
    assert_eq!(got.header("content-type"), "application/json");
}

// The bridge.

/// The product under test: `common::Watching`, with the admin's webhook API.
struct Product(Watching);

impl std::ops::Deref for Product {
    type Target = Watching;

    fn deref(&self) -> &Watching {
        &self.0
    }
}

impl Product {
    async fn start(allow_private: bool) -> Self {
        Self(
            Watching::start(GRACE, |c| {
                c.webhook_allow_private = allow_private;
                c.public_url = Some("https://lobby.example".into());
            })
            .await,
        )
    }

    async fn api(&self, method: &str, path: &str, body: Option<Value>) -> (u16, Value) {
        self.api_as(Some(TOKEN), method, path, body).await
    }

    async fn api_as(
        &self,
        token: Option<&str>,
        method: &str,
        path: &str,
        body: Option<Value>,
    ) -> (u16, Value) {
        let url = format!("http://{}{path}", self.bridge.addr);
        let mut req = self
            .http
            .request(method.parse().unwrap(), url)
            .timeout(HUNG);
        if let Some(t) = token {
            req = req.bearer_auth(t);
        }
        if let Some(b) = body {
            req = req.body(b.to_string());
        }
        let resp = req.send().await.unwrap();
        let status = resp.status().as_u16();
        let text = resp.text().await.unwrap();
        (status, serde_json::from_str(&text).unwrap_or(Value::Null))
    }

    /// Creates a webhook; its id and secret.
    async fn create(&self, body: Value) -> (String, String) {
        let (status, v) = self.api("POST", "/api/admin/webhooks", Some(body)).await;
        assert_eq!(status, 201, "{v}");
        (
            v["id"].as_str().unwrap().to_owned(),
            v["secret"].as_str().unwrap().to_owned(),
        )
    }

    async fn webhook(&self, id: &str) -> Value {
        let (status, v) = self.api("GET", "/api/admin/webhooks", None).await;
        assert_eq!(status, 200);
        v["webhooks"]
            .as_array()
            .unwrap()
            .iter()
            .find(|h| h["id"] == id)
            .cloned()
            .unwrap_or(Value::Null)
    }

    async fn shutdown(self) {
        self.0.shutdown().await;
    }
}

fn standard(url: &str, events: Value) -> Value {
    json!({"url": url, "format": "standard", "events": events, "servers": "all"})
}

#[tokio::test]
async fn standard_webhooks_are_signed_and_carry_the_server() {
    let product = Product::start(true).await;
    let mut rx = Receiver::start().await;
    let mut body = standard(
        &rx.url,
        json!(["server-online", "lobby-opened", "players-reached"]),
    );
    body["threshold"] = json!(3);
    let (id, secret) = product.create(body).await;
    assert!(id.starts_with("wh_"), "{id}");
    assert!(secret.starts_with("whsec_"), "{secret}");

    let mut alpha = game_server(product.master.addr, "Alpha", 20001).await;
    let got = rx.next().await;
    verify(&got, &secret);
    let key = product.key_of("Alpha").await;
    let v = got.json();
    assert_eq!(v["type"], "server-online");
    assert!(v["timestamp"].as_str().unwrap().ends_with('Z'), "{v}");
    let d = &v["data"];
    assert_eq!(d["key"], key.as_str());
    assert_eq!(d["name"], "Alpha");
    assert_eq!(d["players"], json!({"current": 0, "max": 4}));
    assert_eq!(
        (d["isLobbyOpen"].clone(), d["gameplayMode"].clone()),
        (json!(true), json!(1))
    );
    assert_eq!(d["url"], format!("https://lobby.example/server/{key}"));
    assert_eq!(
        (d["address"].clone(), d["port"].clone()),
        (json!("192.168.0.10"), json!(20001))
    );
    assert!(got.header("webhook-id").starts_with("msg_"));

    product.stats(&mut alpha, 1, false).await;
    product.stats(&mut alpha, 3, true).await;
    let mut types = vec![
        rx.next().await.json()["type"].clone(),
        rx.next().await.json()["type"].clone(),
    ];
    types.sort_by_key(|t| t.to_string());
    assert_eq!(types, [json!("lobby-opened"), json!("players-reached")]);

    // The list shows the deliveries and never the secret.
    let hook = product.webhook(&id).await;
    assert_eq!(hook["state"], "active");
    assert!(hook.get("secret").is_none(), "{hook}");
    let last = hook["lastDeliveries"].as_array().unwrap();
    assert_eq!(last.len(), 3, "{hook}");
    assert!(last
        .iter()
        .all(|d| d["ok"] == true && d["status"] == 204 && d["at"].as_i64().unwrap() > 0));

    // "Send a test": one signed request, its outcome answered.
    let (status, v) = product
        .api("POST", &format!("/api/admin/webhooks/{id}/test"), None)
        .await;
    assert_eq!(
        (status, v["ok"].clone(), v["status"].clone()),
        (200, json!(true), json!(204))
    );
    let got = rx.next().await;
    verify(&got, &secret);
    assert_eq!(got.json()["type"], "test");
    drop(alpha);
    product.shutdown().await;
}

#[tokio::test]
async fn a_flapping_server_makes_one_notification_per_cooldown() {
    let product = Product::start(true).await;
    let mut cooled = Receiver::start().await;
    let mut control = Receiver::start().await;
    let events = json!(["server-online", "server-offline"]);
    product.create(standard(&cooled.url, events.clone())).await;
    let mut zero = standard(&control.url, events);
    zero["cooldown"] = json!(0);
    product.create(zero).await;

    for round in 0..3 {
        let alpha = game_server(product.master.addr, "Alpha", 20001).await;
        assert_eq!(
            control.next().await.json()["type"],
            "server-online",
            "round {round}"
        );
        drop(alpha);
        assert_eq!(
            control.next().await.json()["type"],
            "server-offline",
            "round {round}"
        );
    }
    // Six deliveries to the control; the cooled webhook gets the first
    // online and the first offline only.
    assert_eq!(cooled.next().await.json()["type"], "server-online");
    assert_eq!(cooled.next().await.json()["type"], "server-offline");
    let delivered = r#"bridge_webhook_deliveries_total{result="delivered"}"#;
    assert_eq!(product.until_metric(delivered, |n| n >= 8).await, 8);
    assert_eq!(
        product
            .metric(r#"bridge_watch_changes_total{change="server-online"}"#)
            .await,
        3
    );
    assert!(cooled.nothing_yet(), "the cooldown let more through");
    product.shutdown().await;
}

#[tokio::test]
async fn retries_wait_as_asked_and_keep_their_id() {
    let product = Product::start(true).await;
    let mut rx = Receiver::start().await;
    rx.answer([
        Reply {
            retry_after: Some("2"),
            ..reply(429)
        },
        reply(503),
        OK,
    ]);
    let (id, secret) = product
        .create(standard(&rx.url, json!(["server-online"])))
        .await;
    let _alpha = game_server(product.master.addr, "Alpha", 20001).await;
    let first = rx.next().await;
    let second = rx.next().await;
    let third = rx.next().await;
    for got in [&first, &second, &third] {
        verify(got, &secret);
        assert_eq!(
            got.header("webhook-id"),
            first.header("webhook-id"),
            "one id for every retry"
        );
        assert_eq!(got.body, first.body);
    }
    assert!(
        second.at - first.at >= Duration::from_millis(1950),
        "Retry-After: 2 honoured (waited {:?})",
        second.at - first.at
    );
    assert!(
        third.at - second.at >= Duration::from_millis(1950),
        "the wait doubled to 2 s (waited {:?})",
        third.at - second.at
    );
    let hook = product.webhook(&id).await;
    let last = &hook["lastDeliveries"][0];
    assert_eq!(
        (
            last["ok"].clone(),
            last["attempts"].clone(),
            last["status"].clone()
        ),
        (json!(true), json!(3), json!(204))
    );
    assert_eq!(hook["failures"], 0);

    // Discord's 429 says when in its JSON body.
    let mut discord = Receiver::start().await;
    discord.answer([Reply {
        status: 429,
        retry_after: None,
        body: r#"{"message":"You are being rate limited.","retry_after":1.6,"global":false}"#,
    }]);
    product
        .create(json!({"url": discord.url, "format": "discord", "events": ["server-online"], "servers": "all"}))
        .await;
    let _beta = game_server(product.master.addr, "Beta", 20002).await;
    let first = discord.next().await;
    let second = discord.next().await;
    assert!(
        second.at - first.at >= Duration::from_millis(1550),
        "{:?}",
        second.at - first.at
    );
    let v = second.json();
    assert!(
        v["content"].as_str().unwrap().starts_with("Beta is online"),
        "{v}"
    );
    assert_eq!(v["allowed_mentions"], json!({"parse": []}));
    assert_eq!(v["embeds"][0]["title"], "Beta");
    assert!(
        first.headers.get("webhook-signature").is_none(),
        "Discord's are not signed"
    );
    product.shutdown().await;
}

#[tokio::test]
async fn twenty_failures_in_a_row_disable_a_webhook_until_enabled() {
    let product = Product::start(true).await;
    let mut rx = Receiver::start().await;
    rx.fall_back_to(reply(400)); // fails at once, no retry
    let mut body = standard(&rx.url, json!(["lobby-opened"]));
    body["cooldown"] = json!(0);
    let (id, _) = product.create(body).await;
    let mut alpha = game_server(product.master.addr, "Alpha", 20001).await;
    product.key_of("Alpha").await;
    for i in 0..20 {
        product.stats(&mut alpha, 0, false).await;
        product.stats(&mut alpha, 0, true).await;
        assert_eq!(
            rx.next().await.json()["type"],
            "lobby-opened",
            "failure {i}"
        );
    }
    let hook = until("20 failures counted", || async {
        let hook = product.webhook(&id).await;
        if hook["failures"] == 20 {
            Ok(hook)
        } else {
            Err(hook.to_string())
        }
    })
    .await;
    assert_eq!(
        (hook["state"].clone(), hook["enabled"].clone()),
        (json!("disabled-after-failures"), json!(false))
    );
    assert_eq!(hook["lastDeliveries"][0]["status"], 400);

    // Disabled: the next event sends nothing.
    let attempts = product.metric("bridge_webhook_attempts_total").await;
    product.stats(&mut alpha, 0, false).await;
    product.stats(&mut alpha, 0, true).await;
    let opened = product
        .metric(r#"bridge_watch_changes_total{change="lobby-opened"}"#)
        .await;
    assert_eq!(opened, 21);
    assert_eq!(
        product.metric("bridge_webhook_attempts_total").await,
        attempts
    );

    // Enabled again: failures forgotten, events delivered.
    rx.fall_back_to(OK);
    let (status, v) = product
        .api(
            "PATCH",
            &format!("/api/admin/webhooks/{id}"),
            Some(json!({"enabled": true})),
        )
        .await;
    assert_eq!(
        (status, v["state"].clone(), v["failures"].clone()),
        (200, json!("active"), json!(0))
    );
    product.stats(&mut alpha, 0, false).await;
    product.stats(&mut alpha, 0, true).await;
    assert_eq!(rx.next().await.json()["type"], "lobby-opened");
    product.shutdown().await;
}

#[tokio::test]
async fn filters_pick_servers_and_events_and_deleted_webhooks_stop() {
    let product = Product::start(true).await;
    // Alpha's key, learnt while it is listed; then it goes offline.
    let alpha = game_server(product.master.addr, "Alpha", 20001).await;
    let alpha_key = product.key_of("Alpha").await;
    drop(alpha);
    product
        .until_metric(
            r#"bridge_watch_changes_total{change="server-offline"}"#,
            |n| n == 1,
        )
        .await;

    let mut by_key = Receiver::start().await;
    let mut by_name = Receiver::start().await;
    let mut lobby_only = Receiver::start().await;
    let mut body = standard(&by_key.url, json!(["server-online"]));
    body["servers"] = json!({"keys": [alpha_key]});
    product.create(body).await;
    let mut body = standard(&by_name.url, json!(["server-online"]));
    body["servers"] = json!({"nameContains": "BETA"});
    let (name_id, _) = product.create(body).await;
    product
        .create(standard(&lobby_only.url, json!(["lobby-opened"])))
        .await;

    let mut alpha = game_server(product.master.addr, "Alpha", 20001).await;
    let _beta = game_server(product.master.addr, "The Beta Base", 20002).await;
    assert_eq!(by_key.next().await.json()["data"]["name"], "Alpha");
    assert_eq!(by_name.next().await.json()["data"]["name"], "The Beta Base");
    product.stats(&mut alpha, 0, false).await;
    product.stats(&mut alpha, 0, true).await;
    let got = lobby_only.next().await.json();
    assert_eq!(
        (got["type"].clone(), got["data"]["name"].clone()),
        (json!("lobby-opened"), json!("Alpha"))
    );
    // Everything decided so far has been delivered: nothing else came.
    product
        .until_metric(
            r#"bridge_webhook_deliveries_total{result="delivered"}"#,
            |n| n == 3,
        )
        .await;
    assert!(by_key.nothing_yet() && by_name.nothing_yet() && lobby_only.nothing_yet());

    // Deleted: gone from the list, and a Beta coming online sends nothing.
    let path = format!("/api/admin/webhooks/{name_id}");
    assert_eq!(product.api("DELETE", &path, None).await.0, 204);
    assert_eq!(product.api("DELETE", &path, None).await.0, 404);
    assert_eq!(product.webhook(&name_id).await, Value::Null);
    let _beta2 = game_server(product.master.addr, "Beta Two", 20003).await;
    product
        .until_metric(
            r#"bridge_watch_changes_total{change="server-online"}"#,
            |n| n == 4,
        )
        .await;
    assert_eq!(
        product
            .metric(r#"bridge_webhook_deliveries_total{result="delivered"}"#)
            .await,
        3
    );
    assert!(by_name.nothing_yet());
    product.shutdown().await;
}

#[tokio::test]
async fn webhooks_survive_a_restart() {
    let master = TestMaster::start().await;
    let dir = tempfile::tempdir().unwrap();
    let mut c = test_config(master.addr);
    c.data_dir = Some(dir.path().to_owned());
    c.history_interval = Duration::from_secs(1);
    c.webhook_allow_private = true;
    let bridge = TestBridge::embedding(&master, c.clone()).await;
    let http = http_client(None);
    let base = format!("http://{}/api/admin/webhooks", bridge.addr);
    let resp = http
        .post(&base)
        .bearer_auth(TOKEN)
        .body(standard("http://127.0.0.1:9/x", json!(["server-online"])).to_string())
        .send()
        .await
        .unwrap();
    assert_eq!(resp.status(), 201);
    let created: Value = serde_json::from_str(&resp.text().await.unwrap()).unwrap();
    let id = created["id"].clone();
    let resp = http
        .patch(format!("{base}/{}", id.as_str().unwrap()))
        .bearer_auth(TOKEN)
        .body(r#"{"enabled":false}"#)
        .send()
        .await
        .unwrap();
    assert_eq!(resp.status(), 200);
    bridge.shutdown().await;

    let bridge = TestBridge::embedding(&master, c).await;
    let text = http
        .get(format!("http://{}/api/admin/webhooks", bridge.addr))
        .bearer_auth(TOKEN)
        .send()
        .await
        .unwrap()
        .text()
        .await
        .unwrap();
    let list: Value = serde_json::from_str(&text).unwrap();
    let hooks = list["webhooks"].as_array().unwrap();
    assert_eq!(hooks.len(), 1, "{list}");
    assert_eq!(
        (hooks[0]["id"].clone(), hooks[0]["state"].clone()),
        (id, json!("disabled"))
    );
    assert_eq!(hooks[0]["url"], "http://127.0.0.1:9/x");
    bridge.shutdown().await;
    master.shutdown().await;
}

#[tokio::test]
async fn urls_aimed_at_private_networks_are_refused_and_nothing_is_sent() {
    let product = Product::start(false).await;
    let mut rx = Receiver::start().await;
    let port = rx
        .url
        .split(':')
        .nth(2)
        .unwrap()
        .split('/')
        .next()
        .unwrap()
        .to_owned();
    for host in [
        "127.0.0.1".to_owned(),
        "localhost".into(),
        "127.1".into(),
        "2130706433".into(),
        "10.0.0.1".into(),
        "172.16.5.4".into(),
        "192.168.1.1".into(),
        "169.254.169.254".into(),
        "100.64.0.1".into(),
        "224.0.0.1".into(),
        "0.0.0.0".into(),
        "[::1]".into(),
        "[::]".into(),
        "[fe80::1]".into(),
        "[fd12::1]".into(),
        "[ff02::1]".into(),
        "[::ffff:127.0.0.1]".into(),
        "[64:ff9b::7f00:1]".into(),
    ] {
        let url = format!("http://{host}:{port}/hook");
        let (status, v) = product
            .api(
                "POST",
                "/api/admin/webhooks",
                Some(standard(&url, json!(["server-online"]))),
            )
            .await;
        assert_eq!(status, 400, "{url}: {v}");
        assert!(v["error"].as_str().unwrap().starts_with("url: "), "{v}");
    }
    let (_, list) = product.api("GET", "/api/admin/webhooks", None).await;
    assert_eq!(list["webhooks"], json!([]));
    let _alpha = game_server(product.master.addr, "Alpha", 20001).await;
    product
        .until_metric(
            r#"bridge_watch_changes_total{change="server-online"}"#,
            |n| n == 1,
        )
        .await;
    assert!(rx.nothing_yet(), "a refused URL got a request");
    assert_eq!(product.metric("bridge_webhook_attempts_total").await, 0);
    product.shutdown().await;
}

#[tokio::test]
async fn bad_requests_are_refused_naming_the_field() {
    let product = Product::start(true).await;
    let path = "/api/admin/webhooks";
    let ok = standard("http://127.0.0.1:9/x", json!(["server-online"]));
    // The token.
    for token in [None, Some("wrong-token-0123456789")] {
        let (status, _) = product.api_as(token, "GET", path, None).await;
        assert_eq!(status, 401);
    }
    assert_eq!(product.metric("bridge_auth_failures_total").await, 2);
    // Fields.
    let with = |k: &str, v: Value| {
        let mut b = ok.clone();
        b[k] = v;
        b
    };
    for (body, field) in [
        (with("url", json!("ftp://x/")), "url"),
        (with("format", json!("slack")), "format"),
        (with("events", json!(["server-exploded"])), "events"),
        (with("servers", json!({"keys": ["nope"]})), "servers"),
        (with("threshold", json!(3)), "threshold"),
        (with("cooldown", json!(-5)), "cooldown"),
        (json!("just text"), "body"),
    ] {
        let (status, v) = product.api("POST", path, Some(body)).await;
        assert_eq!(status, 400, "{v}");
        assert!(
            v["error"]
                .as_str()
                .unwrap()
                .starts_with(&format!("{field}: ")),
            "{v}"
        );
    }
    // A body over 16 KiB.
    let big = with(
        "url",
        json!(format!("http://127.0.0.1:9/{}", "x".repeat(20_000))),
    );
    assert_eq!(product.api("POST", path, Some(big)).await.0, 413);
    // Ids.
    assert_eq!(
        product
            .api("DELETE", &format!("{path}/wh_0000000000000000"), None)
            .await
            .0,
        404
    );
    assert_eq!(
        product
            .api("POST", &format!("{path}/nonsense/test"), None)
            .await
            .0,
        404
    );
    let (status, v) = product
        .api(
            "PATCH",
            &format!("{path}/wh_0000000000000000"),
            Some(json!({"enabled": "yes"})),
        )
        .await;
    assert_eq!(status, 400, "{v}");
    // At most 50.
    for _ in 0..50 {
        assert_eq!(product.api("POST", path, Some(ok.clone())).await.0, 201);
    }
    let (status, v) = product.api("POST", path, Some(ok.clone())).await;
    assert_eq!(status, 409, "{v}");
    product.shutdown().await;
}

// Hostile receivers: raw TCP, so they can misbehave.

/// A receiver that reads each request's head and then does `act`.
async fn hostile(
    act: impl Fn(TcpStream) -> tokio::task::JoinHandle<()> + Send + 'static,
) -> (String, mpsc::UnboundedReceiver<()>) {
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    let (tx, rx) = mpsc::unbounded_channel();
    tokio::spawn(async move {
        while let Ok((mut s, _)) = listener.accept().await {
            let mut head = Vec::new();
            let mut buf = [0u8; 1024];
            while !head.windows(4).any(|w| w == b"\r\n\r\n") {
                match s.read(&mut buf).await {
                    Ok(n) if n > 0 => head.extend_from_slice(&buf[..n]),
                    _ => break,
                }
            }
            let _ = tx.send(());
            act(s);
        }
    });
    (format!("http://{addr}/hook"), rx)
}

#[tokio::test]
async fn hostile_receivers_cost_bounded_time_and_memory() {
    let product = Product::start(true).await;
    let test_of = |id: String| format!("/api/admin/webhooks/{id}/test");

    // Never answers: the attempt ends at its 5 s limit.
    let (url, _) = hostile(|s| {
        tokio::spawn(async move {
            tokio::time::sleep(Duration::from_secs(60)).await;
            drop(s);
        })
    })
    .await;
    let (silent, _) = product
        .create(standard(&url, json!(["server-online"])))
        .await;
    let started = Instant::now();
    let (status, v) = product.api("POST", &test_of(silent), None).await;
    let took = started.elapsed();
    assert_eq!(
        (status, v["ok"].clone(), v["status"].clone()),
        (200, json!(false), Value::Null)
    );
    assert_eq!(v["error"], "no answer in time");
    // Not before the 5 s timeout; well before a hung test's bound, so a
    // missing timeout fails, and a slow machine does not.
    assert!(
        took >= Duration::from_secs(4) && took < HUNG / 2,
        "{took:?}"
    );

    // An endless body: a few KiB are read, then the connection is dropped.
    let written = Arc::new(Mutex::new(Vec::<(u64, bool)>::new()));
    let w = written.clone();
    let (url, _) = hostile(move |mut s| {
        let w = w.clone();
        tokio::spawn(async move {
            let chunk = vec![b'x'; 16 * 1024];
            let mut total = 0u64;
            let _ = s
                .write_all(
                    b"HTTP/1.1 500 Internal Server Error\r\ncontent-type: text/plain\r\n\r\n",
                )
                .await;
            let deadline = Instant::now() + Duration::from_secs(20);
            let closed = loop {
                match tokio::time::timeout_at(deadline, s.write_all(&chunk)).await {
                    Ok(Ok(())) => total += chunk.len() as u64,
                    Ok(Err(_)) => break true,
                    Err(_) => break false,
                }
            };
            w.lock().unwrap().push((total, closed));
        })
    })
    .await;
    let (endless, _) = product
        .create(standard(&url, json!(["server-online"])))
        .await;
    let (status, v) = product.api("POST", &test_of(endless), None).await;
    assert_eq!(
        (status, v["status"].clone(), v["ok"].clone()),
        (200, json!(500), json!(false))
    );
    let (total, closed) = until("the endless receiver stopped", || {
        let first = written.lock().unwrap().first().copied();
        async move { first.ok_or("still writing") }
    })
    .await;
    assert!(closed, "the bridge kept the endless answer open");
    // What the kernel buffers besides the few KiB read.
    assert!(total < 8 << 20, "{total} bytes went into the bridge");

    // A redirect to itself: not followed (one request per attempt).
    let (url, mut requests) = hostile(|mut s| {
        tokio::spawn(async move {
            let _ = s
                .write_all(b"HTTP/1.1 302 Found\r\nlocation: /hook\r\ncontent-length: 0\r\n\r\n")
                .await;
            tokio::time::sleep(Duration::from_secs(1)).await;
        })
    })
    .await;
    let (looping, _) = product
        .create(standard(&url, json!(["server-online"])))
        .await;
    let (status, v) = product.api("POST", &test_of(looping), None).await;
    assert_eq!(
        (status, v["status"].clone(), v["ok"].clone()),
        (200, json!(302), json!(false))
    );
    assert!(requests.try_recv().is_ok());
    assert!(requests.try_recv().is_err(), "the redirect was followed");
    product.shutdown().await;
}

// Abuse of the admin API from another address, against the binary.

/// Wrong tokens, huge bodies, bad JSON and refused URLs from another host,
/// thousands of each: the log grows by a few lines, the bridge's memory
/// stays flat, and `/metrics` counts the failed tokens.
#[tokio::test]
async fn abuse_of_the_admin_api_keeps_the_log_and_memory_small() {
    let dir = tempfile::tempdir().unwrap();
    let mut abused = Abused::start(dir.path(), &[]).await;
    let http = abused.http;

    let post = |token: &str, len: usize| {
        format!(
            "POST /api/admin/webhooks HTTP/1.1\r\nHost: {http}\r\nAuthorization: Bearer {token}\r\n\
             Content-Length: {len}\r\nConnection: close\r\n\r\n"
        )
    };
    let wrong = "x".repeat(4096);
    let huge = vec![b'{'; 1 << 20];
    let bad_json = b"{\"url\": [[[[[[[[[[";
    let private = standard("http://10.0.0.1/", json!(["server-online"])).to_string();
    let mut statuses = std::collections::BTreeMap::<Option<u16>, usize>::new();
    // The right token: 100 × a 1 MiB body (413, or closed while it is
    // still being sent), bad JSON, a private URL.
    for _ in 0..100 {
        let s = request_from(OTHER_HOST, http, &post(TOKEN, huge.len()), &huge, false).await;
        assert!(matches!(s, Some(413) | None), "{s:?}");
        for body in [bad_json.as_slice(), private.as_bytes()] {
            let s = request_from(OTHER_HOST, http, &post(TOKEN, body.len()), body, false).await;
            assert_eq!(s, Some(400));
        }
    }
    // 500 × a wrong 4 KiB token with a 1 MiB body: refused before the body.
    for _ in 0..500 {
        let s = request_from(OTHER_HOST, http, &post(&wrong, huge.len()), &huge, true).await;
        *statuses.entry(s).or_default() += 1;
    }
    // The first five wrong tokens are 401, the rest refused unchecked.
    assert_eq!(statuses.get(&Some(401)), Some(&5), "{statuses:?}");
    assert_eq!(statuses.get(&Some(429)), Some(&495), "{statuses:?}");

    let tail = abused.assert_small_growth("800 abusive requests");
    assert!(tail.contains("wrong admin token"), "{tail}");
    let (status, _, body) = http_get(http, "/metrics", "").await;
    assert_eq!(status, 200);
    let metrics = String::from_utf8_lossy(&body);
    assert!(
        metrics.contains("bridge_auth_failures_total 5\n"),
        "{metrics}"
    );
    abused.child.kill();
}
