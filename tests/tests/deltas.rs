//! The page's delta-kept list end to end (`docs/protocol.md` §3).
//!
//! - With the real bridge: the page loads its first snapshot from
//!   `/api/servers`, then follows deltas, and its rows stay equal to the
//!   master's own answer to `msQueryGameServers` through 1,000 random
//!   registrations, stats updates, disconnects and re-registrations over raw
//!   TCP. The list stays under one page (100 rows), so every row is read.
//! - With a fake bridge in this test (`?bridge=`): a delta that does not
//!   apply (a gap, an unknown id) is never shown and makes the page
//!   subscribe again with its `epoch` and `since`; so does a reconnect.
//!
//! Holds [`e2e::serial`] like the other browser tests.

use std::{
    collections::BTreeMap,
    io::{Read, Write},
    net::{SocketAddr, TcpStream},
    sync::{Arc, Mutex},
    time::{Duration, Instant},
};

use e2e::{
    browser::{Browser, Driver, PAGE_READY},
    game::{frame, GameServer, Stats},
    holds_for,
    lobby::Lobby,
    process::http_get,
    wait_for,
};
use futures_util::{SinkExt, StreamExt};
use serde_json::{json, Value};
use tokio::{
    net::TcpListener,
    sync::{broadcast, watch},
};
use tokio_tungstenite::tungstenite::Message;

/// How long the page may take to catch up with a burst of changes.
const CATCH_UP: Duration = Duration::from_secs(10);
/// Random changes made to the master's list.
const CHANGES: usize = 1000;
/// The page is compared with the master after this many changes.
const CHECK_EVERY: usize = 100;
/// Servers listed at most, so all of them are on the page's first page.
const MAX_SERVERS: usize = 90;

/// A small deterministic generator: a failure repeats with the same changes.
struct Lcg(u64);

impl Lcg {
    fn next(&mut self, n: usize) -> usize {
        self.0 = self
            .0
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        ((self.0 >> 33) as usize) % n.max(1)
    }

    fn stats(&mut self) -> Stats {
        let max = 2 + self.next(3) as u8;
        Stats {
            current: self.next(usize::from(max) + 1) as u32,
            max,
            open: self.next(2) == 0,
            mode: 1 + self.next(2) as u8,
        }
    }
}

/// The master's list, asked directly over TCP (`msQueryGameServers`).
fn query_master(master: SocketAddr) -> Vec<Value> {
    let mut tcp = TcpStream::connect_timeout(&master, Duration::from_secs(2))
        .unwrap_or_else(|e| panic!("connect to the master at {master}: {e}"));
    tcp.set_read_timeout(Some(Duration::from_secs(5)))
        .expect("read timeout");
    tcp.write_all(&frame(&json!({"command": "msQueryGameServers"})))
        .expect("send the query");
    // `[length][JSON][0x0A]`: the digits, then that many bytes.
    let mut digits = Vec::new();
    let mut byte = [0u8; 1];
    loop {
        tcp.read_exact(&mut byte).expect("read the reply's length");
        if byte[0].is_ascii_digit() {
            digits.push(byte[0]);
        } else {
            break;
        }
    }
    let len: usize = String::from_utf8_lossy(&digits)
        .parse()
        .expect("a length prefix");
    let mut body = vec![byte[0]; 1];
    body.resize(len, 0);
    tcp.read_exact(&mut body[1..]).expect("read the reply");
    let reply: Value = serde_json::from_slice(&body).expect("the reply is JSON");
    reply["content"]["servers"]
        .as_array()
        .cloned()
        .expect("msRQueryGameServers")
}

/// A row as the page writes it, from the master's entry: name, players,
/// lobby, mode (the page's own labels).
fn expected_row(e: &Value) -> [String; 4] {
    let current = e["players"]["current"].as_u64().unwrap_or(u64::MAX);
    let max = e["players"]["max"].as_u64().unwrap_or(0);
    let players = if current == max {
        format!("{current}/{max} full")
    } else {
        format!("{current}/{max}")
    };
    let lobby = if e["isLobbyOpen"] == json!(true) {
        "Open"
    } else {
        "In game"
    };
    let mode = match e["gameplayMode"].as_u64() {
        Some(2) => "Standard A+B",
        _ => "Standard A",
    };
    [
        e["name"].as_str().unwrap_or_default().to_owned(),
        players,
        lobby.to_owned(),
        mode.to_owned(),
    ]
}

