//! `bridgeGameServers`: the bridge queries fake A2S and GameAgent servers on
//! 127.0.0.1 over UDP and pushes what they say to subscribers, once on
//! subscribe and again on change; nothing of it unless configured. A
//! hostile GameAgent master cannot aim the queries at loopback or the LAN,
//! repeat servers, list without limit or stall a round, and errors keep
//! addresses from viewers when they are hidden.

mod common;

use std::{
    net::{Ipv4Addr, SocketAddr, SocketAddrV4},
    time::{Duration, Instant},
};

use common::*;
use gamequery::{
    fake::{self, A2sServer, GameAgentMaster, GameAgentServer},
    gameagent,
};
use protocol::bridge::{GameServers, GameSource, GameSourceKind, GamesMessage};
use serde_json::Value;
use tokio::net::UdpSocket;

/// A GameAgent master listing one server, and that server's query port.
async fn gameagent() -> (GameAgentMaster, GameAgentServer) {
    let status = gameagent::Status {
        players: 2,
        max_players: 16,
        level: "Yodeller".into(),
        game_type: "Fragmatch".into(),
        version: "1.10".into(),
        game_name: "serioussamse".into(),
        session_name: "Awesome; Server".into(),
        keys: vec![],
    };
    let players = vec![
        gameagent::Player {
            index: 0,
            name: Some("Angelo".into()),
            frags: 14,
            ping: 80,
        },
        gameagent::Player {
            index: 3,
            name: None,
            frags: 1,
            ping: 20,
        },
    ];
    let server = GameAgentServer::start(status, players).await.unwrap();
    let master = GameAgentMaster::start(vec![server.game_addr()])
        .await
        .unwrap();
    (master, server)
}

fn is_games(v: &Value) -> bool {
    v["command"] == "bridgeGameServers"
}

fn parse(v: &Value) -> GameServers {
    match serde_json::from_value::<GamesMessage>(v.clone()).unwrap() {
        GamesMessage::GameServers(g) => g,
    }
}

