//! The front end's polling fallback end to end: the real bridge only serves
//! the page, which is pointed (`?bridge=`) at a fake bridge in this test
//! that never pushes and answers only `msQueryGameServers`. The page must
//! wait out its grace period, then poll every 2 s, show what the polls
//! return without a reload, start over on a new socket after a drop, and
//! stop polling once a push arrives after all.
//!
//! Holds [`e2e::serial`] like the other browser tests. Screenshots go to
//! `target/e2e-screenshots/`.

use std::{
    net::SocketAddr,
    sync::{Arc, Mutex, MutexGuard},
    time::{Duration, Instant},
};

use e2e::{
    browser::{Browser, Driver, PAGE_READY},
    holds_for,
    lobby::Lobby,
    wait_for,
};
use futures_util::{SinkExt, StreamExt};
use serde_json::{json, Value};
use tokio::{net::TcpListener, runtime::Runtime, sync::watch};
use tokio_tungstenite::tungstenite::{
    handshake::server::{Request, Response},
    Message,
};

/// The front end's `PUSH_GRACE_MS`: no list this long after opening, so poll.
const PUSH_GRACE: Duration = Duration::from_millis(3000);
/// The front end's `POLL_EVERY_MS`.
const POLL_EVERY: Duration = Duration::from_millis(2000);
/// The earliest a first query may come after the fake accepted the socket:
/// the grace period, less a margin for clocks and the handshake.
const EARLIEST_FIRST_QUERY: Duration = Duration::from_millis(2500);
/// No two queries may come closer than this (the page must not flood).
const MIN_GAP: Duration = Duration::from_millis(1500);
/// Nor further apart than this (the page must not stall).
const MAX_GAP: Duration = Duration::from_millis(5000);
/// A change of the fake's list reaches the rows within this (one poll
/// interval, the page's 250 ms timer tick and rendering).
const POLL_CHANGE: Duration = Duration::from_secs(5);
/// Reconnecting takes a backoff of up to 2.5 s per refused attempt, then
/// the grace period again.
const RECOVERY: Duration = Duration::from_secs(20);

/// One WebSocket the page opened, as the fake saw it.
#[derive(Debug, Clone)]
struct Conn {
    /// When the TCP connection was accepted (before the handshake).
    accepted: Instant,
    /// When the WebSocket handshake completed.
    opened: Option<Instant>,
    /// The request path of the upgrade.
    path: String,
    /// When each `bridgeSubscribe` arrived.
    subscribes: Vec<Instant>,
    /// When each `msQueryGameServers` arrived.
    queries: Vec<Instant>,
    /// Any other text frame, verbatim.
    other: Vec<String>,
}

#[derive(Default)]
struct Shared {
    /// The `servers` every reply lists.
    servers: Mutex<Vec<Value>>,
    /// Every socket that completed or attempted a handshake, in order.
    conns: Mutex<Vec<Conn>>,
    /// While false, connections are accepted and dropped at once (a bridge
    /// that is down, without making the page wait for a timeout).
    accepting: Mutex<bool>,
    /// Connections dropped while not accepting.
    refused: Mutex<u32>,
}

fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|e| e.into_inner())
}

impl Shared {
    fn update(&self, id: usize, f: impl FnOnce(&mut Conn)) {
        if let Some(c) = lock(&self.conns).get_mut(id) {
            f(c);
        }
    }

    fn reply(&self) -> String {
        json!({
            "command": "msRQueryGameServers",
            "content": {"servers": *lock(&self.servers)}
        })
        .to_string()
    }
}

/// A bridge that never pushes: it ignores `bridgeSubscribe` and everything
/// else, and answers each `msQueryGameServers` with the current list. Runs
/// on its own runtime so its timestamps do not wait for the test's task.
struct FakeBridge {
    addr: SocketAddr,
    shared: Arc<Shared>,
    /// Bumping it closes every open socket (close frame, then drop).
    kick: watch::Sender<u32>,
    /// Bumping it sends every open socket the list unasked (a push).
    push: watch::Sender<u32>,
    runtime: Option<Runtime>,
}

impl FakeBridge {
    fn start(servers: Vec<Value>) -> FakeBridge {
        let listener = std::net::TcpListener::bind("127.0.0.1:0").expect("bind the fake bridge");
        listener.set_nonblocking(true).expect("non-blocking");
        let addr = listener.local_addr().expect("the fake's address");
        let shared = Arc::new(Shared {
            servers: Mutex::new(servers),
            accepting: Mutex::new(true),
            ..Shared::default()
        });
        let (kick, kicked) = watch::channel(0);
        let (push, pushed) = watch::channel(0);
        let runtime = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(1)
            .enable_all()
            .build()
            .expect("the fake bridge's runtime");
        runtime.spawn(accept_loop(listener, Arc::clone(&shared), kicked, pushed));
        FakeBridge {
            addr,
            shared,
            kick,
            push,
            runtime: Some(runtime),
        }
    }

