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
    net::SocketAddr,
    time::{Duration, Instant},
};

use e2e::{
    browser::{Browser, Driver},
    fake_bridge::FakeBridge,
    game::{GameServer, Stats},
    master::{listed, query_master},
    pages::{list::row, ListPage},
    process::http_get,
    product::Product,
    until,
};
use serde_json::{json, Value};

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

/// Every row on the page with the same four cells; none while the table
/// is still drawing its rows (`aria-busy`).
async fn page_rows(browser: &Browser) -> Vec<[String; 4]> {
    let v = browser
        .js(
            "if (document.querySelector('table[aria-busy=true]')) return null;\
             return Array.from(document.querySelectorAll('[data-testid=server-row]')).map(r => [\
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
async fn wait_equal(browser: &Browser, product: &Product, what: &str) -> usize {
    until(what, || async move {
        let mut rows = page_rows(browser).await;
        rows.sort();
        let mut expected: Vec<[String; 4]> = query_master(product.master)?
            .iter()
            .map(expected_row)
            .collect();
        expected.sort();
        if rows == expected {
            Ok(rows.len())
        } else {
            let missing: Vec<_> = expected.iter().filter(|e| !rows.contains(e)).collect();
            let extra: Vec<_> = rows.iter().filter(|r| !expected.contains(r)).collect();
            let bridge = match bridge_rows(product.http) {
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

/// The lobby's game servers under random change: registrations (new
/// servers, and ones that left coming back with a new id), disconnects and
/// stats updates, drawn from one seed.
struct Churn {
    rng: Lcg,
    master: SocketAddr,
    names: usize,
    /// Live servers by name.
    live: BTreeMap<String, (u16, GameServer)>,
    /// The names of those that left, to re-register.
    gone: Vec<(String, u16)>,
    /// Registrations, disconnects, stats updates.
    counts: [usize; 3],
}

impl Churn {
    /// `n` servers registered at `master`.
    fn start(master: SocketAddr, seed: u64, n: usize) -> Churn {
        let mut churn = Churn {
            rng: Lcg(seed),
            master,
            names: 0,
            live: BTreeMap::new(),
            gone: Vec::new(),
            counts: [0; 3],
        };
        for _ in 0..n {
            let (name, port, stats) = churn.fresh();
            churn.register(name, port, stats);
        }
        churn
    }

    /// A name and port never used, and stats for it.
    fn fresh(&mut self) -> (String, u16, Stats) {
        self.names += 1;
        let name = format!("Srv-{:04}", self.names);
        let port = 20000 + self.names as u16;
        (name, port, self.rng.stats())
    }

    fn register(&mut self, name: String, port: u16, stats: Stats) {
        let server = GameServer::register(self.master, &name, "192.0.2.7", port, stats);
        self.live.insert(name, (port, server));
    }

    /// One random change.
    fn change(&mut self) {
        match self.rng.next(10) {
            // Register a new server, or one that left again (a new id).
            0..=1 if self.live.len() < MAX_SERVERS => {
                let (name, port) = match (self.rng.next(2), self.gone.is_empty()) {
                    (0, false) => {
                        let i = self.rng.next(self.gone.len());
                        self.gone.swap_remove(i)
                    }
                    _ => {
                        let (name, port, _) = self.fresh();
                        (name, port)
                    }
                };
                let stats = self.rng.stats();
                self.register(name, port, stats);
                self.counts[0] += 1;
            }
            // Disconnect one.
            2 if self.live.len() > 5 => {
                let i = self.rng.next(self.live.len());
                let Some(name) = self.live.keys().nth(i).cloned() else {
                    return;
                };
                if let Some((port, server)) = self.live.remove(&name) {
                    drop(server);
                    self.gone.push((name, port));
                }
                self.counts[1] += 1;
            }
            // New stats for one.
            _ => {
                let i = self.rng.next(self.live.len());
                let stats = self.rng.stats();
                if let Some((_, (_, server))) = self.live.iter_mut().nth(i) {
                    server.update(stats);
                }
                self.counts[2] += 1;
            }
        }
    }

    /// Changes come faster than the bridge publishes now and then
    /// (coalesced), and slower other times (one delta each).
    async fn pause(&mut self) {
        if self.rng.next(4) == 0 {
            tokio::time::sleep(Duration::from_millis(self.rng.next(30) as u64)).await;
        }
    }
}

#[tokio::test]
async fn page_stays_equal_to_the_master_through_random_changes() {
    let _serial = e2e::serial().await;
    let product = Product::start();
    let mut churn = Churn::start(product.master, 10, 40);

    let driver = Driver::start();
    let browser = driver.browser().await;
    let page = ListPage::open(&browser, &product.url("/")).await;
    let n = wait_equal(&page, &product, "the first list").await;
    eprintln!("first list: {n} rows equal to the master's");
    // The first list came over HTTP, compressed, not on the socket.
    let fetched = page
        .js("return performance.getEntriesByType('resource')\
             .filter(e => e.name.endsWith('/api/servers')).map(e => e.decodedBodySize);")
        .await;
    assert!(
        fetched.as_array().is_some_and(|a| a.len() == 1),
        "the page fetched /api/servers once: {fetched}"
    );
    page.mark_document().await;

    let started = Instant::now();
    let mut checks = 0;
    for change in 1..=CHANGES {
        churn.change();
        churn.pause().await;
        if change % CHECK_EVERY == 0 {
            let what = format!("the page to equal the master after {change} changes");
            let n = wait_equal(&page, &product, &what).await;
            checks += 1;
            eprintln!("after {change} changes: {n} rows equal to the master's");
        }
    }
    let [registrations, disconnects, updates] = churn.counts;
    eprintln!(
        "{CHANGES} changes ({registrations} registrations, {disconnects} disconnects, \
         {updates} stats updates) in {:?}, {checks} checks",
        started.elapsed()
    );
    assert!(page.same_document().await, "the page reloaded");
    // It followed deltas, not polls or whole lists.
    let metrics = page.js("return window.__lobbyMetrics;").await;
    assert_eq!(metrics["lastKind"], "delta", "{metrics}");
    assert_eq!(page.status().await, "Live");
    browser.close().await;
}

/// A server as a snapshot or delta lists it: with its id.
fn keyed(id: u64, name: &str, current: u32) -> Value {
    let mut server = listed(name, 20000 + id as u16, current);
    server["id"] = json!(id);
    server
}

fn delta(seq: u64, prev: u64, upsert: Vec<Value>, remove: Vec<u64>) -> Value {
    json!({"command": "bridgeDelta",
           "content": {"epoch": "e1", "seq": seq, "prev": prev, "upsert": upsert, "remove": remove}})
}

/// A snapshot of list `seq` in `epoch`.
fn snapshot(epoch: &str, seq: u64, servers: Vec<Value>) -> Value {
    json!({"command": "bridgeSnapshot",
           "content": {"epoch": epoch, "seq": seq, "servers": servers}})
}

#[tokio::test]
async fn a_delta_that_does_not_apply_makes_the_page_resubscribe() {
    let _serial = e2e::serial().await;
    // The product only serves the page; the socket goes to the fake.
    let product = Product::start();
    let fake = FakeBridge::start();
    let driver = Driver::start();
    let browser = driver.browser().await;
    let page = ListPage::new(&browser);
    page.goto(&product.url(&format!("/?bridge={}", fake.url())))
        .await;

    // Without a list the page asks for deltas from scratch.
    let (socket, first) = fake.wait_subscribe(0).await;
    assert_eq!(first, json!({"deltas": true}));
    fake.push(&snapshot(
        "e1",
        1,
        vec![keyed(1, "Alpha", 1), keyed(2, "Bravo", 2)],
    ));
    page.wait_rows(&["Alpha", "Bravo"]).await;
    page.wait_live().await;
    fake.push(&delta(2, 1, vec![keyed(2, "Bravo", 3)], vec![]));
    page.wait_text(&row("Bravo"), "3/4").await;

    // A gap: the page holds list 2, this delta continues list 5.
    fake.push(&delta(6, 5, vec![keyed(9, "Zulu", 0)], vec![1]));
    let (again, content) = fake.wait_subscribe(1).await;
    assert_eq!(again, socket, "resubscribed on the same socket");
    assert_eq!(content, json!({"deltas": true, "epoch": "e1", "since": 2}));
    // Nothing of the bad delta was shown: the page has dealt with it (its
    // answer to it, the subscribe, came) and shows the list it held.
    assert_eq!(page.rows().await, ["Alpha", "Bravo"]);

    // What the bridge then sends applies.
    fake.push(&delta(3, 2, vec![keyed(3, "Charlie", 0)], vec![1]));
    page.wait_rows(&["Bravo", "Charlie"]).await;

    // An unknown id: the same.
    fake.push(&delta(4, 3, vec![], vec![77]));
    let (_, content) = fake.wait_subscribe(2).await;
    assert_eq!(content, json!({"deltas": true, "epoch": "e1", "since": 3}));
    assert_eq!(page.rows().await, ["Bravo", "Charlie"]);
    // Another epoch (another bridge's delta): the same.
    fake.push(
        &json!({"command": "bridgeDelta", "content": {"epoch": "e2", "seq": 4, "prev": 3,
        "upsert": [keyed(5, "Echo", 0)], "remove": []}}),
    );
    let (_, content) = fake.wait_subscribe(3).await;
    assert_eq!(content, json!({"deltas": true, "epoch": "e1", "since": 3}));
    assert_eq!(page.rows().await, ["Bravo", "Charlie"]);

    // A reconnect resubscribes with what the page holds, and a snapshot
    // (the bridge restarted: another epoch) replaces the list.
    fake.close_all();
    let (new_socket, content) = fake.wait_subscribe(4).await;
    assert_ne!(new_socket, socket, "a new socket");
    assert_eq!(content, json!({"deltas": true, "epoch": "e1", "since": 3}));
    assert_eq!(page.rows().await, ["Bravo", "Charlie"]);
    fake.push(&snapshot("e2", 1, vec![keyed(1, "Delta", 1)]));
    page.wait_rows(&["Delta"]).await;
    fake.push(
        &json!({"command": "bridgeDelta", "content": {"epoch": "e2", "seq": 2, "prev": 1,
        "upsert": [keyed(2, "Foxtrot", 0)], "remove": []}}),
    );
    page.wait_rows(&["Delta", "Foxtrot"]).await;
    assert_eq!(fake.subscribes().len(), 5, "{:?}", fake.subscribes());
    browser.close().await;
}
