//! `bridgeGameServers`: the bridge queries fake A2S and GameAgent servers on
//! 127.0.0.1 over UDP and pushes what they say to subscribers, once on
//! subscribe and again on change; nothing of it unless configured.

mod common;

use std::time::Duration;

use common::*;
use gamequery::{
    fake::{self, A2sServer, GameAgentMaster, GameAgentServer},
    gameagent,
};
use protocol::bridge::{GameServers, GameSourceKind, GamesMessage};
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
