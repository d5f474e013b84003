//! Server keys against a host that registers servers it does not run,
//! from a second address (127.0.0.2; 127.0.0.3 is a third), through the
//! real master and bridge (`docs/protocol.md`, "Server keys"; SECURITY.md):
//! guessed addresses never yield a hidden server's key, a twin under a
//! server's address and port gets a key of its own and leaves the server's
//! page, badge and history alone, twins from one host share a key, and one
//! source cannot have more keys recorded per day than the growth bound
//! while other sources go on being recorded.

use crate::common;

use std::{collections::HashMap, net::SocketAddr, time::Duration};

use common::*;
use master::feed::{FeedConfig, FeedServer};
use tokio::{
    io::AsyncWriteExt,
    net::{TcpListener, TcpStream},
};
use tokio_util::sync::CancellationToken;

/// The hidden server's host.
const SERVER_HOST: &str = "127.0.0.1";
/// The stranger's host.
const STRANGER: &str = "127.0.0.2";
/// Another honest host.
const NEIGHBOUR: &str = "127.0.0.3";

async fn send_framed(s: &mut TcpStream, json: &str) {
    s.write_all(format!("{}{json}\n", json.len() + 1).as_bytes())
        .await
        .unwrap();
}

/// Registers (or registers again, on the same connection) `name` at
/// `address:port`.
async fn register(s: &mut TcpStream, name: &str, address: &str, port: u16) {
    let json = format!(
        r#"{{"command":"msRegisterGameServer","content":{{"serverName":"{name}","serverAddress":"{address}","serverPort":{port}}}}}"#
    );
    send_framed(s, &json).await;
}

async fn stats(s: &mut TcpStream, current: u64, open: bool) {
    let json = stats_json(current, open);
    send_framed(s, &json).await;
}

/// A game server registered from `from`, claiming `address:port`.
async fn server_from(
    from: &str,
    master: SocketAddr,
    name: &str,
    address: &str,
    port: u16,
) -> TcpStream {
    let mut s = connect_from(from, master).await;
    register(&mut s, name, address, port).await;
    s
}

/// The victim of the twin tests: "Victim" registered from its own host
/// with its own address.
async fn register_victim(master: SocketAddr) -> TcpStream {
    server_from(SERVER_HOST, master, "Victim", SERVER_HOST, 20000).await
}

/// A delta subscriber that remembers every key it was sent, by name.
struct KeyReader {
    ws: Ws,
    keys: HashMap<String, String>,
}

impl KeyReader {
    async fn start(bridge: &TestBridge) -> Self {
        Self {
            ws: bridge.subscribe_deltas().await,
            keys: HashMap::new(),
        }
    }

    /// Reads snapshots and deltas until `name` has been sent; its key.
    async fn key_of(&mut self, name: &str) -> String {
        tokio::time::timeout(HUNG, async {
            loop {
                if let Some(key) = self.keys.get(name) {
                    return key.clone();
                }
                let v = recv_json(&mut self.ws).await;
                let content = &v["content"];
                let entries = match v["command"].as_str() {
                    Some("bridgeSnapshot") => &content["servers"],
                    Some("bridgeDelta") => &content["upsert"],
                    _ => continue,
                };
                for e in entries.as_array().into_iter().flatten() {
                    assert!(e.get("registrant").is_none(), "a viewer got {e}");
                    if let (Some(name), Some(key)) = (e["name"].as_str(), e["key"].as_str()) {
                        self.keys.insert(name.to_owned(), key.to_owned());
                    }
                }
            }
        })
        .await
        .unwrap_or_else(|_| panic!("{name} was never listed"))
    }
}

/// Which way the bridge takes the master's list.
#[derive(Debug, Clone, Copy)]
enum Path {
    /// The master in the bridge's process (its registry, followed).
    Embedded,
    /// A master elsewhere, its change feed followed (`--master-feed`).
    Feed,
}

/// The product under test: a master, and a bridge with `config` reading it
/// the `path` way.
struct Product {
    master: TestMaster,
    bridge: TestBridge,
    feed_stop: CancellationToken,
}

impl Product {
    async fn start(path: Path, configure: impl FnOnce(&mut bridge::Config)) -> Self {
        let master = TestMaster::start().await;
        let mut config = test_config(master.addr);
        config.history_interval = Duration::from_secs(1);
        configure(&mut config);
        let feed_stop = CancellationToken::new();
        let bridge = match path {
            Path::Embedded => TestBridge::embedding(&master, config).await,
            Path::Feed => {
                let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
                config.master_feed = Some(listener.local_addr().unwrap().to_string());
                let feed = FeedServer::new(master.master.registry(), FeedConfig::default());
                let stop = feed_stop.clone();
                tokio::spawn(async move { feed.run(listener, stop.cancelled_owned()).await });
                let bridge = TestBridge::start(config).await;
                bridge.wait_feed_up(1).await;
                bridge
            }
        };
        Self {
            master,
            bridge,
            feed_stop,
        }
    }

