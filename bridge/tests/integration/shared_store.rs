//! Several bridges, one store (`docs/protocol.md` §2.3), against a real
//! PostgreSQL (a scratch cluster per test): bridges on one database give
//! the same keys and answers, one of them records and another takes over
//! when it stops, a bridge started later shows the history at once, and a
//! database outage turns the history's answers into 503 while the list
//! goes on, until the database is back.

use crate::common;

use std::{path::Path, sync::Arc, time::Duration};

use common::*;
use lobby_testkit::postgres::Cluster;
use serde_json::Value;

const INTERVAL: Duration = Duration::from_secs(1);

fn config(master: &TestMaster, dir: &Path, url: &str) -> bridge::Config {
    let mut c = test_config(master.addr);
    c.data_dir = Some(dir.to_owned());
    c.history_interval = INTERVAL;
    c.database_url = Some(url.parse().unwrap());
    c
}

/// The listed servers' `(name, key)`, once `n` are listed.
async fn keys(bridge: &TestBridge, n: usize) -> Vec<(String, String)> {
    let v = until_json(bridge, "/api/servers", |s, _, v| {
        s == 200
            && v["servers"]
                .as_array()
                .is_some_and(|a| a.len() == n && a.iter().all(|e| e["key"].is_string()))
    })
    .await;
    v["servers"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| {
            (
                s["name"].as_str().unwrap().to_owned(),
                s["key"].as_str().unwrap().to_owned(),
            )
        })
        .collect()
}

