//! The master over real TCP on 127.0.0.1:0: the specification's examples,
//! registration lifetime, robustness against bad input, and bounded memory.

use crate::common;

use std::time::Duration;

use common::*;
use master::Config;
use protocol::{frame::frame, Addresses, Command, ServerEntry};
use serde_json::{json, Value};
use tokio::{
    io::{AsyncReadExt, AsyncWriteExt},
    net::TcpStream,
    time::timeout,
};

#[tokio::test]
async fn spec_example_exchange_is_byte_exact() {
    let m = start().await;
    let mut c = Client::connect(m.addr).await;
    c.send_raw(b"122{\"command\":\"msRegisterGameServer\",\"content\":{\"serverName\":\"Feuerland\",\"serverAddress\":\"192.168.0.10\",\"serverPort\":20000}}\n").await;
    c.send_raw(b"118{\"command\":\"msUpdateGameServerStats\",\"content\":{\"players\":{\"current\":2,\"max\":4},\"isLobbyOpen\":true,\"gameplayMode\":2}}\n").await;
    c.send_raw(b"33{\"command\":\"msQueryGameServers\"}\n")
        .await;
    let expected = b"185{\"command\":\"msRQueryGameServers\",\"content\":{\"servers\":[{\"name\":\"Feuerland\",\"address\":\"192.168.0.10\",\"port\":20000,\"players\":{\"current\":2,\"max\":4},\"isLobbyOpen\":true,\"gameplayMode\":2}]}}\n";
    let mut got = vec![0u8; expected.len()];
    timeout(HUNG, c.stream.read_exact(&mut got))
        .await
        .unwrap()
        .unwrap();
    assert_eq!(
        String::from_utf8_lossy(&got),
        String::from_utf8_lossy(expected)
    );
}

#[tokio::test]
async fn spec_examples_with_unicode_and_multiline_json() {
    let m = start().await;
    let mut a = Client::connect(m.addr).await;
    // The specification's pretty-printed example, newlines and all.
    let pretty = "{\n  \"command\": \"msRegisterGameServer\",\n  \"content\": {\n    \"serverName\": \"Server von Bösewicht\",\n    \"serverAddress\": \"fd40:9dc7:b528::1\",\n    \"serverPort\": 30000\n  }\n}";
    a.send_raw(&frame(pretty.as_bytes())).await;
    let mut b = Client::connect(m.addr).await;
    b.register("轰炸机人", 40000).await;
    b.send(json!({"command": "msUpdateGameServerStats", "content": {
        "players": {"current": "22", "max": 4}, "isLobbyOpen": false, "gameplayMode": 2}}))
        .await;
    let servers = eventually(m.addr, |s| {
        s.len() == 2 && s.iter().any(|e| e["players"]["current"] == 22)
    })
    .await;
    assert_eq!(names(&servers), ["Server von Bösewicht", "轰炸机人"]);
    assert_eq!(servers[0]["address"], "fd40:9dc7:b528::1");
    assert_eq!(servers[0]["port"], 30000);
    // Digit-string counts are accepted and sent back as integers.
    assert_eq!(servers[1]["players"], json!({"current": 22, "max": 4}));
    assert_eq!(servers[1]["isLobbyOpen"], false);
}

#[tokio::test]
async fn register_defaults_update_overwrite_unregister() {
    let m = start().await;
    let mut c = Client::connect(m.addr).await;
    // Stats before registering are discarded.
    c.send(json!({"command": "msUpdateGameServerStats", "content": {
        "players": {"current": 1, "max": 2}, "isLobbyOpen": false, "gameplayMode": 2}}))
        .await;
    c.register("Feuerland", 20000).await;
    let servers = c.query().await;
    assert_eq!(
        servers,
        vec![
            json!({"name": "Feuerland", "address": "192.168.0.10", "port": 20000,
            "players": {"current": 0, "max": 4}, "isLobbyOpen": true, "gameplayMode": 1})
        ]
    );
    c.send(json!({"command": "msUpdateGameServerStats", "content": {
        "players": {"current": 3, "max": 3}, "isLobbyOpen": false, "gameplayMode": 2}}))
        .await;
    assert_eq!(
        c.query().await[0]["players"],
        json!({"current": 3, "max": 3})
    );
    // A second registration replaces the first and resets its stats.
    c.register("Feuerland II", 20001).await;
    let servers = c.query().await;
    assert_eq!(names(&servers), ["Feuerland II"]);
    assert_eq!(servers[0]["players"], json!({"current": 0, "max": 4}));
    assert_eq!(servers[0]["gameplayMode"], 1);
    // Unregister keeps the connection usable; content on it is ignored.
    c.send(json!({"command": "msUnregisterGameServer", "content": {"x": 1}}))
        .await;
    assert!(c.query().await.is_empty());
    c.register("Back again", 20002).await;
    assert_eq!(names(&c.query().await), ["Back again"]);
}

