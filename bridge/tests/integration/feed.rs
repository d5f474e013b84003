//! A bridge with `--master` following the master's change feed: changes
//! reach its viewers without a poll, an admin's change made through
//! another bridge too, a restarted master's list replaces the old one,
//! and without a feed (none offered, a wrong token, a hung master) the
//! bridge polls as before.

use crate::common;

use std::{net::SocketAddr, sync::atomic::Ordering::Relaxed, time::Duration};

use common::*;
use lobby_testkit::proxy::Proxy;
use master::feed::{FeedConfig, FeedServer, FeedToken};
use protocol::{
    delta::{ClientList, DeltaMessage},
    message::Envelope,
};
use tokio::{io::AsyncWriteExt, net::TcpListener, task::JoinHandle};
use tokio_util::sync::CancellationToken;

/// A master with its change feed, both in this process.
struct FeedMaster {
    master: TestMaster,
    feed: FeedServer,
    feed_addr: SocketAddr,
    stop: CancellationToken,
    task: JoinHandle<()>,
}

impl FeedMaster {
    async fn start(config: FeedConfig) -> Self {
        let master = TestMaster::start().await;
        Self::with_feed_on(master, "127.0.0.1:0".parse().unwrap(), config).await
    }

    async fn with_feed_on(master: TestMaster, at: SocketAddr, config: FeedConfig) -> Self {
        let listener = TcpListener::bind(at).await.unwrap();
        let feed_addr = listener.local_addr().unwrap();
        let feed = FeedServer::new(master.master.registry(), config);
        let stop = CancellationToken::new();
        let (f, s) = (feed.clone(), stop.clone());
        let task = tokio::spawn(async move { f.run(listener, s.cancelled_owned()).await });
        Self {
            master,
            feed,
            feed_addr,
            stop,
            task,
        }
    }

    /// Waits until the feed wrote `n` more heartbeats (over all its
    /// subscribers): `n` per subscriber is at least one heartbeat interval
    /// in which nothing changed, the product's own clock for "a while".
    async fn quiet_for(&self, n: u64) {
        let stats = self.feed.stats();
        let from = stats.heartbeats.load(Relaxed);
        lobby_testkit::wait::until_true("the feed's heartbeats", || {
            stats.heartbeats.load(Relaxed) >= from + n
        })
        .await;
    }

    /// Stops the feed and the master (their connections close).
    async fn shutdown(self) -> (SocketAddr, SocketAddr) {
        let addrs = (self.master.addr, self.feed_addr);
        self.stop.cancel();
        tokio::time::timeout(HUNG, self.task)
            .await
            .unwrap()
            .unwrap();
        self.master.shutdown().await;
        addrs
    }
}

/// A bridge config following `m`'s feed, polling every 100 ms when it
/// polls (so that a poll while the feed is up shows in the counts).
fn feed_config(m: &FeedMaster) -> bridge::Config {
    let mut config = test_config(m.master.addr);
    config.master_feed = Some(m.feed_addr.to_string());
    config.feed_retry_max = Duration::from_millis(200);
    config
}

/// A delta subscriber's list, kept by applying what the bridge sends.
struct Viewer {
    ws: Ws,
    list: Option<ClientList>,
    /// Every list it held, as names (to find duplicates).
    seen: Vec<Vec<String>>,
}

impl Viewer {
    async fn start(bridge: &TestBridge) -> Self {
        Self {
            ws: bridge.subscribe_deltas().await,
            list: None,
            seen: Vec::new(),
        }
    }

    fn names(&self) -> Vec<String> {
        self.list
            .as_ref()
            .map(|l| l.iter().map(|(_, e)| e.name.clone()).collect())
            .unwrap_or_default()
    }

    /// Applies messages until the list's names are `want`.
    async fn until(&mut self, want: &[&str]) {
        self.until_list(&format!("{want:?}"), |l| {
            l.iter()
                .map(|(_, e)| e.name.as_str())
                .eq(want.iter().copied())
        })
        .await;
    }

