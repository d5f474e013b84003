//! The bridge's rules over real TCP and WebSocket: relay, roles, refusals,
//! limits, the shared list, master outages and shutdown.

use crate::common;

use std::time::Duration;

use common::*;
use futures_util::SinkExt;
use protocol::bridge::ErrorCode;
use serde_json::Value;
use tokio_tungstenite::tungstenite::Message;

fn error_code(v: &Value) -> &str {
    assert_eq!(v["command"], "bridgeError", "{v}");
    v["content"]["code"].as_str().unwrap()
}

#[tokio::test]
async fn relay_round_trip() {
    let master = TestMaster::start().await;
    let _game = game_server(master.addr, "Feuerland", 20000).await;
    wait_registered(&master, 1).await;
    let bridge = TestBridge::with_master(&master).await;
    // The shared list may predate the registration by one poll: the
    // query waits until the bridge has published one with the server.
    until_json(&bridge, "/api/servers", |_, _, v| {
        v["servers"].as_array().is_some_and(|s| s.len() == 1)
    })
    .await;
    let mut ws = bridge.connect().await;
    send(&mut ws, r#"{"command":"msQueryGameServers"}"#).await;
    let reply = recv_json(&mut ws).await;
    assert_eq!(names(&reply), ["Feuerland"]);
    let server = &reply["content"]["servers"][0];
    assert_eq!(server["address"], "192.168.0.10");
    assert_eq!(server["port"], 20000);
    assert_eq!(server["players"]["max"], 4);
    bridge.shutdown().await;
}

#[tokio::test]
async fn viewer_admin_command_is_forbidden_and_not_relayed() {
    let master = TestMaster::start().await;
    let bridge = TestBridge::with_master(&master).await;
    let mut ws = bridge.connect().await;
    for cmd in [
        register_json("Nope", 20000),
        r#"{"command":"msUnregisterGameServer"}"#.to_owned(),
        r#"{"command":"msUpdateGameServerStats","content":{"players":{"current":1,"max":4},"isLobbyOpen":true,"gameplayMode":1}}"#.to_owned(),
    ] {
        send(&mut ws, &cmd).await;
        assert_eq!(error_code(&recv_json(&mut ws).await), "forbidden");
    }
    // Still open, and nothing reached the master.
    send(&mut ws, r#"{"command":"msQueryGameServers"}"#).await;
    assert!(names(&recv_json(&mut ws).await).is_empty());
    assert!(master.master.registry().is_empty());
    assert_eq!(bridge.metrics.refusals(ErrorCode::Forbidden), 3);
    bridge.shutdown().await;
}

#[tokio::test]
async fn auth_wrong_then_right() {
    let master = TestMaster::start().await;
    let bridge = TestBridge::with_master(&master).await;
    let mut ws = bridge.connect().await;
    send(
        &mut ws,
        r#"{"command":"bridgeAuth","content":{"token":"wrong"}}"#,
    )
    .await;
    let v = recv_json(&mut ws).await;
    assert_eq!(v["command"], "bridgeAuthResult");
    assert_eq!(v["content"]["ok"], false);
    send(&mut ws, r#"{"command":"bridgeAuth"}"#).await;
    assert_eq!(recv_json(&mut ws).await["content"]["ok"], false);
    assert_eq!(
        bridge
            .metrics
            .auth_failures
            .load(std::sync::atomic::Ordering::Relaxed),
        2
    );
    send(
        &mut ws,
        &format!(r#"{{"command":"bridgeAuth","content":{{"token":"{TOKEN}"}}}}"#),
    )
    .await;
    assert_eq!(recv_json(&mut ws).await["content"]["ok"], true);
    // Now an admin: registering works.
    send(&mut ws, &register_json("Mine", 20001)).await;
    wait_registered(&master, 1).await;
    bridge.shutdown().await;
}

#[tokio::test]
async fn admin_registration_is_seen_by_viewers_and_ends_with_the_socket() {
    let master = TestMaster::start().await;
    let bridge = TestBridge::with_master(&master).await;
    let mut viewer = bridge.connect().await;
    send(&mut viewer, r#"{"command":"bridgeSubscribe"}"#).await;
    assert!(names(&recv_json(&mut viewer).await).is_empty());

    let mut admin = bridge.admin().await;
    send(&mut admin, &register_json("Testserver", 20000)).await;
    let v = recv_until(&mut viewer, |v| is_list(v) && !names(v).is_empty()).await;
    assert_eq!(names(&v), ["Testserver"]);
    // The admin's own query goes over its own master connection.
    send(&mut admin, r#"{"command":"msQueryGameServers"}"#).await;
    assert_eq!(names(&recv_json(&mut admin).await), ["Testserver"]);

    // Closing the admin's socket removes its server within 2 s.
    let closed = tokio::time::Instant::now();
    admin.close(None).await.unwrap();
    drop(admin);
    let v = recv_until(&mut viewer, |v| is_list(v) && names(v).is_empty()).await;
    assert!(names(&v).is_empty());
    assert!(
        closed.elapsed() < Duration::from_secs(2),
        "{:?}",
        closed.elapsed()
    );
    assert!(master.master.registry().is_empty());
    bridge.shutdown().await;
}

#[tokio::test]
async fn two_admins_are_independent() {
    let master = TestMaster::start().await;
    let bridge = TestBridge::with_master(&master).await;
    let mut a = bridge.admin().await;
    let mut b = bridge.admin().await;
    send(&mut a, &register_json("Alpha", 20000)).await;
    send(&mut b, &register_json("Beta", 20001)).await;
    wait_registered(&master, 2).await;
    send(&mut a, r#"{"command":"msQueryGameServers"}"#).await;
    let mut both = names(&recv_json(&mut a).await);
    both.sort();
    assert_eq!(both, ["Alpha", "Beta"]);
    // A re-registration by B replaces only B's server.
    send(&mut b, &register_json("Beta2", 20001)).await;
    send(&mut b, r#"{"command":"msQueryGameServers"}"#).await;
    let mut after = names(&recv_json(&mut b).await);
    after.sort();
    assert_eq!(after, ["Alpha", "Beta2"]);
    a.close(None).await.unwrap();
    drop(a);
    wait_registered(&master, 1).await;
    assert_eq!(master.master.registry().snapshot()[0].name, "Beta2");
    bridge.shutdown().await;
}

#[tokio::test]
async fn each_refusal_answers_and_keeps_the_connection() {
    let master = TestMaster::start().await;
    let bridge = TestBridge::with_master(&master).await;
    let mut ws = bridge.connect().await;
    for (frame, code) in [
        ("{not json", "invalid-json"),
        ("", "invalid-json"),
        ("[1,2,3]", "not-an-object"),
        ("\"text\"", "not-an-object"),
        (r#"{"command":"fly"}"#, "unknown-command"),
        (r#"{"no":"command"}"#, "unknown-command"),
        (r#"{"command":"bridgeStatus"}"#, "unknown-command"),
        (&register_json("X", 20000), "forbidden"),
    ] {
        send(&mut ws, frame).await;
        let v = recv_json(&mut ws).await;
        assert_eq!(error_code(&v), code, "{frame}");
        assert!(!v["content"]["message"].as_str().unwrap().is_empty());
    }
    send(&mut ws, r#"{"command":"msQueryGameServers"}"#).await;
    assert!(is_list(&recv_json(&mut ws).await));
    bridge.shutdown().await;
}

#[tokio::test]
async fn binary_frame_closes_with_1003() {
    let master = TestMaster::start().await;
    let bridge = TestBridge::with_master(&master).await;
    let mut ws = bridge.connect().await;
    ws.send(Message::binary(vec![1u8, 2, 3])).await.unwrap();
    assert_eq!(recv_close(&mut ws).await, 1003);
    bridge.shutdown().await;
}

#[tokio::test]
async fn oversized_frame_closes_with_1009() {
    let master = TestMaster::start().await;
    let bridge = TestBridge::with_master(&master).await;
    // Exactly 64 KiB is still fine (and answered: it is not JSON).
    let mut ws = bridge.connect().await;
    send(&mut ws, &"x".repeat(64 * 1024)).await;
    assert_eq!(error_code(&recv_json(&mut ws).await), "invalid-json");
    let big = format!(
        r#"{{"command":"msQueryGameServers","pad":"{}"}}"#,
        "x".repeat(70 * 1024)
    );
    send(&mut ws, &big).await;
    assert_eq!(recv_close(&mut ws).await, 1009);
    bridge.shutdown().await;
}

#[tokio::test]
async fn foreign_origin_gets_403_and_allowed_ones_connect() {
    let master = TestMaster::start().await;
    let bridge = TestBridge::with_master(&master).await;
    assert_eq!(
        bridge
            .connect_with_origin("http://evil.example")
            .await
            .err(),
        Some(403)
    );
    // Same origin as Host; local development origins only when asked for
    // (behind a proxy on the same machine, every page would be "loopback").
    let same = format!("http://{}", bridge.addr);
    assert!(bridge.connect_with_origin(&same).await.is_ok());
    for dev in ["http://localhost:3000", "http://127.0.0.1:8081"] {
        assert_eq!(bridge.connect_with_origin(dev).await.err(), Some(403));
    }
    bridge.shutdown().await;
    let mut config = test_config(master.addr);
    config.loopback_origins = true;
    let bridge = TestBridge::start(config).await;
    for dev in ["http://localhost:3000", "http://127.0.0.1:8081"] {
        assert!(bridge.connect_with_origin(dev).await.is_ok(), "{dev}");
    }
    assert_eq!(
        bridge
            .connect_with_origin("http://evil.example")
            .await
            .err(),
        Some(403)
    );
    bridge.shutdown().await;

    let mut config = test_config(master.addr);
    config.allowed_origins = vec!["https://lobby.example".into()];
    let bridge = TestBridge::start(config).await;
    assert!(bridge
        .connect_with_origin("https://lobby.example")
        .await
        .is_ok());
    assert_eq!(
        bridge
            .connect_with_origin("http://localhost:3000")
            .await
            .err(),
        Some(403)
    );
    let (status, ..) = http_get(bridge.addr, "/metrics", "").await;
    assert_eq!(status, 200);
    assert_eq!(
        bridge
            .metrics
            .refused_origin
            .load(std::sync::atomic::Ordering::Relaxed),
        1
    );
    bridge.shutdown().await;
}

#[tokio::test]
async fn connection_limit_gives_503() {
    let master = TestMaster::start().await;
    let mut config = test_config(master.addr);
    config.max_connections = 2;
    let bridge = TestBridge::start(config).await;
    let mut first = bridge.connect().await;
    let _second = bridge.connect().await;
    let same = format!("http://{}", bridge.addr);
    assert_eq!(bridge.connect_with_origin(&same).await.err(), Some(503));
    // A freed slot is usable again.
    first.close(None).await.unwrap();
    drop(first);
    until("a freed slot", || async {
        bridge
            .connect_with_origin(&same)
            .await
            .map(drop)
            .map_err(|status| format!("refused with {status}"))
    })
    .await;
    bridge.shutdown().await;
}

#[tokio::test]
async fn rate_limit_refuses_then_closes_a_flood() {
    let master = TestMaster::start().await;
    let mut config = test_config(master.addr);
    config.rate_per_sec = 1;
    config.rate_burst = 5;
    config.flood_close_after = 10;
    let bridge = TestBridge::start(config).await;
    let mut ws = bridge.connect().await;
    for _ in 0..6 {
        send(&mut ws, r#"{"command":"bridgeUnsubscribe"}"#).await;
    }
    // Five pass silently; the sixth is refused.
    assert_eq!(error_code(&recv_json(&mut ws).await), "rate-limited");
    // Nine more refusals in a row: the tenth closes with 1008.
    for _ in 0..12 {
        if ws
            .send(Message::text(r#"{"command":"bridgeUnsubscribe"}"#))
            .await
            .is_err()
        {
            break;
        }
    }
    assert_eq!(recv_close(&mut ws).await, 1008);
    assert!(bridge.metrics.refusals(ErrorCode::RateLimited) >= 9);
    bridge.shutdown().await;
}

#[tokio::test]
async fn subscribers_get_the_list_at_once_and_on_change_only() {
    let master = TestMaster::start().await;
    let bridge = TestBridge::with_master(&master).await;
    let mut ws = bridge.connect().await;
    send(&mut ws, r#"{"command":"bridgeSubscribe"}"#).await;
    assert!(names(&recv_json(&mut ws).await).is_empty());
    let before = master.queries();
    let mut game = game_server(master.addr, "Pushed", 20000).await;
    let v = recv_until(&mut ws, is_list).await;
    assert_eq!(names(&v), ["Pushed"]);
    // Polls continue, but an unchanged list is not pushed again: the next
    // message is the change after stats arrive.
    let stats = r#"{"command":"msUpdateGameServerStats","content":{"players":{"current":3,"max":4},"isLobbyOpen":false,"gameplayMode":2}}"#;
    until_true("four more polls", || master.queries() >= before + 4).await;
    tokio::io::AsyncWriteExt::write_all(
        &mut game,
        format!("{}{stats}\n", stats.len() + 1).as_bytes(),
    )
    .await
    .unwrap();
    let v = recv_json(&mut ws).await;
    assert_eq!(v["content"]["servers"][0]["players"]["current"], 3, "{v}");
    // Unsubscribed: no more pushes, but queries are still answered.
    send(&mut ws, r#"{"command":"bridgeUnsubscribe"}"#).await;
    drop(game);
    wait_registered(&master, 0).await;
    send(&mut ws, r#"{"command":"msQueryGameServers"}"#).await;
    let v = recv_json(&mut ws).await;
    assert!(is_list(&v));
    bridge.shutdown().await;
}

#[tokio::test]
async fn master_down_is_reported_and_recovery_too() {
    let master = TestMaster::start().await;
    let addr = master.addr;
    let bridge = TestBridge::with_master(&master).await;
    let mut ws = bridge.connect().await;
    send(&mut ws, r#"{"command":"bridgeSubscribe"}"#).await;
    assert!(is_list(&recv_json(&mut ws).await));
    let mut admin = bridge.admin().await;
    send(&mut admin, &register_json("Doomed", 20000)).await;
    wait_registered(&master, 1).await;
    let (status, _, body) = http_get(bridge.addr, "/healthz", "").await;
    assert_eq!(status, 200, "{}", String::from_utf8_lossy(&body));

    master.shutdown().await;
    // The admin loses its master connection: status, then close 1011.
    let v = recv_until(&mut admin, |v| v["command"] == "bridgeStatus").await;
    assert_eq!(v["content"]["master"], "down");
    assert_eq!(recv_close(&mut admin).await, 1011);
    // Viewers hear it, /healthz says "down" and nothing about the master
    // (anyone may ask: its address and the OS error are for the log),
    // queries are refused.
    let v = recv_until(&mut ws, |v| v["command"] == "bridgeStatus").await;
    assert_eq!(v["content"]["master"], "down");
    let (status, _, body) = http_get(bridge.addr, "/healthz", "").await;
    let body = String::from_utf8_lossy(&body);
    assert_eq!(status, 503, "{body}");
    assert_eq!(body, r#"{"status":"unavailable","master":"down"}"#);
    assert!(!body.contains(&addr.port().to_string()), "{body}");
    send(&mut ws, r#"{"command":"msQueryGameServers"}"#).await;
    assert_eq!(error_code(&recv_json(&mut ws).await), "master-down");
    // A newcomer is told at once.
    let mut late = bridge.connect().await;
    assert_eq!(recv_json(&mut late).await["content"]["master"], "down");

    let master = TestMaster::start_on(addr).await;
    let v = recv_until(&mut ws, |v| v["command"] == "bridgeStatus").await;
    assert_eq!(v["content"]["master"], "up");
    let (status, ..) = http_get(bridge.addr, "/healthz", "").await;
    assert_eq!(status, 200);
    send(&mut ws, r#"{"command":"msQueryGameServers"}"#).await;
    assert!(names(&recv_until(&mut ws, is_list).await).is_empty());
    bridge.shutdown().await;
    master.shutdown().await;
}

#[tokio::test]
async fn shutdown_closes_every_socket_with_1001() {
    let master = TestMaster::start().await;
    let bridge = TestBridge::with_master(&master).await;
    let mut viewer = bridge.connect().await;
    let mut admin = bridge.admin().await;
    send(&mut admin, &register_json("Bye", 20000)).await;
    wait_registered(&master, 1).await;
    let started = tokio::time::Instant::now();
    bridge.stop.cancel();
    assert_eq!(recv_close(&mut viewer).await, 1001);
    assert_eq!(recv_close(&mut admin).await, 1001);
    tokio::time::timeout(Duration::from_secs(5), bridge.task)
        .await
        .unwrap()
        .unwrap()
        .unwrap();
    assert!(started.elapsed() < Duration::from_secs(5));
    // The admin's master connection went with it.
    wait_registered(&master, 0).await;
}

#[tokio::test]
async fn hidden_addresses_for_viewers_only() {
    let master = TestMaster::start().await;
    let _game = game_server(master.addr, "Secret", 20000).await;
    wait_registered(&master, 1).await;
    let mut config = test_config(master.addr);
    config.hide_addresses = true;
    let bridge = TestBridge::start(config).await;
    let mut viewer = bridge.connect().await;
    send(&mut viewer, r#"{"command":"bridgeSubscribe"}"#).await;
    let v = recv_until(&mut viewer, |v| is_list(v) && !names(v).is_empty()).await;
    let server = &v["content"]["servers"][0];
    assert_eq!(server["name"], "Secret");
    assert!(
        server.get("address").is_none() && server.get("port").is_none(),
        "{v}"
    );
    let mut admin = bridge.admin().await;
    send(&mut admin, r#"{"command":"bridgeSubscribe"}"#).await;
    let v = recv_until(&mut admin, is_list).await;
    assert_eq!(v["content"]["servers"][0]["address"], "192.168.0.10");
    bridge.shutdown().await;
}

#[tokio::test]
async fn silent_browser_is_closed_after_the_pong_timeout() {
    let master = TestMaster::start().await;
    let mut config = test_config(master.addr);
    config.ping_interval = Duration::from_millis(50);
    config.pong_timeout = Duration::from_millis(200);
    let bridge = TestBridge::start(config).await;
    let mut ws = bridge.connect().await;
    // Not reading means not answering pings: that is the point here. The
    // bridge counts the socket it closed for it.
    let no_pong = &bridge.metrics.closed_no_pong;
    lobby_testkit::until_true("a socket closed for want of a pong", || {
        no_pong.load(std::sync::atomic::Ordering::Relaxed) >= 1
    })
    .await;
    // Reading now answers the queued pings, which may meet the closed
    // socket before the close frame is read: either shows it is gone.
    let ended = tokio::time::timeout(HUNG, async {
        loop {
            match futures_util::StreamExt::next(&mut ws).await {
                Some(Ok(Message::Close(frame))) => return frame.map(|f| u16::from(f.code)),
                Some(Ok(_)) => continue,
                Some(Err(_)) | None => return None,
            }
        }
    })
    .await
    .unwrap();
    assert!(matches!(ended, Some(1001) | None), "{ended:?}");
    until_true("the silent socket no longer counted", || {
        bridge
            .metrics
            .viewers
            .load(std::sync::atomic::Ordering::Relaxed)
            == 0
    })
    .await;
    // A browser that reads (and so answers pings) stays.
    let mut alive = bridge.connect().await;
    let deadline = tokio::time::Instant::now() + Duration::from_millis(600);
    while let Ok(msg) =
        tokio::time::timeout_at(deadline, futures_util::StreamExt::next(&mut alive)).await
    {
        assert!(matches!(msg, Some(Ok(Message::Ping(_)))), "{msg:?}");
    }
    send(&mut alive, r#"{"command":"msQueryGameServers"}"#).await;
    assert!(is_list(&recv_json(&mut alive).await));
    bridge.shutdown().await;
}

#[tokio::test]
async fn http_endpoints_and_front_end() {
    let master = TestMaster::start().await;
    let dir = std::env::temp_dir().join(format!("bridge-static-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let page = format!(
        "<!doctype html><title>lobby</title>{}",
        "<p>server list</p>".repeat(200)
    );
    std::fs::write(dir.join("index.html"), &page).unwrap();
    std::fs::write(dir.join("app.js"), "console.log(1);").unwrap();
    // The admin's bundle: its own page, at /admin.
    let admin_page = format!(
        "<!doctype html><title>lobby</title>{}",
        "<p>admin</p>".repeat(200)
    );
    std::fs::create_dir_all(dir.join("admin")).unwrap();
    std::fs::write(dir.join("admin/index.html"), &admin_page).unwrap();
    // The .br/.gz copies the build writes (scripts/test.sh, run.sh).
    bridge::http::assets::precompress(&dir).unwrap();
    let mut config = test_config(master.addr);
    config.static_dir = dir.clone();
    let bridge = TestBridge::start(config).await;

    // The app's pages are the page with their facts in place of its
    // title (a key never seen: 404, the page saying so); /admin the
    // admin's page.
    let shell_rest = "</title><p>server list</p>";
    for (route, status_wanted, title) in [
        ("/", 200, "<title>Lobby · game servers</title>"),
        ("/embed", 200, "<title>Lobby · game servers</title>"),
        (
            "/server/0123456789abcdef",
            404,
            "<title>No such server · Lobby</title>",
        ),
    ] {
        let (status, _, body) = http_get(bridge.addr, route, "").await;
        assert_eq!(status, status_wanted, "{route}");
        let body = String::from_utf8(body).unwrap();
        assert!(
            body.starts_with(&format!("<!doctype html>{title}")),
            "{route}: {body}"
        );
        assert!(body.ends_with(&"<p>server list</p>".repeat(200)), "{route}");
        assert!(!body.contains(shell_rest), "{route}: the title replaced");
    }
    let (status, _, body) = http_get(bridge.addr, "/app.js", "").await;
    assert_eq!((status, body.as_slice()), (200, &b"console.log(1);"[..]));
    for route in ["/admin", "/admin/"] {
        let (status, _, body) = http_get(bridge.addr, route, "").await;
        assert_eq!(status, 200, "{route}");
        assert_eq!(body, admin_page.as_bytes(), "{route}");
    }
    let (_, head, _) = http_get(bridge.addr, "/admin", "Accept-Encoding: br\r\n").await;
    assert!(
        head.to_ascii_lowercase().contains("content-encoding: br"),
        "{head}"
    );
    let (status, head, _) = http_get(bridge.addr, "/", "Accept-Encoding: gzip\r\n").await;
    assert_eq!(status, 200);
    assert!(
        head.to_ascii_lowercase().contains("content-encoding: gzip"),
        "{head}"
    );
    let (_, head, _) = http_get(bridge.addr, "/", "Accept-Encoding: br\r\n").await;
    assert!(
        head.to_ascii_lowercase().contains("content-encoding: br"),
        "{head}"
    );

    let mut ws = bridge.connect().await;
    send(&mut ws, "nope").await;
    recv_json(&mut ws).await;
    let (status, head, body) = http_get(bridge.addr, "/metrics", "").await;
    assert_eq!(status, 200);
    assert!(head.contains("text/plain"), "{head}");
    let text = String::from_utf8_lossy(&body);
    for needle in [
        "bridge_connections{role=\"viewer\"} 1",
        "bridge_connections{role=\"admin\"} 0",
        "bridge_refusals_total{code=\"invalid-json\"} 1",
        "bridge_frames_in_total 1",
        "bridge_master_up 1",
        "bridge_master_queries_total",
    ] {
        assert!(text.contains(needle), "{needle} missing in\n{text}");
    }
    bridge.shutdown().await;
    let _ = std::fs::remove_dir_all(dir);
}

#[tokio::test]
async fn lists_over_64_kib_are_relayed() {
    rlimit::increase_nofile_limit(4096).unwrap();
    let master = TestMaster::start().await;
    let mut games = Vec::new();
    for i in 0..400 {
        let name = format!("{i:03}-{}", "n".repeat(90));
        games.push(game_server(master.addr, &name, 20000).await);
    }
    wait_registered(&master, 400).await;
    let bridge = TestBridge::with_master(&master).await;
    let mut viewer = bridge.connect().await;
    send(&mut viewer, r#"{"command":"bridgeSubscribe"}"#).await;
    let v = recv_until(&mut viewer, |v| is_list(v) && names(v).len() == 400).await;
    assert!(v.to_string().len() > 64 * 1024);
    let mut admin = bridge.admin().await;
    send(&mut admin, &register_json("Admin", 20001)).await;
    send(&mut admin, r#"{"command":"msQueryGameServers"}"#).await;
    assert_eq!(names(&recv_until(&mut admin, is_list).await).len(), 401);
    bridge.shutdown().await;
}

#[tokio::test]
async fn lists_larger_than_a_fragment_arrive_as_one_message() {
    rlimit::increase_nofile_limit(4096).unwrap();
    let master = TestMaster::start().await;
    let mut games = Vec::new();
    for i in 0..150 {
        let name = format!("{i:03}-{}", "f".repeat(90));
        games.push(game_server(master.addr, &name, 20000).await);
    }
    wait_registered(&master, 150).await;
    let bridge = TestBridge::with_master(&master).await;
    let mut viewer = bridge.connect().await;
    send(&mut viewer, r#"{"command":"bridgeSubscribe"}"#).await;
    // `recv_text` accepts only whole text messages: the fragments are
    // put back together by the client.
    let pushed = tokio::time::timeout(Duration::from_secs(10), async {
        loop {
            let text = recv_text(&mut viewer).await;
            let v: Value = serde_json::from_str(&text).unwrap();
            if is_list(&v) && names(&v).len() == 150 {
                return (text, v);
            }
        }
    })
    .await
    .expect("no full list");
    let (text, v) = pushed;
    assert!(text.len() > 16 * 1024 + 1, "{} bytes", text.len());
    let mut got = names(&v);
    got.sort();
    let want: Vec<String> = (0..150)
        .map(|i| format!("{i:03}-{}", "f".repeat(90)))
        .collect();
    assert_eq!(got, want);
    // The connection goes on after the fragmented message: a query is
    // answered with the same list, again in fragments.
    send(&mut viewer, r#"{"command":"msQueryGameServers"}"#).await;
    assert_eq!(recv_text(&mut viewer).await, text);
    bridge.shutdown().await;
}

#[tokio::test]
async fn requests_that_are_not_websocket_upgrades_get_400() {
    let master = TestMaster::start().await;
    let bridge = TestBridge::with_master(&master).await;
    let (status, _, _) = http_get(bridge.addr, "/ws", "").await;
    assert_eq!(status, 400);
    let (status, _, _) = http_get(
        bridge.addr,
        "/ws",
        "Connection: Upgrade\r\nUpgrade: websocket\r\nSec-WebSocket-Version: 8\r\nSec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\n",
    )
    .await;
    assert_eq!(status, 400);
    let (status, _, _) = http_get(
        bridge.addr,
        "/ws",
        "Connection: Upgrade\r\nUpgrade: websocket\r\nSec-WebSocket-Version: 13\r\n",
    )
    .await;
    assert_eq!(status, 400);
    bridge.shutdown().await;
}