    /// The `?bridge=` value that points the page here.
    fn url(&self) -> String {
        format!("ws://{}/ws", self.addr)
    }

    fn set_servers(&self, servers: Vec<Value>) {
        *lock(&self.shared.servers) = servers;
    }

    fn conns(&self) -> Vec<Conn> {
        lock(&self.shared.conns).clone()
    }

    /// Connection `id` once it has completed its handshake.
    fn opened(&self, id: usize) -> Option<Conn> {
        self.conns()
            .into_iter()
            .nth(id)
            .filter(|c| c.opened.is_some())
    }

    fn queries(&self, id: usize) -> Vec<Instant> {
        self.conns()
            .get(id)
            .map(|c| c.queries.clone())
            .unwrap_or_default()
    }

    fn set_accepting(&self, on: bool) {
        *lock(&self.shared.accepting) = on;
    }

    fn refused(&self) -> u32 {
        *lock(&self.shared.refused)
    }

    /// Closes every open socket, like a bridge going away.
    fn close_all(&self) {
        self.kick.send_modify(|n| *n += 1);
    }

    /// Pushes the current list to every open socket, like a bridge whose
    /// pushes work after all.
    fn push_all(&self) {
        self.push.send_modify(|n| *n += 1);
    }
}

impl Drop for FakeBridge {
    fn drop(&mut self) {
        if let Some(rt) = self.runtime.take() {
            // Allowed inside the test's async context, unlike a plain drop.
            rt.shutdown_background();
        }
    }
}

async fn accept_loop(
    listener: std::net::TcpListener,
    shared: Arc<Shared>,
    kicked: watch::Receiver<u32>,
    pushed: watch::Receiver<u32>,
) {
    let Ok(listener) = TcpListener::from_std(listener) else {
        return;
    };
    loop {
        let Ok((stream, _)) = listener.accept().await else {
            tokio::time::sleep(Duration::from_millis(10)).await;
            continue;
        };
        let accepted = Instant::now();
        if !*lock(&shared.accepting) {
            *lock(&shared.refused) += 1;
            drop(stream);
            continue;
        }
        let id = {
            let mut conns = lock(&shared.conns);
            conns.push(Conn {
                accepted,
                opened: None,
                path: String::new(),
                subscribes: Vec::new(),
                queries: Vec::new(),
                other: Vec::new(),
            });
            conns.len() - 1
        };
        tokio::spawn(connection(
            stream,
            id,
            Arc::clone(&shared),
            kicked.clone(),
            pushed.clone(),
        ));
    }
}

async fn connection(
    stream: tokio::net::TcpStream,
    id: usize,
    shared: Arc<Shared>,
    mut kicked: watch::Receiver<u32>,
    mut pushed: watch::Receiver<u32>,
) {
    let mut path = String::new();
    // The callback's `Result` (and its large error) is tungstenite's signature.
    #[allow(clippy::result_large_err)]
    let handshake = tokio_tungstenite::accept_hdr_async(stream, |req: &Request, resp: Response| {
        path = req.uri().path().to_owned();
        Ok(resp)
    })
    .await;
    let Ok(mut ws) = handshake else { return };
    shared.update(id, |c| {
        c.opened = Some(Instant::now());
        c.path = path;
    });
    kicked.borrow_and_update();
    pushed.borrow_and_update();
    loop {
        tokio::select! {
            frame = ws.next() => {
                let at = Instant::now();
                let text = match frame {
                    Some(Ok(Message::Text(text))) => text,
                    Some(Ok(_)) => continue,
                    Some(Err(_)) | None => break,
                };
                let command = serde_json::from_str::<Value>(&text)
                    .ok()
                    .and_then(|v| v.get("command")?.as_str().map(str::to_owned));
                match command.as_deref() {
                    Some("msQueryGameServers") => {
                        shared.update(id, |c| c.queries.push(at));
                        if ws.send(Message::text(shared.reply())).await.is_err() {
                            break;
                        }
                    }
                    Some("bridgeSubscribe") => shared.update(id, |c| c.subscribes.push(at)),
                    _ => shared.update(id, |c| c.other.push(text.to_string())),
                }
            }
            _ = kicked.changed() => {
                let _ = ws.close(None).await;
                break;
            }
            _ = pushed.changed() => {
                if ws.send(Message::text(shared.reply())).await.is_err() {
                    break;
                }
            }
        }
    }
}