    /// Applies messages until `pred` holds for the list.
    async fn until_list(&mut self, what: &str, pred: impl Fn(&ClientList) -> bool) {
        let reached = tokio::time::timeout(HUNG, async {
            while !self.list.as_ref().is_some_and(&pred) {
                let text = recv_text(&mut self.ws).await;
                let env = Envelope::parse(text.as_bytes()).unwrap();
                match DeltaMessage::from_frame(&env.command, &text) {
                    Some(Ok(DeltaMessage::Snapshot(s))) => {
                        self.list = Some(ClientList::from_snapshot(s));
                    }
                    Some(Ok(DeltaMessage::Delta(d))) => {
                        self.list.as_mut().unwrap().apply(&d).unwrap();
                    }
                    _ => continue,
                }
                self.seen.push(self.names());
            }
        })
        .await;
        assert!(
            reached.is_ok(),
            "the viewer never listed {what}; it has {:?}",
            self.names()
        );
    }

    /// Lists it held with one name twice.
    fn duplicates(&self) -> Vec<&Vec<String>> {
        self.seen
            .iter()
            .filter(|names| {
                let mut sorted = (*names).clone();
                sorted.sort();
                sorted.dedup();
                sorted.len() != names.len()
            })
            .collect()
    }
}

async fn send_stats(game: &mut tokio::net::TcpStream, current: u32) {
    let stats = format!(
        r#"{{"command":"msUpdateGameServerStats","content":{{"players":{{"current":{current},"max":4}},"isLobbyOpen":true,"gameplayMode":1}}}}"#
    );
    game.write_all(format!("{}{stats}\n", stats.len() + 1).as_bytes())
        .await
        .unwrap();
}

#[tokio::test]
async fn changes_reach_viewers_through_the_feed_without_a_poll() {
    let m = FeedMaster::start(FeedConfig::default()).await;
    let bridge = TestBridge::start(feed_config(&m)).await;
    bridge.wait_feed_up(1).await;
    let mut viewer = Viewer::start(&bridge).await;
    viewer.until(&[]).await;
    // From here on, nothing may ask the master for its list.
    let queries = m.master.queries();
    let bridge_queries = bridge.metrics.master_queries.load(Relaxed);

    let mut game = game_server(m.master.addr, "Alpha", 20001).await;
    viewer.until(&["Alpha"]).await;
    send_stats(&mut game, 3).await;
    viewer
        .until_list("Alpha with 3 players", |l| {
            l.iter().any(|(_, e)| e.stats.players.current == 3)
        })
        .await;
    drop(game);
    viewer.until(&[]).await;
    // Idle for a while: heartbeats only, still no query. Two heartbeats
    // are at least one heartbeat interval (a third of the master timeout,
    // several poll intervals) of a quiet feed.
    m.quiet_for(2).await;
    assert_eq!(
        m.master.queries(),
        queries,
        "the master was asked for its list"
    );
    assert_eq!(bridge.metrics.master_queries.load(Relaxed), bridge_queries);
    assert!(bridge.metrics.master_feed_deltas.load(Relaxed) >= 3);
    assert_eq!(bridge.metrics.master_feed_snapshots.load(Relaxed), 1);
    bridge.shutdown().await;
    m.shutdown().await;
}

