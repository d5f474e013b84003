//! Server keys and the player history against the real bridge
//! (`docs/protocol.md` §2.2): keys that survive re-registration, renames
//! and restarts, samples every second, history read back after a restart
//! on the same data directory, an offline server's last state, the
//! answers to unknown keys and bad ranges, and a database that fills up
//! (`--history-max-bytes`, as a full disk) while the bridge runs.

use crate::common;

use std::time::Duration;

use common::*;
use serde_json::Value;
use tokio::io::{AsyncReadExt, AsyncWriteExt};

/// The `key` of a week's answer (absent for the lobby's).
fn v_key(v: &Value) -> Option<&str> {
    v.get("key").and_then(Value::as_str)
}

#[tokio::test]
async fn keys_and_history_survive_renames_and_restarts() {
    let master = TestMaster::start().await;
    let dir = tempfile::tempdir().unwrap();
    let bridge = TestBridge::embedding(&master, history_config(&master, dir.path())).await;
    let alpha = game_server(master.addr, "Alpha", 20001).await;
    let beta = game_server(master.addr, "Beta", 20002).await;
    wait_registered(&master, 2).await;
    let first = listed_keys(&bridge, 2).await;
    let (alpha_key, beta_key) = (first[0].1.clone(), first[1].1.clone());
    assert_ne!(alpha_key, beta_key, "another port, another key");

    // Alpha registers again under another name; a twin joins it.
    drop(alpha);
    wait_registered(&master, 1).await;
    let renamed = game_server(master.addr, "Renamed", 20001).await;
    let twin = game_server(master.addr, "Twin", 20001).await;
    wait_registered(&master, 3).await;
    let now = listed_keys(&bridge, 3).await;
    assert_eq!(now[0], ("Beta".into(), beta_key.clone()));
    assert_eq!(now[1], ("Renamed".into(), alpha_key.clone()));
    assert_eq!(
        now[2],
        ("Twin".into(), alpha_key.clone()),
        "twins share a key"
    );

    // Samples arrive every second.
    let path = format!("/api/servers/{alpha_key}/history?range=1h");
    let v = until_json(&bridge, &path, |s, _, v| {
        s == 200 && v["points"].as_array().is_some_and(|p| !p.is_empty())
    })
    .await;
    assert_eq!(v["key"], alpha_key.as_str());
    assert_eq!(v["range"], "1h");
    assert_eq!(v["step"], 3, "3600 samples of 1 s: 1200 points of 3 s");
    let point = &v["points"][0];
    assert_eq!(point.as_array().unwrap().len(), 6);
    assert_eq!(point[2], 4, "max");
    assert!(
        point[5].as_f64().unwrap() >= point[1].as_f64().unwrap(),
        "the peak is at least the mean: {point}"
    );
    // Online for a share of the interval (a sample may have fallen
    // between Alpha's leaving and its registering again).
    let online = point[3].as_f64().unwrap();
    assert!(online > 0.0 && online <= 1.0, "{point}");
    let lobby = until_json(&bridge, "/api/history?range=24h", |s, _, v| {
        s == 200 && v["points"].as_array().is_some_and(|p| !p.is_empty())
    })
    .await;
    assert_eq!(lobby["range"], "24h");
    assert!(lobby["points"][0][1].as_f64().unwrap() >= 1.0);

    // Beta leaves, once recorded (a server gone before the first sample
    // that listed it was never recorded): offline, with its last state.
    until_json(
        &bridge,
        &format!("/api/servers/{beta_key}/history?range=1h"),
        |s, _, _| s == 200,
    )
    .await;
    drop(beta);
    wait_registered(&master, 2).await;
    let beta_path = format!("/api/servers/{beta_key}");
    let v = until_json(&bridge, &beta_path, |s, _, v| {
        s == 200 && v["online"] == false
    })
    .await;
    assert_eq!(v["name"], "Beta");
    assert_eq!(v["address"], "192.168.0.10");
    assert_eq!(v["port"], 20002);
    assert_eq!(v["players"]["max"], 4);
    assert!(v["firstSeen"].as_i64().unwrap() <= v["lastSeen"].as_i64().unwrap());
    let (status, v) = get_json(&bridge, &format!("/api/servers/{alpha_key}")).await;
    assert_eq!((status, &v["online"]), (200, &Value::Bool(true)));
    let first_seen = v["firstSeen"].clone();

    // The weeks: 168 hours each (the current hour is not over yet, so
    // none has samples here), and as CSV.
    for path in [format!("/api/servers/{alpha_key}/week"), "/api/week".into()] {
        let (status, v) = get_json(&bridge, &path).await;
        assert_eq!(status, 200, "{path}");
        assert_eq!(v["days"], 28);
        assert_eq!(v["hours"].as_array().map(Vec::len), Some(168), "{path}");
        let (status, head, body) = http_get(bridge.addr, &format!("{path}?format=csv"), "").await;
        assert_eq!(status, 200);
        assert!(
            head.to_ascii_lowercase().contains("content-type: text/csv"),
            "{head}"
        );
        let text = String::from_utf8(body).unwrap();
        assert!(text.starts_with("players,peak,open,room\r\n"), "{text}");
        assert_eq!(text.lines().count(), 169, "a header and 168 hours");
    }
    assert_eq!(v_key(&get_json(&bridge, "/api/week").await.1), None);
    let (status, _, body) = http_get(
        bridge.addr,
        &format!("/api/servers/{alpha_key}/history?range=1h&format=csv"),
        "",
    )
    .await;
    assert_eq!(status, 200);
    let text = String::from_utf8(body).unwrap();
    assert!(
        text.starts_with("t,players,max,online,open,peak\r\n"),
        "{text}"
    );
    assert!(text.lines().count() >= 2, "a header and points");
    let (status, v) = get_json(&bridge, "/api/history?range=90d").await;
    assert_eq!((status, &v["range"]), (200, &Value::from("90d")));
    assert_eq!(v["step"], 7200, "90 days of hours: points of 2 h");

    // Unknown keys, bad ranges and formats.
    for path in [
        "/api/servers/0000000000000000",
        "/api/servers/not-a-key",
        "/api/servers/0000000000000000/history?range=1h",
        "/api/servers/0000000000000000/week",
        "/api/servers/not-a-key/week",
    ] {
        assert_eq!(get_json(&bridge, path).await.0, 404, "{path}");
    }
    for query in ["?range=2h", "?range=", "", "?range=1h&format=xml"] {
        let path = format!("/api/servers/{alpha_key}/history{query}");
        assert_eq!(get_json(&bridge, &path).await.0, 400, "{path}");
        assert_eq!(
            get_json(&bridge, &format!("/api/history{query}")).await.0,
            400
        );
    }

    assert_eq!(get_json(&bridge, "/api/week?format=xml").await.0, 400);

    // ETag and 304.
    let (status, head, _) = http_get(bridge.addr, &beta_path, "").await;
    assert_eq!(status, 200);
    assert!(head
        .to_ascii_lowercase()
        .contains("access-control-allow-origin: *"));
    let etag = head
        .lines()
        .find_map(|l| {
            l.strip_prefix("etag: ")
                .or_else(|| l.strip_prefix("ETag: "))
        })
        .expect("an ETag")
        .to_owned();
    let inm = format!("If-None-Match: {etag}\r\n");
    let (status, _, body) = http_get(bridge.addr, &beta_path, &inm).await;
    assert_eq!((status, body.len()), (304, 0));

    // A restart on the same data directory: same keys, same history.
    bridge.shutdown().await;
    let bridge = TestBridge::embedding(&master, history_config(&master, dir.path())).await;
    let again = listed_keys(&bridge, 2).await;
    assert_eq!(again[0].1, alpha_key);
    let (status, v) = get_json(&bridge, &format!("/api/servers/{alpha_key}")).await;
    assert_eq!(status, 200);
    assert_eq!(v["firstSeen"], first_seen, "recorded before the restart");
    let (status, v) = get_json(&bridge, &path).await;
    assert_eq!(status, 200);
    assert!(!v["points"].as_array().unwrap().is_empty(), "{v}");
    let v = until_json(&bridge, &beta_path, |s, _, _| s == 200).await;
    assert_eq!(v["online"], false);
    drop((renamed, twin));
    bridge.shutdown().await;
}

