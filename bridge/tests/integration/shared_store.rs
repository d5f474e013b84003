//! Several bridges, one store (`docs/protocol.md` §2.3), against a real
//! PostgreSQL (a scratch cluster per test): bridges on one database give
//! the same keys and answers, one of them records and another takes over
//! when it stops, a bridge started later shows the history at once, a
//! database outage turns the history's answers into 503 while the list
//! goes on, until the database is back, and a bridge started while the
//! database is down or missing serves at once and says why in one line.
//! Notifications on one database:
//! webhook changes through one bridge hold on every bridge at once, each
//! event is delivered once, a delivery waiting for its retry outlives its
//! bridge (SIGKILL included) with its webhook-id, an outage delays
//! notifications and loses none, a restart hides no server, and a
//! Discord status card is one message, posted or edited at most once per
//! 10 s whichever bridge sends it.

use crate::common;

use std::{path::Path, sync::Arc, time::Duration};

use common::*;
use lobby_testkit::{discord::Discord, metrics::until_metric, postgres::Cluster};
use serde_json::{json, Value};

const INTERVAL: Duration = Duration::from_secs(1);

fn config(master: &TestMaster, dir: &Path, url: &str) -> bridge::Config {
    let mut c = history_config(master, dir);
    c.history_interval = INTERVAL;
    c.database_url = Some(url.parse().unwrap());
    c
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
    let keys_a = listed_keys(&a, 2).await;
    assert_eq!(listed_keys(&b, 2).await, keys_a, "one secret, created once");
    let alpha = keys_a[0].1.clone();

    // One of them records, every interval once.
    until("one bridge recording", || async {
        let written = total(&[&a, &b], "bridge_history_samples_written_total").await;
        let recording = total(&[&a, &b], "bridge_history_recording").await;
        if written >= 3.0 && recording == 1.0 {
            Ok(())
        } else {
            Err(format!("{written} samples written, {recording} recording"))
        }
    })
    .await;
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
    listed_keys(&c, 2).await;
    let (status, v) = get_json(&c, &path).await;
    assert_eq!(status, 200);
    assert!(v["points"].as_array().unwrap().len() >= 2, "{v}");

    // The recorder stops: another takes over (the promised bound, 2
    // intervals + 5 s, is not judged here: a loaded machine is slow).
    let (recorder, others) = if metric(a.addr, "bridge_history_recording").await == 1.0 {
        (a, [b, c])
    } else {
        (b, [a, c])
    };
    let written = "bridge_history_samples_written_total";
    let before = total(&[&others[0], &others[1]], written).await;
    recorder.shutdown().await;
    until("another bridge taking the recording over", || async {
        match total(&[&others[0], &others[1]], written).await {
            now if now > before => Ok(()),
            now => Err(now),
        }
    })
    .await;
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
    let key = listed_keys(&bridge, 1).await[0].1.clone();
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
    assert_eq!(listed_keys(&bridge, 1).await[0].1, key);
    let _beta = game_server(master.addr, "Beta", 20002).await;
    wait_registered(&master, 2).await;
    listed_keys(&bridge, 2).await;

    let written = metric(bridge.addr, "bridge_history_samples_written_total").await;
    let resumed = cluster.clone();
    tokio::task::spawn_blocking(move || resumed.resume().unwrap())
        .await
        .unwrap();
    until_json(&bridge, &details, |s, _, _| s == 200).await;
    until_metric(bridge.addr, "bridge_history_samples_written_total", |now| {
        now > written
    })
    .await;
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
    c.push_contact = Some("mailto:ops@lobby.example".into());
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
    let before = listed_keys(&alone, 2).await;
    let alpha = before[0].1.clone();
    let path = format!("/api/servers/{alpha}/history?range=1h");
    let old = until_json(&alone, &path, |s, _, v| {
        s == 200 && v["points"].as_array().is_some_and(|p| p.len() >= 2)
    })
    .await;
    let (_, old_details) = get_json(&alone, &format!("/api/servers/{alpha}")).await;
    alone.shutdown().await;

    let (dir, target) = (embedded.path().to_owned(), url.parse().unwrap());
    let copied = tokio::task::spawn_blocking(move || bridge::db::history::copy_into(&dir, &target))
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
    c.push_contact = Some("mailto:ops@lobby.example".into());
    let shared = TestBridge::embedding(&master, c).await;
    let (_, copied_key) = get_json(&shared, "/api/push/key").await;
    assert_eq!(
        copied_key["publicKey"], push_key["publicKey"],
        "the same VAPID key"
    );
    assert_eq!(metric(shared.addr, "bridge_push_subscriptions").await, 1.0);
    assert_eq!(listed_keys(&shared, 2).await, before, "the same keys");
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
    tokio::task::spawn_blocking(move || bridge::db::history::copy_into(&dir, &target))
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
        embedded.path().join(bridge::db::store::DB_FILE),
        other.path().join(bridge::db::store::DB_FILE),
    )
    .unwrap();
    let (dir, target) = (other.path().to_owned(), url.parse().unwrap());
    let refused =
        tokio::task::spawn_blocking(move || bridge::db::history::copy_into(&dir, &target))
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