#[tokio::test]
async fn an_admins_change_through_one_bridge_reaches_another_bridges_viewers() {
    let m = FeedMaster::start(FeedConfig::default()).await;
    let a = TestBridge::start(feed_config(&m)).await;
    let b = TestBridge::start(feed_config(&m)).await;
    a.wait_feed_up(1).await;
    b.wait_feed_up(1).await;
    let mut viewer = Viewer::start(&b).await;
    viewer.until(&[]).await;
    let b_queries = b.metrics.master_queries.load(Relaxed);

    let mut admin = a.admin().await;
    send(&mut admin, &register_json("Testserver", 20010)).await;
    viewer.until(&["Testserver"]).await;
    // Longer than a few poll intervals: B must not have polled meanwhile.
    m.quiet_for(4).await;
    assert_eq!(
        b.metrics.master_queries.load(Relaxed),
        b_queries,
        "bridge B polled"
    );
    // Gone from B's viewers when the admin's socket closes on A.
    drop(admin);
    viewer.until(&[]).await;
    assert_eq!(m.feed.stats().subscribers.load(Relaxed), 2);
    a.shutdown().await;
    b.shutdown().await;
    m.shutdown().await;
}

#[tokio::test]
async fn an_admins_command_asks_the_master_nothing_while_the_feed_is_followed() {
    let m = FeedMaster::start(FeedConfig::default()).await;
    let bridge = TestBridge::start(feed_config(&m)).await;
    bridge.wait_feed_up(1).await;
    let mut viewer = Viewer::start(&bridge).await;
    viewer.until(&[]).await;
    let queries = m.master.queries();
    let bridge_queries = bridge.metrics.master_queries.load(Relaxed);

    // The admin's commands go over its own master connection; their
    // effect comes back through the feed, not a query after each.
    let mut admin = bridge.admin().await;
    send(&mut admin, &register_json("Testserver", 20010)).await;
    viewer.until(&["Testserver"]).await;
    send(
        &mut admin,
        r#"{"command":"msUpdateGameServerStats","content":{"players":{"current":3,"max":4},"isLobbyOpen":true,"gameplayMode":1}}"#,
    )
    .await;
    viewer
        .until_list("Testserver with 3 players", |l| {
            l.iter().any(|(_, e)| e.stats.players.current == 3)
        })
        .await;
    assert_eq!(
        bridge.metrics.master_queries.load(Relaxed),
        bridge_queries,
        "the bridge queried the master after an admin's command"
    );
    assert_eq!(m.master.queries(), queries, "the master answered a query");
    drop(admin);
    viewer.until(&[]).await;
    bridge.shutdown().await;
    m.shutdown().await;
}

#[tokio::test]
async fn a_polling_bridge_still_refreshes_the_list_after_an_admins_command() {
    let m = FeedMaster::start(FeedConfig::default()).await;
    let mut config = test_config(m.master.addr);
    // No poll within the test after the first: only the refresh after the
    // command can bring the admin's server to the viewer in time.
    config.poll_interval = Duration::from_secs(60);
    let bridge = TestBridge::start(config).await;
    let mut viewer = Viewer::start(&bridge).await;
    viewer.until(&[]).await;
    let bridge_queries = bridge.metrics.master_queries.load(Relaxed);
    let mut admin = bridge.admin().await;
    send(&mut admin, &register_json("Testserver", 20010)).await;
    viewer.until(&["Testserver"]).await;
    assert_eq!(
        bridge.metrics.master_queries.load(Relaxed),
        bridge_queries + 1,
        "one refresh query after the admin's command"
    );
    drop(admin);
    bridge.shutdown().await;
    m.shutdown().await;
}

