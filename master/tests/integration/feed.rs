//! The change feed over TCP: a subscriber is pushed each change as a
//! delta (and never polls), catches up after a reconnect with the deltas it
//! missed, gets a snapshot from another epoch, cannot make the master queue
//! without bound, and is refused without the token.

use crate::common;

use std::{sync::atomic::Ordering::Relaxed, time::Duration};

use common::{start, until_true, Client, TestMaster, HUNG};
use master::feed::{FeedConfig, FeedServer, FeedToken};
use protocol::{
    delta::{ClientList, DeltaMessage, Resume},
    feed::FeedSubscribe,
    message::Envelope,
};
use serde_json::{json, Value};
use tokio::{
    io::{AsyncReadExt, AsyncWriteExt},
    net::TcpListener,
    task::JoinHandle,
    time::timeout,
};
use tokio_util::sync::CancellationToken;

/// A feed server of `master`'s registry on 127.0.0.1:0.
struct TestFeed {
    addr: std::net::SocketAddr,
    feed: FeedServer,
    stop: CancellationToken,
    task: JoinHandle<()>,
}

impl TestFeed {
    async fn start(master: &TestMaster, config: FeedConfig) -> Self {
        Self::start_with_epoch(master, config, "epoch-1").await
    }

    async fn start_with_epoch(master: &TestMaster, config: FeedConfig, epoch: &str) -> Self {
        let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
        let addr = listener.local_addr().unwrap();
        let feed = FeedServer::with_epoch(master.registry.clone(), config, epoch);
        let stop = CancellationToken::new();
        let (f, s) = (feed.clone(), stop.clone());
        let task = tokio::spawn(async move { f.run(listener, s.cancelled_owned()).await });
        Self {
            addr,
            feed,
            stop,
            task,
        }
    }

    async fn shutdown(self) {
        self.stop.cancel();
        timeout(HUNG, self.task).await.unwrap().unwrap();
    }
}

/// A subscriber: the raw client and the list it built from the feed.
struct Subscriber {
    client: Client,
    list: Option<ClientList>,
    snapshots: usize,
    deltas: usize,
}

impl Subscriber {
    async fn subscribe(feed: &TestFeed, sub: FeedSubscribe) -> Self {
        let mut client = Client::connect(feed.addr).await;
        client
            .send_raw(&protocol::frame::frame(sub.to_json().as_bytes()))
            .await;
        Self {
            client,
            list: None,
            snapshots: 0,
            deltas: 0,
        }
    }

    async fn plain(feed: &TestFeed) -> Self {
        Self::subscribe(feed, FeedSubscribe::default()).await
    }

    /// Reads one frame and applies it; returns it (as JSON).
    async fn step(&mut self) -> Value {
        let v = self.client.recv().await;
        let text = v.to_string();
        let env = Envelope::parse(text.as_bytes()).unwrap();
        match DeltaMessage::from_frame(&env.command, &text) {
            Some(Ok(DeltaMessage::Snapshot(s))) => {
                self.snapshots += 1;
                self.list = Some(ClientList::from_snapshot(s));
            }
            Some(Ok(DeltaMessage::Delta(d))) => {
                if !d.upsert.is_empty() || !d.remove.is_empty() {
                    self.deltas += 1;
                }
                self.list
                    .as_mut()
                    .expect("a delta before any snapshot")
                    .apply(&d)
                    .expect("the delta applies");
            }
            other => panic!("not a list message: {v} ({other:?})"),
        }
        v
    }

    /// Reads frames until the list satisfies `pred`.
    async fn until(&mut self, pred: impl Fn(&ClientList) -> bool) {
        timeout(HUNG, async {
            loop {
                if self.list.as_ref().is_some_and(&pred) {
                    return;
                }
                self.step().await;
            }
        })
        .await
        .expect("the feed reached the expected list");
    }

    fn names(&self) -> Vec<String> {
        self.list
            .as_ref()
            .map(|l| l.iter().map(|(_, e)| e.name.clone()).collect())
            .unwrap_or_default()
    }

    fn resume(&self) -> Resume {
        self.list.as_ref().expect("a list").resume()
    }
}

