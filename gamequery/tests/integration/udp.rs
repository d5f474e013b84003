//! The async queries against fake A2S and GameAgent servers on 127.0.0.1:
//! seed packets replayed, challenges, split and compressed replies out of
//! order, dropped packets and retries, time-outs, and the concurrency cap.
//! Every wait is bounded.

use std::{
    net::SocketAddr,
    sync::atomic::{AtomicUsize, Ordering},
    time::{Duration, Instant},
};

use gamequery::{
    fake::{self, hex, FakeUdp, GameAgentMaster, GameAgentServer, Options},
    gameagent,
    packet::{self, SplitLayout},
    Client, DecodeError, QueryError, QueryOptions,
};
use tokio::net::UdpSocket;

/// Upper bound for any one test's query.
const BOUND: Duration = Duration::from_secs(10);

/// A fake answering with `handler`, after ignoring the first `drop`
/// requests and waiting `delay` before each reply.
async fn start(
    drop: usize,
    delay: Duration,
    handler: impl Fn(&[u8]) -> Vec<Vec<u8>> + Send + 'static,
) -> FakeUdp {
    let options = Options {
        drop_first: drop,
        delay,
        ..Options::default()
    };
    FakeUdp::start_with(options, handler).await.unwrap()
}

fn client(timeout_ms: u64, retries: u32) -> Client {
    Client::new(QueryOptions {
        timeout: Duration::from_millis(timeout_ms),
        retries,
        layout: None,
        max_in_flight: 8,
        ..QueryOptions::default()
    })
}

async fn bounded<T>(f: impl std::future::Future<Output = T>) -> T {
    tokio::time::timeout(BOUND, f)
        .await
        .expect("test query hung")
}

fn single(reply: &[u8]) -> Vec<u8> {
    let mut p = packet::SINGLE.to_le_bytes().to_vec();
    p.extend_from_slice(reply);
    p
}

/// A modern A2S server (`gamequery::fake`): every request needs the seed's
/// challenge; rules come as `rules` packets.
fn a2s_server(rules: Vec<Vec<u8>>) -> impl Fn(&[u8]) -> Vec<Vec<u8>> + Send + Sync + 'static {
    fake::a2s_handler(rules, Default::default())
}

#[tokio::test]
async fn info_players_rules_with_challenges_and_goldsource_split_reversed() {
    let mut rules = vec![
        hex(include_str!("../fixtures/ru_rules_split_0.hex")),
        hex(include_str!("../fixtures/ru_rules_split_1.hex")),
    ];
    rules.reverse();
    let fake = start(0, Duration::ZERO, a2s_server(rules)).await;
    let c = client(1000, 0);
    let (info, rtt) = bounded(c.a2s_info(fake.addr())).await.unwrap();
    assert_eq!(info.name, "game2xs.com Counter-Strike Source #1");
    assert_eq!(info.players, 5);
    assert!(rtt < BOUND);
    let players = bounded(c.a2s_players(fake.addr(), false)).await.unwrap();
    assert_eq!(players.len(), 2);
    assert_eq!(players[1].name, "Killer !!!");
    let rules = bounded(c.a2s_rules(fake.addr())).await.unwrap();
    assert_eq!(rules.len(), 93);
    // Each query took exactly one challenge round trip.
    assert_eq!(fake.requests(), 6);
}

#[tokio::test]
async fn compressed_source_split_shuffled_with_a_duplicate() {
    let mut parts = packet::split(
        &fake::cs_source_rules(),
        0x51,
        SplitLayout::Source,
        400,
        true,
    );
    assert!(parts.len() >= 2);
    parts.swap(0, 1);
    let dup = parts[0].clone();
    parts.push(dup);
    let fake = start(0, Duration::ZERO, a2s_server(parts)).await;
    let rules = bounded(client(1000, 0).a2s_rules(fake.addr()))
        .await
        .unwrap();
    assert_eq!(rules.len(), 93);
    assert_eq!(rules.last().unwrap().name, "sv_waterfriction");
}