#[tokio::test]
async fn a_listed_server_says_whether_the_history_holds_it_yet() {
    let master = TestMaster::start().await;
    let dir = tempfile::tempdir().unwrap();
    // No sample within the test's first part: the server is listed only.
    let mut c = history_config(&master, dir.path());
    c.history_interval = Duration::from_secs(3600);
    let bridge = TestBridge::embedding(&master, c).await;
    let _alpha = game_server(master.addr, "Alpha", 20001).await;
    wait_registered(&master, 1).await;
    let key = listed_keys(&bridge, 1).await.remove(0).1;
    // A server listed and gone before any sample was never recorded: its
    // key answers as one never seen.
    let beta = game_server(master.addr, "Beta", 20002).await;
    wait_registered(&master, 2).await;
    let beta_key = key_of(&bridge, "Beta").await;
    drop(beta);
    wait_registered(&master, 1).await;
    listed_keys(&bridge, 1).await;
    let (status, v) = get_json(&bridge, &format!("/api/servers/{beta_key}")).await;
    assert_eq!(status, 404, "{v}");
    assert_eq!(v["error"], "no server with this key was seen");
    // Still no sample (which would have recorded Alpha and Beta alike).
    let (status, v) = get_json(&bridge, &format!("/api/servers/{key}")).await;
    assert_eq!((status, &v["recorded"]), (200, &Value::Bool(false)), "{v}");
    let history = format!("/api/servers/{key}/history?range=24h");
    assert_eq!(
        get_json(&bridge, &history).await.0,
        404,
        "not recorded: no history"
    );
    bridge.shutdown().await;

    // Sampled every second: once recorded, the details no longer say so,
    // and the history answers.
    let bridge = TestBridge::embedding(&master, history_config(&master, dir.path())).await;
    let v = until_json(&bridge, &format!("/api/servers/{key}"), |s, _, v| {
        s == 200 && v.get("recorded").is_none()
    })
    .await;
    assert_eq!(v["name"], "Alpha");
    assert_eq!(get_json(&bridge, &history).await.0, 200);
    bridge.shutdown().await;
    master.shutdown().await;
}

