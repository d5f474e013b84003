//! Delta subscriptions (`docs/protocol.md` §3) and `GET /api/servers`
//! over real sockets: snapshot then deltas, catching up from `since`, the
//! embedded master's push, refusals that name the field, and plain
//! subscribers that notice nothing.

use crate::common;

use std::time::Duration;

use common::*;
use protocol::{
    delta::{ClientList, Delta, DeltaMessage, Snapshot},
    message::Envelope,
    ServerEntry,
};
use tokio::{io::AsyncWriteExt, net::TcpStream};

fn read(text: &str) -> DeltaMessage {
    let env = Envelope::parse(text.as_bytes()).unwrap_or_else(|e| panic!("{e}: {text}"));
    DeltaMessage::from_frame(&env.command, text)
        .unwrap_or_else(|| panic!("not a delta message: {text}"))
        .unwrap_or_else(|e| panic!("{e}: {text}"))
}

async fn recv_delta_message(ws: &mut Ws) -> DeltaMessage {
    loop {
        let text = recv_text(ws).await;
        if text.contains("\"bridgeSnapshot\"") || text.contains("\"bridgeDelta\"") {
            return read(&text);
        }
    }
}

async fn recv_snapshot(ws: &mut Ws) -> Snapshot {
    match recv_delta_message(ws).await {
        DeltaMessage::Snapshot(s) => s,
        other => panic!("expected a snapshot, got {other:?}"),
    }
}

async fn recv_delta(ws: &mut Ws) -> Delta {
    match recv_delta_message(ws).await {
        DeltaMessage::Delta(d) => d,
        other => panic!("expected a delta, got {other:?}"),
    }
}

async fn subscribe_deltas(ws: &mut Ws, resume: Option<(&str, u64)>) {
    let text = match resume {
        None => r#"{"command":"bridgeSubscribe","content":{"deltas":true}}"#.to_owned(),
        Some((epoch, since)) => format!(
            r#"{{"command":"bridgeSubscribe","content":{{"deltas":true,"epoch":"{epoch}","since":{since}}}}}"#
        ),
    };
    send(ws, &text).await;
}

async fn send_stats(game: &mut TcpStream, current: u32) {
    let stats = format!(
        r#"{{"command":"msUpdateGameServerStats","content":{{"players":{{"current":{current},"max":4}},"isLobbyOpen":true,"gameplayMode":1}}}}"#
    );
    game.write_all(format!("{}{stats}\n", stats.len() + 1).as_bytes())
        .await
        .unwrap();
}

/// The master's list as a bridge's viewers see it: without who registered
/// each entry (these tests register 192.168.0.10 from 127.0.0.1, which
/// the master notes as another host's claim).
fn listed(master: &TestMaster) -> Vec<ServerEntry> {
    let mut servers = master.master.registry().snapshot();
    for s in &mut servers {
        s.registrant = None;
    }
    servers
}

/// Applies deltas from `ws` until the list equals the master's.
async fn follow_until_equal(ws: &mut Ws, list: &mut ClientList, master: &TestMaster) {
    tokio::time::timeout(HUNG, async {
        while list.servers() != listed(master) {
            let d = recv_delta(ws).await;
            list.apply(&d).unwrap_or_else(|e| panic!("{e}: {d:?}"));
        }
    })
    .await
    .expect("the page's list never equalled the master's");
}

fn embedded_config(master: &TestMaster) -> bridge::Config {
    let mut config = test_config(master.addr);
    // Polling would hide a missing push: make it never happen in the test.
    config.poll_interval = Duration::from_secs(3600);
    config
}