    /// Waits until `n` more samples than now are written.
    async fn samples(&self, n: u64) {
        let name = "bridge_history_samples_written_total";
        let target = metric(self.bridge.addr, name).await + n as f64;
        metric_reaches(self.bridge.addr, name, target).await;
    }

    async fn shutdown(self) {
        self.bridge.shutdown().await;
        self.feed_stop.cancel();
        self.master.shutdown().await;
    }
}

async fn guesses_never_yield_the_hidden_key(path: Path) {
    let product = Product::start(path, |c| c.hide_addresses = true).await;
    let mut reader = KeyReader::start(&product.bridge).await;
    let _server = server_from(
        SERVER_HOST,
        product.master.addr,
        "Hidden",
        SERVER_HOST,
        20000,
    )
    .await;
    let hidden = reader.key_of("Hidden").await;

    // The stranger tries addresses around the server's, the right one
    // among them, each on a few ports, the right one among them.
    let mut stranger = connect_from(STRANGER, product.master.addr).await;
    let mut tried = 0;
    for address in ["127.0.0.1", "127.0.0.4", "127.0.0.5"] {
        for port in 19_999..=20_001 {
            let name = format!("Guess {address} {port}");
            register(&mut stranger, &name, address, port).await;
            let key = reader.key_of(&name).await;
            assert_ne!(
                key, hidden,
                "{path:?}: guessing {address}:{port} yielded the hidden server's key"
            );
            tried += 1;
        }
    }
    assert_eq!(tried, 9);
    // The stranger's own address is its own: keyed like any server.
    register(&mut stranger, "Own", STRANGER, 20000).await;
    assert_ne!(reader.key_of("Own").await, hidden);
    product.shutdown().await;
}

#[tokio::test]
async fn guessed_addresses_never_yield_a_hidden_servers_key() {
    guesses_never_yield_the_hidden_key(Path::Embedded).await;
}

#[tokio::test]
async fn guessed_addresses_never_yield_a_hidden_servers_key_through_the_feed() {
    guesses_never_yield_the_hidden_key(Path::Feed).await;
}

async fn a_twin_cannot_take_over(path: Path) {
    let product = Product::start(path, |_| {}).await;
    let mut reader = KeyReader::start(&product.bridge).await;
    let mut server = register_victim(product.master.addr).await;
    stats(&mut server, 2, true).await;
    let victim = reader.key_of("Victim").await;
    let details = format!("/api/servers/{victim}");
    until_json(&product.bridge, &details, |s, _, v| {
        s == 200 && v["players"]["current"] == 2
    })
    .await;

    // The twin: the victim's address and port, from another host, with a
    // name and numbers of its own.
    let evil = "CLOSED - play at evil.example now";
    let mut twin = server_from(STRANGER, product.master.addr, evil, SERVER_HOST, 20000).await;
    stats(&mut twin, 4_000_000_000, true).await;
    let twin_key = reader.key_of(evil).await;
    assert_ne!(twin_key, victim, "{path:?}: the twin took the victim's key");
    // The victim restarts while the twin is listed (so the twin comes
    // first in the master's list), and keeps its numbers.
    drop(server);
    let mut server = register_victim(product.master.addr).await;
    stats(&mut server, 3, true).await;
    until_json(&product.bridge, &details, |s, _, v| {
        s == 200 && v["players"]["current"] == 3
    })
    .await;
    product.samples(2).await;

    let (status, v) = get_json(&product.bridge, &details).await;
    assert_eq!(status, 200);
    assert_eq!(v["name"], "Victim", "{path:?}: {v}");
    assert_eq!(v["players"]["current"], 3, "{v}");
    let (_, history) = get_json(
        &product.bridge,
        &format!("/api/servers/{victim}/history?range=1h"),
    )
    .await;
    let points = history["points"].as_array().expect("points");
    assert!(!points.is_empty(), "{history}");
    for point in points {
        let players = point[1].as_f64().unwrap_or(0.0);
        assert!(players <= 3.0, "{path:?}: the twin's numbers in {point}");
    }
    let (status, _, badge) =
        http_get(product.bridge.addr, &format!("/badge/{victim}.svg"), "").await;
    let badge = String::from_utf8(badge).unwrap();
    assert_eq!(status, 200);
    assert!(badge.contains("Victim"), "{badge}");
    assert!(
        !badge.contains("evil") && !badge.contains("4000000000"),
        "{badge}"
    );
    // The twin has a page of its own, under its own key.
    let v = until_json(
        &product.bridge,
        &format!("/api/servers/{twin_key}"),
        |s, _, _| s == 200,
    )
    .await;
    assert_eq!(v["name"], evil);
    // Who registered what stays between the master and the bridge.
    let (_, list) = get_json(&product.bridge, "/api/servers").await;
    assert_eq!(list["servers"].as_array().map(Vec::len), Some(2));
    assert!(!list.to_string().contains("registrant"), "{list}");
    drop((server, twin));
    product.shutdown().await;
}