/// A scratch cluster with one database, started off the runtime.
async fn database() -> (Arc<Cluster>, String) {
    tokio::task::spawn_blocking(|| {
        let cluster = Cluster::start().unwrap();
        let url = cluster.create_database("lobby").unwrap();
        (Arc::new(cluster), url)
    })
    .await
    .unwrap()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn bridges_on_one_database_agree_and_hand_the_recording_over() {
    let (_cluster, url) = database().await;
    let master = TestMaster::start().await;
    let dirs = [(); 3].map(|()| tempfile::tempdir().unwrap());
    let a = TestBridge::embedding(&master, config(&master, dirs[0].path(), &url)).await;
    let _alpha = game_server(master.addr, "Alpha", 20001).await;
    let _beta = game_server(master.addr, "Beta", 20002).await;
    wait_registered(&master, 2).await;
    let b = TestBridge::embedding(&master, config(&master, dirs[1].path(), &url)).await;
    let keys_a = keys(&a, 2).await;
    assert_eq!(keys(&b, 2).await, keys_a, "one secret, created once");
    let alpha = keys_a[0].1.clone();

    // One of them records, every interval once.
    tokio::time::timeout(HUNG, async {
        loop {
            let written = metric(a.addr, "bridge_history_samples_written_total").await
                + metric(b.addr, "bridge_history_samples_written_total").await;
            let recording = metric(a.addr, "bridge_history_recording").await
                + metric(b.addr, "bridge_history_recording").await;
            if written >= 3.0 && recording == 1.0 {
                break;
            }
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
    })
    .await
    .expect("one bridge records");
    assert!(
        metric(a.addr, "bridge_history_samples_written_total").await == 0.0
            || metric(b.addr, "bridge_history_samples_written_total").await == 0.0,
        "only the elected bridge writes"
    );

    // Both answer alike.
    let path = format!("/api/servers/{alpha}/history?range=1h");
    let from_a = until_json(&a, &path, |s, _, v| {
        s == 200 && v["points"].as_array().is_some_and(|p| p.len() >= 2)
    })
    .await;
    let from_b = until_json(&b, &path, |s, _, v| {
        s == 200 && v["points"].as_array().is_some_and(|p| p.len() >= 2)
    })
    .await;
    let firsts = |v: &Value| v["points"][0].clone();
    assert_eq!(firsts(&from_a), firsts(&from_b));
    let details = format!("/api/servers/{alpha}");
    let (sa, da) = get_json(&a, &details).await;
    let (sb, db) = get_json(&b, &details).await;
    assert_eq!((sa, sb), (200, 200));
    assert_eq!(da["firstSeen"], db["firstSeen"]);

    // A third bridge, started later, shows the history at once.
    let c = TestBridge::embedding(&master, config(&master, dirs[2].path(), &url)).await;
    keys(&c, 2).await;
    let (status, v) = get_json(&c, &path).await;
    assert_eq!(status, 200);
    assert!(v["points"].as_array().unwrap().len() >= 2, "{v}");

    // The recorder stops: another takes over within 2 intervals + 5 s.
    let (recorder, others) = if metric(a.addr, "bridge_history_recording").await == 1.0 {
        (a, [b, c])
    } else {
        (b, [a, c])
    };
    let before = metric(others[0].addr, "bridge_history_samples_written_total").await
        + metric(others[1].addr, "bridge_history_samples_written_total").await;
    recorder.shutdown().await;
    tokio::time::timeout(2 * INTERVAL + Duration::from_secs(5), async {
        loop {
            let now = metric(others[0].addr, "bridge_history_samples_written_total").await
                + metric(others[1].addr, "bridge_history_samples_written_total").await;
            if now > before {
                break;
            }
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
    })
    .await
    .expect("another bridge took the recording over in time");
    let recording = metric(others[0].addr, "bridge_history_recording").await
        + metric(others[1].addr, "bridge_history_recording").await;
    assert_eq!(recording, 1.0);
    for bridge in others {
        bridge.shutdown().await;
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_database_outage_answers_503_and_ends_by_itself() {
    let (cluster, url) = database().await;
    let master = TestMaster::start().await;
    let dir = tempfile::tempdir().unwrap();
    let bridge = TestBridge::embedding(&master, config(&master, dir.path(), &url)).await;
    let _alpha = game_server(master.addr, "Alpha", 20001).await;
    wait_registered(&master, 1).await;
    let key = keys(&bridge, 1).await[0].1.clone();
    let details = format!("/api/servers/{key}");
    until_json(&bridge, &details, |s, _, _| s == 200).await;

    let stopped = cluster.clone();
    tokio::task::spawn_blocking(move || stopped.stop().unwrap())
        .await
        .unwrap();
    let unavailable = |s: u16, head: &str, _: &Value| {
        s == 503 && head.to_ascii_lowercase().contains("retry-after: ")
    };
    until_json(&bridge, &details, unavailable).await;
    until_json(&bridge, "/api/history?range=1h", unavailable).await;
    until_json(
        &bridge,
        &format!("/api/servers/{key}/history?range=24h"),
        unavailable,
    )
    .await;
    let (status, head, _) = http_get(bridge.addr, &format!("/badge/{key}.svg"), "").await;
    assert!(unavailable(status, &head, &Value::Null), "{head}");
    // The list goes on, with its keys.
    assert_eq!(keys(&bridge, 1).await[0].1, key);
    let _beta = game_server(master.addr, "Beta", 20002).await;
    wait_registered(&master, 2).await;
    keys(&bridge, 2).await;

    let written = metric(bridge.addr, "bridge_history_samples_written_total").await;
    let resumed = cluster.clone();
    tokio::task::spawn_blocking(move || resumed.resume().unwrap())
        .await
        .unwrap();
    until_json(&bridge, &details, |s, _, _| s == 200).await;
    tokio::time::timeout(Duration::from_secs(30), async {
        while metric(bridge.addr, "bridge_history_samples_written_total").await <= written {
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
    })
    .await
    .expect("recording resumed by itself");
    bridge.shutdown().await;
}

/// One request a [`receiver`] got: its headers and body.
type Got = (axum::http::HeaderMap, axum::body::Bytes);

/// A webhook receiver on loopback answering 204: its URL, and what it gets.
async fn receiver() -> (String, tokio::sync::mpsc::UnboundedReceiver<Got>) {
    let (tx, rx) = tokio::sync::mpsc::unbounded_channel();
    let app = axum::Router::new().fallback(
        move |headers: axum::http::HeaderMap, body: axum::body::Bytes| {
            let _ = tx.send((headers, body));
            async { axum::http::StatusCode::NO_CONTENT }
        },
    );
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    tokio::spawn(async move { axum::serve(listener, app).await });
    (format!("http://{addr}/hook"), rx)
}

/// An admin API request with the token: status and JSON body.
async fn admin(bridge: &TestBridge, method: &str, path: &str, body: &str) -> (u16, Value) {
    let (status, _, body) = http_send(
        std::net::IpAddr::V4(std::net::Ipv4Addr::LOCALHOST),
        bridge.addr,
        method,
        path,
        &format!("Authorization: Bearer {TOKEN}\r\n"),
        body,
    )
    .await;
    (status, serde_json::from_slice(&body).unwrap_or(Value::Null))
}

/// Whether `got` is signed with `secret` as Standard Webhooks says.
fn signed_with(got: &Got, secret: &str) -> bool {
    use base64::{engine::general_purpose::STANDARD as BASE64, Engine as _};
    use hmac::{Hmac, Mac};
    let (headers, body) = got;
    let header = |n: &str| headers.get(n).and_then(|v| v.to_str().ok()).unwrap_or("");
    let key = BASE64.decode(secret.trim_start_matches("whsec_")).unwrap();
    let mut mac = Hmac::<sha2::Sha256>::new_from_slice(&key).unwrap();
    mac.update(format!("{}.{}.", header("webhook-id"), header("webhook-timestamp")).as_bytes());
    mac.update(body);
    let expected = format!("v1,{}", BASE64.encode(mac.finalize().into_bytes()));
    header("webhook-signature") == expected
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_copied_history_keeps_its_keys_and_answers() {
    let (_cluster, url) = database().await;
    let master = TestMaster::start().await;
    let embedded = tempfile::tempdir().unwrap();
    let mut c = test_config(master.addr);
    c.data_dir = Some(embedded.path().to_owned());
    c.history_interval = INTERVAL;
    c.webhook_allow_private = true;
    c.push_allow_insecure = true;
    let alone = TestBridge::embedding(&master, c).await;
    // Web Push's key and a subscription (RFC 8291's example keys), copied
    // too: browsers keep taking the bridge's pushes.
    let (_, push_key) = get_json(&alone, "/api/push/key").await;
    let subscription = serde_json::json!({"subscription": {
        "endpoint": "http://127.0.0.1:9/push/a",
        "keys": {"p256dh": "BCVxsr7N_eNgVRqvHtD0zTZsEc6-VV-JvLexhqUzORcxaOzi6-AYWXvTBHm4bjyPjs7Vd8pZGH6SRpkNtoIAiw4",
                 "auth": "BTBZMqHH6r4Tts7J_aSIgg"}}, "watches": []});
    let (status, _) = admin(
        &alone,
        "PUT",
        "/api/push/subscription",
        &subscription.to_string(),
    )
    .await;
    assert_eq!(status, 201);
    // A webhook, created on the embedded database: copied with its secret.
    let (hook_url, mut got) = receiver().await;
    let request = serde_json::json!({
        "url": hook_url, "format": "standard", "events": ["server-online"], "servers": "all",
    });
    let (status, created) =
        admin(&alone, "POST", "/api/admin/webhooks", &request.to_string()).await;
    assert_eq!(status, 201, "{created}");
    let (id, secret) = (
        created["id"].as_str().unwrap().to_owned(),
        created["secret"].as_str().unwrap().to_owned(),
    );
    let _alpha = game_server(master.addr, "Alpha", 20001).await;
    let _beta = game_server(master.addr, "Beta", 20002).await;
    wait_registered(&master, 2).await;
    let before = keys(&alone, 2).await;
    let alpha = before[0].1.clone();
    let path = format!("/api/servers/{alpha}/history?range=1h");
    let old = until_json(&alone, &path, |s, _, v| {
        s == 200 && v["points"].as_array().is_some_and(|p| p.len() >= 2)
    })
    .await;
    let (_, old_details) = get_json(&alone, &format!("/api/servers/{alpha}")).await;
    alone.shutdown().await;

    let (dir, target) = (embedded.path().to_owned(), url.parse().unwrap());
    let copied = tokio::task::spawn_blocking(move || bridge::history::copy_into(&dir, &target))
        .await
        .unwrap()
        .unwrap();
    let hours = copied.iter().find(|(t, _)| *t == "server_hours").unwrap();
    assert_eq!(hours.1, 2, "one row per server and hour: {copied:?}");
    assert!(copied.contains(&("webhooks", 1)), "{copied:?}");
    assert!(copied.contains(&("push_vapid", 1)), "{copied:?}");
    assert!(copied.contains(&("push_subscriptions", 1)), "{copied:?}");

    // A bridge on the database, with a data directory of its own.
    let fresh = tempfile::tempdir().unwrap();
    let mut c = config(&master, fresh.path(), &url);
    c.webhook_allow_private = true;
    c.push_allow_insecure = true;
    let shared = TestBridge::embedding(&master, c).await;
    let (_, copied_key) = get_json(&shared, "/api/push/key").await;
    assert_eq!(
        copied_key["publicKey"], push_key["publicKey"],
        "the same VAPID key"
    );
    assert_eq!(metric(shared.addr, "bridge_push_subscriptions").await, 1.0);
    assert_eq!(keys(&shared, 2).await, before, "the same keys");
    let (status, new) = get_json(&shared, &path).await;
    assert_eq!(status, 200);
    assert_eq!(new["points"][0], old["points"][0], "the same history");
    assert_eq!(new["points"][1], old["points"][1]);
    let (_, details) = get_json(&shared, &format!("/api/servers/{alpha}")).await;
    assert_eq!(details["firstSeen"], old_details["firstSeen"]);
    // The webhook, as it was, signing with the same secret.
    let (status, listed) = admin(&shared, "GET", "/api/admin/webhooks", "").await;
    assert_eq!(status, 200);
    let hooks = listed["webhooks"].as_array().unwrap();
    assert_eq!(hooks.len(), 1, "{listed}");
    assert_eq!(hooks[0]["id"], id.as_str());
    assert_eq!(hooks[0]["url"], created["url"]);
    assert_eq!(hooks[0]["createdAt"], created["createdAt"]);
    while got.try_recv().is_ok() {}
    let (status, tested) = admin(
        &shared,
        "POST",
        &format!("/api/admin/webhooks/{id}/test"),
        "",
    )
    .await;
    assert_eq!(
        (status, &tested["ok"]),
        (200, &Value::Bool(true)),
        "{tested}"
    );
    let request = tokio::time::timeout(HUNG, got.recv())
        .await
        .unwrap()
        .unwrap();
    assert!(
        signed_with(&request, &secret),
        "signed with the copied secret"
    );

    // Copying again changes nothing, and another secret is refused.
    let (dir, target) = (embedded.path().to_owned(), url.parse().unwrap());
    tokio::task::spawn_blocking(move || bridge::history::copy_into(&dir, &target))
        .await
        .unwrap()
        .unwrap();
    let other = tempfile::tempdir().unwrap();
    std::fs::write(
        other.path().join("key-secret"),
        format!("{}\n", "ab".repeat(32)),
    )
    .unwrap();
    std::fs::copy(
        embedded.path().join(bridge::history::DB_FILE),
        other.path().join(bridge::history::DB_FILE),
    )
    .unwrap();
    let (dir, target) = (other.path().to_owned(), url.parse().unwrap());
    let refused = tokio::task::spawn_blocking(move || bridge::history::copy_into(&dir, &target))
        .await
        .unwrap();
    assert!(
        refused.is_err_and(|e| e.to_string().contains("another key secret")),
        "a database that has keys of its own keeps them"
    );
    shared.shutdown().await;
}

/// One GET from the loopback address `from`: the status.
async fn get_from(from: &str, to: std::net::SocketAddr, path: &str) -> u16 {
    use tokio::io::{AsyncReadExt, AsyncWriteExt};
    let socket = tokio::net::TcpSocket::new_v4().unwrap();
    socket
        .bind(std::net::SocketAddr::new(from.parse().unwrap(), 0))
        .unwrap();
    let mut s = tokio::time::timeout(HUNG, socket.connect(to))
        .await
        .unwrap()
        .unwrap();
    let req = format!("GET {path} HTTP/1.1\r\nHost: {to}\r\nConnection: close\r\n\r\n");
    s.write_all(req.as_bytes()).await.unwrap();
    let mut buf = Vec::new();
    tokio::time::timeout(HUNG, s.read_to_end(&mut buf))
        .await
        .unwrap()
        .unwrap();
    let head = String::from_utf8_lossy(&buf);
    head.split(' ').nth(1).unwrap().parse().unwrap()
}

/// The binary during an outage, asked 400 times from 127.0.0.2: 503 (or
/// 429 once that address's budget is spent), and the log says the outage
/// began once and ended once, however many requests came between.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_outage_is_logged_once_however_often_it_is_asked() {
    use tokio::io::AsyncBufReadExt;
    let (cluster, url) = database().await;
    let dir = tempfile::tempdir().unwrap();
    let mut child = tokio::process::Command::new(env!("CARGO_BIN_EXE_bridge"))
        .env("BRIDGE_ADMIN_TOKEN", TOKEN)
        .env("RUST_LOG", "info")
        .env("NO_COLOR", "1")
        .args([
            "--listen",
            "127.0.0.1:0",
            "--embedded-master",
            "127.0.0.1:0",
        ])
        .args([
            "--history-interval",
            "1s",
            "--database-url",
            &url,
            "--data-dir",
        ])
        .arg(dir.path())
        .stdin(std::process::Stdio::null())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .kill_on_drop(true)
        .spawn()
        .unwrap();
    let mut stdout = tokio::io::BufReader::new(child.stdout.take().unwrap());
    let mut line = String::new();
    tokio::time::timeout(HUNG, stdout.read_line(&mut line))
        .await
        .expect("no readiness line")
        .unwrap();
    if line.is_empty() {
        let mut err = String::new();
        let mut stderr = child.stderr.take().unwrap();
        let _ = tokio::io::AsyncReadExt::read_to_string(&mut stderr, &mut err).await;
        panic!("the bridge did not start: {err}");
    }
    let words: Vec<&str> = line.split_whitespace().collect();
    let http: std::net::SocketAddr = words[3].strip_prefix("http://").unwrap().parse().unwrap();
    let log = Arc::new(std::sync::Mutex::new(String::new()));
    let mut stderr = tokio::io::BufReader::new(child.stderr.take().unwrap());
    let sink = log.clone();
    tokio::spawn(async move {
        let mut line = String::new();
        while stderr.read_line(&mut line).await.unwrap_or(0) > 0 {
            sink.lock().unwrap().push_str(&std::mem::take(&mut line));
        }
    });
    let path = "/api/history?range=1h";
    let ok = tokio::time::timeout(HUNG, async {
        while get_from("127.0.0.1", http, path).await != 200 {
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
    });
    ok.await.expect("the history answers");

    let stopped = cluster.clone();
    tokio::task::spawn_blocking(move || stopped.stop().unwrap())
        .await
        .unwrap();
    tokio::time::timeout(HUNG, async {
        while get_from("127.0.0.2", http, path).await != 503 {
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
    })
    .await
    .expect("503 during the outage");
    let before = log.lock().unwrap().len();
    for i in 0..400 {
        let path = if i % 2 == 0 {
            path
        } else {
            "/badge/0123456789abcdef.svg"
        };
        // 429 once the address's budget is spent: nothing computed then.
        match get_from("127.0.0.2", http, path).await {
            503 | 404 | 429 => {}
            status => panic!("{status} during the outage"),
        }
    }
    let grown = log.lock().unwrap().len() - before;
    assert!(grown < 2_000, "400 requests grew the log by {grown} bytes");
    let resumed = cluster.clone();
    tokio::task::spawn_blocking(move || resumed.resume().unwrap())
        .await
        .unwrap();
    tokio::time::timeout(Duration::from_secs(30), async {
        while get_from("127.0.0.1", http, path).await != 200 {
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
    })
    .await
    .expect("answers again after the outage");
    let text = log.lock().unwrap().clone();
    assert_eq!(
        text.matches("history database is unreachable;").count(),
        1,
        "{text}"
    );
    assert_eq!(text.matches("reachable again").count(), 1, "{text}");
    let _ = child.start_kill();
}

/// While the store reaches a lost database again (here: a port that
/// accepts connections and never answers, so the attempt cannot end),
/// every request gets its `Unavailable` at once: the attempt runs on a
/// thread of its own, never under the store's mutex. Then the database is
/// back and the store with it, by itself.
#[test]
fn readers_are_not_held_while_the_database_is_reached_again() {
    use bridge::history::{History, StoreError};
    use std::{sync::mpsc, time::Instant};

    let cluster = Cluster::start().unwrap();
    let url = cluster.create_database("lobby").unwrap().parse().unwrap();
    let history = Arc::new(History::connect(&url, INTERVAL));
    assert!(matches!(history.store().server(1), Ok(None)));
    cluster.stop().unwrap();
    assert!(matches!(
        history.store().server(1),
        Err(StoreError::Unavailable)
    ));
    // The database's port answers nothing now.
    let silent = std::net::TcpListener::bind(("127.0.0.1", cluster.port())).unwrap();

    // After the delay between tries, a request starts the attempt.
    let started = Instant::now();
    while history.store().opening().is_none() {
        assert!(started.elapsed() < HUNG, "no attempt to connect again");
        assert!(matches!(
            history.store().server(1),
            Err(StoreError::Unavailable)
        ));
        std::thread::sleep(Duration::from_millis(50));
    }
    // It cannot end while the port is silent; requests meanwhile return
    // (on another thread, so a held mutex would show as no answer).
    for _ in 0..5 {
        let (tx, rx) = mpsc::channel();
        let h = history.clone();
        std::thread::spawn(move || {
            let _ = tx.send(matches!(h.store().server(1), Err(StoreError::Unavailable)));
        });
        assert_eq!(
            rx.recv_timeout(HUNG),
            Ok(true),
            "a request waited for the attempt to connect"
        );
        assert!(
            history.store().opening().is_some(),
            "the attempt ended while the port was silent"
        );
    }

    // The silent port goes, the database comes back: so does the store.
    drop(silent);
    cluster.resume().unwrap();
    let back = Instant::now();
    loop {
        let opening = history.store().opening();
        match history.store().server(1) {
            Ok(None) => break,
            Err(StoreError::Unavailable) => match opening {
                Some(opening) => opening.wait(),
                None => std::thread::sleep(Duration::from_millis(100)),
            },
            other => panic!("{other:?}"),
        }
        assert!(back.elapsed() < 2 * HUNG, "the store did not come back");
    }
}