#[tokio::test]
async fn a_restarted_master_replaces_the_list_with_nothing_twice() {
    let m = FeedMaster::start(FeedConfig::default()).await;
    let config = feed_config(&m);
    let bridge = TestBridge::start(config).await;
    bridge.wait_feed_up(1).await;
    let _a = game_server(m.master.addr, "Alpha", 20001).await;
    let _b = game_server(m.master.addr, "Beta", 20002).await;
    let mut viewer = Viewer::start(&bridge).await;
    viewer.until(&["Alpha", "Beta"]).await;
    assert_eq!(bridge.metrics.master_feed_snapshots.load(Relaxed), 1);

    // The master and its feed stop; the game servers' connections die.
    let (master_addr, feed_addr) = m.shutdown().await;
    bridge.wait_feed_up(0).await;
    let master = TestMaster::start_on(master_addr).await;
    let m = FeedMaster::with_feed_on(master, feed_addr, FeedConfig::default()).await;
    // The game servers come back, in another order.
    let _b = game_server(m.master.addr, "Beta", 20002).await;
    let _a = game_server(m.master.addr, "Alpha", 20001).await;
    wait_registered(&m.master, 2).await;
    bridge.wait_feed_up(1).await;
    viewer.until(&["Beta", "Alpha"]).await;
    assert_eq!(
        bridge.metrics.master_feed_snapshots.load(Relaxed),
        2,
        "one snapshot of the new epoch"
    );
    assert!(viewer.duplicates().is_empty(), "{:?}", viewer.duplicates());
    // Still followed: a change comes without a poll.
    let queries = m.master.queries();
    let _c = game_server(m.master.addr, "Gamma", 20003).await;
    viewer.until(&["Beta", "Alpha", "Gamma"]).await;
    assert_eq!(m.master.queries(), queries);
    bridge.shutdown().await;
    m.shutdown().await;
}

#[tokio::test]
async fn without_a_feed_the_bridge_polls() {
    // A master that offers no feed: nothing listens where the bridge looks.
    let master = TestMaster::start().await;
    let closed = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let nowhere = closed.local_addr().unwrap();
    drop(closed);
    let mut config = test_config(master.addr);
    config.master_feed = Some(nowhere.to_string());
    config.feed_retry_max = Duration::from_millis(200);
    let bridge = TestBridge::start(config).await;
    let mut viewer = Viewer::start(&bridge).await;
    let _g = game_server(master.addr, "Polled", 20001).await;
    viewer.until(&["Polled"]).await;
    let before = master.queries();
    let _h = game_server(master.addr, "Polled too", 20002).await;
    viewer.until(&["Polled", "Polled too"]).await;
    assert!(master.queries() > before, "the bridge polls");
    assert_eq!(bridge.metrics.master_feed_up.load(Relaxed), 0);
    bridge.shutdown().await;
}

#[tokio::test]
async fn a_wrong_token_is_refused_and_the_bridge_polls() {
    let token = FeedToken::new("the-feed-token-0123456789").unwrap();
    let m = FeedMaster::start(FeedConfig {
        token: Some(token),
        ..FeedConfig::default()
    })
    .await;
    let mut config = feed_config(&m);
    config.master_feed_token = Some(FeedToken::new("not-the-feed-token-0123").unwrap());
    let bridge = TestBridge::start(config).await;
    let mut viewer = Viewer::start(&bridge).await;
    let _g = game_server(m.master.addr, "Polled", 20001).await;
    viewer.until(&["Polled"]).await;
    until_true("the bridge retries, and is refused each time", || {
        m.feed.stats().refused.load(Relaxed) >= 2
    })
    .await;
    assert_eq!(bridge.metrics.master_feed_up.load(Relaxed), 0);
    assert_eq!(m.feed.stats().subscribers.load(Relaxed), 0);

    // With the right token it follows the feed.
    let mut config = feed_config(&m);
    config.master_feed_token = Some(FeedToken::new("the-feed-token-0123456789").unwrap());
    let right = TestBridge::start(config).await;
    right.wait_feed_up(1).await;
    bridge.shutdown().await;
    right.shutdown().await;
    m.shutdown().await;
}

/// A feed that sends one snapshot and then nothing, like a master that
/// hung after subscribing (no heartbeat).
async fn hung_feed() -> (SocketAddr, JoinHandle<()>) {
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    let task = tokio::spawn(async move {
        let mut held = Vec::new();
        loop {
            let Ok((mut s, _)) = listener.accept().await else {
                return;
            };
            let snapshot =
                r#"{"command":"bridgeSnapshot","content":{"epoch":"hung","seq":1,"servers":[]}}"#;
            let _ = s
                .write_all(&protocol::frame::frame(snapshot.as_bytes()))
                .await;
            held.push(s);
        }
    });
    (addr, task)
}