/// Every row on the page with the same four cells.
async fn page_rows(browser: &Browser) -> Vec<[String; 4]> {
    let v = browser
        .js(
            "return Array.from(document.querySelectorAll('[data-testid=server-row]')).map(r => [\
             r.dataset.name, r.querySelector('.c-players').textContent.trim(), \
             r.querySelector('.c-lobby').textContent.trim(), \
             r.querySelector('.c-mode').textContent.trim()]);",
        )
        .await;
    serde_json::from_value(v).unwrap_or_default()
}

/// The bridge's own list (`/api/servers`), as rows: tells a bridge that
/// lags the master from a page that lags the bridge when a check fails.
/// `None` when it did not answer with the list (a check that fails many
/// times in a row may use up the test address's API budget: 429).
fn bridge_rows(http: SocketAddr) -> Option<Vec<[String; 4]>> {
    let body = http_get(http, "/api/servers")
        .ok()
        .filter(|r| r.status == 200)?
        .body;
    let v: Value = serde_json::from_str(&body).ok()?;
    let mut rows: Vec<[String; 4]> = v["servers"]
        .as_array()
        .map(|a| a.iter().map(expected_row).collect())
        .unwrap_or_default();
    rows.sort();
    Some(rows)
}

/// Waits until the page shows exactly the master's list (as a set: the page
/// sorts by name, the master lists in registration order). The master is
/// asked again each time: changes sent just before may still be on their way
/// to it over their own connections.
async fn wait_equal(browser: &Browser, lobby: &Lobby, what: &str) -> usize {
    wait_for(what, CATCH_UP, || async move {
        let mut rows = page_rows(browser).await;
        rows.sort();
        let mut expected: Vec<[String; 4]> = query_master(lobby.master)
            .iter()
            .map(expected_row)
            .collect();
        expected.sort();
        if rows == expected {
            Ok(rows.len())
        } else {
            let missing: Vec<_> = expected.iter().filter(|e| !rows.contains(e)).collect();
            let extra: Vec<_> = rows.iter().filter(|r| !expected.contains(r)).collect();
            let bridge = match bridge_rows(lobby.http) {
                Some(rows) if rows == expected => {
                    "the bridge's /api/servers equals the master's list"
                }
                Some(_) => "the bridge's /api/servers differs from the master's list too",
                None => "the bridge's /api/servers did not answer with a list",
            };
            Err(format!(
                "missing {missing:?}, not the master's {extra:?}; {bridge}"
            ))
        }
    })
    .await
}

#[tokio::test]
async fn page_stays_equal_to_the_master_through_random_changes() {
    let _serial = e2e::serial().await;
    let lobby = Lobby::start();
    let mut rng = Lcg(10);
    let mut next_name = 0usize;
    let mut fresh = |rng: &mut Lcg| {
        next_name += 1;
        let name = format!("Srv-{next_name:04}");
        let port = 20000 + next_name as u16;
        let stats = rng.stats();
        (name, port, stats)
    };
    // Live servers by name; the names of those that left, to re-register.
    let mut live: BTreeMap<String, (u16, GameServer)> = BTreeMap::new();
    let mut gone: Vec<(String, u16)> = Vec::new();
    for _ in 0..40 {
        let (name, port, stats) = fresh(&mut rng);
        let server = GameServer::register(lobby.master, &name, "192.0.2.7", port, stats);
        live.insert(name, (port, server));
    }

    let driver = Driver::start();
    let browser = driver.browser().await;
    browser.goto(&lobby.url("/")).await;
    browser.wait_live(PAGE_READY).await;
    let n = wait_equal(&browser, &lobby, "the first list").await;
    eprintln!("first list: {n} rows equal to the master's");
    // The first list came over HTTP, compressed, not on the socket.
    let fetched = browser
        .js("return performance.getEntriesByType('resource')\
             .filter(e => e.name.endsWith('/api/servers')).map(e => e.decodedBodySize);")
        .await;
    assert!(
        fetched.as_array().is_some_and(|a| a.len() == 1),
        "the page fetched /api/servers once: {fetched}"
    );
    browser.mark_document().await;

    let started = Instant::now();
    let mut counts = [0usize; 4];
    for change in 1..=CHANGES {
        let kind = rng.next(10);
        match kind {
            // Register a new server, or one that left again (a new id).
            0..=1 if live.len() < MAX_SERVERS => {
                let (name, port) = match (rng.next(2), gone.is_empty()) {
                    (0, false) => gone.swap_remove(rng.next(gone.len())),
                    _ => {
                        let (name, port, _) = fresh(&mut rng);
                        (name, port)
                    }
                };
                let server =
                    GameServer::register(lobby.master, &name, "192.0.2.7", port, rng.stats());
                live.insert(name, (port, server));
                counts[0] += 1;
            }
            // Disconnect one.
            2 if live.len() > 5 => {
                let Some(name) = live.keys().nth(rng.next(live.len())).cloned() else {
                    continue;
                };
                if let Some((port, server)) = live.remove(&name) {
                    drop(server);
                    gone.push((name, port));
                }
                counts[1] += 1;
            }
            // New stats for one.
            _ => {
                let i = rng.next(live.len());
                let stats = rng.stats();
                if let Some((_, (_, server))) = live.iter_mut().nth(i) {
                    server.update(stats);
                }
                counts[2] += 1;
            }
        }
        // Changes come faster than the bridge publishes now and then
        // (coalesced), and slower other times (one delta each).
        if rng.next(4) == 0 {
            tokio::time::sleep(Duration::from_millis(rng.next(30) as u64)).await;
        }
        if change % CHECK_EVERY == 0 {
            let n = wait_equal(
                &browser,
                &lobby,
                &format!("the page to equal the master after {change} changes"),
            )
            .await;
            counts[3] += 1;
            eprintln!("after {change} changes: {n} rows equal to the master's");
        }
    }
    eprintln!(
        "{CHANGES} changes ({} registrations, {} disconnects, {} stats updates) in {:?}, {} checks",
        counts[0],
        counts[1],
        counts[2],
        started.elapsed(),
        counts[3]
    );
    assert!(browser.same_document().await, "the page reloaded");
    // It followed deltas, not polls or whole lists.
    let metrics = browser.js("return window.__lobbyMetrics;").await;
    assert_eq!(metrics["lastKind"], "delta", "{metrics}");
    assert_eq!(browser.status().await, "Live");
    browser.close().await;
}