fn has<'a>(names: &'a [&'a str]) -> impl Fn(&ClientList) -> bool + 'a {
    move |l| {
        let got: Vec<&str> = l.iter().map(|(_, e)| e.name.as_str()).collect();
        got == names
    }
}

/// `n` game servers whose entries are large (about 650 bytes: a long
/// name of 3-byte characters and a long hostname), so that a few rounds of
/// stats changes outgrow a socket's buffers.
async fn big_games(master: &TestMaster, n: u16) -> Vec<Client> {
    let host = format!(
        "{}.{}.{}.example",
        "h".repeat(63),
        "o".repeat(63),
        "s".repeat(63)
    );
    let mut games = Vec::new();
    for i in 0..n {
        let mut c = Client::connect(master.addr).await;
        let name = format!("{i:03}{}", "ꙮ".repeat(97));
        c.register_at(&name, &host, 1000 + i).await;
        games.push(c);
    }
    common::eventually(master.addr, |s| s.len() == usize::from(n)).await;
    games
}

/// A raw subscriber with a small receive buffer, so what the master sends
/// it piles up on the master's side of the connection.
async fn small_buffered_subscriber(feed: &TestFeed) -> Client {
    let socket = tokio::net::TcpSocket::new_v4().unwrap();
    socket.set_recv_buffer_size(4096).unwrap();
    let mut stream = socket.connect(feed.addr).await.unwrap();
    stream
        .write_all(&protocol::frame::frame(
            FeedSubscribe::default().to_json().as_bytes(),
        ))
        .await
        .unwrap();
    Client {
        stream,
        buf: Vec::new(),
    }
}

async fn update_stats(c: &mut Client, current: u32) {
    c.send(json!({"command": "msUpdateGameServerStats", "content": {
        "players": {"current": current, "max": 4}, "isLobbyOpen": true, "gameplayMode": 1}}))
        .await;
}

#[tokio::test]
async fn a_registration_its_stats_and_its_end_reach_a_subscriber_without_a_query() {
    let master = start().await;
    let feed = TestFeed::start(&master, FeedConfig::default()).await;
    let mut sub = Subscriber::plain(&feed).await;
    let first = sub.step().await;
    assert_eq!(first["command"], "bridgeSnapshot", "{first}");
    assert_eq!(first["content"]["epoch"], "epoch-1");
    assert!(sub.names().is_empty());

    let mut game = Client::connect(master.addr).await;
    game.register("Feuerland", 20000).await;
    sub.until(has(&["Feuerland"])).await;
    let entry = sub.list.as_ref().unwrap().iter().next().unwrap().1.clone();
    assert_eq!(
        entry.address.as_deref(),
        Some("192.168.0.10"),
        "addresses included"
    );
    update_stats(&mut game, 3).await;
    sub.until(|l| l.iter().any(|(_, e)| e.stats.players.current == 3))
        .await;
    game.send(json!({"command": "msUnregisterGameServer"}))
        .await;
    sub.until(|l| l.is_empty()).await;
    assert_eq!(sub.snapshots, 1, "one snapshot, then deltas only");
    assert_eq!(sub.deltas, 3);
    assert_eq!(
        master.registry.queries_answered(),
        0,
        "the feed never asks the registry for a query reply"
    );
    assert_eq!(feed.feed.stats().subscribers.load(Relaxed), 1);
    feed.shutdown().await;
}

#[tokio::test]
async fn an_idle_subscriber_gets_only_the_heartbeat_it_asked_for() {
    let master = start().await;
    let feed = TestFeed::start(&master, FeedConfig::default()).await;
    let mut sub = Subscriber::subscribe(
        &feed,
        FeedSubscribe {
            heartbeat_ms: Some(300),
            ..FeedSubscribe::default()
        },
    )
    .await;
    sub.step().await;
    let seq = sub.list.as_ref().unwrap().seq();
    // Heartbeats: empty deltas confirming the same list, about every 300 ms.
    let started = tokio::time::Instant::now();
    for _ in 0..3 {
        let beat = sub.step().await;
        assert_eq!(beat["command"], "bridgeDelta");
        assert_eq!(beat["content"]["seq"], seq);
        assert_eq!(beat["content"]["prev"], seq);
    }
    let took = started.elapsed();
    assert!(
        took >= Duration::from_millis(800) && took < Duration::from_secs(3),
        "three heartbeats took {took:?}"
    );
    assert_eq!(master.registry.queries_answered(), 0);
    feed.shutdown().await;
}

#[tokio::test]
async fn a_subscriber_that_reconnects_gets_only_the_deltas_it_missed() {
    let master = start().await;
    let feed = TestFeed::start(&master, FeedConfig::default()).await;
    // A second subscriber stays, to tell when each change was published.
    let mut witness = Subscriber::plain(&feed).await;
    let mut sub = Subscriber::plain(&feed).await;
    sub.step().await;
    witness.step().await;
    let mut game = Client::connect(master.addr).await;
    game.register("a", 1).await;
    sub.until(has(&["a"])).await;
    witness.until(has(&["a"])).await;
    let resume = sub.resume();
    let held = sub.list.take();
    drop(sub);

    // Three changes while it is away, each published on its own.
    let mut others = Vec::new();
    for name in ["b", "c", "d"] {
        let mut c = Client::connect(master.addr).await;
        c.register(name, 2).await;
        others.push(c);
        let want: Vec<String> = witness.names().into_iter().chain([name.into()]).collect();
        witness
            .until(|l| l.iter().map(|(_, e)| e.name.clone()).collect::<Vec<_>>() == want)
            .await;
    }
    let target = witness.list.as_ref().unwrap().seq();
    assert_eq!(target, resume.since + 3, "one delta per change");

    let mut back = Subscriber::subscribe(
        &feed,
        FeedSubscribe {
            resume: Some(resume.clone()),
            ..FeedSubscribe::default()
        },
    )
    .await;
    // It continues its old list: deltas only, exactly the three missed.
    back.list = held;
    for _ in 0..3 {
        let f = back.step().await;
        assert_eq!(f["command"], "bridgeDelta", "{f}");
    }
    assert_eq!(back.snapshots, 0);
    assert_eq!(back.names(), ["a", "b", "c", "d"]);
    assert_eq!(back.list.as_ref().unwrap().seq(), target);

    // Current already: one empty confirmation.
    let mut current = Subscriber::subscribe(
        &feed,
        FeedSubscribe {
            resume: Some(back.resume()),
            ..FeedSubscribe::default()
        },
    )
    .await;
    let f = current.client.recv().await;
    assert_eq!(f["command"], "bridgeDelta");
    assert_eq!(f["content"]["seq"], target);
    assert_eq!(f["content"]["prev"], target);
    assert_eq!(f["content"]["upsert"], json!([]));
    feed.shutdown().await;
}

#[tokio::test]
async fn another_epoch_gets_one_snapshot_and_nothing_twice() {
    let master = start().await;
    let mut game = Client::connect(master.addr).await;
    game.register("a", 1).await;
    common::eventually(master.addr, |s| s.len() == 1).await;
    // The first master's feed numbered the list; a restarted master is a
    // new epoch.
    let old = TestFeed::start_with_epoch(&master, FeedConfig::default(), "old").await;
    let mut sub = Subscriber::plain(&old).await;
    sub.until(has(&["a"])).await;
    let resume = sub.resume();
    old.shutdown().await;

    let new = TestFeed::start_with_epoch(&master, FeedConfig::default(), "new").await;
    let mut back = Subscriber::subscribe(
        &new,
        FeedSubscribe {
            resume: Some(resume),
            ..FeedSubscribe::default()
        },
    )
    .await;
    back.list = sub.list.take();
    let f = back.step().await;
    assert_eq!(f["command"], "bridgeSnapshot", "{f}");
    assert_eq!(f["content"]["epoch"], "new");
    assert_eq!(back.names(), ["a"], "replaced, not added to");
    new.shutdown().await;
}

#[tokio::test]
async fn a_subscriber_that_does_not_read_costs_a_bounded_amount() {
    const ROUNDS: u32 = 150;
    let master = start().await;
    let feed = TestFeed::start(
        &master,
        FeedConfig {
            ring: 8,
            // Longer than the rounds take on a loaded machine: what is
            // measured is what piles up for the subscriber, not the write
            // timeout (tested on its own below).
            write_timeout: Duration::from_secs(60),
            ..FeedConfig::default()
        },
    )
    .await;
    // Each round of stats changes is a delta of about 130 KB.
    let mut games = big_games(&master, 200).await;
    let mut witness = Subscriber::plain(&feed).await;
    witness.until(|l| l.len() == 200).await;
    let mut slow = Subscriber {
        client: small_buffered_subscriber(&feed).await,
        list: None,
        snapshots: 0,
        deltas: 0,
    };

    // The slow one reads nothing while 150 rounds of changes (about 17 MB
    // of deltas) are published: more than the sockets' buffers hold.
    let mut published_bytes = 0usize;
    for round in 1..=ROUNDS {
        for c in &mut games {
            update_stats(c, round).await;
        }
        witness
            .until(|l| l.iter().all(|(_, e)| e.stats.players.current == round))
            .await;
        published_bytes += witness_frame_estimate(&witness);
    }
    // Then it reads: a snapshot (it fell behind more than the ring), not
    // every delta it missed.
    let mut received = 0usize;
    timeout(HUNG, async {
        loop {
            let v = slow.step().await;
            received += v.to_string().len();
            if slow
                .list
                .as_ref()
                .is_some_and(|l| l.iter().all(|(_, e)| e.stats.players.current == ROUNDS))
            {
                break;
            }
        }
    })
    .await
    .expect("the slow subscriber caught up");
    assert!(slow.snapshots >= 2, "caught up with a snapshot");
    eprintln!("the slow subscriber read {received} bytes of {published_bytes} published");
    // What it read is what the kernel buffered (a few MB) plus the
    // snapshot, not everything published.
    assert!(
        received * 2 < published_bytes,
        "it read {received} bytes of {published_bytes} published: queued for it"
    );
    assert_eq!(
        slow.list.as_ref().unwrap().servers(),
        master.registry.snapshot()
    );
    feed.shutdown().await;
}

/// About how many bytes the witness's last delta had (every server changed).
fn witness_frame_estimate(witness: &Subscriber) -> usize {
    witness
        .list
        .as_ref()
        .unwrap()
        .iter()
        .map(|(_, e)| e.name.len() + e.address.as_ref().map_or(0, String::len) + 90)
        .sum()
}

#[tokio::test]
async fn a_subscriber_that_stalls_is_closed_after_the_write_timeout() {
    let master = start().await;
    let feed = TestFeed::start(
        &master,
        FeedConfig {
            write_timeout: Duration::from_millis(300),
            ..FeedConfig::default()
        },
    )
    .await;
    let mut games = big_games(&master, 100).await;
    // A subscriber that never reads.
    let mut stream = small_buffered_subscriber(&feed).await.stream;
    let stats = feed.feed.stats();
    until_true("the subscriber counted", || {
        stats.subscribers.load(Relaxed) > 0
    })
    .await;
    // Changes paced a round every 50 ms (a load, not a wait) until the
    // feed closes the stalled subscriber.
    timeout(HUNG, async {
        let mut round = 0;
        while stats.subscribers.load(Relaxed) > 0 {
            round += 1;
            for c in &mut games {
                update_stats(c, round).await;
            }
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
    })
    .await
    .expect("the stalled subscriber was closed");
    // Its connection is closed: reading drains what was sent, then ends.
    let mut sink = vec![0u8; 1 << 16];
    timeout(HUNG, async {
        loop {
            match stream.read(&mut sink).await {
                Ok(0) | Err(_) => break,
                Ok(_) => {}
            }
        }
    })
    .await
    .expect("closed");
    feed.shutdown().await;
}

#[tokio::test]
async fn a_wrong_or_missing_token_is_refused() {
    let master = start().await;
    let token = FeedToken::new("feed-secret-0123456789").unwrap();
    let feed = TestFeed::start(
        &master,
        FeedConfig {
            token: Some(token),
            ..FeedConfig::default()
        },
    )
    .await;
    for given in [None, Some("feed-secret-0123456788".to_owned())] {
        let mut sub = Subscriber::subscribe(
            &feed,
            FeedSubscribe {
                token: given.clone(),
                ..FeedSubscribe::default()
            },
        )
        .await;
        let refused = sub.client.recv().await;
        assert_eq!(
            refused,
            json!({"command": "feedRefused", "content": {"reason": "token"}}),
            "{given:?}"
        );
        sub.client.closed("after a refusal").await;
    }
    let mut sub = Subscriber::subscribe(
        &feed,
        FeedSubscribe {
            token: Some("feed-secret-0123456789".into()),
            ..FeedSubscribe::default()
        },
    )
    .await;
    assert_eq!(sub.step().await["command"], "bridgeSnapshot");
    assert_eq!(feed.feed.stats().refused.load(Relaxed), 2);
    // Something else than a subscribe (a master client at the wrong port).
    let mut query = Client::connect(feed.addr).await;
    query.send(json!({"command": "msQueryGameServers"})).await;
    assert_eq!(query.recv().await["content"]["reason"], "malformed");
    query.closed("after a malformed subscribe").await;
    feed.shutdown().await;
}

#[tokio::test]
async fn subscribers_beyond_the_cap_are_closed_and_silent_ones_time_out() {
    let master = start().await;
    let feed = TestFeed::start(
        &master,
        FeedConfig {
            max_subscribers: 1,
            first_message_timeout: Duration::from_millis(300),
            ..FeedConfig::default()
        },
    )
    .await;
    let mut one = Subscriber::plain(&feed).await;
    one.step().await;
    let mut two = Subscriber::plain(&feed).await;
    two.client.closed("beyond the cap").await;
    assert_eq!(feed.feed.stats().full.load(Relaxed), 1);
    drop(one);
    // The slot is free again once the first one left; a silent connection
    // holds it only until the first-message timeout.
    until_true("the first subscriber's slot free", || {
        feed.feed.stats().subscribers.load(Relaxed) == 0
    })
    .await;
    let mut silent = Client::connect(feed.addr).await;
    silent.closed("silent").await;
    let mut three = Subscriber::plain(&feed).await;
    assert_eq!(three.step().await["command"], "bridgeSnapshot");
    feed.shutdown().await;
}