/// The `bridge` binary on `url` (data in `dir`), once it says it
/// listens: the process, its HTTP address and its log as it grows.
async fn logged_bridge(
    url: &str,
    dir: &Path,
) -> (
    tokio::process::Child,
    std::net::SocketAddr,
    Arc<std::sync::Mutex<String>>,
) {
    logged_bridge_with(&["--database-url", url], dir).await
}

/// [`logged_bridge`] with `database` as the arguments naming the database.
async fn logged_bridge_with(
    database: &[&str],
    dir: &Path,
) -> (
    tokio::process::Child,
    std::net::SocketAddr,
    Arc<std::sync::Mutex<String>>,
) {
    use tokio::io::AsyncBufReadExt;
    let mut launch = bridge_launch();
    launch.history_interval = Some(Duration::from_secs(1));
    launch.data_dir = Some(dir.to_owned());
    launch.env = vec![("NO_COLOR".into(), "1".into())];
    launch.args = database.iter().map(Into::into).collect();
    let mut child = piped(&launch).spawn().unwrap();
    let (line, _stdout) = first_line(&mut child).await;
    if line.is_empty() {
        let mut err = String::new();
        let mut stderr = child.stderr.take().unwrap();
        let _ = tokio::io::AsyncReadExt::read_to_string(&mut stderr, &mut err).await;
        panic!("the bridge did not start: {err}");
    }
    let (http, _) = bridge_addrs(&line).unwrap_or_else(|e| panic!("{e}"));
    let log = Arc::new(std::sync::Mutex::new(String::new()));
    let mut stderr = tokio::io::BufReader::new(child.stderr.take().unwrap());
    let sink = log.clone();
    tokio::spawn(async move {
        let mut line = String::new();
        while stderr.read_line(&mut line).await.unwrap_or(0) > 0 {
            sink.lock().unwrap().push_str(&std::mem::take(&mut line));
        }
    });
    (child, http, log)
}

/// Polls the binary at `http` until `path` answers `status`.
async fn answers(http: std::net::SocketAddr, path: &str, status: u16) {
    until(&format!("{path} answering {status}"), || async {
        match get_from("127.0.0.1", http, path).await {
            s if s == status => Ok(()),
            other => Err(other),
        }
    })
    .await;
}

/// Drill: the database is down when a new bridge (no copy of the key
/// secret) starts. It serves at once (the list, `/healthz`,
/// `/api/servers`), the history answers 503, the log says why in one
/// line naming the database with its port; once the database is back the
/// history answers by itself, and the database took the key secret the
/// bridge keyed with (no restart needed).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_bridge_started_during_an_outage_serves_at_once_and_recovers() {
    let (cluster, url) = database().await;
    let stopped = cluster.clone();
    tokio::task::spawn_blocking(move || stopped.stop().unwrap())
        .await
        .unwrap();
    let dir = tempfile::tempdir().unwrap();
    // The database stays down throughout: answering at all is serving
    // without it (a bridge that waited for it would never answer).
    let (mut child, http, log) = logged_bridge(&url, dir.path()).await;
    answers(http, "/healthz", 200).await;
    answers(http, "/api/servers", 200).await;
    assert_eq!(
        get_from("127.0.0.1", http, "/api/history?range=1h").await,
        503
    );
    let resumed = cluster.clone();
    tokio::task::spawn_blocking(move || resumed.resume().unwrap())
        .await
        .unwrap();
    answers(http, "/api/history?range=1h", 200).await;
    let copy = std::fs::read_to_string(dir.path().join("key-secret")).unwrap();
    // The history answering is one connection; the secret is handed over
    // by another thread that tries every half second: wait for its row.
    let kept = cluster.clone();
    let stored = tokio::task::spawn_blocking(move || {
        lobby_testkit::wait::until_blocking("the database holds a key secret", || {
            let row = kept.query(
                "lobby",
                "SELECT encode(substring(secret from 1 for 32), 'hex') FROM key_secret",
            )?;
            if row.trim().is_empty() {
                anyhow::bail!("no key secret yet");
            }
            anyhow::Ok(row)
        })
    })
    .await
    .unwrap();
    assert_eq!(
        stored.trim(),
        copy.trim(),
        "the database took the bridge's secret"
    );
    assert!(child.try_wait().unwrap().is_none(), "the bridge goes on");
    let text = log.lock().unwrap().clone();
    let port = format!("127.0.0.1:{}", cluster.port());
    let reasons: Vec<&str> = text
        .lines()
        .filter(|l| l.contains("history database is unreachable;"))
        .collect();
    assert_eq!(reasons.len(), 1, "{text}");
    assert!(
        reasons[0].contains(&port) && reasons[0].contains("refused"),
        "{text}"
    );
    let _ = child.start_kill();
}