#[tokio::test]
async fn snapshot_then_deltas_equal_the_masters_list() {
    let master = TestMaster::start().await;
    let bridge = TestBridge::with_master(&master).await;
    let mut ws = bridge.connect().await;
    let _a = game_server(master.addr, "Alpha", 20001).await;
    wait_registered(&master, 1).await;
    subscribe_deltas(&mut ws, None).await;
    // The snapshot is the bridge's newest list (perhaps from before Alpha).
    let mut list = ClientList::from_snapshot(recv_snapshot(&mut ws).await);
    follow_until_equal(&mut ws, &mut list, &master).await;
    assert_eq!(list.servers()[0].name, "Alpha");

    // A registration, a stats change and a disconnect each arrive as a
    // delta naming only what changed.
    let mut b = game_server(master.addr, "Beta", 20002).await;
    let d = recv_delta(&mut ws).await;
    assert_eq!(d.upsert.len(), 1, "{d:?}");
    assert_eq!(d.upsert[0].entry.name, "Beta");
    assert!(d.remove.is_empty());
    list.apply(&d).unwrap();
    send_stats(&mut b, 3).await;
    follow_until_equal(&mut ws, &mut list, &master).await;
    drop(b);
    wait_registered(&master, 1).await;
    follow_until_equal(&mut ws, &mut list, &master).await;
    assert_eq!(list.len(), 1);
    bridge.shutdown().await;
}

#[tokio::test]
async fn resubscribing_gets_the_missing_deltas_or_a_snapshot() {
    let master = TestMaster::start().await;
    let bridge = TestBridge::embedding(&master, embedded_config(&master)).await;
    let mut game = game_server(master.addr, "Gamma", 20003).await;
    wait_registered(&master, 1).await;
    let mut live = bridge.connect().await;
    subscribe_deltas(&mut live, None).await;
    let snapshot = recv_snapshot(&mut live).await;
    let epoch = snapshot.epoch.clone();
    let mut list = ClientList::from_snapshot(snapshot);
    let held = list.clone();

    // Three changes, each seen by the live subscriber before the next.
    for n in 1..=3 {
        send_stats(&mut game, n).await;
        let d = recv_delta(&mut live).await;
        list.apply(&d).unwrap();
    }
    // Inside the ring: exactly the three missing deltas, in order.
    let mut ws = bridge.connect().await;
    subscribe_deltas(&mut ws, Some((&epoch, held.seq()))).await;
    let mut caught_up = held.clone();
    for _ in 0..3 {
        caught_up.apply(&recv_delta(&mut ws).await).unwrap();
    }
    assert_eq!(caught_up, list);
    // Current: one empty delta that confirms it.
    subscribe_deltas(&mut ws, Some((&epoch, list.seq()))).await;
    let confirm = recv_delta(&mut ws).await;
    assert_eq!((confirm.prev, confirm.seq), (list.seq(), list.seq()));
    assert!(confirm.upsert.is_empty() && confirm.remove.is_empty());
    // Another epoch, or a seq ahead of the bridge: a snapshot.
    subscribe_deltas(&mut ws, Some(("another-bridge", list.seq()))).await;
    assert_eq!(recv_snapshot(&mut ws).await.seq, list.seq());
    subscribe_deltas(&mut ws, Some((&epoch, list.seq() + 5))).await;
    assert_eq!(recv_snapshot(&mut ws).await.seq, list.seq());

    // Outside the ring: more changes than it keeps, then a snapshot.
    drop(ws);
    for n in 0..(bridge::live::feed::DELTA_RING as u32 + 2) {
        send_stats(&mut game, 10 + n).await;
        list.apply(&recv_delta(&mut live).await).unwrap();
    }
    let mut ws = bridge.connect().await;
    subscribe_deltas(&mut ws, Some((&epoch, held.seq()))).await;
    let snapshot = recv_snapshot(&mut ws).await;
    assert_eq!(snapshot.seq, list.seq());
    assert_eq!(
        ClientList::from_snapshot(snapshot).servers(),
        list.servers()
    );
    bridge.shutdown().await;
}