#[tokio::test]
async fn a_feed_that_goes_silent_is_left_for_polling() {
    let master = TestMaster::start().await;
    let (feed, task) = hung_feed().await;
    let mut config = test_config(master.addr);
    config.master_feed = Some(feed.to_string());
    config.master_timeout = Duration::from_millis(600);
    config.feed_retry_max = Duration::from_secs(30);
    let bridge = TestBridge::start(config).await;
    // Followed (its snapshot counted: the gauge may already be down again
    // when a loaded machine gets round to looking)...
    until_true("the hung feed's snapshot was taken", || {
        bridge.metrics.master_feed_snapshots.load(Relaxed) > 0
    })
    .await;
    // ...then silent for longer than the master timeout: the feed is lost,
    // the bridge polls (and lists what the real master has).
    bridge.wait_feed_up(0).await;
    let mut viewer = Viewer::start(&bridge).await;
    let _g = game_server(master.addr, "Polled", 20001).await;
    viewer.until(&["Polled"]).await;
    task.abort();
    bridge.shutdown().await;
}

#[tokio::test]
async fn a_reconnect_gets_only_what_it_missed_and_a_cut_delta_is_sent_again() {
    let m = FeedMaster::start(FeedConfig::default()).await;
    let proxy = Proxy::start(m.feed_addr).await;
    let mut config = feed_config(&m);
    config.master_feed = Some(proxy.addr.to_string());
    let bridge = TestBridge::start(config).await;
    bridge.wait_feed_up(1).await;
    let mut viewer = Viewer::start(&bridge).await;
    let mut games = Vec::new();
    for (i, name) in ["a", "b", "c"].iter().enumerate() {
        games.push(game_server(m.master.addr, name, 20001 + i as u16).await);
    }
    viewer.until(&["a", "b", "c"]).await;
    assert_eq!(bridge.metrics.master_feed_snapshots.load(Relaxed), 1);

    // The feed connection is cut and stays cut while the list changes.
    proxy.close();
    bridge.wait_feed_up(0).await;
    games.pop();
    games.push(game_server(m.master.addr, "d", 20004).await);
    until_true("the master lists a, b and d", || {
        m.master
            .master
            .registry()
            .snapshot()
            .iter()
            .map(|e| e.name.as_str())
            .eq(["a", "b", "d"])
    })
    .await;
    let deltas = bridge.metrics.master_feed_deltas.load(Relaxed);
    proxy.reopen();
    bridge.wait_feed_up(1).await;
    viewer.until(&["a", "b", "d"]).await;
    // It continued its list: what it missed, as deltas, no snapshot.
    assert_eq!(bridge.metrics.master_feed_snapshots.load(Relaxed), 1);
    assert!(bridge.metrics.master_feed_deltas.load(Relaxed) > deltas);

    // A delta cut in the middle is not applied half: the bridge
    // reconnects and gets it whole.
    proxy.cut_next_write_midway();
    let mut big = game_server(m.master.addr, &"e".repeat(100), 20005).await;
    send_stats(&mut big, 2).await;
    until_true("a write was cut", || !proxy.midway_cut_pending()).await;
    let want = ["a".to_owned(), "b".into(), "d".into(), "e".repeat(100)];
    viewer
        .until_list("the master's list after the cut", |l| {
            l.iter()
                .map(|(_, e)| e.name.clone())
                .eq(want.iter().cloned())
                && l.iter().any(|(_, e)| e.stats.players.current == 2)
        })
        .await;
    bridge.wait_feed_up(1).await;
    assert!(viewer.duplicates().is_empty(), "{:?}", viewer.duplicates());
    bridge.shutdown().await;
    m.shutdown().await;
}