#[tokio::test]
async fn uncompressed_source_split_without_size_field() {
    let parts = packet::split(
        &fake::cs_source_rules(),
        9,
        SplitLayout::SourceNoSize,
        500,
        false,
    );
    let fake = start(0, Duration::ZERO, a2s_server(parts)).await;
    let rules = bounded(client(1000, 0).a2s_rules(fake.addr()))
        .await
        .unwrap();
    assert_eq!(rules.len(), 93);
}

#[tokio::test]
async fn a_lost_packet_of_a_split_reply_is_retried() {
    // The first rules reply loses its second packet; the retry gets both.
    let parts = packet::split(&fake::cs_source_rules(), 3, SplitLayout::Source, 600, false);
    let sent = AtomicUsize::new(0);
    let inner = a2s_server(parts);
    let handler = move |req: &[u8]| {
        let mut out = inner(req);
        if out.len() > 1 && sent.fetch_add(1, Ordering::SeqCst) == 0 {
            out.remove(1);
        }
        out
    };
    let fake = start(0, Duration::ZERO, handler).await;
    let rules = bounded(client(300, 1).a2s_rules(fake.addr()))
        .await
        .unwrap();
    assert_eq!(rules.len(), 93);
}

#[tokio::test]
async fn old_server_without_challenge_and_goldsource_m_reply() {
    let gold = hex(include_str!("../fixtures/ru_goldsource_info.hex"));
    let fake = start(0, Duration::ZERO, move |_: &[u8]| vec![gold.clone()]).await;
    let (info, _) = bounded(client(1000, 0).a2s_info(fake.addr()))
        .await
        .unwrap();
    assert_eq!(info.address.as_deref(), Some("77.111.194.110:27015"));
    assert_eq!(fake.requests(), 1);
}

#[tokio::test]
async fn dropped_requests_are_retried_then_time_out() {
    let fake = start(2, Duration::ZERO, a2s_server(vec![])).await;
    let (info, _) = bounded(client(150, 2).a2s_info(fake.addr())).await.unwrap();
    assert_eq!(info.map, "de_dust");
    // Two dropped, then the challenge and the real request.
    assert_eq!(fake.requests(), 4);

    let silent = start(usize::MAX, Duration::ZERO, a2s_server(vec![])).await;
    let started = Instant::now();
    let err = bounded(client(100, 2).a2s_info(silent.addr()))
        .await
        .unwrap_err();
    assert!(
        matches!(err, QueryError::Timeout { attempts: 3, .. }),
        "{err}"
    );
    assert_eq!(silent.requests(), 3);
    assert!(started.elapsed() < Duration::from_secs(2));
}

#[tokio::test]
async fn nobody_listening_fails_fast() {
    let socket = UdpSocket::bind("127.0.0.1:0").await.unwrap();
    let addr = socket.local_addr().unwrap();
    drop(socket);
    let err = bounded(client(2000, 1).a2s_info(addr)).await.unwrap_err();
    assert!(
        matches!(err, QueryError::Io { .. } | QueryError::Timeout { .. }),
        "{err}"
    );
}

#[tokio::test]
async fn bad_crc_is_a_decode_error() {
    let mut parts = packet::split(
        &fake::cs_source_rules(),
        0x77,
        SplitLayout::Source,
        400,
        true,
    );
    parts[0][16] ^= 0xFF;
    let fake = start(0, Duration::ZERO, a2s_server(parts)).await;
    let err = bounded(client(300, 1).a2s_rules(fake.addr()))
        .await
        .unwrap_err();
    assert!(
        matches!(
            err,
            QueryError::Decode {
                source: DecodeError::CrcMismatch { .. },
                ..
            }
        ),
        "{err}"
    );
}

#[tokio::test]
async fn endless_challenges_are_refused() {
    let fake = start(0, Duration::ZERO, |_: &[u8]| {
        vec![single(b"A\x01\x02\x03\x04")]
    })
    .await;
    let err = bounded(client(500, 0).a2s_info(fake.addr()))
        .await
        .unwrap_err();
    assert!(matches!(err, QueryError::ChallengeLoop(_)), "{err}");
}