#[tokio::test]
async fn a_twin_from_another_host_gets_its_own_key() {
    a_twin_cannot_take_over(Path::Embedded).await;
}

#[tokio::test]
async fn a_twin_from_another_host_gets_its_own_key_through_the_feed() {
    a_twin_cannot_take_over(Path::Feed).await;
}

#[tokio::test]
async fn twins_from_one_host_share_a_key() {
    let product = Product::start(Path::Embedded, |_| {}).await;
    let mut reader = KeyReader::start(&product.bridge).await;
    let master = product.master.addr;
    let _server = server_from(SERVER_HOST, master, "Server", SERVER_HOST, 20000).await;
    let _twin = server_from(SERVER_HOST, master, "Server twin", SERVER_HOST, 20000).await;
    let server = reader.key_of("Server").await;
    assert_eq!(reader.key_of("Server twin").await, server);
    // Twins claimed from one other host share a key too, not the server's.
    let _a = server_from(STRANGER, master, "Claim A", SERVER_HOST, 20000).await;
    let _b = server_from(STRANGER, master, "Claim B", SERVER_HOST, 20000).await;
    let claim = reader.key_of("Claim A").await;
    assert_eq!(reader.key_of("Claim B").await, claim);
    assert_ne!(claim, server);
    // And a third host's claim is another again.
    let _c = server_from(NEIGHBOUR, master, "Claim C", SERVER_HOST, 20000).await;
    let third = reader.key_of("Claim C").await;
    assert_ne!(third, server);
    assert_ne!(third, claim);
    product.shutdown().await;
}

#[tokio::test]
async fn one_source_cannot_grow_the_history_past_its_bound() {
    const BOUND: usize = 5;
    let product = Product::start(Path::Embedded, |c| c.history_keys_per_source = BOUND).await;
    let mut reader = KeyReader::start(&product.bridge).await;
    let master = product.master.addr;
    let _neighbour = server_from(NEIGHBOUR, master, "Neighbour", NEIGHBOUR, 20000).await;
    let neighbour = reader.key_of("Neighbour").await;

    // The stranger lists 12 servers at once, then moves each to a new
    // address: 24 keys over a few samples, all from one source.
    let mut stranger = Vec::new();
    let mut keys = Vec::new();
    for i in 0..12u16 {
        let name = format!("Churn {i}");
        stranger
            .push(server_from(STRANGER, master, &name, &format!("10.0.0.{i}"), 20000 + i).await);
        keys.push(reader.key_of(&name).await);
    }
    product.samples(2).await;
    for (i, s) in stranger.iter_mut().enumerate() {
        let name = format!("Churn again {i}");
        register(s, &name, &format!("10.0.1.{i}"), 21000).await;
        keys.push(reader.key_of(&name).await);
    }
    product.samples(2).await;
    let neighbour_details = format!("/api/servers/{neighbour}");
    let (_, before) = get_json(&product.bridge, &neighbour_details).await;
    let last_seen = before["lastSeen"]
        .as_i64()
        .expect("the neighbour is recorded");
    // Another server of the neighbour's source joins now, and is recorded.
    let _late = server_from(NEIGHBOUR, master, "Late", NEIGHBOUR, 20001).await;
    let late = reader.key_of("Late").await;
    product.samples(2).await;

    let mut recorded = 0;
    for key in &keys {
        // The history answers 404 for a key never recorded (the details
        // of a listed one come from the list).
        let path = format!("/api/servers/{key}/history?range=1h");
        let (status, _) = get_json(&product.bridge, &path).await;
        assert!(status == 200 || status == 404, "{status}");
        recorded += usize::from(status == 200);
    }
    assert_eq!(
        recorded,
        BOUND,
        "of {} keys from one source, only the bound is recorded",
        keys.len()
    );
    let refused = metric(product.bridge.addr, "bridge_history_servers_refused_total").await;
    assert!(refused > 0.0, "{refused}");
    let (_, after) = get_json(&product.bridge, &neighbour_details).await;
    assert!(
        after["lastSeen"].as_i64().unwrap() > last_seen,
        "the other source goes on being recorded: {after}"
    );
    let (_, history) = get_json(
        &product.bridge,
        &format!("/api/servers/{neighbour}/history?range=1h"),
    )
    .await;
    assert!(!history["points"].as_array().unwrap().is_empty());
    let (status, _) = get_json(
        &product.bridge,
        &format!("/api/servers/{late}/history?range=1h"),
    )
    .await;
    assert_eq!(status, 200, "a new server of another source is recorded");
    product.shutdown().await;
}