#[tokio::test]
async fn invalid_messages_are_discarded_and_the_connection_survives() {
    let m = start().await;
    let mut c = Client::connect(m.addr).await;
    c.register("Valid", 20000).await;
    let bad: Vec<Vec<u8>> = vec![
        b"hello\n".to_vec(),
        b"1234567{}\n".to_vec(),
        b"5{\"a\"}\n".to_vec(),
        b"10{\"Hallo\":\"Welt\"}\n".to_vec(),
        frame(b"not json"),
        frame(b"[1,2,3]"),
        frame(br#"{"command":"msFly"}"#),
        frame(br#"{"command":"msRegisterGameServer","content":{"serverName":"","serverAddress":"a.org","serverPort":1}}"#),
        frame(br#"{"command":"msRegisterGameServer","content":{"serverName":"x","serverAddress":"256.1.1.1","serverPort":1}}"#),
        frame(br#"{"command":"msRegisterGameServer","content":{"serverName":"x","serverAddress":"a.org","serverPort":51963}}"#),
        frame(br#"{"command":"msRegisterGameServer","content":{"serverName":"x","serverAddress":"a.org","serverPort":"80"}}"#),
        frame(br#"{"command":"msUpdateGameServerStats","content":{"players":{"current":1,"max":5},"isLobbyOpen":true,"gameplayMode":1}}"#),
        frame(br#"{"command":"msUpdateGameServerStats","content":{"players":{"current":1,"max":4},"isLobbyOpen":true}}"#),
    ];
    for b in &bad {
        c.send_raw(b).await;
    }
    // 100,000 bytes declared: skipped as they arrive, never buffered whole.
    c.send_raw(b"100000").await;
    for _ in 0..25 {
        c.send_raw(&[b'x'; 4000]).await;
    }
    let servers = c.query().await;
    assert_eq!(names(&servers), ["Valid"]);
    assert_eq!(servers[0]["players"], json!({"current": 0, "max": 4}));
}

#[tokio::test]
async fn terminal_users_can_type_bare_json_lines() {
    let m = start().await;
    let mut c = Client::connect(m.addr).await;
    c.send_raw(b"{\"command\":\"msRegisterGameServer\",\"content\":{\"serverName\":\"typed\",\"serverAddress\":\"localhost\",\"serverPort\":7777}}\r\n").await;
    c.send_raw(b"{\"command\":\"msQueryGameServers\"}\n").await;
    let reply = c.recv().await;
    assert_eq!(reply["content"]["servers"][0]["name"], "typed");
}

#[tokio::test]
async fn query_before_half_close_is_still_answered() {
    let m = start().await;
    let mut c = Client::connect(m.addr).await;
    c.send(json!({"command": "msQueryGameServers"})).await;
    c.stream.shutdown().await.unwrap();
    let reply = c.recv().await;
    assert_eq!(reply["content"]["servers"], json!([]));
}

#[tokio::test]
async fn disconnect_removes_the_server_and_garbage_leaves_others_alone() {
    let m = start().await;
    let mut keep = Client::connect(m.addr).await;
    keep.register("stays", 20000).await;
    let mut leaver = Client::connect(m.addr).await;
    leaver.register("leaves", 20001).await;
    eventually(m.addr, |s| s.len() == 2).await;
    // Garbage on a third connection, then it vanishes.
    let mut noisy = Client::connect(m.addr).await;
    noisy.send_raw(b"\x00\xff garbage {{{{\n99999999\n").await;
    drop(noisy);
    drop(leaver);
    let servers = eventually(m.addr, |s| s.len() == 1).await;
    assert_eq!(names(&servers), ["stays"]);
    assert_eq!(names(&keep.query().await), ["stays"]);
}

#[tokio::test]
async fn five_hundred_concurrent_registrations_appear_and_vanish() {
    let m = start().await;
    let mut tasks = Vec::new();
    let (done_tx, _) = tokio::sync::broadcast::channel::<()>(1);
    let (ready_tx, mut ready_rx) = tokio::sync::mpsc::channel::<()>(500);
    for i in 0..500u16 {
        let addr = m.addr;
        let ready = ready_tx.clone();
        let mut done = done_tx.subscribe();
        tasks.push(tokio::spawn(async move {
            let mut c = Client::connect(addr).await;
            c.register(&format!("server {i}"), 1000 + i).await;
            ready.send(()).await.unwrap();
            let _ = done.recv().await;
        }));
    }
    for _ in 0..500 {
        timeout(HUNG, ready_rx.recv()).await.unwrap().unwrap();
    }
    let servers = eventually(m.addr, |s| s.len() == 500).await;
    let mut ports: Vec<u64> = servers
        .iter()
        .map(|s| s["port"].as_u64().unwrap())
        .collect();
    ports.sort_unstable();
    assert_eq!(ports, (1000..1500).collect::<Vec<u64>>());
    done_tx.send(()).unwrap();
    for t in tasks {
        t.await.unwrap();
    }
    eventually(m.addr, <[Value]>::is_empty).await;
    assert!(m.registry.is_empty());
}

#[tokio::test]
async fn a_client_that_never_reads_is_disconnected() {
    let m = start_with(Config {
        outbound_queue: 4,
        ..trusting_loopback()
    })
    .await;
    // A large list makes each reply ~150 KB, so socket buffers fill fast.
    let mut holders = Vec::new();
    for i in 0..1000u16 {
        let mut c = Client::connect(m.addr).await;
        c.register(&format!("{i:0>90}"), 1 + i).await;
        holders.push(c);
    }
    eventually(m.addr, |s| s.len() == 1000).await;
    let mut greedy = TcpStream::connect(m.addr).await.unwrap();
    let query = frame(br#"{"command":"msQueryGameServers"}"#);
    // Bounded: 200 MB of replies would be requested if the master never gave up.
    let outcome = timeout(Duration::from_secs(20), async {
        for _ in 0..1500 {
            if greedy.write_all(&query).await.is_err() {
                return true;
            }
            tokio::task::yield_now().await;
        }
        // Writes can succeed into our own buffers after the close; the read
        // side then reports EOF or reset once the unread data is dropped.
        false
    })
    .await
    .unwrap_or(false);
    let closed = outcome || {
        let mut probe = vec![0u8; 1 << 16];
        // Unread replies sit in our receive buffer; reading to the end shows
        // whether the master closed its side.
        timeout(Duration::from_secs(20), async {
            loop {
                match greedy.read(&mut probe).await {
                    Ok(0) | Err(_) => return true,
                    Ok(_) => {}
                }
            }
        })
        .await
        .unwrap_or(false)
    };
    assert!(closed, "the master closed the stalled connection");
    // Everyone else is unaffected.
    assert_eq!(m.registry.len(), 1000);
    drop(holders);
}

#[tokio::test]
async fn content_order_is_registration_order() {
    let m = start().await;
    let mut clients = Vec::new();
    for (i, name) in ["c", "a", "b"].iter().enumerate() {
        let mut c = Client::connect(m.addr).await;
        c.register(name, 2000 + i as u16).await;
        // Wait until this one is listed so the order is well defined.
        eventually(m.addr, |s| s.len() == i + 1).await;
        clients.push(c);
    }
    let servers = eventually(m.addr, |s| s.len() == 3).await;
    assert_eq!(names(&servers), ["c", "a", "b"]);
    let parsed: Vec<ServerEntry> = servers
        .into_iter()
        .map(|v| serde_json::from_value(v).unwrap())
        .collect();
    assert_eq!(parsed[0].port, Some(2000));
    // The reader type understands what the master writes.
    let written: Vec<_> = parsed.iter().map(|e| e.view(Addresses::Shown)).collect();
    let Command::QueryReply(list) = Command::parse(
        json!({"command": "msRQueryGameServers", "content": {"servers": written}})
            .to_string()
            .as_bytes(),
    )
    .unwrap() else {
        panic!("not a reply")
    };
    assert_eq!(list.servers.len(), 3);
}

#[tokio::test]
async fn shutdown_closes_connections() {
    let mut m = start().await;
    let mut c = Client::connect(m.addr).await;
    c.register("x", 1).await;
    eventually(m.addr, |s| s.len() == 1).await;
    m.stop.take().unwrap().send(()).unwrap();
    timeout(HUNG, &mut m.task).await.unwrap().unwrap();
    let mut buf = [0u8; 16];
    let n = timeout(HUNG, c.stream.read(&mut buf)).await.unwrap();
    assert!(matches!(n, Ok(0) | Err(_)), "connection closed by shutdown");
    assert!(TcpStream::connect(m.addr).await.is_err(), "listener closed");
}
