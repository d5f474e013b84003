//! The master's defences over real TCP, with loopback addresses playing
//! different hosts (127.0.0.2 and up route to `lo` on Linux): connection
//! caps, the first-message timeout, the message rate limit, bans and the
//! optional peer-address check. Each test fails when its defence is removed.

use crate::common;

use std::time::Duration;

use common::*;
use master::{BanList, Config};
use protocol::frame::frame;
use serde_json::json;
use tokio::{io::AsyncWriteExt, time::timeout};

#[tokio::test]
async fn one_host_at_the_whole_connection_cap_leaves_room_for_another() {
    let m = start_with(Config {
        max_connections: 8,
        max_per_address: 4,
        ..Config::default()
    })
    .await;
    // 127.0.0.1 tries to take every one of the master's 8 slots.
    let mut held = Vec::new();
    let mut refused = 0;
    for i in 0..8u16 {
        match join("127.0.0.1", m.addr, &format!("flood {i}"), 1000 + i).await {
            Some((c, _)) => held.push(c),
            None => refused += 1,
        }
    }
    assert_eq!(
        (held.len(), refused),
        (4, 4),
        "127.0.0.1 is held to --max-per-address"
    );
    // A game server on another host still gets in and is listed.
    let (_game, servers) = join("127.0.0.2", m.addr, "Feuerland", 20000)
        .await
        .expect("127.0.0.2 is served");
    assert!(names(&servers).contains(&"Feuerland".to_owned()));
    assert_eq!(servers.len(), 5);
    // Those held are still served.
    for c in &mut held {
        assert_eq!(c.query().await.len(), 5);
    }
}

#[tokio::test]
async fn a_full_master_closes_new_connections_at_once_and_frees_slots() {
    let m = start_with(Config {
        max_connections: 2,
        max_per_address: 2,
        ..Config::default()
    })
    .await;
    let first = join("127.0.0.2", m.addr, "a", 1).await.expect("served");
    let _second = join("127.0.0.3", m.addr, "b", 2).await.expect("served");
    // Full: closed, not left hanging in the accept backlog.
    refused("127.0.0.4", m.addr, "a connection beyond --max-connections").await;
    // A slot given back is a slot for the next one.
    drop(first);
    let served = until("a freed slot reused", || async {
        join("127.0.0.4", m.addr, "c", 3).await.ok_or("refused")
    })
    .await;
    assert_eq!(names(&served.1), ["b", "c"]);
}

#[tokio::test]
async fn exempt_networks_pass_the_per_address_cap() {
    let m = start_with(Config {
        max_per_address: 2,
        exempt: vec!["127.0.0.2/32".parse().unwrap()],
        ..Config::default()
    })
    .await;
    let mut provider = Vec::new();
    for i in 0..5u16 {
        let served = join("127.0.0.2", m.addr, &format!("hosted {i}"), 1000 + i).await;
        provider.push(served.expect("every connection of an exempt address is served"));
    }
    let mut other = Vec::new();
    for i in 0..3u16 {
        other.push(join("127.0.0.3", m.addr, &format!("other {i}"), 2000 + i).await);
    }
    assert!(other[0].is_some() && other[1].is_some());
    assert!(other[2].is_none(), "a non-exempt address is still capped");
    assert_eq!(m.registry.len(), 7);
}

#[tokio::test]
async fn an_embedded_master_exempts_its_hosts_own_connections() {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let config = Config {
        max_per_address: 2,
        ..Config::embedded(listener.local_addr().unwrap())
    };
    let m = start_on(listener, config);
    // The embedding bridge: a poller and many admins, all from 127.0.0.1.
    let mut own = Vec::new();
    for i in 0..5u16 {
        let served = join("127.0.0.1", m.addr, &format!("admin {i}"), 1000 + i).await;
        own.push(served.expect("the host's own connections are served"));
    }
    // Everyone else is capped as usual.
    let mut others = Vec::new();
    for i in 0..3u16 {
        others.push(join("127.0.0.2", m.addr, &format!("other {i}"), 2000 + i).await);
    }
    assert_eq!(others.iter().filter(|o| o.is_some()).count(), 2);
}