/// A week is kept for the hour, but its refusal of a key not yet recorded
/// is not: once the next sample records the server, its week answers.
#[tokio::test]
async fn a_week_refused_before_the_server_was_recorded_answers_after() {
    let master = TestMaster::start().await;
    let dir = tempfile::tempdir().unwrap();
    let mut c = history_config(&master, dir.path());
    c.history_interval = Duration::from_secs(10);
    let bridge = TestBridge::embedding(&master, c).await;
    let _alpha = game_server(master.addr, "Alpha", 20001).await;
    wait_registered(&master, 1).await;
    let key = listed_keys(&bridge, 1).await.remove(0).1;
    let week = format!("/api/servers/{key}/week");
    let (before, body) = get_json(&bridge, &week).await;
    let (_, details) = get_json(&bridge, &format!("/api/servers/{key}")).await;
    // Unless a sample came between the two requests (a machine that
    // stalled for most of an interval), the week was asked before.
    if details["recorded"] == Value::Bool(false) {
        assert_eq!(before, 404, "a week of a server not recorded: {body}");
    }
    until_json(&bridge, &format!("/api/servers/{key}"), |s, _, v| {
        s == 200 && v.get("recorded").is_none()
    })
    .await;
    let (after, body) = get_json(&bridge, &week).await;
    assert_eq!(
        after, 200,
        "the week once recorded, in the same hour: {body}"
    );
    bridge.shutdown().await;
    master.shutdown().await;
}