/// A server as `msRQueryGameServers` lists it.
fn server(name: &str, port: u16, current: u32) -> Value {
    json!({
        "name": name,
        "address": "192.0.2.1",
        "port": port,
        "players": {"current": current, "max": 4},
        "isLobbyOpen": true,
        "gameplayMode": 1
    })
}

/// The gaps between consecutive instants.
fn gaps(at: &[Instant]) -> Vec<Duration> {
    at.windows(2).map(|w| w[1] - w[0]).collect()
}

/// Waits until the pill says exactly `text`.
async fn wait_status(browser: &Browser, text: &str, timeout: Duration) {
    wait_for(
        &format!("the status pill to say {text:?}"),
        timeout,
        || async move {
            let s = browser.status().await;
            if s == text {
                Ok(())
            } else {
                Err(s)
            }
        },
    )
    .await
}

/// Checks the page during connection `id`'s grace period: as long as the
/// fake has answered no query on it, the page can have no list from it and
/// must not claim to be live. Probes at least once, then until
/// [`EARLIEST_FIRST_QUERY`] after the accept. Returns how many probes found
/// no query yet (and so checked something).
async fn quiet_during_grace(
    browser: &Browser,
    fake: &FakeBridge,
    id: usize,
    rows_before: &[&str],
) -> u32 {
    let accepted = fake.conns()[id].accepted;
    let mut checked = 0;
    loop {
        // The page first, then the fake: a reply can only follow a query,
        // so if none has come by now the page saw no list from this socket.
        let status = browser.status().await;
        let rows = browser.rows().await;
        if fake.queries(id).is_empty() {
            checked += 1;
            assert_eq!(
                status,
                "Connecting…",
                "the pill before any list on socket {id}, {:?} after the accept",
                accepted.elapsed()
            );
            assert_eq!(rows, rows_before, "rows before any list on socket {id}");
        }
        if accepted.elapsed() >= EARLIEST_FIRST_QUERY {
            return checked;
        }
        tokio::time::sleep(e2e::POLL_EVERY).await;
    }
}

/// Waits for connection `id`'s first query and checks it came after the
/// grace period; returns it.
async fn first_query_after_grace(fake: &FakeBridge, id: usize) -> Instant {
    let first = wait_for(
        &format!("the first msQueryGameServers on socket {id}"),
        PUSH_GRACE + PAGE_READY,
        || async {
            fake.queries(id)
                .first()
                .copied()
                .ok_or_else(|| format!("{:?}", fake.conns().get(id)))
        },
    )
    .await;
    let conn = &fake.conns()[id];
    let since_accept = first - conn.accepted;
    let since_open = conn.opened.map(|o| first - o);
    eprintln!(
        "socket {id}: first query {since_accept:?} after the accept ({since_open:?} after the handshake)"
    );
    assert!(
        since_accept >= EARLIEST_FIRST_QUERY,
        "socket {id} polled {since_accept:?} after the accept, before the {PUSH_GRACE:?} grace period"
    );
    first
}