/// Drill: a new bridge starts while the database is down, keys the list
/// with a new secret, and the database turns out to hold another (other
/// bridges made it). Once the database answers the bridge keeps the
/// database's secret as its copy and stops with an error (a service
/// manager starts it again, keying as the others do).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_bridge_that_keyed_with_another_secret_stops_once_the_database_answers() {
    let (cluster, url) = database().await;
    let first = tempfile::tempdir().unwrap();
    let (mut one, http, _) = logged_bridge(&url, first.path()).await;
    answers(http, "/api/history?range=1h", 200).await;
    let _ = one.start_kill();
    let _ = one.wait().await;
    let theirs = std::fs::read_to_string(first.path().join("key-secret")).unwrap();
    let stopped = cluster.clone();
    tokio::task::spawn_blocking(move || stopped.stop().unwrap())
        .await
        .unwrap();
    let dir = tempfile::tempdir().unwrap();
    let (mut child, http, log) = logged_bridge(&url, dir.path()).await;
    answers(http, "/api/servers", 200).await;
    let ours = std::fs::read_to_string(dir.path().join("key-secret")).unwrap();
    assert_ne!(ours, theirs, "a new secret keys the list meanwhile");
    let resumed = cluster.clone();
    tokio::task::spawn_blocking(move || resumed.resume().unwrap())
        .await
        .unwrap();
    let status = tokio::time::timeout(Duration::from_secs(30), child.wait())
        .await
        .expect("the bridge stops once the database answers")
        .unwrap();
    assert!(!status.success(), "{status}");
    let kept = std::fs::read_to_string(dir.path().join("key-secret")).unwrap();
    assert_eq!(kept, theirs, "the copy is the database's now");
    let text = log.lock().unwrap().clone();
    assert!(
        text.contains("another than the one this bridge keyed"),
        "{text}"
    );
}

/// Drill: the database refuses the password, given in a file
/// (`--database-url-file`). The bridge serves at once, says why in one
/// line (the server's sentence) without the password anywhere in its log,
/// and connects by itself once the role takes that password.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_refused_password_is_said_once_and_never_shown() {
    let (cluster, _) = database().await;
    let set = cluster.clone();
    tokio::task::spawn_blocking(move || {
        set.add_password_role("keeper", "not-this-one", "lobby")
            .unwrap()
    })
    .await
    .unwrap();
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("database-url");
    let password = "guess-7f3a";
    std::fs::write(
        &file,
        format!(
            "postgresql://keeper:{password}@127.0.0.1:{}/lobby\n",
            cluster.port()
        ),
    )
    .unwrap();
    let data = dir.path().join("data");
    let (mut child, http, log) =
        logged_bridge_with(&["--database-url-file", file.to_str().unwrap()], &data).await;
    answers(http, "/healthz", 200).await;
    answers(http, "/api/servers", 200).await;
    assert_eq!(
        get_from("127.0.0.1", http, "/api/history?range=1h").await,
        503
    );
    let set = cluster.clone();
    tokio::task::spawn_blocking(move || {
        set.query(
            "postgres",
            &format!("ALTER ROLE keeper PASSWORD '{password}'"),
        )
        .unwrap()
    })
    .await
    .unwrap();
    answers(http, "/api/history?range=1h", 200).await;
    let text = log.lock().unwrap().clone();
    let reasons: Vec<&str> = text
        .lines()
        .filter(|l| l.contains("history database is unreachable;"))
        .collect();
    assert_eq!(reasons.len(), 1, "{text}");
    assert!(
        reasons[0].contains("password authentication failed") && reasons[0].contains("28P01"),
        "{text}"
    );
    assert!(
        reasons[0].contains(&format!("keeper@127.0.0.1:{}/lobby", cluster.port())),
        "{text}"
    );
    assert!(!text.contains(password), "{text}");
    let _ = child.start_kill();
}

/// Drill: the database named does not exist. The bridge serves at once,
/// the log says so in one line (the server's own sentence), and it
/// connects by itself once the database is created.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_missing_database_is_said_once_and_taken_once_created() {
    let (cluster, _) = database().await;
    let url = cluster.url("later");
    let dir = tempfile::tempdir().unwrap();
    let (mut child, http, log) = logged_bridge(&url, dir.path()).await;
    answers(http, "/healthz", 200).await;
    answers(http, "/api/servers", 200).await;
    assert_eq!(
        get_from("127.0.0.1", http, "/api/history?range=1h").await,
        503
    );
    let created = cluster.clone();
    tokio::task::spawn_blocking(move || created.create_database("later").unwrap())
        .await
        .unwrap();
    answers(http, "/api/history?range=1h", 200).await;
    let text = log.lock().unwrap().clone();
    let reasons: Vec<&str> = text
        .lines()
        .filter(|l| l.contains("history database is unreachable;"))
        .collect();
    assert_eq!(reasons.len(), 1, "{text}");
    assert!(reasons[0].contains("does not exist"), "{text}");
    assert!(reasons[0].contains("3D000"), "{text}");
    let _ = child.start_kill();
}

