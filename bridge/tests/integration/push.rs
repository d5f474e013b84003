//! Web Push against the real bridge (`docs/protocol.md` §2.4): an embedded
//! master whose game servers come and go, browsers made up here (a P-256
//! key pair and an auth secret each, as a browser's push client holds),
//! and the kit's push service on loopback (`lobby_testkit::push_service`)
//! at its HTTP side: it takes the bridge's `POST`s, checks the VAPID
//! `Authorization` (an ES256 JWT for its own origin, verified with the
//! curve's ECDSA against the key `GET /api/push/key` serves) and decrypts
//! the `aes128gcm` body with the browser's private key, then answers 201,
//! or 404/410 for a subscription it has dropped. The bridge runs with
//! `--push-allow-insecure` (http on loopback) except where the refusal of
//! such endpoints is tested.

use crate::common;

use std::{collections::HashMap, time::Duration};

use base64::{engine::general_purpose::URL_SAFE_NO_PAD as B64URL, Engine as _};
use common::*;
use lobby_testkit::push_service::{random, Browser, PushService};
use serde_json::{json, Value};

/// How long a key stays unlisted before it is offline, in these tests.
const GRACE: Duration = Duration::from_secs(1);

// The bridge.

/// The product under test: `common::Watching`, with the push API.
struct Product(Watching);

impl std::ops::Deref for Product {
    type Target = Watching;

    fn deref(&self) -> &Watching {
        &self.0
    }
}

impl Product {
    async fn start(configure: impl FnOnce(&mut bridge::Config)) -> Self {
        Self(
            Watching::start(GRACE, |c| {
                c.push_allow_insecure = true;
                c.public_url = Some("https://lobby.example".into());
                configure(c);
            })
            .await,
        )
    }

    /// A request to the push API: the status and JSON answer.
    async fn api(&self, method: &str, body: Value) -> (u16, Value) {
        self.api_from(&self.http, method, body).await
    }

    async fn api_from(&self, http: &reqwest::Client, method: &str, body: Value) -> (u16, Value) {
        let url = format!("http://{}/api/push/subscription", self.bridge.addr);
        let resp = http
            .request(method.parse().unwrap(), url)
            .timeout(HUNG)
            .body(body.to_string())
            .send()
            .await
            .unwrap();
        let status = resp.status().as_u16();
        let text = resp.text().await.unwrap();
        (status, serde_json::from_str(&text).unwrap_or(Value::Null))
    }

    /// The served VAPID key, which `service` trusts from now on.
    async fn key_for(&self, service: &PushService) -> String {
        let (status, v) = get_json(&self.bridge, "/api/push/key").await;
        assert_eq!(status, 200, "{v}");
        let key = v["publicKey"].as_str().unwrap().to_owned();
        service.trust(&key);
        key
    }

    async fn subscribe(&self, browser: &Browser, watches: Value) {
        let (status, v) = self.api("PUT", browser.request(watches)).await;
        assert_eq!(status, 201, "{v}");
    }

    async fn shutdown(self) {
        self.0.shutdown().await;
    }
}