#[tokio::test]
async fn embedded_master_pushes_stats_without_a_poll() {
    let master = TestMaster::start().await;
    let bridge = TestBridge::embedding(&master, embedded_config(&master)).await;
    let mut ws = bridge.connect().await;
    subscribe_deltas(&mut ws, None).await;
    let mut list = ClientList::from_snapshot(recv_snapshot(&mut ws).await);
    let mut game = game_server(master.addr, "Delta", 20004).await;
    follow_until_equal(&mut ws, &mut list, &master).await;
    send_stats(&mut game, 4).await;
    let d = recv_delta(&mut ws).await;
    assert_eq!(d.upsert.len(), 1);
    assert_eq!(d.upsert[0].entry.stats.players.current, 4);
    list.apply(&d).unwrap();
    // Pushed, not polled: nobody asked the master for its list.
    assert_eq!(master.queries(), 0);
    // Plain subscribers are served from the same pushes.
    let mut plain = bridge.connect().await;
    send(&mut plain, r#"{"command":"bridgeSubscribe"}"#).await;
    let v = recv_until(&mut plain, is_list).await;
    assert_eq!(v["content"]["servers"][0]["players"]["current"], 4, "{v}");
    bridge.shutdown().await;
}

#[tokio::test]
async fn malformed_subscribes_are_refused_by_field_and_change_nothing() {
    let master = TestMaster::start().await;
    let bridge = TestBridge::with_master(&master).await;
    let mut ws = bridge.connect().await;
    send(&mut ws, r#"{"command":"bridgeSubscribe"}"#).await;
    assert!(is_list(
        &recv_until(&mut ws, |v| v["command"] != "bridgeStatus").await
    ));
    for (content, field) in [
        (r#"{"deltas":"yes"}"#, "`deltas`"),
        (r#"{"deltas":true,"epoch":"e","since":-1}"#, "`since`"),
        (r#"{"deltas":true,"epoch":"e","since":"4"}"#, "`since`"),
        (r#"{"deltas":true,"epoch":7,"since":4}"#, "`epoch`"),
    ] {
        send(
            &mut ws,
            &format!(r#"{{"command":"bridgeSubscribe","content":{content}}}"#),
        )
        .await;
        let v = recv_json(&mut ws).await;
        assert_eq!(v["command"], "bridgeError", "{v}");
        assert_eq!(v["content"]["code"], "invalid-json", "{v}");
        let message = v["content"]["message"].as_str().unwrap();
        assert!(message.contains(field), "{message} should name {field}");
    }
    // Still a plain subscriber: the next change comes as a whole list.
    let _g = game_server(master.addr, "Epsilon", 20005).await;
    let v = recv_until(&mut ws, |v| v["command"] != "bridgeStatus").await;
    assert_eq!(names(&v), ["Epsilon"]);
    bridge.shutdown().await;
}

#[tokio::test]
async fn hidden_addresses_stay_hidden_in_deltas_and_the_api() {
    let master = TestMaster::start().await;
    let mut config = embedded_config(&master);
    config.hide_addresses = true;
    let bridge = TestBridge::embedding(&master, config).await;
    let _g = game_server(master.addr, "Zeta", 20006).await;
    wait_registered(&master, 1).await;
    let mut viewer = bridge.connect().await;
    subscribe_deltas(&mut viewer, None).await;
    // Snapshot and deltas until Zeta shows, none with an address.
    loop {
        let t = recv_text(&mut viewer).await;
        assert!(!t.contains("192.168.0.10"), "{t}");
        if t.contains("Zeta") {
            break;
        }
    }
    let (status, _, body) = http_get(bridge.addr, "/api/servers", "").await;
    assert_eq!(status, 200);
    let body = String::from_utf8(body).unwrap();
    assert!(
        body.contains("Zeta") && !body.contains("192.168.0.10"),
        "{body}"
    );
    // An admin sees them.
    let mut admin = bridge.admin().await;
    subscribe_deltas(&mut admin, None).await;
    let text = loop {
        let t = recv_text(&mut admin).await;
        if t.contains("bridgeSnapshot") {
            break t;
        }
    };
    assert!(
        text.contains("Zeta") && text.contains("192.168.0.10"),
        "{text}"
    );
    bridge.shutdown().await;
}

#[tokio::test]
async fn api_servers_serves_the_snapshot_with_etag_cors_and_compression() {
    let master = TestMaster::start().await;
    let bridge = TestBridge::embedding(&master, embedded_config(&master)).await;
    let mut games = Vec::new();
    for n in 0..200u16 {
        games.push(game_server(master.addr, &format!("Server {n}"), 21000 + n).await);
    }
    wait_registered(&master, 200).await;
    // The published list catches up with the registry.
    let snapshot = until("the API listing all servers", || async {
        let (status, _, body) = http_get(bridge.addr, "/api/servers", "").await;
        if status != 200 {
            return Err(format!("{status}"));
        }
        let v: serde_json::Value = serde_json::from_slice(&body).unwrap();
        match v["servers"].as_array().map(Vec::len) {
            Some(200) => Ok((v, body)),
            listed => Err(format!("{listed:?} servers")),
        }
    })
    .await;
    let (json, raw) = snapshot;
    let servers: Vec<ServerEntry> = serde_json::from_value::<Snapshot>(json.clone())
        .map(|s| s.servers.into_iter().map(|k| k.entry).collect())
        .unwrap();
    assert_eq!(servers, listed(&master));

    let (_, head, _) = http_get(bridge.addr, "/api/servers", "").await;
    let head = head.to_ascii_lowercase();
    assert!(head.contains("access-control-allow-origin: *"), "{head}");
    assert!(head.contains("content-type: application/json"), "{head}");
    let etag = head
        .lines()
        .find_map(|l| l.strip_prefix("etag: "))
        .expect("an etag")
        .to_owned();
    assert_eq!(
        etag,
        format!("\"{}-{}\"", json["epoch"].as_str().unwrap(), json["seq"])
    );
    let (status, _, body) = http_get(
        bridge.addr,
        "/api/servers",
        &format!("If-None-Match: {etag}\r\n"),
    )
    .await;
    assert_eq!(status, 304);
    assert!(body.is_empty());

    for (encoding, decode) in [
        ("br", decode_br as fn(&[u8]) -> Vec<u8>),
        ("gzip", decode_gzip),
    ] {
        let (status, head, body) = http_get(
            bridge.addr,
            "/api/servers",
            &format!("Accept-Encoding: {encoding}\r\n"),
        )
        .await;
        assert_eq!(status, 200);
        assert!(
            head.to_ascii_lowercase()
                .contains(&format!("content-encoding: {encoding}")),
            "{head}"
        );
        assert_eq!(decode(&body), raw);
        assert!(
            body.len() * 4 < raw.len(),
            "{encoding}: {} of {}",
            body.len(),
            raw.len()
        );
    }
    // A change makes a new ETag: the old one no longer matches.
    drop(games.pop());
    wait_registered(&master, 199).await;
    until("the ETag to change", || async {
        let (status, _, _) = http_get(
            bridge.addr,
            "/api/servers",
            &format!("If-None-Match: {etag}\r\n"),
        )
        .await;
        match status {
            200 => Ok(()),
            304 => Err("304"),
            other => panic!("{other} for a conditional GET"),
        }
    })
    .await;
    bridge.shutdown().await;
}

fn decode_br(data: &[u8]) -> Vec<u8> {
    let mut out = Vec::new();
    std::io::Read::read_to_end(&mut brotli::Decompressor::new(data, 4096), &mut out).unwrap();
    out
}

fn decode_gzip(data: &[u8]) -> Vec<u8> {
    let mut out = Vec::new();
    std::io::Read::read_to_end(&mut flate2::read::GzDecoder::new(data), &mut out).unwrap();
    out
}