/// A bridge with deltas whose every word the test chooses: it records what
/// each socket sends and sends what the test broadcasts.
struct FakeBridge {
    addr: SocketAddr,
    /// (socket number, text) of every frame the page sent.
    received: Arc<Mutex<Vec<(usize, String)>>>,
    send: broadcast::Sender<String>,
    /// Bumping it closes every open socket.
    kick: watch::Sender<u32>,
}

impl FakeBridge {
    async fn start() -> FakeBridge {
        let listener = TcpListener::bind("127.0.0.1:0")
            .await
            .expect("bind the fake bridge");
        let addr = listener.local_addr().expect("the fake's address");
        let received = Arc::new(Mutex::new(Vec::new()));
        let (send, _) = broadcast::channel(64);
        let (kick, _) = watch::channel(0);
        let (rec, tx, kicked) = (Arc::clone(&received), send.clone(), kick.subscribe());
        tokio::spawn(async move {
            let mut socket = 0;
            while let Ok((stream, _)) = listener.accept().await {
                let (rec, mut out, mut kicked) = (Arc::clone(&rec), tx.subscribe(), kicked.clone());
                let id = socket;
                socket += 1;
                tokio::spawn(async move {
                    let Ok(mut ws) = tokio_tungstenite::accept_async(stream).await else {
                        return;
                    };
                    kicked.borrow_and_update();
                    loop {
                        tokio::select! {
                            frame = ws.next() => match frame {
                                Some(Ok(Message::Text(t))) => rec
                                    .lock()
                                    .unwrap_or_else(|e| e.into_inner())
                                    .push((id, t.to_string())),
                                Some(Ok(_)) => {}
                                _ => break,
                            },
                            text = out.recv() => match text {
                                Ok(text) => if ws.send(Message::text(text)).await.is_err() { break },
                                Err(_) => break,
                            },
                            _ = kicked.changed() => {
                                let _ = ws.close(None).await;
                                break;
                            }
                        }
                    }
                });
            }
        });
        FakeBridge {
            addr,
            received,
            send,
            kick,
        }
    }

    fn url(&self) -> String {
        format!("ws://{}/ws", self.addr)
    }

    /// The `bridgeSubscribe` contents the page sent, with their socket.
    fn subscribes(&self) -> Vec<(usize, Value)> {
        self.received
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .iter()
            .filter_map(|(id, t)| {
                let v: Value = serde_json::from_str(t).ok()?;
                (v["command"] == "bridgeSubscribe").then(|| (*id, v["content"].clone()))
            })
            .collect()
    }

    /// Waits for subscribe number `n` (from 0) and returns it.
    async fn wait_subscribe(&self, n: usize) -> (usize, Value) {
        wait_for(&format!("subscribe #{n}"), PAGE_READY, || async {
            let s = self.subscribes();
            s.get(n).cloned().ok_or_else(|| format!("{s:?}"))
        })
        .await
    }

    fn push(&self, text: Value) {
        // No receiver (no socket open) is the test's own mistake.
        self.send.send(text.to_string()).expect("a socket is open");
    }
}