#[tokio::test]
async fn bridges_sharing_a_secret_share_keys_and_hidden_addresses_stay_hidden() {
    let master = TestMaster::start().await;
    let (a, b) = (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
    let _game = game_server(master.addr, "Alpha", 20001).await;
    wait_registered(&master, 1).await;
    let first = TestBridge::embedding(&master, history_config(&master, a.path())).await;
    let key = listed_keys(&first, 1).await[0].1.clone();
    std::fs::copy(
        a.path().join(bridge::live::keys::SECRET_FILE),
        b.path().join(bridge::live::keys::SECRET_FILE),
    )
    .unwrap();
    let mut hidden = history_config(&master, b.path());
    hidden.hide_addresses = true;
    let second = TestBridge::embedding(&master, hidden).await;
    assert_eq!(
        listed_keys(&second, 1).await[0].1,
        key,
        "same secret, same key"
    );
    let v = until_json(&second, &format!("/api/servers/{key}"), |s, _, _| s == 200).await;
    assert_eq!(v["name"], "Alpha");
    assert!(v.get("address").is_none() && v.get("port").is_none(), "{v}");
    let (_, list) = get_json(&second, "/api/servers").await;
    assert!(list["servers"][0].get("address").is_none());

    // A third bridge with its own secret: other keys.
    let c = tempfile::tempdir().unwrap();
    let third = TestBridge::embedding(&master, history_config(&master, c.path())).await;
    assert_ne!(listed_keys(&third, 1).await[0].1, key);
    for bridge in [first, second, third] {
        bridge.shutdown().await;
    }
}

#[tokio::test]
async fn a_damaged_database_stops_the_bridge_at_start() {
    let master = TestMaster::start().await;
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("history.sqlite3"), vec![0x42; 4096]).unwrap();
    let opened = bridge::Bridge::embedding(
        history_config(&master, dir.path()),
        master.master.registry(),
    );
    let err = opened.expect_err("the bridge must not start").to_string();
    assert!(err.contains("history.sqlite3"), "{err}");

    // A data directory that is a file: refused too.
    let file = dir.path().join("a-file");
    std::fs::write(&file, "").unwrap();
    let opened =
        bridge::Bridge::embedding(history_config(&master, &file), master.master.registry());
    let err = opened.expect_err("the bridge must not start").to_string();
    assert!(err.contains("data directory"), "{err}");
}