#[tokio::test]
async fn connections_without_a_valid_message_are_closed_after_the_timeout() {
    let m = start_with(Config {
        first_message_timeout: Duration::from_millis(300),
        ..Config::default()
    })
    .await;
    // Connected first, so its timeout ran out before the others'.
    let mut game = Client::connect_from("127.0.0.2", m.addr).await;
    game.register("stays", 20000).await;
    assert_eq!(names(&game.query().await), ["stays"]);
    let mut silent = Client::connect_from("127.0.0.3", m.addr).await;
    let mut garbage = Client::connect_from("127.0.0.3", m.addr).await;
    garbage.send_raw(b"hello\n").await;
    garbage.send_raw(&frame(br#"{"command":"msFly"}"#)).await;
    silent.closed("a silent connection").await;
    garbage
        .closed("a connection sending only invalid messages")
        .await;
    // A connection that spoke in time is left alone.
    assert_eq!(names(&game.query().await), ["stays"]);
}

#[tokio::test]
async fn messages_over_the_rate_are_discarded() {
    let m = start_with(Config {
        message_rate: 1,
        message_burst: 3,
        flood_close_after: 1000,
        ..Config::default()
    })
    .await;
    let mut c = Client::connect_from("127.0.0.2", m.addr).await;
    let reg = |name: &str| {
        frame(
            json!({"command": "msRegisterGameServer", "content": {
                "serverName": name, "serverAddress": "192.168.0.10", "serverPort": 20000}})
            .to_string()
            .as_bytes(),
        )
    };
    // Three within the burst, then five more at once: those are discarded.
    let mut burst = Vec::new();
    for name in ["r1", "r2", "r3", "x4", "x5", "x6", "x7", "x8"] {
        burst.extend(reg(name));
    }
    c.send_raw(&burst).await;
    // Queries are discarded too until a token comes back (1 a second);
    // the first answered one sees everything before it processed.
    let servers = timeout(HUNG, async {
        loop {
            c.send_raw(&frame(br#"{"command":"msQueryGameServers"}"#))
                .await;
            let answered = timeout(Duration::from_millis(200), c.try_recv()).await;
            if let Ok(reply) = answered {
                let reply = reply.expect("the connection stays open");
                return reply["content"]["servers"].as_array().unwrap().clone();
            }
        }
    })
    .await
    .expect("a query answered once the rate allows");
    assert_eq!(names(&servers), ["r3"]);
}

#[tokio::test]
async fn a_sustained_flood_closes_the_connection() {
    let m = start_with(Config {
        message_rate: 1,
        message_burst: 5,
        flood_close_after: 20,
        ..Config::default()
    })
    .await;
    let mut c = Client::connect_from("127.0.0.2", m.addr).await;
    c.register("flooder", 20000).await;
    // Registrations: no replies, so only the rate limit can end this (a
    // flood of queries would also trip the unread-replies limit).
    let mut flood = Vec::new();
    for i in 0..200 {
        flood.extend(frame(
            json!({"command": "msRegisterGameServer", "content": {
                "serverName": format!("fake {i}"), "serverAddress": "192.168.0.10",
                "serverPort": 20000}})
            .to_string()
            .as_bytes(),
        ));
    }
    // The master may reset the connection while this is still being sent.
    let _ = c.stream.write_all(&flood).await;
    c.closed("a connection flooding messages").await;
    // Closing removed its server.
    let mut other = Client::connect_from("127.0.0.3", m.addr).await;
    assert!(other.query().await.is_empty());
}

#[tokio::test]
async fn a_new_ban_list_closes_banned_peers_and_keeps_the_rest() {
    let m = start().await;
    let mut banned = Client::connect_from("127.0.0.2", m.addr).await;
    banned.register("cheater", 20000).await;
    let mut kept = Client::connect_from("127.0.0.3", m.addr).await;
    kept.register("honest", 20001).await;
    eventually(m.addr, |s| s.len() == 2).await;
    let (bans, bad) = BanList::parse("127.0.0.2 fake servers\n");
    assert!(bad.is_empty());
    assert_eq!(m.master.set_bans(bans), 1);
    banned
        .closed("a connection from a newly banned address")
        .await;
    assert_eq!(names(&kept.query().await), ["honest"]);
    // New connections from the banned address are closed at once.
    refused(
        "127.0.0.2",
        m.addr,
        "a new connection from a banned address",
    )
    .await;
    // Lifting the ban lets it back in.
    m.master.set_bans(BanList::default());
    assert!(join("127.0.0.2", m.addr, "forgiven", 20000).await.is_some());
}

#[tokio::test]
async fn require_peer_address_discards_registrations_for_other_addresses() {
    let m = start_with(Config {
        require_peer_address: true,
        ..Config::default()
    })
    .await;
    let mut c = Client::connect_from("127.0.0.2", m.addr).await;
    c.register_at("elsewhere", "127.0.0.3", 20000).await;
    assert!(c.query().await.is_empty(), "another IP is discarded");
    c.register_at("named", "localhost", 20000).await;
    assert!(c.query().await.is_empty(), "a hostname is discarded");
    c.register_at("mine", "127.0.0.2", 20000).await;
    assert_eq!(names(&c.query().await), ["mine"]);
    // Off (the default), the contract allows any address.
    let open = start_with(Config::default()).await;
    let mut c = Client::connect_from("127.0.0.2", open.addr).await;
    c.register_at("elsewhere", "127.0.0.3", 20000).await;
    assert_eq!(names(&c.query().await), ["elsewhere"]);
}

/// Embedders (the bridge) get an invalid configuration back as an error,
/// as from the bridge's own `run`, not a master that only logged it.
#[tokio::test]
async fn an_invalid_config_does_not_serve() {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let config = Config {
        message_burst: 0,
        ..Config::default()
    };
    let result = timeout(HUNG, master::run(listener, config, std::future::pending()))
        .await
        .expect("run returns at once");
    assert!(result.is_err());
}