fn keyed(id: u64, name: &str, current: u32) -> Value {
    json!({"id": id, "name": name, "address": "192.0.2.1", "port": 20000 + id,
           "players": {"current": current, "max": 4}, "isLobbyOpen": true, "gameplayMode": 1})
}

fn delta(seq: u64, prev: u64, upsert: Vec<Value>, remove: Vec<u64>) -> Value {
    json!({"command": "bridgeDelta",
           "content": {"epoch": "e1", "seq": seq, "prev": prev, "upsert": upsert, "remove": remove}})
}

#[tokio::test]
async fn a_delta_that_does_not_apply_makes_the_page_resubscribe() {
    let _serial = e2e::serial().await;
    // The product only serves the page; the socket goes to the fake.
    let lobby = Lobby::start();
    let fake = FakeBridge::start().await;
    let driver = Driver::start();
    let browser = driver.browser().await;
    browser
        .goto(&lobby.url(&format!("/?bridge={}", fake.url())))
        .await;

    // Without a list the page asks for deltas from scratch.
    let (socket, first) = fake.wait_subscribe(0).await;
    assert_eq!(first, json!({"deltas": true}));
    fake.push(
        json!({"command": "bridgeSnapshot", "content": {"epoch": "e1", "seq": 1,
        "servers": [keyed(1, "Alpha", 1), keyed(2, "Bravo", 2)]}}),
    );
    browser.wait_rows(&["Alpha", "Bravo"], PAGE_READY).await;
    browser.wait_live(PAGE_READY).await;
    fake.push(delta(2, 1, vec![keyed(2, "Bravo", 3)], vec![]));
    browser
        .wait_text(
            "[data-testid=server-row][data-name=\"Bravo\"]",
            "3/4",
            PAGE_READY,
        )
        .await;

    // A gap: the page holds list 2, this delta continues list 5.
    fake.push(delta(6, 5, vec![keyed(9, "Zulu", 0)], vec![1]));
    let (again, content) = fake.wait_subscribe(1).await;
    assert_eq!(again, socket, "resubscribed on the same socket");
    assert_eq!(content, json!({"deltas": true, "epoch": "e1", "since": 2}));
    // Nothing of the bad delta was shown.
    holds_for("the list as it was", Duration::from_millis(500), || async {
        let rows = browser.rows().await;
        (rows == ["Alpha", "Bravo"])
            .then_some(())
            .ok_or(format!("{rows:?}"))
    })
    .await;

    // What the bridge then sends applies.
    fake.push(delta(3, 2, vec![keyed(3, "Charlie", 0)], vec![1]));
    browser.wait_rows(&["Bravo", "Charlie"], PAGE_READY).await;

    // An unknown id: the same.
    fake.push(delta(4, 3, vec![], vec![77]));
    let (_, content) = fake.wait_subscribe(2).await;
    assert_eq!(content, json!({"deltas": true, "epoch": "e1", "since": 3}));
    assert_eq!(browser.rows().await, ["Bravo", "Charlie"]);
    // Another epoch (another bridge's delta): the same.
    fake.push(
        json!({"command": "bridgeDelta", "content": {"epoch": "e2", "seq": 4, "prev": 3,
        "upsert": [keyed(5, "Echo", 0)], "remove": []}}),
    );
    let (_, content) = fake.wait_subscribe(3).await;
    assert_eq!(content, json!({"deltas": true, "epoch": "e1", "since": 3}));
    assert_eq!(browser.rows().await, ["Bravo", "Charlie"]);

    // A reconnect resubscribes with what the page holds, and a snapshot
    // (the bridge restarted: another epoch) replaces the list.
    fake.kick.send_modify(|n| *n += 1);
    let (new_socket, content) = fake.wait_subscribe(4).await;
    assert_ne!(new_socket, socket, "a new socket");
    assert_eq!(content, json!({"deltas": true, "epoch": "e1", "since": 3}));
    assert_eq!(browser.rows().await, ["Bravo", "Charlie"]);
    fake.push(
        json!({"command": "bridgeSnapshot", "content": {"epoch": "e2", "seq": 1,
        "servers": [keyed(1, "Delta", 1)]}}),
    );
    browser.wait_rows(&["Delta"], PAGE_READY).await;
    fake.push(
        json!({"command": "bridgeDelta", "content": {"epoch": "e2", "seq": 2, "prev": 1,
        "upsert": [keyed(2, "Foxtrot", 0)], "remove": []}}),
    );
    browser.wait_rows(&["Delta", "Foxtrot"], PAGE_READY).await;
    assert_eq!(fake.subscribes().len(), 5, "{:?}", fake.subscribes());
    browser.close().await;
}