#[tokio::test]
async fn subscribers_get_game_servers_and_their_changes() {
    let master = TestMaster::start().await;
    let a2s = A2sServer::start().await.unwrap();
    let (ga_master, ga_server) = gameagent().await;
    // A closed port: listed as offline with a reason.
    let closed = UdpSocket::bind("127.0.0.1:0").await.unwrap();
    let closed_addr = closed.local_addr().unwrap();
    drop(closed);

    let mut config = test_config(master.addr);
    config.a2s = vec![a2s.addr().to_string(), closed_addr.to_string()];
    config.gameagent_masters = vec![ga_master.addr().to_string()];
    // The fakes are on loopback, which a master may only list in tests.
    config.game_allow_private = true;
    config.game_poll_interval = Duration::from_millis(100);
    config.game_query_timeout = Duration::from_millis(300);
    config.game_query_retries = 0;
    let bridge = TestBridge::start(config).await;

    let mut ws = bridge.connect().await;
    send(&mut ws, r#"{"command":"bridgeSubscribe"}"#).await;
    let games = parse(&recv_until(&mut ws, is_games).await);
    assert_eq!(games.sources.len(), 3);

    let a = &games.sources[0];
    assert_eq!(a.kind, GameSourceKind::A2s);
    assert_eq!(a.label, a2s.addr().to_string());
    let s = &a.servers[0];
    assert!(s.online, "{s:?}");
    assert_eq!(s.name, "game2xs.com Counter-Strike Source #1");
    assert_eq!(s.map, "de_dust");
    assert_eq!(s.game, "Counter-Strike: Source");
    assert_eq!((s.players, s.max_players, s.bots), (5, 16, 4));
    assert_eq!(s.address.as_deref(), Some("127.0.0.1"));
    assert_eq!(s.port, Some(a2s.addr().port()));
    assert_eq!(s.player_list.len(), 2);
    assert_eq!(s.player_list[0].name, "[D]---->T.N.W<----");
    assert_eq!(s.player_list[0].score, 14);
    assert_eq!(s.player_list[0].time_secs, Some(514));
    assert_eq!(s.rules.len(), 93);

    let offline = &games.sources[1].servers[0];
    assert!(!offline.online);
    assert!(offline.error.is_some());

    let g = &games.sources[2];
    assert_eq!(g.kind, GameSourceKind::GameAgent);
    assert_eq!(g.error, None);
    let s = &g.servers[0];
    assert!(s.online, "{s:?}");
    assert_eq!(s.name, "Awesome; Server");
    assert_eq!(s.map, "Yodeller");
    assert_eq!(s.mode, "Fragmatch");
    assert_eq!(s.port, Some(ga_server.addr().port() - 1));
    assert_eq!((s.players, s.max_players), (2, 16));
    assert_eq!(s.player_list.len(), 2);
    assert_eq!(s.player_list[0].name, "Angelo");
    assert_eq!(s.player_list[0].ping_ms, Some(80));
    assert_eq!(s.player_list[1].name, "");
    assert!(s
        .rules
        .iter()
        .any(|r| r.name == "gamename" && r.value == "serioussamse"));

    // A change on the server reaches the subscriber.
    a2s.set_alternate_map(true);
    recv_until(&mut ws, |v| {
        is_games(v) && v["content"]["sources"][0]["servers"][0]["map"] == fake::ALTERNATE_MAP
    })
    .await;

    // A second subscriber gets the current state at once.
    let mut late = bridge.connect().await;
    send(&mut late, r#"{"command":"bridgeSubscribe"}"#).await;
    let now = parse(&recv_until(&mut late, is_games).await);
    assert_eq!(now.sources[0].servers[0].map, fake::ALTERNATE_MAP);

    bridge.shutdown().await;
    master.shutdown().await;
}

/// The Ship's seed packets (info, then players with deaths and money),
/// behind the usual challenge round trip; no rules.
async fn the_ship() -> fake::FakeUdp {
    let info = fake::hex(include_str!(
        "../../gamequery/tests/fixtures/ru_the_ship_info.hex"
    ));
    let players = fake::hex(include_str!(
        "../../gamequery/tests/fixtures/ru_the_ship_players.hex"
    ));
    let challenge = fake::CHALLENGE.to_le_bytes();
    fake::FakeUdp::start(move |req| {
        let challenged = req.len() == 9 && req[5..] == challenge;
        match (req.get(4), challenged) {
            (Some(b'T'), _) => vec![info.clone()],
            (Some(b'U'), true) => vec![players.clone()],
            (Some(b'V'), true) => vec![b"\xFF\xFF\xFF\xFFE\x00\x00".to_vec()],
            (Some(b'U' | b'V'), false) => {
                let mut reply = b"\xFF\xFF\xFF\xFFA".to_vec();
                reply.extend_from_slice(&challenge);
                vec![reply]
            }
            _ => vec![],
        }
    })
    .await
    .unwrap()
}

#[tokio::test]
async fn the_ship_players_carry_deaths_and_money() {
    let master = TestMaster::start().await;
    let ship = the_ship().await;
    let expected = gamequery::a2s::decode_players(
        &fake::hex(include_str!(
            "../../gamequery/tests/fixtures/ru_the_ship_players.hex"
        ))[4..],
        true,
    )
    .unwrap();
    assert!(expected.iter().any(|p| p.money.is_some_and(|m| m != 0)));
    let mut config = test_config(master.addr);
    config.a2s = vec![ship.addr().to_string()];
    config.game_poll_interval = Duration::from_millis(100);
    let bridge = TestBridge::start(config).await;
    let mut ws = bridge.connect().await;
    send(&mut ws, r#"{"command":"bridgeSubscribe"}"#).await;
    let games = parse(&recv_until(&mut ws, is_games).await);
    let s = &games.sources[0].servers[0];
    assert!(s.online, "{s:?}");
    assert_eq!(s.game, "The Ship");
    let got: Vec<_> = s
        .player_list
        .iter()
        .map(|p| (p.name.as_str(), p.score, p.deaths, p.money))
        .collect();
    let want: Vec<_> = expected
        .iter()
        .map(|p| (p.name.as_str(), i64::from(p.score), p.deaths, p.money))
        .collect();
    assert_eq!(got, want);
    bridge.shutdown().await;
    master.shutdown().await;
}

#[tokio::test]
async fn hidden_addresses_stay_hidden() {
    let master = TestMaster::start().await;
    let a2s = A2sServer::start().await.unwrap();
    let mut config = test_config(master.addr);
    config.a2s = vec![a2s.addr().to_string()];
    config.hide_addresses = true;
    config.game_poll_interval = Duration::from_millis(100);
    let bridge = TestBridge::start(config).await;
    let mut ws = bridge.connect().await;
    send(&mut ws, r#"{"command":"bridgeSubscribe"}"#).await;
    let games = parse(&recv_until(&mut ws, is_games).await);
    let s = &games.sources[0].servers[0];
    assert!(s.online);
    assert_eq!((s.address.as_deref(), s.port), (None, None));
    // Admins see them.
    let mut admin = bridge.admin().await;
    send(&mut admin, r#"{"command":"bridgeSubscribe"}"#).await;
    let games = parse(&recv_until(&mut admin, is_games).await);
    assert_eq!(games.sources[0].servers[0].port, Some(a2s.addr().port()));
    bridge.shutdown().await;
    master.shutdown().await;
}

#[tokio::test]
async fn off_unless_configured() {
    let master = TestMaster::start().await;
    let bridge = TestBridge::with_master(&master).await;
    let mut ws = bridge.connect().await;
    send(&mut ws, r#"{"command":"bridgeSubscribe"}"#).await;
    let first = recv_until(&mut ws, is_list).await;
    assert!(is_list(&first));
    // Nothing else arrives: no bridgeGameServers.
    let more = tokio::time::timeout(Duration::from_millis(500), recv_json(&mut ws)).await;
    assert!(more.is_err(), "unexpected {more:?}");
    bridge.shutdown().await;
    master.shutdown().await;
}

/// A status for fake GameAgent servers named `name`.
fn status(name: &str) -> gameagent::Status {
    gameagent::Status {
        players: 1,
        max_players: 8,
        level: "Karnak".into(),
        game_type: "Cooperative".into(),
        version: "1.10".into(),
        game_name: "serioussamse".into(),
        session_name: name.into(),
        keys: vec![],
    }
}

/// The first `bridgeGameServers` a new subscriber gets.
async fn first_games(bridge: &TestBridge) -> GameServers {
    let mut ws = bridge.connect().await;
    send(&mut ws, r#"{"command":"bridgeSubscribe"}"#).await;
    parse(&recv_until(&mut ws, is_games).await)
}

fn names(source: &GameSource) -> Vec<&str> {
    source.servers.iter().map(|s| s.name.as_str()).collect()
}

/// A master lists the bridge's own loopback (two addresses, one of them
/// twice) and ports 0 and 65535; without `game_allow_private` none of it is
/// queried (the fakes received nothing by the time the round was pushed)
/// and the source says why, without an address.
#[tokio::test]
async fn hostile_master_cannot_aim_queries_at_loopback() {
    let master = TestMaster::start().await;
    let (ga_master, ga_server) = gameagent().await;
    let second = fake::FakeUdp::start_with(
        fake::Options {
            bind: SocketAddr::from((Ipv4Addr::new(127, 0, 0, 2), 0)),
            ..fake::Options::default()
        },
        |_| Vec::new(),
    )
    .await
    .unwrap();
    let second_game = match second.addr() {
        SocketAddr::V4(a) => SocketAddrV4::new(*a.ip(), a.port() - 1),
        SocketAddr::V6(_) => unreachable!("bound on IPv4"),
    };
    ga_master.set_servers(vec![
        ga_server.game_addr(),
        second_game,
        ga_server.game_addr(),
        SocketAddrV4::new(Ipv4Addr::LOCALHOST, 0),
        SocketAddrV4::new(Ipv4Addr::LOCALHOST, u16::MAX),
    ]);
    let mut config = test_config(master.addr);
    config.gameagent_masters = vec![ga_master.addr().to_string()];
    config.game_poll_interval = Duration::from_millis(100);
    assert!(!config.game_allow_private, "off by default");
    let bridge = TestBridge::start(config).await;

    let games = first_games(&bridge).await;
    let source = &games.sources[0];
    assert_eq!(source.servers, vec![], "{source:?}");
    assert_eq!(
        source.note.as_deref(),
        Some(
            "5 listed servers skipped: 3 private or reserved addresses, \
             2 with port 0 or 65535"
        )
    );
    assert_eq!(source.error, None, "skipping is not a failure");
    assert!(ga_master.udp().requests() >= 1, "the master was asked");
    assert_eq!(ga_server.udp().requests(), 0, "127.0.0.1 was queried");
    assert_eq!(second.requests(), 0, "127.0.0.2 was queried");
    bridge.shutdown().await;
    master.shutdown().await;
}

/// With private addresses allowed (a LAN master), a server listed three
/// times is queried once, and ports 0 and 65535 are still skipped.
#[tokio::test]
async fn listed_duplicates_are_queried_once() {
    let master = TestMaster::start().await;
    let (ga_master, ga_server) = gameagent().await;
    let game = ga_server.game_addr();
    ga_master.set_servers(vec![
        game,
        game,
        SocketAddrV4::new(Ipv4Addr::LOCALHOST, u16::MAX),
        game,
    ]);
    let mut config = test_config(master.addr);
    config.gameagent_masters = vec![ga_master.addr().to_string()];
    config.game_allow_private = true;
    config.game_poll_interval = Duration::from_millis(100);
    let bridge = TestBridge::start(config).await;

    let games = first_games(&bridge).await;
    let source = &games.sources[0];
    assert_eq!(names(source), ["Awesome; Server"], "{source:?}");
    assert_eq!(
        source.note.as_deref(),
        Some("3 listed servers skipped: 2 duplicates, 1 with port 0 or 65535")
    );
    bridge.shutdown().await;
    master.shutdown().await;
}

/// `game_max_servers` caps what one master's list contributes: the servers
/// past it are never queried.
#[tokio::test]
async fn records_per_master_are_capped() {
    let master = TestMaster::start().await;
    let mut servers = Vec::new();
    for name in ["One", "Two", "Three"] {
        servers.push(GameAgentServer::start(status(name), vec![]).await.unwrap());
    }
    let ga_master = GameAgentMaster::start(servers.iter().map(|s| s.game_addr()).collect())
        .await
        .unwrap();
    let mut config = test_config(master.addr);
    config.gameagent_masters = vec![ga_master.addr().to_string()];
    config.game_allow_private = true;
    config.game_max_servers = 2;
    config.game_poll_interval = Duration::from_millis(100);
    let bridge = TestBridge::start(config).await;

    let games = first_games(&bridge).await;
    let source = &games.sources[0];
    assert_eq!(names(source), ["One", "Two"], "{source:?}");
    assert_eq!(
        source.note.as_deref(),
        Some("1 listed server skipped: 1 over the limit per master")
    );
    assert!(servers[0].udp().requests() > 0);
    assert_eq!(servers[2].udp().requests(), 0, "the third was queried");
    bridge.shutdown().await;
    master.shutdown().await;
}

/// Under `hide_addresses`, no address or game port reaches a viewer in any
/// text: not in offline servers' errors, not in sources' errors, not in an
/// A2S source's label; admins get them all.
#[tokio::test]
async fn hidden_addresses_stay_out_of_errors() {
    let master = TestMaster::start().await;
    let (ga_master, ga_server) = gameagent().await;
    // A listed server that never answers: offline, "no reply from …".
    let silent = GameAgentServer::start(status("Silent"), vec![])
        .await
        .unwrap();
    silent.set_answering(false);
    ga_master.set_servers(vec![ga_server.game_addr(), silent.game_addr()]);
    // A master that never answers: its source's error.
    let silent_master = GameAgentMaster::start(vec![]).await.unwrap();
    silent_master.set_answering(false);
    // An A2S server that is not there, and one whose name does not parse.
    let closed = UdpSocket::bind("127.0.0.1:0").await.unwrap();
    let closed_addr = closed.local_addr().unwrap();
    drop(closed);
    let mut config = test_config(master.addr);
    config.a2s = vec![closed_addr.to_string(), "127.0.0.1".to_owned()];
    // Masters by name: their label is the operator's, shown to everyone.
    config.gameagent_masters = vec![
        format!("localhost:{}", ga_master.addr().port()),
        format!("localhost:{}", silent_master.addr().port()),
    ];
    config.game_allow_private = true;
    config.hide_addresses = true;
    config.game_poll_interval = Duration::from_millis(100);
    config.game_query_timeout = Duration::from_millis(200);
    config.game_query_retries = 0;
    let bridge = TestBridge::start(config).await;

    let secrets = [
        "127.0.0.1".to_owned(),
        closed_addr.port().to_string(),
        ga_server.game_addr().port().to_string(),
        silent.game_addr().port().to_string(),
    ];
    let mut ws = bridge.connect().await;
    send(&mut ws, r#"{"command":"bridgeSubscribe"}"#).await;
    let viewer = recv_until(&mut ws, is_games).await;
    let text = viewer.to_string();
    for secret in &secrets {
        assert!(!text.contains(secret.as_str()), "{secret} in {text}");
    }
    // The reasons are still there, without the address.
    let games = parse(&viewer);
    let errors: Vec<Option<&str>> = vec![
        games.sources[0].servers[0].error.as_deref(),
        games.sources[1].error.as_deref(),
        games.sources[2]
            .servers
            .iter()
            .find(|s| !s.online)
            .and_then(|s| s.error.as_deref()),
        games.sources[3].error.as_deref(),
    ];
    assert!(errors.iter().all(Option::is_some), "{errors:?}");
    assert_eq!(errors[3], Some("no reply after 1 attempt(s)"));
    assert_eq!(games.sources[0].label, "server 1");

    let mut admin = bridge.admin().await;
    send(&mut admin, r#"{"command":"bridgeSubscribe"}"#).await;
    let full = parse(&recv_until(&mut admin, is_games).await);
    let offline = full.sources[2].servers.iter().find(|s| !s.online).unwrap();
    let reason = offline.error.as_deref().unwrap_or_default();
    assert!(
        reason.contains(&silent.addr().to_string()),
        "admins see where: {reason:?}"
    );
    assert_eq!(full.sources[0].label, closed_addr.to_string());
    bridge.shutdown().await;
    master.shutdown().await;
}

/// Servers that never answer cannot hold a round past its deadline, even
/// with a 30-second query time limit: they are offline, "no answer in
/// time", and the round is pushed.
#[tokio::test]
async fn a_round_ends_by_its_deadline() {
    let master = TestMaster::start().await;
    // Bound and never read: no reply, no ICMP refusal.
    let black_hole = UdpSocket::bind("127.0.0.1:0").await.unwrap();
    let silent = GameAgentServer::start(status("Silent"), vec![])
        .await
        .unwrap();
    silent.set_answering(false);
    let ga_master = GameAgentMaster::start(vec![silent.game_addr()])
        .await
        .unwrap();
    let silent_master = GameAgentMaster::start(vec![]).await.unwrap();
    silent_master.set_answering(false);
    let mut config = test_config(master.addr);
    config.a2s = vec![black_hole.local_addr().unwrap().to_string()];
    config.gameagent_masters = vec![
        ga_master.addr().to_string(),
        silent_master.addr().to_string(),
    ];
    config.game_allow_private = true;
    config.game_poll_interval = Duration::from_millis(100);
    config.game_query_timeout = Duration::from_secs(30);
    config.game_query_retries = 0;
    config.game_refresh_deadline = Duration::from_millis(500);
    let started = Instant::now();
    let bridge = TestBridge::start(config).await;

    let games = first_games(&bridge).await;
    let took = started.elapsed();
    assert!(took < Duration::from_secs(5), "first round took {took:?}");
    let a2s = &games.sources[0].servers[0];
    assert!(!a2s.online);
    assert_eq!(a2s.error.as_deref(), Some("no answer in time"));
    let listed = &games.sources[1].servers[0];
    assert!(!listed.online);
    assert_eq!(listed.error.as_deref(), Some("no answer in time"));
    assert_eq!(games.sources[2].error.as_deref(), Some("no answer in time"));
    bridge.shutdown().await;
    master.shutdown().await;
}