#[tokio::test]
async fn pushes_are_signed_encrypted_and_carry_the_server() {
    let product = Product::start(|_| {}).await;
    let mut service = PushService::start().await;
    let key = product.key_for(&service).await;
    let point = B64URL.decode(&key).unwrap();
    assert_eq!((point.len(), point[0]), (65, 4), "an uncompressed point");

    let mut alpha = game_server(product.master.addr, "Alpha", 20001).await;
    let alpha_key = product.key_of("Alpha").await;
    let ann = service.browser("ann");
    let bob = service.browser("bob");
    product
        .subscribe(
            &ann,
            json!([{"key": alpha_key, "events": ["lobby-opened", "players-reached"], "threshold": 3}]),
        )
        .await;
    product
        .subscribe(
            &bob,
            json!([{"key": alpha_key, "events": ["server-online", "server-offline"]}]),
        )
        .await;
    assert_eq!(product.metric("bridge_push_subscriptions").await, 2);

    // The lobby closes, then opens: Ann is told.
    product.stats(&mut alpha, 1, false).await;
    product.stats(&mut alpha, 1, true).await;
    let got = service.next().await;
    assert_eq!(got.id, "ann");
    assert_eq!(got.payload["type"], "lobby-opened");
    let data = &got.payload["data"];
    assert_eq!(data["key"], alpha_key.as_str());
    assert_eq!(data["name"], "Alpha");
    assert_eq!(data["players"], json!({"current": 1, "max": 4}));
    assert_eq!(data["isLobbyOpen"], true);
    assert_eq!(
        data["url"],
        format!("https://lobby.example/server/{alpha_key}")
    );
    assert_eq!(got.ttl, 900);
    assert_eq!(got.topic, format!("{alpha_key}-lobby"));

    // Three players: Ann again, for another event.
    product.stats(&mut alpha, 3, true).await;
    let got = service.next().await;
    assert_eq!(
        (got.id.as_str(), &got.payload["type"]),
        ("ann", &json!("players-reached"))
    );
    assert_eq!(got.payload["data"]["players"]["current"], 3);
    assert_eq!(got.topic, format!("{alpha_key}-players"));

    // Alpha goes away for longer than the grace, then comes back: Bob.
    drop(alpha);
    let got = service.next().await;
    assert_eq!(
        (got.id.as_str(), &got.payload["type"]),
        ("bob", &json!("server-offline"))
    );
    assert_eq!(got.ttl, 3600);
    let _alpha = game_server(product.master.addr, "Alpha", 20001).await;
    let got = service.next().await;
    assert_eq!(
        (got.id.as_str(), &got.payload["type"]),
        ("bob", &json!("server-online"))
    );
    assert_eq!(got.topic, format!("{alpha_key}-online"));
    assert!(service.nothing_yet(), "a push nobody asked for");
    // Counted once the outcome is stored, a moment after the service got it.
    product
        .until_metric(r#"bridge_push_sent_total{result="delivered"}"#, |v| v == 4)
        .await;
    product.shutdown().await;
}

#[tokio::test]
async fn a_flapping_server_makes_one_push_per_cooldown() {
    let product = Product::start(|_| {}).await;
    let mut service = PushService::start().await;
    product.key_for(&service).await;
    let mut alpha = game_server(product.master.addr, "Alpha", 20001).await;
    let alpha_key = product.key_of("Alpha").await;
    let ann = service.browser("ann");
    product
        .subscribe(
            &ann,
            json!([{"key": alpha_key, "events": ["lobby-opened"]}]),
        )
        .await;
    for _ in 0..5 {
        product.stats(&mut alpha, 1, false).await;
        product.stats(&mut alpha, 1, true).await;
    }
    let got = service.next().await;
    assert_eq!(got.payload["type"], "lobby-opened");
    // Every flap was decided; one push was sent.
    product
        .until_metric(
            r#"bridge_watch_changes_total{change="lobby-opened"}"#,
            |n| n == 5,
        )
        .await;
    product
        .until_metric("bridge_push_attempts_total", |n| n >= 1)
        .await;
    assert_eq!(product.metric("bridge_push_attempts_total").await, 1);
    assert!(service.nothing_yet(), "the flapping made a second push");
    product.shutdown().await;
}

#[tokio::test]
async fn gone_subscriptions_are_deleted() {
    let product = Product::start(|_| {}).await;
    let mut service = PushService::start().await;
    product.key_for(&service).await;
    let mut alpha = game_server(product.master.addr, "Alpha", 20001).await;
    let alpha_key = product.key_of("Alpha").await;
    let watch = json!([{"key": alpha_key, "events": ["lobby-opened"]}]);
    let (ann, bob, cid) = (
        service.browser("ann"),
        service.browser("bob"),
        service.browser("cid"),
    );
    for b in [&ann, &bob, &cid] {
        product.subscribe(b, watch.clone()).await;
    }
    service.answer("ann", 410);
    service.answer("bob", 404);
    product.stats(&mut alpha, 1, false).await;
    product.stats(&mut alpha, 1, true).await;
    // At least once: a push answered after the bridge's timeout comes again.
    let mut ids = std::collections::BTreeSet::new();
    while ids.len() < 3 {
        ids.insert(service.next().await.id);
    }
    assert_eq!(Vec::from_iter(ids), ["ann", "bob", "cid"]);
    product
        .until_metric(r#"bridge_push_sent_total{result="gone"}"#, |n| n == 2)
        .await;
    assert_eq!(product.metric("bridge_push_subscriptions").await, 1);
    // Gone from the store too: a DELETE finds nothing, a PUT creates anew.
    let (status, _) = product
        .api("DELETE", json!({"subscription": ann.subscription()}))
        .await;
    assert_eq!(status, 404);
    product.subscribe(&bob, watch).await;
    let (status, _) = product
        .api("DELETE", json!({"subscription": cid.subscription()}))
        .await;
    assert_eq!(status, 204);
    assert_eq!(product.metric("bridge_push_subscriptions").await, 1);
    product.shutdown().await;
}

#[tokio::test]
async fn the_key_and_subscriptions_survive_a_restart() {
    let master = TestMaster::start().await;
    let dir = tempfile::tempdir().unwrap();
    let mut c = test_config(master.addr);
    c.data_dir = Some(dir.path().to_owned());
    c.history_interval = Duration::from_secs(1);
    c.push_allow_insecure = true;
    c.push_contact = Some("mailto:ops@lobby.example".into());
    let service = PushService::start().await;
    let ann = service.browser("ann");
    let bridge = TestBridge::embedding(&master, c.clone()).await;
    let (_, v) = get_json(&bridge, "/api/push/key").await;
    let key = v["publicKey"].clone();
    let http = http_client(None);
    let resp = http
        .put(format!("http://{}/api/push/subscription", bridge.addr))
        .body(ann.request(json!([])).to_string())
        .send()
        .await
        .unwrap();
    assert_eq!(resp.status(), 201);
    bridge.shutdown().await;

    let bridge = TestBridge::embedding(&master, c).await;
    let (status, v) = get_json(&bridge, "/api/push/key").await;
    assert_eq!((status, &v["publicKey"]), (200, &key), "the same key");
    assert_eq!(metric(bridge.addr, "bridge_push_subscriptions").await, 1.0);
    // Replacing it is not creating it.
    let resp = http
        .put(format!("http://{}/api/push/subscription", bridge.addr))
        .body(ann.request(json!([])).to_string())
        .send()
        .await
        .unwrap();
    assert_eq!(resp.status(), 200);
    bridge.shutdown().await;
    master.shutdown().await;
}

#[tokio::test]
async fn bad_requests_are_refused_naming_the_field_and_limits_hold() {
    let product = Product::start(|c| {
        c.push_max_per_address = 3;
        c.push_max_subscriptions = 5;
    })
    .await;
    let service = PushService::start().await;
    let _alpha = game_server(product.master.addr, "Alpha", 20001).await;
    let alpha_key = product.key_of("Alpha").await;
    let ann = service.browser("ann");
    let ok = ann.request(json!([{"key": alpha_key, "events": ["lobby-opened"]}]));
    let with = |path: &[&str], v: Value| {
        let mut b = ok.clone();
        let mut at = &mut b;
        for p in &path[..path.len() - 1] {
            at = &mut at[*p];
        }
        at[path[path.len() - 1]] = v;
        b
    };
    for (body, field) in [
        (json!("text"), "body"),
        (with(&["extra"], json!(1)), "body"),
        (
            with(&["subscription", "endpoint"], json!("ftp://x/")),
            "subscription.endpoint",
        ),
        (
            with(&["subscription", "endpoint"], json!("http://192.0.2.1/p")),
            "subscription.endpoint",
        ),
        (
            with(&["subscription", "keys", "p256dh"], json!("AAAA")),
            "subscription.keys.p256dh",
        ),
        (
            with(&["subscription", "keys", "auth"], json!(7)),
            "subscription.keys.auth",
        ),
        (with(&["watches"], json!({})), "watches"),
        (
            with(
                &["watches"],
                json!([{"key": "x", "events": ["lobby-opened"]}]),
            ),
            "watches[0].key",
        ),
        (
            with(
                &["watches"],
                json!([{"key": alpha_key, "events": ["players-reached"]}]),
            ),
            "watches[0].threshold",
        ),
        // A key this lobby never listed: nobody could ever be told.
        (
            with(
                &["watches"],
                json!([{"key": alpha_key, "events": ["lobby-opened"]},
                       {"key": "0123456789abcdef", "events": ["lobby-opened"]}]),
            ),
            "watches[1].key",
        ),
    ] {
        let (status, v) = product.api("PUT", body).await;
        assert_eq!(status, 400, "{v}");
        let message = v["error"].as_str().unwrap();
        assert!(message.starts_with(&format!("{field}: ")), "{field}: {v}");
        assert_eq!(v["field"], field, "{v}");
    }
    // 65 bytes that are no point on the curve.
    let mut off_curve = vec![4u8];
    off_curve.extend([0xff; 64]);
    let (status, v) = product
        .api(
            "PUT",
            with(
                &["subscription", "keys", "p256dh"],
                json!(B64URL.encode(off_curve)),
            ),
        )
        .await;
    assert_eq!(status, 400, "{v}");
    assert!(v["error"]
        .as_str()
        .unwrap()
        .starts_with("subscription.keys.p256dh: "));
    // Bodies over 8 KiB.
    let big = with(&["watches"], json!("x".repeat(10_000)));
    assert_eq!(product.api("PUT", big).await.0, 413);
    assert_eq!(product.metric("bridge_push_subscriptions").await, 0);

    // Nobody else can change a subscription: its auth secret must match.
    product.subscribe(&ann, json!([])).await;
    let mut thief = ok.clone();
    thief["subscription"]["keys"]["auth"] = json!(B64URL.encode(random::<16>()));
    let (status, v) = product.api("PUT", thief.clone()).await;
    assert_eq!(status, 403, "{v}");
    assert!(v["error"]
        .as_str()
        .unwrap()
        .starts_with("subscription.keys.auth: "));
    let (status, _) = product
        .api("DELETE", json!({"subscription": thief["subscription"]}))
        .await;
    assert_eq!(status, 404);
    assert_eq!(
        product.api("PUT", ok.clone()).await.0,
        200,
        "the owner replaces it"
    );

    // Three per address: the fourth is refused.
    for id in ["b1", "b2"] {
        product.subscribe(&service.browser(id), json!([])).await;
    }
    let (status, v) = product
        .api("PUT", service.browser("b3").request(json!([])))
        .await;
    assert_eq!(status, 429, "{v}");
    // Five in all: another address gets two; its third takes the place
    // of the oldest of the address holding the most (Ann's), rather than
    // being refused.
    let other = http_client(Some(OTHER_HOST));
    for id in ["c1", "c2", "c3"] {
        let (status, v) = product
            .api_from(&other, "PUT", service.browser(id).request(json!([])))
            .await;
        assert_eq!(status, 201, "{v}");
    }
    assert_eq!(product.metric("bridge_push_subscriptions").await, 5);
    let (status, _) = product
        .api("DELETE", json!({"subscription": ann.subscription()}))
        .await;
    assert_eq!(status, 404, "Ann's, the oldest, made room");
    // Its fourth is past its own limit.
    let (status, v) = product
        .api_from(&other, "PUT", service.browser("c4").request(json!([])))
        .await;
    assert_eq!(status, 429, "{v}");
    product.shutdown().await;
}

#[tokio::test]
async fn endpoints_aimed_at_private_networks_are_refused_and_nothing_is_sent() {
    let port = PushService::start().await.http.port();
    let watch = json!([]);
    // Without --push-allow-insecure: https and public only.
    let strict = Product::start(|c| c.push_allow_insecure = false).await;
    for endpoint in [
        format!("http://127.0.0.1:{port}/push/a"),
        format!("https://127.0.0.1:{port}/push/a"),
        format!("https://localhost:{port}/push/a"),
        "https://10.0.0.1/push/a".into(),
        "https://192.168.1.1/push/a".into(),
        "https://169.254.169.254/latest/".into(),
        "https://100.64.0.1/push/a".into(),
        "https://[::1]/push/a".into(),
        "https://[fd12::1]/push/a".into(),
        "https://[::ffff:127.0.0.1]/push/a".into(),
        "https://0.0.0.0/push/a".into(),
    ] {
        let b = Browser::new(endpoint.clone());
        let (status, v) = strict.api("PUT", b.request(watch.clone())).await;
        assert_eq!(status, 400, "{endpoint}: {v}");
        let message = v["error"].as_str().unwrap();
        assert!(message.starts_with("subscription.endpoint: "), "{v}");
    }
    assert_eq!(strict.metric("bridge_push_subscriptions").await, 0);
    strict.shutdown().await;
    // With it: loopback too, and nothing more.
    let lax = Product::start(|_| {}).await;
    for endpoint in [
        "http://10.0.0.1/push/a",
        "https://10.0.0.1/push/a",
        "http://192.0.2.1/push/a",
        "http://[fe80::1]/push/a",
    ] {
        let b = Browser::new(endpoint.into());
        let (status, v) = lax.api("PUT", b.request(watch.clone())).await;
        assert_eq!(status, 400, "{endpoint}: {v}");
    }
    for endpoint in [
        format!("http://127.0.0.1:{port}/push/a"),
        format!("http://localhost:{port}/push/b"),
        format!("http://[::1]:{port}/push/c"),
    ] {
        let b = Browser::new(endpoint.clone());
        let (status, v) = lax.api("PUT", b.request(watch.clone())).await;
        assert_eq!(status, 201, "{endpoint}: {v}");
    }
    lax.shutdown().await;
}

/// The binary for an abuse of the push API ([`Abused`]): Web Push on for
/// endpoints on loopback, and its key read (and so the log's word that
/// the subscriptions are loaded) before the measurement starts.
async fn abused_push(dir: &std::path::Path) -> Abused {
    let mut abused = Abused::start(
        dir,
        &[
            "--push-allow-insecure",
            "--push-contact",
            "mailto:ops@lobby.example",
        ],
    )
    .await;
    let (status, _, _) = http_get(abused.http, "/api/push/key", "").await;
    assert_eq!(status, 200);
    abused.mark();
    abused
}

/// Floods of PUTs from another address (garbage, huge bodies, endpoints
/// refused, subscriptions past the limit, stolen ones) against the
/// binary: the log grows by a few lines and the bridge's memory stays
/// flat.
#[tokio::test]
async fn abuse_of_the_push_api_keeps_the_log_and_memory_small() {
    let dir = tempfile::tempdir().unwrap();
    let mut abused = abused_push(dir.path()).await;
    let http = abused.http;

    let put = |method: &str, len: usize| {
        format!(
            "{method} /api/push/subscription HTTP/1.1\r\nHost: {http}\r\n\
             Content-Length: {len}\r\nConnection: close\r\n\r\n"
        )
    };
    let huge = vec![b'{'; 1 << 20];
    let garbage = b"{\"subscription\": [[[[[[[[[[";
    let service = PushService::start().await;
    let mut statuses = std::collections::BTreeMap::<Option<u16>, usize>::new();
    for i in 0..200 {
        let private = Browser::new(format!("https://10.0.0.{}/p", i % 250)).request(json!([]));
        let fresh = service
            .browser(&format!("x{i}"))
            .request(json!([]))
            .to_string();
        let mut stolen = service.browser("x0").request(json!([]));
        stolen["subscription"]["keys"]["auth"] = json!(B64URL.encode(random::<16>()));
        let unstolen = json!({"subscription": stolen["subscription"]}).to_string();
        for (method, body) in [
            ("PUT", huge.as_slice()),
            ("PUT", garbage.as_slice()),
            ("PUT", private.to_string().as_bytes()),
            ("PUT", fresh.as_bytes()),
            ("PUT", stolen.to_string().as_bytes()),
            ("DELETE", unstolen.as_bytes()),
        ] {
            let s = request_from(OTHER_HOST, http, &put(method, body.len()), body, false).await;
            *statuses.entry(s).or_default() += 1;
        }
    }
    eprintln!("answers: {statuses:?}");
    // 20 made, 180 past the per-address limit; every other one refused.
    assert_eq!(statuses.get(&Some(201)), Some(&20), "{statuses:?}");
    assert_eq!(statuses.get(&Some(429)), Some(&180), "{statuses:?}");
    assert_eq!(statuses.get(&Some(403)), Some(&200), "{statuses:?}");
    assert_eq!(statuses.get(&Some(404)), Some(&200), "{statuses:?}");

    let tail = abused.assert_small_growth("1,200 abusive requests");
    eprintln!("the log grew by {} bytes:\n{tail}", tail.len());
    let (_, _, body) = http_get(http, "/metrics", "").await;
    let metrics = String::from_utf8_lossy(&body);
    assert!(
        metrics.contains("bridge_push_subscriptions 20\n"),
        "{metrics}"
    );
    abused.child.kill();
}

/// A client whose requests come from `from` (a loopback address: Linux
/// routes all of 127/8 to `lo`).
fn client_from(from: &str) -> reqwest::Client {
    http_client(Some(from))
}

impl Product {
    /// A request to the admin's push API (with the admin token when
    /// `token`): the status and JSON answer.
    async fn admin(&self, method: &str, path: &str, token: bool) -> (u16, Value) {
        let mut req = self
            .http
            .request(
                method.parse().unwrap(),
                format!("http://{}{path}", self.bridge.addr),
            )
            .timeout(HUNG);
        if token {
            req = req.bearer_auth(TOKEN);
        }
        let resp = req.send().await.unwrap();
        let status = resp.status().as_u16();
        let text = resp.text().await.unwrap();
        (status, serde_json::from_str(&text).unwrap_or(Value::Null))
    }

    /// Each source's count, as the admin's status lists them.
    async fn sources(&self) -> HashMap<String, u64> {
        let (status, v) = self.admin("GET", "/api/admin/push", true).await;
        assert_eq!(status, 200, "{v}");
        v["sources"]
            .as_array()
            .unwrap()
            .iter()
            .map(|s| {
                (
                    s["source"].as_str().unwrap().to_owned(),
                    s["subscriptions"].as_u64().unwrap(),
                )
            })
            .collect()
    }
}

/// 40 hosts fill the store with five subscriptions each: a new player
/// still subscribes, and the subscription that makes room is the oldest
/// of a host holding the most; each push goes to whom is left. The admin
/// sees the count per host and purges one.
#[tokio::test]
async fn forty_hosts_filling_the_store_lock_no_player_out() {
    let product = Product::start(|c| {
        c.push_max_per_address = 5;
        c.push_max_subscriptions = 200;
    })
    .await;
    let mut service = PushService::start().await;
    product.key_for(&service).await;
    let mut alpha = game_server(product.master.addr, "Alpha", 20001).await;
    let alpha_key = product.key_of("Alpha").await;
    let watch = json!([{"key": alpha_key, "events": ["lobby-opened"]}]);
    let host = |h: usize| format!("127.0.0.{}", 10 + h);
    for h in 0..40 {
        let client = client_from(&host(h));
        for n in 0..5 {
            let b = service.browser(&format!("s{h}-{n}"));
            let (status, v) = product
                .api_from(&client, "PUT", b.request(watch.clone()))
                .await;
            assert_eq!(status, 201, "{}: {v}", host(h));
        }
    }
    assert_eq!(product.metric("bridge_push_subscriptions").await, 200);

    // Two new players, from hosts of their own: each gets in, and the
    // oldest subscription of a host holding five (the first host's, then
    // the second's) makes room.
    let ann = service.browser("ann");
    product.subscribe(&ann, watch.clone()).await;
    let bob = service.browser("bob");
    let (status, v) = product
        .api_from(&client_from(OTHER_HOST), "PUT", bob.request(watch.clone()))
        .await;
    assert_eq!(status, 201, "{v}");
    assert_eq!(product.metric("bridge_push_subscriptions").await, 200);
    let sources = product.sources().await;
    assert_eq!(sources.len(), 42, "{sources:?}");
    assert_eq!(sources[&host(0)], 4);
    assert_eq!(sources[&host(1)], 4);
    assert_eq!(sources["127.0.0.1"], 1);
    assert_eq!(sources[OTHER_HOST], 1);
    assert!((2..40).all(|h| sources[&host(h)] == 5), "{sources:?}");

    // The lobby opens: a push for each subscription left, none for the
    // two that made room.
    product.stats(&mut alpha, 1, false).await;
    product.stats(&mut alpha, 1, true).await;
    // Delivery is at least once: a push the service took but whose answer
    // came after the bridge's timeout (a busy machine) is sent again.
    let mut got = std::collections::HashSet::new();
    while got.len() < 200 {
        got.insert(service.next().await.id);
    }
    assert!(got.contains("ann") && got.contains("bob"), "{got:?}");
    assert!(
        !got.contains("s0-0") && !got.contains("s1-0"),
        "the squatters' oldest went"
    );
    assert!(got.contains("s0-1") && got.contains("s1-1"));

    // The admin purges a host; its pushes stop with it.
    let (status, v) = product.admin("GET", "/api/admin/push", false).await;
    assert_eq!(status, 401, "{v}");
    let purge = format!("/api/admin/push/sources/{}", host(2));
    assert_eq!(product.admin("DELETE", &purge, false).await.0, 401);
    let (status, v) = product.admin("DELETE", &purge, true).await;
    assert_eq!(status, 204, "{v}");
    assert_eq!(product.metric("bridge_push_subscriptions").await, 195);
    let sources = product.sources().await;
    assert!(!sources.contains_key(&host(2)), "{sources:?}");
    let (status, v) = product.admin("DELETE", &purge, true).await;
    assert_eq!(status, 404, "{v}");
    let (status, v) = product
        .admin("DELETE", "/api/admin/push/sources/nobody", true)
        .await;
    assert_eq!((status, &v["field"]), (400, &json!("source")), "{v}");
    let (status, v) = product.admin("GET", "/api/admin/push", true).await;
    assert_eq!(status, 200);
    assert_eq!(v["enabled"], true);
    assert_eq!(v["contact"], "https://lobby.example");
    assert_eq!(v["subscriptions"], 195);
    assert_eq!(v["sources"][0]["subscriptions"], 5, "the most first: {v}");
    // A purged subscription's browser subscribes again as new.
    let (status, v) = product
        .api_from(
            &client_from(&host(2)),
            "PUT",
            service.browser("s2-0").request(watch.clone()),
        )
        .await;
    assert_eq!(status, 201, "{v}");
    product.shutdown().await;
}

/// A subscription the page does not renew within `--push-expire-after`
/// is deleted; renewing it (the page's `PUT` on load) keeps it.
#[tokio::test]
async fn a_subscription_not_renewed_expires() {
    let product = Product::start(|c| c.push_expire_after = Duration::from_secs(2)).await;
    let service = PushService::start().await;
    let ann = service.browser("ann");
    product.subscribe(&ann, json!([])).await;
    assert_eq!(product.metric("bridge_push_subscriptions").await, 1);
    product
        .until_metric("bridge_push_subscriptions", |n| n == 0)
        .await;
    let (status, _) = product
        .api("DELETE", json!({"subscription": ann.subscription()}))
        .await;
    assert_eq!(status, 404, "deleted from the store too");
    // Made anew, as new.
    product.subscribe(&ann, json!([])).await;
    product.shutdown().await;
}

/// Without a contact for the push services (no `--push-contact`, and a
/// `--public-url` that is not https), Web Push is off: the key, the
/// subscriptions and the admin's status say why.
#[tokio::test]
async fn without_a_contact_web_push_is_off_and_says_why() {
    for (public_url, contact) in [
        (Some("http://lobby.example"), None),
        (None, None),
        (Some("https://lobby.example"), Some("mailto:ops@localhost")),
    ] {
        let product = Product::start(|c| {
            c.public_url = public_url.map(Into::into);
            c.push_contact = contact.map(Into::into);
        })
        .await;
        let url = format!("http://{}/api/push/key", product.bridge.addr);
        let resp = product.http.get(url).timeout(HUNG).send().await.unwrap();
        assert_eq!(resp.status(), 503);
        assert!(
            resp.headers().get("retry-after").is_none(),
            "off is not a moment's outage"
        );
        let v: Value = serde_json::from_str(&resp.text().await.unwrap()).unwrap();
        let why = v["error"].as_str().unwrap();
        assert!(why.starts_with("Web Push is off"), "{why}");
        assert!(why.contains("contact"), "{why}");
        let service = PushService::start().await;
        let (status, v) = product
            .api("PUT", service.browser("ann").request(json!([])))
            .await;
        assert_eq!((status, &v["error"]), (503, &json!(why)), "{v}");
        let (status, v) = product.admin("GET", "/api/admin/push", true).await;
        assert_eq!(status, 200, "{v}");
        assert_eq!((&v["enabled"], &v["off"]), (&json!(false), &json!(why)));
        assert!(v.get("contact").is_none(), "{v}");
        product.shutdown().await;
    }
}

/// Floods of the push API's newer surfaces from another address: watches
/// of keys never listed, and the admin's status and purge without the
/// token. The log grows by a few lines, the memory stays flat, and the
/// CPU they cost stays small.
#[tokio::test]
async fn abuse_of_watches_and_the_admin_push_api_keeps_log_memory_and_cpu_small() {
    let dir = tempfile::tempdir().unwrap();
    let mut abused = abused_push(dir.path()).await;
    let http = abused.http;
    let pid = abused.child.pid();
    let cpu_before = cpu_of(pid);

    let service = PushService::start().await;
    let mut statuses = std::collections::BTreeMap::<(&str, Option<u16>), usize>::new();
    for i in 0..300 {
        let watches: Vec<Value> = (0..20)
            .map(|w| json!({"key": format!("{:016x}", i * 20 + w + 1), "events": ["lobby-opened"]}))
            .collect();
        let body = service
            .browser(&format!("x{i}"))
            .request(json!(watches))
            .to_string();
        let head = format!(
            "PUT /api/push/subscription HTTP/1.1\r\nHost: {http}\r\n\
             Content-Length: {}\r\nConnection: close\r\n\r\n",
            body.len()
        );
        let s = request_from(OTHER_HOST, http, &head, body.as_bytes(), false).await;
        *statuses.entry(("watch", s)).or_default() += 1;
        for (method, path) in [
            ("GET", "/api/admin/push".to_owned()),
            (
                "DELETE",
                format!("/api/admin/push/sources/127.0.0.{}", i % 250),
            ),
        ] {
            let head = format!(
                "{method} {path} HTTP/1.1\r\nHost: {http}\r\nAuthorization: Bearer wrong-{i}\r\n\
                 Connection: close\r\n\r\n"
            );
            let s = request_from(OTHER_HOST, http, &head, b"", false).await;
            *statuses.entry(("admin", s)).or_default() += 1;
        }
    }
    eprintln!("answers: {statuses:?}");
    assert_eq!(
        statuses.get(&("watch", Some(400))),
        Some(&300),
        "{statuses:?}"
    );
    // Wrong tokens: 401, then 429 once the address has failed too often.
    let admin_refused = statuses.get(&("admin", Some(401))).copied().unwrap_or(0)
        + statuses.get(&("admin", Some(429))).copied().unwrap_or(0);
    assert_eq!(admin_refused, 600, "{statuses:?}");

    let tail = abused.assert_small_growth("900 abusive requests");
    eprintln!("the log grew by {} bytes:\n{tail}", tail.len());
    assert!(
        tail.contains("a push request was refused"),
        "refusals are logged, throttled: {tail}"
    );
    let cpu = cpu_of(pid) - cpu_before;
    eprintln!(
        "900 abusive requests cost the bridge {:.2} s of CPU",
        cpu.as_secs_f64()
    );
    assert!(cpu < Duration::from_secs(10), "{cpu:?} of CPU");
    let (_, _, body) = http_get(http, "/metrics", "").await;
    let metrics = String::from_utf8_lossy(&body);
    assert!(
        metrics.contains("bridge_push_subscriptions 0\n"),
        "{metrics}"
    );
    abused.child.kill();
}