/// The binary during an outage, asked 400 times from 127.0.0.2: 503 (or
/// 429 once that address's budget is spent), and the log says the outage
/// began once and ended once, however many requests came between.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_outage_is_logged_once_however_often_it_is_asked() {
    let (cluster, url) = database().await;
    let dir = tempfile::tempdir().unwrap();
    let (mut child, http, log) = logged_bridge(&url, dir.path()).await;
    let path = "/api/history?range=1h";
    answers(http, path, 200).await;

    let stopped = cluster.clone();
    tokio::task::spawn_blocking(move || stopped.stop().unwrap())
        .await
        .unwrap();
    until("503 during the outage", || async {
        match get_from("127.0.0.2", http, path).await {
            503 => Ok(()),
            other => Err(other),
        }
    })
    .await;
    let before = log.lock().unwrap().len();
    let abuse_began = std::time::Instant::now();
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
    let grown = u64::try_from(log.lock().unwrap().len() - before).unwrap();
    let budget = log_budget(1_000, abuse_began);
    assert!(
        grown < budget,
        "400 requests grew the log by {grown} bytes (budget {budget})"
    );
    let resumed = cluster.clone();
    tokio::task::spawn_blocking(move || resumed.resume().unwrap())
        .await
        .unwrap();
    answers(http, path, 200).await;
    // The log is read from the child's pipe by a task of its own: the line
    // that says so may arrive after the answer that shows it.
    until("the log to say the database is reachable again", || async {
        let text = log.lock().unwrap().clone();
        if text.contains("reachable again") {
            Ok(())
        } else {
            Err(text.len())
        }
    })
    .await;
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
    use bridge::db::{history::History, store::StoreError};
    use std::sync::mpsc;

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
    until_blocking("an attempt to connect again", || {
        assert!(matches!(
            history.store().server(1),
            Err(StoreError::Unavailable)
        ));
        history.store().opening().ok_or("none yet")
    });
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
    until_blocking("the store back", || {
        let opening = history.store().opening();
        match history.store().server(1) {
            Ok(None) => Ok(()),
            Err(StoreError::Unavailable) => {
                // An attempt under way: its end, then look again.
                if let Some(opening) = opening {
                    opening.wait();
                }
                Err("unavailable")
            }
            other => panic!("{other:?}"),
        }
    });
}

// Notifications on one database (`docs/protocol.md` §2.4): every bridge
// sees every webhook change within a second, each event is delivered once
// over all bridges, a delivery waiting for its retry survives its bridge,
// and a database outage delays notifications without losing any.

/// How long a key stays unlisted before it is offline, in these tests.
const GRACE: Duration = Duration::from_secs(1);

/// A bridge on `url` that notifies loopback receivers.
async fn notifying(master: &TestMaster, dir: &Path, url: &str) -> TestBridge {
    let mut c = config(master, dir, url);
    c.offline_after = GRACE;
    c.webhook_allow_private = true;
    let bridge = TestBridge::embedding(master, c).await;
    // Servers that appear in the first grace are not announced.
    until_metric(bridge.addr, "bridge_watch_warm", |v| v == 1.0).await;
    until_metric(bridge.addr, "bridge_notify_synced", |v| v == 1.0).await;
    bridge
}

/// The sum of `name` over `bridges`.
async fn total(bridges: &[&TestBridge], name: &str) -> f64 {
    let mut sum = 0.0;
    for b in bridges {
        sum += metric(b.addr, name).await;
    }
    sum
}

/// Waits until the sum of `name` over `bridges` is `want`.
async fn until_total(bridges: &[&TestBridge], name: &str, want: f64) {
    until(&format!("the sum of {name} at {want}"), || async {
        match total(bridges, name).await {
            sum if sum == want => Ok(()),
            sum => Err(sum),
        }
    })
    .await;
}