#[tokio::test]
async fn concurrency_cap_holds() {
    let info = hex(include_str!("../fixtures/ru_sin1_info.hex"));
    let fake = start(0, Duration::from_millis(80), move |_: &[u8]| {
        vec![info.clone()]
    })
    .await;
    let c = Client::new(QueryOptions {
        timeout: Duration::from_secs(2),
        retries: 0,
        layout: None,
        max_in_flight: 2,
        ..QueryOptions::default()
    });
    let started = Instant::now();
    let tasks: Vec<_> = (0..6)
        .map(|_| {
            let c = c.clone();
            let addr = fake.addr();
            tokio::spawn(async move { c.a2s_info(addr).await })
        })
        .collect();
    for t in tasks {
        let (info, _) = bounded(t).await.unwrap().unwrap();
        assert_eq!(info.name, "Sensemann SiN DM");
    }
    assert_eq!(fake.max_outstanding(), 2);
    assert!(started.elapsed() >= Duration::from_millis(240));
}

// ---- GameAgent ------------------------------------------------------------

fn ga_players() -> Vec<gameagent::Player> {
    (0..30)
        .map(|i| gameagent::Player {
            index: i,
            name: if i == 7 {
                None
            } else {
                Some(format!("Serious Player Number {i}"))
            },
            frags: i as i32,
            ping: 10 + i,
        })
        .collect()
}

fn ga_status(name: &str) -> gameagent::Status {
    gameagent::Status {
        players: 30,
        max_players: 32,
        level: "Yodeller".into(),
        game_type: "Fragmatch".into(),
        version: "1.10".into(),
        game_name: "serioussamse".into(),
        session_name: name.into(),
        keys: vec![],
    }
}

#[tokio::test]
async fn gameagent_master_status_players_ping() {
    // Player replies of 400 bytes: several packets, the last one sent
    // before a middle one.
    assert!(gameagent::encode_players(30, &ga_players(), 400).len() >= 3);
    let server = GameAgentServer::start_with(ga_status("Awesome; Server"), ga_players(), 400)
        .await
        .unwrap();
    let game_port = server.game_addr().port();
    let master = GameAgentMaster::start(vec![server.game_addr()])
        .await
        .unwrap();
    let c = client(1000, 0);
    let servers = bounded(c.gameagent_master(master.addr())).await.unwrap();
    assert_eq!(
        servers,
        vec![format!("127.0.0.1:{game_port}").parse().unwrap()]
    );
    let query: SocketAddr = format!("127.0.0.1:{}", gameagent::query_port(game_port))
        .parse()
        .unwrap();
    assert_eq!(query, server.addr());
    let (status, _) = bounded(c.gameagent_status(query)).await.unwrap();
    assert_eq!(status.session_name, "Awesome; Server");
    assert_eq!((status.players, status.max_players), (30, 32));
    let players = bounded(c.gameagent_players(query)).await.unwrap();
    assert_eq!(players, ga_players());
    let (count, _) = bounded(c.gameagent_ping(query)).await.unwrap();
    assert_eq!(count, 30);
}

#[tokio::test]
async fn gameagent_players_with_a_lost_middle_packet_settle() {
    // The count says 30 but a middle packet never comes: after the first
    // and last packets, the reply settles with what arrived.
    let handler = |_: &[u8]| {
        let mut packets = gameagent::encode_players(30, &ga_players(), 400);
        packets.remove(1);
        packets
    };
    let fake = start(0, Duration::ZERO, handler).await;
    let started = Instant::now();
    let players = bounded(client(2000, 0).gameagent_players(fake.addr()))
        .await
        .unwrap();
    assert!(!players.is_empty() && players.len() < 30);
    assert!(started.elapsed() < Duration::from_secs(1));
}

#[tokio::test]
async fn gameagent_garbage_is_a_decode_error() {
    let fake = start(0, Duration::ZERO, |_: &[u8]| vec![b"hello".to_vec()]).await;
    let c = client(300, 0);
    assert!(matches!(
        bounded(c.gameagent_master(fake.addr())).await,
        Err(QueryError::Decode { .. })
    ));
    assert!(matches!(
        bounded(c.gameagent_status(fake.addr())).await,
        Err(QueryError::Decode { .. })
    ));
    assert!(matches!(
        bounded(c.gameagent_players(fake.addr())).await,
        Err(QueryError::Decode { .. })
    ));
}