#[tokio::test]
async fn badges_are_well_formed_cached_svg() {
    let master = TestMaster::start().await;
    let dir = tempfile::tempdir().unwrap();
    let bridge = TestBridge::embedding(&master, history_config(&master, dir.path())).await;
    let name = r#"<b> & \"q\" 'שרת'"#;
    let _game = game_server(master.addr, name, 20001).await;
    wait_registered(&master, 1).await;
    let key = listed_keys(&bridge, 1).await[0].1.clone();
    for path in [format!("/badge/{key}.svg"), "/badge.svg".to_owned()] {
        let (status, head, body) = http_get(bridge.addr, &path, "").await;
        assert_eq!(status, 200, "{path}");
        let head = head.to_ascii_lowercase();
        assert!(head.contains("content-type: image/svg+xml"), "{head}");
        assert!(head.contains("cache-control: public, max-age=60"), "{head}");
        assert!(head.contains("etag: "), "{head}");
        assert!(body.len() <= 4096);
        let text = String::from_utf8(body).unwrap();
        let doc = roxmltree::Document::parse(&text).unwrap();
        let texts: Vec<&str> = doc
            .descendants()
            .filter(|n| n.has_tag_name("text"))
            .filter_map(|n| n.text())
            .collect();
        if path == "/badge.svg" {
            assert_eq!(texts, ["lobby", "1 servers, 0 players"]);
        } else {
            assert_eq!(texts, [r#"<b> & "q" 'שרת'"#, "0/4 open"]);
        }
    }
    let (status, _, _) = http_get(bridge.addr, "/badge/0000000000000000.svg", "").await;
    assert_eq!(status, 404);
    let (status, _, _) = http_get(bridge.addr, "/badge/nothing", "").await;
    assert_eq!(status, 404);
    bridge.shutdown().await;
}

/// The real binary with its database capped at its size at start
/// (`--history-max-bytes 1`: SQLite's `max_page_count` never goes below the
/// file), so the first samples fill the tables' empty root pages and the
/// next fail with SQLITE_FULL, exactly as on a full disk: the recording
/// pauses with one ERROR line however many samples fail, the failures are
/// counted, and the list, its WebSocket, `/api/servers` and the history
/// recorded so far keep answering.
#[tokio::test]
async fn a_full_database_pauses_recording_and_nothing_else() {
    const SERVERS: usize = 24;
    let data = tempfile::tempdir().unwrap();
    let mut launch = bridge_launch();
    launch.data_dir = Some(data.path().to_owned());
    launch.history_interval = Some(Duration::from_secs(1));
    launch.poll_interval = Some(Duration::from_millis(100));
    launch.args = vec!["--history-max-bytes".into(), "1".into()];
    // Its log (stderr) is read whole once it has exited.
    let mut child = piped(&launch).spawn().unwrap();
    let (line, _stdout) = first_line(&mut child).await;
    let (http, master) = bridge_addrs(&line).unwrap_or_else(|e| panic!("{e}"));

    // 24 servers: each sample makes their rows of the hour 6 bytes longer
    // (144 bytes a sample), which the root page of the samples' table
    // takes for the first twenty-odd samples; then the database is full.
    let mut games = Vec::new();
    for i in 0..SERVERS {
        games.push(game_server(master, &format!("s{i:02}"), 20_000 + i as u16).await);
    }
    let (mut ws, _) = tokio_tungstenite::connect_async(format!("ws://{http}/ws"))
        .await
        .unwrap();
    send(&mut ws, r#"{"command":"bridgeSubscribe"}"#).await;
    recv_until(&mut ws, |v| {
        is_list(v)
            && v["content"]["servers"]
                .as_array()
                .is_some_and(|s| s.len() == SERVERS)
    })
    .await;

    metric_reaches(http, "bridge_history_samples_written_total", 1.0).await;
    drop(ws);
    metric_reaches(http, "bridge_history_write_errors_total", 3.0).await;
    let written = metric(http, "bridge_history_samples_written_total").await;
    assert!(metric(http, "bridge_history_database_bytes").await > 0.0);
    // A socket of its own (the first, unread for a minute, missed pings).
    let (mut ws, _) = tokio_tungstenite::connect_async(format!("ws://{http}/ws"))
        .await
        .unwrap();
    send(&mut ws, r#"{"command":"bridgeSubscribe"}"#).await;

    // The list goes on: a change reaches the socket and /api/servers.
    let stats = r#"{"command":"msUpdateGameServerStats","content":{"players":{"current":3,"max":4},"isLobbyOpen":false,"gameplayMode":2}}"#;
    games[0]
        .write_all(format!("{}{stats}\n", stats.len() + 1).as_bytes())
        .await
        .unwrap();
    recv_until(&mut ws, |v| {
        is_list(v)
            && v["content"]["servers"].as_array().is_some_and(|s| {
                s.iter()
                    .any(|s| s["name"] == "s00" && s["players"]["current"] == 3)
            })
    })
    .await;
    let (status, _, body) = http_get(http, "/api/servers", "").await;
    assert_eq!(status, 200);
    let list: Value = serde_json::from_slice(&body).unwrap();
    assert_eq!(list["servers"].as_array().unwrap().len(), SERVERS);
    let key = list["servers"][0]["key"].as_str().unwrap().to_owned();

    // The history answers with what it holds.
    let (status, _, body) =
        http_get(http, &format!("/api/servers/{key}/history?range=1h"), "").await;
    assert_eq!(status, 200);
    let v: Value = serde_json::from_slice(&body).unwrap();
    assert!(!v["points"].as_array().unwrap().is_empty(), "{v}");
    let (status, _, body) = http_get(http, "/api/history?range=1h", "").await;
    assert_eq!(status, 200);
    let v: Value = serde_json::from_slice(&body).unwrap();
    assert!(!v["points"].as_array().unwrap().is_empty(), "{v}");
    assert_eq!(
        http_get(http, &format!("/badge/{key}.svg"), "").await.0,
        200
    );
    assert_eq!(
        metric(http, "bridge_history_samples_written_total").await,
        written,
        "nothing is written while the database is full"
    );

    // One ERROR line however many writes failed.
    signal(&child, "TERM").await;
    let mut stderr = String::new();
    let mut pipe = child.stderr.take().unwrap();
    tokio::time::timeout(HUNG, pipe.read_to_string(&mut stderr))
        .await
        .unwrap()
        .unwrap();
    let status = tokio::time::timeout(HUNG, child.wait())
        .await
        .unwrap()
        .unwrap();
    assert!(status.success(), "{status}");
    let failed: Vec<&str> = stderr
        .lines()
        .filter(|l| l.contains("writing the history failed"))
        .collect();
    assert_eq!(failed.len(), 1, "{stderr}");
    assert!(failed[0].contains("ERROR"), "{}", failed[0]);
    assert!(
        failed[0].contains("full"),
        "the cause is named: {}",
        failed[0]
    );
    drop(games);
}