#[tokio::test]
async fn page_polls_a_bridge_that_never_pushes() {
    let _serial = e2e::serial().await;
    // The product only serves the page here; its own bridge stays unused.
    let lobby = Lobby::start();
    let fake = FakeBridge::start(vec![server("Alpha", 20001, 1), server("Bravo", 20002, 2)]);
    let driver = Driver::start();
    let browser = driver.browser().await;
    browser
        .goto(&lobby.url(&format!("/?bridge={}", fake.url())))
        .await;

    // The page subscribes on the fake's socket and gets nothing back.
    let conn = wait_for("the page to subscribe", PAGE_READY, || async {
        match fake.opened(0) {
            Some(c) if !c.subscribes.is_empty() => Ok(c),
            seen => Err(format!("{seen:?}")),
        }
    })
    .await;
    assert_eq!(conn.path, "/ws");

    // No list and no polling during the grace period.
    let checked = quiet_during_grace(&browser, &fake, 0, &[]).await;
    assert!(checked > 0, "the grace period was never observed");
    eprintln!("socket 0: {checked} probes in the grace period saw no query, no list, Connecting…");
    let first = first_query_after_grace(&fake, 0).await;

    // Then the polls' list is shown, marked as polled.
    wait_status(&browser, "Live (polling)", PAGE_READY).await;
    browser.wait_rows(&["Alpha", "Bravo"], POLL_CHANGE).await;
    eprintln!("live (polling) {:?} after the first query", first.elapsed());
    browser.screenshot("polling-live").await;

    // A change at the fake shows up with a later poll, without a reload.
    browser.mark_document().await;
    let changed = Instant::now();
    fake.set_servers(vec![
        server("Alpha", 20001, 3),
        server("Bravo", 20002, 2),
        server("Charlie", 20003, 0),
    ]);
    browser
        .wait_rows(&["Alpha", "Bravo", "Charlie"], POLL_CHANGE)
        .await;
    eprintln!("the change was shown {:?} later", changed.elapsed());
    browser
        .wait_text(
            "[data-testid=server-row][data-name=\"Alpha\"]",
            "3/4",
            POLL_CHANGE,
        )
        .await;
    assert!(browser.same_document().await, "the page reloaded");
    assert_eq!(browser.status().await, "Live (polling)");

    // The polls keep coming, about every 2 s: neither a flood nor a stop.
    let queries = wait_for("five queries", 4 * MAX_GAP, || async {
        let q = fake.queries(0);
        if q.len() >= 5 {
            Ok(q)
        } else {
            Err(format!("{} queries, gaps {:?}", q.len(), gaps(&q)))
        }
    })
    .await;
    let gaps = gaps(&queries);
    eprintln!("gaps between queries: {gaps:?} (the page polls every {POLL_EVERY:?})");
    assert!(
        gaps.iter().all(|g| *g >= MIN_GAP),
        "queries closer than {MIN_GAP:?}: {gaps:?}"
    );
    assert!(
        gaps.iter().all(|g| *g <= MAX_GAP),
        "polling stalled for more than {MAX_GAP:?}: {gaps:?}"
    );
    // Nothing else was sent: one subscribe, no other frames, one socket.
    let conns = fake.conns();
    assert_eq!(conns.len(), 1, "sockets opened: {conns:?}");
    assert_eq!(conns[0].subscribes.len(), 1, "{:?}", conns[0]);
    assert!(
        conns[0].other.is_empty(),
        "unexpected frames: {:?}",
        conns[0].other
    );

    // The fake goes away: the page says so, keeps the last list, and
    // retries on its own.
    fake.set_accepting(false);
    fake.close_all();
    let status = wait_for("the page to notice the drop", POLL_CHANGE, || async {
        let s = browser.status().await;
        if s.starts_with("Reconnecting") {
            Ok(s)
        } else {
            Err(s)
        }
    })
    .await;
    eprintln!("after the drop the pill says {status:?}");
    assert_eq!(browser.rows().await, ["Alpha", "Bravo", "Charlie"]);
    browser
        .wait_text(
            "[data-testid=stale]",
            "connection to the lobby was lost",
            POLL_CHANGE,
        )
        .await;
    wait_for("a refused attempt", RECOVERY, || async {
        match fake.refused() {
            0 => Err("none yet".to_owned()),
            n => Ok(n),
        }
    })
    .await;

    // Back with another list: a new socket, the grace period again (the
    // old rows stay meanwhile), then polling again.
    fake.set_servers(vec![server("Bravo", 20002, 2), server("Delta", 20004, 4)]);
    let back = Instant::now();
    fake.set_accepting(true);
    wait_for("the page to subscribe again", RECOVERY, || async {
        match fake.opened(1) {
            Some(c) if !c.subscribes.is_empty() => Ok(()),
            seen => Err(format!("{seen:?}")),
        }
    })
    .await;
    quiet_during_grace(&browser, &fake, 1, &["Alpha", "Bravo", "Charlie"]).await;
    first_query_after_grace(&fake, 1).await;
    wait_status(&browser, "Live (polling)", PAGE_READY).await;
    browser.wait_rows(&["Bravo", "Delta"], POLL_CHANGE).await;
    eprintln!(
        "live (polling) again {:?} after the fake came back ({} attempts refused)",
        back.elapsed(),
        fake.refused()
    );
    assert!(browser.same_document().await, "the page reloaded");
    let conns = fake.conns();
    assert_eq!(conns.len(), 2, "sockets opened: {conns:?}");
    assert_eq!(conns[1].subscribes.len(), 1, "{:?}", conns[1]);
    assert!(
        conns[1].other.is_empty(),
        "unexpected frames: {:?}",
        conns[1].other
    );
    browser.screenshot("polling-reconnected").await;

    // Pushes work after all: a list nobody asked for ends polling, and the
    // page shows it.
    fake.set_servers(vec![server("Echo", 20005, 1)]);
    let pushed_at = Instant::now();
    fake.push_all();
    wait_status(&browser, "Live", POLL_CHANGE).await;
    browser.wait_rows(&["Echo"], POLL_CHANGE).await;
    // A query already on its way when the push went out may still come;
    // more than that over four poll intervals means polling went on.
    holds_for("no more polling after a push", POLL_EVERY * 4, || async {
        let after: Vec<Instant> = fake
            .queries(1)
            .into_iter()
            .filter(|&t| t > pushed_at)
            .collect();
        if after.len() <= 1 {
            Ok(())
        } else {
            Err(format!("{} queries after the push", after.len()))
        }
    })
    .await;
    assert_eq!(browser.status().await, "Live");
    browser.close().await;
}