/// A receiver answering the statuses (and `Retry-After`s) of `script`,
/// then 204: its URL, and what it gets.
async fn scripted(
    script: Vec<(u16, Option<&'static str>)>,
) -> (String, tokio::sync::mpsc::UnboundedReceiver<Got>) {
    use axum::response::IntoResponse;
    let (tx, rx) = tokio::sync::mpsc::unbounded_channel();
    let script = Arc::new(std::sync::Mutex::new(std::collections::VecDeque::from(
        script,
    )));
    let app = axum::Router::new().fallback(
        move |headers: axum::http::HeaderMap, body: axum::body::Bytes| {
            let _ = tx.send((headers, body));
            let (status, after) = script.lock().unwrap().pop_front().unwrap_or((204, None));
            async move {
                let mut h = axum::http::HeaderMap::new();
                if let Some(a) = after {
                    h.insert("retry-after", a.parse().unwrap());
                }
                (axum::http::StatusCode::from_u16(status).unwrap(), h).into_response()
            }
        },
    );
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    tokio::spawn(async move { axum::serve(listener, app).await });
    (format!("http://{addr}/hook"), rx)
}

/// The next request `rx` gets (bounded by 30 s).
async fn next(rx: &mut tokio::sync::mpsc::UnboundedReceiver<Got>) -> Got {
    tokio::time::timeout(Duration::from_secs(30), rx.recv())
        .await
        .expect("no request reached the receiver")
        .expect("the receiver stopped")
}

/// The event's type and server name of a `"standard"` request.
fn what(got: &Got) -> (String, String) {
    let v: Value = serde_json::from_slice(&got.1).unwrap();
    (
        v["type"].as_str().unwrap().to_owned(),
        v["data"]["name"].as_str().unwrap().to_owned(),
    )
}

/// Creates a `"standard"` webhook for `server-online` through `bridge`:
/// its id and secret.
async fn create_hook(bridge: &TestBridge, url: &str) -> (String, String) {
    let body = serde_json::json!({"url": url, "format": "standard",
        "events": ["server-online"], "servers": "all"});
    let (status, v) = admin(bridge, "POST", "/api/admin/webhooks", &body.to_string()).await;
    assert_eq!(status, 201, "{v}");
    (
        v["id"].as_str().unwrap().to_owned(),
        v["secret"].as_str().unwrap().to_owned(),
    )
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn webhook_changes_through_one_bridge_hold_on_every_bridge_at_once() {
    let (_cluster, url) = database().await;
    let master = TestMaster::start().await;
    let dirs = [(); 2].map(|()| tempfile::tempdir().unwrap());
    let a = notifying(&master, dirs[0].path(), &url).await;
    let b = notifying(&master, dirs[1].path(), &url).await;
    let both = [&a, &b];
    let (control_url, mut control) = scripted(vec![]).await;
    let (target_url, mut target) = scripted(vec![]).await;
    create_hook(&a, &control_url).await;

    // Created through B, right before the event: delivered, once.
    let (id, secret) = create_hook(&b, &target_url).await;
    let _alpha = game_server(master.addr, "Alpha", 20001).await;
    let got = next(&mut target).await;
    assert!(signed_with(&got, &secret));
    assert_eq!(what(&got), ("server-online".into(), "Alpha".into()));
    assert_eq!(what(&next(&mut control).await).1, "Alpha");
    // Both bridges decided it; one row per webhook was written, and sent.
    until_total(
        &both,
        r#"bridge_watch_changes_total{change="server-online"}"#,
        2.0,
    )
    .await;
    until_total(&both, "bridge_notify_written_total", 2.0).await;
    until_total(
        &both,
        r#"bridge_webhook_deliveries_total{result="delivered"}"#,
        2.0,
    )
    .await;
    assert!(target.try_recv().is_err(), "sent twice");

    // Disabled through A: nothing from either bridge on the next event.
    let path = format!("/api/admin/webhooks/{id}");
    let (status, _) = admin(&a, "PATCH", &path, r#"{"enabled":false}"#).await;
    assert_eq!(status, 200);
    let _beta = game_server(master.addr, "Beta", 20002).await;
    assert_eq!(what(&next(&mut control).await).1, "Beta");
    until_total(
        &both,
        r#"bridge_watch_changes_total{change="server-online"}"#,
        4.0,
    )
    .await;
    until_total(&both, "bridge_notify_written_total", 3.0).await;
    until_total(
        &both,
        r#"bridge_webhook_deliveries_total{result="delivered"}"#,
        3.0,
    )
    .await;
    assert!(target.try_recv().is_err(), "a disabled webhook was sent to");

    // Enabled through B: A sends again at once.
    let (status, v) = admin(&b, "PATCH", &path, r#"{"enabled":true}"#).await;
    assert_eq!((status, v["state"].as_str()), (200, Some("active")));
    let _gamma = game_server(master.addr, "Gamma", 20003).await;
    assert_eq!(what(&next(&mut target).await).1, "Gamma");
    assert_eq!(what(&next(&mut control).await).1, "Gamma");

    // Deleted through A (it was created through B): nothing from either.
    let (status, _) = admin(&a, "DELETE", &path, "").await;
    assert_eq!(status, 204);
    let _delta = game_server(master.addr, "Delta", 20004).await;
    assert_eq!(what(&next(&mut control).await).1, "Delta");
    until_total(
        &both,
        r#"bridge_watch_changes_total{change="server-online"}"#,
        8.0,
    )
    .await;
    until_total(
        &both,
        r#"bridge_webhook_deliveries_total{result="delivered"}"#,
        6.0,
    )
    .await;
    assert!(target.try_recv().is_err(), "a deleted webhook was sent to");
    let (_, listed) = admin(&b, "GET", "/api/admin/webhooks", "").await;
    assert_eq!(listed["webhooks"].as_array().unwrap().len(), 1, "{listed}");
    for bridge in [a, b] {
        bridge.shutdown().await;
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_retry_outlives_its_bridge_and_keeps_its_id() {
    let (_cluster, url) = database().await;
    let master = TestMaster::start().await;
    let dirs = [(); 2].map(|()| tempfile::tempdir().unwrap());
    let a = notifying(&master, dirs[0].path(), &url).await;
    let b = notifying(&master, dirs[1].path(), &url).await;
    let (hook_url, mut got) = scripted(vec![(503, Some("3"))]).await;
    let (_, secret) = create_hook(&a, &hook_url).await;
    let _alpha = game_server(master.addr, "Alpha", 20001).await;
    let first = next(&mut got).await;
    let at = tokio::time::Instant::now();
    // The bridge that sent it stops while the delivery waits.
    let attempts = r#"bridge_webhook_attempts_total"#;
    until_total(&[&a, &b], attempts, 1.0).await;
    let (sender, other) = if metric(a.addr, attempts).await == 1.0 {
        (a, b)
    } else {
        (b, a)
    };
    sender.shutdown().await;
    let second = next(&mut got).await;
    assert!(
        at.elapsed() >= Duration::from_millis(2900),
        "Retry-After honoured"
    );
    let id = |g: &Got| g.0.get("webhook-id").unwrap().to_str().unwrap().to_owned();
    assert_eq!(id(&first), id(&second), "one webhook-id for every attempt");
    assert!(signed_with(&second, &secret));
    assert_eq!(first.1, second.1);
    until_metric(
        other.addr,
        r#"bridge_webhook_deliveries_total{result="delivered"}"#,
        |v| v == 1.0,
    )
    .await;
    assert!(got.try_recv().is_err(), "delivered once");
    other.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_database_outage_delays_notifications_and_loses_none() {
    let (cluster, url) = database().await;
    let master = TestMaster::start().await;
    let dirs = [(); 2].map(|()| tempfile::tempdir().unwrap());
    let a = notifying(&master, dirs[0].path(), &url).await;
    let b = notifying(&master, dirs[1].path(), &url).await;
    let both = [&a, &b];
    let (hook_url, mut got) = scripted(vec![]).await;
    create_hook(&a, &hook_url).await;
    let stopped = cluster.clone();
    tokio::task::spawn_blocking(move || stopped.stop().unwrap())
        .await
        .unwrap();
    let down = tokio::time::Instant::now();
    let _alpha = game_server(master.addr, "Alpha", 20001).await;
    let _beta = game_server(master.addr, "Beta", 20002).await;
    // Both bridges decided both events, and keep them.
    until_total(
        &both,
        r#"bridge_watch_changes_total{change="server-online"}"#,
        4.0,
    )
    .await;
    until_metric(a.addr, "bridge_notify_journal", |v| v == 2.0).await;
    until_metric(b.addr, "bridge_notify_journal", |v| v == 2.0).await;
    assert!(got.try_recv().is_err());
    // The outage lasts 20 s, as a database restart might.
    tokio::time::sleep_until(down + Duration::from_secs(20)).await;
    let resumed = cluster.clone();
    tokio::task::spawn_blocking(move || resumed.resume().unwrap())
        .await
        .unwrap();
    let mut names = vec![what(&next(&mut got).await).1, what(&next(&mut got).await).1];
    names.sort();
    assert_eq!(names, ["Alpha", "Beta"]);
    until_metric(a.addr, "bridge_notify_journal", |v| v == 0.0).await;
    until_metric(b.addr, "bridge_notify_journal", |v| v == 0.0).await;
    until_total(
        &both,
        r#"bridge_webhook_deliveries_total{result="delivered"}"#,
        2.0,
    )
    .await;
    assert!(got.try_recv().is_err(), "each once");
    for bridge in [a, b] {
        bridge.shutdown().await;
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_restart_announces_the_servers_that_came_and_not_those_that_stayed() {
    let (_cluster, url) = database().await;
    let master = TestMaster::start().await;
    let dirs = [(); 2].map(|()| tempfile::tempdir().unwrap());
    let first = notifying(&master, dirs[0].path(), &url).await;
    let (hook_url, mut got) = scripted(vec![]).await;
    create_hook(&first, &hook_url).await;
    let _alpha = game_server(master.addr, "Alpha", 20001).await;
    assert_eq!(what(&next(&mut got).await).1, "Alpha");
    // Alpha's last sighting is in the history (a sample taken after it
    // was listed).
    listed_keys(&first, 1).await;
    let written = metric(first.addr, "bridge_history_samples_written_total").await;
    until_metric(first.addr, "bridge_history_samples_written_total", |v| {
        v >= written + 2.0
    })
    .await;
    first.shutdown().await;

    // The next bridge starts with a window of 30 s in which it cannot
    // tell a server that reconnects from one that came online: Alpha,
    // listed all along, is not announced; Beta, new, is.
    let mut c = config(&master, dirs[1].path(), &url);
    c.offline_after = Duration::from_secs(30);
    c.webhook_allow_private = true;
    let next_bridge = TestBridge::embedding(&master, c).await;
    until_metric(next_bridge.addr, "bridge_notify_synced", |v| v == 1.0).await;
    assert_eq!(metric(next_bridge.addr, "bridge_watch_warm").await, 0.0);
    let _beta = game_server(master.addr, "Beta", 20002).await;
    assert_eq!(
        what(&next(&mut got).await),
        ("server-online".into(), "Beta".into())
    );
    until_metric(
        next_bridge.addr,
        r#"bridge_webhook_deliveries_total{result="delivered"}"#,
        |v| v == 1.0,
    )
    .await;
    assert_eq!(
        metric(
            next_bridge.addr,
            r#"bridge_watch_changes_total{change="server-online"}"#
        )
        .await,
        1.0,
        "Alpha was listed lately"
    );
    assert!(got.try_recv().is_err());
    next_bridge.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_delivery_waiting_for_retry_after_survives_sigkill_of_its_bridge() {
    let (_cluster, url) = database().await;
    let master = TestMaster::start().await;
    let dirs = [(); 2].map(|()| tempfile::tempdir().unwrap());
    let (hook_url, mut got) = scripted(vec![(503, Some("5"))]).await;
    // The sending bridge is a process of its own, to be killed.
    let mut launch = bridge_launch();
    launch.data_dir = Some(dirs[0].path().to_owned());
    launch.rust_log = "warn";
    launch.master = Some(master.addr);
    launch.poll_interval = Some(Duration::from_millis(100));
    launch.database_url = Some(url.clone());
    launch.webhook_allow_private = true;
    let mut bridge = start_bridge(launch, dirs[0].path().join("bridge.log")).await;
    let http = bridge.http;
    until_metric(http, "bridge_notify_synced", |v| v == 1.0).await;
    let body = serde_json::json!({"url": hook_url, "format": "standard",
        "events": ["server-online"], "servers": "all"});
    let (status, _, created) = http_send(
        std::net::IpAddr::V4(std::net::Ipv4Addr::LOCALHOST),
        http,
        "POST",
        "/api/admin/webhooks",
        &format!("Authorization: Bearer {TOKEN}\r\n"),
        &body.to_string(),
    )
    .await;
    assert_eq!(status, 201);
    let created: Value = serde_json::from_slice(&created).unwrap();
    let secret = created["secret"].as_str().unwrap().to_owned();

    // New within the process's start-up window: announced (its history
    // never saw it), refused with Retry-After: 5.
    let _alpha = game_server(master.addr, "Alpha", 20001).await;
    let first = next(&mut got).await;
    let at = tokio::time::Instant::now();
    bridge.proc.kill();

    // Another bridge, started after the kill, makes the next attempt. It
    // polls the master as the process did (so it gives the servers the
    // same keys: a polled list carries no registrants).
    let mut c = config(&master, dirs[1].path(), &url);
    c.offline_after = GRACE;
    c.webhook_allow_private = true;
    let other = TestBridge::start(c).await;
    until_metric(other.addr, "bridge_notify_synced", |v| v == 1.0).await;
    let second = next(&mut got).await;
    assert!(
        at.elapsed() >= Duration::from_millis(4900),
        "Retry-After honoured (waited {:?})",
        at.elapsed()
    );
    let id = |g: &Got| g.0.get("webhook-id").unwrap().to_str().unwrap().to_owned();
    assert_eq!(
        id(&first),
        id(&second),
        "the same webhook-id after the handover"
    );
    assert!(signed_with(&second, &secret));
    assert_eq!(first.1, second.1);
    until_metric(
        other.addr,
        r#"bridge_webhook_deliveries_total{result="delivered"}"#,
        |v| v == 1.0,
    )
    .await;
    assert!(got.try_recv().is_err(), "delivered once");
    other.shutdown().await;
}

/// The admin's push status on `bridge` once `ok` holds for it.
async fn until_push_status(bridge: &TestBridge, what: &str, ok: impl Fn(&Value) -> bool) -> Value {
    lobby_testkit::until(what, || async {
        let (status, v) = admin(bridge, "GET", "/api/admin/push", "").await;
        if status == 200 && ok(&v) {
            Ok(v)
        } else {
            Err(format!("{status} {v}"))
        }
    })
    .await
}

/// The count `v` (an admin's push status) shows for `source`.
fn held(v: &Value, source: &str) -> u64 {
    v["sources"]
        .as_array()
        .and_then(|a| a.iter().find(|s| s["source"] == source))
        .and_then(|s| s["subscriptions"].as_u64())
        .unwrap_or(0)
}

/// Two bridges on one database: 40 hosts fill the push store through
/// one; a new player subscribes through the other, and both bridges see
/// the same squatter's oldest subscription go; a purge through one holds
/// on both.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_full_push_store_takes_new_players_through_any_bridge() {
    let (_cluster, url) = database().await;
    let master = TestMaster::start().await;
    let dirs = [(); 2].map(|()| tempfile::tempdir().unwrap());
    let bridge = |dir: &Path| {
        let mut c = config(&master, dir, &url);
        c.push_allow_insecure = true;
        c.push_contact = Some("mailto:ops@lobby.example".into());
        c.push_max_subscriptions = 200;
        c.push_max_per_address = 5;
        TestBridge::embedding(&master, c)
    };
    let a = bridge(dirs[0].path()).await;
    let b = bridge(dirs[1].path()).await;
    let _alpha = game_server(master.addr, "Alpha", 20001).await;
    let key = listed_keys(&a, 1).await[0].1.clone();
    // RFC 8291's example browser key; the endpoints differ (nothing is
    // pushed here).
    let put = |via: &TestBridge, from: String, endpoint: String| {
        let body = serde_json::json!({"subscription": {
            "endpoint": endpoint,
            "keys": {"p256dh": "BCVxsr7N_eNgVRqvHtD0zTZsEc6-VV-JvLexhqUzORcxaOzi6-AYWXvTBHm4bjyPjs7Vd8pZGH6SRpkNtoIAiw4",
                     "auth": "BTBZMqHH6r4Tts7J_aSIgg"}},
            "watches": [{"key": key, "events": ["lobby-opened"]}]})
        .to_string();
        let addr = via.addr;
        async move {
            let (status, _, answer) = http_send(
                from.parse().unwrap(),
                addr,
                "PUT",
                "/api/push/subscription",
                "",
                &body,
            )
            .await;
            assert_eq!(status, 201, "{from}: {}", String::from_utf8_lossy(&answer));
        }
    };
    let host = |h: usize| format!("127.0.0.{}", 10 + h);
    for h in 0..40 {
        for n in 0..5 {
            put(&a, host(h), format!("http://127.0.0.1:9/push/{h}-{n}")).await;
        }
    }
    until_metric(b.addr, "bridge_push_subscriptions", |v| v == 200.0).await;

    // Through B: the first host's oldest makes room, on both bridges.
    put(&b, "127.0.0.1".into(), "http://127.0.0.1:9/push/ann".into()).await;
    for bridge in [&a, &b] {
        let v = until_push_status(bridge, "the first host gave one up", |v| {
            v["subscriptions"] == 200 && held(v, &host(0)) == 4 && held(v, "127.0.0.1") == 1
        })
        .await;
        assert!((1..40).all(|h| held(&v, &host(h)) == 5), "{v}");
    }
    // Through A: the second host's.
    put(&a, OTHER_HOST.into(), "http://127.0.0.1:9/push/bob".into()).await;
    for bridge in [&a, &b] {
        until_push_status(bridge, "the second host gave one up", |v| {
            v["subscriptions"] == 200 && held(v, &host(1)) == 4 && held(v, OTHER_HOST) == 1
        })
        .await;
    }
    // The oldest went, not another: the first host's first subscription is
    // gone from the store (made again, it is new).
    put(&b, host(0), "http://127.0.0.1:9/push/0-0".into()).await;

    // A purge through B holds on A.
    let (status, v) = admin(
        &b,
        "DELETE",
        &format!("/api/admin/push/sources/{}", host(2)),
        "",
    )
    .await;
    assert_eq!(status, 204, "{v}");
    until_push_status(&a, "the purge reached the other bridge", |v| {
        v["subscriptions"] == 196 && held(v, &host(2)) == 0
    })
    .await;
    a.shutdown().await;
    b.shutdown().await;
}

/// Sends a stats update of `server` and waits until every bridge of
/// `bridges` decided its events from a list that holds it.
async fn stats(
    bridges: &[TestBridge],
    server: &mut tokio::net::TcpStream,
    current: u32,
    open: bool,
) {
    use tokio::io::AsyncWriteExt;
    let mut seqs = Vec::new();
    for b in bridges {
        seqs.push(metric(b.addr, "bridge_watch_list_seq").await);
    }
    let json = stats_json(current, open);
    server
        .write_all(format!("{}{json}\n", json.len() + 1).as_bytes())
        .await
        .unwrap();
    for (b, seq) in bridges.iter().zip(seqs) {
        until_metric(b.addr, "bridge_watch_list_seq", |s| s > seq).await;
    }
}

/// Asks every bridge of `bridges` to send the card (`test`: its test
/// path) and checks that each holds its send back.
async fn held_back(bridges: &[TestBridge], test: &str) {
    for (i, bridge) in bridges.iter().enumerate() {
        let (status, tested) = admin(bridge, "POST", test, "").await;
        assert_eq!(status, 200, "{tested}");
        assert_eq!(
            (&tested["ok"], &tested["error"]),
            (&json!(false), &json!("edited less than 10 s ago")),
            "bridge {i} did not hold its send back: {tested}"
        );
    }
}

/// Two bridges on one database, one status card (`docs/protocol.md`
/// §2.6): one message, and at most one post or edit per 10 s, whichever
/// bridge sends it. Discord answers slowly here (the stand-in holds its
/// answers), and while the post, then an edit, is on its way both bridges
/// are asked to send the card by an admin's test (the same send as a
/// delivery's: the race is not left to which bridge's engine claims a
/// row): each answers "edited less than 10 s ago", and nothing more
/// reaches Discord.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn bridges_on_one_database_keep_one_card_and_edit_it_once_per_window() {
    const EVERY: Duration = Duration::from_secs(10);
    // The bridge counts from the answer, the stand-in from the request.
    const SLACK: Duration = Duration::from_millis(200);
    let (_cluster, url) = database().await;
    let master = TestMaster::start().await;
    let dirs = [(); 2].map(|()| tempfile::tempdir().unwrap());
    let mut bridges = Vec::new();
    for dir in &dirs {
        let mut c = config(&master, dir.path(), &url);
        c.webhook_allow_private = true;
        c.offline_after = Duration::from_secs(1);
        let bridge = TestBridge::embedding(&master, c).await;
        // Servers that appear in the first grace are not announced.
        until_metric(bridge.addr, "bridge_watch_warm", |v| v == 1.0).await;
        bridges.push(bridge);
    }
    let mut discord = Discord::start().await.unwrap();
    let request = json!({"url": discord.url, "format": "discord-card", "servers": "all"});
    let (status, created) = admin(
        &bridges[0],
        "POST",
        "/api/admin/webhooks",
        &request.to_string(),
    )
    .await;
    assert_eq!(status, 201, "{created}");
    let id = created["id"].as_str().unwrap().to_owned();
    until_metric(bridges[1].addr, "bridge_webhooks", |v| v == 1.0).await;
    let test = format!("/api/admin/webhooks/{id}/test");
    // The first change posts; while the post is on its way, neither
    // bridge posts (or edits) too.
    discord.hold();
    let mut alpha = game_server(master.addr, "Alpha", 20001).await;
    let post = discord.next().await;
    assert!(post.is_post(), "{post:?}");
    held_back(&bridges, &test).await;
    discord.release();

    // A change within the window: one edit of that message, after the
    // window; while it is on its way, neither bridge sends another.
    discord.hold();
    stats(&bridges, &mut alpha, 3, true).await;
    let edit = discord.next().await;
    assert_eq!(edit.edited(), Some(discord.last_id().as_str()), "{edit:?}");
    assert!(
        edit.at - post.at >= EVERY - SLACK,
        "{:?}",
        edit.at - post.at
    );
    held_back(&bridges, &test).await;
    discord.release();
    assert!(
        edit.text().contains("3/4 players · lobby open"),
        "{}",
        edit.text()
    );
    if let Some(more) = discord.try_next() {
        panic!("a second request within the window: {more:?}");
    }
    for bridge in bridges {
        bridge.shutdown().await;
    }
}
